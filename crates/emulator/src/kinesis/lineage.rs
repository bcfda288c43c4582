//! How a reshard changes a stream's shards: parents closed, children opened, lineage recorded.
//!
//! A reshard (SplitShard, MergeShards, UpdateShardCount) is accepted at once and the stream goes
//! UPDATING; the change itself takes effect when the stream goes back to ACTIVE, after
//! `reshard_duration`, as the service describes it ("After the operation is completed, Kinesis
//! Data Streams sets the stream status to ACTIVE. Read and write operations continue to work
//! while the stream is in the UPDATING state"). Until then records go to the old shards; from
//! then on to the children. The change is applied by whichever comes first: a timer task, or any
//! request that finds it due (`Stream::settle`), so a test that moves the service clock sees it
//! without waiting.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::store::{Closed, Shard, Shards, Stream, hash_range};

/// A change of a stream's shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Two children: `[start, at-1]` and `[at, end]`.
    Split { shard: u32, at: u128 },
    /// One child over both ranges, its ParentShardId `shard`, AdjacentParentShardId `adjacent`.
    Merge { shard: u32, adjacent: u32 },
    /// The open shards replaced by `target` shards splitting 0..2^128-1 evenly.
    Uniform { target: u32 },
}

/// A stream's resharding state.
#[derive(Debug, Default)]
pub struct Reshard {
    /// The change under way and when it takes effect.
    pub pending: Option<(Change, Instant)>,
    /// When each UpdateShardCount that changed the count was accepted, for the 24-hour limit.
    pub scalings: VecDeque<Instant>,
}

impl Reshard {
    pub fn updating(&self, now: Instant) -> bool {
        self.pending.is_some_and(|(_, due)| now < due)
    }

    /// Scalings accepted within `window` of `now` (older ones are forgotten).
    pub fn recent_scalings(&mut self, now: Instant, window: Duration) -> usize {
        while self
            .scalings
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= window)
        {
            self.scalings.pop_front();
        }
        self.scalings.len()
    }
}

impl Stream {
    /// Applies the reshard under way if its time has come.
    pub fn settle(&self, now: Instant, now_micros: i64) {
        let change = {
            let mut r = self.reshard.lock();
            match r.pending {
                Some((change, due)) if now >= due => {
                    r.pending = None;
                    change
                }
                _ => return,
            }
        };
        let mut shards = self.shards.write();
        let mut edit = Edit {
            shards: &mut shards,
            now_micros,
            limits: &self.limits,
        };
        match change {
            Change::Split { shard, at } => {
                edit.split(shard, at);
            }
            Change::Merge { shard, adjacent } => {
                edit.merge(shard, adjacent);
            }
            Change::Uniform { target } => edit.uniform(target),
        }
        let mut open: Vec<(u128, u128, u32)> = shards
            .all
            .iter()
            .map(|s| s.lock())
            .filter(|s| s.is_open())
            .map(|s| (s.hash_start, s.hash_end, s.index))
            .collect();
        open.sort_unstable();
        shards.open = open;
    }
}

struct Edit<'a> {
    shards: &'a mut Shards,
    now_micros: i64,
    limits: &'a crate::kinesis::limits::KinesisLimits,
}

