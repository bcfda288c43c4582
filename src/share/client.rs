//! A viewer's side of a share, for `latlab attach URL`: the stream read over HTTP/1.1 (hyper's
//! client, `crate::http::client`), its events parsed as they arrive, each at most
//! [`MAX_EVENT`] bytes, a dropped stream reconnected with `Last-Event-ID`, and a key sent with
//! `POST /keys`.

use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::http::client::{Waits, next_data, read_to, send};

use super::frame::{Ended, Received};

/// The largest event taken (a full frame of a large run is a few MB).
const MAX_EVENT: usize = 32 << 20;

/// How long after a dropped stream it connects again.
const RETRY: Duration = Duration::from_secs(2);

/// A share to attach to.
#[derive(Clone, Debug)]
pub struct Target {
    /// `HOST:PORT`.
    pub addr: String,
    pub token: String,
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
        let mut buf: Vec<u8> = Vec::new();
        let why = loop {
            // Every whole event in what has come.
            while let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
                let block: Vec<u8> = buf.drain(..end + 2).collect();
                let block = String::from_utf8_lossy(&block);
                let (mut name, mut data) = ("", String::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event: ") {
                        name = v;
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data.push_str(v);
                    }
                }
                let incoming = match name {
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
            if buf.len() > MAX_EVENT {
                break format!("an event over {} MB", MAX_EVENT >> 20);
            }
            match next_data(&mut body).await {
                Ok(None) => break "the host closed the stream".to_string(),
                Ok(Some(b)) => buf.extend_from_slice(&b),
                Err(e) => break format!("{e:#}"),
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
