//! Following the stream's lineage, as KCL does: a consumer reads each shard to its end, and a
//! child shard starts only once every parent it was reading is finished, from TRIM_HORIZON.
//!
//! KCL's lease lifecycle (amazon-kinesis-client, docs/lease-lifecycle.md): "child shards will not
//! have leases created until its parent(s) have reached SHARD_END", and "child leases are
//! initialized at TRIM_HORIZON to avoid processing gaps from their parent lease(s)". The Kinesis
//! Data Streams developer guide ("Complete the resharding action": data routing, data persistence
//! and shard state after a reshard) says why: records put before the reshard stay in the
//! parents, those put after go to the children. Reading a parent to its end before its children
//! keeps each partition key's order. Lambda's documentation does not describe how its event source
//! mappings cross a reshard; latlab's Lambda consumers follow the same rule.
//!
//! A parent this consumer never read (it started after that parent closed) is not waited for,
//! as KCL does not wait for a parent that has no lease.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;

use tokio::task::JoinSet;

use super::config::StartPosition;
use super::state::ConsumerState;
use super::{Ctx, Readiness};

/// A child shard as a closed shard's last answer (or ListShards) names it.
#[derive(Clone, Debug, PartialEq)]
pub struct Child {
    pub id: String,
    pub parents: Vec<String>,
}

/// How reading one shard ended.
#[derive(Debug, PartialEq)]
pub enum ShardEnd {
    /// Read to its end: the shard is closed and these are its children.
    Closed(Vec<Child>),
    /// The consumer stopped (or the endpoint lacks what it needs).
    Stopped,
}

/// Which shards one consumer has started and finished.
#[derive(Default)]
pub struct Lineage {
    started: HashSet<String>,
    finished: HashSet<String>,
}

impl Lineage {
    pub fn start(&mut self, id: &str) {
        self.started.insert(id.to_string());
    }

    /// `parent` was read to its end: the children it names that start now, each once every
    /// parent the consumer was reading is finished.
    pub fn finish(&mut self, parent: &str, children: &[Child]) -> Vec<Child> {
        self.finished.insert(parent.to_string());
        let mut now = Vec::new();
        for child in children {
            if self.started.contains(&child.id) {
                continue;
            }
            let ready = child
                .parents
                .iter()
                .all(|p| self.finished.contains(p) || !self.started.contains(p));
            if ready {
                self.started.insert(child.id.clone());
                now.push(child.clone());
            }
        }
        now
    }
}

/// Runs one consumer over the stream's lineage: `read` reads one shard (by index) from a start
/// position until the shard ends or the consumer stops. The `initial` shards start at the
/// scenario's position and count towards readiness; children start at TRIM_HORIZON.
pub async fn follow<F, Fut>(
    ctx: &Ctx,
    c: &Arc<ConsumerState>,
    initial: Vec<usize>,
    ready: Readiness,
    mut read: F,
) where
    F: FnMut(usize, StartPosition, Option<Readiness>) -> Fut,
    Fut: Future<Output = ShardEnd> + Send + 'static,
{
    let shards = &ctx.shared.shards;
    let mut lineage = Lineage::default();
    let mut tasks: JoinSet<(usize, ShardEnd)> = JoinSet::new();
    for i in initial {
        let Some(id) = shards.id(i) else { continue };
        lineage.start(&id);
        c.shard_started(i, ctx.shared.elapsed());
        let task = read(i, ctx.start, Some(ready.clone()));
        tasks.spawn(async move { (i, task.await) });
    }
    drop(ready);
    while let Some(done) = tasks.join_next().await {
        let Ok((i, ShardEnd::Closed(children))) = done else {
            continue;
        };
        let Some(id) = shards.id(i) else { continue };
        shards.close(i);
        c.shard_finished(i, ctx.shared.elapsed());
        c.event("shards read to their end");
        if c.cancel.is_cancelled() {
            continue;
        }
        for child in lineage.finish(&id, &children) {
            let j = shards.index_or_add(&child.id, &child.parents);
            c.shard_started(j, ctx.shared.elapsed());
            let task = read(j, StartPosition::TrimHorizon, None);
            tasks.spawn(async move { (j, task.await) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn child(id: &str, parents: &[&str]) -> Child {
        Child {
            id: id.into(),
            parents: parents.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn a_split_starts_both_children_and_a_merge_waits_for_both_parents() {
        let mut l = Lineage::default();
        l.start("0");
        // 0 splits into 1 and 2.
        let split = [child("1", &["0"]), child("2", &["0"])];
        assert_eq!(l.finish("0", &split), split.to_vec());
        // 1 and 2 merge into 3: 3 waits for the second parent.
        let merged = [child("3", &["1", "2"])];
        assert_eq!(l.finish("1", &merged), vec![]);
        assert_eq!(l.finish("2", &merged), merged.to_vec());
        // Told twice, a child starts once.
        assert_eq!(l.finish("2", &merged), vec![]);
    }

    #[test]
    fn a_parent_the_consumer_never_read_is_not_waited_for() {
        let mut l = Lineage::default();
        l.start("4");
        assert_eq!(
            l.finish("4", &[child("6", &["4", "5"])]),
            vec![child("6", &["4", "5"])]
        );
    }
}
