//! TLS for a server of latlab's (`latlab emulate --tls-cert/--tls-key`): a certificate chain and
//! its private key read from PEM files, offering HTTP/2 and HTTP/1.1 by ALPN as AWS's endpoints
//! do, so an SDK that speaks HTTP/2 only over TLS (Kinesis's SubscribeToShard) speaks it here.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A server's TLS settings, ready to accept with.
pub type ServerTls = Arc<rustls::ServerConfig>;

/// The settings for a certificate chain (`cert`: PEM, the server's certificate first) and its
/// private key (`key`: PEM, PKCS#8, PKCS#1 or SEC1). Each error names the file and what it
/// lacked.
pub fn server_tls(cert: &Path, key: &Path) -> anyhow::Result<ServerTls> {
    let pem = std::fs::read(cert)
        .with_context(|| format!("--tls-cert {}: cannot read it", cert.display()))?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| {
            anyhow::anyhow!("--tls-cert {}: not PEM certificates ({e})", cert.display())
        })?;
    if chain.is_empty() {
        bail!(
            "--tls-cert {}: no certificate in it; it takes PEM (-----BEGIN CERTIFICATE-----), the server's certificate first",
            cert.display()
        );
    }
    let pem = std::fs::read(key)
        .with_context(|| format!("--tls-key {}: cannot read it", key.display()))?;
    let key_der = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        anyhow::anyhow!(
            "--tls-key {}: no private key in it ({e}); it takes a PEM key (PKCS#8, RSA or EC)",
            key.display()
        )
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS versions")?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| {
            anyhow::anyhow!(
                "--tls-cert {} and --tls-key {} do not make a TLS identity: {e}",
                cert.display(),
                key.display()
            )
        })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
