//! The faults that fired: each with its time, kind, target and recovery, the newest kept, and
//! counts of every one.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::Kind;

/// One fault that fired.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultEvent {
    pub id: u64,
    pub at: Instant,
    pub kind: Kind,
    /// What it hit, e.g. `PutRecord on shardId-000000000000` or `the replica (pid 123)`.
    pub target: String,
    /// How long after it fired the target answered correctly again; None: not yet.
    pub recovered: Option<Duration>,
    /// It could not be injected (e.g. the endpoint refused DEBUG): why.
    pub failed: Option<String>,
}

/// Fired and recovered counts of one kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindCounts {
    pub fired: u64,
    pub recovered: u64,
    pub failed: u64,
}

/// Events kept for the screen and the report's timeline; the counts cover every one.
pub const LOG_CAPACITY: usize = 10_000;

/// The faults that fired, the newest [`LOG_CAPACITY`] kept, and counts of all.
#[derive(Default)]
pub struct FaultLog {
    inner: Mutex<LogInner>,
}

#[derive(Default)]
struct LogInner {
    next_id: u64,
    events: VecDeque<FaultEvent>,
    counts: BTreeMap<Kind, KindCounts>,
}

impl fmt::Debug for FaultLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultLog")
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}

impl FaultLog {
    /// Records a fault that fired; returns its id.
    pub fn fired(&self, kind: Kind, target: String) -> u64 {
        let mut inner = self.inner.lock();
        inner.next_id += 1;
        let id = inner.next_id;
        inner.counts.entry(kind).or_default().fired += 1;
        if inner.events.len() >= LOG_CAPACITY {
            inner.events.pop_front();
        }
        tracing::info!("fault {id}: {kind} on {target}");
        inner.events.push_back(FaultEvent {
            id,
            at: Instant::now(),
            kind,
            target,
            recovered: None,
            failed: None,
        });
        id
    }

    /// The fault `id`'s target answered correctly again (the first time counts).
    pub fn recovered(&self, id: u64) {
        let mut inner = self.inner.lock();
        let Some(e) = inner.events.iter_mut().find(|e| e.id == id) else {
            return;
        };
        if e.recovered.is_some() || e.failed.is_some() {
            return;
        }
        e.recovered = Some(e.at.elapsed());
        let kind = e.kind;
        inner.counts.entry(kind).or_default().recovered += 1;
    }

    /// The fault `id` could not be injected.
    pub fn failed(&self, id: u64, why: String) {
        let mut inner = self.inner.lock();
        let Some(e) = inner.events.iter_mut().find(|e| e.id == id) else {
            return;
        };
        if e.failed.is_some() {
            return;
        }
        tracing::warn!("fault {id}: {} could not be injected: {why}", e.kind);
        e.failed = Some(why);
        let kind = e.kind;
        inner.counts.entry(kind).or_default().failed += 1;
    }

    /// The events kept, oldest first.
    pub fn events(&self) -> Vec<FaultEvent> {
        self.inner.lock().events.iter().cloned().collect()
    }

    /// Counts per kind, of every fault that fired.
    pub fn counts(&self) -> BTreeMap<Kind, KindCounts> {
        self.inner.lock().counts.clone()
    }

    /// Forgets everything (the lab's reset).
    pub fn clear(&self) {
        let mut inner = self.inner.lock();
        inner.events.clear();
        inner.counts.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_counts_every_fault_and_keeps_the_newest() {
        let log = FaultLog::default();
        let a = log.fired(crate::services::kinesis::faults::STALL, "GetRecords".into());
        let b = log.fired(crate::services::kinesis::faults::STALL, "GetRecords".into());
        log.recovered(a);
        log.recovered(a);
        log.failed(b, "refused".into());
        log.recovered(b);
        let c = log.counts()[&crate::services::kinesis::faults::STALL];
        assert_eq!(
            c,
            KindCounts {
                fired: 2,
                recovered: 1,
                failed: 1
            }
        );
        for _ in 0..LOG_CAPACITY + 5 {
            log.fired(crate::services::s3::faults::SLOW_DOWN, "PutObject".into());
        }
        assert_eq!(log.events().len(), LOG_CAPACITY);
        assert_eq!(
            log.counts()[&crate::services::s3::faults::SLOW_DOWN].fired,
            LOG_CAPACITY as u64 + 5
        );
    }
}
