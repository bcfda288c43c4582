//! The JSON report's public form, `latlab-run-report/2` (`schemas/run-report.schema.json`),
//! written out field by field and converted from the run's snapshot. The snapshot is the TUI's
//! and the reports' internal view and may change freely; renaming one of its fields changes
//! nothing here unless this file changes too, and a test below validates what this file writes
//! against the schema for every lab. A report read back (`RunReport` -> `Report`) renders the same
//! tables as the run that wrote it.
//!
//! One file, though long: the schema's types and their conversions both ways belong together, so
//! that a field added to the schema is added here once, beside both of its conversions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::compare::{Cell, Tally};
use super::{Ending, Report, ScenarioInfo};
use crate::provenance::Param;
use crate::scenario::Seed;

#[derive(Serialize, Deserialize)]
pub struct RunReport {
    pub schema: String,
    pub latlab_version: String,
    pub scenario: ScenarioInfo,
    pub ending: Ending,
    pub snapshot: Snapshot,
    pub seed: Option<Seed>,
    pub cells: Vec<Cell>,
    pub tally: Tally,
    pub problems: Vec<String>,
    /// What the configuration at the end costs at list price (`super::cost::Cost`); absent in
    /// reports from before it existed. Figured from the snapshot, so it is not read back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<super::cost::Cost>,
}

#[derive(Serialize, Deserialize)]
pub struct Snapshot {
    pub scenario: String,
    pub backend: Backend,
    pub elapsed_secs: f64,
    pub producing_secs: f64,
    pub complete: bool,
    pub kinesis: Option<Kinesis>,
    pub s3: Option<S3>,
    pub redis: Option<Redis>,
    /// Absent in reports from before faults existed.
    #[serde(default)]
    pub faults: Faults,
    /// Absent in reports from before it existed.
    #[serde(default)]
    pub process: Process,
}

#[derive(Serialize, Deserialize, Default, Clone, Copy)]
pub struct ProcessSample {
    pub at_secs: f64,
    pub rss_bytes: Option<u64>,
    pub open_fds: Option<u64>,
    pub tasks: u64,
}

#[derive(Serialize, Deserialize, Default)]
pub struct Process {
    pub start: ProcessSample,
    pub at_10_min: Option<ProcessSample>,
    pub last: ProcessSample,
    pub peak_rss_bytes: Option<u64>,
}

impl From<crate::run::process::ProcessSample> for ProcessSample {
    fn from(s: crate::run::process::ProcessSample) -> Self {
        ProcessSample {
            at_secs: s.at_secs,
            rss_bytes: s.rss_bytes,
            open_fds: s.open_fds,
            tasks: s.tasks,
        }
    }
}

impl From<ProcessSample> for crate::run::process::ProcessSample {
    fn from(s: ProcessSample) -> Self {
        crate::run::process::ProcessSample {
            at_secs: s.at_secs,
            rss_bytes: s.rss_bytes,
            open_fds: s.open_fds,
            tasks: s.tasks,
        }
    }
}

#[derive(Serialize, Deserialize, Default)]
pub struct Faults {
    pub set: Vec<String>,
    pub events: Vec<FaultEvent>,
    pub counts: Vec<FaultCount>,
}

