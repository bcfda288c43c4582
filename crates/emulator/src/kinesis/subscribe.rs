//! SubscribeToShard: an HTTP/1.1 chunked answer carrying AWS event-stream frames.
//!
//! The answer opens with an `initial-response` event at once (the SDKs wait for it), then a
//! pusher task sends `SubscribeToShardEvent`s as records become due: each record is due at its
//! arrival plus a per-consumer sample of the profile's fan-out push delay, never before the record
//! ahead of it. Delivery is limited to the consumer's read rate per shard (2 MB/s by default), and
//! an empty event is sent after a quiet interval so the client always has a fresh
//! ContinuationSequenceNumber. The subscription ends cleanly after its duration, or with an
//! exception frame when another subscription takes over or the consumer or stream goes away. On a
//! closed shard, once every record is pushed, a last event carries `ChildShards` and no
//! ContinuationSequenceNumber, and the stream ends cleanly.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use serde_json::json;
use tokio::sync::{mpsc, oneshot, watch};

use super::Kinesis;
use super::error::{ApiError, ApiResult};
use super::json::preview;
use super::records::{RecordOut, counter_of};
use super::store::{ACCOUNT, Record, Shard, Stream, Subscription, sequence_number};
use crate::Body;
use crate::kinesis::stats::{Api, Outcome};
use latlab_core::shaping::Bucket;

/// Records a pusher holds in memory ahead of delivery; beyond it, it reads from the shard later.
const MAX_PENDING: usize = 10_000;

/// Record bytes in one event at most, whatever the read rate: keeps a base64-encoded event far
/// below the event-stream frame limit.
const MAX_EVENT_BYTES: u64 = 4 * 1024 * 1024;

impl Kinesis {
    pub(super) fn subscribe_to_shard(self: &Arc<Self>, req: &super::json::Req) -> ApiResult<Body> {
        let arn_text = req.str("ConsumerARN")?;
        let shard_id = req.str("ShardId")?;
        let start = req
            .object_opt("StartingPosition")?
            .ok_or_else(|| ApiError::missing("StartingPosition"))?;
        let kind = start
            .str("Type")
            .map_err(|_| ApiError::missing("StartingPosition.Type"))?
            .to_string();
        let (stream, consumer) = self.find_consumer(req)?;
        let now = self.clock.now();
        if consumer.status(now) != "ACTIVE" {
            return Err(ApiError::in_use(format!(
                "Consumer {} is not in ACTIVE state (it is {}).",
                consumer.arn,
                consumer.status(now)
            )));
        }
        let shard_lock = stream.shard(shard_id)?;
        let arn = consumer.arn.clone();
        let mut shard = shard_lock.lock();
        let index = shard.index;
        // Only an admitted call starts the once-a-second clock: a client retrying slightly faster
        // than once a second is refused now and then, never forever.
        let last_call = shard.last_subscribe_call.get(&arn).copied();
        if last_call.is_some_and(|t| now.duration_since(t) < self.limits.subscribe_min_interval) {
            drop(shard);
            self.stats.record(
                &stream.name,
                index,
                Api::SubscribeToShard,
                Outcome::THROTTLED,
            );
            return Err(ApiError::limit_exceeded(format!(
                "Rate exceeded for consumer {arn_text} and shard {shard_id}: SubscribeToShard may be called once per second per consumer and shard."
            )));
        }
        shard.last_subscribe_call.insert(arn.clone(), now);
        if let Some(existing) = shard.subscriptions.get(&arn)
            && now.duration_since(existing.started) < self.limits.subscribe_takeover_after
        {
            drop(shard);
            self.stats.record(
                &stream.name,
                index,
                Api::SubscribeToShard,
                Outcome::default(),
            );
            return Err(ApiError::in_use(format!(
                "Another active subscription exists for this consumer: {ACCOUNT}:{}:{shard_id}:{}",
                stream.name, consumer.name
            )));
        }
        let position = match kind.as_str() {
            "TRIM_HORIZON" => shard.first_counter,
            "LATEST" => shard.next_counter,
            "AT_SEQUENCE_NUMBER" | "AFTER_SEQUENCE_NUMBER" => {
                let seq = start.str_opt("SequenceNumber")?.ok_or_else(|| {
                    ApiError::invalid_argument(format!(
                        "StartingPosition.SequenceNumber is required for type {kind}."
                    ))
                })?;
                let counter = counter_of(seq, &shard, &stream)?;
                if kind == "AT_SEQUENCE_NUMBER" {
                    counter.max(shard.first_counter)
                } else {
                    counter + 1
                }
            }
            "AT_TIMESTAMP" => {
                let ts = start.timestamp_opt("Timestamp")?.ok_or_else(|| {
                    ApiError::invalid_argument(
                        "StartingPosition.Timestamp is required for type AT_TIMESTAMP.",
                    )
                })?;
                shard.counter_at_time((ts * 1e6) as i64)
            }
            other => {
                return Err(ApiError::validation(
                    "StartingPosition.Type",
                    &format!("'{}'", preview(other)),
                    "Member must satisfy enum value set: [AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER, TRIM_HORIZON, LATEST, AT_TIMESTAMP]",
                ));
            }
        };
        if let Some(old) = shard.subscriptions.remove(&arn) {
            let _ = old.cancel.send(ApiError::in_use(format!(
                "Another subscription for consumer {} and shard {shard_id} has taken over.",
                consumer.name
            )));
        }
        let (cancel, cancelled) = oneshot::channel();
        let id = self.next_subscription_id();
        shard.subscriptions.insert(
            arn.clone(),
            Subscription {
                id,
                started: now,
                cancel,
            },
        );
        let tip = shard.tip.subscribe();
        let budget = shard.efo_budget(&arn, self.limits.efo_bytes_per_sec);
        drop(shard);
        self.stats.record(
            &stream.name,
            index,
            Api::SubscribeToShard,
            Outcome::default(),
        );

        let (tx, rx) = mpsc::channel::<Bytes>(4);
        let _ = tx.try_send(message(
            &[(":event-type", "initial-response")],
            "event",
            Bytes::from_static(b"{}"),
        ));
        let pusher = Pusher {
            svc: self.clone(),
            stream,
            shard_lock: shard_lock.clone(),
            at_end: false,
            shard: index,
            consumer: arn,
            id,
            position,
            tx,
            tip,
            budget,
        };
        tokio::spawn(pusher.run(cancelled));
        let frames = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv()
                .await
                .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
        });
        Ok(StreamBody::new(frames).boxed())
    }
}

