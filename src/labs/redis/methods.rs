//! One try of each way of measuring replication lag: the seed's (new clients, EXISTS until the key
//! appears), a persistent connection's, and the replication offset's (WAIT for the replica's ACK).

use super::*;

/// A field of an INFO answer (`name:value` lines).
pub fn field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
        .map(str::trim)
}

pub(super) fn offset(info: &str, name: &str) -> Option<u64> {
    field(info, name).and_then(|v| v.parse().ok())
}

/// Loops EXISTS until the key is there; the time since `since`.
pub(super) async fn poll_exists(
    con: &mut MultiplexedConnection,
    key: &str,
    since: Instant,
    limit: Duration,
) -> anyhow::Result<Duration> {
    loop {
        let n: i64 = con.exists(key).await?;
        if n == 1 {
            return Ok(since.elapsed());
        }
        if since.elapsed() > limit {
            bail!(
                "the key did not reach the replica within {}s",
                limit.as_secs()
            );
        }
    }
}

/// One try of all three methods with a value of `value`; whether every method measured.
pub async fn try_once(
    shared: &RedisShared,
    ends: &Endpoints,
    p: &mut MultiplexedConnection,
    r: &mut MultiplexedConnection,
    value: &bytes::Bytes,
    n: u64,
) -> bool {
    let mut measured = 0;
    let limit = Duration::from_secs(30);
    // 1. The seed's way: new clients for every try.
    let key = format!("{}lag:{n}:new", shared.keys);
    let result: anyhow::Result<Duration> = async {
        let mut fresh_p = connect(&ends.primary).await?;
        let _: () = fresh_p.set(&key, value.as_ref()).await?;
        let t0 = Instant::now();
        let mut fresh_r = connect(&ends.replica).await?;
        poll_exists(&mut fresh_r, &key, t0, limit).await
    }
    .await;
    match result {
        Ok(lag) => {
            measured += 1;
            shared.record(Method::NewClients, lag, None)
        }
        Err(e) => shared.failed(Method::NewClients, &e.to_string()),
    }
    // 2. A persistent replica connection.
    let key2 = format!("{}lag:{n}:persistent", shared.keys);
    let result: anyhow::Result<Duration> = async {
        let _: () = p.set(&key2, value.as_ref()).await?;
        poll_exists(r, &key2, Instant::now(), limit).await
    }
    .await;
    match result {
        Ok(lag) => {
            measured += 1;
            shared.record(Method::Persistent, lag, None)
        }
        Err(e) => shared.failed(Method::Persistent, &e.to_string()),
    }
    // 3. Offsets: WAIT for the acknowledgement; the bytes behind from both sides' INFO.
    let key3 = format!("{}lag:{n}:offset", shared.keys);
    let result: anyhow::Result<(Duration, Option<u64>)> = async {
        // WAIT blocks its connection, so the primary's offset is read on one of its own, opened
        // before the write so that connecting costs the measurement nothing.
        let mut info_p = connect(&ends.primary).await?;
        let mut info_r = r.clone();
        let _: () = p.set(&key3, value.as_ref()).await?;
        let t0 = Instant::now();
        let wait = async {
            let acked: i64 = redis::cmd("WAIT")
                .arg(1)
                .arg(limit.as_millis() as u64)
                .query_async(p)
                .await?;
            anyhow::Ok((acked, t0.elapsed()))
        };
        let offsets = async {
            let (mut pcmd, mut rcmd) = (redis::cmd("INFO"), redis::cmd("INFO"));
            pcmd.arg("replication");
            rcmd.arg("replication");
            let (pinfo, rinfo): (redis::RedisResult<String>, redis::RedisResult<String>) =
                tokio::join!(pcmd.query_async(&mut info_p), rcmd.query_async(&mut info_r));
            match (
                pinfo
                    .ok()
                    .as_deref()
                    .and_then(|i| offset(i, "master_repl_offset")),
                rinfo
                    .ok()
                    .as_deref()
                    .and_then(|i| offset(i, "slave_repl_offset")),
            ) {
                (Some(m), Some(s)) => Some(m.saturating_sub(s)),
                _ => None,
            }
        };
        let (waited, behind) = tokio::join!(wait, offsets);
        let (acked, lag) = waited?;
        if acked < 1 {
            bail!(
                "WAIT timed out: no replica acknowledged within {}s",
                limit.as_secs()
            );
        }
        Ok((lag, behind))
    }
    .await;
    match result {
        Ok((lag, behind)) => {
            measured += 1;
            shared.record(Method::Offset, lag, behind)
        }
        Err(e) => shared.failed(Method::Offset, &e.to_string()),
    }
    let _: Result<(), _> = p.del(&[key, key2, key3]).await;
    measured == 3
}

/// Waits until the replica has everything the primary wrote (after a fill, before measuring).
pub(super) async fn caught_up(p: &mut MultiplexedConnection) -> anyhow::Result<()> {
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(120_000)
        .query_async(p)
        .await?;
    if acked < 1 {
        bail!("the replica did not catch up within 120 s");
    }
    Ok(())
}
