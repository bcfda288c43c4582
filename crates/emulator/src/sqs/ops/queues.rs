//! The queue operations: CreateQueue, GetQueueUrl, GetQueueAttributes, SetQueueAttributes,
//! DeleteQueue, ListQueues, PurgeQueue, TagQueue and ListQueueTags.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};

use super::super::ACCOUNT;
use super::super::error::{SqsError, SqsResult};
use super::super::queue::{Attributes, Queue};
use super::{Cx, string_list, string_map};
use latlab_core::services::sqs::{FIFO_SUFFIX, name_problem};

/// The queue attributes the emulator knows, as GetQueueAttributes names them.
const ATTRIBUTES: &[&str] = &[
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
    "QueueArn",
    "VisibilityTimeout",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "DelaySeconds",
    "ReceiveMessageWaitTimeSeconds",
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
];

/// The attributes CreateQueue and SetQueueAttributes set.
const SETTABLE: &[&str] = &[
    "VisibilityTimeout",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "DelaySeconds",
    "ReceiveMessageWaitTimeSeconds",
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
];

impl Cx<'_> {
    pub(super) fn create_queue(&self) -> SqsResult<Value> {
        let name = self.str_req("QueueName")?;
        let given = string_map(self.req, "Attributes")?;
        let fifo_attr = given.get("FifoQueue").map(String::as_str) == Some("true");
        let fifo_name = name.ends_with(FIFO_SUFFIX);
        if let Some(problem) = name_problem(name) {
            return Err(SqsError::invalid_parameter(&format!(
                "Value {name} for parameter QueueName is invalid. Reason: {problem}."
            )));
        }
        if fifo_attr != fifo_name {
            return Err(SqsError::invalid_parameter(
                "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix, and FifoQueue must be true",
            ));
        }
        let limits = self.sqs.limits();
        let mut attributes = Attributes::defaults(limits);
        apply_attributes(&mut attributes, &given, fifo_name, limits, true)?;
        let now = self.now();
        {
            let mut deleted = self.sqs.deleted.lock();
            deleted.retain(|_, at| {
                now.saturating_duration_since(*at) < limits.deleted_queue_name_hold
            });
            if deleted.contains_key(name) {
                return Err(SqsError::queue_deleted_recently(
                    name,
                    limits.deleted_queue_name_hold,
                ));
            }
        }
        let tags = string_map(self.req, "tags")?;
        let mut queues = self.sqs.queues.write();
        if let Some(q) = queues.get(name) {
            if q.state.lock().attributes != attributes {
                return Err(SqsError::queue_name_exists(name));
            }
            return Ok(json!({ "QueueUrl": self.url(name) }));
        }
        let q = Queue::new(
            name,
            attributes,
            limits,
            self.sqs.clock.now_micros() / 1_000_000,
        );
        q.state.lock().tags = tags;
        queues.insert(name.to_string(), Arc::new(q));
        Ok(json!({ "QueueUrl": self.url(name) }))
    }

    pub(super) fn get_queue_url(&self) -> SqsResult<Value> {
        let name = self.str_req("QueueName")?;
        self.sqs.queue(name)?;
        Ok(json!({ "QueueUrl": self.url(name) }))
    }

    pub(super) fn get_queue_attributes(&self) -> SqsResult<Value> {
        let q = self.queue()?;
        let names = string_list(self.req, "AttributeNames")?;
        for n in &names {
            if n != "All" && !ATTRIBUTES.contains(&n.as_str()) {
                return Err(SqsError::invalid_attribute_name(n));
            }
        }
        let all = names.iter().any(|n| n == "All");
        let now = self.now();
        let mut s = q.state.lock();
        s.settle(now);
        let (visible, in_flight, delayed) = s.census(now);
        let a = &s.attributes;
        let mut out = serde_json::Map::new();
        for name in ATTRIBUTES {
            if !(all || names.iter().any(|n| n == name)) {
                continue;
            }
            let fifo_only = matches!(
                *name,
                "FifoQueue"
                    | "ContentBasedDeduplication"
                    | "DeduplicationScope"
                    | "FifoThroughputLimit"
            );
            if fifo_only && !q.fifo {
                continue;
            }
            let v = match *name {
                "ApproximateNumberOfMessages" => visible.to_string(),
                "ApproximateNumberOfMessagesNotVisible" => in_flight.to_string(),
                "ApproximateNumberOfMessagesDelayed" => delayed.to_string(),
                "CreatedTimestamp" | "LastModifiedTimestamp" => q.created_secs.to_string(),
                "QueueArn" => format!("arn:aws:sqs:{}:{ACCOUNT}:{}", self.region, q.name),
                "VisibilityTimeout" => a.visibility_timeout.as_secs().to_string(),
                "MaximumMessageSize" => a.max_message_bytes.to_string(),
                "MessageRetentionPeriod" => a.retention.as_secs().to_string(),
                "DelaySeconds" => a.delay.as_secs().to_string(),
                "ReceiveMessageWaitTimeSeconds" => a.receive_wait.as_secs().to_string(),
                "FifoQueue" => "true".into(),
                "ContentBasedDeduplication" => a.content_based_dedup.to_string(),
                "DeduplicationScope" => if a.dedup_scope_group {
                    "messageGroup"
                } else {
                    "queue"
                }
                .into(),
                "FifoThroughputLimit" => if a.throughput_per_group {
                    "perMessageGroupId"
                } else {
                    "perQueue"
                }
                .into(),
                _ => continue,
            };
            out.insert(name.to_string(), Value::String(v));
        }
        if out.is_empty() {
            return Ok(json!({}));
        }
        Ok(json!({ "Attributes": out }))
    }

    pub(super) fn set_queue_attributes(&self) -> SqsResult<Value> {
        let q = self.queue()?;
        let given = string_map(self.req, "Attributes")?;
        if given.is_empty() {
            return Err(SqsError::missing_parameter("Attributes"));
        }
        let limits = self.sqs.limits();
        {
            let mut s = q.state.lock();
            let mut a = s.attributes.clone();
            apply_attributes(&mut a, &given, q.fifo, limits, false)?;
            s.attributes = a;
        }
        q.reset_rates(limits);
        q.changed.notify_waiters();
        Ok(json!({}))
    }

    pub(super) fn delete_queue(&self) -> SqsResult<Value> {
        let q = self.queue()?;
        self.sqs.queues.write().remove(&q.name);
        self.sqs.deleted.lock().insert(q.name.clone(), self.now());
        q.deleted.store(true, Ordering::Relaxed);
        q.changed.notify_waiters();
        Ok(json!({}))
    }

    pub(super) fn list_queues(&self) -> SqsResult<Value> {
        let prefix = self.str_opt("QueueNamePrefix")?.unwrap_or("");
        let max = match self.int_opt("MaxResults")? {
            None => None,
            Some(n @ 1..=1000) => Some(n as usize),
            Some(n) => {
                return Err(SqsError::invalid_value(
                    "MaxResults",
                    &n.to_string(),
                    "Must be between 1 and 1000, if provided.",
                ));
            }
        };
        let after = self.str_opt("NextToken")?.map(str::to_string);
        let queues = self.sqs.queues.read();
        let names: Vec<&String> = queues
            .keys()
            .filter(|n| n.starts_with(prefix))
            .filter(|n| after.as_ref().is_none_or(|a| n.as_str() > a.as_str()))
            .collect();
        let limit = max.unwrap_or(1000);
        let page: Vec<Value> = names
            .iter()
            .take(limit)
            .map(|n| Value::String(self.url(n)))
            .collect();
        let mut out = serde_json::Map::new();
        if !page.is_empty() {
            out.insert("QueueUrls".into(), Value::Array(page));
        }
        if max.is_some() && names.len() > limit {
            out.insert("NextToken".into(), Value::String(names[limit - 1].clone()));
        }
        Ok(Value::Object(out))
    }

    pub(super) fn purge_queue(&self) -> SqsResult<Value> {
        let q = self.queue()?;
        let now = self.now();
        let hold = self.sqs.limits().purge_interval;
        let mut s = q.state.lock();
        if let Some(at) = s.last_purge
            && now.saturating_duration_since(at) < hold
        {
            return Err(SqsError::purge_in_progress(&q.name, hold));
        }
        s.last_purge = Some(now);
        s.purge();
        drop(s);
        q.changed.notify_waiters();
        Ok(json!({}))
    }

    pub(super) fn tag_queue(&self) -> SqsResult<Value> {
        let q = self.queue()?;
        let tags = string_map(self.req, "Tags")?;
        if tags.is_empty() {
            return Err(SqsError::missing_parameter("Tags"));
        }
        q.state.lock().tags.extend(tags);
        Ok(json!({}))
    }

    pub(super) fn list_queue_tags(&self) -> SqsResult<Value> {
        let q = self.queue()?;
        let tags = q.state.lock().tags.clone();
        if tags.is_empty() {
            return Ok(json!({}));
        }
        Ok(json!({ "Tags": tags }))
    }
}

