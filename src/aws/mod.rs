//! SDK client construction: endpoint, credentials, region, retry settings and retry partitions.
//! Every client latlab measures with is built one way, by [`sdk_client!`] from [`Clients`] (each
//! lab's `client.rs` says which SDK), so no service's clients can drift from another's; each gets
//! the interceptor of `observer.rs`, which records every attempt the SDK makes. `errors.rs` says
//! an SDK error in one line. (`emulator_*_client` are the tests' and benches' own.)
//!
//! Against the embedded emulator, clients get static credentials and a fixed region, so nothing is
//! read from the environment. Against any other endpoint (or real AWS) the SDK's own chain applies:
//! `AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_PROFILE`, the credential chain.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_credential_types::Credentials;
use aws_credential_types::provider::ProvideCredentials;
use aws_smithy_runtime::client::retries::{RetryPartition, TokenBucket};
use aws_smithy_types::retry::RetryConfig;
use parking_lot::Mutex;
use serde::Deserialize;

use crate::metrics::sdk::SdkStats;
use latlab_core::units::Dur;

mod errors;
mod observer;

pub use errors::{error_chain, error_code, error_line, unsupported};
use observer::Observer;

/// The region used against the emulator when none is given.
pub const EMULATOR_REGION: &str = "us-east-1";

/// The SDK's default retry quota: tokens per partition.
pub const QUOTA_CAPACITY: u64 = 500;

/// Static credentials for the emulator (it does not verify signatures, but the SDK must sign).
pub fn emulator_credentials() -> Credentials {
    Credentials::new(
        "LATLABEMULATOR",
        "latlab-emulator-secret",
        None,
        None,
        "latlab-emulator",
    )
}

/// The HTTP client every SDK client latlab builds is given: the SDK's own hyper client, as its
/// `default-https-client` feature would make it (proxy settings from `HTTPS_PROXY`, `NO_PROXY`
/// and the rest, as the latest behaviour version reads them), with rustls on ring rather than on
/// aws-lc, whose C build was a large part of a cold build (docs/build-times.md). One per service
/// client, so two clients never share a connection pool and one consumer's calls never queue
/// behind another's connection.
pub fn https_client() -> aws_smithy_runtime_api::client::http::SharedHttpClient {
    https_client_trusting(None)
}

/// [`https_client`], trusting the certificates of `bundle` (PEM) beside the platform's roots.
pub fn https_client_trusting(
    bundle: Option<Arc<CaBundle>>,
) -> aws_smithy_runtime_api::client::http::SharedHttpClient {
    use aws_smithy_http_client::{Builder, ConnectorBuilder, proxy::ProxyConfig, tls};
    Builder::new().build_with_connector_fn(move |settings, components| {
        let mut connector = ConnectorBuilder::default().tls_provider(tls::Provider::Rustls(
            tls::rustls_provider::CryptoMode::Ring,
        ));
        if let Some(b) = &bundle {
            let store = tls::TrustStore::default().with_pem_certificate(b.pem.clone());
            connector.set_tls_context(
                tls::TlsContext::builder()
                    .with_trust_store(store)
                    .build()
                    .expect("a trust store of PEM"),
            );
        }
        connector.set_connector_settings(settings.cloned());
        if let Some(components) = components {
            connector.set_sleep_impl(components.sleep_impl());
        }
        connector.set_proxy_config(Some(ProxyConfig::from_env()));
        connector.build()
    })
}

/// Certificate authorities to trust beside the platform's, as the AWS CLI takes them: the file
/// `AWS_CA_BUNDLE` names, else the `ca_bundle` of the AWS profile in use. For networks whose
/// proxy or TLS inspection signs the endpoints' certificates with its own authority.
#[derive(Debug)]
pub struct CaBundle {
    /// Where it came from: `AWS_CA_BUNDLE=/path` or `ca_bundle = /path (profile NAME)`.
    pub from: String,
    pub pem: Vec<u8>,
}

