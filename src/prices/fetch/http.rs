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

trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Io for T {}

/// GET `url` (http or https), its answer's head checked: a 200 or an error naming the URL.
pub(super) async fn get(url: &str) -> anyhow::Result<hyper::Response<hyper::body::Incoming>> {
    let uri: http::Uri = url
        .parse()
        .with_context(|| format!("'{url}' is not a URL"))?;
    let (https, host) = match (uri.scheme_str(), uri.host()) {
        (Some("https"), Some(h)) => (true, h.to_string()),
        (Some("http"), Some(h)) => (false, h.to_string()),
        _ => bail!("'{url}' is not an http:// or https:// URL"),
    };
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let tcp = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await
    .map_err(|_| anyhow::anyhow!("{host}:{port} did not answer within 30 s"))?
    .with_context(|| format!("cannot connect to {host}:{port}"))?;
    let io: Box<dyn Io> = if https {
        let mut roots = tokio_rustls::rustls::RootCertStore::empty();
        for cert in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(cert);
        }
        let provider = tokio_rustls::rustls::crypto::aws_lc_rs::default_provider();
        let config = tokio_rustls::rustls::ClientConfig::builder_with_provider(
            std::sync::Arc::new(provider),
        )
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let name = tokio_rustls::rustls::pki_types::ServerName::try_from(host.clone())
            .with_context(|| format!("'{host}' is not a server name"))?;
        let tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
            .connect(name, tcp)
            .await
            .with_context(|| format!("TLS with {host} failed"))?;
        Box::new(tls)
    } else {
        Box::new(tcp)
    };
    let (mut send, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(io)).await?;
    tokio::spawn(conn);
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let req = http::Request::get(path)
        .header("host", &host)
        .header("user-agent", concat!("latlab/", env!("CARGO_PKG_VERSION")))
        .body(http_body_util::Empty::<bytes::Bytes>::new())?;
    let resp = tokio::time::timeout(Duration::from_secs(60), send.send_request(req))
        .await
        .map_err(|_| anyhow::anyhow!("GET {url}: no answer within 60 s"))?
        .with_context(|| format!("GET {url} failed"))?;
    if resp.status() != http::StatusCode::OK {
        bail!("GET {url} answered {}", resp.status());
    }
    Ok(resp)
}

/// GET a small JSON document whole (a region index).
pub(super) async fn get_json(url: &str) -> anyhow::Result<serde_json::Value> {
    use http_body_util::BodyExt;
    let body = get(url)
        .await?
        .into_body()
        .collect()
        .await
        .with_context(|| format!("GET {url}: the download broke off"))?
        .to_bytes();
    serde_json::from_slice(&body).with_context(|| format!("GET {url}: not JSON"))
}
