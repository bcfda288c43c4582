//! `--share [ADDR]`: the run, streamed to browsers and other terminals as it happens. The host
//! publishes a frame a second (`frame.rs`: the screen as data, `latlab-frame/1`); a small HTTP
//! server (`server.rs`) serves them as server-sent events at `GET /events`, the page that draws
//! them at `GET /` and, with `--share-control`, the keys viewers send at `POST /keys`.
//!
//! - Every request needs the share's token (`?token=`, or `Authorization: Bearer`): 128 random
//!   bits unless `--share-token` names one, compared in constant time; 401 otherwise.
//! - The frames go through one bounded broadcast: a viewer that does not read in time misses
//!   frames (counted) and gets a full frame when it reads again, so a slow, stuck or half-open
//!   viewer never holds up the run or another viewer.
//! - At most `--share-viewers` streams at once (503 past it).
//! - The token is never logged and never recorded.

pub mod client;
pub mod frame;
mod server;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;
use tokio::sync::{broadcast, mpsc, oneshot};

pub use frame::{FORMAT, Kept, RunHead, Screen, Tick};

/// The viewers a share takes by default (`--share-viewers`).
pub const DEFAULT_VIEWERS: usize = 16;

/// Frames a viewer may fall behind before it misses some (and gets a full frame).
const BEHIND: usize = 8;

/// Tick frames kept for a viewer that reconnects with `Last-Event-ID`.
const RESUMABLE: usize = 32;

/// Keys viewers sent that the host has not taken yet.
const KEYS_QUEUED: usize = 16;

/// What `--share` and its flags asked for.
#[derive(Clone, Debug)]
pub struct ShareOptions {
    /// `HOST:PORT`, or a PORT on 127.0.0.1; port 0 takes a free one.
    pub addr: String,
    /// The token viewers must give; random when None.
    pub token: Option<String>,
    pub viewers: usize,
    /// Viewers may send keys that change the experiment.
    pub control: bool,
    /// Listening on an address other hosts can reach is allowed.
    pub allow_remote: bool,
}

impl Default for ShareOptions {
    fn default() -> ShareOptions {
        ShareOptions {
            addr: "127.0.0.1:0".into(),
            token: None,
            viewers: DEFAULT_VIEWERS,
            control: false,
            allow_remote: false,
        }
    }
}

/// The share's address, bound before the run starts (a port in use fails at once).
pub struct ShareListener {
    listener: std::net::TcpListener,
    addr: SocketAddr,
    token: String,
    opts: ShareOptions,
}