impl CaBundle {
    /// The bundle the environment or the profile names, read and checked; None when neither
    /// names one. An unreadable file, or one with no certificate, is an error naming it.
    pub async fn load() -> anyhow::Result<Option<Arc<CaBundle>>> {
        let (path, from) = match std::env::var("AWS_CA_BUNDLE") {
            Ok(p) if !p.is_empty() => (p.clone(), format!("AWS_CA_BUNDLE={p}")),
            _ => {
                use aws_runtime::env_config::file::EnvConfigFiles;
                use aws_types::os_shim_internal::{Env, Fs};
                // A profile file that does not parse is the credential chain's error to report.
                let Ok(set) = aws_config::profile::load(
                    &Fs::real(),
                    &Env::real(),
                    &EnvConfigFiles::default(),
                    None,
                )
                .await
                else {
                    return Ok(None);
                };
                match set.get("ca_bundle") {
                    Some(p) if !p.is_empty() => (
                        p.to_string(),
                        format!("ca_bundle = {p} (profile {})", set.selected_profile()),
                    ),
                    _ => return Ok(None),
                }
            }
        };
        let pem = std::fs::read(&path).with_context(|| format!("{from}: cannot read it"))?;
        let certs = String::from_utf8_lossy(&pem)
            .matches("-----BEGIN CERTIFICATE-----")
            .count();
        if certs == 0 {
            bail!("{from}: no PEM certificate in it (-----BEGIN CERTIFICATE-----)");
        }
        Ok(Some(Arc::new(CaBundle { from, pem })))
    }
}

/// A Kinesis client for an emulator endpoint with the given retry settings (tests and benches).
pub fn emulator_kinesis_client(endpoint_url: &str, retry: RetryConfig) -> aws_sdk_kinesis::Client {
    let config = aws_sdk_kinesis::Config::builder()
        .behavior_version(aws_sdk_kinesis::config::BehaviorVersion::latest())
        .region(Region::new(EMULATOR_REGION))
        .credentials_provider(emulator_credentials())
        .endpoint_url(endpoint_url)
        .retry_config(retry)
        .http_client(https_client())
        .build();
    aws_sdk_kinesis::Client::from_conf(config)
}

/// An S3 client for an emulator endpoint (path-style; directory buckets use CreateSession as on
/// AWS).
pub fn emulator_s3_client(endpoint_url: &str, retry: RetryConfig) -> aws_sdk_s3::Client {
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
        .region(Region::new(EMULATOR_REGION))
        .credentials_provider(emulator_credentials())
        .endpoint_url(endpoint_url)
        .force_path_style(true)
        .retry_config(retry)
        .http_client(https_client())
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

/// The SDK's retry settings, as a scenario writes them. Defaults are the SDK's standard mode.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetrySettings {
    /// `standard` (the SDK's default) or `adaptive` (standard plus a client-side rate limiter
    /// that slows the client down after throttling errors).
    pub mode: RetryMode,
    /// Attempts per call, the first included (the SDK's default is 3; the seed used 4).
    pub max_attempts: u32,
    pub initial_backoff: Dur,
    pub max_backoff: Dur,
}

impl Default for RetrySettings {
    fn default() -> Self {
        RetrySettings {
            mode: RetryMode::Standard,
            max_attempts: 3,
            initial_backoff: Dur(Duration::from_secs(1)),
            max_backoff: Dur(Duration::from_secs(20)),
        }
    }
}

impl RetrySettings {
    pub fn config(&self) -> RetryConfig {
        if self.max_attempts <= 1 {
            return RetryConfig::disabled();
        }
        let base = match self.mode {
            RetryMode::Standard => RetryConfig::standard(),
            RetryMode::Adaptive => RetryConfig::adaptive(),
        };
        base.with_max_attempts(self.max_attempts)
            .with_initial_backoff(self.initial_backoff.0)
            .with_max_backoff(self.max_backoff.0)
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        if self.max_attempts == 0 || self.max_attempts > 20 {
            bail!(
                "retry.max_attempts must be between 1 and 20, got {}",
                self.max_attempts
            );
        }
        if self.initial_backoff.0 > self.max_backoff.0 {
            bail!("retry.initial_backoff must not exceed retry.max_backoff");
        }
        Ok(())
    }

