//! The lab's shared state: what probes write as they measure and what snapshots read.
//! Probes record straight into these (short mutexes, no channel to overflow), so no measured
//! record is ever dropped between a probe and a report.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use tokio_util::sync::CancellationToken;

use super::ledger::{ConsumerId, Ledger, SeqNo};
use super::order::KeyOrder;
use crate::aws::QuotaPartition;
use crate::labs::kinesis::config::ConsumerKind;
use crate::metrics::{SdkStats, Series};

/// How a consumer's status begins when the endpoint lacks an operation it needs.
pub use crate::labs::context::UNSUPPORTED;

/// One record as a consumer received it.
#[derive(Clone, Copy, Debug)]
pub struct Received {
    /// From our payload; None for a record another producer wrote.
    pub seq: Option<u64>,
    pub sent_us: Option<i64>,
    /// Another latlab run's record: that run (its id as a number), the record's seq there and
    /// its send stamp.
    pub foreign: Option<(u32, u64, i64)>,
    /// ApproximateArrivalTimestamp in microseconds since the epoch.
    pub arrival_us: i64,
    /// The shard it came from (an index into the stream's shards) and its sequence number there:
    /// where the consumer is in the shard once it has this record.
    pub shard: usize,
    pub kseq: Option<SeqNo>,
}

pub struct ConsumerMetrics {
    pub arrival_to_receive: Series,
    pub send_to_receive: Series,
    /// Records by the size of the batch they came in.
    pub batch_records: BTreeMap<u32, u64>,
    pub batches: u64,
    /// Records on the stream that were not this run's.
    pub foreign: u64,
    /// Those another latlab run produced, by run (hosts splitting the lab).
    pub foreign_runs: super::foreign::ForeignRuns,
    /// Notable events by name (subscription ended, iterator expired, ...).
    pub events: BTreeMap<String, u64>,
    /// Each partition key's order as the consumer received its records.
    pub order: KeyOrder,
}

impl Default for ConsumerMetrics {
    fn default() -> Self {
        ConsumerMetrics {
            arrival_to_receive: Series::default(),
            send_to_receive: Series::default(),
            batch_records: BTreeMap::new(),
            batches: 0,
            foreign: 0,
            foreign_runs: Default::default(),
            events: BTreeMap::new(),
            order: KeyOrder::new(super::payload::KEYS as usize),
        }
    }
}

/// How a consumer read one shard: when it started and finished it, and the records it was handed
/// there (times in seconds since the lab started).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShardRead {
    pub shard: String,
    pub started_secs: Option<f64>,
    /// When it read the shard to its end (a closed shard).
    pub finished_secs: Option<f64>,
    pub records: u64,
    pub first_record_secs: Option<f64>,
    pub last_record_secs: Option<f64>,
}

impl ConsumerMetrics {
    fn reset(&mut self) {
        *self = ConsumerMetrics::default();
    }
}

/// A running (or stopped) consumer.
pub struct ConsumerState {
    pub name: String,
    pub kind: ConsumerKind,
    /// Its settings in a few words, for screens and reports (a live change rewrites it).
    pub detail: Mutex<String>,
    pub id: ConsumerId,
    pub metrics: Mutex<ConsumerMetrics>,
    pub sdk: Arc<SdkStats>,
    pub quota: Mutex<QuotaPartition>,
    /// A client that replaces the one its tasks started with (a live change of retry mode or
    /// quota), with its generation: each task takes it when the generation moves on.
    pub client: Mutex<(u64, Option<aws_sdk_kinesis::Client>)>,
    pub status: Mutex<String>,
    /// The last call that failed after the SDK's retries, as one line.
    pub last_error: Mutex<Option<String>>,
    pub stopped_at: Mutex<Option<Duration>>,
    pub cancel: CancellationToken,
    pub ready: AtomicBool,
    /// Per shard: the service's MillisBehindLatest in the consumer's last answer there.
    pub behind_ms: Mutex<Vec<Option<i64>>>,
    /// Per shard (by index): how the consumer read it.
    pub reads: Mutex<Vec<ShardRead>>,
}

impl ConsumerState {
    /// Keeps the MillisBehindLatest of the last answer on `shard`.
    pub fn set_behind(&self, shard: usize, ms: Option<i64>) {
        let mut b = self.behind_ms.lock();
        if b.len() <= shard {
            b.resize(shard + 1, None);
        }
        if ms.is_some() {
            b[shard] = ms;
        }
    }

    /// The consumer started reading `shard` (`at`: since the lab started).
    pub fn shard_started(&self, shard: usize, at: Duration) {
        let mut r = self.reads.lock();
        if r.len() <= shard {
            r.resize(shard + 1, ShardRead::default());
        }
        r[shard].started_secs.get_or_insert(at.as_secs_f64());
    }

