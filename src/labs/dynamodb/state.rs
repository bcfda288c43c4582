//! What the DynamoDB lab's probes write as they measure, and what its snapshots read: the knobs
//! the keys turn, the ledger of acknowledged writes against each change consumer's receipts, each
//! partition's use, and the writer's, readers' and consumers' figures. Probes record straight into
//! these under short locks, so no measured change is dropped between a probe and a report.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::config::{Billing, CdcKind, DynamoScenario};
use super::snapshot::CdcCounts;
use crate::metrics::{SdkStats, Series};

/// The settings the keys change while the lab runs; every probe reads them at each step.
pub struct Knobs {
    pub rate: AtomicU32,
    pub skewed: AtomicBool,
    pub consistent: AtomicBool,
    /// The table's billing as last applied (UpdateTable answered).
    pub billing: Mutex<Billing>,
}

impl Knobs {
    pub fn new(s: &DynamoScenario) -> Knobs {
        Knobs {
            rate: AtomicU32::new(s.rate),
            skewed: AtomicBool::new(s.skewed),
            consistent: AtomicBool::new(s.consistent),
            billing: Mutex::new(s.billing),
        }
    }
    pub fn rate(&self) -> u32 {
        self.rate.load(Ordering::Relaxed)
    }
    pub fn skewed(&self) -> bool {
        self.skewed.load(Ordering::Relaxed)
    }
    pub fn consistent(&self) -> bool {
        self.consistent.load(Ordering::Relaxed)
    }
    pub fn billing(&self) -> Billing {
        *self.billing.lock()
    }
}

/// Seqs the ledger tracks: 64 Mi (8 MiB a bitmap), over 18 hours at 1,000 writes a second. The
/// writer stops handing out seqs past it, and says so.
pub const LEDGER_CAPACITY: u64 = 1 << 26;

/// How long a DynamoDB stream keeps a change: a change not received by then is lost.
pub const STREAM_RETENTION_SECS: u64 = 24 * 3600;

/// A set of seqs, one bit each.
#[derive(Default)]
struct Bits(Vec<u64>);

impl Bits {
    fn has(&self, seq: u64) -> bool {
        self.0
            .get((seq / 64) as usize)
            .is_some_and(|w| w & (1 << (seq % 64)) != 0)
    }

    /// Sets `seq`; false when it was set already.
    fn set(&mut self, seq: u64) -> bool {
        let i = (seq / 64) as usize;
        if i >= self.0.len() {
            self.0.resize(i + 1, 0);
        }
        let bit = 1 << (seq % 64);
        let was = self.0[i] & bit != 0;
        self.0[i] |= bit;
        !was
    }
}

/// One consumer's receipts.
#[derive(Default)]
struct Receipts {
    got: Bits,
    received: u64,
    unacknowledged: u64,
    duplicates: u64,
    lost: u64,
}

/// Every acknowledged write against each change consumer's receipts, under one lock so that an
/// acknowledgment and a receipt of the same seq are counted once, whichever comes first.
#[derive(Default)]
pub struct Ledger {
    acked: Bits,
    written: u64,
    /// (second, first seq acknowledged then), one entry per second that had any.
    marks: VecDeque<(u64, u64)>,
    /// Seqs below it have been checked against the stream's retention.
    aged_to: u64,
    consumers: Vec<Receipts>,
}

impl Ledger {
    /// A consumer joins; its index. Writes acknowledged before it joined count for it too: the
    /// stream holds them (every consumer starts at the oldest change).
    pub fn join(&mut self) -> usize {
        self.consumers.push(Receipts::default());
        self.consumers.len() - 1
    }

    /// DynamoDB acknowledged the write of `seq` at `second`.
    pub fn acked(&mut self, seq: u64, second: u64) {
        if !self.acked.set(seq) {
            return;
        }
        self.written += 1;
        if self.marks.back().is_none_or(|(s, _)| *s < second) {
            self.marks.push_back((second, seq));
        }
        for c in &mut self.consumers {
            if c.got.has(seq) {
                c.received += 1;
                c.unacknowledged -= 1;
            }
        }
    }

    /// Consumer `c` has the change of `seq`.
    pub fn received(&mut self, c: usize, seq: u64) {
        let acked = self.acked.has(seq);
        let Some(r) = self.consumers.get_mut(c) else {
            return;
        };
        if !r.got.set(seq) {
            r.duplicates += 1;
        } else if acked {
            r.received += 1;
        } else {
            r.unacknowledged += 1;
        }
    }