    pub fn describe(&self) -> String {
        format!(
            "{} retries: {} attempts, back-off {} .. {} full jitter",
            self.mode.name(),
            self.max_attempts,
            latlab_core::units::format_duration(self.initial_backoff.0),
            latlab_core::units::format_duration(self.max_backoff.0)
        )
    }
}

/// The SDK's retry modes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetryMode {
    #[default]
    Standard,
    /// Standard retries plus the client-side rate limiter (`RetryConfig::adaptive()`).
    Adaptive,
}

impl RetryMode {
    pub fn name(self) -> &'static str {
        match self {
            RetryMode::Standard => "standard",
            RetryMode::Adaptive => "adaptive",
        }
    }

    pub fn other(self) -> RetryMode {
        match self {
            RetryMode::Standard => RetryMode::Adaptive,
            RetryMode::Adaptive => RetryMode::Standard,
        }
    }
}

/// A retry quota shared by the clients given it: like one process of the SDK (whose clients share a
/// partition per service and region). Each client of its own is like a separate process.
#[derive(Clone, Debug)]
pub struct QuotaPartition {
    name: String,
    partition: RetryPartition,
    bucket: TokenBucket,
    mirror: Arc<Mutex<u64>>,
    unlimited: bool,
}

impl QuotaPartition {
    pub fn new(name: &str) -> QuotaPartition {
        QuotaPartition::with_bucket(name, TokenBucket::new(QUOTA_CAPACITY as usize), false)
    }

    /// No retry quota at all: for clients that stand for AWS's own pollers (Lambda's event
    /// source mapping), which do not run the SDK's token bucket.
    pub fn unlimited(name: &str) -> QuotaPartition {
        QuotaPartition::with_bucket(name, TokenBucket::unlimited(), true)
    }

    fn with_bucket(name: &str, bucket: TokenBucket, unlimited: bool) -> QuotaPartition {
        let partition = RetryPartition::custom(name.to_string())
            .token_bucket(bucket.clone())
            .build();
        QuotaPartition {
            name: name.into(),
            partition,
            bucket,
            mirror: Arc::new(Mutex::new(QUOTA_CAPACITY)),
            unlimited,
        }
    }

    pub fn is_unlimited(&self) -> bool {
        self.unlimited
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Tokens left, counted by the SDK's rules from the attempts the interceptor saw.
    pub fn tokens_left(&self) -> u64 {
        *self.mirror.lock()
    }

    /// The SDK's own verdict: is its bucket empty?
    pub fn sdk_bucket_is_empty(&self) -> bool {
        self.bucket.is_empty()
    }
}

/// Where the clients go.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// latlab's emulator at this URL (static credentials, fixed region).
    Emulator { url: String },
    /// Any other endpoint, or real AWS when `endpoint_url` is None; the SDK's environment applies.
    Aws {
        endpoint_url: Option<String>,
        region: Option<String>,
    },
}

/// A loaded SDK configuration that makes clients.
#[derive(Clone)]
pub struct Clients {
    config: SdkConfig,
    target: Target,
    clock: Instant,
    /// The certificate authorities trusted beside the platform's (`AWS_CA_BUNDLE`, a profile's
    /// `ca_bundle`).
    ca_bundle: Option<Arc<CaBundle>>,
}