    /// The consumer read `shard` to its end: it no longer counts in how far behind it is.
    pub fn shard_finished(&self, shard: usize, at: Duration) {
        {
            let mut r = self.reads.lock();
            if r.len() <= shard {
                r.resize(shard + 1, ShardRead::default());
            }
            r[shard].finished_secs = Some(at.as_secs_f64());
        }
        if let Some(b) = self.behind_ms.lock().get_mut(shard) {
            *b = None;
        }
    }

    pub fn set_status(&self, s: impl Into<String>) {
        *self.status.lock() = s.into();
    }

    /// A call failed after the SDK's retries: counted by its code, and its line kept (the last
    /// one) and shown as the consumer's status.
    pub fn escaped(&self, code: &str, line: String) {
        self.sdk.escaped(code);
        *self.last_error.lock() = Some(line.clone());
        self.set_status(line);
    }

    pub fn event(&self, name: &str) {
        *self
            .metrics
            .lock()
            .events
            .entry(name.to_string())
            .or_default() += 1;
    }

    pub fn is_stopped(&self) -> bool {
        self.stopped_at.lock().is_some()
    }

    /// Its tasks use `client` from their next call on.
    pub fn replace_client(&self, client: aws_sdk_kinesis::Client, quota: QuotaPartition) {
        *self.quota.lock() = quota;
        let mut slot = self.client.lock();
        slot.0 += 1;
        slot.1 = Some(client);
    }

    /// The replacing client, when its generation is newer than `seen` (which it moves on).
    pub fn newer_client(&self, seen: &mut u64) -> Option<aws_sdk_kinesis::Client> {
        let slot = self.client.lock();
        if slot.0 > *seen {
            *seen = slot.0;
            slot.1.clone()
        } else {
            None
        }
    }
}

/// The producer's figures.
#[derive(Default)]
pub struct ProducerMetrics {
    /// send -> acknowledged (the put call's whole time, the SDK's retries included).
    pub put_latency: Mutex<Series>,
    pub sent: AtomicU64,
    pub acked: AtomicU64,
    /// Puts that failed after the SDK's retries and were sent once more with the same seq.
    pub resent: AtomicU64,
    /// Seqs whose put failed twice: never stored.
    pub failed: AtomicU64,
    /// Records a PutRecords answer refused one by one (its `ErrorCode`, usually the shard's
    /// write limit).
    pub records_refused: AtomicU64,
    /// Time the producer waited for a free in-flight slot, in microseconds.
    pub cap_wait_us: AtomicU64,
    /// Records due by the asked rate and not yet handed over (now).
    pub behind: AtomicU64,
    /// The last put that failed after the SDK's retries, as one line.
    pub last_error: Mutex<Option<String>>,
    /// Answers in a row saying the endpoint lacks the put operation.
    pub lacking: std::sync::atomic::AtomicU32,
    /// The endpoint lacks the put operation: why (the producer stopped).
    pub unsupported: Mutex<Option<String>>,
}

/// Settings a user changes while the lab runs.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveSettings {
    pub payload: u64,
    pub rate: f64,
    pub mode: super::config::ProducerMode,
    /// The GetRecords pollers' settings (every poller, and those added later).
    pub pollers: PollerSettings,
}

impl LiveSettings {
    /// The settings a scenario starts with (None: a run without the Kinesis lab).
    pub fn of(k: Option<&super::config::KinesisScenario>) -> LiveSettings {
        match k {
            Some(k) => {
                let poller = k.poller_template();
                LiveSettings {
                    payload: k.producer.payload,
                    rate: k.producer.rate,
                    mode: k.producer.mode,
                    pollers: PollerSettings {
                        interval: None,
                        retry: poller.retry.clone().unwrap_or_else(|| k.retry.clone()),
                        quota: poller.retry_quota,
                    },
                }
            }
            None => LiveSettings {
                payload: 0,
                rate: 0.0,
                mode: super::config::ProducerMode::PutRecord,
                pollers: PollerSettings {
                    interval: None,
                    retry: crate::aws::RetrySettings::default(),
                    quota: super::config::RetryQuota::PerPoller,
                },
            },
        }
    }
}

/// What the poller keys change: the interval, the SDK's retry mode, and whether the pollers
/// share one retry quota (one process) or have one each (separate processes).
#[derive(Clone, Debug, PartialEq)]
pub struct PollerSettings {
    /// Every poller's interval, once the `i` key set it (None: each poller's own).
    pub interval: Option<Duration>,
    pub retry: crate::aws::RetrySettings,
    pub quota: super::config::RetryQuota,
}

