//! Frozen views of the Kinesis lab: its producer, consumers and the shard's read rate, built from
//! the shared state in one pass; nothing here is measured, only read.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use super::config::{ConsumerKind, ProducerSpec};
use super::ledger::SeqCounts;
use super::state::{ConsumerState, ShardRead, Shared};
use crate::metrics::Summary;
use crate::metrics::sdk::SdkSnapshot;

#[derive(Clone, Debug, PartialEq)]
pub struct BatchSize {
    pub size: u32,
    pub records: u64,
}

#[derive(Clone, Debug, PartialEq)]
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
    /// Records that arrived after a record of their partition key the stream stored later
    /// (0 expected: a consumer reads each shard in order and a parent before its children).
    pub out_of_order: u64,
    /// How it read each shard, in the order the lab came to know them.
    pub shards: Vec<ShardRead>,
    /// The largest MillisBehindLatest among its shards' last answers (the service's own measure
    /// of how far behind the consumer reads); None before the first answer.
    pub millis_behind: Option<i64>,
    pub sdk: SdkSnapshot,
    pub batches: u64,
    pub batch_sizes: Vec<BatchSize>,
    pub events: BTreeMap<String, u64>,
    pub foreign_records: u64,
    /// Of those, another latlab run's, by run: what a reading host's accounting rests on.
    pub foreign_runs: Vec<super::foreign::ForeignCount>,
    /// The last call that failed after the SDK's retries, as one line.
    pub last_error: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProducerSnapshot {
    /// Records per second asked for.
    pub asked_rate: f64,
    /// Records per second acknowledged: over the producing time (since the first put or the last
    /// reset) once the run is complete; while it runs, over the last whole seconds (at most 10)
    /// since the producer's first put, the last reset or the asked rate's last change.
    pub achieved_rate: f64,
    /// The seconds `achieved_rate` was measured over (0: not a whole second yet).
    pub achieved_over_secs: f64,
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
    /// The last put that failed after the SDK's retries, as one line.
    pub last_error: Option<String>,
    /// The endpoint lacks the put operation (the producer stopped): why.
    pub unsupported: Option<String>,
    /// This host does not run the producer (`--no-producer`): what its consumers read instead.
    pub elsewhere: Option<String>,
}

/// The achieved rate below the asked one by more than the measurement can tell: how much, and
/// the measured causes (none: the cause was not measured).
#[derive(Clone, Debug, PartialEq)]
pub struct Shortfall {
    /// Records per second short of the asked rate.
    pub by: f64,
    pub causes: Vec<String>,
}

impl Shortfall {
    /// `0.8/s short: CAUSE; CAUSE` or `0.8/s short, cause not measured`.
    pub fn describe(&self, causes: usize) -> String {
        let by = format!("{}/s short", latlab_core::units::fmt_rate(self.by));
        if self.causes.is_empty() {
            format!("{by}, cause not measured")
        } else {
            let shown: Vec<&str> = self
                .causes
                .iter()
                .take(causes)
                .map(String::as_str)
                .collect();
            format!("{by}: {}", shown.join("; "))
        }
    }
}

/// The tolerance under which the achieved rate is taken as the asked one whatever the
/// measurement's resolution: 5% of the asked rate.
const RATE_TOLERANCE: f64 = 0.05;

impl ProducerSnapshot {
    /// `achieved 4.9/s`, or what stands in its place before a whole second was measured: a
    /// report taken that early has no rate to give, and 0.0/s would read as a producer that
    /// stored nothing.
    pub fn achieved_text(&self) -> String {
        if self.rate_resolution().is_none() && self.unsupported.is_none() {
            return "achieved: not a whole second measured yet".into();
        }
        format!("achieved {:.1}/s", self.achieved_rate)
    }

    /// The finest difference the achieved rate can show: one record over the time it was
    /// measured over (a paced producer's record can fall either side of a second's edge).
    /// None before a whole second was measured.
    pub fn rate_resolution(&self) -> Option<f64> {
        (self.achieved_over_secs >= 1.0).then(|| 1.0 / self.achieved_over_secs)
    }

