//! A viewer's side of a share, for `latlab attach URL`: the stream read over HTTP/1.1 (plain
//! TCP, chunked or not), its events parsed, a dropped stream reconnected with `Last-Event-ID`,
//! and a key sent with `POST /keys`.

use std::time::Duration;

use anyhow::Context;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

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

/// One response's head: its status and headers (lower-case names).
async fn head(reader: &mut BufReader<TcpStream>) -> anyhow::Result<(u16, Vec<(String, String)>)> {
    let mut line = String::new();
    reader.read_line(&mut line).await?;
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .with_context(|| format!("not an HTTP answer: {:?}", line.trim()))?;
    let mut headers = Vec::new();
    loop {
        let mut l = String::new();
        if reader.read_line(&mut l).await? == 0 {
            anyhow::bail!("the answer ended in its headers");
        }
        let l = l.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_lowercase(), v.trim().to_string()));
        }
    }
    Ok((status, headers))
}

/// A body's bytes as they come, chunked or not.
struct Body {
    reader: BufReader<TcpStream>,
    chunked: bool,
    left: usize,
}

impl Body {
    async fn more(&mut self) -> anyhow::Result<Vec<u8>> {
        if !self.chunked {
            let mut b = vec![0; 16384];
            let n = self.reader.read(&mut b).await?;
            b.truncate(n);
            return Ok(b);
        }
        if self.left == 0 {
            let mut size = String::new();
            loop {
                size.clear();
                if self.reader.read_line(&mut size).await? == 0 {
                    return Ok(Vec::new());
                }
                if !size.trim().is_empty() {
                    break;
                }
            }
            self.left = usize::from_str_radix(size.trim(), 16)
                .with_context(|| format!("a chunk's size: {:?}", size.trim()))?;
            if self.left == 0 {
                return Ok(Vec::new());
            }
        }
        let mut b = vec![0; self.left.min(65536)];
        let n = self.reader.read(&mut b).await?;
        b.truncate(n);
        self.left = if n == 0 { 0 } else { self.left - n };
        Ok(b)
    }

    async fn text(&mut self) -> String {
        let mut all = Vec::new();
        while let Ok(b) = self.more().await {
            if b.is_empty() || all.len() > 4096 {
                break;
            }
            all.extend(b);
        }
        String::from_utf8_lossy(&all).trim().to_string()
    }
}

/// Opens the stream; `last`: the last event seen, to resume after it.
async fn open(t: &Target, last: Option<u64>) -> Result<Body, Incoming> {
    let lost = |e: String| Incoming::Lost(format!("{}: {e}", t.addr));
    let mut sock = TcpStream::connect(&t.addr)
        .await
        .map_err(|e| lost(format!("cannot connect ({e})")))?;
    let resume = last.map_or_else(String::new, |id| format!("Last-Event-ID: {id}\r\n"));
    let req = format!(
        "GET /events HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nAccept: text/event-stream\r\n{resume}\r\n",
        t.addr, t.token
    );
    sock.write_all(req.as_bytes())
        .await
        .map_err(|e| lost(e.to_string()))?;
    let mut reader = BufReader::new(sock);
    let (status, headers) = head(&mut reader)
        .await
        .map_err(|e| lost(format!("{e:#}")))?;
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let mut body = Body {
        reader,
        chunked,
        left: 0,
    };
    match status {
        200 => Ok(body),
        401 => Err(Incoming::Refused(
            "the share refused the token: give the whole URL the host printed".into(),
        )),
        _ => {
            let why = body.text().await;
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
            match body.more().await {
                Ok(b) if b.is_empty() => break "the host closed the stream".to_string(),
                Ok(b) => buf.extend(b),
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
        let mut sock = TcpStream::connect(&t.addr).await?;
        let req = format!(
            "POST /keys HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            t.addr,
            t.token,
            body.len()
        );
        sock.write_all(req.as_bytes()).await?;
        let mut reader = BufReader::new(sock);
        let (status, headers) = head(&mut reader).await?;
        let chunked = headers
            .iter()
            .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
        let text = Body {
            reader,
            chunked,
            left: 0,
        }
        .text()
        .await;
        anyhow::Ok((status, text))
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
