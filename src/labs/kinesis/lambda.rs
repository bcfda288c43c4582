//! Lambda's event source mapping with a standard iterator, emulated: per shard it polls GetRecords
//! at a base rate of once per `poll_interval` (1 s), polls again at once while it is behind (a full
//! batch, or MillisBehindLatest > 0), gathers records for the batching window, and hands batches of
//! at most `batch_size` to an in-process handler. Its calls count against the shard's GetRecords
//! budget like any poller's. A closed shard read to its end hands over what it gathered, then
//! ends the task with its children (`lineage.rs` starts them).

use std::sync::Arc;
use std::time::Instant;

use aws_sdk_kinesis::Client;

use super::lineage::ShardEnd;
use super::reader::ShardReader;
use super::{Ctx, Readiness, pause, received};
use crate::labs::kinesis::config::{ConsumerSpec, StartPosition};
use crate::labs::kinesis::state::{ConsumerState, Received};

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
    let mut end = ShardEnd::Stopped;
    let mut pending: Vec<Received> = Vec::new();
    let mut window_started: Option<Instant> = None;
    let mut next_poll = Instant::now();
    while !c.cancel.is_cancelled() {
        if let Some((op, answered)) = reader.lacking() {
            ctx.shared.unsupported(&c, op, answered);
            break;
        }
        if Instant::now() >= next_poll {
            let poll_started = Instant::now();
            let mut behind = false;
            reader.ensure_iterator(&c, &mut ready).await;
            if reader.has_iterator() {
                match reader.read(spec.batch_size).await {
                    Ok(out) => {
                        let n = out.records().len();
                        pending.extend(
                            out.records()
                                .iter()
                                .map(|r| received(&ctx.shared.run.run_id, shard, r)),
                        );
                        if n > 0 && window_started.is_none() {
                            window_started = Some(Instant::now());
                        }
                        behind = n >= spec.batch_size as usize
                            || out.millis_behind_latest().unwrap_or(0) > 0;
                        c.set_behind(shard, out.millis_behind_latest());
                        c.set_status(if behind {
                            "behind: polling again at once"
                        } else {
                            "polling"
                        });
                        if let Some(children) = reader.children().await {
                            end = ShardEnd::Closed(children);
                            break;
                        }
                    }
                    Err(f) => {
                        c.escaped(&f.code, format!("GetRecords: {}", f.line));
                    }
                }
            }
            next_poll = if behind {
                Instant::now()
            } else {
                poll_started + spec.poll_interval
            };
        }
        let window_over = window_started.is_some_and(|t| t.elapsed() >= spec.batching_window);
        if !pending.is_empty() && (window_over || pending.len() >= spec.batch_size as usize) {
            for batch in pending.chunks(spec.batch_size as usize) {
                ctx.shared.deliver(&c, batch);
            }
            pending.clear();
            window_started = None;
        }
        let mut wake = next_poll;
        if let Some(t) = window_started {
            wake = wake.min(t + spec.batching_window);
        }
        if !pause(&c.cancel, wake.saturating_duration_since(Instant::now())).await {
            break;
        }
    }
    // Records gathered but not yet handed over still reach the handler (before any child's).
    for batch in pending.chunks(spec.batch_size.max(1) as usize) {
        ctx.shared.deliver(&c, batch);
    }
    end
}
