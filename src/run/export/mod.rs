//! `--metrics-addr`: the run's live figures over HTTP for Prometheus, at `GET /metrics`, in the
//! Prometheus text format (0.0.4) or, when the Accept header asks for it, OpenMetrics 1.0.
//!
//! The address is bound before the lab starts, so a port in use fails at once and nothing else
//! starts. Until the lab is up a scrape is answered 503; from then on each scrape reads the lab
//! at that moment (`figures.rs`) and writes it (`text.rs`). The server holds the lab only
//! weakly and reads it off the async threads, one scrape at a time, so a slow scrape or a slow
//! client never holds up the screen, the probes or the end of the run: [`Metrics::stop`] waits
//! for a scrape being read and nothing more.

mod figures;

use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use parking_lot::Mutex;
use tokio::sync::Semaphore;

use super::Run;
pub use crate::metrics::exposition::Format;

/// Where the figures are served.
pub const PATH: &str = "/metrics";

/// Connections served at once; more wait in the listen backlog.
const MAX_CONNECTIONS: usize = 32;

/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one connection may stay open, keep-alive included (a scraper then reconnects).
const CONNECTION_LIFETIME: Duration = Duration::from_secs(300);

/// How long a scrape waits for the one being read before it is answered 503.
const SCRAPE_WAIT: Duration = Duration::from_secs(10);

/// The address `--metrics-addr` named, bound and listening, before the lab starts.
#[derive(Debug)]
pub struct MetricsListener {
    listener: StdListener,
    addr: SocketAddr,
}

impl MetricsListener {
    /// Binds `HOST:PORT`, or a bare `PORT` on 127.0.0.1. Port 0 takes a free port.
    pub fn bind(text: &str) -> anyhow::Result<MetricsListener> {
        let (listener, addr) = latlab_core::listen::bind("--metrics-addr", text, 9464)?;
        Ok(MetricsListener { listener, addr })
    }

    /// The address bound (with the port chosen, for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

/// Binds `--metrics-addr` (when given) and says where the figures are, on standard error:
/// `metrics: http://127.0.0.1:9464/metrics`, after a warning when other hosts can reach it.
pub fn open(addr: Option<&str>) -> anyhow::Result<Option<MetricsListener>> {
    let Some(text) = addr else {
        return Ok(None);
    };
    let listener = MetricsListener::bind(text)?;
    let addr = listener.addr;
    if !addr.ip().is_loopback() {
        eprintln!(
            "warning: --metrics-addr {addr} is reachable from other hosts; the figures are served there without authentication"
        );
        tracing::warn!("metrics served on {addr}, reachable from other hosts");
    }
    eprintln!("metrics: http://{addr}{PATH}");
    tracing::info!("metrics: http://{addr}{PATH}");
    Ok(Some(listener))
}

/// What the server reads a scrape from.
struct Source {
    /// The run, once its labs have started (held weakly: the caller owns it).
    run: Mutex<Weak<Run>>,
    /// One scrape is read at a time; [`Metrics::stop`] takes it to wait out the one in flight.
    reading: Semaphore,
    /// The run is ending: scrapes are answered 503.
    closed: AtomicBool,
}

/// The metrics server of a run, or nothing when `--metrics-addr` was not given.
pub struct Metrics {
    serving: Option<(Arc<Source>, tokio::task::JoinHandle<()>)>,
}

impl Metrics {
    /// Starts serving on `listener` (on the current tokio runtime), answering 503 until a lab is
    /// attached. Nothing when there is no listener.
    pub fn start(listener: Option<MetricsListener>) -> anyhow::Result<Metrics> {
        let Some(l) = listener else {
            return Ok(Metrics { serving: None });
        };
        let listener = tokio::net::TcpListener::from_std(l.listener)
            .map_err(|e| anyhow::anyhow!("--metrics-addr {}: cannot listen there: {e}", l.addr))?;
        let source = Arc::new(Source {
            run: Mutex::new(Weak::new()),
            reading: Semaphore::new(1),
            closed: AtomicBool::new(false),
        });
        let task = tokio::spawn(serve(listener, source.clone()));
        Ok(Metrics {
            serving: Some((source, task)),
        })
    }

    /// From now on scrapes read `run`.
    pub fn attach(&self, run: &Arc<Run>) {
        if let Some((source, _)) = &self.serving {
            *source.run.lock() = Arc::downgrade(run);
        }
    }

