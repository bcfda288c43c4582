//! Each SQS operation, from its JSON request to its answer, with the service's checks and their
//! errors, which name the parameter and what is valid: the queue operations in `queues.rs`, the
//! message operations in `messages.rs`; here the request's parameters, read as the service reads
//! them, and the dispatch.

mod messages;
mod queues;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::error::{SqsError, SqsResult};
use super::queue::Queue;
use super::{ACCOUNT, Sqs};
use latlab_core::services::sqs::Op;

/// One request being answered.
pub struct Cx<'a> {
    pub sqs: &'a Sqs,
    pub req: &'a Value,
    pub host: &'a str,
    pub region: &'a str,
}

impl Cx<'_> {
    pub async fn dispatch(&self, op: Op) -> SqsResult<Value> {
        match op {
            Op::CreateQueue => self.create_queue(),
            Op::GetQueueUrl => self.get_queue_url(),
            Op::GetQueueAttributes => self.get_queue_attributes(),
            Op::SetQueueAttributes => self.set_queue_attributes(),
            Op::DeleteQueue => self.delete_queue(),
            Op::ListQueues => self.list_queues(),
            Op::PurgeQueue => self.purge_queue(),
            Op::TagQueue => self.tag_queue(),
            Op::ListQueueTags => self.list_queue_tags(),
            Op::SendMessage => self.send_message(),
            Op::SendMessageBatch => self.send_message_batch(),
            Op::ReceiveMessage => self.receive_message().await,
            Op::DeleteMessage => self.delete_message(),
            Op::DeleteMessageBatch => self.delete_message_batch(),
            Op::ChangeMessageVisibility => self.change_visibility(),
            Op::ChangeMessageVisibilityBatch => self.change_visibility_batch(),
        }
    }

    fn now(&self) -> Instant {
        self.sqs.clock.now()
    }

    fn url(&self, name: &str) -> String {
        format!("http://{}/{ACCOUNT}/{name}", self.host)
    }

    fn str_opt(&self, key: &str) -> SqsResult<Option<&str>> {
        str_of(self.req, key)
    }

    fn str_req(&self, key: &str) -> SqsResult<&str> {
        self.str_opt(key)?
            .ok_or_else(|| SqsError::missing_parameter(key))
    }

    fn int_opt(&self, key: &str) -> SqsResult<Option<i64>> {
        int_of(self.req, key)
    }

    /// The queue a request's `QueueUrl` names (its last path segment).
    fn queue(&self) -> SqsResult<Arc<Queue>> {
        let url = self.str_req("QueueUrl")?;
        let name = url.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        self.sqs.queue(name)
    }
}

fn visibility_value(name: &str, n: i64, limits: &super::limits::SqsLimits) -> SqsResult<Duration> {
    let max = limits.max_visibility.as_secs();
    if n < 0 || n as u64 > max {
        return Err(SqsError::invalid_value(
            name,
            &n.to_string(),
            &format!("Must be >= 0 and <= {max}, if provided."),
        ));
    }
    Ok(Duration::from_secs(n as u64))
}

fn str_of<'a>(v: &'a Value, key: &str) -> SqsResult<Option<&'a str>> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(SqsError::malformed(&format!("{key} must be a string"))),
    }
}

fn int_of(v: &Value, key: &str) -> SqsResult<Option<i64>> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| SqsError::invalid_value(key, &n.to_string(), "Must be a whole number.")),
        Some(Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| SqsError::invalid_value(key, s, "Must be a whole number.")),
        Some(_) => Err(SqsError::malformed(&format!("{key} must be a number"))),
    }
}

fn string_list(v: &Value, key: &str) -> SqsResult<Vec<String>> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| SqsError::malformed(&format!("{key} must be a list of strings")))
            })
            .collect(),
        Some(_) => Err(SqsError::malformed(&format!("{key} must be a list"))),
    }
}

fn string_map(v: &Value, key: &str) -> SqsResult<BTreeMap<String, String>> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, x)| {
                x.as_str()
                    .map(|s| (k.clone(), s.to_string()))
                    .ok_or_else(|| SqsError::malformed(&format!("{key}.{k} must be a string")))
            })
            .collect(),
        Some(_) => Err(SqsError::malformed(&format!("{key} must be a map"))),
    }
}
