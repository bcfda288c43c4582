//! The HTTP of `latlab prices fetch`: a GET of the Price List's documents over hyper's client
//! (TLS by rustls with the system's roots), answered 200 or an error naming the URL; a small
//! document read whole; a large one handed to a parser as it arrives, a chunk at a time through
//! a bounded channel, so memory stays flat whatever its size.

use std::time::Duration;

use anyhow::{Context, bail};

/// A response body as a blocking reader, a chunk at a time through a bounded channel.
pub(super) struct BodyReader {
    pub(super) rx: tokio::sync::mpsc::Receiver<Result<bytes::Bytes, String>>,
    pub(super) chunk: bytes::Bytes,
}

impl std::io::Read for BodyReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.chunk.is_empty() {
            match self.rx.blocking_recv() {
                Some(Ok(c)) => self.chunk = c,
                Some(Err(e)) => return Err(std::io::Error::other(e)),
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len());
        buf[..n].copy_from_slice(&self.chunk[..n]);
        bytes::Buf::advance(&mut self.chunk, n);
        Ok(n)
    }
}

/// GET `url` (http or https) with latlab's client (`latlab_core::http::client`), its answer's head
/// checked: a 200 or an error naming the URL.
pub(super) async fn get(url: &str) -> anyhow::Result<hyper::Response<hyper::body::Incoming>> {
    let waits = latlab_core::http::client::Waits {
        connect: Duration::from_secs(30),
        answer: Duration::from_secs(60),
    };
    let resp =
        latlab_core::http::client::send(http::Method::GET, url, &[], bytes::Bytes::new(), waits)
            .await?;
    if resp.status() != http::StatusCode::OK {
        bail!("GET {url} answered {}", resp.status());
    }
    Ok(resp)
}

/// The most a region index may hold (AWS's are tens of KB).
const MAX_INDEX: usize = 16 << 20;

/// GET a small JSON document whole (a region index), to at most [`MAX_INDEX`] bytes.
pub(super) async fn get_json(url: &str) -> anyhow::Result<serde_json::Value> {
    let body = latlab_core::http::client::read_to(get(url).await?.into_body(), MAX_INDEX)
        .await
        .with_context(|| format!("GET {url}"))?;
    serde_json::from_slice(&body).with_context(|| format!("GET {url}: not JSON"))
}
