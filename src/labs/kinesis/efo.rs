//! Enhanced fan-out consumers: RegisterStreamConsumer, then SubscribeToShard on every shard,
//! re-subscribing after the last ContinuationSequenceNumber whenever a subscription ends (after
//! 5 minutes), is taken over, or its connection drops, so no record is lost or repeated. A closed
//! shard's last event names its children; `lineage.rs` subscribes to them once their parents are
//! finished.
//!
//! The SDK consumer handles each pushed event as one batch. The Lambda flavour hands records to an
//! in-process handler in batches of at most `batch_size`, gathered for the batching window.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_kinesis::Client;
use aws_sdk_kinesis::types::{ShardIteratorType, StartingPosition, SubscribeToShardEventStream};
use parking_lot::Mutex;
use tokio::sync::mpsc;

use super::config::{ConsumerKind, ConsumerSpec, StartPosition};
use super::lineage::{Child, ShardEnd};
use super::{Ctx, Readiness, pause, received};
use crate::aws::{error_code, error_line};
use crate::labs::kinesis::state::{ConsumerState, Received};

pub async fn run(
    ctx: Ctx,
    client: Client,
    c: Arc<ConsumerState>,
    spec: ConsumerSpec,
    consumer_name: String,
    // The shards it starts on, and the readiness they count down.
    (initial, ready): (Vec<usize>, Readiness),
    registered: Arc<Mutex<Vec<String>>>,
) {
    c.set_status("registering consumer");
    let Some(arn) = register(&ctx, &client, &c, &consumer_name, &registered).await else {
        return;
    };
    // Lambda's handler runs apart from the subscriptions; a bounded queue holds pushed events,
    // and a full queue makes the subscription wait rather than drop anything.
    let sink = if spec.kind == ConsumerKind::LambdaEfo {
        let (tx, rx) = mpsc::channel::<Vec<Received>>(64);
        tokio::spawn(lambda_handler(ctx.clone(), c.clone(), spec.clone(), rx));
        Some(tx)
    } else {
        None
    };
    super::lineage::follow(&ctx, &c, initial, ready, |i, start, ready| {
        subscribe_loop(
            ctx.clone(),
            client.clone(),
            c.clone(),
            arn.clone(),
            i,
            start,
            ready,
            sink.clone(),
        )
    })
    .await;
}

