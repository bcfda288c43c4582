//! The Kinesis Client Library's polling consumer, emulated from its source: per shard, GetRecords
//! with `limit` records at most, and between calls the KCL's idle time. What each KCL line does,
//! with the file it comes from (github.com/awslabs/amazon-kinesis-client; KCL 2.x as of tag
//! v2.7.3, KCL 3.x as of v3.5.1, KCL 1.x as of the v1.x branch):
//!
//! - **KCL 2.x and 3.x** (`retrieval/polling/PrefetchRecordsPublisher.java`,
//!   `DefaultGetRecordsCacheDaemon.makeRetrievalAttempt`): `sleepBeforeNextCall()`, then
//!   GetRecords, then `lastSuccessfulCall = Instant.now()`. The sleep is the idle time less the
//!   time since the last successful call *returned* (so one call every idle time + the call's own
//!   latency, at most); the very first call does not sleep. After a failure `lastSuccessfulCall`
//!   is not set (3.x) or is set to the failure's time (2.x, "so that we back off idleMillis for
//!   the next call"): either way the next call waits the full idle time. No exponential back-off
//!   of its own; the SDK's retries sit under it. An empty answer does not change the sleep.
//!   - The idle time's default: `idleTimeBetweenReadsInMillis = 1500L` (`PollingConfig.java`;
//!     `SimpleRecordsFetcherFactory.idleMillisBetweenCalls = 1500L` when it is not set).
//!   - Its floor: none in 2.x; KCL 3.x raises anything under `MIN_IDLE_MILLIS_BETWEEN_READS =
//!     200L` to it with a warning (`PollingConfig.idleTimeBetweenReadsInMillis(long)`).
//!   - Records a call: `DEFAULT_MAX_RECORDS = 10000`, also its maximum (`PollingConfig.java`).
//! - **KCL 1.x** (`clientlibrary/lib/worker/`): the Worker's loop calls `consumeShard()` and
//!   then `Thread.sleep(idleTimeInMilliseconds)` on every pass (`Worker.runProcessLoop`), and a
//!   shard's next ProcessTask (one GetRecords) starts only on a pass after the last one ended.
//!   A task that read nothing sleeps the full idle time (`ProcessTask.handleNoRecords`); one that
//!   was throttled sleeps `DEFAULT_TASK_BACKOFF_TIME_MILLIS = 500L` (`ProcessTask.backoff`).
//!   The idle time's default: `DEFAULT_IDLETIME_BETWEEN_READS_MILLIS = 1000L`
//!   (`KinesisClientLibConfiguration.java`); records a call: `DEFAULT_MAX_RECORDS = 10000`.
//!
//! What is not emulated: the lease table in DynamoDB (leases, checkpoints, the lease taker's
//! calls) and the prefetch queue's bound (records here are handed to the processor as the call
//! returns, which a consumer that keeps up sees too). The KCL does not set the SDK's retries
//! (`common/KinesisClientUtil.java` changes only the HTTP client), so the scenario's SDK retry
//! settings apply, as for a poller.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_kinesis::Client;

use anyhow::bail;
use serde::{Deserialize, Serialize};

use super::config::{ConsumerSpec, StartPosition};
use super::lineage::ShardEnd;
use super::reader::ShardReader;
use super::{Ctx, Readiness, pause, received};
use crate::labs::kinesis::state::ConsumerState;

/// Which Kinesis Client Library's polling loop a `kcl` consumer runs (`kcl.rs` gives each from
/// the library's source).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum KclVersion {
    /// KCL 1.x: the Worker's passes every idle time (default 1 s).
    #[serde(rename = "1.x")]
    V1,
    /// KCL 2.x: the idle time (default 1.5 s) after each call returns, no floor.
    #[serde(rename = "2.x")]
    V2,
    /// KCL 3.x: 2.x's loop with a 200 ms floor on the idle time.
    #[serde(rename = "3.x")]
    V3,
}

impl KclVersion {
    pub fn name(self) -> &'static str {
        match self {
            KclVersion::V1 => "KCL 1.x",
            KclVersion::V2 => "KCL 2.x",
            KclVersion::V3 => "KCL 3.x",
        }
    }

    /// Its idle time between reads when the scenario sets none.
    pub fn default_idle(self) -> Duration {
        match self {
            KclVersion::V1 => KCL1_IDLE,
            KclVersion::V2 | KclVersion::V3 => KCL2_IDLE,
        }
    }
}

