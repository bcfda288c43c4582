//! A viewer's side of a share, for `latlab attach URL`: the stream read over HTTP/1.1 (hyper's
//! client, `latlab_core::http::client`), its events parsed as they arrive, each at most
//! [`MAX_EVENT`] bytes, a dropped stream reconnected with `Last-Event-ID`, and a key sent with
//! `POST /keys`.

use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;

use latlab_core::http::client::{Waits, next_data, read_to, send};

use super::frame::{Ended, Received};

/// The largest event taken (a full frame of a large run is a few MB).
const MAX_EVENT: usize = 32 << 20;

/// How long a stream may bring no whole event (not even the host's keep-alive comment, every
/// 15 s) before it is taken as lost and opened again: a host that never ends an event, or sends
/// nothing, is dropped.
pub const SILENCE: Duration = Duration::from_secs(45);

/// How long after a dropped stream it connects again.
const RETRY: Duration = Duration::from_secs(2);

/// A share to attach to.
#[derive(Clone, Debug)]
pub struct Target {
    /// `HOST:PORT`.
    pub addr: String,
    pub token: String,
    /// How long the stream may go without a whole event (a frame, or the host's keep-alive
    /// comment every 15 s) before it is taken as lost: [`SILENCE`].
    pub silence: Duration,
}

impl Target {
    /// `http://HOST:PORT/?token=TOKEN` as latlab printed it; `token` (from `--share-token`) when
    /// the URL has none.
    pub fn parse(url: &str, token: Option<&str>) -> anyhow::Result<Target> {
        let valid = "give the URL the host printed, http://HOST:PORT/?token=TOKEN";
        let Some(rest) = url.trim().strip_prefix("http://") else {
            if url.starts_with("https://") {
                anyhow::bail!(
                    "{url}: a share is served over plain HTTP (reach a remote one through `ssh -L`); {valid}"
                );
            }
            anyhow::bail!("{url}: not a share's URL; {valid}");
        };
        let (addr, query) = match rest.split_once('/') {
            Some((a, q)) => (a, q),
            None => (rest, ""),
        };
        if addr.is_empty() || !addr.contains(':') {
            anyhow::bail!("{url}: the URL names no HOST:PORT; {valid}");
        }
        let from_url = query
            .trim_start_matches('?')
            .split('&')
            .find_map(|kv| kv.strip_prefix("token="))
            .filter(|t| !t.is_empty());
        let Some(token) = from_url.or(token) else {
            anyhow::bail!(
                "{url}: the URL holds no token (?token=...); give the whole URL, or --share-token"
            );
        };
        Ok(Target {
            addr: addr.to_string(),
            token: token.to_string(),
            silence: SILENCE,
        })
    }
}

/// What the stream brought.
pub enum Incoming {
    Frame(Box<Received>),
    End(Ended),
    /// The stream dropped (or could not be opened); it is tried again.
    Lost(String),
    /// The share refused this viewer (a wrong token): it is not tried again.
    Refused(String),
}

/// How long a connection and an answer's head may take.
const WAITS: Waits = Waits {
    connect: Duration::from_secs(10),
    answer: Duration::from_secs(15),
};

/// The most of an error's answer kept for its line.
const MAX_ANSWER: usize = 4096;

/// An answer's text, at most [`MAX_ANSWER`] bytes of it.
async fn text_of(body: hyper::body::Incoming) -> String {
    match read_to(body, MAX_ANSWER).await {
        Ok(b) => String::from_utf8_lossy(&b).trim().to_string(),
        Err(e) => format!("{e:#}"),
    }
}

