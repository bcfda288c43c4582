//! The share's HTTP server: `GET /` (the page), `GET /events` (the stream), `GET /frame` (a
//! full frame now, as one JSON document) and, with `--share-control`, `POST /keys`. HTTP/1.1 on
//! hyper; each connection is a task of the server's, so stopping the server closes them all.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Incoming;
use hyper::service::service_fn;
use tokio::sync::{broadcast, oneshot};

use super::{Event, Hub, ViewerKey};

/// The page, served from the binary: no file, font or script from anywhere else.
pub const PAGE: &str = include_str!("page.html");

/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// A comment on an idle stream this often, so that proxies keep it open and a viewer that
/// has gone is found.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How long `GET /frame` waits for a starting run's first frame.
const FIRST_FRAME_WAIT: Duration = Duration::from_secs(30);

/// The kernel's send buffer per connection.
const SEND_BUFFER: usize = 64 * 1024;

/// How long a key waits for the host's answer.
const KEY_WAIT: Duration = Duration::from_secs(10);

/// The largest `POST /keys` body taken.
const KEY_BODY: usize = 4096;

type Body = BoxBody<Bytes, Infallible>;

/// Accepts connections (the viewers' cap and some room for requests besides) and serves each
/// over HTTP/1.1 (`crate::serve`).
pub(super) async fn serve(listener: tokio::net::TcpListener, hub: Arc<Hub>) {
    let serve = latlab_core::http::Serve::new("share", hub.cap + 16, HEADER_TIMEOUT);
    serve
        .run(listener, |socket, peer| {
            // A viewer whose host vanished (a half-open connection) is found within half a
            // minute.
            let keepalive = socket2::TcpKeepalive::new()
                .with_time(Duration::from_secs(10))
                .with_interval(Duration::from_secs(5))
                .with_retries(3);
            let sock = socket2::SockRef::from(socket);
            let _ = sock.set_tcp_keepalive(&keepalive);
            // What the kernel holds for a viewer that does not read stays small: past it, the
            // viewer falls behind the broadcast (and gets a full frame when it reads again).
            let _ = sock.set_send_buffer_size(SEND_BUFFER);
            let hub = hub.clone();
            let service = service_fn(move |req| {
                let hub = hub.clone();
                async move { Ok::<_, Infallible>(answer(hub, peer, req).await) }
            });
            (service, ())
        })
        .await
}

fn full(body: impl Into<Bytes>) -> Body {
    Full::new(body.into()).boxed()
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(full(format!("{text}\n")));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn json(status: StatusCode, value: serde_json::Value) -> Response<Body> {
    let mut r = Response::new(full(value.to_string()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// The token the request gives: `?token=` or `Authorization: Bearer`.
fn token_of(req: &Request<Incoming>) -> Option<&str> {
    if let Some(q) = req.uri().query()
        && let Some(t) = q.split('&').find_map(|kv| kv.strip_prefix("token="))
    {
        return Some(t);
    }
    req.headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// A number from the query (`viewer=`).
fn query_number(req: &Request<Incoming>, key: &str) -> Option<u64> {
    req.uri()
        .query()?
        .split('&')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))?
        .parse()
        .ok()
}

async fn answer(hub: Arc<Hub>, peer: SocketAddr, req: Request<Incoming>) -> Response<Body> {
    let given = token_of(&req).unwrap_or_default();
    if !super::same_token(given.as_bytes(), hub.token.as_bytes()) {
        let mut r = plain(
            StatusCode::UNAUTHORIZED,
            "latlab: this share needs its token: open the URL latlab printed (http://HOST:PORT/?token=...), or send Authorization: Bearer TOKEN",
        );
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"latlab share\""),
        );
        return r;
    }
    let path = req.uri().path().to_string();
    match (req.method().clone(), path.as_str()) {
        (Method::GET | Method::HEAD, "/") => page(&hub),
        (Method::GET, "/events") => events(hub, &req),
        (Method::GET, "/frame") => {
            let viewer = hub.next_viewer.fetch_add(1, Ordering::Relaxed);
            // A run that is starting publishes its first frame within seconds.
            let mut rx = hub.tx.subscribe();
            if hub.last.lock().id == 0 {
                let _ = tokio::time::timeout(FIRST_FRAME_WAIT, rx.recv()).await;
            }
            match hub.full(viewer) {
                Some(e) => {
                    let mut r = Response::new(full(e.data.to_string()));
                    r.headers_mut().insert(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    );
                    r
                }
                None => plain(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "latlab: the run has published no frame yet (it is still starting); try again",
                ),
            }
        }
        (Method::POST, "/keys") => keys(hub, peer, req).await,
        (_, "/" | "/events" | "/frame" | "/keys") => plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "latlab: GET / (the page), GET /events (the stream), GET /frame (a full frame), POST /keys (with --share-control)",
        ),
        _ => plain(
            StatusCode::NOT_FOUND,
            "latlab: not found; a share serves GET / (the page), GET /events (the stream), GET /frame, POST /keys",
        ),
    }
}