/// A KCL consumer's idle time: the version's default, or the one set, raised to KCL 3.x's floor
/// as KCL 3.x raises it (`kcl.rs`).
pub(super) fn kcl_idle(version: KclVersion, set: Option<Duration>) -> anyhow::Result<Duration> {
    let idle = set.unwrap_or(version.default_idle());
    if idle.is_zero() || idle > Duration::from_secs(60) {
        bail!(
            "idle_time must be more than 0 and at most 60s, got {}",
            latlab_core::units::format_duration(idle)
        );
    }
    Ok(match version {
        KclVersion::V3 => idle.max(KCL3_FLOOR),
        KclVersion::V1 | KclVersion::V2 => idle,
    })
}

/// KCL 2.x's default idle time between reads (`PollingConfig.idleTimeBetweenReadsInMillis`).
pub const KCL2_IDLE: Duration = Duration::from_millis(1500);
/// KCL 3.x's floor on the idle time (`PollingConfig.MIN_IDLE_MILLIS_BETWEEN_READS`).
pub const KCL3_FLOOR: Duration = Duration::from_millis(200);
/// KCL 1.x's default idle time (`KinesisClientLibConfiguration.DEFAULT_IDLETIME_BETWEEN_READS_MILLIS`).
pub const KCL1_IDLE: Duration = Duration::from_millis(1000);
/// KCL 1.x's back-off after a failed task (`DEFAULT_TASK_BACKOFF_TIME_MILLIS`).
pub const KCL1_BACKOFF: Duration = Duration::from_millis(500);
/// Records one GetRecords asks for, in every version (`DEFAULT_MAX_RECORDS`).
pub const MAX_RECORDS: u32 = 10_000;

/// A KCL version's loop as a model parameter, with the library's files and settings it follows.
pub fn provenance(version: KclVersion) -> latlab_core::provenance::Param {
    use latlab_core::provenance::{Param, Provenance, Source};
    let (value, note) = match version {
        KclVersion::V2 | KclVersion::V3 => (
            format!(
                "{}: GetRecords of at most {} records, then the idle time ({} by default{}) counted from when the call returned, the full idle time after a failure",
                version.name(),
                latlab_core::units::thousands(MAX_RECORDS as u64),
                latlab_core::units::format_duration(KCL2_IDLE),
                if version == KclVersion::V3 {
                    ", 200ms at least"
                } else {
                    ", no floor"
                },
            ),
            "the Kinesis Client Library's source (github.com/awslabs/amazon-kinesis-client, \
             tags v2.7.3 and v3.5.1): PrefetchRecordsPublisher.sleepBeforeNextCall and \
             makeRetrievalAttempt; PollingConfig.idleTimeBetweenReadsInMillis = 1500L, \
             MIN_IDLE_MILLIS_BETWEEN_READS = 200L (3.x), DEFAULT_MAX_RECORDS = 10000; it sets no \
             SDK retries of its own (KinesisClientUtil), so the scenario's apply",
        ),
        KclVersion::V1 => (
            format!(
                "KCL 1.x: one GetRecords of at most {} records per Worker pass, a pass every idle time ({} by default); the full idle time after an empty read, {} after a failure",
                latlab_core::units::thousands(MAX_RECORDS as u64),
                latlab_core::units::format_duration(KCL1_IDLE),
                latlab_core::units::format_duration(KCL1_BACKOFF),
            ),
            "the Kinesis Client Library's source (github.com/awslabs/amazon-kinesis-client, \
             branch v1.x): Worker.runProcessLoop, ProcessTask.handleNoRecords and backoff; \
             KinesisClientLibConfiguration.DEFAULT_IDLETIME_BETWEEN_READS_MILLIS = 1000L, \
             DEFAULT_TASK_BACKOFF_TIME_MILLIS = 500L, DEFAULT_MAX_RECORDS = 10000",
        ),
    };
    Param::new(
        match version {
            KclVersion::V1 => "kcl.1.x",
            KclVersion::V2 => "kcl.2.x",
            KclVersion::V3 => "kcl.3.x",
        },
        value,
        Provenance::new(Source::AwsDoc, note),
    )
}

/// How long a KCL waits before its next GetRecords, given how its last call went.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Last {
    /// No call yet.
    None,
    /// The last call returned this many records at this instant.
    Returned { at: Instant, records: usize },
    /// The last call failed (after the SDK's retries) at this instant.
    Failed { at: Instant },
}