/// Opens the stream; `last`: the last event seen, to resume after it.
async fn open(t: &Target, last: Option<u64>) -> Result<hyper::body::Incoming, Incoming> {
    let lost = |e: String| Incoming::Lost(format!("{}: {e}", t.addr));
    let mut headers = vec![
        ("authorization", format!("Bearer {}", t.token)),
        ("accept", "text/event-stream".to_string()),
    ];
    if let Some(id) = last {
        headers.push(("last-event-id", id.to_string()));
    }
    let url = format!("http://{}/events", t.addr);
    let resp = send(http::Method::GET, &url, &headers, Bytes::new(), WAITS)
        .await
        .map_err(|e| lost(format!("{e:#}")))?;
    let status = resp.status().as_u16();
    match status {
        200 => Ok(resp.into_body()),
        401 => Err(Incoming::Refused(
            "the share refused the token: give the whole URL the host printed".into(),
        )),
        _ => {
            let why = text_of(resp.into_body()).await;
            Err(lost(format!("HTTP {status}: {why}")))
        }
    }
}

/// Follows the share until it ends or refuses this viewer, sending what comes to `tx`;
/// reconnects a dropped stream every [`RETRY`], resuming after the last event.
pub async fn follow(t: Target, tx: mpsc::Sender<Incoming>) {
    let mut last: Option<u64> = None;
    loop {
        let mut body = match open(&t, last).await {
            Ok(b) => b,
            Err(Incoming::Refused(why)) => {
                let _ = tx.send(Incoming::Refused(why)).await;
                return;
            }
            Err(other) => {
                if tx.send(other).await.is_err() {
                    return;
                }
                tokio::time::sleep(RETRY).await;
                continue;
            }
        };
        let mut events = EventStream::default();
        let mut deadline = tokio::time::Instant::now() + t.silence;
        let why = loop {
            // Every whole event in what has come.
            while let Some((name, data)) = events.next_event() {
                deadline = tokio::time::Instant::now() + t.silence;
                let incoming = match name.as_str() {
                    "frame" => match serde_json::from_str::<Received>(&data) {
                        Ok(f) if f.format == super::FORMAT => {
                            last = Some(f.id);
                            Incoming::Frame(Box::new(f))
                        }
                        Ok(f) => Incoming::Refused(format!(
                            "the share speaks {}; this latlab reads {}",
                            f.format,
                            super::FORMAT
                        )),
                        Err(e) => Incoming::Lost(format!("a frame that does not read: {e}")),
                    },
                    "end" => match serde_json::from_str::<Ended>(&data) {
                        Ok(e) => {
                            let _ = tx.send(Incoming::End(e)).await;
                            return;
                        }
                        Err(e) => Incoming::Lost(format!("an end that does not read: {e}")),
                    },
                    _ => continue,
                };
                let stop = matches!(incoming, Incoming::Refused(_));
                if tx.send(incoming).await.is_err() || stop {
                    return;
                }
            }
            // A host sends a frame each tick and a comment when idle: silence past this is a
            // stream that is not coming.
            match tokio::time::timeout_at(deadline, next_data(&mut body)).await {
                Err(_) => {
                    break format!("no whole event came for {} s", t.silence.as_secs());
                }
                Ok(Ok(None)) => break "the host closed the stream".to_string(),
                Ok(Ok(Some(b))) => {
                    if let Err(e) = events.push(&b) {
                        break e;
                    }
                }
                Ok(Err(e)) => break format!("{e:#}"),
            }
        };
        if tx
            .send(Incoming::Lost(format!("{}: {why}", t.addr)))
            .await
            .is_err()
        {
            return;
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// A server-sent event stream read as it arrives: its bytes, cut into events (`event:` and
/// `data:` lines, ended by a blank line). An event may be at most [`MAX_EVENT`] bytes; each
/// byte is looked at once however it is cut, so a host that never ends an event costs time in
/// proportion to what it sends.
#[derive(Default)]
pub struct EventStream {
    buf: Vec<u8>,
    /// How far `buf` has been searched for an event's end.
    scanned: usize,
}

impl EventStream {
    /// Takes what came; an error once an event passes [`MAX_EVENT`].
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() > MAX_EVENT && self.end().is_none() {
            self.buf = Vec::new();
            self.scanned = 0;
            return Err(format!("an event over {} MB", MAX_EVENT >> 20));
        }
        Ok(())
    }

    /// Where the first event ends (after its blank line), searching only what is new.
    fn end(&mut self) -> Option<usize> {
        let from = self.scanned.saturating_sub(1);
        match self.buf[from..].windows(2).position(|w| w == b"\n\n") {
            Some(i) => Some(from + i + 2),
            None => {
                self.scanned = self.buf.len();
                None
            }
        }
    }

    /// The next whole event, (its name, its data lines joined); None until one has come.
    /// Comments and events without a name are kept out of the way with the empty name.
    pub fn next_event(&mut self) -> Option<(String, String)> {
        let end = self.end()?;
        let block: Vec<u8> = self.buf.drain(..end).collect();
        self.scanned = 0;
        let block = String::from_utf8_lossy(&block);
        let (mut name, mut data) = (String::new(), String::new());
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event: ") {
                name = v.to_string();
            } else if let Some(v) = line.strip_prefix("data: ") {
                data.push_str(v);
            }
        }
        Some((name, data))
    }

    /// The bytes held, of events not yet whole.
    pub fn held(&self) -> usize {
        self.buf.len()
    }
}