impl Edit<'_> {
    fn range(&self, index: u32) -> (u128, u128) {
        let s = self.shards.all[index as usize].lock();
        (s.hash_start, s.hash_end)
    }

    fn open(&mut self, range: (u128, u128), parents: (Option<u32>, Option<u32>)) -> u32 {
        let index = self.shards.all.len() as u32;
        let shard = Shard::new(index, range, parents, self.now_micros, self.limits);
        self.shards.all.push(Arc::new(Mutex::new(shard)));
        index
    }

    /// Closes a shard: nothing is added to it from now on; readers and fan-out pushers waiting
    /// on it are woken to find its end.
    fn close(&mut self, index: u32, children: Vec<u32>) {
        let mut s = self.shards.all[index as usize].lock();
        s.closed = Some(Closed {
            end: s.next_counter,
            at_micros: self.now_micros,
            children,
        });
        let tip = s.next_counter;
        s.tip.send_replace(tip);
    }

    fn split(&mut self, shard: u32, at: u128) -> (u32, u32) {
        let (start, end) = self.range(shard);
        let low = self.open((start, at - 1), (Some(shard), None));
        let high = self.open((at, end), (Some(shard), None));
        self.close(shard, vec![low, high]);
        (low, high)
    }

    fn merge(&mut self, shard: u32, adjacent: u32) -> u32 {
        let (a, b) = (self.range(shard), self.range(adjacent));
        let child = self.open((a.0.min(b.0), a.1.max(b.1)), (Some(shard), Some(adjacent)));
        self.close(shard, vec![child]);
        self.close(adjacent, vec![child]);
        child
    }

    /// Uniform scaling as splits and merges of individual shards, the way the API reference
    /// says the service performs it: each open shard is split at every new boundary inside it,
    /// then the pieces inside each new range are merged one after another. Pieces that are
    /// split again or merged are short-lived shards, closed as soon as they are made (with no
    /// records); every final shard's lineage reaches each old shard it covers, with at most two
    /// parents per shard. Doubling splits each shard once; halving merges pairs; a shard whose
    /// range is already one of the new ranges stays open.
    fn uniform(&mut self, target: u32) {
        let mut old: Vec<(u128, u128, u32)> = self.shards.open.clone();
        old.sort_unstable();
        let bounds: Vec<u128> = (1..target).map(|i| hash_range(i, target).0).collect();
        let mut pieces: Vec<(u128, u128, u32)> = Vec::new();
        for (start, end, index) in old {
            let (mut from, mut current) = (start, index);
            for &b in bounds.iter().filter(|b| start < **b && **b <= end) {
                let (low, high) = self.split(current, b);
                pieces.push((from, b - 1, low));
                (from, current) = (b, high);
            }
            pieces.push((from, end, current));
        }
        for i in 0..target {
            let (start, end) = hash_range(i, target);
            let mut group = pieces
                .iter()
                .filter(|(s, e, _)| *s >= start && *e <= end)
                .map(|(_, _, index)| *index);
            let Some(mut acc) = group.next() else {
                continue;
            };
            for next in group {
                acc = self.merge(acc, next);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinesis::limits::KinesisLimits;
    use crate::time::ServiceClock;

    fn stream(count: u32) -> Stream {
        Stream::new(
            "s",
            "us-east-1",
            count,
            1,
            &KinesisLimits::default(),
            &ServiceClock::default(),
        )
    }

    fn reshard(s: &Stream, change: Change) {
        let now = Instant::now();
        s.reshard.lock().pending = Some((change, now));
        s.settle(now, 0);
    }

    /// The open ranges, checked to partition 0..2^128-1.
    fn open_ranges(s: &Stream) -> Vec<(u128, u128)> {
        let shards = s.shards.read();
        let mut next = 0u128;
        for (start, end, _) in &shards.open {
            assert_eq!(*start, next);
            next = end.wrapping_add(1);
        }
        assert_eq!(next, 0, "the open shards end at 2^128-1");
        shards.open.iter().map(|(s, e, _)| (*s, *e)).collect()
    }

    #[test]
    fn uniform_scaling_splits_the_key_space_evenly() {
        for (from, to) in [
            (1, 2),
            (2, 1),
            (2, 4),
            (4, 2),
            (3, 5),
            (5, 3),
            (4, 3),
            (3, 2),
        ] {
            let s = stream(from);
            reshard(&s, Change::Uniform { target: to });
            let want: Vec<_> = (0..to).map(|i| hash_range(i, to)).collect();
            assert_eq!(open_ranges(&s), want, "{from} -> {to}");
            // Every old shard is closed, and each final shard descends from every old shard its
            // range overlaps.
            let all = s.all_shards();
            for old in &all[..from as usize] {
                assert!(old.lock().closed.is_some(), "{from} -> {to}");
            }
            let ancestors = |i: u32| {
                let mut out = Vec::new();
                let mut todo = vec![i];
                while let Some(i) = todo.pop() {
                    let s = all[i as usize].lock();
                    todo.extend(s.parent.into_iter().chain(s.adjacent_parent));
                    out.push(i);
                }
                out
            };
            for (_, _, index) in s.shards.read().open.clone() {
                let (start, end) = s
                    .shard_at(index)
                    .map(|x| {
                        let x = x.lock();
                        (x.hash_start, x.hash_end)
                    })
                    .unwrap();
                let a = ancestors(index);
                for old in 0..from {
                    let (os, oe) = hash_range(old, from);
                    let overlaps = os <= end && start <= oe;
                    assert_eq!(
                        a.contains(&old),
                        overlaps,
                        "{from} -> {to}: {index} from {old}"
                    );
                }
            }
        }
    }

    #[test]
    fn doubling_and_halving_make_no_short_lived_shards() {
        let s = stream(2);
        reshard(&s, Change::Uniform { target: 4 });
        assert_eq!(s.all_shards().len(), 6);
        reshard(&s, Change::Uniform { target: 2 });
        assert_eq!(s.all_shards().len(), 8);
        let child = s.shard_at(6).unwrap();
        let c = child.lock();
        assert_eq!((c.parent, c.adjacent_parent), (Some(2), Some(3)));
    }

    #[test]
    fn split_and_merge_record_their_lineage() {
        let s = stream(1);
        reshard(&s, Change::Split { shard: 0, at: 1000 });
        assert_eq!(open_ranges(&s), vec![(0, 999), (1000, u128::MAX)]);
        assert_eq!(
            s.shard_at(0)
                .unwrap()
                .lock()
                .closed
                .as_ref()
                .unwrap()
                .children,
            vec![1, 2]
        );
        reshard(
            &s,
            Change::Merge {
                shard: 2,
                adjacent: 1,
            },
        );
        assert_eq!(open_ranges(&s), vec![(0, u128::MAX)]);
        let c = s.shard_at(3).unwrap();
        assert_eq!(
            c.lock().parent_ids(),
            vec!["shardId-000000000002", "shardId-000000000001"]
        );
    }
}
