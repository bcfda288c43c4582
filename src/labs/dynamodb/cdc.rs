//! The change-data-capture consumers, each a real SDK client:
//! - a DynamoDB Streams poller: GetRecords on every shard of the table's stream, every interval;
//! - Lambda on DynamoDB Streams: each shard polled four times a second (Lambda's documented base
//!   rate), a batch of up to the batch size handed to the function at each poll that has records;
//! - a fan-out consumer: RegisterStreamConsumer and SubscribeToShard on the Kinesis data stream
//!   the table streams its changes to, re-subscribing from its continuation when a subscription
//!   ends.
//!
//! Each finds the run's item in a change's new image (its run, seq and write start), measures
//! write start -> now and counts it in the ledger; a change that is not this run's is foreign.
//! Every consumer starts at the oldest change, so every acknowledged write is in its count.
//! A shard's reader follows its iterator, and after an error it cannot read past (an expired
//! iterator, a trimmed shard) it asks for a new one after the last change it had.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::config::{CdcKind, LAMBDA_POLL};
use super::state::{CdcState, Ledger};
use crate::aws::{error_code, error_line};

/// How often a stream reader looks for new shards (a table's partitions grow).
const SHARDS_EVERY: Duration = Duration::from_secs(5);
/// After a failed call, how long a reader waits before the next (on top of the SDK's retries).
const ERROR_PAUSE: Duration = Duration::from_secs(1);
/// The most records one GetRecords returns (DynamoDB Streams' limit).
const GET_RECORDS_MAX: i32 = 1000;

/// What every consumer needs.
#[derive(Clone)]
pub struct Capturing {
    pub streams: aws_sdk_dynamodbstreams::Client,
    pub kinesis: aws_sdk_kinesis::Client,
    /// The table's DynamoDB stream, when it has one.
    pub stream_arn: Option<String>,
    /// The Kinesis data stream its changes go to, when it has one.
    pub kinesis_arn: Option<String>,
    pub run: String,
    pub ledger: Arc<Mutex<Ledger>>,
    pub clock: Instant,
    /// Fan-out consumers registered (their ARNs), for the end of the run.
    pub registered: Arc<Mutex<Vec<String>>>,
}

async fn pause(c: &CdcState, d: Duration) -> bool {
    tokio::select! {
        _ = c.cancel.cancelled() => false,
        _ = tokio::time::sleep(d) => true,
    }
}

/// One change's run, seq and write start, from its new image's attributes.
fn change(run: Option<&str>, seq: Option<&str>, at: Option<&str>, own: &str) -> Option<(u64, i64)> {
    if run? != own {
        return None;
    }
    Some((seq?.parse().ok()?, at?.parse().ok()?))
}