pub struct Shared {
    /// The run's clock, id and log.
    pub run: Arc<crate::labs::RunContext>,
    pub ledger: Mutex<Ledger>,
    /// send -> arrival, once per record.
    pub send_to_arrival: Mutex<Series>,
    pub producer: ProducerMetrics,
    pub producer_sdk: Arc<SdkStats>,
    pub consumers: RwLock<Vec<Arc<ConsumerState>>>,
    /// The stream's shards, as far as the lab knows them, and what the stream is doing.
    pub shards: super::shards::ShardMap,
    pub settings: Mutex<LiveSettings>,
    pub reset_count: AtomicU64,
    /// When the producer started and stopped, since `start`.
    pub producing: Mutex<(Option<Duration>, Option<Duration>)>,
    /// When the asked rate last changed live, since `start` (zero: never).
    pub rate_set_at: Mutex<Duration>,
    /// When the figures were last reset (`r`), since `start` (zero: never): the producing
    /// period the achieved rate is measured over starts again there.
    pub reset_at: Mutex<Duration>,
    /// The process's CPU seconds when the producer started and stopped.
    pub producing_cpu: Mutex<(Option<f64>, Option<f64>)>,
}

impl Shared {
    pub fn new(run: Arc<crate::labs::RunContext>, settings: LiveSettings) -> Arc<Shared> {
        Arc::new(Shared {
            run,
            ledger: Mutex::new(Ledger::default()),
            send_to_arrival: Mutex::new(Series::new()),
            producer: ProducerMetrics::default(),
            producer_sdk: Arc::new(SdkStats::default()),
            consumers: RwLock::new(Vec::new()),
            shards: super::shards::ShardMap::default(),
            settings: Mutex::new(settings),
            reset_count: AtomicU64::new(0),
            producing: Mutex::new((None, None)),
            rate_set_at: Mutex::new(Duration::ZERO),
            reset_at: Mutex::new(Duration::ZERO),
            producing_cpu: Mutex::new((None, None)),
        })
    }

    pub fn elapsed(&self) -> Duration {
        self.run.elapsed()
    }

    /// The share of one core the process used while the producer ran (1.0 = a whole core).
    pub fn producing_cpu(&self) -> f64 {
        let (start, end) = *self.producing_cpu.lock();
        let secs = self.producing_for().as_secs_f64();
        match start {
            Some(s) if secs > 0.0 => {
                (end.unwrap_or_else(crate::metrics::cpu::process_seconds) - s) / secs
            }
            _ => 0.0,
        }
    }

    /// When the producing period the figures cover began: the producer's first put, or the
    /// last reset after it. None before the first put.
    pub fn producing_since(&self) -> Option<Duration> {
        let first_put = self.producing.lock().0?;
        Some(first_put.max(*self.reset_at.lock()))
    }

    /// How long the producer has run (or ran) since the figures began (`producing_since`).
    pub fn producing_for(&self) -> Duration {
        let Some(since) = self.producing_since() else {
            return Duration::ZERO;
        };
        let end = self.producing.lock().1.unwrap_or_else(|| self.elapsed());
        end.saturating_sub(since)
    }

    pub fn second(&self) -> u64 {
        self.run.second()
    }

    pub fn log(&self, line: impl Into<String>) {
        self.run.log(line);
    }

    /// Registers a consumer (it counts records from the moment it calls `ready`).
    pub fn add_consumer(
        &self,
        name: String,
        kind: ConsumerKind,
        detail: String,
        quota: QuotaPartition,
    ) -> Arc<ConsumerState> {
        let id = self.ledger.lock().add_consumer();
        let c = Arc::new(ConsumerState {
            name,
            kind,
            detail: Mutex::new(detail),
            id,
            metrics: Mutex::new(ConsumerMetrics::default()),
            sdk: Arc::new(SdkStats::default()),
            quota: Mutex::new(quota),
            client: Mutex::new((0, None)),
            status: Mutex::new("starting".into()),
            last_error: Mutex::new(None),
            stopped_at: Mutex::new(None),
            cancel: CancellationToken::new(),
            ready: AtomicBool::new(false),
            behind_ms: Mutex::new(Vec::new()),
            reads: Mutex::new(Vec::new()),
        });
        self.consumers.write().push(c.clone());
        c
    }

    /// The consumer holds its starting position: records sent from now on are expected of it.
    pub fn ready(&self, c: &ConsumerState) {
        if !c.ready.swap(true, Ordering::SeqCst) {
            self.ledger.lock().start_consumer(c.id);
        }
    }

    /// The endpoint lacks an operation the consumer needs: the consumer stops, saying so in one
    /// line (its figures stay in the report).
    pub fn unsupported(&self, c: &ConsumerState, op: &str, answered: &str) {
        self.stop_consumer(c);
        let line = format!("{UNSUPPORTED}: {op} answered {answered}");
        self.log(format!("{}: {line}", c.name));
        c.set_status(line);
    }

