//! What the SQS lab's probes write as they measure, and what its snapshots read: each consumer's
//! ledger, latency and counts, the producer's counts, and the knobs the keys turn while it runs.
//! Probes record straight into these under short locks, so no measured message is dropped
//! between a probe and a report.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::config::{ConsumerKind, SqsScenario};
use super::ledger::Ledger;
use crate::metrics::{SdkStats, Series};

/// The settings the keys change while the lab runs; every probe reads them at each step.
pub struct Knobs {
    pub rate: AtomicU32,
    pub batching: AtomicBool,
    pub groups: AtomicU32,
    /// The long pollers' wait, seconds (0: they short-poll back to back).
    pub wait_secs: AtomicU32,
    /// The visibility timeout each receive asks for, seconds.
    pub visibility_secs: AtomicU32,
    /// Simulated work per message, milliseconds.
    pub processing_ms: AtomicU64,
}

impl Knobs {
    pub fn new(s: &SqsScenario) -> Knobs {
        let wait = s
            .consumers
            .iter()
            .find_map(|c| match c.kind {
                ConsumerKind::LongPoll { wait_secs } => Some(wait_secs),
                _ => None,
            })
            .unwrap_or(20);
        Knobs {
            rate: AtomicU32::new(s.rate),
            batching: AtomicBool::new(s.batching),
            groups: AtomicU32::new(s.groups),
            wait_secs: AtomicU32::new(wait),
            visibility_secs: AtomicU32::new(s.visibility.as_secs() as u32),
            processing_ms: AtomicU64::new(s.processing.as_millis() as u64),
        }
    }

    pub fn rate(&self) -> u32 {
        self.rate.load(Ordering::Relaxed)
    }
    pub fn batching(&self) -> bool {
        self.batching.load(Ordering::Relaxed)
    }
    pub fn groups(&self) -> u32 {
        self.groups.load(Ordering::Relaxed).max(1)
    }
    pub fn wait_secs(&self) -> u32 {
        self.wait_secs.load(Ordering::Relaxed)
    }
    pub fn visibility_secs(&self) -> u32 {
        self.visibility_secs.load(Ordering::Relaxed)
    }
    pub fn processing(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.processing_ms.load(Ordering::Relaxed))
    }
}

/// A consumer's figures beyond its ledger.
#[derive(Default)]
pub struct ConsumerMetrics {
    /// Send -> first receive (Lambda: send -> the invocation that carried it).
    pub send_to_receive: Series,
    /// ReceiveMessage calls that answered, and those that answered no message.
    pub receive_calls: u64,
    pub empty_receives: u64,
    /// Empty answers to a receive that began while a message sent before it had not been
    /// received: the queue held a message and the receive did not return it.
    pub empty_while_waiting: u64,
    /// Messages handed over, redeliveries included.
    pub messages: u64,
    /// Messages whose processing ended after their visibility timeout had run out (the queue
    /// may already have handed them out again).
    pub visibility_ran_out: u64,
    /// FIFO: a message received before an earlier message of its group it had not yet had.
    pub out_of_order: u64,
    /// DeleteMessageBatch entries that failed.
    pub delete_failed: u64,
    /// Lambda: invocations, and the messages they carried.
    pub invocations: u64,
    pub batch_messages: Series,
}

/// A running (or stopped) consumer, on its own queue.
pub struct ConsumerState {
    pub name: String,
    pub kind: Mutex<ConsumerKind>,
    pub queue_name: String,
    pub queue_url: Mutex<String>,
    pub ledger: Mutex<Ledger>,
    pub metrics: Mutex<ConsumerMetrics>,
    pub sdk: Arc<SdkStats>,
    pub status: Mutex<String>,
    /// The last call that failed after the SDK's retries, as one line.
    pub last_error: Mutex<Option<String>>,
    /// The highest seq received per FIFO message group.
    pub group_last: Mutex<Vec<Option<u64>>>,
    pub cancel: CancellationToken,
    /// Added by a key while the run goes on (removable by the other).
    pub added: bool,
    /// Removed by a key: its tasks stopped, its figures kept.
    pub removed: AtomicBool,
}

impl ConsumerState {
    pub fn new(name: &str, kind: ConsumerKind, queue_name: &str, added: bool) -> ConsumerState {
        ConsumerState {
            name: name.to_string(),
            kind: Mutex::new(kind),
            queue_name: queue_name.to_string(),
            queue_url: Mutex::new(String::new()),
            ledger: Mutex::new(Ledger::default()),
            metrics: Mutex::new(ConsumerMetrics::default()),
            sdk: Arc::new(SdkStats::default()),
            status: Mutex::new("starting".into()),
            last_error: Mutex::new(None),
            group_last: Mutex::new(Vec::new()),
            cancel: CancellationToken::new(),
            added,
            removed: AtomicBool::new(false),
        }
    }

    pub fn fifo(&self) -> bool {
        self.kind.lock().fifo()
    }

    /// Records a received body at `at_us` (first receipts only measure latency); returns the seq
    /// when the body is this run's.
    pub fn received(&self, body: &str, run: &str, at_us: i64, second: u64) -> Option<u64> {
        let Some((seq, sent_us)) = super::body::decode(body, run) else {
            self.ledger.lock().foreign();
            return None;
        };
        let first = self.ledger.lock().received(seq);
        let mut m = self.metrics.lock();
        m.messages += 1;
        if first {
            m.send_to_receive
                .record(at_us.saturating_sub(sent_us).max(0) as u64, second);
        }
        Some(seq)
    }

    /// FIFO: checks `seq` against its group's last first receipt.
    pub fn check_order(&self, seq: u64, group: usize) {
        let mut last = self.group_last.lock();
        if last.len() <= group {
            last.resize(group + 1, None);
        }
        match last[group] {
            Some(prev) if seq < prev => self.metrics.lock().out_of_order += 1,
            _ => last[group] = Some(seq),
        }
    }

    pub fn set_status(&self, s: impl Into<String>) {
        *self.status.lock() = s.into();
    }

    /// Forgets the latencies and counts (the ledger keeps counting: its identity spans the run).
    pub fn reset(&self) {
        *self.metrics.lock() = ConsumerMetrics::default();
        self.sdk.reset();
    }
}

/// The producer's figures.
#[derive(Default)]
pub struct ProducerMetrics {
    /// Seqs the pacer handed out.
    pub produced: u64,
    /// Sends acknowledged, per queue summed (a message to four queues is four).
    pub acknowledged: u64,
    /// Sends that failed after the SDK's retries (or a batch entry the service refused).
    pub failed: u64,
    /// Seqs a queue's sender could not take (it was behind by its whole buffer): never sent.
    pub behind: u64,
    /// Send calls (a batch is one).
    pub calls: u64,
    /// Send call -> answer.
    pub send_latency: Series,
}

pub struct ProducerState {
    pub metrics: Mutex<ProducerMetrics>,
    pub sdk: Arc<SdkStats>,
    pub status: Mutex<String>,
    pub last_error: Mutex<Option<String>>,
}

impl Default for ProducerState {
    fn default() -> Self {
        ProducerState {
            metrics: Mutex::new(ProducerMetrics::default()),
            sdk: Arc::new(SdkStats::default()),
            status: Mutex::new("starting".into()),
            last_error: Mutex::new(None),
        }
    }
}