/// Applies CreateQueue's or SetQueueAttributes' attributes, each checked against its range.
fn apply_attributes(
    a: &mut Attributes,
    given: &BTreeMap<String, String>,
    fifo: bool,
    limits: &super::super::limits::SqsLimits,
    creating: bool,
) -> SqsResult<()> {
    let seconds = |name: &str, v: &str, min: u64, max: u64| -> SqsResult<Duration> {
        match v.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(Duration::from_secs(n)),
            _ => Err(SqsError::invalid_attribute_value(
                name,
                &format!("must be a whole number of seconds from {min} to {max}"),
            )),
        }
    };
    let flag = |name: &str, v: &str| -> SqsResult<bool> {
        match v {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(SqsError::invalid_attribute_value(
                name,
                "must be true or false",
            )),
        }
    };
    for (name, v) in given {
        if !SETTABLE.contains(&name.as_str()) {
            return Err(SqsError::invalid_attribute_name(&format!(
                "{name} (the emulator sets {})",
                SETTABLE.join(", ")
            )));
        }
        let fifo_only = matches!(
            name.as_str(),
            "ContentBasedDeduplication" | "DeduplicationScope" | "FifoThroughputLimit"
        );
        if fifo_only && !fifo {
            return Err(SqsError::invalid_attribute_name(&format!(
                "{name} (a FIFO queue's attribute)"
            )));
        }
        match name.as_str() {
            "VisibilityTimeout" => {
                a.visibility_timeout = seconds(name, v, 0, limits.max_visibility.as_secs())?
            }
            "MessageRetentionPeriod" => {
                a.retention = seconds(
                    name,
                    v,
                    limits.min_retention.as_secs(),
                    limits.max_retention.as_secs(),
                )?
            }
            "DelaySeconds" => a.delay = seconds(name, v, 0, limits.max_delay.as_secs())?,
            "ReceiveMessageWaitTimeSeconds" => {
                a.receive_wait = seconds(name, v, 0, limits.max_wait.as_secs())?
            }
            "MaximumMessageSize" => match v.parse::<u64>() {
                Ok(n) if (1024..=limits.max_message_bytes).contains(&n) => a.max_message_bytes = n,
                _ => {
                    return Err(SqsError::invalid_attribute_value(
                        name,
                        &format!(
                            "must be a whole number of bytes from 1024 to {}",
                            limits.max_message_bytes
                        ),
                    ));
                }
            },
            "FifoQueue" if !creating || flag(name, v)? != fifo => {
                return Err(SqsError::invalid_attribute_value(
                    name,
                    "Modifying queue type is not supported.",
                ));
            }
            "ContentBasedDeduplication" => a.content_based_dedup = flag(name, v)?,
            "DeduplicationScope" => {
                a.dedup_scope_group = match v.as_str() {
                    "messageGroup" => true,
                    "queue" => false,
                    _ => {
                        return Err(SqsError::invalid_attribute_value(
                            name,
                            "must be messageGroup or queue",
                        ));
                    }
                }
            }
            "FifoThroughputLimit" => {
                a.throughput_per_group = match v.as_str() {
                    "perMessageGroupId" => true,
                    "perQueue" => false,
                    _ => {
                        return Err(SqsError::invalid_attribute_value(
                            name,
                            "must be perMessageGroupId or perQueue",
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    if a.throughput_per_group && !a.dedup_scope_group {
        return Err(SqsError::invalid_attribute_value(
            "FifoThroughputLimit",
            "perMessageGroupId needs DeduplicationScope messageGroup",
        ));
    }
    Ok(())
}