#[derive(Serialize, Deserialize)]
pub struct FaultEvent {
    pub at_secs: f64,
    pub kind: String,
    pub target: String,
    pub recovered_secs: Option<f64>,
    pub failed: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct FaultCount {
    pub kind: String,
    pub fired: u64,
    pub recovered: u64,
    pub failed: u64,
}

impl From<&crate::run::snapshot::FaultsSnapshot> for Faults {
    fn from(f: &crate::run::snapshot::FaultsSnapshot) -> Faults {
        Faults {
            set: f.set.clone(),
            events: f
                .events
                .iter()
                .map(|e| FaultEvent {
                    at_secs: e.at_secs,
                    kind: e.kind.name().into(),
                    target: e.target.clone(),
                    recovered_secs: e.recovered_secs,
                    failed: e.failed.clone(),
                })
                .collect(),
            counts: f
                .counts
                .iter()
                .map(|(k, c)| FaultCount {
                    kind: k.name().into(),
                    fired: c.fired,
                    recovered: c.recovered,
                    failed: c.failed,
                })
                .collect(),
        }
    }
}

impl Faults {
    /// Back into the snapshot's form; kinds this version does not know are left out.
    fn into_snapshot(self) -> crate::run::snapshot::FaultsSnapshot {
        use crate::faults::{Kind, KindCounts};
        crate::run::snapshot::FaultsSnapshot {
            set: self.set,
            events: self
                .events
                .into_iter()
                .filter_map(|e| {
                    Some(crate::run::snapshot::FaultRow {
                        at_secs: e.at_secs,
                        kind: Kind::parse(&e.kind).ok()?,
                        target: e.target,
                        recovered_secs: e.recovered_secs,
                        failed: e.failed,
                    })
                })
                .collect(),
            counts: self
                .counts
                .into_iter()
                .filter_map(|c| {
                    Some((
                        Kind::parse(&c.kind).ok()?,
                        KindCounts {
                            fired: c.fired,
                            recovered: c.recovered,
                            failed: c.failed,
                        },
                    ))
                })
                .collect(),
        }
    }
}

#[derive(Serialize, Deserialize)]
pub struct Backend {
    pub kind: String,
    pub label: String,
    pub latency_profile: Option<String>,
    pub endpoint: Option<String>,
    pub region: String,
    pub model: Vec<Param>,
}

/// Latency percentiles in microseconds.
#[derive(Serialize, Deserialize)]
pub struct Summary {
    pub count: u64,
    pub min_us: u64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
    pub mean_us: f64,
}

#[derive(Serialize, Deserialize)]
pub struct BytesSummary {
    pub count: u64,
    pub min_bytes: u64,
    pub p50_bytes: u64,
    pub p90_bytes: u64,
    pub p99_bytes: u64,
    pub max_bytes: u64,
    pub mean_bytes: f64,
}

/// What the SDK did for one client.
#[derive(Serialize, Deserialize)]
pub struct Sdk {
    pub calls: u64,
    pub attempts: u64,
    pub retries: u64,
    pub throttles: u64,
    pub escaped: BTreeMap<String, u64>,
    pub quota_left: Option<u64>,
    pub quota_refusals: u64,
    pub operations: BTreeMap<String, OpCounts>,
    pub attempt_latency: Summary,
    pub retry_wait: Summary,
    /// First attempts the SDK's client-side rate limiter held back (adaptive mode); absent in
    /// reports from before it was measured.
    #[serde(default)]
    pub client_waits: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_wait: Option<Summary>,
}

#[derive(Serialize, Deserialize)]
pub struct OpCounts {
    pub calls: u64,
    pub attempts: u64,
    pub throttles: u64,
}

#[derive(Serialize, Deserialize)]
pub struct Kinesis {
    pub stream: String,
    pub shards: usize,
    /// A reshard was under way when the report was taken; absent when not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub updating: bool,
    /// The open shards when the lab started and after each reshard took effect; absent when the
    /// stream was never resharded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shard_counts: Vec<ShardCount>,
    pub retry: String,
    pub producer: Producer,
    pub send_to_arrival: Summary,
    pub consumers: Vec<Consumer>,
    pub get_records_calls_per_sec: f64,
    pub get_records_limit_per_sec: u32,
}

#[derive(Serialize, Deserialize)]
pub struct Producer {
    pub asked_rate: f64,
    pub achieved_rate: f64,
    /// The seconds `achieved_rate` was measured over; absent from reports written before it
    /// was kept.
    #[serde(default)]
    pub achieved_over_secs: Option<f64>,
    pub mode: String,
    pub max_in_flight: u32,
    pub payload_bytes: u64,
    pub sent: u64,
    pub acked: u64,
    pub resent: u64,
    pub failed: u64,
    pub records_refused: u64,
    pub in_flight_full: f64,
    pub behind: u64,
    pub cpu: f64,
    pub cores: usize,
    pub put_latency: Summary,
    pub sdk: Sdk,
    #[serde(default)]
    pub last_error: Option<String>,
    #[serde(default)]
    pub unsupported: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct ShardCount {
    pub at_secs: f64,
    pub shards: usize,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConsumerKind {
    Efo,
    Poller,
    LambdaStandard,
    LambdaEfo,
}

#[derive(Serialize, Deserialize)]
pub struct Consumer {
    pub name: String,
    pub kind: ConsumerKind,
    pub detail: String,
    pub status: String,
    pub stopped_at_secs: Option<f64>,
    pub retry_quota_partition: String,
    pub arrival_to_receive: Summary,
    pub send_to_receive: Summary,
    pub recent: Summary,
    pub counts: Counts,
    pub millis_behind: Option<i64>,
    pub sdk: Sdk,
    pub batches: u64,
    pub batch_sizes: Vec<BatchSize>,
    pub events: BTreeMap<String, u64>,
    pub foreign_records: u64,
    /// Absent in older reports.
    #[serde(default)]
    pub last_error: Option<String>,
    /// Records that arrived after a record of their partition key stored later; present when
    /// the stream was resharded or it is not 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_order: Option<u64>,
}

/// A consumer's records: received + lost + unread = acknowledged.
#[derive(Serialize, Deserialize)]
pub struct Counts {
    pub acknowledged: u64,
    pub received: u64,
    pub lost: u64,
    pub unread: u64,
    pub duplicates: u64,
    pub late: u64,
    pub unacknowledged: u64,
    pub unchecked: u64,
}

#[derive(Serialize, Deserialize)]
pub struct BatchSize {
    pub size: u32,
    pub records: u64,
}

#[derive(Serialize, Deserialize)]
pub enum Class {
    Standard,
    ExpressOneZone,
}

#[derive(Serialize, Deserialize)]
pub struct S3 {
    pub class: Class,
    pub payload_bytes: u64,
    pub concurrency: usize,
    pub standard_bucket: String,
    pub express_bucket: String,
    pub ops: Vec<S3Op>,
    pub create_sessions: Option<u64>,
    pub sdk: Sdk,
    pub matrix: Option<Vec<MatrixRow>>,
    /// Absent in older reports.
    #[serde(default)]
    pub express_unsupported: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct S3Op {
    pub class: Class,
    pub op: String,
    pub first_byte: Summary,
    pub total: Summary,
    pub requests: u64,
    pub bytes: u64,
    pub mb_per_sec: f64,
    /// Requests per second over the last 10 seconds; absent in older reports.
    #[serde(default)]
    pub per_sec: Option<f64>,
    pub slow_downs: u64,
    pub errors: u64,
    /// Absent in older reports.
    #[serde(default)]
    pub last_error: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct Case {
    pub objects: u64,
    pub size: u64,
}

#[derive(Serialize, Deserialize)]
pub struct MatrixRow {
    pub case: Case,
    pub upload_express_s: f64,
    pub upload_standard_s: f64,
    pub download_express_s: f64,
    pub download_standard_s: f64,
    pub repetitions: u32,
}

#[derive(Serialize, Deserialize)]
pub enum Method {
    NewClients,
    Persistent,
    Offset,
}

#[derive(Serialize, Deserialize)]
pub struct Redis {
    pub primary: String,
    pub replica: String,
    pub local: bool,
    pub link: Option<Link>,
    pub value_bytes: u64,
    pub cpu_load: bool,
    pub memory_full: bool,
    pub status: String,
    pub methods: Vec<RedisMethod>,
    pub conditions: Vec<RedisCondition>,
    pub unavailable: Option<String>,
    /// The ElastiCache node type the cost prices the pair as; absent in older reports.
    #[serde(default)]
    pub node_type: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct Link {
    pub link: String,
    pub latency_ms: f64,
    pub bandwidth: f64,
    pub bytes_to_replica: u64,
    pub bytes_to_primary: u64,
}

#[derive(Serialize, Deserialize)]
pub struct RedisMethod {
    pub method: Method,
    pub lag: Summary,
    pub tries: u64,
    pub errors: u64,
    pub behind_bytes: Option<BytesSummary>,
    /// Absent in older reports.
    #[serde(default)]
    pub last_error: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct Condition {
    pub name: String,
    pub value_bytes: u64,
    pub cpu_load: bool,
    pub memory_full: bool,
}

#[derive(Serialize, Deserialize)]
pub struct RedisCondition {
    pub condition: Condition,
    pub methods: Vec<RedisMethod>,
    #[serde(default)]
    pub skipped: Option<String>,
}

// ---- from the internal snapshot ----

impl From<&Report> for RunReport {
    fn from(r: &Report) -> RunReport {
        RunReport {
            schema: r.schema.clone(),
            latlab_version: r.latlab_version.clone(),
            scenario: r.scenario.clone(),
            ending: r.ending,
            snapshot: Snapshot::from(&r.snapshot),
            seed: r.seed.clone(),
            cells: r.cells.clone(),
            tally: r.tally.clone(),
            problems: r.problems.clone(),
            cost: super::cost::json(r),
        }
    }
}

impl From<&crate::run::snapshot::Snapshot> for Snapshot {
    fn from(s: &crate::run::snapshot::Snapshot) -> Snapshot {
        let b = &s.backend;
        Snapshot {
            scenario: s.scenario.clone(),
            backend: Backend {
                kind: b.kind.clone(),
                label: b.label.clone(),
                latency_profile: b.latency_profile.clone(),
                endpoint: b.endpoint.clone(),
                region: b.region.clone(),
                model: b.model.clone(),
            },
            elapsed_secs: s.elapsed_secs,
            producing_secs: s.producing_secs,
            complete: s.complete,
            kinesis: s.kinesis.as_ref().map(kinesis),
            s3: s.s3.as_ref().map(s3),
            redis: s.redis.as_ref().map(redis),
            faults: Faults::from(&s.faults),
            process: Process {
                start: s.process.start.into(),
                at_10_min: s.process.at_10_min.map(Into::into),
                last: s.process.last.into(),
                peak_rss_bytes: s.process.peak_rss_bytes,
            },
        }
    }
}

fn summary(s: &crate::metrics::Summary) -> Summary {
    Summary {
        count: s.count,
        min_us: s.min_us,
        p50_us: s.p50_us,
        p90_us: s.p90_us,
        p99_us: s.p99_us,
        p999_us: s.p999_us,
        max_us: s.max_us,
        mean_us: s.mean_us,
    }
}

fn sdk(s: &crate::metrics::sdk::SdkSnapshot) -> Sdk {
    let c = &s.counters;
    Sdk {
        calls: c.calls,
        attempts: c.attempts,
        retries: c.retries,
        throttles: c.throttles,
        escaped: c.escaped.clone(),
        quota_left: c.quota_left,
        quota_refusals: c.quota_refusals,
        operations: c
            .operations
            .iter()
            .map(|(op, o)| {
                (
                    op.clone(),
                    OpCounts {
                        calls: o.calls,
                        attempts: o.attempts,
                        throttles: o.throttles,
                    },
                )
            })
            .collect(),
        attempt_latency: summary(&s.attempt_latency),
        retry_wait: summary(&s.retry_wait),
        client_waits: c.client_waits,
        client_wait: (s.client_wait.count > 0).then(|| summary(&s.client_wait)),
    }
}

fn kinesis(k: &crate::labs::kinesis::snapshot::KinesisSnapshot) -> Kinesis {
    use crate::labs::kinesis::config::ConsumerKind as Kind;
    let p = &k.producer;
    let resharded = k.resharded();
    Kinesis {
        stream: k.stream.clone(),
        shards: k.shards,
        updating: k.updating,
        shard_counts: if resharded {
            k.shard_counts
                .iter()
                .map(|c| ShardCount {
                    at_secs: c.at_secs,
                    shards: c.shards,
                })
                .collect()
        } else {
            Vec::new()
        },
        retry: k.retry.clone(),
        producer: Producer {
            asked_rate: p.asked_rate,
            achieved_rate: p.achieved_rate,
            achieved_over_secs: Some(p.achieved_over_secs),
            mode: p.mode.clone(),
            max_in_flight: p.max_in_flight,
            payload_bytes: p.payload_bytes,
            sent: p.sent,
            acked: p.acked,
            resent: p.resent,
            failed: p.failed,
            records_refused: p.records_refused,
            in_flight_full: p.in_flight_full,
            behind: p.behind,
            cpu: p.cpu,
            cores: p.cores,
            put_latency: summary(&p.put_latency),
            sdk: sdk(&p.sdk),
            last_error: p.last_error.clone(),
            unsupported: p.unsupported.clone(),
        },
        send_to_arrival: summary(&k.send_to_arrival),
        consumers: k
            .consumers
            .iter()
            .map(|c| {
                let n = &c.counts;
                Consumer {
                    name: c.name.clone(),
                    kind: match c.kind {
                        Kind::Efo => ConsumerKind::Efo,
                        Kind::Poller => ConsumerKind::Poller,
                        Kind::LambdaStandard => ConsumerKind::LambdaStandard,
                        Kind::LambdaEfo => ConsumerKind::LambdaEfo,
                    },
                    detail: c.detail.clone(),
                    status: c.status.clone(),
                    stopped_at_secs: c.stopped_at_secs,
                    retry_quota_partition: c.retry_quota_partition.clone(),
                    arrival_to_receive: summary(&c.arrival_to_receive),
                    send_to_receive: summary(&c.send_to_receive),
                    recent: summary(&c.recent),
                    counts: Counts {
                        acknowledged: n.acknowledged,
                        received: n.received,
                        lost: n.lost,
                        unread: n.unread,
                        duplicates: n.duplicates,
                        late: n.late,
                        unacknowledged: n.unacknowledged,
                        unchecked: n.unchecked,
                    },
                    millis_behind: c.millis_behind,
                    sdk: sdk(&c.sdk),
                    batches: c.batches,
                    batch_sizes: c
                        .batch_sizes
                        .iter()
                        .map(|b| BatchSize {
                            size: b.size,
                            records: b.records,
                        })
                        .collect(),
                    events: c.events.clone(),
                    foreign_records: c.foreign_records,
                    last_error: c.last_error.clone(),
                    out_of_order: (resharded || c.out_of_order > 0).then_some(c.out_of_order),
                }
            })
            .collect(),
        get_records_calls_per_sec: k.get_records_calls_per_sec,
        get_records_limit_per_sec: k.get_records_limit_per_sec,
    }
}

fn class(c: crate::services::s3::Class) -> Class {
    match c {
        crate::services::s3::Class::Standard => Class::Standard,
        crate::services::s3::Class::ExpressOneZone => Class::ExpressOneZone,
    }
}

fn s3(s: &crate::labs::s3::snapshot::S3Snapshot) -> S3 {
    S3 {
        class: class(s.class),
        payload_bytes: s.payload_bytes,
        concurrency: s.concurrency,
        standard_bucket: s.standard_bucket.clone(),
        express_bucket: s.express_bucket.clone(),
        ops: s
            .ops
            .iter()
            .map(|o| S3Op {
                class: class(o.class),
                op: o.op.clone(),
                first_byte: summary(&o.first_byte),
                total: summary(&o.total),
                requests: o.requests,
                bytes: o.bytes,
                mb_per_sec: o.mb_per_sec,
                per_sec: Some(o.per_sec),
                slow_downs: o.slow_downs,
                errors: o.errors,
                last_error: o.last_error.clone(),
            })
            .collect(),
        create_sessions: s.create_sessions,
        sdk: sdk(&s.sdk),
        matrix: s.matrix.as_ref().map(|rows| {
            rows.iter()
                .map(|r| MatrixRow {
                    case: Case {
                        objects: r.case.objects,
                        size: r.case.size,
                    },
                    upload_express_s: r.upload_express_s,
                    upload_standard_s: r.upload_standard_s,
                    download_express_s: r.download_express_s,
                    download_standard_s: r.download_standard_s,
                    repetitions: r.repetitions,
                })
                .collect()
        }),
        express_unsupported: s.express_unsupported.clone(),
    }
}

fn method(m: &crate::labs::redis::MethodSnapshot) -> RedisMethod {
    use crate::labs::redis::Method as M;
    RedisMethod {
        method: match m.method {
            M::NewClients => Method::NewClients,
            M::Persistent => Method::Persistent,
            M::Offset => Method::Offset,
        },
        lag: summary(&m.lag),
        tries: m.tries,
        errors: m.errors,
        behind_bytes: m.behind_bytes.as_ref().map(|b| BytesSummary {
            count: b.count,
            min_bytes: b.min_bytes,
            p50_bytes: b.p50_bytes,
            p90_bytes: b.p90_bytes,
            p99_bytes: b.p99_bytes,
            max_bytes: b.max_bytes,
            mean_bytes: b.mean_bytes,
        }),
        last_error: m.last_error.clone(),
    }
}

fn redis(r: &crate::labs::redis::snapshot::RedisSnapshot) -> Redis {
    Redis {
        primary: r.primary.clone(),
        replica: r.replica.clone(),
        local: r.local,
        link: r.link.as_ref().map(|l| Link {
            link: l.link.clone(),
            latency_ms: l.latency_ms,
            bandwidth: l.bandwidth,
            bytes_to_replica: l.bytes_to_replica,
            bytes_to_primary: l.bytes_to_primary,
        }),
        value_bytes: r.value_bytes,
        cpu_load: r.cpu_load,
        memory_full: r.memory_full,
        status: r.status.clone(),
        methods: r.methods.iter().map(method).collect(),
        conditions: r
            .conditions
            .iter()
            .map(|c| RedisCondition {
                condition: Condition {
                    name: c.condition.name.clone(),
                    value_bytes: c.condition.value_bytes,
                    cpu_load: c.condition.cpu_load,
                    memory_full: c.condition.memory_full,
                },
                methods: c.methods.iter().map(method).collect(),
                skipped: c.skipped.clone(),
            })
            .collect(),
        unavailable: r.unavailable.clone(),
        node_type: Some(r.node_type.clone()),
    }
}

// ---- back into a report, for a report read from its JSON ----

impl From<RunReport> for Report {
    fn from(r: RunReport) -> Report {
        Report {
            schema: r.schema,
            latlab_version: r.latlab_version,
            scenario: r.scenario,
            ending: r.ending,
            snapshot: r.snapshot.into(),
            seed: r.seed,
            cells: r.cells,
            tally: r.tally,
            problems: r.problems,
            prices: None,
        }
    }
}

impl From<Snapshot> for crate::run::snapshot::Snapshot {
    fn from(s: Snapshot) -> Self {
        let b = s.backend;
        crate::run::snapshot::Snapshot {
            scenario: s.scenario,
            backend: crate::run::snapshot::Backend {
                kind: b.kind,
                label: b.label,
                latency_profile: b.latency_profile,
                endpoint: b.endpoint,
                region: b.region,
                model: b.model,
            },
            elapsed_secs: s.elapsed_secs,
            producing_secs: s.producing_secs,
            complete: s.complete,
            kinesis: s.kinesis.map(Kinesis::into_snapshot),
            s3: s.s3.map(S3::into_snapshot),
            redis: s.redis.map(Redis::into_snapshot),
            faults: s.faults.into_snapshot(),
            process: crate::run::process::ProcessSnapshot {
                start: s.process.start.into(),
                at_10_min: s.process.at_10_min.map(Into::into),
                last: s.process.last.into(),
                peak_rss_bytes: s.process.peak_rss_bytes,
            },
        }
    }
}

impl Summary {
    fn into_summary(self) -> crate::metrics::Summary {
        crate::metrics::Summary {
            count: self.count,
            min_us: self.min_us,
            p50_us: self.p50_us,
            p90_us: self.p90_us,
            p99_us: self.p99_us,
            p999_us: self.p999_us,
            max_us: self.max_us,
            mean_us: self.mean_us,
        }
    }
}

impl Sdk {
    fn into_snapshot(self) -> crate::metrics::sdk::SdkSnapshot {
        crate::metrics::sdk::SdkSnapshot {
            counters: crate::metrics::sdk::SdkCounters {
                calls: self.calls,
                attempts: self.attempts,
                retries: self.retries,
                throttles: self.throttles,
                escaped: self.escaped,
                quota_left: self.quota_left,
                quota_refusals: self.quota_refusals,
                client_waits: self.client_waits,
                operations: self
                    .operations
                    .into_iter()
                    .map(|(op, o)| {
                        (
                            op,
                            crate::metrics::sdk::OpCounts {
                                calls: o.calls,
                                attempts: o.attempts,
                                throttles: o.throttles,
                            },
                        )
                    })
                    .collect(),
            },
            attempt_latency: self.attempt_latency.into_summary(),
            retry_wait: self.retry_wait.into_summary(),
            client_wait: self
                .client_wait
                .map(Summary::into_summary)
                .unwrap_or_default(),
        }
    }
}

impl Kinesis {
    fn into_snapshot(self) -> crate::labs::kinesis::snapshot::KinesisSnapshot {
        use crate::labs::kinesis::config::ConsumerKind as Kind;
        use crate::labs::kinesis::snapshot as k;
        let p = self.producer;
        k::KinesisSnapshot {
            stream: self.stream,
            shards: self.shards,
            updating: self.updating,
            shard_counts: self
                .shard_counts
                .into_iter()
                .map(|c| k::ShardCount {
                    at_secs: c.at_secs,
                    shards: c.shards,
                })
                .collect(),
            retry: self.retry,
            producer: k::ProducerSnapshot {
                asked_rate: p.asked_rate,
                achieved_rate: p.achieved_rate,
                // A report without it measured its rate over the producing time, which
                // acknowledged / achieved gives back.
                achieved_over_secs: p.achieved_over_secs.unwrap_or(if p.achieved_rate > 0.0 {
                    p.acked as f64 / p.achieved_rate
                } else {
                    0.0
                }),
                mode: p.mode,
                max_in_flight: p.max_in_flight,
                payload_bytes: p.payload_bytes,
                sent: p.sent,
                acked: p.acked,
                resent: p.resent,
                failed: p.failed,
                records_refused: p.records_refused,
                in_flight_full: p.in_flight_full,
                behind: p.behind,
                cpu: p.cpu,
                cores: p.cores,
                put_latency: p.put_latency.into_summary(),
                sdk: p.sdk.into_snapshot(),
                last_error: p.last_error,
                unsupported: p.unsupported,
            },
            send_to_arrival: self.send_to_arrival.into_summary(),
            consumers: self
                .consumers
                .into_iter()
                .map(|c| {
                    let n = c.counts;
                    k::ConsumerSnapshot {
                        name: c.name,
                        kind: match c.kind {
                            ConsumerKind::Efo => Kind::Efo,
                            ConsumerKind::Poller => Kind::Poller,
                            ConsumerKind::LambdaStandard => Kind::LambdaStandard,
                            ConsumerKind::LambdaEfo => Kind::LambdaEfo,
                        },
                        detail: c.detail,
                        status: c.status,
                        stopped_at_secs: c.stopped_at_secs,
                        retry_quota_partition: c.retry_quota_partition,
                        arrival_to_receive: c.arrival_to_receive.into_summary(),
                        send_to_receive: c.send_to_receive.into_summary(),
                        recent: c.recent.into_summary(),
                        counts: crate::metrics::SeqCounts {
                            acknowledged: n.acknowledged,
                            received: n.received,
                            lost: n.lost,
                            unread: n.unread,
                            duplicates: n.duplicates,
                            late: n.late,
                            unacknowledged: n.unacknowledged,
                            unchecked: n.unchecked,
                        },
                        out_of_order: c.out_of_order.unwrap_or(0),
                        shards: Vec::new(),
                        millis_behind: c.millis_behind,
                        sdk: c.sdk.into_snapshot(),
                        batches: c.batches,
                        batch_sizes: c
                            .batch_sizes
                            .into_iter()
                            .map(|b| k::BatchSize {
                                size: b.size,
                                records: b.records,
                            })
                            .collect(),
                        events: c.events,
                        foreign_records: c.foreign_records,
                        last_error: c.last_error,
                    }
                })
                .collect(),
            get_records_calls_per_sec: self.get_records_calls_per_sec,
            get_records_limit_per_sec: self.get_records_limit_per_sec,
        }
    }
}

impl Class {
    fn into_class(self) -> crate::services::s3::Class {
        match self {
            Class::Standard => crate::services::s3::Class::Standard,
            Class::ExpressOneZone => crate::services::s3::Class::ExpressOneZone,
        }
    }
}

impl S3 {
    fn into_snapshot(self) -> crate::labs::s3::snapshot::S3Snapshot {
        use crate::labs::s3 as s;
        s::snapshot::S3Snapshot {
            class: self.class.into_class(),
            payload_bytes: self.payload_bytes,
            concurrency: self.concurrency,
            standard_bucket: self.standard_bucket,
            express_bucket: self.express_bucket,
            ops: self
                .ops
                .into_iter()
                .map(|o| s::OpSnapshot {
                    class: o.class.into_class(),
                    op: o.op,
                    first_byte: o.first_byte.into_summary(),
                    total: o.total.into_summary(),
                    requests: o.requests,
                    bytes: o.bytes,
                    mb_per_sec: o.mb_per_sec,
                    per_sec: o.per_sec.unwrap_or(0.0),
                    slow_downs: o.slow_downs,
                    errors: o.errors,
                    last_error: o.last_error,
                })
                .collect(),
            create_sessions: self.create_sessions,
            sdk: self.sdk.into_snapshot(),
            matrix: self.matrix.map(|rows| {
                rows.into_iter()
                    .map(|r| s::MatrixRow {
                        case: s::Case {
                            objects: r.case.objects,
                            size: r.case.size,
                        },
                        upload_express_s: r.upload_express_s,
                        upload_standard_s: r.upload_standard_s,
                        download_express_s: r.download_express_s,
                        download_standard_s: r.download_standard_s,
                        repetitions: r.repetitions,
                    })
                    .collect()
            }),
            express_unsupported: self.express_unsupported,
        }
    }
}

impl RedisMethod {
    fn into_snapshot(self) -> crate::labs::redis::MethodSnapshot {
        use crate::labs::redis::Method as M;
        crate::labs::redis::MethodSnapshot {
            method: match self.method {
                Method::NewClients => M::NewClients,
                Method::Persistent => M::Persistent,
                Method::Offset => M::Offset,
            },
            lag: self.lag.into_summary(),
            tries: self.tries,
            errors: self.errors,
            behind_bytes: self.behind_bytes.map(|b| crate::metrics::BytesSummary {
                count: b.count,
                min_bytes: b.min_bytes,
                p50_bytes: b.p50_bytes,
                p90_bytes: b.p90_bytes,
                p99_bytes: b.p99_bytes,
                max_bytes: b.max_bytes,
                mean_bytes: b.mean_bytes,
            }),
            last_error: self.last_error,
        }
    }
}

impl Redis {
    fn into_snapshot(self) -> crate::labs::redis::snapshot::RedisSnapshot {
        use crate::labs::redis as r;
        r::snapshot::RedisSnapshot {
            primary: self.primary,
            replica: self.replica,
            local: self.local,
            link: self.link.map(|l| r::local::ShaperStats {
                link: l.link,
                latency_ms: l.latency_ms,
                bandwidth: l.bandwidth,
                bytes_to_replica: l.bytes_to_replica,
                bytes_to_primary: l.bytes_to_primary,
            }),
            value_bytes: self.value_bytes,
            cpu_load: self.cpu_load,
            memory_full: self.memory_full,
            status: self.status,
            methods: self
                .methods
                .into_iter()
                .map(RedisMethod::into_snapshot)
                .collect(),
            conditions: self
                .conditions
                .into_iter()
                .map(|c| r::ConditionResult {
                    condition: r::Condition {
                        name: c.condition.name,
                        value_bytes: c.condition.value_bytes,
                        cpu_load: c.condition.cpu_load,
                        memory_full: c.condition.memory_full,
                    },
                    methods: c
                        .methods
                        .into_iter()
                        .map(RedisMethod::into_snapshot)
                        .collect(),
                    skipped: c.skipped,
                })
                .collect(),
            unavailable: self.unavailable,
            node_type: self
                .node_type
                .unwrap_or_else(|| crate::labs::redis::config::DEFAULT_NODE_TYPE.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Format;
    use crate::scenario::Scenario;

    fn validator() -> jsonschema::Validator {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../schemas/run-report.schema.json")).unwrap();
        jsonschema::validator_for(&schema).unwrap()
    }

    /// Every lab's part, as this file writes it, follows the schema; and the schema pins it: a
    /// field this file dropped or added would fail.
    #[test]
    fn the_public_form_follows_the_schema_for_every_lab() {
        let validator = validator();
        let mut view = crate::tui::fixture::sample_tour_view();
        // A headless Redis run's conditions, and an S3 matrix, so every part is filled.
        let redis = view.snapshot.redis.as_mut().unwrap();
        redis.conditions = vec![crate::labs::redis::ConditionResult {
            condition: crate::labs::redis::Condition {
                name: "1 KB".into(),
                value_bytes: 1000,
                cpu_load: false,
                memory_full: false,
            },
            methods: redis.methods.clone(),
            skipped: None,
        }];
        view.snapshot.s3.as_mut().unwrap().matrix = Some(vec![crate::labs::s3::MatrixRow {
            case: crate::labs::s3::Case {
                objects: 1,
                size: 1_000_000_000,
            },
            upload_express_s: 10.0,
            upload_standard_s: 20.0,
            download_express_s: 5.0,
            download_standard_s: 9.0,
            repetitions: 1,
        }]);
        let scenario = Scenario::resolve("tour").unwrap();
        let report = Report::new(&scenario, view.snapshot, Ending::Completed, Vec::new());
        let json: serde_json::Value = serde_json::from_str(&report.render(Format::Json)).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&json)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        // Read back, it is the same report: every format renders the same.
        let back: Report = serde_json::from_value::<RunReport>(json.clone())
            .unwrap()
            .into();
        assert_eq!(back, report);
        for (path, field) in [
            ("/snapshot/kinesis/consumers/0", "counts"),
            ("/snapshot/s3/ops/0", "first_byte"),
            ("/snapshot/s3/matrix/0", "case"),
            ("/snapshot/redis/methods/0", "lag"),
            ("/snapshot/redis/conditions/0", "condition"),
            ("/snapshot/backend", "model"),
            ("/cost", "label"),
            ("/cost/labs/0", "items"),
            ("/cost/kinesis_consumers/0", "usd_per_million_records"),
            ("/cost/s3_classes/0", "usd_per_gb"),
        ] {
            let mut broken = json.clone();
            broken
                .pointer_mut(path)
                .and_then(|v| v.as_object_mut())
                .unwrap_or_else(|| panic!("{path} is in the report"))
                .remove(field);
            assert!(!validator.is_valid(&broken), "{path}/{field} is required");
            let mut extra = json.clone();
            extra
                .pointer_mut(path)
                .and_then(|v| v.as_object_mut())
                .unwrap()
                .insert("surprise".into(), 1.into());
            assert!(!validator.is_valid(&extra), "{path} takes no other field");
        }
    }
}