impl Capturing {
    /// Counts changes handed to `c` at once (one poll's, one pushed event's, one invocation's).
    fn deliver(&self, c: &CdcState, changes: &[Option<(u64, i64)>]) {
        let now_us = latlab_core::clock::now_micros();
        let second = self.clock.elapsed().as_secs();
        {
            let mut ledger = self.ledger.lock();
            for (seq, _) in changes.iter().flatten() {
                ledger.received(c.slot, *seq);
            }
        }
        let mut m = c.metrics.lock();
        for ch in changes {
            match ch {
                Some((_, at)) => m
                    .latency
                    .record(now_us.saturating_sub(*at).max(0) as u64, second),
                None => {
                    c.foreign.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }
    }
}

/// Starts `c`'s tasks; they stop when its token is cancelled.
pub fn start(cx: &Capturing, c: &Arc<CdcState>) {
    match c.kind {
        CdcKind::StreamsPoller { interval_ms } => {
            tokio::spawn(stream_reader(
                cx.clone(),
                c.clone(),
                Duration::from_millis(interval_ms),
                GET_RECORDS_MAX,
            ));
        }
        CdcKind::Lambda { batch_size } => {
            tokio::spawn(stream_reader(
                cx.clone(),
                c.clone(),
                LAMBDA_POLL,
                batch_size.min(GET_RECORDS_MAX as u32) as i32,
            ));
        }
        CdcKind::FanOut => {
            tokio::spawn(fan_out(cx.clone(), c.clone()));
        }
    }
}

/// Reads every shard of the table's stream, one task a shard, finding new shards as they come.
async fn stream_reader(cx: Capturing, c: Arc<CdcState>, every: Duration, limit: i32) {
    let Some(arn) = cx.stream_arn.clone() else {
        c.set_status("no stream: the table's stream is off");
        return;
    };
    let mut reading: HashSet<String> = HashSet::new();
    let mut tasks = Vec::new();
    while !c.cancel.is_cancelled() {
        match cx.streams.describe_stream().stream_arn(&arn).send().await {
            Ok(out) => {
                let shards = out
                    .stream_description()
                    .map(|d| d.shards().to_vec())
                    .unwrap_or_default();
                for s in shards {
                    let Some(id) = s.shard_id().map(str::to_string) else {
                        continue;
                    };
                    if reading.insert(id.clone()) {
                        tasks.push(tokio::spawn(shard_reader(
                            cx.clone(),
                            c.clone(),
                            arn.clone(),
                            id,
                            every,
                            limit,
                        )));
                    }
                }
                if !reading.is_empty() {
                    c.set_status(format!("reading {} shard(s)", reading.len()));
                }
            }
            Err(e) => c.failed(
                &error_code(&e),
                format!("DescribeStream: {}", error_line(&e)),
            ),
        }
        if !pause(&c, SHARDS_EVERY).await {
            break;
        }
    }
    for t in tasks {
        let _ = t.await;
    }
    c.set_status("stopped");
}

/// A shard iterator of `shard`: after `after` when given, else from its oldest change.
async fn iterator(
    cx: &Capturing,
    arn: &str,
    shard: &str,
    after: Option<&str>,
) -> Result<Option<String>, (String, String)> {
    use aws_sdk_dynamodbstreams::types::ShardIteratorType;
    let req = cx
        .streams
        .get_shard_iterator()
        .stream_arn(arn)
        .shard_id(shard);
    let req = match after {
        Some(seq) => req
            .shard_iterator_type(ShardIteratorType::AfterSequenceNumber)
            .sequence_number(seq),
        None => req.shard_iterator_type(ShardIteratorType::TrimHorizon),
    };
    req.send().await.map(|o| o.shard_iterator).map_err(|e| {
        (
            error_code(&e),
            format!("GetShardIterator: {}", error_line(&e)),
        )
    })
}

/// Polls one shard: GetRecords every `every`, up to `limit` changes a call.
async fn shard_reader(
    cx: Capturing,
    c: Arc<CdcState>,
    arn: String,
    shard: String,
    every: Duration,
    limit: i32,
) {
    let mut last: Option<String> = None;
    let mut it: Option<String> = None;
    let mut next = Instant::now();
    while !c.cancel.is_cancelled() {
        let now = Instant::now();
        if next > now && !pause(&c, next - now).await {
            break;
        }
        next = next.max(now) + every;
        let token = match it.take() {
            Some(t) => t,
            None => match iterator(&cx, &arn, &shard, last.as_deref()).await {
                Ok(Some(t)) => t,
                Ok(None) => break,
                Err((code, line)) => {
                    c.failed(&code, line);
                    if !pause(&c, ERROR_PAUSE).await {
                        break;
                    }
                    continue;
                }
            },
        };
        let answer = tokio::select! {
            _ = c.cancel.cancelled() => break,
            a = cx.streams.get_records().shard_iterator(&token).limit(limit).send() => a,
        };
        match answer {
            Ok(out) => {
                let records = out.records();
                let changes: Vec<Option<(u64, i64)>> = records
                    .iter()
                    .map(|r| {
                        let image = r.dynamodb().and_then(|d| d.new_image());
                        let s = |k: &str| {
                            image.and_then(|i| i.get(k)).and_then(|v| match v {
                                aws_sdk_dynamodbstreams::types::AttributeValue::S(s)
                                | aws_sdk_dynamodbstreams::types::AttributeValue::N(s) => {
                                    Some(s.as_str())
                                }
                                _ => None,
                            })
                        };
                        change(s("run"), s("seq"), s("at"), &cx.run)
                    })
                    .collect();
                if let Some(seq) = records
                    .last()
                    .and_then(|r| r.dynamodb())
                    .and_then(|d| d.sequence_number())
                {
                    last = Some(seq.to_string());
                }
                {
                    let mut m = c.metrics.lock();
                    m.calls += 1;
                    if records.is_empty() {
                        m.empty += 1;
                    } else if matches!(c.kind, CdcKind::Lambda { .. }) {
                        m.invocations += 1;
                    }
                }
                cx.deliver(&c, &changes);
                match out.next_shard_iterator {
                    Some(n) => it = Some(n),
                    // A closed shard, read to its end.
                    None => break,
                }
            }
            Err(e) => {
                let code = error_code(&e);
                c.failed(&code, error_line(&e));
                match code.as_str() {
                    // The iterator cannot be used again: a new one after the last change had.
                    "ExpiredIteratorException" | "TrimmedDataAccessException" => {}
                    // A third reader, refused: the same iterator once the shard has room.
                    _ => it = Some(token),
                }
                if !pause(&c, ERROR_PAUSE).await {
                    break;
                }
            }
        }
    }
}

/// Registers a fan-out consumer on the Kinesis destination, waits until it is ACTIVE, and
/// subscribes to every shard.
async fn fan_out(cx: Capturing, c: Arc<CdcState>) {
    use aws_sdk_kinesis::types::ConsumerStatus;
    let Some(stream_arn) = cx.kinesis_arn.clone() else {
        c.set_status("no Kinesis destination");
        return;
    };
    c.set_status("registering consumer");
    let name = format!("latlab-{}-{}", cx.run, c.name);
    let arn = loop {
        match cx
            .kinesis
            .register_stream_consumer()
            .stream_arn(&stream_arn)
            .consumer_name(&name)
            .send()
            .await
        {
            Ok(out) => match out.consumer.map(|k| k.consumer_arn) {
                Some(arn) => break arn,
                None => {
                    c.failed("", "RegisterStreamConsumer answered no consumer".into());
                    return;
                }
            },
            Err(e) => {
                c.failed(
                    &error_code(&e),
                    format!("RegisterStreamConsumer: {}", error_line(&e)),
                );
                if !pause(&c, ERROR_PAUSE).await {
                    return;
                }
            }
        }
    };
    cx.registered.lock().push(arn.clone());
    for _ in 0..600 {
        let active = cx
            .kinesis
            .describe_stream_consumer()
            .consumer_arn(&arn)
            .send()
            .await
            .ok()
            .and_then(|d| d.consumer_description)
            .is_some_and(|d| d.consumer_status == ConsumerStatus::Active);
        if active || !pause(&c, Duration::from_millis(200)).await {
            break;
        }
    }
    let shards = match cx
        .kinesis
        .list_shards()
        .stream_arn(&stream_arn)
        .send()
        .await
    {
        Ok(out) => out
            .shards()
            .iter()
            .map(|s| s.shard_id().to_string())
            .collect::<Vec<_>>(),
        Err(e) => {
            c.failed(&error_code(&e), format!("ListShards: {}", error_line(&e)));
            return;
        }
    };
    c.set_status(format!("subscribed to {} shard(s)", shards.len()));
    let tasks: Vec<_> = shards
        .into_iter()
        .map(|s| tokio::spawn(subscribe(cx.clone(), c.clone(), arn.clone(), s)))
        .collect();
    for t in tasks {
        let _ = t.await;
    }
    c.set_status("stopped");
}

/// One shard's subscriptions, each from where the last ended.
async fn subscribe(cx: Capturing, c: Arc<CdcState>, arn: String, shard: String) {
    use aws_sdk_kinesis::types::{
        ShardIteratorType, StartingPosition, SubscribeToShardEventStream,
    };
    let mut continuation: Option<String> = None;
    while !c.cancel.is_cancelled() {
        let position = match &continuation {
            Some(seq) => StartingPosition::builder()
                .r#type(ShardIteratorType::AfterSequenceNumber)
                .sequence_number(seq)
                .build(),
            None => StartingPosition::builder()
                .r#type(ShardIteratorType::TrimHorizon)
                .build(),
        }
        .expect("type is set");
        let result = tokio::select! {
            _ = c.cancel.cancelled() => return,
            r = cx.kinesis.subscribe_to_shard().consumer_arn(&arn).shard_id(&shard).starting_position(position).send() => r,
        };
        let mut out = match result {
            Ok(out) => out,
            Err(e) => {
                c.failed(
                    &error_code(&e),
                    format!("SubscribeToShard: {}", error_line(&e)),
                );
                if !pause(&c, ERROR_PAUSE).await {
                    return;
                }
                continue;
            }
        };
        loop {
            let event = tokio::select! {
                _ = c.cancel.cancelled() => return,
                e = out.event_stream.recv() => e,
            };
            match event {
                Ok(Some(SubscribeToShardEventStream::SubscribeToShardEvent(ev))) => {
                    continuation = Some(ev.continuation_sequence_number().to_string());
                    let changes: Vec<Option<(u64, i64)>> = ev
                        .records()
                        .iter()
                        .map(|r| destination_change(r.data().as_ref(), &cx.run))
                        .collect();
                    {
                        let mut m = c.metrics.lock();
                        m.calls += 1;
                        if changes.is_empty() {
                            m.empty += 1;
                        }
                    }
                    cx.deliver(&c, &changes);
                }
                Ok(Some(_)) => {}
                // The subscription's five minutes are over: again from its continuation.
                Ok(None) => break,
                Err(e) => {
                    c.failed("", format!("SubscribeToShard's stream: {e}"));
                    if !pause(&c, ERROR_PAUSE).await {
                        return;
                    }
                    break;
                }
            }
        }
    }
}

/// A change as Kinesis Data Streams for DynamoDB writes it (JSON with the table's `dynamodb`
/// part and its `NewImage`): its run's seq and write start, None when it is not this run's.
fn destination_change(data: &[u8], run: &str) -> Option<(u64, i64)> {
    let v: serde_json::Value = serde_json::from_slice(data).ok()?;
    let image = v.get("dynamodb")?.get("NewImage")?;
    let attr = |k: &str| {
        image
            .get(k)
            .and_then(|a| a.get("S").or_else(|| a.get("N")))
            .and_then(|s| s.as_str())
    };
    change(attr("run"), attr("seq"), attr("at"), run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_destination_record_gives_its_runs_seq_and_write_start() {
        let data = br#"{"awsRegion":"us-east-1","eventName":"INSERT","tableName":"t","dynamodb":{"ApproximateCreationDateTime":1,"Keys":{"pk":{"S":"k1"}},"NewImage":{"pk":{"S":"k1"},"run":{"S":"0a1b2c3d"},"seq":{"N":"42"},"at":{"N":"1700000000000000"}}},"eventSource":"aws:dynamodb"}"#;
        assert_eq!(
            destination_change(data, "0a1b2c3d"),
            Some((42, 1_700_000_000_000_000))
        );
        assert_eq!(destination_change(data, "ffffffff"), None);
        assert_eq!(destination_change(b"not json", "0a1b2c3d"), None);
    }
}