impl ShareListener {
    /// Binds `opts.addr`: refused on an address other hosts can reach unless `allow_remote`
    /// (then with a warning on standard error).
    pub fn bind(opts: ShareOptions) -> anyhow::Result<ShareListener> {
        if opts.viewers == 0 {
            anyhow::bail!(
                "--share-viewers 0: a share needs room for one viewer at least; give 1 to 1000"
            );
        }
        let token = match &opts.token {
            Some(t) => check_token(t)?,
            None => format!("{:032x}", rand::random::<u128>()),
        };
        let (listener, addr) = latlab_core::listen::bind("--share", &opts.addr, 8080)?;
        if !addr.ip().is_loopback() {
            if !opts.allow_remote {
                anyhow::bail!(
                    "--share {addr} is reachable from other hosts; add --allow-remote to share there anyway (anyone who has the URL sees the run), or keep the default 127.0.0.1 and reach it through `ssh -L`"
                );
            }
            eprintln!(
                "warning: sharing on {addr}: anyone who can reach it and has the URL (its token) sees the run{}",
                if opts.control {
                    " and can change the experiment"
                } else {
                    ""
                }
            );
        }
        Ok(ShareListener {
            listener,
            addr,
            token,
            opts,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's URL, token included: what viewers open.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.token)
    }
}

/// A `--share-token`: printable ASCII with no space, 8 to 256 characters (it goes in a URL).
fn check_token(t: &str) -> anyhow::Result<String> {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~');
    if t.len() < 8 || t.len() > 256 || !t.chars().all(ok) {
        anyhow::bail!(
            "--share-token: a token is 8 to 256 letters, digits, '-', '_', '.' or '~' (it goes in the URL); leave it out for a random one"
        );
    }
    Ok(t.to_string())
}

/// A key a viewer sent (`POST /keys`), for the host to apply; the host's answer goes back in
/// `reply`.
#[derive(Debug)]
pub struct ViewerKey {
    pub viewer: u64,
    pub peer: SocketAddr,
    pub key: char,
    /// A fault to inject instead of a key (`{"fault": "kinesis.throttle"}`), as the fault menu
    /// does.
    pub fault: Option<String>,
    /// The viewer's tab (a lab's key), for a key several labs bind.
    pub tab: Option<String>,
    pub reply: oneshot::Sender<Result<String, String>>,
}

impl ViewerKey {
    /// Who sent it, as the status line and the recording's events say it:
    /// `viewer 2 (127.0.0.1:51234)`.
    pub fn who(&self) -> String {
        format!("viewer {} ({})", self.viewer, self.peer)
    }
}

/// One event of the stream, written once for every viewer.
struct Event {
    id: u64,
    /// `frame` or `end`.
    name: &'static str,
    data: Arc<str>,
}

/// The last tick's parts, from which a full frame is written when a viewer needs one.
#[derive(Default)]
struct Last {
    id: u64,
    at_secs: f64,
    run: RunHead,
    snapshot: String,
    screen: String,
    kept: Kept,
    /// The end event, once the run has ended.
    end: Option<Arc<Event>>,
}

/// What the server and the host share.
struct Hub {
    token: String,
    cap: usize,
    control: bool,
    viewers: AtomicUsize,
    next_viewer: AtomicU64,
    dropped: AtomicU64,
    tx: broadcast::Sender<Arc<Event>>,
    last: Mutex<Last>,
    recent: Mutex<VecDeque<Arc<Event>>>,
    keys: mpsc::Sender<ViewerKey>,
    /// The page, with its colours.
    page: String,
    /// The page's Content-Security-Policy: its one script allowed by its hash, nothing inline.
    csp: String,
}

impl Hub {
    /// A full frame of the last tick, for viewer `viewer` (None before the first tick).
    fn full(&self, viewer: u64) -> Option<Arc<Event>> {
        let last = self.last.lock();
        if last.id == 0 {
            return None;
        }
        let points = json(&last.kept.points());
        // The head as it is now: the viewers, and the frames missed (this viewer's too).
        let mut run = last.run.clone();
        run.viewers = self.viewers.load(Ordering::Relaxed);
        run.dropped = self.dropped.load(Ordering::Relaxed);
        let data = frame::envelope(
            last.id,
            "full",
            last.at_secs,
            Some(viewer),
            &json(&run),
            &last.snapshot,
            &points,
            &last.screen,
        );
        Some(Arc::new(Event {
            id: last.id,
            name: "frame",
            data: data.into(),
        }))
    }
}

/// A running share.
pub struct Share {
    hub: Arc<Hub>,
    url: String,
    task: tokio::task::JoinHandle<()>,
    keys: Option<mpsc::Receiver<ViewerKey>>,
}

impl Share {
    /// Starts serving on `listener` (on the current tokio runtime). Until the first tick a
    /// viewer waits for it.
    /// `themes` is the page's colours: CSS custom properties per theme item (`--text`), for
    /// `:root` (dark), under `prefers-color-scheme: light`, and for the classes `theme-dark`,
    /// `theme-light` and `theme-host`.
    pub fn start(l: ShareListener, themes: &str) -> anyhow::Result<Share> {
        let url = l.url();
        let page = server::PAGE.replace("/*latlab:themes*/", themes);
        let listener = tokio::net::TcpListener::from_std(l.listener)
            .map_err(|e| anyhow::anyhow!("--share {}: cannot listen there: {e}", l.addr))?;
        let (tx, _) = broadcast::channel(BEHIND);
        let (keys_tx, keys_rx) = mpsc::channel(KEYS_QUEUED);
        let hub = Arc::new(Hub {
            token: l.token,
            cap: l.opts.viewers,
            control: l.opts.control,
            viewers: AtomicUsize::new(0),
            next_viewer: AtomicU64::new(1),
            dropped: AtomicU64::new(0),
            tx,
            last: Mutex::new(Last::default()),
            recent: Mutex::new(VecDeque::with_capacity(RESUMABLE)),
            keys: keys_tx,
            csp: server::csp(&page),
            page,
        });
        let task = tokio::spawn(server::serve(listener, hub.clone()));
        Ok(Share {
            hub,
            url,
            task,
            keys: Some(keys_rx),
        })
    }

    /// The page's URL, token included.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The share's token (so that a screen showing the host's messages can leave it out).
    pub fn token(&self) -> &str {
        &self.hub.token
    }

    /// Whether viewers may send keys.
    pub fn control(&self) -> bool {
        self.hub.control
    }

    /// Viewers connected now.
    pub fn viewers(&self) -> usize {
        self.hub.viewers.load(Ordering::Relaxed)
    }

    /// Frames viewers that fell behind have missed so far.
    pub fn dropped(&self) -> u64 {
        self.hub.dropped.load(Ordering::Relaxed)
    }

    /// The keys viewers send (taken once, by the host's loop).
    pub fn take_keys(&mut self) -> Option<mpsc::Receiver<ViewerKey>> {
        self.keys.take()
    }

    /// Sends one tick to every viewer: written once, never waiting for a viewer.
    pub fn publish(&self, mut tick: Tick) {
        tick.run.control = self.hub.control;
        tick.run.viewers = self.viewers();
        tick.run.dropped = self.dropped();
        tick.run.at_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let run = json(&tick.run);
        let snapshot = json(&tick.snapshot);
        let points = json(&tick.points);
        let screen = json(&tick.screen);
        let event = {
            let mut last = self.hub.last.lock();
            if last.end.is_some() {
                return;
            }
            last.id += 1;
            let id = last.id;
            let data = frame::envelope(
                id,
                "tick",
                tick.at_secs,
                None,
                &run,
                &snapshot,
                &points,
                &screen,
            );
            last.at_secs = tick.at_secs;
            last.run = tick.run;
            last.snapshot = snapshot;
            last.screen = screen;
            last.kept.add(&tick.points);
            let event = Arc::new(Event {
                id,
                name: "frame",
                data: data.into(),
            });
            let mut recent = self.hub.recent.lock();
            if recent.len() == RESUMABLE {
                recent.pop_front();
            }
            recent.push_back(event.clone());
            event
        };
        // No viewer is no error.
        let _ = self.hub.tx.send(event);
    }

    /// Ends every stream with a last `end` event saying why (`the run ended: completed`), and
    /// stops serving.
    pub async fn end(self, text: &str) {
        let event = {
            let mut last = self.hub.last.lock();
            let event = Arc::new(Event {
                id: last.id + 1,
                name: "end",
                data: frame::end(last.id + 1, last.at_secs, text).into(),
            });
            last.end = Some(event.clone());
            event
        };
        let _ = self.hub.tx.send(event);
        // The streams write it and close; a viewer that does not read is let go after a moment.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(2);
        while self.viewers() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        self.task.abort();
        let _ = (&mut { self.task }).await;
    }
}

/// A part of a frame as JSON (a part that cannot be written is `null`, never a panic).
fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// This machine's name, for a frame's head (`ATTACHED to HOST`).
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into the buffer it is given.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// `a == b` in a time that does not depend on where they first differ.
pub fn same_token(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= usize::from(x ^ y);
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token(b"abcdefgh", b"abcdefgh"));
        assert!(!same_token(b"abcdefgh", b"abcdefgi"));
        assert!(!same_token(b"abcdefgh", b"abcdefg"));
        assert!(!same_token(b"", b"a"));
    }

    #[test]
    fn a_given_token_must_fit_a_url() {
        assert!(check_token("s3cret-token").is_ok());
        for bad in [
            "short",
            "has space here",
            "semi;colon-token",
            &"x".repeat(300),
        ] {
            let e = check_token(bad).unwrap_err().to_string();
            assert!(
                e.starts_with("--share-token: a token is 8 to 256"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_remote_address_needs_allow_remote() {
        let opts = ShareOptions {
            addr: "0.0.0.0:0".into(),
            ..ShareOptions::default()
        };
        let e = ShareListener::bind(opts.clone()).err().unwrap().to_string();
        assert!(e.contains("add --allow-remote"), "{e}");
        let ok = ShareListener::bind(ShareOptions {
            allow_remote: true,
            ..opts
        })
        .unwrap();
        assert_ne!(ok.addr().port(), 0);
    }

    #[test]
    fn a_random_token_has_128_bits() {
        let l = ShareListener::bind(ShareOptions::default()).unwrap();
        assert_eq!(l.token.len(), 32);
        assert!(l.token.chars().all(|c| c.is_ascii_hexdigit()));
        assert!(l.url().starts_with("http://127.0.0.1:"));
        assert!(l.url().ends_with(&format!("/?token={}", l.token)));
    }
}
