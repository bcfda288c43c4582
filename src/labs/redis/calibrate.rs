//! `latlab calibrate`'s probe of Redis: the two links the lab shapes on its own servers, as a
//! latency profile's `[links]` (`links.redis-client`, `links.redis-replication`), measured on the
//! user's pair (`--redis-primary`, `--redis-replica`) or, on the embedded target, on latlab's own
//! pair shaped by `--latency-profile`'s links (which is how its recovery is tested).
//!
//! - The client link: PING round trips to the primary, back to back on one connection, split
//!   evenly into two like legs (one clock cannot split a round trip). The replica's PING is
//!   measured too and its median printed: the lab has one client link for both.
//! - The replication link: `SET` then `WAIT 1 1000` in one pipeline. The primary answers WAIT
//!   once a replica acknowledges the write's offset: it sends the write and `REPLCONF GETACK`
//!   together, and the replica's `REPLCONF ACK` comes back over the same link. So a WAIT round
//!   trip is the client's round trip plus the replication link's. Each WAIT follows a PING of
//!   its own; the differences' quantiles are the replication link's round trip (a median of
//!   differences, not a difference of medians, which a skewed client link biases: 3% high in a
//!   simulation of the recovery test's links against 1.8% for the differences, and the summand
//!   fit the Kinesis commit uses came back 10% high there), split evenly into the two directions,
//!   as the lab's shaper delays both.
//!
//! Nothing is created on the user's pair but one key under the run's prefix, overwritten each
//! sample and deleted at the end (after an error or Ctrl-C too). What is not measured: the
//! links' bandwidths (a run keeps its scenario link's), and more than the first replica to
//! acknowledge (`WAIT 1`).

use redis::aio::MultiplexedConnection;

use super::endpoints::Endpoints;
use super::local::{CLIENT_LINK, LinkProfile, LocalRedis, REPLICATION_LINK};
use super::target::RedisTarget;
use crate::lab_kit::calibrate::fit::{self, Shape};
use crate::lab_kit::calibrate::{Calibration, PlanLine, Probe, round_trips, timed};

impl crate::labs::Calibrated for super::RedisLab {
    const CALIBRATES: bool = true;

    fn calibration_target(embedded: bool, target: &RedisTarget) -> anyhow::Result<()> {
        if target.redis_primary.is_some() || embedded {
            return Ok(());
        }
        anyhow::bail!(
            "calibrating Redis on another endpoint or AWS measures a pair you name: --redis-primary URL and --redis-replica URL (latlab's own redis-server pair is measured on the embedded target only)"
        )
    }

    fn calibration_plan(
        samples: usize,
        run: &str,
        _embedded: bool,
        target: &RedisTarget,
        _prices: &crate::lab_kit::cost::Prices,
    ) -> Vec<PlanLine> {
        let on = match (&target.redis_primary, &target.redis_replica) {
            (Some(p), Some(r)) => format!(
                "your Redis pair {} -> {} (nothing created)",
                super::local::redact(p),
                super::local::redact(r)
            ),
            _ => "latlab's own redis-server pair, its links as --latency-profile's [links]".into(),
        };
        vec![PlanLine {
            what: format!(
                "{on}; {samples} PINGs to each, {samples} SET + WAIT 1 on key {}calibrate (deleted at the end)",
                super::key_prefix(run)
            ),
            usd: 0.0,
            keys: Vec::new(),
        }]
    }

    fn calibrate(
        probe: &Probe,
        target: &RedisTarget,
        cal: &mut Calibration,
    ) -> impl std::future::Future<Output = anyhow::Result<()>> + Send {
        run(probe, target.clone(), cal)
    }
}

async fn run(p: &Probe, target: RedisTarget, cal: &mut Calibration) -> anyhow::Result<()> {
    // latlab's own pair lives as long as the probe (its servers stop when it is dropped).
    let (ends, _local) = match (&target.redis_primary, &target.redis_replica) {
        (Some(primary), Some(replica)) => (Endpoints::open(primary, replica, false)?, None),
        _ => {
            let link = |name: &str| {
                let loopback = LinkProfile::resolve("loopback")?;
                Ok::<_, anyhow::Error>(match p.profile.as_ref().and_then(|pr| pr.links.get(name)) {
                    Some(d) => loopback.with_delay(
                        d.clone(),
                        p.profile.as_ref().map_or("", |pr| pr.name.as_str()),
                    ),
                    None => loopback,
                })
            };
            let local = LocalRedis::start(link(REPLICATION_LINK)?, link(CLIENT_LINK)?).await?;
            p.say(format!(
                "started latlab's own redis-server pair (replication link: {}; client link: {})",
                local.shaper.link().describe(),
                link(CLIENT_LINK)?.describe()
            ));
            let ends = Endpoints::open(&local.primary_url(), &local.replica_url(), true)?;
            (ends, Some(local))
        }
    };
    let (mut primary, replica) = ends.check().await?;
    let key = format!("{}calibrate", super::key_prefix(&p.run_id));
    let r = measure(p, &ends, &primary, &replica, &key, cal).await;
    match redis::cmd("DEL")
        .arg(&key)
        .query_async::<i64>(&mut primary)
        .await
    {
        Ok(_) => p.say(format!("deleted key {key} on {}", ends.primary_label)),
        Err(e) => p.say(format!(
            "could not delete key {key} on {}: {e} (`latlab cleanup --run {}` finds it by its prefix)",
            ends.primary_label, p.run_id
        )),
    }
    r
}