    /// Stops serving: waits for a scrape being read (so the lab is the run's alone again), then
    /// closes the listener and its connections.
    pub async fn stop(mut self) {
        if let Some((source, task)) = self.serving.take() {
            source.closed.store(true, Ordering::SeqCst);
            let _wait = source.reading.acquire().await;
            *source.run.lock() = Weak::new();
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for Metrics {
    fn drop(&mut self) {
        if let Some((source, task)) = &self.serving {
            source.closed.store(true, Ordering::SeqCst);
            task.abort();
        }
    }
}

/// Accepts connections (at most [`MAX_CONNECTIONS`] at once, each open at most
/// [`CONNECTION_LIFETIME`]) and serves each over HTTP/1.1 (`crate::serve`); a scraper that
/// half-closes after its request still gets the answer.
async fn serve(listener: tokio::net::TcpListener, source: Arc<Source>) {
    let serve = latlab_core::http::Serve {
        half_close: true,
        lifetime: Some(CONNECTION_LIFETIME),
        ..latlab_core::http::Serve::new("metrics", MAX_CONNECTIONS, HEADER_TIMEOUT)
    };
    serve
        .run(listener, |_socket, _peer| {
            let source = source.clone();
            (service_fn(move |req| answer(source.clone(), req)), ())
        })
        .await
}

fn plain(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(text.to_string())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// One request: the figures at `GET /metrics` (or HEAD), a line saying where they are otherwise.
async fn answer(
    source: Arc<Source>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.uri().path() != PATH {
        return Ok(plain(
            StatusCode::NOT_FOUND,
            "not found: latlab serves its figures at GET /metrics\n",
        ));
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed: /metrics answers GET (and HEAD)\n",
        );
        r.headers_mut()
            .insert(header::ALLOW, header::HeaderValue::from_static("GET, HEAD"));
        return Ok(r);
    }
    let format = Format::negotiate(
        req.headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok()),
    );
    Ok(match scrape(&source, format).await {
        Ok(body) => {
            let mut r = Response::new(Full::new(Bytes::from(body)));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static(format.content_type()),
            );
            r
        }
        Err(why) => plain(StatusCode::SERVICE_UNAVAILABLE, why),
    })
}

/// The lab's figures now, read on a blocking thread while holding the one reading permit.
async fn scrape(source: &Arc<Source>, format: Format) -> Result<String, &'static str> {
    let unavailable = "the lab is not running (it is starting, or the run is ending); try again\n";
    let busy = "another scrape is still being read; try again\n";
    if source.closed.load(Ordering::SeqCst) {
        return Err(unavailable);
    }
    let permit = match tokio::time::timeout(SCRAPE_WAIT, source.reading.acquire()).await {
        Ok(Ok(p)) => p,
        _ => return Err(busy),
    };
    // Checked again under the permit: `stop` sets it, then waits for the permit.
    if source.closed.load(Ordering::SeqCst) {
        return Err(unavailable);
    }
    let Some(run) = source.run.lock().upgrade() else {
        return Err(unavailable);
    };
    let read = tokio::task::spawn_blocking(move || {
        let body = crate::metrics::exposition::render(&figures::families(&run), format);
        // The run is let go before the permit is: once `stop` holds the permit, nothing
        // here holds it.
        drop(run);
        body
    })
    .await;
    drop(permit);
    read.map_err(|_| "reading the figures failed; see the log\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_host_and_port_or_a_port_on_loopback() {
        assert_eq!(
            latlab_core::listen::parse_addr("--metrics-addr", "9464").unwrap(),
            vec![SocketAddr::from(([127, 0, 0, 1], 9464))]
        );
        assert_eq!(
            latlab_core::listen::parse_addr("--metrics-addr", "0.0.0.0:9464").unwrap(),
            vec![SocketAddr::from(([0, 0, 0, 0], 9464))]
        );
        assert_eq!(
            latlab_core::listen::parse_addr("--metrics-addr", "[::1]:0").unwrap()[0].port(),
            0
        );
        for (bad, says) in [
            (
                "70000",
                "--metrics-addr 70000: a port is 0 to 65535; give HOST:PORT",
            ),
            ("", "--metrics-addr : not an address"),
            ("127.0.0.1", "--metrics-addr 127.0.0.1: not an address"),
            ("127.0.0.1:x", "--metrics-addr 127.0.0.1:x: not an address"),
            ("-1", "--metrics-addr -1: not an address"),
        ] {
            let e = latlab_core::listen::parse_addr("--metrics-addr", bad)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(says), "{bad}: {e}");
            assert!(e.contains("e.g. 127.0.0.1:9464"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_port_in_use_is_named_with_one_to_try() {
        let held = StdListener::bind("127.0.0.1:0").unwrap();
        let addr = held.local_addr().unwrap();
        let e = MetricsListener::bind(&addr.to_string()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "--metrics-addr {addr}: the port is in use; name another (e.g. --metrics-addr 127.0.0.1:{}) or stop what holds it",
                addr.port() + 1
            )
        );
        let free = MetricsListener::bind("127.0.0.1:0").unwrap();
        assert_ne!(free.addr().port(), 0);
    }
}
