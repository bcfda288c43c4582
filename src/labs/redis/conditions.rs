//! The conditions a run puts the primary under: CPU load from a busy client, and memory filled to
//! near its maxmemory.

use super::*;

/// Keeps the primary's CPU busy: a Lua loop of ~`busy` every `period`, on its own connection.
pub(super) async fn cpu_load(ends: Endpoints, shared: Arc<RedisShared>, cancel: CancellationToken) {
    let Ok(mut con) = connect(&ends.primary).await else {
        return;
    };
    let script =
        redis::Script::new("local x = 0 for i = 1, tonumber(ARGV[1]) do x = x + i end return x");
    while !cancel.is_cancelled() {
        if !shared.cpu_load.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        let _: Result<i64, _> = script.arg(300_000).invoke_async(&mut con).await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Fills the primary to about 97% of a `maxmemory` latlab sets (latlab's own servers only), or
/// removes the fill. The filler keys are the run's key prefix (`keys`) followed by `fill:N`.
pub async fn set_memory_full(
    ends: &Endpoints,
    p: &mut MultiplexedConnection,
    keys: &str,
    full: bool,
) -> anyhow::Result<()> {
    if !ends.local {
        bail!(
            "filling memory is only done on latlab's own redis-server, not on {}",
            ends.primary_label
        );
    }
    if !full {
        delete_matching(p, &format!("{}fill:*", glob_literal(keys))).await?;
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg("maxmemory")
            .arg("0")
            .query_async(p)
            .await?;
        return Ok(());
    }
    // Room for the largest value the lab writes, three times, above the fill.
    let cap: u64 = 384 * 1024 * 1024;
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(cap)
        .query_async(p)
        .await?;
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("volatile-lru")
        .query_async(p)
        .await?;
    let chunk = bytes::Bytes::from(vec![b'f'; 1024 * 1024]);
    for i in 0..1000u32 {
        let info: String = redis::cmd("INFO").arg("memory").query_async(p).await?;
        let used = offset(&info, "used_memory").unwrap_or(0);
        if used >= cap * 97 / 100 {
            return caught_up(p).await;
        }
        let _: () = p.set(format!("{keys}fill:{i}"), chunk.as_ref()).await?;
    }
    Ok(())
}