    /// The achieved rate short of the asked one, when it is short by more than both the
    /// measurement's resolution and 5%; with the measured causes.
    /// A producer stopped because the endpoint lacks the put operation is short whatever was
    /// measured.
    pub fn shortfall(&self) -> Option<Shortfall> {
        let by = self.asked_rate - self.achieved_rate;
        // Another host produces: this one asks for no rate of its own.
        if self.asked_rate <= 0.0 || by <= 0.0 || self.elsewhere.is_some() {
            return None;
        }
        if self.unsupported.is_none() {
            let resolution = self.rate_resolution()?;
            if by <= resolution.max(self.asked_rate * RATE_TOLERANCE) {
                return None;
            }
        }
        let mut causes = Vec::new();
        if self.unsupported.is_some() {
            causes.push("the endpoint lacks the put operation".into());
        } else if self.failed > 0 {
            causes.push(format!(
                "{} records failed twice and were never stored",
                self.failed
            ));
        }
        if self.in_flight_full >= 0.01 {
            causes.push(format!(
                "in-flight cap ({}) full {:.0}% of the time",
                self.max_in_flight,
                self.in_flight_full * 100.0
            ));
        }
        let throttled = self.sdk.counters.throttles + self.records_refused;
        if throttled > 0 {
            causes.push(format!("{throttled} writes throttled by the shards"));
        }
        if self.cpu >= 0.8 * self.cores as f64 {
            causes.push(format!(
                "CPU: latlab used {:.0}% of {} cores",
                self.cpu * 100.0 / self.cores as f64,
                self.cores
            ));
        }
        Some(Shortfall { by, causes })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct KinesisSnapshot {
    pub stream: String,
    /// Open shards.
    pub shards: usize,
    /// A reshard is under way (the stream is UPDATING).
    pub updating: bool,
    /// The open shards when the lab started and after each reshard took effect.
    pub shard_counts: Vec<ShardCount>,
    pub retry: String,
    pub producer: ProducerSnapshot,
    pub send_to_arrival: Summary,
    pub consumers: Vec<ConsumerSnapshot>,
    /// GetRecords calls (every attempt) per second per shard in the last whole second.
    pub get_records_calls_per_sec: f64,
    /// The shard's limit those calls count against.
    pub get_records_limit_per_sec: u32,
}

/// The stream's open shards from a point of the run on.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardCount {
    /// Since the lab started.
    pub at_secs: f64,
    pub shards: usize,
}

impl KinesisSnapshot {
    /// Whether the stream was resharded during the run (or is being).
    pub fn resharded(&self) -> bool {
        self.updating || self.shard_counts.len() > 1
    }

    /// "1 shard", "4 shards", or across reshards "1 -> 2 -> 1 shards".
    pub fn shards_text(&self) -> String {
        if self.resharded() {
            format!("{} shards", self.shard_story())
        } else {
            format!(
                "{} shard{}",
                self.shards,
                if self.shards == 1 { "" } else { "s" }
            )
        }
    }

    /// The open shard counts in turn, "1 -> 2 -> 1" (the count now when there is no history).
    pub fn shard_story(&self) -> String {
        if self.shard_counts.is_empty() {
            return self.shards.to_string();
        }
        self.shard_counts
            .iter()
            .map(|c| c.shards.to_string())
            .collect::<Vec<_>>()
            .join(" -> ")
    }

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

pub fn consumer(shared: &Shared, c: &ConsumerState) -> ConsumerSnapshot {
    let now_sec = shared.second();
    // Each lock alone, in its own statement.
    let counts = shared.ledger.lock().counts(c.id);
    let millis_behind = c.behind_ms.lock().iter().flatten().copied().max();
    let mut shards = c.reads.lock().clone();
    for (i, r) in shards.iter_mut().enumerate() {
        r.shard = shared.shards.id(i).unwrap_or_default();
    }
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
        foreign_runs,
        out_of_order,
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
            m.foreign_runs.counts(),
            m.order.out_of_order(),
        )
    };
    ConsumerSnapshot {
        name: c.name.clone(),
        kind: c.kind,
        detail: c.detail.lock().clone(),
        status,
        stopped_at_secs,
        retry_quota_partition: c.quota.lock().name().to_string(),
        arrival_to_receive,
        send_to_receive,
        recent,
        counts,
        out_of_order,
        shards,
        millis_behind,
        sdk,
        batches,
        batch_sizes,
        events,
        foreign_records,
        foreign_runs,
        last_error: c.last_error.lock().clone(),
    }
}

