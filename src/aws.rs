//! SDK client construction: endpoint, credentials, region, retry settings and retry partitions,
//! with an interceptor that records every attempt the SDK makes. One file, though long: every
//! client latlab builds goes through it, so the Kinesis and S3 clients cannot drift apart.
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
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::{
    BeforeSerializationInterceptorContextRef, BeforeTransmitInterceptorContextMut,
    BeforeTransmitInterceptorContextRef, FinalizerInterceptorContextRef,
};
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::{ConfigBag, Storable, StoreReplace};
use aws_smithy_types::retry::RetryConfig;
use parking_lot::Mutex;
use serde::Deserialize;

use crate::metrics::sdk::{SdkStats, is_throttle};
use crate::units::Dur;

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

/// A Kinesis client for an emulator endpoint with the given retry settings (tests and benches).
pub fn emulator_kinesis_client(endpoint_url: &str, retry: RetryConfig) -> aws_sdk_kinesis::Client {
    let config = aws_sdk_kinesis::Config::builder()
        .behavior_version(aws_sdk_kinesis::config::BehaviorVersion::latest())
        .region(Region::new(EMULATOR_REGION))
        .credentials_provider(emulator_credentials())
        .endpoint_url(endpoint_url)
        .retry_config(retry)
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
            crate::units::format_duration(self.initial_backoff.0),
            crate::units::format_duration(self.max_backoff.0)
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
}

impl Clients {
    /// Loads the configuration for a target and, for real endpoints, checks that credentials and a
    /// region resolve, so a missing one is one clear error before anything runs.
    pub async fn connect(target: &Target, clock: Instant) -> anyhow::Result<Clients> {
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
                .build(),
            Target::Aws {
                endpoint_url,
                region,
            } => {
                if let Some(url) = endpoint_url {
                    check_endpoint_url(url)?;
                }
                let mut loader = aws_config::defaults(BehaviorVersion::latest());
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
                    Ok(Ok(_)) => {}
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
        })
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

    /// An S3 client: path-style addressing against an endpoint URL (directory buckets then need an
    /// IP-literal host), the SDK's defaults against AWS.
    pub fn s3(
        &self,
        retry: &RetrySettings,
        quota: &QuotaPartition,
        stats: Arc<SdkStats>,
    ) -> aws_sdk_s3::Client {
        let observer = Observer::new(stats, quota, retry.max_attempts, self.clock);
        let path_style = match &self.target {
            Target::Emulator { .. } => true,
            Target::Aws { endpoint_url, .. } => endpoint_url.is_some(),
        };
        let config = aws_sdk_s3::config::Builder::from(&self.config)
            .force_path_style(path_style)
            .retry_config(retry.config())
            .retry_partition(quota.partition.clone())
            .interceptor(observer)
            .build();
        aws_sdk_s3::Client::from_conf(config)
    }

    /// A Kinesis client with its own retry settings and quota partition, whose attempts are
    /// recorded in `stats`.
    pub fn kinesis(
        &self,
        retry: &RetrySettings,
        quota: &QuotaPartition,
        stats: Arc<SdkStats>,
    ) -> aws_sdk_kinesis::Client {
        let observer = Observer::new(stats, quota, retry.max_attempts, self.clock);
        let config = aws_sdk_kinesis::config::Builder::from(&self.config)
            .retry_config(retry.config())
            .retry_partition(quota.partition.clone())
            .interceptor(observer)
            .build();
        aws_sdk_kinesis::Client::from_conf(config)
    }
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

/// Per-call state of the observer, kept in the operation's config bag.
#[derive(Clone, Debug)]
struct AttemptState {
    /// The operation's name, from the SDK's metadata.
    op: String,
    attempt: u32,
    started: Instant,
    last_end: Option<Instant>,
    /// What the previous attempt's failure costs the quota if it is retried (0: not retryable).
    retry_cost: u64,
    /// When the SDK's retry loop began (after serialization): a first attempt later than this
    /// by more than a millisecond was held by the client-side rate limiter.
    loop_started: Option<Instant>,
}

impl Storable for AttemptState {
    type Storer = StoreReplace<Self>;
}

/// Sees every attempt of every call a client makes and keeps the counts in [`SdkStats`], including
/// a mirror of the retry quota that follows the SDK's rules: a retry takes 5 tokens (10 after a
/// timeout or transient error); a call that succeeds gives its last retry's tokens back, or one
/// token if it needed no retry; the tokens of a retry replaced by a later retry are gone.
struct Observer {
    stats: Arc<SdkStats>,
    /// None: the client has no retry quota to follow.
    quota: Option<Arc<Mutex<u64>>>,
    /// The tokens of this client's outstanding retry permit (the SDK keeps it per client).
    held: Mutex<Option<u64>>,
    max_attempts: u32,
    clock: Instant,
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer")
            .field("max_attempts", &self.max_attempts)
            .finish_non_exhaustive()
    }
}