/// The page's Content-Security-Policy: its one `<script>` allowed by its SHA-256, so markup a
/// frame might carry into the page (an `onerror=`, a `<script>`) runs nothing, and no inline
/// event handler is allowed; no source but the page's own stream (`connect-src 'self'`); styles
/// inline only (the page colours each text by a `style` attribute; CSS runs no script), images
/// as data only, and the page never framed, its forms going nowhere.
pub fn csp(page: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    let script = page
        .split_once("<script>")
        .and_then(|(_, rest)| rest.split_once("</script>"))
        .map_or("", |(s, _)| s);
    let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(script));
    format!(
        "default-src 'none'; connect-src 'self'; script-src 'sha256-{hash}'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
}

fn page(hub: &Hub) -> Response<Body> {
    let mut r = Response::new(full(hub.page.clone()));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Nothing but the page itself and its own stream: no font, script or image from elsewhere,
    // and no script but the page's own (by its hash).
    if let Ok(csp) = HeaderValue::from_str(&hub.csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}

/// Counts a viewer while its stream lasts.
struct Seat(Arc<Hub>);

impl Drop for Seat {
    fn drop(&mut self) {
        self.0.viewers.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One viewer's stream.
struct Stream {
    hub: Arc<Hub>,
    rx: broadcast::Receiver<Arc<Event>>,
    pending: VecDeque<Arc<Event>>,
    /// The newest event written to it.
    sent: u64,
    viewer: u64,
    keepalive: tokio::time::Interval,
    done: bool,
    /// Nothing was published when it connected: its first frame is to be a full one.
    need_full: bool,
    _seat: Seat,
}

fn sse(e: &Event) -> Bytes {
    Bytes::from(format!(
        "id: {}\nevent: {}\ndata: {}\n\n",
        e.id, e.name, e.data
    ))
}

impl Stream {
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(e) = self.pending.pop_front() {
                if e.name == "frame" && e.id <= self.sent {
                    continue;
                }
                self.sent = e.id;
                self.done = e.name == "end";
                return Some(sse(&e));
            }
            if self.done {
                return None;
            }
            tokio::select! {
                r = self.rx.recv() => match r {
                    // A viewer that came before the first tick starts with a full frame too.
                    Ok(e) if self.need_full && e.name == "frame" => {
                        self.need_full = false;
                        if let Some(full) = self.hub.full(self.viewer) {
                            self.pending.push_back(full);
                        }
                    }
                    Ok(e) => self.pending.push_back(e),
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        self.hub.dropped.fetch_add(n, Ordering::Relaxed);
                        if let Some(full) = self.hub.full(self.viewer) {
                            self.pending.push_back(full);
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                _ = self.keepalive.tick() => return Some(Bytes::from_static(b": keep-alive\n\n")),
            }
        }
    }
}

fn events(hub: Arc<Hub>, req: &Request<Incoming>) -> Response<Body> {
    let now = hub.viewers.fetch_add(1, Ordering::Relaxed) + 1;
    let seat = Seat(hub.clone());
    if now > hub.cap {
        drop(seat);
        return plain(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!(
                "latlab: this share has its {} viewers already (--share-viewers); try again when one leaves",
                hub.cap
            ),
        );
    }
    // Subscribed before the last tick is read, so that no tick falls between the two.
    let rx = hub.tx.subscribe();
    let viewer = hub.next_viewer.fetch_add(1, Ordering::Relaxed);
    let resume: Option<u64> = req
        .headers()
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok());
    let mut pending = VecDeque::new();
    let mut sent = 0;
    let ended = hub.last.lock().end.clone();
    if let Some(end) = ended {
        pending.push_back(end);
    } else {
        let recent = hub.recent.lock();
        let newest = recent.back().map_or(0, |e| e.id);
        match resume {
            // Every tick after it is still kept: those, in order.
            Some(k) if k <= newest && recent.front().is_some_and(|e| e.id <= k + 1) => {
                pending.extend(recent.iter().filter(|e| e.id > k).cloned());
                sent = k;
            }
            _ => {
                drop(recent);
                if let Some(f) = hub.full(viewer) {
                    pending.push_back(f);
                }
            }
        }
    }
    let mut keepalive = tokio::time::interval(KEEP_ALIVE);
    keepalive.reset();
    let need_full = pending.is_empty() && sent == 0;
    let stream = Stream {
        hub: hub.clone(),
        rx,
        pending,
        sent,
        viewer,
        keepalive,
        done: false,
        need_full,
        _seat: seat,
    };
    let first = futures_util::stream::once(async { Bytes::from_static(b"retry: 2000\n\n") });
    let rest = futures_util::stream::unfold(stream, |mut s| async move {
        let b = s.next().await?;
        Some((b, s))
    });
    use futures_util::StreamExt;
    let body = StreamBody::new(
        first
            .chain(rest)
            .map(|b| Ok::<_, Infallible>(hyper::body::Frame::data(b))),
    );
    let mut r = Response::new(BodyExt::boxed(body));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    h.insert(
        "x-latlab-viewer",
        HeaderValue::from_str(&viewer.to_string()).expect("digits"),
    );
    r
}

/// `POST /keys`: `{"key": "+", "viewer": 2, "tab": "kinesis"}` (or `{"fault":
/// "kinesis.throttle"}`), from the share's own page (its
/// `Origin`) or a client that sends none; the host's answer comes back.
async fn keys(hub: Arc<Hub>, peer: SocketAddr, req: Request<Incoming>) -> Response<Body> {
    if !hub.control {
        return plain(
            StatusCode::FORBIDDEN,
            "latlab: this share is read-only; the host grants control with --share-control",
        );
    }
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        if host.is_empty() || origin != format!("http://{host}") {
            return plain(
                StatusCode::FORBIDDEN,
                &format!(
                    "latlab: keys are taken from the share's own page only; Origin {origin} is not http://{host}"
                ),
            );
        }
    }
    let viewer_q = query_number(&req, "viewer");
    let body = match http_body_util::Limited::new(req.into_body(), KEY_BODY)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("latlab: a key's request is at most {KEY_BODY} bytes of JSON"),
            );
        }
    };
    #[derive(serde::Deserialize)]
    struct Sent {
        #[serde(default)]
        key: String,
        #[serde(default)]
        fault: Option<String>,
        #[serde(default)]
        viewer: Option<u64>,
        #[serde(default)]
        tab: Option<String>,
    }
    let sent: Sent = match serde_json::from_slice(&body) {
        Ok(s) => s,
        Err(e) => {
            return plain(
                StatusCode::BAD_REQUEST,
                &format!(
                    "latlab: a key is sent as JSON, {{\"key\": \"+\", \"viewer\": 1, \"tab\": \"kinesis\"}}: {e}"
                ),
            );
        }
    };
    let mut chars = sent.key.chars();
    let key = match (chars.next(), chars.next(), &sent.fault) {
        (None, _, Some(_)) => 'f',
        (Some(k), None, None) => k,
        _ => {
            return plain(
                StatusCode::BAD_REQUEST,
                &format!(
                    "latlab: \"key\" is one character, as the help shows it (e.g. \"+\"), or \"fault\" names a fault kind (e.g. \"kinesis.throttle\"); got {:?}",
                    sent.key
                ),
            );
        }
    };
    let (reply, answer) = oneshot::channel();
    let vk = ViewerKey {
        viewer: sent.viewer.or(viewer_q).unwrap_or(0),
        peer,
        key,
        fault: sent.fault,
        tab: sent.tab,
        reply,
    };
    if hub.keys.try_send(vk).is_err() {
        return plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "latlab: the host has keys waiting already; try again in a moment",
        );
    }
    match tokio::time::timeout(KEY_WAIT, answer).await {
        Ok(Ok(Ok(text))) => json(
            StatusCode::OK,
            serde_json::json!({"ok": true, "text": text}),
        ),
        Ok(Ok(Err(text))) => json(
            StatusCode::UNPROCESSABLE_ENTITY,
            serde_json::json!({"ok": false, "text": text}),
        ),
        _ => plain(
            StatusCode::GATEWAY_TIMEOUT,
            "latlab: the host did not answer the key in time (it may be ending)",
        ),
    }
}

