//! The Kinesis lab's part of a scenario file (`[kinesis]`, its producer and consumers) and the
//! seed's Kinesis figures (`[seed.kinesis]`): the types, their file form and validation. Errors
//! name the field (and the line, for consumers).

use std::time::Duration;

use anyhow::bail;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::aws::RetrySettings;
use latlab_core::units::{Bytes, Dur, line_of};

pub use super::kcl::KclVersion;
use super::kcl::kcl_idle;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConsumerKind {
    /// Enhanced fan-out through the SDK: RegisterStreamConsumer + SubscribeToShard.
    Efo,
    /// Shared throughput: GetShardIterator + GetRecords at an interval.
    Poller,
    /// Lambda's event source mapping with a standard iterator (polls GetRecords).
    LambdaStandard,
    /// Lambda's event source mapping on a fan-out consumer (pushed records, batched).
    LambdaEfo,
    /// The Kinesis Client Library's polling loop: GetRecords, then an idle time (`kcl.rs`).
    Kcl,
}

impl ConsumerKind {
    pub fn name(self) -> &'static str {
        match self {
            ConsumerKind::Efo => "efo",
            ConsumerKind::Poller => "poller",
            ConsumerKind::LambdaStandard => "lambda-standard",
            ConsumerKind::LambdaEfo => "lambda-efo",
            ConsumerKind::Kcl => "kcl",
        }
    }

    /// Pushed (dedicated throughput) rather than polled (the shard's shared budget).
    pub fn is_fan_out(self) -> bool {
        matches!(self, ConsumerKind::Efo | ConsumerKind::LambdaEfo)
    }

    pub fn label(self) -> &'static str {
        match self {
            ConsumerKind::Efo => "enhanced fan-out (SDK)",
            ConsumerKind::Poller => "GetRecords pollers",
            ConsumerKind::LambdaStandard => "Lambda, standard iterator",
            ConsumerKind::LambdaEfo => "Lambda, enhanced fan-out",
            ConsumerKind::Kcl => "KCL, polling",
        }
    }

    /// Reads with GetRecords, against the shard's shared budget.
    pub fn polls(self) -> bool {
        matches!(
            self,
            ConsumerKind::Poller | ConsumerKind::LambdaStandard | ConsumerKind::Kcl
        )
    }
}

/// When a poller's interval runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalMode {
    /// Sleep the interval after each call returns (what a simple loop does; the seed's pollers).
    SleepAfter,
    /// Start a call every interval, whatever the previous one took.
    FixedRate,
}

/// Whether pollers share one SDK retry quota (one process) or have one each (separate processes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetryQuota {
    Shared,
    PerPoller,
}

impl RetryQuota {
    pub fn describe(self) -> &'static str {
        match self {
            RetryQuota::Shared => "pollers share one retry quota (one process)",
            RetryQuota::PerPoller => "each poller has its own retry quota (separate processes)",
        }
    }
}

/// Where consumers start reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StartPosition {
    Latest,
    TrimHorizon,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerSpec {
    pub kind: ConsumerKind,
    pub name: String,
    /// Pollers and KCL consumers: how many (named "NAME 1", "NAME 2", ... when more than one).
    pub count: u32,
    /// A poller's interval; a KCL consumer's idle time between reads.
    pub interval: Duration,
    pub interval_mode: IntervalMode,
    pub retry_quota: RetryQuota,
    /// GetRecords `Limit` of a poller or a KCL consumer (its `maxRecords`).
    pub limit: u32,
    /// KCL consumers only: whose loop.
    pub kcl_version: KclVersion,
    /// Lambda only.
    pub batch_size: u32,
    pub batching_window: Duration,
    pub poll_interval: Duration,
    /// The consumer's own SDK retry settings; None: the scenario's `kinesis.retry`.
    pub retry: Option<RetrySettings>,
}

/// How Lambda's event source mapping retries a throttled poll. AWS does not publish it, and no
/// seed figure was used to choose it: latlab assumes the AWS SDKs' standard retry mode (3
/// attempts, back-off from 1 s to 20 s, full jitter), with no retry quota, since the SDK's token
/// bucket belongs to a customer's process, not to AWS's pollers. A consumer's `retry` overrides
/// it.
pub fn lambda_retry() -> RetrySettings {
    RetrySettings::default()
}

/// The provenance of [`lambda_retry`], for reports.
pub fn lambda_retry_provenance() -> latlab_core::provenance::Provenance {
    latlab_core::provenance::Provenance::new(
        latlab_core::provenance::Source::Assumption,
        "how Lambda's pollers retry a throttled GetRecords is not published: the AWS SDKs' \
         standard retry mode is assumed (AWS SDKs and Tools Reference Guide, 'Retry behavior'), \
         with no retry quota",
    )
}