impl Observer {
    fn new(
        stats: Arc<SdkStats>,
        quota: &QuotaPartition,
        max_attempts: u32,
        clock: Instant,
    ) -> Observer {
        let left = (!quota.unlimited).then(|| quota.tokens_left());
        stats.counters.lock().quota_left = left;
        let mirror = (!quota.unlimited).then(|| quota.mirror.clone());
        Observer {
            stats,
            quota: mirror,
            held: Mutex::new(None),
            max_attempts,
            clock,
        }
    }

    fn second(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.clock).as_secs()
    }

    fn publish_quota(&self, tokens: u64) {
        self.stats.counters.lock().quota_left = Some(tokens);
    }
}

/// The error code of a failed attempt's response (JSON `__type`, XML `<Code>`, or the header).
fn response_code(resp: &aws_smithy_runtime_api::http::Response) -> Option<String> {
    if let Some(h) = resp.headers().get("x-amzn-errortype") {
        return Some(h.split(':').next().unwrap_or(h).to_string());
    }
    let body = std::str::from_utf8(resp.body().bytes()?).ok()?;
    let code = if let Some(i) = body.find("\"__type\"") {
        let rest = &body[i + 8..];
        let start = rest.find('"')? + 1;
        let end = start + rest[start..].find('"')?;
        rest[start..end].rsplit('#').next()?.to_string()
    } else {
        let start = body.find("<Code>")? + 6;
        let end = start + body[start..].find("</Code>")?;
        body[start..end].to_string()
    };
    Some(code)
}

