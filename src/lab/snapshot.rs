//! Frozen views of a running lab: what the TUI draws each frame and what reports print. Built from
//! the shared state in one pass; nothing here is measured, only read.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};

use super::state::{ConsumerState, Shared};
use crate::metrics::sdk::SdkSnapshot;
use crate::metrics::{SeqCounts, Summary};
use crate::scenario::{ConsumerKind, ProducerSpec};

/// Where the figures came from; every screen and report shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Backend {
    /// `emulator` (embedded), `endpoint` (any URL) or `aws` (the SDK's default endpoints).
    pub kind: String,
    /// One line for headers: "embedded emulator, latency profile seed-tokyo".
    pub label: String,
    pub latency_profile: Option<String>,
    pub endpoint: Option<String>,
    pub region: String,
    /// The model in effect (emulator runs, and the Redis lab's shaped links): every parameter
    /// with its source and the seed figures it was derived from.
    pub model: Vec<crate::provenance::Param>,
}

impl Backend {
    /// A few words for the screen's header: "emulator · seed-tokyo", "AWS ap-northeast-1".
    pub fn short(&self) -> String {
        match (self.kind.as_str(), &self.latency_profile, &self.endpoint) {
            ("emulator", Some(p), _) => format!("emulator · {p} profile"),
            ("endpoint", _, Some(url)) => format!("endpoint {url}"),
            ("fixture", _, _) => "fixture · not measured".into(),
            ("redis", _, _) => self
                .label
                .split(" (")
                .next()
                .unwrap_or(&self.label)
                .to_string(),
            _ => format!("AWS {}", self.region),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchSize {
    pub size: u32,
    pub records: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConsumerSnapshot {
    pub name: String,
    pub kind: ConsumerKind,
    pub detail: String,
    pub status: String,
    pub stopped_at_secs: Option<f64>,
    pub retry_quota_partition: String,
    pub arrival_to_receive: Summary,
    pub send_to_receive: Summary,
    /// arrival -> receive over the last 10 seconds (bucket precision).
    pub recent: Summary,
    /// `received + lost + unread = acknowledged`, always.
    pub counts: SeqCounts,
    /// The largest MillisBehindLatest among its shards' last answers (the service's own measure
    /// of how far behind the consumer reads); None before the first answer.
    pub millis_behind: Option<i64>,
    pub sdk: SdkSnapshot,
    pub batches: u64,
    pub batch_sizes: Vec<BatchSize>,
    pub events: BTreeMap<String, u64>,
    pub foreign_records: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProducerSnapshot {
    /// Records per second asked for.
    pub asked_rate: f64,
    /// Records per second acknowledged: over the producing time once the run is complete, over
    /// the last 10 seconds while it runs.
    pub achieved_rate: f64,
    /// `PutRecord per record` or the PutRecords batching.
    pub mode: String,
    pub max_in_flight: u32,
    pub payload_bytes: u64,
    /// Records handed to the service (a re-send counts again).
    pub sent: u64,
    pub acked: u64,
    pub resent: u64,
    pub failed: u64,
    /// Records a PutRecords answer refused one by one.
    pub records_refused: u64,
    /// The share of the producing time the producer waited for a free in-flight slot.
    pub in_flight_full: f64,
    /// Records due by the asked rate and not yet sent (now).
    pub behind: u64,
    /// The share of one core latlab's process used while producing (emulator included when it
    /// is embedded), and the cores it may use.
    pub cpu: f64,
    pub cores: usize,
    /// send -> acknowledged per record: the put call's whole time, the SDK's retries (and, with
    /// batching, the linger) included.
    pub put_latency: Summary,
    pub sdk: SdkSnapshot,
}

impl ProducerSnapshot {
    /// Why the achieved rate is below the asked one, in a few words each; empty when it is not
    /// (within 5%).
    pub fn shortfall(&self) -> Vec<String> {
        if self.asked_rate <= 0.0 || self.achieved_rate >= self.asked_rate * 0.95 {
            return Vec::new();
        }
        let mut why = Vec::new();
        if self.in_flight_full >= 0.01 {
            why.push(format!(
                "in-flight cap ({}) full {:.0}% of the time",
                self.max_in_flight,
                self.in_flight_full * 100.0
            ));
        }
        let throttled = self.sdk.counters.throttles + self.records_refused;
        if throttled > 0 {
            why.push(format!("{throttled} writes throttled by the shards"));
        }
        if self.cpu >= 0.8 * self.cores as f64 {
            why.push(format!(
                "CPU: latlab used {:.0}% of {} cores",
                self.cpu * 100.0 / self.cores as f64,
                self.cores
            ));
        }
        if why.is_empty() {
            why.push("none of the measured causes (in-flight cap, throttles, CPU)".into());
        }
        why
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KinesisSnapshot {
    pub stream: String,
    pub shards: usize,
    pub retry: String,
    pub producer: ProducerSnapshot,
    pub send_to_arrival: Summary,
    pub consumers: Vec<ConsumerSnapshot>,
    /// GetRecords calls (every attempt) per second per shard in the last whole second.
    pub get_records_calls_per_sec: f64,
    /// The shard's limit those calls count against.
    pub get_records_limit_per_sec: u32,
}

impl KinesisSnapshot {
    /// GetRecords calls, attempts and throttled attempts of every shared-throughput reader.
    pub fn get_records_totals(&self) -> crate::metrics::sdk::OpCounts {
        let mut t = crate::metrics::sdk::OpCounts::default();
        for c in self.consumers.iter().filter(|c| !c.kind.is_fan_out()) {
            if let Some(o) = c.sdk.counters.operations.get("GetRecords") {
                t.calls += o.calls;
                t.attempts += o.attempts;
                t.throttles += o.throttles;
            }
        }
        t
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub scenario: String,
    pub backend: Backend,
    pub elapsed_secs: f64,
    /// How long the producer ran: the measured period.
    pub producing_secs: f64,
    /// Taken after the run ended and the consumers drained: lost counts are final.
    pub complete: bool,
    pub kinesis: Option<KinesisSnapshot>,
    pub s3: Option<S3Snapshot>,
    pub redis: Option<RedisSnapshot>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RedisSnapshot {
    /// The endpoints, passwords hidden.
    pub primary: String,
    pub replica: String,
    /// latlab's own redis-server pair (else a user's Redis).
    pub local: bool,
    /// The link shaper between latlab's servers.
    pub link: Option<crate::redis_local::ShaperStats>,
    pub value_bytes: u64,
    pub cpu_load: bool,
    pub memory_full: bool,
    pub status: String,
    /// The live figures, one per method.
    pub methods: Vec<crate::lab::redis::MethodSnapshot>,
    /// A headless run's figures per condition.
    pub conditions: Vec<crate::lab::redis::ConditionResult>,
    /// Why the lab is not running, and how to fix it.
    pub unavailable: Option<String>,
}

impl RedisSnapshot {
    pub fn unavailable(why: &str) -> RedisSnapshot {
        RedisSnapshot {
            primary: String::new(),
            replica: String::new(),
            local: false,
            link: None,
            value_bytes: 0,
            cpu_load: false,
            memory_full: false,
            status: "unavailable".into(),
            methods: Vec::new(),
            conditions: Vec::new(),
            unavailable: Some(why.to_string()),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct S3Snapshot {
    /// The class the live loop writes to now.
    pub class: crate::emulator::s3::Class,
    pub payload_bytes: u64,
    pub concurrency: usize,
    pub standard_bucket: String,
    pub express_bucket: String,
    /// Per class and operation (PUT, GET).
    pub ops: Vec<crate::lab::s3::OpSnapshot>,
    /// CreateSession calls (S3 Express sessions), counted by the embedded emulator. The SDK makes
    /// them from an inner client no interceptor sees, so on other endpoints this is None.
    pub create_sessions: Option<u64>,
    pub sdk: SdkSnapshot,
    /// The seed's matrix, when the run made it.
    pub matrix: Option<Vec<crate::lab::s3::MatrixRow>>,
}

pub fn consumer(shared: &Shared, c: &ConsumerState) -> ConsumerSnapshot {
    let now_sec = shared.second();
    // Each lock alone, in its own statement.
    let counts = shared.ledger.lock().counts(c.id);
    let millis_behind = c.behind_ms.lock().iter().flatten().copied().max();
    let status = c.status.lock().clone();
    let stopped_at_secs = c.stopped_at.lock().map(|d| d.as_secs_f64());
    let sdk = c.sdk.snapshot();
    let (
        arrival_to_receive,
        send_to_receive,
        recent,
        batches,
        batch_sizes,
        events,
        foreign_records,
    ) = {
        let m = c.metrics.lock();
        (
            m.arrival_to_receive.summary(),
            m.send_to_receive.summary(),
            m.arrival_to_receive.recent(now_sec, 10),
            m.batches,
            m.batch_records
                .iter()
                .map(|(s, r)| BatchSize {
                    size: *s,
                    records: *r,
                })
                .collect(),
            m.events.clone(),
            m.foreign,
        )
    };
    ConsumerSnapshot {
        name: c.name.clone(),
        kind: c.kind,
        detail: c.detail.clone(),
        status,
        stopped_at_secs,
        retry_quota_partition: c.quota.name().to_string(),
        arrival_to_receive,
        send_to_receive,
        recent,
        counts,
        millis_behind,
        sdk,
        batches,
        batch_sizes,
        events,
        foreign_records,
    }
}

pub fn producer(shared: &Shared, spec: &ProducerSpec, complete: bool) -> ProducerSnapshot {
    let p = &shared.producer;
    let settings = shared.settings.lock().clone();
    let put_latency = p.put_latency.lock().summary();
    let sdk = shared.producer_sdk.snapshot();
    let producing = shared.producing_for().as_secs_f64();
    let acked = p.acked.load(Ordering::Relaxed);
    let achieved_rate = if complete {
        if producing > 0.0 {
            acked as f64 / producing
        } else {
            0.0
        }
    } else {
        // The last whole seconds, at most ten.
        let secs = (producing.floor() as u64).clamp(1, 10);
        let now = shared.second();
        let series = p.put_latency.lock();
        let points = series.points(now.saturating_sub(1), secs as usize);
        points.iter().map(|pt| u64::from(pt.count)).sum::<u64>() as f64 / secs as f64
    };
    let in_flight_full = if producing > 0.0 {
        (p.cap_wait_us.load(Ordering::Relaxed) as f64 / 1e6 / producing).min(1.0)
    } else {
        0.0
    };
    ProducerSnapshot {
        asked_rate: settings.rate,
        achieved_rate,
        mode: spec.mode.describe(),
        max_in_flight: spec.max_in_flight,
        payload_bytes: settings.payload,
        sent: p.sent.load(Ordering::Relaxed),
        acked,
        resent: p.resent.load(Ordering::Relaxed),
        failed: p.failed.load(Ordering::Relaxed),
        records_refused: p.records_refused.load(Ordering::Relaxed),
        in_flight_full,
        behind: p.behind.load(Ordering::Relaxed),
        cpu: shared.producing_cpu(),
        cores: crate::metrics::cpu::cores(),
        put_latency,
        sdk,
    }
}

/// GetRecords attempts in the last whole second by every shared-throughput reader, per shard.
pub fn get_records_rate(shared: &Shared, shards: usize) -> f64 {
    let sec = shared.second();
    if sec == 0 {
        return 0.0;
    }
    let consumers = shared.consumers.read().clone();
    let calls: u32 = consumers
        .iter()
        .filter(|c| !c.kind.is_fan_out())
        .map(|c| c.sdk.attempts_of("GetRecords", sec - 1, 1)[0])
        .sum();
    calls as f64 / shards.max(1) as f64
}