impl Clients {
    /// Loads the configuration for a target and, for real endpoints, checks that credentials and a
    /// region resolve, so a missing one is one clear error before anything runs.
    pub async fn connect(target: &Target, clock: Instant) -> anyhow::Result<Clients> {
        let ca_bundle = match target {
            Target::Emulator { .. } => None,
            Target::Aws { .. } => CaBundle::load().await?,
        };
        let config = match target {
            Target::Emulator { url } => SdkConfig::builder()
                .behavior_version(BehaviorVersion::latest())
                .region(Region::new(EMULATOR_REGION))
                .credentials_provider(
                    aws_credential_types::provider::SharedCredentialsProvider::new(
                        emulator_credentials(),
                    ),
                )
                .endpoint_url(url)
                .http_client(https_client())
                .build(),
            Target::Aws {
                endpoint_url,
                region,
            } => {
                if let Some(url) = endpoint_url {
                    check_endpoint_url(url)?;
                }
                // The credential chain's own calls (STS, IMDS, SSO) trust what the clients do.
                let mut loader = aws_config::defaults(BehaviorVersion::latest())
                    .http_client(https_client_trusting(ca_bundle.clone()));
                if let Some(r) = region {
                    loader = loader.region(Region::new(r.clone()));
                }
                if let Some(u) = endpoint_url {
                    loader = loader.endpoint_url(u);
                }
                let config = loader.load().await;
                let region = config.region().map(|r| r.to_string());
                match region.as_deref() {
                    None => bail!(
                        "no AWS region: pass --region or set AWS_REGION (or a region in your AWS profile)"
                    ),
                    Some(r) if !valid_region(r) => bail!(
                        "'{r}' is not a region name: regions look like us-east-1 or ap-northeast-1"
                    ),
                    Some(_) => {}
                }
                let provider = config.credentials_provider().context(
                    "no AWS credentials: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
                )?;
                let creds =
                    tokio::time::timeout(Duration::from_secs(10), provider.provide_credentials())
                        .await;
                match creds {
                    Ok(Ok(c)) => {
                        if let Some(why) = expired(&c) {
                            bail!("{why}");
                        }
                    }
                    Ok(Err(e)) => {
                        tracing::debug!(
                            "credentials: {}",
                            aws_smithy_types::error::display::DisplayErrorContext(&e)
                        );
                        bail!(
                            "no AWS credentials found ({}): set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
                            error_chain(&e)
                        )
                    }
                    Err(_) => bail!(
                        "AWS credentials did not resolve within 10 s: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
                    ),
                }
                config
            }
        };
        Ok(Clients {
            config,
            target: target.clone(),
            clock,
            ca_bundle,
        })
    }

    /// The HTTP client a service's SDK client is given: latlab's, trusting the CA bundle.
    pub fn http_client(&self) -> aws_smithy_runtime_api::client::http::SharedHttpClient {
        https_client_trusting(self.ca_bundle.clone())
    }

