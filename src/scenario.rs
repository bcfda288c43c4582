//! What an experiment is: a TOML file naming the stream, the producer, the consumers and their
//! settings, the SDK's retry settings, the latency profile and limits for the embedded emulator,
//! and (for the seed scenarios) the seed's own figures to print beside ours.
//!
//! Built-in scenarios live in `scenarios/*.toml` and are compiled in. A bad file gets an error
//! naming the file, the line and the field.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::aws::RetrySettings;
use crate::units::{Bytes, Dur, toml_error};

/// The built-in scenarios: (name, file text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("demo", include_str!("../scenarios/demo.toml")),
    (
        "seed-kinesis-round1",
        include_str!("../scenarios/seed-kinesis-round1.toml"),
    ),
    (
        "seed-kinesis-round2",
        include_str!("../scenarios/seed-kinesis-round2.toml"),
    ),
    ("seed-s3", include_str!("../scenarios/seed-s3.toml")),
    ("s3-demo", include_str!("../scenarios/s3-demo.toml")),
    ("seed-redis", include_str!("../scenarios/seed-redis.toml")),
    ("redis-demo", include_str!("../scenarios/redis-demo.toml")),
    ("tour", include_str!("../scenarios/tour.toml")),
];

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
}

impl ConsumerKind {
    pub fn name(self) -> &'static str {
        match self {
            ConsumerKind::Efo => "efo",
            ConsumerKind::Poller => "poller",
            ConsumerKind::LambdaStandard => "lambda-standard",
            ConsumerKind::LambdaEfo => "lambda-efo",
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
        }
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
    /// Pollers only: how many (named "NAME 1", "NAME 2", ... when more than one).
    pub count: u32,
    pub interval: Duration,
    pub interval_mode: IntervalMode,
    pub retry_quota: RetryQuota,
    /// GetRecords `Limit` of a poller.
    pub limit: u32,
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
pub fn lambda_retry_provenance() -> crate::provenance::Provenance {
    crate::provenance::Provenance::new(
        crate::provenance::Source::Assumption,
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
                crate::units::format_duration(linger)
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

#[derive(Clone, Debug, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Seed {
    pub kinesis: Option<KinesisSeed>,
    pub s3: Option<S3Seed>,
    pub redis: Option<RedisSeed>,
}

/// The seed's Redis table: the average lag per condition, in milliseconds.
#[derive(Clone, Debug, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RedisSeed {
    #[serde(default)]
    pub experiment: String,
    pub source: String,
    pub rows: Vec<RedisSeedRow>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RedisSeedRow {
    pub condition: String,
    pub average_ms: f64,
    pub range: Option<String>,
}

/// The Redis lab: a link profile, the live value size, and the conditions of a headless run.
#[derive(Clone, Debug, PartialEq)]
pub struct RedisScenario {
    pub link: String,
    /// The link between latlab's clients and the servers (the seed's client was in the region).
    pub client_link: String,
    pub value: u64,
    pub conditions: Vec<crate::lab::redis::Condition>,
    pub tries: u32,
    pub quick_tries: u32,
}

/// The seed's S3 tables: seconds per whole set; a set is compared with ours of the same label.
#[derive(Clone, Debug, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct S3Seed {
    #[serde(default)]
    pub experiment: String,
    pub source: String,
    pub upload: Vec<S3SeedRow>,
    pub download: Vec<S3SeedRow>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct S3SeedRow {
    pub case: String,
    pub express_s: f64,
    pub standard_s: f64,
}

/// The S3 lab: a live PUT/GET loop, and the seed's matrix for headless runs.
#[derive(Clone, Debug, PartialEq)]
pub struct S3Scenario {
    pub class: crate::emulator::s3::Class,
    pub payload: u64,
    pub concurrency: usize,
    pub transfer: crate::lab::s3::Transfer,
    pub matrix: Vec<crate::lab::s3::Case>,
    /// The matrix scaled down for `--quick`.
    pub quick: Vec<crate::lab::s3::Case>,
    pub repetitions: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// Headless run length; the TUI runs until quit.
    pub duration: Duration,
    /// The latency profile of the embedded emulator (a real endpoint adds its own latency).
    pub latency_profile: String,
    /// `--limit`-style overrides for the embedded emulator.
    pub emulator_limits: Vec<String>,
    pub kinesis: Option<KinesisScenario>,
    pub s3: Option<S3Scenario>,
    pub redis: Option<RedisScenario>,
    pub seed: Option<Seed>,
    /// Where it came from: `built-in` or the file's path.
    pub origin: String,
}

// ---- the file form ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    description: String,
    duration: Dur,
    #[serde(default = "default_profile")]
    latency_profile: String,
    #[serde(default)]
    emulator: EmulatorSection,
    kinesis: Option<KinesisFile>,
    s3: Option<S3File>,
    redis: Option<RedisFile>,
    seed: Option<Seed>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RedisFile {
    link: Option<String>,
    client_link: Option<String>,
    value: Option<Bytes>,
    #[serde(default)]
    conditions: Vec<ConditionFile>,
    tries: Option<u32>,
    quick_tries: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConditionFile {
    name: String,
    value: Bytes,
    #[serde(default)]
    cpu_load: bool,
    #[serde(default)]
    memory_full: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct S3File {
    class: Option<ClassName>,
    payload: Option<Bytes>,
    concurrency: Option<usize>,
    transfer: Option<TransferFile>,
    #[serde(default)]
    matrix: Vec<CaseFile>,
    #[serde(default)]
    quick: Vec<CaseFile>,
    repetitions: Option<u32>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum ClassName {
    Express,
    Standard,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TransferFile {
    threshold: Option<Bytes>,
    part_size: Option<Bytes>,
    concurrency: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    objects: u64,
    size: Bytes,
}

fn default_profile() -> String {
    "seed-tokyo".into()
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct EmulatorSection {
    #[serde(default)]
    limits: toml::Table,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KinesisFile {
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
}

/// The smallest payload that holds a record's seq, send time and run id.
pub const MIN_PAYLOAD: u64 = 96;

impl Scenario {
    /// A built-in scenario by name, or a scenario file by path.
    pub fn resolve(name_or_path: &str) -> anyhow::Result<Scenario> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Scenario::parse(text, "built-in")
                .with_context(|| format!("built-in scenario {name_or_path}"));
        }
        let path = Path::new(name_or_path);
        if path.exists() || name_or_path.ends_with(".toml") {
            return Scenario::load(path);
        }
        bail!(
            "unknown scenario '{name_or_path}': valid names are {} (see `latlab scenarios`), or a path to a .toml file",
            BUILTIN
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        )
    }

    pub fn load(path: &Path) -> anyhow::Result<Scenario> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read scenario file {}", path.display()))?;
        Scenario::parse(&text, &path.display().to_string())
            .with_context(|| format!("scenario file {}", path.display()))
    }

    /// Parses and validates a scenario's text; errors name the line and field.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Scenario> {
        let file: File =
            toml::from_str(text).map_err(|e| anyhow::anyhow!("{}", toml_error(text, &e)))?;
        let duration = file.duration.0;
        if duration.is_zero() {
            bail!("duration must be longer than 0s");
        }
        let emulator_limits: Vec<String> = file
            .emulator
            .limits
            .iter()
            .map(|(k, v)| format!("kinesis.{k}={v}"))
            .collect();
        crate::emulator::limits::Limits::load(None, &emulator_limits)
            .context("[emulator] limits")?;
        crate::emulator::profile::LatencyProfile::resolve(&file.latency_profile)
            .context("latency_profile")?;
        let kinesis = file.kinesis.map(|k| kinesis(k, text)).transpose()?;
        let s3 = file.s3.map(s3).transpose()?;
        let redis = file.redis.map(redis).transpose()?;
        if kinesis.is_none() && s3.is_none() && redis.is_none() {
            bail!("the scenario has no [kinesis], [s3] or [redis] section: nothing to run");
        }
        if let (Some(seed), Some(k)) = (
            file.seed.as_ref().and_then(|s| s.kinesis.as_ref()),
            kinesis.as_ref(),
        ) {
            for row in &seed.arrival_to_receive {
                if !k.consumer_names().contains(&row.consumer) {
                    bail!(
                        "seed.kinesis.arrival_to_receive names consumer '{}', which the scenario does not have; its consumers are {}",
                        row.consumer,
                        k.consumer_names().join(", ")
                    );
                }
            }
        }
        Ok(Scenario {
            name: file.name,
            description: file.description,
            duration,
            latency_profile: file.latency_profile,
            emulator_limits,
            kinesis,
            s3,
            redis,
            seed: file.seed,
            origin: origin.to_string(),
        })
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn kinesis(k: KinesisFile, text: &str) -> anyhow::Result<KinesisScenario> {
    crate::emulator::kinesis::json::check_name("kinesis.stream", &k.stream).map_err(|e| {
        anyhow::anyhow!(
            "kinesis.stream '{}' is not a stream name: {}",
            k.stream,
            e.message
        )
    })?;
    if k.shards == 0 || k.shards > 500 {
        bail!("kinesis.shards must be between 1 and 500, got {}", k.shards);
    }
    k.retry
        .validate()
        .map_err(|e| anyhow::anyhow!("kinesis.{e}"))?;
    let p = &k.producer;
    if !(p.rate.is_finite() && p.rate > 0.0 && p.rate <= 100_000.0) {
        bail!(
            "kinesis.producer.rate must be records per second between 0 and 100000, got {}",
            p.rate
        );
    }
    if p.payload.0 < MIN_PAYLOAD || p.payload.0 > 1024 * 1024 - 64 {
        bail!(
            "kinesis.producer.payload must be between {MIN_PAYLOAD} B (the seq, send time and run id) and 1 MiB - 64 B, got {} B",
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
                    crate::units::format_duration(linger)
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
            "kinesis.consumers is empty: add at least one [[kinesis.consumers]] with kind = efo, poller, lambda-standard or lambda-efo"
        );
    }
    Ok(KinesisScenario {
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

fn redis(f: RedisFile) -> anyhow::Result<RedisScenario> {
    let link = f.link.unwrap_or_else(|| "loopback".into());
    let client_link = f.client_link.unwrap_or_else(|| "loopback".into());
    crate::redis_local::LinkProfile::resolve(&client_link)
        .map_err(|e| anyhow::anyhow!("redis.client_link: {e}"))?;
    crate::redis_local::LinkProfile::resolve(&link)
        .map_err(|e| anyhow::anyhow!("redis.link: {e}"))?;
    let limit = 512 * 1024 * 1024;
    let value = f.value.map_or(1000, |b| b.0);
    if value == 0 || value > limit {
        bail!("redis.value must be between 1 B and 512 MB (Redis's largest string)");
    }
    let mut conditions = Vec::new();
    for (i, c) in f.conditions.into_iter().enumerate() {
        if c.value.0 == 0 || c.value.0 > limit {
            bail!("redis.conditions[{i}].value must be between 1 B and 512 MB");
        }
        conditions.push(crate::lab::redis::Condition {
            name: c.name,
            value_bytes: c.value.0,
            cpu_load: c.cpu_load,
            memory_full: c.memory_full,
        });
    }
    let tries = f.tries.unwrap_or(10);
    let quick_tries = f.quick_tries.unwrap_or(3);
    if !(1..=10_000).contains(&tries) || !(1..=10_000).contains(&quick_tries) {
        bail!("redis.tries and redis.quick_tries must be between 1 and 10000");
    }
    Ok(RedisScenario {
        link,
        client_link,
        value,
        conditions,
        tries,
        quick_tries,
    })
}

fn s3(f: S3File) -> anyhow::Result<S3Scenario> {
    use crate::emulator::s3::Class;
    let default = crate::lab::s3::Transfer::default();
    let transfer = match f.transfer {
        Some(t) => crate::lab::s3::Transfer {
            threshold: t.threshold.map_or(default.threshold, |b| b.0),
            part_size: t.part_size.map_or(default.part_size, |b| b.0),
            concurrency: t.concurrency.unwrap_or(default.concurrency),
        },
        None => default,
    };
    if transfer.part_size < 5 * 1024 * 1024 {
        bail!("s3.transfer.part_size must be at least 5MiB (S3's smallest part)");
    }
    if !(1..=64).contains(&transfer.concurrency) {
        bail!("s3.transfer.concurrency must be between 1 and 64");
    }
    let cases = |v: Vec<CaseFile>, field: &str| -> anyhow::Result<Vec<crate::lab::s3::Case>> {
        v.into_iter()
            .enumerate()
            .map(|(i, c)| {
                if c.objects == 0 || c.size.0 == 0 {
                    bail!("s3.{field}[{i}]: objects and size must be greater than 0");
                }
                if c.size.0 > 5 * 1024 * 1024 * 1024 {
                    bail!("s3.{field}[{i}]: size must be at most 5 GiB");
                }
                Ok(crate::lab::s3::Case {
                    objects: c.objects,
                    size: c.size.0,
                })
            })
            .collect()
    };
    let payload = f.payload.map_or(100_000, |b| b.0);
    if payload == 0 || payload > 1024 * 1024 * 1024 {
        bail!("s3.payload must be between 1 B and 1 GiB");
    }
    let concurrency = f.concurrency.unwrap_or(1);
    if !(1..=64).contains(&concurrency) {
        bail!("s3.concurrency must be between 1 and 64");
    }
    let repetitions = f.repetitions.unwrap_or(1);
    if !(1..=100).contains(&repetitions) {
        bail!("s3.repetitions must be between 1 and 100");
    }
    Ok(S3Scenario {
        class: match f.class {
            Some(ClassName::Standard) => Class::Standard,
            _ => Class::ExpressOneZone,
        },
        payload,
        concurrency,
        transfer,
        matrix: cases(f.matrix, "matrix")?,
        quick: cases(f.quick, "quick")?,
        repetitions,
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
    let lambda = matches!(kind, ConsumerKind::LambdaStandard | ConsumerKind::LambdaEfo);
    if !polled {
        if c.count.is_some() {
            return Err(not_for("count", "poller"));
        }
        if c.interval.is_some() {
            return Err(not_for("interval", "poller"));
        }
        if c.interval_mode.is_some() {
            return Err(not_for("interval_mode", "poller"));
        }
        if c.retry_quota.is_some() {
            return Err(not_for("retry_quota", "poller"));
        }
        if c.limit.is_some() {
            return Err(not_for("limit", "poller"));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse() {
        for (name, _) in BUILTIN {
            let s = Scenario::resolve(name).unwrap();
            assert_eq!(&s.name, name);
            assert!(s.kinesis.is_some() || s.s3.is_some() || s.redis.is_some());
        }
        let r2 = Scenario::resolve("seed-kinesis-round2").unwrap();
        let names = r2.kinesis.unwrap().consumer_names();
        assert!(names.contains(&"get_records 3".to_string()), "{names:?}");
    }

    fn err(text: &str) -> String {
        format!("{:#}", Scenario::parse(text, "t.toml").unwrap_err())
    }

    const HEAD: &str = "name = \"x\"\ndescription = \"d\"\nduration = \"10s\"\n[kinesis]\nstream = \"s\"\n[kinesis.producer]\nrate = 5\npayload = \"128B\"\n";

    #[test]
    fn errors_name_the_line_and_field() {
        let e = err(&format!(
            "{HEAD}[[kinesis.consumers]]\nkind = \"efo\"\ninterval = \"200ms\"\n"
        ));
        assert_eq!(
            e,
            "line 9, kinesis.consumers[0]: interval does not apply to kind = \"efo\"; it applies to poller"
        );
        let e = err(&format!("{HEAD}[[kinesis.consumers]]\nkind = \"pollr\"\n"));
        assert!(
            e.starts_with(
                "line 10, column 8: unknown variant `pollr`, expected one of `efo`, `poller`"
            ),
            "{e}"
        );
        let e = err(&format!(
            "{HEAD}[[kinesis.consumers]]\nkind = \"poller\"\nintervall = \"1s\"\n"
        ));
        assert!(
            e.starts_with("line 11, column 1: unknown field `intervall`"),
            "{e}"
        );
        let e = err("name = \"x\"\ndescription = \"d\"\nduration = \"ten\"\n");
        assert!(
            e.contains("line 3") && e.contains("'ten' is not a duration"),
            "{e}"
        );
        let e = err(&HEAD.replace("rate = 5", "rate = -1"));
        assert!(e.contains("kinesis.producer.rate must be"), "{e}");
        let e = err(&HEAD.replace("128B", "10B"));
        assert!(
            e.contains("kinesis.producer.payload must be between 96 B"),
            "{e}"
        );
        let e = err(HEAD);
        assert!(e.contains("kinesis.consumers is empty"), "{e}");
        let e = err(&format!(
            "{HEAD}[[kinesis.consumers]]\nkind = \"efo\"\nname = \"a\"\n[[kinesis.consumers]]\nkind = \"efo\"\nname = \"a\"\n"
        ));
        assert!(e.contains("a consumer named 'a' already exists"), "{e}");
        let e = err(&format!("latency_profile = \"mars\"\n{HEAD}"));
        assert!(
            e.contains("latency_profile: unknown latency profile 'mars'"),
            "{e}"
        );
    }
}