#[cfg(test)]
mod tests {
    /// The page's one script is allowed by its hash and nothing else inline: no event handler
    /// attribute in its markup, no second script.
    #[test]
    fn the_page_runs_its_own_script_only() {
        use base64::Engine;
        use sha2::Digest;
        let csp = super::csp(super::PAGE);
        assert!(!csp.contains("script-src 'unsafe"), "{csp}");
        let (_, rest) = super::PAGE.split_once("<script>").unwrap();
        let (script, after) = rest.split_once("</script>").unwrap();
        let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(script));
        assert!(
            csp.contains(&format!("script-src 'sha256-{hash}'")),
            "{csp}"
        );
        assert!(!after.contains("<script"), "a second script");
        let markup = super::PAGE.replace(script, "");
        let handler = regex_free_handler(&markup);
        assert!(handler.is_none(), "an inline handler: {handler:?}");
    }

    /// An `on...=` attribute in markup, if there is one.
    fn regex_free_handler(markup: &str) -> Option<String> {
        markup.match_indices(" on").find_map(|(at, _)| {
            let rest = &markup[at + 3..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphabetic())
                .collect();
            (!name.is_empty() && rest[name.len()..].starts_with('=')).then(|| format!("on{name}="))
        })
    }

    /// The page's budget: 150 KB with every theme's colours, so it loads at once over a slow
    /// link and is read in one look.
    #[test]
    fn the_page_and_its_colours_stay_under_150_kb() {
        let css = crate::tui::shared::theme_css(&crate::theme::Theme::dark());
        let page = super::PAGE.replace("/*latlab:themes*/", &css);
        println!("the page: {} bytes ({} of colours)", page.len(), css.len());
        assert!(page.len() < 150 * 1024, "{} bytes", page.len());
        // Nothing from anywhere else: no URL but the page's own paths.
        for outside in ["http://", "https://", "//cdn", "@import", "url("] {
            assert!(!page.contains(outside), "the page names {outside}");
        }
    }
}
