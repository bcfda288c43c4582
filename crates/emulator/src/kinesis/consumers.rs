//! RegisterStreamConsumer, DescribeStreamConsumer, ListStreamConsumers, DeregisterStreamConsumer.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use super::error::{ApiError, ApiResult};
use super::json::{Req, check_name, preview};
use super::store::{ACCOUNT, Consumer, Stream, parse_consumer_arn};
use super::{Kinesis, empty, epoch_secs};

impl Kinesis {
    /// The stream of a consumer request: `StreamARN` (required with `ConsumerName`).
    fn consumer_stream(&self, req: &Req) -> ApiResult<Arc<Stream>> {
        let arn = req.str("StreamARN")?;
        let name = super::store::stream_name_from_arn(arn).ok_or_else(|| {
            ApiError::validation(
                "StreamARN",
                &format!("'{}'", preview(arn)),
                "Member must satisfy regular expression pattern: arn:aws.*:kinesis:.*:\\d{12}:stream/\\S+",
            )
        })?;
        self.stream_by_name(name)
    }

    /// A consumer named by `ConsumerARN`, or by `StreamARN` + `ConsumerName`.
    pub(super) fn find_consumer(&self, req: &Req) -> ApiResult<(Arc<Stream>, Consumer)> {
        let (stream, name) = match req.str_opt("ConsumerARN")? {
            Some(arn) => {
                let (stream, consumer) = parse_consumer_arn(arn).ok_or_else(|| {
                    ApiError::validation(
                        "ConsumerARN",
                        &format!("'{}'", preview(arn)),
                        "Member must satisfy regular expression pattern: ^(arn):aws.*:kinesis:.*:\\d{12}:.*stream\\/[a-zA-Z0-9_.-]+\\/consumer\\/[a-zA-Z0-9_.-]+:[0-9]+",
                    )
                })?;
                let stream = self
                    .stream_by_name(stream)
                    .map_err(|_| consumer_not_found(arn))?;
                let found = stream
                    .consumers
                    .lock()
                    .iter()
                    .find(|c| *c.arn == *arn)
                    .cloned();
                let _ = consumer;
                return found
                    .map(|c| (stream, c))
                    .ok_or_else(|| consumer_not_found(arn));
            }
            None => match req.str_opt("ConsumerName")? {
                Some(name) => (self.consumer_stream(req)?, name),
                None => {
                    return Err(ApiError::invalid_argument(
                        "Either ConsumerARN or both StreamARN and ConsumerName must be provided.",
                    ));
                }
            },
        };
        let found = stream
            .consumers
            .lock()
            .iter()
            .find(|c| c.name == name)
            .cloned();
        match found {
            Some(c) => Ok((stream, c)),
            None => Err(ApiError::not_found(format!(
                "Consumer {name}, stream {}, account {ACCOUNT}, not found.",
                stream.arn
            ))),
        }
    }

    pub(super) fn register_consumer(&self, req: &Req) -> ApiResult<Value> {
        let stream = self.consumer_stream(req)?;
        let name = req.str("ConsumerName")?;
        check_name("ConsumerName", name)?;
        let now = self.clock.now();
        let mut consumers = stream.consumers.lock();
        if consumers.iter().any(|c| c.name == name) {
            return Err(ApiError::in_use(format!(
                "Consumer {name} under stream {} already exists for account {ACCOUNT}.",
                stream.name
            )));
        }
        if consumers.len() >= self.limits.max_consumers_per_stream as usize {
            return Err(ApiError::limit_exceeded(format!(
                "Consumer limit of {} has been reached for stream {} under account {ACCOUNT}.",
                self.limits.max_consumers_per_stream, stream.name
            )));
        }
        let creating = consumers
            .iter()
            .filter(|c| c.status(now) == "CREATING")
            .count();
        if creating >= self.limits.max_creating_consumers as usize {
            return Err(ApiError::limit_exceeded(format!(
                "Stream {} under account {ACCOUNT} already has {creating} consumers in CREATING; \
                 at most {} may be created at once.",
                stream.name, self.limits.max_creating_consumers
            )));
        }
        let created = self.clock.now_micros();
        let consumer = Consumer {
            name: name.to_string(),
            arn: Arc::from(format!(
                "{}/consumer/{name}:{}",
                stream.arn,
                created / 1_000_000
            )),
            created_micros: created,
            active_at: now + self.limits.consumer_activation,
        };
        let out = json!({ "Consumer": describe(&consumer, now, None) });
        consumers.push(consumer);
        Ok(out)
    }

    pub(super) fn describe_consumer(&self, req: &Req) -> ApiResult<Value> {
        let (stream, c) = self.find_consumer(req)?;
        Ok(json!({ "ConsumerDescription": describe(&c, self.clock.now(), Some(&stream.arn)) }))
    }

    pub(super) fn list_consumers(&self, req: &Req) -> ApiResult<Value> {
        let stream = self.consumer_stream(req)?;
        let max = req.int_opt("MaxResults", 1, 10_000)?.unwrap_or(100) as usize;
        let start = match req.str_opt("NextToken")? {
            Some(t) => t
                .parse::<usize>()
                .map_err(|_| ApiError::invalid_argument("NextToken is not valid."))?,
            None => 0,
        };
        let now = self.clock.now();
        let consumers = stream.consumers.lock();
        let end = consumers.len().min(start.saturating_add(max));
        let page: Vec<Value> = consumers[start.min(end)..end]
            .iter()
            .map(|c| describe(c, now, None))
            .collect();
        let mut out = json!({ "Consumers": page });
        if end < consumers.len() {
            out["NextToken"] = Value::String(end.to_string());
        }
        Ok(out)
    }

    pub(super) fn deregister_consumer(&self, req: &Req) -> ApiResult<Value> {
        let (stream, consumer) = self.find_consumer(req)?;
        stream.consumers.lock().retain(|c| c.arn != consumer.arn);
        for shard in stream.all_shards() {
            if let Some(sub) = shard.lock().forget_consumer(&consumer.arn) {
                let _ = sub.cancel.send(ApiError::not_found(format!(
                    "Consumer {} was deregistered.",
                    consumer.arn
                )));
            }
        }
        Ok(empty())
    }
}

fn describe(c: &Consumer, now: Instant, stream_arn: Option<&str>) -> Value {
    let mut v = json!({
        "ConsumerName": c.name,
        "ConsumerARN": &*c.arn,
        "ConsumerStatus": c.status(now),
        "ConsumerCreationTimestamp": epoch_secs(c.created_micros),
    });
    if let Some(arn) = stream_arn {
        v["StreamARN"] = arn.into();
    }
    v
}

fn consumer_not_found(arn: &str) -> ApiError {
    ApiError::not_found(format!("Consumer {arn}, account {ACCOUNT}, not found."))
}