    /// Where the certificate authorities trusted beside the platform's came from, if any.
    pub fn ca_bundle(&self) -> Option<&str> {
        self.ca_bundle.as_deref().map(|b| b.from.as_str())
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The same clients with every call given up after `timeout`, connecting included: for a
    /// short probe of an endpoint (`latlab doctor`), where a silent endpoint must not stall.
    pub fn probing(&self, timeout: Duration) -> Clients {
        let timeouts = aws_smithy_types::timeout::TimeoutConfig::builder()
            .connect_timeout(timeout)
            .operation_timeout(timeout)
            .build();
        Clients {
            config: self.config.to_builder().timeout_config(timeouts).build(),
            target: self.target.clone(),
            clock: self.clock,
            ca_bundle: self.ca_bundle.clone(),
        }
    }

    /// Where the clients send requests, for messages: the endpoint URL, or AWS's in a region.
    pub fn endpoint(&self) -> String {
        match &self.target {
            Target::Emulator { url } => url.clone(),
            Target::Aws {
                endpoint_url: Some(url),
                ..
            } => url.clone(),
            Target::Aws {
                endpoint_url: None, ..
            } => format!("AWS ({})", self.region()),
        }
    }

    pub fn region(&self) -> String {
        self.config
            .region()
            .map_or_else(|| EMULATOR_REGION.into(), |r| r.to_string())
    }

    /// Whether the clients address an endpoint URL (the embedded emulator, or one the user
    /// named) rather than the service's own hosts: S3 then needs path-style addressing.
    pub fn at_endpoint_url(&self) -> bool {
        match &self.target {
            Target::Emulator { .. } => true,
            Target::Aws { endpoint_url, .. } => endpoint_url.is_some(),
        }
    }

    /// What [`sdk_client!`] builds every service's client from: the loaded configuration, the
    /// retry partition of `quota`, and the interceptor that records the client's attempts in
    /// `stats`.
    pub fn parts(
        &self,
        retry: &RetrySettings,
        quota: &QuotaPartition,
        stats: Arc<SdkStats>,
    ) -> (
        &SdkConfig,
        RetryPartition,
        impl aws_smithy_runtime_api::client::interceptors::Intercept + 'static,
    ) {
        (
            &self.config,
            quota.partition.clone(),
            Observer::new(stats, quota, retry, self.clock),
        )
    }
}

/// A client of a service's SDK (`aws_sdk_kinesis`, `aws_sdk_s3`, `aws_sdk_sqs`), built the one
/// way every client latlab measures with is: the run's loaded configuration, latlab's HTTPS
/// client, the retry settings, `quota`'s retry partition and the interceptor that records every
/// attempt in `stats`; `tune`, when given, sets the service's own settings on the builder (S3's
/// path-style addressing).
macro_rules! sdk_client {
    ($sdk:ident, $clients:expr, $retry:expr, $quota:expr, $stats:expr $(, $tune:expr)?) => {{
        let retry: &$crate::aws::RetrySettings = $retry;
        let (config, partition, observer) = $clients.parts(retry, $quota, $stats);
        let builder = $sdk::config::Builder::from(config)
            .http_client($clients.http_client())
            .retry_config(retry.config())
            .retry_partition(partition)
            .interceptor(observer);
        $(let builder = ($tune)(builder);)?
        $sdk::Client::from_conf(builder.build())
    }};
}
pub(crate) use sdk_client;

/// Which of the SDK's providers the credentials came from (`EnvironmentVariable`,
/// `AssumeRoleProvider`, `CredentialProcess`, `EcsContainer`, `IMDSv2`, ...). The name shows only
/// in the credentials' Debug text, which redacts the secret.
pub fn provider_name(c: &Credentials) -> String {
    let debug = format!("{c:?}");
    debug
        .split("provider_name: \"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or("the SDK's chain")
        .to_string()
}

/// Why credentials cannot be used, when they expired before now: one line saying where they
/// came from, when they expired and how to get fresh ones.
pub fn expired(c: &Credentials) -> Option<String> {
    let at = c.expiry()?;
    let ago = std::time::SystemTime::now().duration_since(at).ok()?;
    let when = latlab_core::clock::rfc3339_ms(latlab_core::clock::micros(at) / 1000);
    Some(format!(
        "the AWS credentials from {} expired at {when} ({} ago): get fresh ones from whatever issued them (`aws sso login`, the profile's credential_process or role), or set other credentials",
        provider_name(c),
        latlab_core::units::format_duration(Duration::from_secs(ago.as_secs()))
    ))
}

/// Whether `r` looks like a region name (us-east-1).
pub fn valid_region(r: &str) -> bool {
    !r.is_empty()
        && r.len() <= 32
        && r.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && r.contains('-')
}

/// An endpoint URL must be http(s)://host[:port][/path].
pub fn check_endpoint_url(url: &str) -> anyhow::Result<()> {
    let parsed: http::Uri = url.parse().with_context(|| {
        format!("--endpoint-url '{url}' is not a URL; write e.g. http://127.0.0.1:4567")
    })?;
    match (parsed.scheme_str(), parsed.host()) {
        (Some("http" | "https"), Some(_)) => Ok(()),
        _ => bail!(
            "--endpoint-url '{url}' must start with http:// or https:// and name a host, e.g. http://127.0.0.1:4567"
        ),
    }
}
