//! A shared-throughput consumer: GetRecords on every shard at an interval, each call counted
//! against the shard's 5 calls/s with every other reader's. When the shard refuses a call the SDK
//! backs off and retries; what still fails after its retries is counted as escaped. A closed
//! shard read to its end ends the task with its children (`lineage.rs` starts them).

use std::sync::Arc;
use std::time::Instant;

use aws_sdk_kinesis::Client;

use super::config::{ConsumerSpec, IntervalMode, StartPosition};
use super::lineage::ShardEnd;
use super::reader::ShardReader;
use super::{Ctx, Readiness, pause, received};
use crate::labs::kinesis::state::ConsumerState;

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
    let mut generation = 0;
    while !c.cancel.is_cancelled() {
        // A live change of retry mode or quota: the next call goes through the new client.
        if let Some(client) = c.newer_client(&mut generation) {
            reader.set_client(client);
        }
        if let Some((op, answered)) = reader.lacking() {
            ctx.shared.unsupported(&c, op, answered);
            break;
        }
        let started = Instant::now();
        reader.ensure_iterator(&c, &mut ready).await;
        if reader.has_iterator() {
            match reader.read(spec.limit).await {
                Ok(out) => {
                    let batch: Vec<_> = out
                        .records()
                        .iter()
                        .map(|r| received(&ctx.shared.run.run_id, shard, r))
                        .collect();
                    ctx.shared.deliver(&c, &batch);
                    c.set_behind(shard, out.millis_behind_latest());
                    c.set_status(match out.millis_behind_latest() {
                        Some(ms) if ms > 0 => format!("reading, {ms} ms behind"),
                        _ => "reading".to_string(),
                    });
                    if let Some(children) = reader.children().await {
                        return ShardEnd::Closed(children);
                    }
                }
                Err(f) => {
                    if f.code == "ExpiredIteratorException" {
                        c.event("iterator expired");
                    }
                    c.escaped(&f.code, format!("GetRecords: {}", f.line));
                }
            }
        }
        let interval = ctx
            .shared
            .settings
            .lock()
            .pollers
            .interval
            .unwrap_or(spec.interval);
        let wait = match spec.interval_mode {
            IntervalMode::SleepAfter => interval,
            IntervalMode::FixedRate => interval.saturating_sub(started.elapsed()),
        };
        if !pause(&c.cancel, wait).await {
            break;
        }
    }
    ShardEnd::Stopped
}
