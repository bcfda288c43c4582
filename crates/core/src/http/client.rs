//! One HTTP/1.1 request over hyper's client: to an `http://` or `https://` URL (TLS by rustls
//! with the system's roots), within a time to connect and a time to answer, its answer's head
//! returned with its body to read as it arrives.

use std::time::Duration;

use anyhow::{Context, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;

trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Io for T {}

/// How long a request may take: to connect (TLS included), and for the answer's head.
#[derive(Clone, Copy, Debug)]
pub struct Waits {
    pub connect: Duration,
    pub answer: Duration,
}

/// Sends `method url` with `headers` and `body`; the answer's head and its body as it comes.
/// An error names the URL and what went wrong (the address, TLS, no answer in time).
pub async fn send(
    method: http::Method,
    url: &str,
    headers: &[(&str, String)],
    body: Bytes,
    waits: Waits,
) -> anyhow::Result<hyper::Response<Incoming>> {
    let uri: http::Uri = url
        .parse()
        .with_context(|| format!("'{url}' is not a URL"))?;
    let (https, host) = match (uri.scheme_str(), uri.host()) {
        (Some("https"), Some(h)) => (true, h.to_string()),
        (Some("http"), Some(h)) => (false, h.to_string()),
        _ => bail!("'{url}' is not an http:// or https:// URL"),
    };
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let connect = async {
        let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .with_context(|| format!("cannot connect to {host}:{port}"))?;
        let _ = tcp.set_nodelay(true);
        let io: Box<dyn Io> = if https {
            let mut roots = tokio_rustls::rustls::RootCertStore::empty();
            for cert in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(cert);
            }
            let provider = tokio_rustls::rustls::crypto::ring::default_provider();
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
        anyhow::Ok(io)
    };
    let io = tokio::time::timeout(waits.connect, connect)
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "{host}:{port} did not answer within {} s",
                waits.connect.as_secs()
            )
        })??;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(io)).await?;
    tokio::spawn(conn);
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let authority = match uri.port_u16() {
        Some(p) => format!("{host}:{p}"),
        None => host.clone(),
    };
    let mut req = http::Request::builder()
        .method(method.clone())
        .uri(path)
        .header("host", authority)
        .header("user-agent", concat!("latlab/", env!("CARGO_PKG_VERSION")));
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    let req = req.body(Full::new(body))?;
    tokio::time::timeout(waits.answer, sender.send_request(req))
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "{method} {url}: no answer within {} s",
                waits.answer.as_secs()
            )
        })?
        .with_context(|| format!("{method} {url} failed"))
}

/// A body read whole, to at most `limit` bytes (past it, an error saying so).
pub async fn read_to(body: Incoming, limit: usize) -> anyhow::Result<Bytes> {
    Ok(http_body_util::Limited::new(body, limit)
        .collect()
        .await
        .map_err(|e| anyhow::anyhow!("the answer broke off or passed {limit} bytes: {e}"))?
        .to_bytes())
}

/// The next data of a body as it arrives; None at its end.
pub async fn next_data(body: &mut Incoming) -> anyhow::Result<Option<Bytes>> {
    loop {
        match body.frame().await {
            None => return Ok(None),
            Some(Err(e)) => bail!("the answer broke off: {e}"),
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    return Ok(Some(data));
                }
            }
        }
    }
}
