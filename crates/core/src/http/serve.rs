//! One HTTP accept loop for every server latlab runs (the embedded emulator, the Prometheus
//! export, a shared run): at most as many connections at once as its permits allow (the rest
//! wait in the listen backlog), a header read timeout, keep-alive, optionally a half-closed
//! client still answered, a longest life per connection and optionally TLS (with HTTP/2 by
//! ALPN); each connection's task lives in
//! one set, so stopping the server (aborting its task) drops them all. Each server gives its
//! own limits and, per connection, its socket's settings, its service and what it holds for the
//! connection's life. It imports nothing of latlab's.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// How a server serves its connections.
#[derive(Clone)]
pub struct Serve {
    /// What its log lines call it: `emulator`, `metrics`, `share`.
    pub name: &'static str,
    /// A connection's permit: at most this many at once.
    pub permits: Arc<Semaphore>,
    /// A client that has not sent a request's headers within this is disconnected.
    pub header_timeout: Duration,
    /// A client that shuts its write side once its request is sent still gets the answer
    /// (HTTP/1.1 allows it; curl, proxies and load balancers do it).
    pub half_close: bool,
    /// The longest a connection stays open, whatever it does; None: as long as it is used.
    pub lifetime: Option<Duration>,
    /// Serve TLS with these settings (HTTP/2 when the client's ALPN asks for it, else
    /// HTTP/1.1); None: plain HTTP/1.1.
    pub tls: Option<super::tls::ServerTls>,
}

impl Serve {
    /// A server of `name` with at most `connections` at once.
    pub fn new(name: &'static str, connections: usize, header_timeout: Duration) -> Serve {
        Serve {
            name,
            permits: Arc::new(Semaphore::new(connections.max(1))),
            header_timeout,
            half_close: false,
            lifetime: None,
            tls: None,
        }
    }

    /// Accepts and serves until its task is aborted. `make` sets up each connection as it is
    /// accepted: its socket's settings, and the service that answers it with what it holds
    /// while the connection lives.
    pub async fn run<M, S, H, B>(self, listener: TcpListener, mut make: M)
    where
        M: FnMut(&TcpStream, SocketAddr) -> (S, H),
        H: Send + 'static,
        S: hyper::service::Service<hyper::Request<Incoming>, Response = hyper::Response<B>>
            + Send
            + 'static,
        S::Future: Send + 'static,
        S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
        B: hyper::body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let mut tasks = JoinSet::new();
        loop {
            let permit = tokio::select! {
                p = self.permits.clone().acquire_owned() => match p {
                    Ok(p) => p,
                    Err(_) => return,
                },
                Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
            };
            let accepted = tokio::select! {
                a = listener.accept() => a,
                Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
            };
            let (socket, peer) = match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    tracing::warn!("{}: accept failed: {e}", self.name);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let (service, held) = make(&socket, peer);
            let (name, header_timeout, half_close, lifetime) = (
                self.name,
                self.header_timeout,
                self.half_close,
                self.lifetime,
            );
            let tls = self.tls.clone().map(tokio_rustls::TlsAcceptor::from);
            tasks.spawn(async move {
                let _held = (permit, held);
                let served = async {
                    let Some(tls) = tls else {
                        return http1(socket, service, header_timeout, half_close).await;
                    };
                    // The handshake is bounded as a request's headers are.
                    let stream = tokio::time::timeout(header_timeout, tls.accept(socket))
                        .await
                        .map_err(|_| "no TLS handshake in time".to_string())?
                        .map_err(|e| format!("TLS handshake: {e}"))?;
                    if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
                        hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                            .timer(TokioTimer::new())
                            .serve_connection(TokioIo::new(stream), service)
                            .await
                            .map_err(|e| e.to_string())
                    } else {
                        http1(stream, service, header_timeout, half_close).await
                    }
                };
                let ended = match lifetime {
                    Some(limit) => match tokio::time::timeout(limit, served).await {
                        Ok(r) => r,
                        Err(_) => Err("open too long".into()),
                    },
                    None => served.await,
                };
                if let Err(e) = ended {
                    tracing::debug!("{name}: connection from {peer} ended: {e}");
                }
            });
        }
    }
}

/// One connection served over HTTP/1.1 with keep-alive.
async fn http1<I, S, B>(
    io: I,
    service: S,
    header_timeout: Duration,
    half_close: bool,
) -> Result<(), String>
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    S: hyper::service::Service<hyper::Request<Incoming>, Response = hyper::Response<B>>
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true)
        .half_close(half_close)
        .serve_connection(TokioIo::new(io), service)
        .await
        .map_err(|e| e.to_string())
}