async fn measure(
    p: &Probe,
    ends: &Endpoints,
    primary: &MultiplexedConnection,
    replica: &MultiplexedConnection,
    key: &str,
    cal: &mut Calibration,
) -> anyhow::Result<()> {
    let n = p.samples;
    let ping = |con: &MultiplexedConnection| {
        let mut c = con.clone();
        async move { redis::cmd("PING").query_async::<String>(&mut c).await }
    };
    let (to_primary, failed) = round_trips(p, n, f64::INFINITY, |_| ping(primary)).await;
    p.cancelled()?;
    let (to_replica, _) = round_trips(p, n, f64::INFINITY, |_| ping(replica)).await;
    p.cancelled()?;
    let client_rtt = Shape::of(&to_primary).ok_or_else(|| {
        anyhow::anyhow!("{} answered no PING ({failed} failed)", ends.primary_label)
    })?;
    let leg = fit::summand(client_rtt, None);
    cal.delay(
        &format!("links.{CLIENT_LINK}"),
        leg,
        to_primary.len(),
        format!(
            "{} PING round trips to the primary (median {:.3} ms) fitted as the sum of two like legs: one client clock cannot split a round trip, so it is split evenly between the two directions",
            to_primary.len(),
            client_rtt.median
        ),
    );
    if let Some(r) = Shape::of(&to_replica) {
        cal.notes.push(format!(
            "Redis: PING round trips to the replica, median {:.3} ms, beside the primary's {:.3} ms; links.{CLIENT_LINK} is the primary's (the lab has one client link for both)",
            r.median, client_rtt.median
        ));
    }

    // SET and WAIT 1 in one pipeline: the client's round trip plus the replication link's.
    // Each follows a PING of its own, and the replication link's round trip is taken from the
    // pairs' differences: the client's spread then cancels in the median (a right-skewed
    // client link shifts the median of a sum, which subtracting medians would keep).
    let (mut waits, mut diffs, mut failed) = (Vec::new(), Vec::new(), 0);
    for i in 0..n {
        p.cancelled()?;
        let (ping_r, ping_ms) = timed(ping(primary)).await;
        let mut c = primary.clone();
        let (wait_r, wait_ms) = timed(async {
            redis::pipe()
                .set(key, i)
                .ignore()
                .cmd("WAIT")
                .arg(1)
                .arg(1000)
                .query_async::<(i64,)>(&mut c)
                .await
        })
        .await;
        match (ping_r, wait_r) {
            (Ok(_), Ok((acked,))) if acked >= 1 => {
                waits.push(wait_ms);
                diffs.push(wait_ms - ping_ms);
            }
            _ => failed += 1,
        }
    }
    let wait = Shape::of(&waits).ok_or_else(|| {
        anyhow::anyhow!(
            "no SET + WAIT 1 was acknowledged by a replica within 1 s ({failed} tries): is {} replicating from {}?",
            ends.replica_label,
            ends.primary_label
        )
    })?;
    cal.left.push(format!(
        "the Redis links' bandwidths (links.{CLIENT_LINK} and links.{REPLICATION_LINK} are one-way delays; a run keeps its scenario link's bandwidth)"
    ));
    let replication_rtt = Shape::of(&diffs).expect("one per wait");
    let replication = fit::summand(replication_rtt, None);
    cal.delay(
        &format!("links.{REPLICATION_LINK}"),
        replication,
        waits.len(),
        format!(
            "{} SET + WAIT 1 round trips (median {:.3} ms; {failed} not acknowledged within 1 s), each less a PING round trip just before it: the replication link's round trip (the write and REPLCONF GETACK out, the replica's ACK back; median of the differences {:.3} ms), fitted as the sum of two like legs: one clock cannot split it, so it is split evenly between the two directions",
            waits.len(),
            wait.median,
            replication_rtt.median
        ),
    );
    Ok(())
}