/// How the producer writes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProducerMode {
    /// One PutRecord per record (the seed's producer).
    PutRecord,
    /// PutRecords batches: records gathered for at most `linger`, at most `batch` a request.
    PutRecords { linger: Duration, batch: u32 },
}

impl ProducerMode {
    pub fn describe(self) -> String {
        match self {
            ProducerMode::PutRecord => "PutRecord per record".into(),
            ProducerMode::PutRecords { linger, batch } => format!(
                "PutRecords batches of up to {batch}, linger {}",
                latlab_core::units::format_duration(linger)
            ),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProducerSpec {
    /// Records per second.
    pub rate: f64,
    /// Payload bytes per record (the seq and send time are inside).
    pub payload: u64,
    /// Requests in flight at once at most.
    pub max_in_flight: u32,
    pub mode: ProducerMode,
    /// A headless run produces for exactly this long (`rate x duration` records); None: until
    /// stopped (the live lab).
    pub stop_after: Option<Duration>,
}

impl KinesisScenario {
    /// What a poller added live is like: the scenario's first poller, or the SDK's usual
    /// GetRecords loop (every 200 ms, its own retry quota).
    pub fn poller_template(&self) -> ConsumerSpec {
        self.consumers
            .iter()
            .find(|c| c.kind == ConsumerKind::Poller)
            .cloned()
            .unwrap_or(ConsumerSpec {
                kind: ConsumerKind::Poller,
                name: "get_records".into(),
                count: 1,
                interval: Duration::from_millis(200),
                interval_mode: IntervalMode::SleepAfter,
                retry_quota: RetryQuota::PerPoller,
                limit: 10_000,
                kcl_version: KclVersion::V2,
                batch_size: 100,
                batching_window: Duration::ZERO,
                poll_interval: Duration::from_secs(1),
                retry: None,
            })
    }

    /// What a KCL consumer added live is like: the scenario's first, or KCL 2.x's defaults
    /// (idle 1.5 s, 10,000 records a call).
    pub fn kcl_template(&self) -> ConsumerSpec {
        self.consumers
            .iter()
            .find(|c| c.kind == ConsumerKind::Kcl)
            .cloned()
            .unwrap_or(ConsumerSpec {
                kind: ConsumerKind::Kcl,
                name: "kcl".into(),
                interval: KclVersion::V2.default_idle(),
                limit: super::kcl::MAX_RECORDS,
                ..self.poller_template()
            })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct KinesisScenario {
    pub stream: String,
    pub shards: u32,
    pub retry: RetrySettings,
    pub start: StartPosition,
    pub producer: ProducerSpec,
    pub consumers: Vec<ConsumerSpec>,
    /// How long after the producer stops the consumers may take to catch up before the run ends.
    pub drain: Duration,
    /// Reshards asked for at set times (`[[kinesis.reshards]]`).
    pub reshards: Vec<super::ReshardAt>,
}

/// A seed figure row: percentiles in milliseconds.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SeedRow {
    pub consumer: String,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: Option<f64>,
}

impl SeedRow {
    /// Its percentiles, as the comparison reads them.
    pub fn percentiles(&self) -> crate::lab_kit::section::compare::Percentiles {
        crate::lab_kit::section::compare::Percentiles {
            p50_ms: self.p50_ms,
            p90_ms: self.p90_ms,
            p99_ms: self.p99_ms,
            max_ms: self.max_ms,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KinesisSeed {
    /// The experiment's name in cell ids (`kinesis-round1`).
    #[serde(default)]
    pub experiment: String,
    pub source: String,
    #[serde(default)]
    pub arrival_to_receive: Vec<SeedRow>,
    pub send_to_arrival: Option<SeedRow>,
    /// Throttles that escaped the SDK's retries, per consumer.
    #[serde(default)]
    pub escaped_throttles: Vec<SeedCount>,
    /// CloudWatch's ReadProvisionedThroughputExceeded per minute: the range over the run.
    pub read_throttles_per_minute: Option<[f64; 2]>,
    /// CloudWatch's GetRecords.Success per minute: the range over the run.
    pub get_records_per_minute: Option<[f64; 2]>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SeedCount {
    pub consumer: String,
    pub count: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KinesisFile {
    stream: String,
    #[serde(default = "one")]
    shards: u32,
    #[serde(default)]
    retry: RetrySettings,
    #[serde(default = "latest")]
    start: StartPosition,
    producer: ProducerFile,
    #[serde(default)]
    consumers: Vec<Spanned<ConsumerFile>>,
    drain: Option<Dur>,
    #[serde(default)]
    reshards: Vec<Spanned<super::reshard::ReshardFile>>,
}

fn one() -> u32 {
    1
}

fn latest() -> StartPosition {
    StartPosition::Latest
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProducerFile {
    rate: f64,
    payload: Bytes,
    max_in_flight: Option<u32>,
    mode: Option<ModeName>,
    linger: Option<Dur>,
    batch: Option<u32>,
}

#[derive(Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "kebab-case")]
enum ModeName {
    PutRecord,
    PutRecords,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConsumerFile {
    kind: ConsumerKind,
    name: Option<String>,
    count: Option<u32>,
    interval: Option<Dur>,
    interval_mode: Option<IntervalMode>,
    retry_quota: Option<RetryQuota>,
    limit: Option<u32>,
    batch_size: Option<u32>,
    batching_window: Option<Dur>,
    poll_interval: Option<Dur>,
    retry: Option<RetrySettings>,
    idle_time: Option<Dur>,
    kcl: Option<KclVersion>,
}

/// The smallest payload that holds a record's seq, send time and run id.
pub const MIN_PAYLOAD: u64 = 96;

pub fn parse(k: KinesisFile, text: &str) -> anyhow::Result<KinesisScenario> {
    if let Some(problem) = latlab_core::services::kinesis::name_problem(&k.stream) {
        bail!(
            "kinesis.stream '{}' is not a stream name: {problem}",
            k.stream
        );
    }
    if k.shards == 0 || k.shards > 500 {
        bail!("kinesis.shards must be between 1 and 500, got {}", k.shards);
    }
    k.retry
        .validate()
        .map_err(|e| anyhow::anyhow!("kinesis.{e}"))?;
    let p = &k.producer;
    if !(p.rate.is_finite() && p.rate > 0.0 && p.rate <= 100_000.0) {
        bail!(
            "kinesis.producer.rate must be more than 0 and at most 100,000 records per second, got {}",
            p.rate
        );
    }
    if p.payload.0 < MIN_PAYLOAD || p.payload.0 > 1024 * 1024 - 64 {
        bail!(
            "kinesis.producer.payload must be between {MIN_PAYLOAD} B (the seq, send time and run id) and 1 MiB - 64 B (1,048,512 B), got {} B",
            p.payload.0
        );
    }
    let mode = match p.mode.unwrap_or(ModeName::PutRecord) {
        ModeName::PutRecord => {
            if p.linger.is_some() || p.batch.is_some() {
                bail!(
                    "kinesis.producer.linger and batch apply to mode = \"put-records\", not \"put-record\""
                );
            }
            ProducerMode::PutRecord
        }
        ModeName::PutRecords => {
            let linger = p.linger.map_or(Duration::from_millis(50), |d| d.0);
            if linger > Duration::from_secs(5) {
                bail!(
                    "kinesis.producer.linger must be at most 5s, got {}",
                    latlab_core::units::format_duration(linger)
                );
            }
            let batch = p.batch.unwrap_or(500);
            if !(1..=500).contains(&batch) {
                bail!(
                    "kinesis.producer.batch must be between 1 and 500 (PutRecords' limit), got {batch}"
                );
            }
            ProducerMode::PutRecords { linger, batch }
        }
    };
    let mut consumers = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for (i, spanned) in k.consumers.into_iter().enumerate() {
        let line = line_of(text, spanned.span().start);
        let c = spanned.into_inner();
        let spec =
            consumer(c).map_err(|e| anyhow::anyhow!("line {line}, kinesis.consumers[{i}]: {e}"))?;
        let expanded = spec.expand();
        for e in &expanded {
            if !names.insert(e.name.clone()) {
                bail!(
                    "line {line}, kinesis.consumers[{i}]: a consumer named '{}' already exists; names must be unique",
                    e.name
                );
            }
        }
        consumers.push(spec);
    }
    if consumers.is_empty() {
        bail!(
            "kinesis.consumers is empty: add at least one [[kinesis.consumers]] with kind = efo, poller, kcl, lambda-standard or lambda-efo"
        );
    }
    let reshards = super::reshard::schedule(k.reshards, k.shards, text)?;
    Ok(KinesisScenario {
        reshards,
        stream: k.stream,
        shards: k.shards,
        retry: k.retry,
        start: k.start,
        producer: ProducerSpec {
            rate: p.rate,
            payload: p.payload.0,
            max_in_flight: p.max_in_flight.unwrap_or(64).clamp(1, 1024),
            mode,
            stop_after: None,
        },
        consumers,
        drain: k.drain.map_or(Duration::from_secs(15), |d| d.0),
    })
}

fn consumer(c: ConsumerFile) -> anyhow::Result<ConsumerSpec> {
    let kind = c.kind;
    let not_for = |field: &str, applies: &str| {
        anyhow::anyhow!(
            "{field} does not apply to kind = \"{}\"; it applies to {applies}",
            kind.name()
        )
    };
    let polled = matches!(kind, ConsumerKind::Poller);
    let kcl = kind == ConsumerKind::Kcl;
    let lambda = matches!(kind, ConsumerKind::LambdaStandard | ConsumerKind::LambdaEfo);
    if !kcl {
        if c.idle_time.is_some() {
            return Err(not_for("idle_time", "kcl"));
        }
        if c.kcl.is_some() {
            return Err(not_for("kcl", "kcl"));
        }
    }
    if !polled && !kcl {
        if c.count.is_some() {
            return Err(not_for("count", "poller and kcl"));
        }
        if c.limit.is_some() {
            return Err(not_for("limit", "poller and kcl"));
        }
    }
    if !polled {
        if c.interval.is_some() {
            return Err(not_for("interval", "poller"));
        }
        if c.interval_mode.is_some() {
            return Err(not_for("interval_mode", "poller"));
        }
        if c.retry_quota.is_some() {
            return Err(not_for("retry_quota", "poller"));
        }
    }
    if !lambda {
        if c.batch_size.is_some() {
            return Err(not_for("batch_size", "lambda-standard and lambda-efo"));
        }
        if c.batching_window.is_some() {
            return Err(not_for("batching_window", "lambda-standard and lambda-efo"));
        }
    }
    if c.poll_interval.is_some() && kind != ConsumerKind::LambdaStandard {
        return Err(not_for("poll_interval", "lambda-standard"));
    }
    let count = c.count.unwrap_or(1);
    if count == 0 || count > 32 {
        bail!("count must be between 1 and 32, got {count}");
    }
    let interval = c.interval.map_or(Duration::from_millis(200), |d| d.0);
    if polled && interval < Duration::from_millis(1) {
        bail!("interval must be at least 1ms");
    }
    let batch_size = c.batch_size.unwrap_or(100);
    if lambda && !(1..=10_000).contains(&batch_size) {
        bail!("batch_size must be between 1 and 10000, got {batch_size}");
    }
    let batching_window = c.batching_window.map_or(Duration::ZERO, |d| d.0);
    if batching_window > Duration::from_secs(300) {
        bail!("batching_window must be at most 5m (Lambda's limit)");
    }
    let limit = c.limit.unwrap_or(10_000);
    if !(1..=10_000).contains(&limit) {
        bail!("limit must be between 1 and 10000, got {limit}");
    }
    let kcl_version = c.kcl.unwrap_or(KclVersion::V2);
    let interval = if kcl {
        kcl_idle(kcl_version, c.idle_time.map(|d| d.0))?
    } else {
        interval
    };
    let poll_interval = c.poll_interval.map_or(Duration::from_secs(1), |d| d.0);
    if poll_interval < Duration::from_millis(10) {
        bail!("poll_interval must be at least 10ms");
    }
    if let Some(r) = &c.retry {
        r.validate()?;
    }
    let retry = c.retry.or_else(|| lambda.then(lambda_retry));
    let name = match c.name {
        Some(n) if n.trim().is_empty() || n.len() > 40 => bail!("name must be 1 to 40 characters"),
        Some(n) => n,
        None => kind.name().to_string(),
    };
    Ok(ConsumerSpec {
        kind,
        name,
        count,
        interval,
        interval_mode: c.interval_mode.unwrap_or(IntervalMode::SleepAfter),
        retry_quota: c.retry_quota.unwrap_or(RetryQuota::PerPoller),
        limit,
        kcl_version,
        batch_size,
        batching_window,
        poll_interval,
        retry,
    })
}

impl ConsumerSpec {
    /// One spec per running consumer: a poller spec with `count = 3` is three pollers.
    pub fn expand(&self) -> Vec<ConsumerSpec> {
        if self.count <= 1 {
            return vec![ConsumerSpec {
                count: 1,
                ..self.clone()
            }];
        }
        (1..=self.count)
            .map(|i| ConsumerSpec {
                count: 1,
                name: format!("{} {i}", self.name),
                ..self.clone()
            })
            .collect()
    }
}

impl KinesisScenario {
    /// Every running consumer's name, in order.
    pub fn consumer_names(&self) -> Vec<String> {
        self.consumers
            .iter()
            .flat_map(|c| c.expand())
            .map(|c| c.name)
            .collect()
    }
}

/// In every report since `latlab-run-report/2`: `null` when the run has no such lab.
impl crate::labs::ReportPart for KinesisSeed {
    const REPORTED_WHEN_ABSENT: bool = true;
}