    /// Moves the retention's edge to `now_second`: acknowledged seqs older than it that a consumer
    /// never received are lost to it.
    fn age(&mut self, now_second: u64) {
        let Some(cutoff) = now_second.checked_sub(STREAM_RETENTION_SECS) else {
            return;
        };
        let edge = self
            .marks
            .iter()
            .find(|(s, _)| *s >= cutoff)
            .map_or(u64::MAX, |(_, seq)| *seq);
        let top = (self.acked.0.len() as u64 * 64).min(edge);
        while self.aged_to < top {
            let seq = self.aged_to;
            if self.acked.has(seq) {
                for c in &mut self.consumers {
                    if !c.got.has(seq) {
                        c.lost += 1;
                    }
                }
            }
            self.aged_to += 1;
        }
        while self.marks.len() > 1 && self.marks[1].0 < cutoff {
            self.marks.pop_front();
        }
    }

    /// Consumer `c`'s counts at `now_second`.
    pub fn counts(&mut self, c: usize, now_second: u64) -> CdcCounts {
        self.age(now_second);
        let written = self.written;
        let Some(r) = self.consumers.get(c) else {
            return CdcCounts::default();
        };
        CdcCounts {
            written,
            received: r.received,
            lost: r.lost,
            unread: written - r.received - r.lost,
            duplicates: r.duplicates,
            unacknowledged: r.unacknowledged,
        }
    }

    pub fn written(&self) -> u64 {
        self.written
    }
}

/// One partition's use, a slot a second for the last few seconds, and its totals.
#[derive(Clone, Default)]
pub struct PartitionUse {
    /// (second, write units, read units, throttled attempts).
    pub recent: VecDeque<(u64, f64, f64, u64)>,
    pub throttled: u64,
    pub write_units: f64,
}

impl PartitionUse {
    fn slot(&mut self, second: u64) -> &mut (u64, f64, f64, u64) {
        if self.recent.back().is_none_or(|s| s.0 != second) {
            self.recent.push_back((second, 0.0, 0.0, 0));
            while self.recent.len() > 4 {
                self.recent.pop_front();
            }
        }
        self.recent.back_mut().expect("just pushed")
    }

    /// The last whole second's (write units, read units, throttled attempts).
    pub fn last_second(&self, now_second: u64) -> (f64, f64, u64) {
        let want = now_second.saturating_sub(1);
        self.recent
            .iter()
            .find(|s| s.0 == want)
            .map_or((0.0, 0.0, 0), |s| (s.1, s.2, s.3))
    }
}

/// Every partition's use, as latlab's model maps keys to partitions (`dynamodb::partition_of`),
/// and an on-demand table's growth as the model has it: at the end of each window, partitions
/// for twice the busiest second before it.
#[derive(Default)]
pub struct Heat {
    pub partitions: Vec<PartitionUse>,
    /// Whether the table is on-demand (it grows by its peaks).
    pub on_demand: bool,
    /// The growth window, seconds; its start; the busiest second in it and before it (in write
    /// units, a read unit a third of one).
    pub window: u64,
    pub window_start: u64,
    pub window_peak: f64,
    pub previous_peak: f64,
    /// A partition's write units a second, and read units.
    pub write_limit: f64,
    pub read_limit: f64,
}

impl Heat {
    /// At `second`, an on-demand table's growth: the last whole second counts towards the
    /// window's peak, and a window that ended adds partitions for twice its peak.
    pub fn tick(&mut self, second: u64) {
        if !self.on_demand || self.write_limit <= 0.0 {
            return;
        }
        let last: f64 = self
            .partitions
            .iter()
            .map(|p| {
                let (w, r, _) = p.last_second(second);
                w + r * self.write_limit / self.read_limit.max(1.0)
            })
            .sum();
        self.window_peak = self.window_peak.max(last);
        if second.saturating_sub(self.window_start) >= self.window.max(1) {
            self.previous_peak = self.previous_peak.max(self.window_peak);
            self.window_peak = 0.0;
            self.window_start = second;
            self.grow((2.0 * self.previous_peak / self.write_limit).ceil() as usize);
        }
    }

    /// A switch to on-demand at `second`: the previous peak is half the provisioned throughput
    /// (`(read, write)` units), as the model's emulator has it.
    pub fn to_on_demand(&mut self, provisioned: Option<(u64, u64)>, second: u64) {
        if let Some((read, write)) = provisioned {
            let units = write as f64 + read as f64 * self.write_limit / self.read_limit.max(1.0);
            self.previous_peak = self.previous_peak.max(units / 2.0);
        }
        self.on_demand = true;
        self.window_start = second;
        self.grow((2.0 * self.previous_peak / self.write_limit.max(1.0)).ceil() as usize);
    }

    /// Keeps at least `n` partitions (a table's partitions are added, never merged).
    pub fn grow(&mut self, n: usize) {
        if self.partitions.len() < n {
            self.partitions.resize(n, PartitionUse::default());
        }
    }

    pub fn write(&mut self, p: usize, units: f64, second: u64) {
        if let Some(u) = self.partitions.get_mut(p) {
            u.slot(second).1 += units;
            u.write_units += units;
        }
    }