impl Intercept for Observer {
    fn name(&self) -> &'static str {
        "latlab::Observer"
    }

    // Not `read_before_execution`: a client's interceptors run that hook before the operation's
    // configuration (and so its name) is in the config bag.
    fn read_before_serialization(
        &self,
        _context: &BeforeSerializationInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let op = cfg
            .load::<aws_smithy_runtime_api::client::orchestrator::Metadata>()
            .map_or_else(|| "unknown".to_string(), |m| m.name().to_string());
        {
            let mut c = self.stats.counters.lock();
            c.calls += 1;
            c.operations.entry(op.clone()).or_default().calls += 1;
        }
        cfg.interceptor_state().store_put(AttemptState {
            op,
            attempt: 0,
            started: Instant::now(),
            last_end: None,
            retry_cost: 0,
            loop_started: None,
        });
        Ok(())
    }

    // The orchestrator runs this hook, then asks the retry strategy for leave to send the first
    // attempt: the adaptive strategy's rate limiter answers with a delay it sleeps, and only then
    // does `read_before_attempt` run (aws-smithy-runtime's orchestrator, `try_op`).
    fn modify_before_retry_loop(
        &self,
        _context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(state) = cfg.load::<AttemptState>().cloned() {
            cfg.interceptor_state().store_put(AttemptState {
                loop_started: Some(Instant::now()),
                ..state
            });
        }
        Ok(())
    }

    fn read_before_attempt(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let now = Instant::now();
        let mut state = cfg.load::<AttemptState>().cloned().unwrap_or(AttemptState {
            op: String::new(),
            attempt: 0,
            started: now,
            last_end: None,
            retry_cost: 0,
            loop_started: None,
        });
        state.attempt += 1;
        state.started = now;
        {
            let mut c = self.stats.counters.lock();
            c.attempts += 1;
            if state.attempt > 1 {
                c.retries += 1;
            }
            c.operations.entry(state.op.clone()).or_default().attempts += 1;
        }
        self.stats
            .attempts_by_op
            .lock()
            .entry(state.op.clone())
            .or_default()
            .tick(self.second(now));
        if state.attempt == 1
            && let Some(begun) = state.loop_started
        {
            let held = now.saturating_duration_since(begun);
            if held >= Duration::from_millis(1) {
                self.stats.counters.lock().client_waits += 1;
                self.stats
                    .client_wait
                    .lock()
                    .record(held.as_micros() as u64, self.second(now));
            }
        }
        if state.attempt > 1 {
            if let Some(end) = state.last_end {
                let wait = now.saturating_duration_since(end);
                self.stats
                    .retry_wait
                    .lock()
                    .record(wait.as_micros() as u64, self.second(now));
            }
            // The SDK took a retry permit: its tokens leave the quota; an earlier permit of this
            // client is forgotten (its tokens never come back).
            if let Some(quota) = &self.quota {
                let cost = state.retry_cost.max(5);
                let left = {
                    let mut q = quota.lock();
                    *q = q.saturating_sub(cost);
                    *q
                };
                *self.held.lock() = Some(cost);
                self.publish_quota(left);
            }
        }
        cfg.interceptor_state().store_put(state);
        Ok(())
    }

    fn read_after_attempt(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let now = Instant::now();
        let Some(mut state) = cfg.load::<AttemptState>().cloned() else {
            return Ok(());
        };
        self.stats.attempt_latency.lock().record(
            now.saturating_duration_since(state.started).as_micros() as u64,
            self.second(now),
        );
        state.last_end = Some(now);
        state.retry_cost = match context.output_or_error() {
            Some(Err(e)) if e.is_timeout_error() || e.is_connector_error() => 10,
            Some(Err(_)) => {
                let resp = context.response();
                let code = resp.and_then(response_code);
                let status = resp.map_or(0, |r| r.status().as_u16());
                if code.as_deref().is_some_and(is_throttle) || status == 429 {
                    let mut c = self.stats.counters.lock();
                    c.throttles += 1;
                    c.operations.entry(state.op.clone()).or_default().throttles += 1;
                    5
                } else if status >= 500 {
                    10
                } else {
                    0
                }
            }
            _ => 0,
        };
        cfg.interceptor_state().store_put(state);
        Ok(())
    }

    fn read_after_execution(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let state = cfg.load::<AttemptState>().cloned();
        let failed = matches!(context.output_or_error(), Some(Err(_)));
        let Some(quota) = &self.quota else {
            return Ok(());
        };
        if !failed {
            let held = self.held.lock().take();
            let left = {
                let mut q = quota.lock();
                *q = (*q + held.unwrap_or(1)).min(QUOTA_CAPACITY);
                *q
            };
            self.publish_quota(left);
        } else if let Some(s) = state
            && s.retry_cost > 0
            && s.attempt < self.max_attempts
        {
            self.stats.counters.lock().quota_refusals += 1;
        }
        Ok(())
    }
}

/// The code of an SDK error, for counting escaped errors and for messages.
pub fn error_code<E, R>(e: &aws_smithy_runtime_api::client::result::SdkError<E, R>) -> String
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata,
{
    use aws_smithy_runtime_api::client::result::SdkError;
    match e {
        SdkError::ServiceError(s) => s.err().code().unwrap_or("UnknownServiceError").to_string(),
        SdkError::TimeoutError(_) => "Timeout".into(),
        SdkError::DispatchFailure(d) if d.is_timeout() => "Timeout".into(),
        SdkError::DispatchFailure(_) => "DispatchFailure".into(),
        SdkError::ResponseError(_) => "ResponseError".into(),
        SdkError::ConstructionFailure(_) => "ConstructionFailure".into(),
        _ => "Unknown".into(),
    }
}

