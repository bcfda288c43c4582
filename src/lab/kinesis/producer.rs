//! The producer: PutRecord at a fixed rate, each payload carrying its `seq` and send time. A put
//! that still fails after the SDK's retries is sent once more with the same `seq` (as the seed's
//! producer did), so a duplicate can reach the consumers exactly as it would in the field.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use aws_sdk_kinesis::Client;
use aws_sdk_kinesis::primitives::Blob;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::Ctx;
use crate::aws::error_code;
use crate::scenario::ProducerSpec;

pub async fn run(ctx: Ctx, client: Client, spec: ProducerSpec, cancel: CancellationToken) {
    let in_flight = Arc::new(Semaphore::new(spec.max_in_flight as usize));
    let mut rate = spec.rate;
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut puts = tokio::task::JoinSet::new();
    ctx.shared.producing.lock().0 = Some(ctx.shared.elapsed());
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tick.tick() => {}
        }
        let settings = ctx.shared.settings.lock().clone();
        if settings.rate != rate && settings.rate > 0.0 {
            rate = settings.rate;
            tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        }
        let Ok(permit) = in_flight.clone().acquire_owned().await else {
            break;
        };
        let seq = ctx.shared.ledger.lock().allocate();
        let (ctx2, client) = (ctx.clone(), client.clone());
        puts.spawn(async move {
            let _permit = permit;
            put(&ctx2, &client, seq, settings.payload as usize).await;
        });
        while puts.try_join_next().is_some() {}
    }
    ctx.shared.producing.lock().1 = Some(ctx.shared.elapsed());
    // Puts already sent are awaited: their records are in flight and must be accounted for.
    while puts.join_next().await.is_some() {}
}

async fn put(ctx: &Ctx, client: &Client, seq: u64, size: usize) {
    let shared = &ctx.shared;
    for attempt in 0..2 {
        let sent_us = crate::clock::now_micros();
        let data = crate::lab::payload::encode(seq, sent_us, &shared.run_id, size);
        let started = Instant::now();
        shared.producer.sent.fetch_add(1, Ordering::Relaxed);
        let result = client
            .put_record()
            .stream_name(&ctx.stream)
            .partition_key(seq.to_string())
            .data(Blob::new(data))
            .send()
            .await;
        match result {
            Ok(_) => {
                shared
                    .producer
                    .put_latency
                    .lock()
                    .record(started.elapsed().as_micros() as u64, shared.second());
                shared.producer.acked.fetch_add(1, Ordering::Relaxed);
                shared.ledger.lock().ack(seq, Instant::now());
                return;
            }
            Err(e) => {
                shared.producer_sdk.escaped(&error_code(&e));
                if attempt == 0 {
                    shared.producer.resent.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
    shared.producer.failed.fetch_add(1, Ordering::Relaxed);
}
