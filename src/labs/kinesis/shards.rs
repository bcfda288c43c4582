//! The stream's shards as the lab knows them, live: the list starts as ListShards answered when
//! the lab started and grows as shards appear (a reshard's children, seen in a put's answer, in
//! a closed shard's ChildShards, or in ListShards once the stream is ACTIVE again). A shard's
//! index in this list never changes, so per-shard figures (positions, MillisBehindLatest, the
//! ledger's tails) index it as they always did; nothing reads past its end.
//!
//! It also holds what the stream is doing: UPDATING while a reshard is under way, its open
//! shards, and the open count after each reshard took effect.

use std::time::Duration;

use parking_lot::{Mutex, RwLock};

/// One shard: its id, its rank (the number its id ends in: shard ids are handed out in creation
/// order, so a child ranks above its parents), its parents and whether it is closed.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardInfo {
    pub id: String,
    pub rank: u64,
    pub parents: Vec<String>,
    pub closed: bool,
}

/// What the stream is doing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamShape {
    /// A reshard was accepted and has not yet taken effect.
    pub updating: bool,
    /// Open shards (DescribeStreamSummary's OpenShardCount when last asked).
    pub open: usize,
    /// The open count when the lab started and after each reshard took effect, with when (since
    /// the lab's start).
    pub history: Vec<(Duration, usize)>,
}

#[derive(Default)]
pub struct ShardMap {
    shards: RwLock<Vec<ShardInfo>>,
    shape: Mutex<StreamShape>,
}

impl ShardMap {
    /// Shards known so far (open and closed).
    pub fn len(&self) -> usize {
        self.shards.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn id(&self, i: usize) -> Option<String> {
        self.shards.read().get(i).map(|s| s.id.clone())
    }

    /// The shard's rank (0 for an index past the end).
    pub fn rank(&self, i: usize) -> u64 {
        self.shards.read().get(i).map_or(0, |s| s.rank)
    }

    /// The index of a shard id, if known.
    pub fn index(&self, id: &str) -> Option<usize> {
        let shards = self.shards.read();
        // Shard ids end in their number, which is their index on a stream never resharded.
        let guess = rank_of(id)
            .and_then(|n| usize::try_from(n).ok())
            .filter(|i| shards.get(*i).is_some_and(|s| s.id == id));
        guess.or_else(|| shards.iter().position(|s| s.id == id))
    }

    /// The index of a shard id, adding it when it is new; its parents are kept when given.
    pub fn index_or_add(&self, id: &str, parents: &[String]) -> usize {
        if let Some(i) = self.index(id) {
            if !parents.is_empty() {
                let mut shards = self.shards.write();
                if shards[i].parents.is_empty() {
                    shards[i].parents = parents.to_vec();
                }
            }
            return i;
        }
        let mut shards = self.shards.write();
        // Another task may have added it between the two locks.
        if let Some(i) = shards.iter().position(|s| s.id == id) {
            return i;
        }
        let rank = rank_of(id).unwrap_or(shards.len() as u64);
        shards.push(ShardInfo {
            id: id.to_string(),
            rank,
            parents: parents.to_vec(),
            closed: false,
        });
        shards.len() - 1
    }

    /// What ListShards answered: new shards are added, known ones get their parents and state.
    pub fn listed(&self, list: &[ShardInfo]) {
        for s in list {
            let i = self.index_or_add(&s.id, &s.parents);
            if s.closed {
                self.shards.write()[i].closed = true;
            }
        }
    }

    /// A reader reached the end of a closed shard.
    pub fn close(&self, i: usize) {
        if let Some(s) = self.shards.write().get_mut(i) {
            s.closed = true;
        }
    }

    /// Where a consumer that starts now begins: from LATEST, the open shards; from TRIM_HORIZON,
    /// the shards whose parents are not listed (the oldest of every lineage), whose descendants
    /// it then follows.
    pub fn starting_shards(&self, from_latest: bool) -> Vec<usize> {
        let shards = self.shards.read();
        (0..shards.len())
            .filter(|i| {
                let s = &shards[*i];
                if from_latest {
                    !s.closed
                } else {
                    !s.parents.iter().any(|p| shards.iter().any(|o| o.id == *p))
                }
            })
            .collect()
    }

    pub fn shape(&self) -> StreamShape {
        self.shape.lock().clone()
    }

    /// The stream is UPDATING (a reshard was accepted).
    pub fn set_updating(&self) {
        self.shape.lock().updating = true;
    }

    /// The stream is ACTIVE with `open` open shards; `at` (since the lab's start) goes into the
    /// history when the count changed or it is the first.
    pub fn set_active(&self, open: usize, at: Duration) {
        let mut shape = self.shape.lock();
        shape.updating = false;
        shape.open = open;
        if shape.history.last().is_none_or(|(_, n)| *n != open) {
            shape.history.push((at, open));
        }
    }
}

/// The number a shard id ends in (`shardId-000000000007` -> 7).
pub(super) fn rank_of(id: &str) -> Option<u64> {
    id.rsplit('-').next().and_then(|n| n.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(id: u64, parents: &[u64], closed: bool) -> ShardInfo {
        ShardInfo {
            id: format!("shardId-{id:012}"),
            rank: id,
            parents: parents.iter().map(|p| format!("shardId-{p:012}")).collect(),
            closed,
        }
    }

    #[test]
    fn shards_keep_their_index_as_the_stream_is_resharded() {
        let m = ShardMap::default();
        m.listed(&[info(0, &[], false)]);
        assert_eq!(m.starting_shards(true), vec![0]);
        // A put's answer names a child before ListShards does: it gets the next index.
        assert_eq!(m.index_or_add("shardId-000000000002", &[]), 1);
        m.listed(&[
            info(0, &[], true),
            info(1, &[0], false),
            info(2, &[0], false),
        ]);
        assert_eq!(m.len(), 3);
        assert_eq!(m.index("shardId-000000000002"), Some(1));
        assert_eq!(m.index("shardId-000000000001"), Some(2));
        assert_eq!(m.rank(1), 2);
        assert_eq!(m.rank(9), 0, "past the end");
        // LATEST starts on the open children; TRIM_HORIZON on the parent, then follows it.
        assert_eq!(m.starting_shards(true), vec![1, 2]);
        assert_eq!(m.starting_shards(false), vec![0]);
        assert_eq!(m.id(2).as_deref(), Some("shardId-000000000001"));
        assert_eq!(m.id(3), None);
    }

    #[test]
    fn the_history_keeps_each_count_once() {
        let m = ShardMap::default();
        m.set_active(1, Duration::ZERO);
        m.set_updating();
        assert!(m.shape().updating);
        m.set_active(2, Duration::from_secs(5));
        m.set_active(2, Duration::from_secs(6));
        let s = m.shape();
        assert!(!s.updating);
        assert_eq!(s.open, 2);
        assert_eq!(
            s.history,
            vec![(Duration::ZERO, 1), (Duration::from_secs(5), 2)]
        );
    }
}