/// The instant the next GetRecords starts, by the version's loop. `worker_start` is when a KCL
/// 1.x Worker's loop began (its passes come every idle time from there).
pub fn next_call(
    version: KclVersion,
    idle: Duration,
    last: Last,
    worker_start: Instant,
) -> Instant {
    match version {
        KclVersion::V2 | KclVersion::V3 => match last {
            Last::None => worker_start,
            // sleepBeforeNextCall: idle less the time since the call returned.
            Last::Returned { at, .. } => at + idle,
            // lastSuccessfulCall is null (3.x) or now (2.x): the full idle time from here.
            Last::Failed { at } => at + idle,
        },
        KclVersion::V1 => {
            let task_end = match last {
                Last::None => return worker_start,
                Last::Returned { at, records: 0 } => at + idle,
                Last::Returned { at, .. } => at,
                Last::Failed { at } => at + KCL1_BACKOFF,
            };
            // The first of the Worker's passes (every idle time) after the task ended.
            let since = task_end.saturating_duration_since(worker_start);
            let passes = since.as_nanos().div_ceil(idle.as_nanos().max(1));
            worker_start + idle * passes.min(u32::MAX as u128) as u32
        }
    }
}

pub async fn run(
    ctx: Ctx,
    client: Client,
    c: Arc<ConsumerState>,
    spec: ConsumerSpec,
    shard: usize,
    start: StartPosition,
    mut ready: Option<Readiness>,
) -> ShardEnd {
    let Some(id) = ctx.shared.shards.id(shard) else {
        return ShardEnd::Stopped;
    };
    let mut reader = ShardReader::new(client, &ctx.stream, &id, start);
    let worker_start = Instant::now();
    let mut last = Last::None;
    while !c.cancel.is_cancelled() {
        if let Some((op, answered)) = reader.lacking() {
            ctx.shared.unsupported(&c, op, answered);
            break;
        }
        let at = next_call(spec.kcl_version, spec.interval, last, worker_start);
        if !pause(&c.cancel, at.saturating_duration_since(Instant::now())).await {
            break;
        }
        reader.ensure_iterator(&c, &mut ready).await;
        if !reader.has_iterator() {
            last = Last::Failed { at: Instant::now() };
            continue;
        }
        match reader.read(spec.limit).await {
            Ok(out) => {
                let batch: Vec<_> = out
                    .records()
                    .iter()
                    .map(|r| received(&ctx.shared.run.run_id, shard, r))
                    .collect();
                last = Last::Returned {
                    at: Instant::now(),
                    records: batch.len(),
                };
                ctx.shared.deliver(&c, &batch);
                c.set_behind(shard, out.millis_behind_latest());
                c.set_status(match out.millis_behind_latest() {
                    Some(ms) if ms > 0 => format!("processing, {ms} ms behind"),
                    _ => "idle between reads".to_string(),
                });
                if let Some(children) = reader.children().await {
                    return ShardEnd::Closed(children);
                }
            }
            Err(f) => {
                last = Last::Failed { at: Instant::now() };
                if f.code == "ExpiredIteratorException" {
                    c.event("iterator expired");
                }
                c.escaped(&f.code, format!("GetRecords: {}", f.line));
            }
        }
    }
    ShardEnd::Stopped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn kcl2_counts_its_idle_time_from_when_the_last_call_returned() {
        let t0 = Instant::now();
        let idle = KCL2_IDLE;
        assert_eq!(next_call(KclVersion::V2, idle, Last::None, t0), t0);
        // A call that took 40 ms and returned at 40 ms: the next at 1,540 ms, not 1,500.
        let returned = Last::Returned {
            at: t0 + ms(40),
            records: 3,
        };
        assert_eq!(next_call(KclVersion::V2, idle, returned, t0), t0 + ms(1540));
        // Empty or not, the same.
        let empty = Last::Returned {
            at: t0 + ms(40),
            records: 0,
        };
        assert_eq!(next_call(KclVersion::V2, idle, empty, t0), t0 + ms(1540));
        // After a throttle that escaped the SDK (its retries took 3 s): the full idle from then.
        let failed = Last::Failed { at: t0 + ms(3000) };
        assert_eq!(next_call(KclVersion::V3, idle, failed, t0), t0 + ms(4500));
    }

    #[test]
    fn kcl1_reads_on_the_workers_passes_and_sleeps_after_an_empty_read_or_a_throttle() {
        let t0 = Instant::now();
        let idle = KCL1_IDLE;
        // Records at 30 ms: the task ends, the next pass is at 1 s.
        let got = Last::Returned {
            at: t0 + ms(30),
            records: 5,
        };
        assert_eq!(next_call(KclVersion::V1, idle, got, t0), t0 + ms(1000));
        // Nothing at 30 ms: the task sleeps 1 s to 1,030 ms, the next pass is at 2 s.
        let empty = Last::Returned {
            at: t0 + ms(30),
            records: 0,
        };
        assert_eq!(next_call(KclVersion::V1, idle, empty, t0), t0 + ms(2000));
        // Throttled at 1,200 ms: 500 ms back-off to 1,700, the next pass at 2 s.
        let failed = Last::Failed { at: t0 + ms(1200) };
        assert_eq!(next_call(KclVersion::V1, idle, failed, t0), t0 + ms(2000));
    }
}