/// The most whole seconds the live achieved rate is measured over.
const ACHIEVED_WINDOW_SECS: u64 = 10;

pub fn producer(shared: &Shared, spec: &ProducerSpec, complete: bool) -> ProducerSnapshot {
    let p = &shared.producer;
    let settings = shared.settings.lock().clone();
    let put_latency = p.put_latency.lock().summary();
    let sdk = shared.producer_sdk.snapshot();
    let producing = shared.producing_for().as_secs_f64();
    let acked = p.acked.load(Ordering::Relaxed);
    let (achieved_rate, achieved_over_secs) = if complete {
        if producing > 0.0 {
            (acked as f64 / producing, producing)
        } else {
            (0.0, 0.0)
        }
    } else {
        // Whole seconds only, from the first that began after the producer's first put (or
        // the last reset, or the asked rate's last change) to the last one that ended, at most
        // ten: a partial first second would make every start look short.
        let from = shared
            .producing_since()
            .map(|since| since.max(*shared.rate_set_at.lock()));
        let now = shared.second();
        match from.map(|d| d.as_secs_f64().ceil() as u64) {
            Some(first) if now > first => {
                let secs = (now - first).min(ACHIEVED_WINDOW_SECS);
                let series = p.put_latency.lock();
                let points = series.points(now - 1, secs as usize);
                let acked: u64 = points.iter().map(|pt| u64::from(pt.count)).sum();
                (acked as f64 / secs as f64, secs as f64)
            }
            _ => (0.0, 0.0),
        }
    };
    let in_flight_full = if producing > 0.0 {
        (p.cap_wait_us.load(Ordering::Relaxed) as f64 / 1e6 / producing).min(1.0)
    } else {
        0.0
    };
    ProducerSnapshot {
        asked_rate: settings.rate,
        achieved_rate,
        achieved_over_secs,
        mode: settings.mode.describe(),
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
        last_error: p.last_error.lock().clone(),
        unsupported: p.unsupported.lock().clone(),
        elsewhere: (!shared.run.role().runs_producer()).then(|| {
            "on another host (--no-producer): the consumers read what it produces, its records counted as foreign".to_string()
        }),
    }
}

/// GetRecords attempts in the last whole second by every shared-throughput reader, per shard.
pub fn get_records_rate(shared: &Shared, shards: usize) -> f64 {
    let sec = shared.second();
    if sec == 0 {
        return 0.0;
    }
    read_rate(shared, shards, sec - 1, 1)[0]
}

/// GetRecords attempts per second per shard, every shared-throughput reader together: `n`
/// seconds ending with `second`, oldest first.
pub fn read_rate(shared: &Shared, shards: usize, second: u64, n: usize) -> Vec<f64> {
    let consumers = shared.consumers.read().clone();
    let mut calls = vec![0u32; n];
    for c in consumers.iter().filter(|c| !c.kind.is_fan_out()) {
        for (slot, k) in calls
            .iter_mut()
            .zip(c.sdk.attempts_of("GetRecords", second, n))
        {
            *slot += k;
        }
    }
    calls
        .into_iter()
        .map(|k| f64::from(k) / shards.max(1) as f64)
        .collect()
}

/// `5: 2,050 (68.3%), 6: 402 (13.4%), ...; largest 17`, most records first.
pub fn batch_line(c: &ConsumerSnapshot) -> String {
    let total: u64 = c.batch_sizes.iter().map(|b| b.records).sum();
    if total == 0 {
        return "no batches".into();
    }
    let mut sizes = c.batch_sizes.clone();
    sizes.sort_by(|a, b| b.records.cmp(&a.records).then(a.size.cmp(&b.size)));
    let parts: Vec<String> = sizes
        .iter()
        .take(6)
        .map(|b| {
            format!(
                "{}: {} ({:.1}%)",
                b.size,
                latlab_core::units::thousands(b.records),
                100.0 * b.records as f64 / total as f64
            )
        })
        .collect();
    let largest = c.batch_sizes.iter().map(|b| b.size).max().unwrap_or(0);
    format!(
        "{}; largest {largest}; {} batches",
        parts.join(", "),
        latlab_core::units::thousands(c.batches)
    )
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
