//! A frozen view of the DynamoDB lab, which is also its part of the JSON report: the table and
//! the live settings, the writer, the readers (strong and eventual), each partition's use against
//! its limits, and each change-data-capture consumer with its count that adds up.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::config::{Billing, CdcKind};
use crate::metrics::Summary;
use crate::metrics::sdk::SdkSnapshot;

/// The writer's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WriterFigures {
    /// PutItem calls the pacer handed out.
    pub produced: u64,
    /// Writes DynamoDB acknowledged.
    pub written: u64,
    /// Writes that failed after the SDK's retries (throttled or not).
    pub failed: u64,
    /// Writes never sent: the writer had its most calls in flight.
    pub behind: u64,
    /// Write capacity units the acknowledged writes consumed (as DynamoDB answered them).
    pub units: f64,
    /// PutItem call -> answer, retries included.
    #[serde(with = "crate::metrics::json::as_report")]
    pub latency: Summary,
    /// Throttled attempts by the reason DynamoDB gave (`TableWriteKeyRangeThroughputExceeded`).
    pub throttled: BTreeMap<String, u64>,
    #[serde(with = "crate::metrics::json::sdk_as_report")]
    pub sdk: SdkSnapshot,
    pub status: String,
    pub last_error: Option<String>,
}

impl WriterFigures {
    /// Throttled attempts, whatever the reason.
    pub fn throttled_attempts(&self) -> u64 {
        self.throttled.values().sum()
    }
}

/// The reader's figures for one consistency.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReaderFigures {
    /// `strong` or `eventual`.
    pub consistency: String,
    pub reads: u64,
    pub failed: u64,
    /// Read capacity units consumed (an eventual read of up to 4 KB is half a unit).
    pub units: f64,
    #[serde(with = "crate::metrics::json::as_report")]
    pub latency: Summary,
    pub throttled: BTreeMap<String, u64>,
}

/// One partition as latlab models it: what the lab's calls consumed on it in the last whole
/// second, against the per-partition limits.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PartitionFigures {
    pub index: usize,
    pub write_units: f64,
    pub read_units: f64,
    pub write_limit: u64,
    pub read_limit: u64,
    /// Throttled attempts on it in the last whole second, and in all.
    pub throttled_last_second: u64,
    pub throttled: u64,
    /// Its share of the writes' units in all.
    pub write_units_total: f64,
}

/// A change-data-capture consumer's count: every acknowledged write is received, lost or unread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CdcCounts {
    /// Writes DynamoDB acknowledged (the same for every consumer).
    pub written: u64,
    pub received: u64,
    /// Never received, and older than the stream's 24 hours when counted: gone for good.
    pub lost: u64,
    pub unread: u64,
    /// Changes received again (a re-read after an error, a second push).
    pub duplicates: u64,
    /// Changes received whose write was never acknowledged to the writer (it failed after
    /// DynamoDB had committed it, or its answer is still on the way).
    pub unacknowledged: u64,
}

impl CdcCounts {
    pub fn adds_up(&self) -> bool {
        self.received + self.lost + self.unread == self.written
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CdcFigures {
    pub name: String,
    pub how: CdcKind,
    pub counts: CdcCounts,
    /// The write call's start -> the consumer has the change (Lambda: the invocation).
    #[serde(with = "crate::metrics::json::as_report")]
    pub latency: Summary,
    /// GetRecords calls (or SubscribeToShard events) that answered, and those with no record.
    pub calls: u64,
    pub empty: u64,
    /// Lambda: invocations.
    pub invocations: u64,
    #[serde(with = "crate::metrics::json::sdk_as_report")]
    pub sdk: SdkSnapshot,
    pub status: String,
    pub last_error: Option<String>,
    /// Added by a key while the run went on.
    pub added: bool,
    /// Removed by a key (it counts no more).
    pub stopped: bool,
}

/// The table's capacity and use in the last whole second.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TableUse {
    pub write_units: f64,
    pub read_units: f64,
    /// Provisioned capacity (None: on-demand).
    pub write_capacity: Option<u64>,
    pub read_capacity: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DynamoSnapshot {
    pub table: String,
    pub billing: Billing,
    pub item_size: u64,
    /// Writes a second the writer sends.
    pub rate: u32,
    pub keys: u32,
    pub skewed: bool,
    pub hot_share: f64,
    pub reads: u32,
    pub consistent: bool,
    /// Seconds the writer has written for.
    pub seconds: f64,
    pub writer: WriterFigures,
    pub readers: Vec<ReaderFigures>,
    pub table_use: TableUse,
    pub partitions: Vec<PartitionFigures>,
    pub cdc: Vec<CdcFigures>,
    /// Why the lab did not run.
    pub unavailable: Option<String>,
}

impl crate::labs::ReportPart for DynamoSnapshot {}

impl DynamoSnapshot {
    /// The partition that is hot: throttled in the last second (or, when none is, the busiest
    /// over four fifths of its write limit); None while no partition is.
    pub fn hot(&self) -> Option<usize> {
        let throttled = self
            .partitions
            .iter()
            .filter(|p| p.throttled_last_second > 0)
            .max_by_key(|p| p.throttled_last_second);
        if let Some(p) = throttled {
            return Some(p.index);
        }
        self.partitions
            .iter()
            .filter(|p| p.write_units > 0.8 * p.write_limit as f64)
            .max_by(|a, b| a.write_units.total_cmp(&b.write_units))
            .map(|p| p.index)
    }

    /// The partition that took the most throttles over the run, when any did.
    pub fn most_throttled(&self) -> Option<&PartitionFigures> {
        self.partitions
            .iter()
            .filter(|p| p.throttled > 0)
            .max_by_key(|p| p.throttled)
    }

    /// The table's write units over the run's seconds, a second.
    pub fn write_units_per_sec(&self) -> f64 {
        self.writer.units / self.seconds.max(1.0)
    }

    /// An empty snapshot of a scenario (before it runs, or when it could not start).
    pub fn planned(s: &super::config::DynamoScenario, table: &str) -> DynamoSnapshot {
        DynamoSnapshot {
            table: table.to_string(),
            billing: s.billing,
            item_size: s.item_size,
            rate: s.rate,
            keys: s.keys,
            skewed: s.skewed,
            hot_share: s.hot_share,
            reads: s.reads,
            consistent: s.consistent,
            seconds: 0.0,
            writer: WriterFigures::default(),
            readers: Vec::new(),
            table_use: TableUse::default(),
            partitions: Vec::new(),
            cdc: Vec::new(),
            unavailable: None,
        }
    }
}