    pub fn stop_consumer(&self, c: &ConsumerState) {
        c.cancel.cancel();
        let first = {
            let mut stopped = c.stopped_at.lock();
            let first = stopped.is_none();
            if first {
                *stopped = Some(self.elapsed());
            }
            first
        };
        // One lock at a time: readers take the ledger, then a consumer's flags.
        if first {
            self.ledger.lock().stop_consumer(c.id);
            c.set_status("stopped");
        }
    }

    /// A batch of records handed to a consumer at once (a GetRecords answer, a pushed event, a
    /// Lambda invocation). Receive time is taken here, once for the batch.
    pub fn deliver(&self, c: &ConsumerState, batch: &[Received]) {
        if batch.is_empty() {
            return;
        }
        let now_us = latlab_core::clock::now_micros();
        let sec = self.second();
        // One lock at a time, never two: readers take them in other orders.
        let mut first_copies = Vec::new();
        // This run's records the consumer had not had before: (key, where stored).
        let mut firsts: Vec<(usize, usize, SeqNo)> = Vec::new();
        {
            let mut ledger = self.ledger.lock();
            for r in batch {
                if let (Some(seq), Some(sent)) = (r.seq, r.sent_us) {
                    let receipt = ledger.receive(c.id, seq);
                    if receipt.first_anywhere {
                        first_copies.push((r.arrival_us - sent).max(0) as u64);
                    }
                    if let (false, Some(k)) = (receipt.duplicate, r.kseq) {
                        firsts.push((super::payload::key_of(seq) as usize, r.shard, k));
                    }
                }
            }
            // The consumer's position in each shard: records of a shard come in order, so the
            // batch's last of each shard is where it now is.
            let mut last: Vec<(usize, SeqNo)> = Vec::new();
            for r in batch {
                if let Some(k) = r.kseq {
                    match last.iter_mut().find(|(s, _)| *s == r.shard) {
                        Some((_, high)) => *high = (*high).max(k),
                        None => last.push((r.shard, k)),
                    }
                }
            }
            for (shard, k) in last {
                ledger.advance(c.id, shard, k);
            }
        }
        let ranked: Vec<(usize, (u64, SeqNo))> = firsts
            .into_iter()
            .map(|(key, shard, k)| (key, (self.shards.rank(shard), k)))
            .collect();
        {
            let elapsed = self.elapsed().as_secs_f64();
            let mut reads = c.reads.lock();
            for r in batch {
                if reads.len() <= r.shard {
                    reads.resize(r.shard + 1, ShardRead::default());
                }
                let read = &mut reads[r.shard];
                read.records += 1;
                read.first_record_secs.get_or_insert(elapsed);
                read.last_record_secs = Some(elapsed);
            }
        }
        {
            let mut m = c.metrics.lock();
            for (key, at) in ranked {
                m.order.receive(key, at);
            }
            m.batches += 1;
            *m.batch_records.entry(batch.len() as u32).or_default() += batch.len() as u64;
            for r in batch {
                m.arrival_to_receive
                    .record((now_us - r.arrival_us).max(0) as u64, sec);
                match r.sent_us {
                    Some(sent) if r.seq.is_some() => {
                        m.send_to_receive.record((now_us - sent).max(0) as u64, sec)
                    }
                    _ => m.foreign += 1,
                }
                if let Some((run, seq, sent)) = r.foreign {
                    m.foreign_runs.receive(run, seq, r.arrival_us - sent);
                }
            }
        }
        if !first_copies.is_empty() {
            let mut s = self.send_to_arrival.lock();
            for v in first_copies {
                s.record(v, sec);
            }
        }
    }

    /// Forgets every figure; measuring starts again from the next record.
    pub fn reset(&self) {
        self.ledger.lock().reset();
        self.send_to_arrival.lock().reset();
        self.producer.put_latency.lock().reset();
        for a in [
            &self.producer.sent,
            &self.producer.acked,
            &self.producer.resent,
            &self.producer.failed,
            &self.producer.records_refused,
            &self.producer.cap_wait_us,
        ] {
            a.store(0, Ordering::Relaxed);
        }
        self.producer_sdk.reset();
        // The producing period starts again here: the acknowledgements counted from now on are
        // measured over the time from now on, never over the time before the reset.
        *self.reset_at.lock() = self.elapsed();
        if let (Some(_), None) = *self.producing.lock() {
            self.producing_cpu.lock().0 = Some(crate::metrics::cpu::process_seconds());
        }
        let consumers = self.consumers.read().clone();
        for c in &consumers {
            c.metrics.lock().reset();
            c.sdk.reset();
        }
        self.reset_count.fetch_add(1, Ordering::Relaxed);
        self.log("histograms and counts reset");
    }
}