    pub fn read(&mut self, p: usize, units: f64, second: u64) {
        if let Some(u) = self.partitions.get_mut(p) {
            u.slot(second).2 += units;
        }
    }

    pub fn throttled(&mut self, p: usize, n: u64, second: u64) {
        if let Some(u) = self.partitions.get_mut(p) {
            u.slot(second).3 += n;
            u.throttled += n;
        }
    }
}

/// The writer's figures.
#[derive(Default)]
pub struct WriterMetrics {
    pub produced: u64,
    pub written: u64,
    pub failed: u64,
    pub behind: u64,
    pub units: f64,
    pub latency: Series,
    pub throttled: BTreeMap<String, u64>,
}

pub struct WriterState {
    pub metrics: Mutex<WriterMetrics>,
    /// How long the writer wrote for, once it has stopped.
    pub wrote_for: Mutex<Option<std::time::Duration>>,
    pub sdk: Arc<SdkStats>,
    pub status: Mutex<String>,
    pub last_error: Mutex<Option<String>>,
}

impl Default for WriterState {
    fn default() -> Self {
        WriterState {
            metrics: Mutex::new(WriterMetrics::default()),
            wrote_for: Mutex::new(None),
            sdk: Arc::new(SdkStats::default()),
            status: Mutex::new("starting".into()),
            last_error: Mutex::new(None),
        }
    }
}

/// The reader's figures for one consistency.
#[derive(Default)]
pub struct ReadMetrics {
    pub reads: u64,
    pub failed: u64,
    pub units: f64,
    pub latency: Series,
    pub throttled: BTreeMap<String, u64>,
}

#[derive(Default)]
pub struct ReaderState {
    pub strong: Mutex<ReadMetrics>,
    pub eventual: Mutex<ReadMetrics>,
    pub sdk: Arc<SdkStats>,
    pub last_error: Mutex<Option<String>>,
}

/// A change consumer's figures beyond the ledger.
#[derive(Default)]
pub struct CdcMetrics {
    pub latency: Series,
    pub calls: u64,
    pub empty: u64,
    pub invocations: u64,
}

pub struct CdcState {
    pub name: String,
    pub kind: CdcKind,
    /// Its index in the ledger.
    pub slot: usize,
    pub metrics: Mutex<CdcMetrics>,
    pub sdk: Arc<SdkStats>,
    pub status: Mutex<String>,
    pub last_error: Mutex<Option<String>>,
    pub cancel: CancellationToken,
    pub added: bool,
    pub removed: AtomicBool,
    /// Records handed to it that were not one of this run's writes.
    pub foreign: AtomicU64,
}

impl CdcState {
    pub fn new(name: &str, kind: CdcKind, slot: usize, added: bool) -> CdcState {
        CdcState {
            name: name.to_string(),
            kind,
            slot,
            metrics: Mutex::new(CdcMetrics::default()),
            sdk: Arc::new(SdkStats::default()),
            status: Mutex::new("starting".into()),
            last_error: Mutex::new(None),
            cancel: CancellationToken::new(),
            added,
            removed: AtomicBool::new(false),
            foreign: AtomicU64::new(0),
        }
    }

    pub fn set_status(&self, s: impl Into<String>) {
        *self.status.lock() = s.into();
    }

    pub fn failed(&self, code: &str, line: String) {
        self.sdk.escaped(code);
        self.set_status(format!("error: {line}"));
        *self.last_error.lock() = Some(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_acknowledged_write_is_received_lost_or_unread() {
        let mut l = Ledger::default();
        let a = l.join();
        let b = l.join();
        for seq in 0..10 {
            l.acked(seq, 0);
        }
        l.received(a, 3);
        l.received(a, 3);
        // A change can reach a consumer before its write's answer reaches the writer.
        l.received(b, 12);
        let ca = l.counts(a, 1);
        assert_eq!(
            (ca.written, ca.received, ca.unread, ca.duplicates),
            (10, 1, 9, 1)
        );
        assert!(ca.adds_up());
        let cb = l.counts(b, 1);
        assert_eq!((cb.received, cb.unacknowledged), (0, 1));
        l.acked(12, 1);
        let cb = l.counts(b, 1);
        assert_eq!((cb.written, cb.received, cb.unacknowledged), (11, 1, 0));
        assert!(cb.adds_up());
    }

    #[test]
    fn past_the_streams_retention_an_unreceived_change_is_lost() {
        let mut l = Ledger::default();
        let a = l.join();
        l.acked(0, 0);
        l.acked(1, 0);
        l.acked(2, STREAM_RETENTION_SECS + 5);
        l.received(a, 1);
        let c = l.counts(a, STREAM_RETENTION_SECS + 10);
        assert_eq!((c.received, c.lost, c.unread), (1, 1, 1));
        assert!(c.adds_up());
    }
}