struct Pusher {
    svc: Arc<Kinesis>,
    stream: Arc<Stream>,
    shard_lock: Arc<parking_lot::Mutex<Shard>>,
    /// The shard is closed and every record of it is in `pending` or pushed.
    at_end: bool,
    shard: u32,
    consumer: Arc<str>,
    id: u64,
    /// The counter of the next record to read from the shard.
    position: u64,
    tx: mpsc::Sender<Bytes>,
    tip: watch::Receiver<u64>,
    /// The consumer's read budget on this shard: it outlives the subscription, so subscribing
    /// again does not refill it.
    budget: Arc<parking_lot::Mutex<Bucket>>,
}

impl Pusher {
    async fn run(mut self, mut cancelled: oneshot::Receiver<ApiError>) {
        let svc = self.svc.clone();
        let limits = &svc.limits;
        let deadline = svc.clock.now() + limits.subscription_duration;
        let mut pending: VecDeque<(Record, Instant)> = VecDeque::new();
        let mut last_due: Option<Instant> = None;
        let mut continuation = self.position.saturating_sub(1);
        let mut last_event = svc.clock.now();
        let end: Option<ApiError> = loop {
            self.fetch(&mut pending, &mut last_due);
            let now = svc.clock.now();
            if now >= deadline {
                break None;
            }
            let due = pending.front().is_some_and(|(_, at)| *at <= now);
            if due && self.budget.lock().can_take(now, 0) {
                let (batch, bytes) = take_due(&mut pending, now, limits);
                self.budget.lock().take(now, bytes);
                continuation = batch.last().map_or(continuation, |r| r.counter);
                let behind = pending
                    .front()
                    .filter(|(_, at)| *at <= now)
                    .map_or(0, |(r, _)| {
                        ((svc.clock.now_micros() - r.arrival_micros) / 1000).max(0)
                    });
                let frame = event(self.shard, &batch, continuation, behind);
                if self.tx.send(frame).await.is_err() {
                    break None;
                }
                self.svc.stats.delivered(
                    &self.stream.name,
                    self.shard,
                    Api::SubscribeToShard,
                    batch.len() as u64,
                    bytes,
                );
                last_event = svc.clock.now();
                continue;
            }
            if self.at_end && pending.is_empty() {
                let last = self.last_event();
                let _ = self.tx.send(last).await;
                break None;
            }
            let idle = limits.efo_idle_event_interval;
            if now.duration_since(last_event) >= idle {
                if self
                    .tx
                    .send(event(self.shard, &[], continuation, 0))
                    .await
                    .is_err()
                {
                    break None;
                }
                last_event = svc.clock.now();
                continue;
            }
            let mut wake = deadline.min(last_event + idle);
            if let Some((_, at)) = pending.front() {
                wake = wake.min(if due {
                    now + self.budget.lock().wait_for(now, 0)
                } else {
                    *at
                });
            }
            tokio::select! {
                _ = svc.clock.sleep_until(wake) => {}
                changed = self.tip.changed() => {
                    if changed.is_err() {
                        break Some(ApiError::not_found(format!("Stream {} was deleted.", self.stream.name)));
                    }
                }
                reason = &mut cancelled => break reason.ok(),
                _ = self.tx.closed() => break None,
            }
        };
        if let Some(e) = end {
            let payload = Bytes::from(json!({ "message": e.message }).to_string());
            let _ = self
                .tx
                .send(message(
                    &[
                        (":exception-type", e.code),
                        (":content-type", "application/json"),
                    ],
                    "exception",
                    payload,
                ))
                .await;
        }
        let mut shard = self.shard_lock.lock();
        if shard
            .subscriptions
            .get(&self.consumer)
            .is_some_and(|s| s.id == self.id)
        {
            shard.subscriptions.remove(&self.consumer);
        }
    }

