//! Kinesis's per-shard, per-API counters of calls and throttles: what a probe or test reads to see the
//! limits at work. Served as JSON at `GET /_latlab/stats` and readable in-process.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Api {
    PutRecord,
    PutRecords,
    GetShardIterator,
    GetRecords,
    SubscribeToShard,
}

/// `calls` counts every call that reached the shard's limits; `throttled` the calls refused by a
/// limit (for PutRecords: the records refused). `records` and `bytes` count what was delivered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub calls: u64,
    pub throttled: u64,
    pub records: u64,
    pub bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardApiStats {
    pub stream: String,
    pub shard: String,
    pub api: Api,
    #[serde(flatten)]
    pub counts: Counts,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsSnapshot {
    pub shards: Vec<ShardApiStats>,
    /// Every Kinesis operation the emulator was asked for, by its API name, with how many times
    /// (what a run really calls: `latlab plan` and `iam-policy` are checked against it).
    #[serde(default)]
    pub operations: BTreeMap<String, u64>,
}

impl StatsSnapshot {
    /// The counts of one API on one shard (zero when it was never called).
    pub fn get(&self, stream: &str, shard: &str, api: Api) -> Counts {
        self.shards
            .iter()
            .find(|s| s.stream == stream && s.shard == shard && s.api == api)
            .map(|s| s.counts)
            .unwrap_or_default()
    }

    /// The counts of one API summed over every shard of every stream.
    pub fn total(&self, api: Api) -> Counts {
        self.shards
            .iter()
            .filter(|s| s.api == api)
            .fold(Counts::default(), |mut acc, s| {
                acc.calls += s.counts.calls;
                acc.throttled += s.counts.throttled;
                acc.records += s.counts.records;
                acc.bytes += s.counts.bytes;
                acc
            })
    }
}

type Key = (Arc<str>, u32, Api);

#[derive(Default)]
pub struct Stats {
    map: Mutex<BTreeMap<Key, Counts>>,
    operations: Mutex<BTreeMap<&'static str, u64>>,
}

/// What happened in one call, for [`Stats::record`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Outcome {
    pub throttled: u64,
    pub records: u64,
    pub bytes: u64,
}

impl Outcome {
    pub const THROTTLED: Outcome = Outcome {
        throttled: 1,
        records: 0,
        bytes: 0,
    };

    pub fn delivered(records: u64, bytes: u64) -> Outcome {
        Outcome {
            throttled: 0,
            records,
            bytes,
        }
    }
}

impl Stats {
    /// Counts one request for `operation`, whatever its answer.
    pub fn asked(&self, operation: &'static str) {
        *self.operations.lock().entry(operation).or_default() += 1;
    }

    pub fn record(&self, stream: &Arc<str>, shard: u32, api: Api, outcome: Outcome) {
        let mut map = self.map.lock();
        let c = map.entry((stream.clone(), shard, api)).or_default();
        c.calls += 1;
        c.throttled += outcome.throttled;
        c.records += outcome.records;
        c.bytes += outcome.bytes;
    }

    /// Adds delivered records to a counter without counting a call (fan-out pushes).
    pub fn delivered(&self, stream: &Arc<str>, shard: u32, api: Api, records: u64, bytes: u64) {
        let mut map = self.map.lock();
        let c = map.entry((stream.clone(), shard, api)).or_default();
        c.records += records;
        c.bytes += bytes;
    }

    pub fn snapshot(&self) -> StatsSnapshot {
        let map = self.map.lock();
        StatsSnapshot {
            shards: map
                .iter()
                .map(|((stream, shard, api), counts)| ShardApiStats {
                    stream: stream.to_string(),
                    shard: super::store::shard_id(*shard),
                    api: *api,
                    counts: *counts,
                })
                .collect(),
            operations: self
                .operations
                .lock()
                .iter()
                .map(|(op, n)| (op.to_string(), *n))
                .collect(),
        }
    }
}