/// Registers the consumer (or takes over one of this run's name) and waits until it is ACTIVE.
async fn register(
    ctx: &Ctx,
    client: &Client,
    c: &ConsumerState,
    name: &str,
    registered: &Mutex<Vec<String>>,
) -> Option<String> {
    let mut attempt = 0u32;
    // Answers in a row saying the endpoint lacks the operation.
    let mut lacking = 0u32;
    let arn = loop {
        match client
            .register_stream_consumer()
            .stream_arn(&ctx.stream_arn)
            .consumer_name(name)
            .send()
            .await
        {
            Ok(out) => {
                let arn = out.consumer().map(|x| x.consumer_arn().to_string())?;
                registered.lock().push(arn.clone());
                break arn;
            }
            Err(e) if error_code(&e) == "ResourceInUseException" => {
                // Already registered under this name (a run that did not clean up): reuse it.
                match client
                    .describe_stream_consumer()
                    .stream_arn(&ctx.stream_arn)
                    .consumer_name(name)
                    .send()
                    .await
                {
                    Ok(d) => break d.consumer_description()?.consumer_arn().to_string(),
                    Err(e) => c.set_status(format!("DescribeStreamConsumer: {}", error_line(&e))),
                }
            }
            Err(e) => {
                c.escaped(
                    &error_code(&e),
                    format!("RegisterStreamConsumer: {}", error_line(&e)),
                );
                if let Some(answered) = crate::aws::unsupported(&e) {
                    lacking += 1;
                    if lacking >= 2 {
                        ctx.shared
                            .unsupported(c, "RegisterStreamConsumer", &answered);
                        return None;
                    }
                } else {
                    lacking = 0;
                }
            }
        }
        attempt += 1;
        if !pause(
            &c.cancel,
            Duration::from_millis(500 * u64::from(attempt.min(10))),
        )
        .await
        {
            return None;
        }
    };
    c.set_status("waiting for the consumer to be ACTIVE");
    lacking = 0;
    loop {
        match client
            .describe_stream_consumer()
            .consumer_arn(&arn)
            .send()
            .await
        {
            Ok(d)
                if d.consumer_description()
                    .is_some_and(|x| x.consumer_status().as_str() == "ACTIVE") =>
            {
                ctx.shared
                    .log(format!("{}: consumer {name} is ACTIVE", c.name));
                return Some(arn);
            }
            Ok(_) => lacking = 0,
            Err(e) => {
                c.set_status(format!("DescribeStreamConsumer: {}", error_line(&e)));
                // An endpoint without DescribeStreamConsumer would leave the consumer waiting
                // for ACTIVE for ever: it stops, saying so, as for RegisterStreamConsumer.
                if let Some(answered) = crate::aws::unsupported(&e) {
                    c.escaped(
                        &error_code(&e),
                        format!("DescribeStreamConsumer: {}", error_line(&e)),
                    );
                    lacking += 1;
                    if lacking >= 2 {
                        ctx.shared
                            .unsupported(c, "DescribeStreamConsumer", &answered);
                        return None;
                    }
                } else {
                    lacking = 0;
                }
            }
        }
        if !pause(&c.cancel, Duration::from_millis(200)).await {
            return None;
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn subscribe_loop(
    ctx: Ctx,
    client: Client,
    c: Arc<ConsumerState>,
    arn: String,
    shard: usize,
    start: StartPosition,
    mut ready: Option<Readiness>,
    sink: Option<mpsc::Sender<Vec<Received>>>,
) -> ShardEnd {
    let Some(shard_id) = ctx.shared.shards.id(shard) else {
        return ShardEnd::Stopped;
    };
    let mut continuation: Option<String> = None;
    // When a LATEST consumer's first subscription was asked for: until an event gives it a
    // continuation, it subscribes again from there (AT_TIMESTAMP), never from a later LATEST
    // that would skip what arrived between.
    let mut first_subscribed: Option<std::time::SystemTime> = None;
    let mut failures = 0u32;
    // Answers in a row saying the endpoint lacks the operation.
    let mut lacking = 0u32;
    while !c.cancel.is_cancelled() {
        let position = match &continuation {
            Some(seq) => StartingPosition::builder()
                .r#type(ShardIteratorType::AfterSequenceNumber)
                .sequence_number(seq)
                .build(),
            None => match (start, first_subscribed) {
                (StartPosition::Latest, Some(at)) => StartingPosition::builder()
                    .r#type(ShardIteratorType::AtTimestamp)
                    .timestamp(aws_smithy_types::DateTime::from(at))
                    .build(),
                (StartPosition::Latest, None) => StartingPosition::builder()
                    .r#type(ShardIteratorType::Latest)
                    .build(),
                (StartPosition::TrimHorizon, _) => StartingPosition::builder()
                    .r#type(ShardIteratorType::TrimHorizon)
                    .build(),
            },
        }
        .expect("type is set");
        let asked = std::time::SystemTime::now();
        let sent = Instant::now();
        let result = tokio::select! {
            _ = c.cancel.cancelled() => return ShardEnd::Stopped,
            r = client.subscribe_to_shard().consumer_arn(&arn).shard_id(&shard_id).starting_position(position).send() => r,
        };
        let mut out = match result {
            Ok(out) => out,
            Err(e) => {
                let code = error_code(&e);
                c.escaped(&code, format!("SubscribeToShard: {}", error_line(&e)));
                failures += 1;
                match crate::aws::unsupported(&e) {
                    Some(answered) => {
                        lacking += 1;
                        if lacking >= 2 {
                            ctx.shared.unsupported(&c, "SubscribeToShard", &answered);
                            break;
                        }
                    }
                    None => lacking = 0,
                }
                // ResourceInUse and LimitExceeded clear within seconds; anything else backs off.
                let wait = match code.as_str() {
                    "ResourceInUseException" | "LimitExceededException" => Duration::from_secs(1),
                    _ => Duration::from_millis(500 * u64::from(failures.min(10))),
                };
                if !pause(&c.cancel, wait).await {
                    break;
                }
                continue;
            }
        };
        failures = 0;
        first_subscribed.get_or_insert(asked);
        c.event("subscriptions");
        c.set_status(format!(
            "subscribed ({} ms to subscribe)",
            sent.elapsed().as_millis()
        ));
        if let Some(r) = ready.take() {
            r.shard_ready();
        }
        loop {
            let event = tokio::select! {
                _ = c.cancel.cancelled() => return ShardEnd::Stopped,
                e = out.event_stream.recv() => e,
            };
            match event {
                Ok(Some(SubscribeToShardEventStream::SubscribeToShardEvent(ev))) => {
                    let batch: Vec<Received> = ev
                        .records()
                        .iter()
                        .map(|r| received(&ctx.shared.run.run_id, shard, r))
                        .collect();
                    continuation = Some(ev.continuation_sequence_number().to_string());
                    c.set_behind(shard, Some(ev.millis_behind_latest()));
                    // A closed shard's last event names its children (its continuation null).
                    let children: Vec<Child> = ev
                        .child_shards()
                        .iter()
                        .map(|c| Child {
                            id: c.shard_id().to_string(),
                            parents: c.parent_shards().to_vec(),
                        })
                        .collect();
                    if !batch.is_empty() {
                        match &sink {
                            Some(tx) => {
                                if tx.send(batch).await.is_err() {
                                    return ShardEnd::Stopped;
                                }
                            }
                            None => ctx.shared.deliver(&c, &batch),
                        }
                    }
                    if !children.is_empty() {
                        return ShardEnd::Closed(children);
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) => {
                    c.event("subscription ended");
                    c.set_status("subscription ended: re-subscribing");
                    break;
                }
                Err(e) => {
                    let what = match e.as_service_error() {
                        Some(s) => format!("{s:?}")
                            .split('(')
                            .next()
                            .unwrap_or("error")
                            .to_string(),
                        None => "connection lost".to_string(),
                    };
                    c.event(&format!("stream ended by {what}"));
                    c.set_status(format!("{what}: re-subscribing"));
                    if !pause(&c.cancel, Duration::from_secs(1)).await {
                        return ShardEnd::Stopped;
                    }
                    break;
                }
            }
        }
    }
    ShardEnd::Stopped
}

/// Lambda's side of a fan-out mapping: invocations of at most `batch_size` records, gathered for
/// the batching window (0: each pushed event is handed over at once).
async fn lambda_handler(
    ctx: Ctx,
    c: Arc<ConsumerState>,
    spec: ConsumerSpec,
    mut rx: mpsc::Receiver<Vec<Received>>,
) {
    let size = spec.batch_size.max(1) as usize;
    let mut pending: Vec<Received> = Vec::new();
    let mut deadline: Option<tokio::time::Instant> = None;
    loop {
        let next = match deadline {
            Some(d) => tokio::select! {
                r = rx.recv() => r,
                _ = tokio::time::sleep_until(d) => {
                    for b in pending.chunks(size) {
                        ctx.shared.deliver(&c, b);
                    }
                    pending.clear();
                    deadline = None;
                    continue;
                }
            },
            None => rx.recv().await,
        };
        let Some(batch) = next else { break };
        pending.extend(batch);
        if spec.batching_window.is_zero() || pending.len() >= size {
            let full = if spec.batching_window.is_zero() {
                pending.len()
            } else {
                pending.len() / size * size
            };
            for b in pending[..full].chunks(size) {
                ctx.shared.deliver(&c, b);
            }
            pending.drain(..full);
            deadline = if pending.is_empty() { None } else { deadline };
        }
        if !pending.is_empty() && deadline.is_none() {
            deadline = Some(tokio::time::Instant::now() + spec.batching_window);
        }
    }
    for b in pending.chunks(size) {
        ctx.shared.deliver(&c, b);
    }
}