/// An SDK error as one readable line: the service's code and message, or what the endpoint
/// answered instead (its HTTP status), or the transport's cause. Never the SDK's `Debug` dump:
/// the whole error goes to the log at debug level.
pub fn error_line<E>(
    e: &aws_smithy_runtime_api::client::result::SdkError<E, aws_smithy_runtime_api::http::Response>,
) -> String
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
{
    use aws_smithy_runtime_api::client::result::SdkError;
    let full = aws_smithy_types::error::display::DisplayErrorContext(e).to_string();
    tracing::debug!("SDK error: {full}");
    match e {
        SdkError::ServiceError(s) if s.err().code().is_none() => {
            let raw = s.raw();
            let kind = raw
                .headers()
                .get("content-type")
                .map(|t| format!(" ({t})"))
                .unwrap_or_default();
            format!(
                "HTTP {}: the answer{kind} is not an AWS error",
                raw.status().as_u16()
            )
        }
        SdkError::ServiceError(s) => format!(
            "{}: {}",
            s.err().code().unwrap_or("UnknownServiceError"),
            s.err().message().unwrap_or("(no message)")
        ),
        SdkError::ResponseError(r) => {
            let raw = r.raw();
            let kind = raw
                .headers()
                .get("content-type")
                .map(|t| format!(" ({t})"))
                .unwrap_or_default();
            format!(
                "HTTP {}: the answer{kind} is not an AWS response",
                raw.status().as_u16()
            )
        }
        SdkError::TimeoutError(_) => "timed out".into(),
        SdkError::DispatchFailure(_) if session_failure(e).is_some() => format!(
            "CreateSession (the SDK's S3 Express session): {}",
            error_line(session_failure(e).expect("checked"))
        ),
        // The transport's cause.
        _ => error_chain(e),
    }
}

/// The error of the S3 Express session the SDK asked for by itself, inside a call that failed
/// for it (the SDK reports it as the call's dispatch failure).
fn session_failure(
    e: &dyn std::error::Error,
) -> Option<
    &aws_smithy_runtime_api::client::result::SdkError<
        aws_sdk_s3::operation::create_session::CreateSessionError,
        aws_smithy_runtime_api::http::Response,
    >,
> {
    let mut next = e.source();
    while let Some(err) = next {
        if let Some(s) = err.downcast_ref() {
            return Some(s);
        }
        next = err.source();
    }
    None
}

/// An error and its causes, each by its Display (never its Debug), on one line.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = next {
        let text = crate::units::one_line(&err.to_string());
        if !text.is_empty() && parts.last() != Some(&text) {
            parts.push(text);
        }
        next = err.source();
    }
    parts.join(": ")
}

/// Whether an SDK error says the endpoint lacks the operation: it answered an HTTP error with
/// something that is not an AWS response (an HTML page, say), or with the code of an unknown
/// operation. Returns what it answered, for one line naming the operation.
pub fn unsupported<E>(
    e: &aws_smithy_runtime_api::client::result::SdkError<E, aws_smithy_runtime_api::http::Response>,
) -> Option<String>
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
{
    use aws_smithy_runtime_api::client::result::SdkError;
    match e {
        SdkError::ResponseError(r) if r.raw().status().as_u16() >= 400 => Some(format!(
            "HTTP {}, not an AWS response",
            r.raw().status().as_u16()
        )),
        // S3's SDK reads an error body it cannot parse as an error without a code. A HEAD's
        // answer has no body at all: an empty 403 or 404 (HeadBucket, HeadObject) is S3's
        // "access denied" or "not found", an answer, not an endpoint lacking the operation.
        SdkError::ServiceError(s)
            if s.err().code().is_none()
                && s.raw().status().as_u16() >= 400
                && !(matches!(s.raw().status().as_u16(), 403 | 404)
                    && s.raw().body().bytes().is_some_and(<[u8]>::is_empty)) =>
        {
            Some(format!(
                "HTTP {}, not an AWS response",
                s.raw().status().as_u16()
            ))
        }
        // The S3 Express session the SDK asks for on its own (from inside the call) failed.
        SdkError::DispatchFailure(_) => session_failure(e).and_then(unsupported),
        SdkError::ServiceError(s) => match s.err().code() {
            Some(
                code @ ("UnknownOperationException"
                | "UnknownOperation"
                | "NotImplemented"
                | "InvalidAction"),
            ) => Some(format!("HTTP {} {code}", s.raw().status().as_u16())),
            _ => None,
        },
        _ => None,
    }
}
