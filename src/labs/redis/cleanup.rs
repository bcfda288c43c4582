//! What Redis runs left (`latlab cleanup`): keys under `latlab:RUN_ID:` on the primary the user
//! names (latlab's own redis-server pair goes with the run). Each run's marker key
//! (`latlab:RUN_ID:run`) says when it ran.

use super::endpoints::connect;
use super::{PREFIX, delete_matching, glob_literal, key_prefix};

/// The run's marker key: a hash of when it started and which latlab it was.
pub fn marker_key(run_id: &str) -> String {
    format!("{}run", key_prefix(run_id))
}

/// Writes the run's marker, so that `latlab cleanup` can tell when the run was should it die
/// before deleting its keys.
pub async fn mark(
    con: &mut redis::aio::MultiplexedConnection,
    run_id: &str,
) -> redis::RedisResult<()> {
    redis::cmd("HSET")
        .arg(marker_key(run_id))
        .arg(crate::lab_kit::plan::TAG_CREATED)
        .arg(crate::lab_kit::plan::now_rfc3339())
        .arg(crate::lab_kit::plan::TAG_VERSION)
        .arg(env!("CARGO_PKG_VERSION"))
        .query_async(con)
        .await
}
use crate::lab_kit::plan::leftovers::{CleanupContext, Found, Leftover, run_id_of};

impl crate::labs::Cleanup for super::RedisLab {
    async fn leftovers(_cx: &CleanupContext<'_>, target: &super::target::RedisTarget) -> Found {
        let mut found = Found::default();
        let Some(url) = &target.redis_primary else {
            found.notes.push(
                "Redis: no primary named; pass --redis-primary (and --redis-replica) to look for keys runs left under latlab:".into(),
            );
            return found;
        };
        let label = super::local::redact(url);
        let result: anyhow::Result<()> = async {
            let client = redis::Client::open(url.as_str())?;
            let mut con =
                tokio::time::timeout(std::time::Duration::from_secs(10), connect(&client))
                    .await
                    .map_err(|_| anyhow::anyhow!("{label} did not answer within 10 s"))??;
            // Every key under latlab:, counted by run.
            let mut counts: std::collections::BTreeMap<String, u64> = Default::default();
            let mut cursor: u64 = 0;
            for _ in 0..1_000_000 {
                let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(format!("{}*", glob_literal(PREFIX)))
                    .arg("COUNT")
                    .arg(1000)
                    .query_async(&mut con)
                    .await?;
                for k in keys {
                    let id = k
                        .strip_prefix(PREFIX)
                        .and_then(|r| r.split_once(':'))
                        .map(|(id, _)| id);
                    if let Some(id) = id.and_then(run_id_of) {
                        *counts.entry(id.to_string()).or_default() += 1;
                    }
                }
                cursor = next;
                if cursor == 0 {
                    break;
                }
            }
            for (run, keys) in counts {
                let created: Option<String> = redis::cmd("HGET")
                    .arg(marker_key(&run))
                    .arg(crate::lab_kit::plan::TAG_CREATED)
                    .query_async(&mut con)
                    .await
                    .ok()
                    .flatten();
                found.items.push(Leftover {
                    lab: "Redis",
                    kind: "keys".into(),
                    name: format!("{}* on {label}", key_prefix(&run)),
                    handle: key_prefix(&run),
                    created: created.and_then(|c| humantime::parse_rfc3339_weak(&c).ok()),
                    run_id: run,
                    detail: format!("{keys} key{}", if keys == 1 { "" } else { "s" }),
                });
            }
            Ok(())
        }
        .await;
        if let Err(e) = result {
            found
                .notes
                .push(format!("Redis: cannot look on {label}: {e:#}"));
            found.incomplete = true;
        }
        found
    }

    /// Deletes a run's keys (and no other run's: the pattern is its prefix, its glob characters
    /// escaped).
    async fn remove(
        _cx: &CleanupContext<'_>,
        target: &super::target::RedisTarget,
        item: &Leftover,
    ) -> Result<(), String> {
        if item.handle != key_prefix(&item.run_id) || run_id_of(&item.run_id).is_none() {
            return Err(format!(
                "refusing to delete under {:?}: not a run's latlab:RUN_ID: prefix",
                item.handle
            ));
        }
        let url = target.redis_primary.as_ref().ok_or("no Redis primary")?;
        let client = redis::Client::open(url.as_str()).map_err(|e| e.to_string())?;
        let mut con = connect(&client).await.map_err(|e| e.to_string())?;
        delete_matching(&mut con, &format!("{}*", glob_literal(&item.handle)))
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}