    /// Moves new records from the shard into `pending`, each with the time it is due.
    fn fetch(&mut self, pending: &mut VecDeque<(Record, Instant)>, last_due: &mut Option<Instant>) {
        if pending.len() >= MAX_PENDING {
            return;
        }
        let push = self.svc.profile().efo_push.clone();
        let shard = self.shard_lock.lock();
        // Records trimmed before they were pushed are gone, as on the service.
        self.position = self.position.max(shard.first_counter);
        for r in shard.records.range(shard.index_of(self.position)..) {
            if pending.len() >= MAX_PENDING {
                break;
            }
            let at = (r.arrival + push.sample()).max(last_due.unwrap_or(r.arrival));
            *last_due = Some(at);
            pending.push_back((r.clone(), at));
            self.position = r.counter + 1;
        }
        self.at_end = shard
            .closed
            .as_ref()
            .is_some_and(|c| self.position >= c.end);
    }

    /// The event that ends a closed shard's subscription: no records, the shard's children, and
    /// a null ContinuationSequenceNumber (there is nothing left to continue from).
    fn last_event(&self) -> Bytes {
        let children = self
            .shard_lock
            .lock()
            .closed
            .as_ref()
            .map(|c| c.children.clone())
            .unwrap_or_default();
        let payload = json!({
            "Records": [],
            "ContinuationSequenceNumber": null,
            "MillisBehindLatest": 0,
            "ChildShards": super::records::child_shards(&self.stream, &children),
        });
        message(
            &[
                (":event-type", "SubscribeToShardEvent"),
                (":content-type", "application/json"),
            ],
            "event",
            Bytes::from(payload.to_string()),
        )
    }
}

/// The due records at the head of `pending`, up to one event's worth.
fn take_due(
    pending: &mut VecDeque<(Record, Instant)>,
    now: Instant,
    limits: &crate::kinesis::limits::KinesisLimits,
) -> (Vec<Record>, u64) {
    let mut batch = Vec::new();
    let mut bytes = 0u64;
    while let Some((r, at)) = pending.front() {
        let full = batch.len() >= limits.get_records_max_records as usize
            || (!batch.is_empty()
                && bytes + r.size() > limits.efo_bytes_per_sec.min(MAX_EVENT_BYTES));
        if *at > now || full {
            break;
        }
        bytes += r.size();
        batch.push(pending.pop_front().map(|(r, _)| r).expect("front exists"));
    }
    (batch, bytes)
}

/// A `SubscribeToShardEvent` frame.
#[doc(hidden)]
pub fn event(shard: u32, records: &[Record], continuation: u64, behind: i64) -> Bytes {
    let records: Vec<RecordOut> = records.iter().map(|r| RecordOut::new(shard, r)).collect();
    let payload = json!({
        "Records": records,
        "ContinuationSequenceNumber": sequence_number(shard, continuation),
        "MillisBehindLatest": behind,
    });
    message(
        &[
            (":event-type", "SubscribeToShardEvent"),
            (":content-type", "application/json"),
        ],
        "event",
        Bytes::from(payload.to_string()),
    )
}

/// One event-stream frame with `:message-type` and the given headers.
fn message(headers: &[(&'static str, &str)], message_type: &'static str, payload: Bytes) -> Bytes {
    let mut msg = Message::new(payload).add_header(Header::new(
        ":message-type",
        HeaderValue::String(message_type.into()),
    ));
    for (name, value) in headers {
        msg = msg.add_header(Header::new(
            *name,
            HeaderValue::String(value.to_string().into()),
        ));
    }
    let mut buf = Vec::with_capacity(msg.payload().len() + 128);
    aws_smithy_eventstream::frame::write_message_to(&msg, &mut buf)
        .expect("frames are far below the event-stream size limits");
    Bytes::from(buf)
}