/// Sends a key as viewer `viewer` on tab `tab`; the host's answer, or why there is none.
pub async fn send_key(
    t: &Target,
    key: char,
    viewer: Option<u64>,
    tab: Option<&str>,
) -> Result<String, String> {
    let body =
        serde_json::json!({"key": key.to_string(), "viewer": viewer, "tab": tab}).to_string();
    let go = async {
        let headers = [
            ("authorization", format!("Bearer {}", t.token)),
            ("content-type", "application/json".to_string()),
        ];
        let url = format!("http://{}/keys", t.addr);
        let resp = send(http::Method::POST, &url, &headers, Bytes::from(body), WAITS).await?;
        let status = resp.status().as_u16();
        anyhow::Ok((status, text_of(resp.into_body()).await))
    };
    match tokio::time::timeout(Duration::from_secs(15), go).await {
        Ok(Ok((status, text))) => {
            let said = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v["text"].as_str().map(str::to_string))
                .unwrap_or(text);
            if status == 200 { Ok(said) } else { Err(said) }
        }
        Ok(Err(e)) => Err(format!("the key was not sent: {e:#}")),
        Err(_) => Err("the host did not answer the key in time".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_cut_however_they_arrive_and_an_endless_one_is_refused() {
        let text = b"event: frame\ndata: {\"a\":1}\n\n: keep-alive\n\nevent: end\ndata: {}\n\n";
        for cut in 1..text.len() {
            let mut s = EventStream::default();
            let mut got = Vec::new();
            for piece in text.chunks(cut) {
                s.push(piece).unwrap();
                while let Some(e) = s.next_event() {
                    got.push(e);
                }
            }
            assert_eq!(
                got,
                [
                    ("frame".to_string(), "{\"a\":1}".to_string()),
                    (String::new(), String::new()),
                    ("end".to_string(), "{}".to_string())
                ],
                "cut every {cut} bytes"
            );
            assert_eq!(s.held(), 0);
        }
        // An event that never ends: refused at the bound, with what was held let go.
        let mut s = EventStream::default();
        let chunk = vec![b'x'; 1 << 20];
        let mut refused = None;
        for _ in 0..40 {
            if let Err(e) = s.push(&chunk) {
                refused = Some(e);
                break;
            }
            assert!(s.next_event().is_none());
        }
        assert_eq!(refused.as_deref(), Some("an event over 32 MB"));
        assert_eq!(s.held(), 0);
    }

    #[test]
    fn a_share_url_gives_its_address_and_token() {
        let t = Target::parse("http://127.0.0.1:4000/?token=abc12345", None).unwrap();
        assert_eq!(
            (t.addr.as_str(), t.token.as_str()),
            ("127.0.0.1:4000", "abc12345")
        );
        let t = Target::parse("http://host.example:80", Some("given-token")).unwrap();
        assert_eq!(t.token, "given-token");
        for (bad, says) in [
            ("https://h:1/?token=x", "plain HTTP"),
            ("ftp://h:1", "not a share's URL"),
            ("http://h/?token=x", "no HOST:PORT"),
            ("http://h:1/", "holds no token"),
        ] {
            let e = Target::parse(bad, None).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
