//! CreateStream, DeleteStream, DescribeStreamSummary, ListStreams and stream tags.

use std::sync::Arc;

use serde_json::{Value, json};

use super::error::{ApiError, ApiResult};
use super::json::{Req, check_name, preview};
use super::store::{ACCOUNT, Stream};
use super::{Kinesis, empty, epoch_secs};

impl Kinesis {
    pub(super) fn create_stream(&self, req: &Req, region: &str) -> ApiResult<Value> {
        let name = req.str("StreamName")?;
        check_name("StreamName", name)?;
        let mode = match req.object_opt("StreamModeDetails")? {
            Some(d) => d.str("StreamMode")?.to_string(),
            None => "PROVISIONED".into(),
        };
        let shard_count = match (mode.as_str(), req.int_opt("ShardCount", 1, 100_000)?) {
            ("PROVISIONED", Some(n)) => n as u32,
            ("PROVISIONED", None) => return Err(ApiError::missing("ShardCount")),
            ("ON_DEMAND", n) => n.unwrap_or(4) as u32,
            (other, _) => {
                return Err(ApiError::validation(
                    "StreamModeDetails.StreamMode",
                    &format!("'{}'", preview(other)),
                    "Member must satisfy enum value set: [PROVISIONED, ON_DEMAND]",
                ));
            }
        };
        let tags = parse_tag_map(req)?;
        let mut streams = self.streams.write();
        if streams.contains_key(name) {
            return Err(ApiError::in_use(format!(
                "Stream {name} under account {ACCOUNT} already exists."
            )));
        }
        let open: u32 = streams.values().map(|s| s.open_count()).sum();
        if open + shard_count > self.limits.max_shards {
            return Err(ApiError::limit_exceeded(format!(
                "This request would exceed the shard limit for the account {ACCOUNT} in {region}. \
                 Current shard count for the account: {open}. Limit: {}. Number of additional shards \
                 that would have resulted from this request: {shard_count}.",
                self.limits.max_shards
            )));
        }
        let stream = Stream::new(
            name,
            region,
            shard_count,
            self.next_incarnation(),
            &self.limits,
            &self.clock,
        );
        *stream.tags.lock() = tags;
        streams.insert(name.to_string(), Arc::new(stream));
        Ok(empty())
    }

    pub(super) fn delete_stream(&self, req: &Req) -> ApiResult<Value> {
        let stream = self.stream_from(req)?;
        let enforce = req.bool_opt("EnforceConsumerDeletion")?.unwrap_or(false);
        let consumers = stream.consumers.lock().len();
        if consumers > 0 && !enforce {
            return Err(ApiError::in_use(format!(
                "Stream {} under account {ACCOUNT} has {consumers} registered consumers; \
                 deregister them or set EnforceConsumerDeletion.",
                stream.name
            )));
        }
        self.streams.write().remove(&*stream.name);
        for shard in stream.all_shards() {
            let mut shard = shard.lock();
            for (_, sub) in shard.subscriptions.drain() {
                let _ = sub.cancel.send(ApiError::not_found(format!(
                    "Stream {} under account {ACCOUNT} was deleted.",
                    stream.name
                )));
            }
        }
        Ok(empty())
    }

    pub(super) fn describe_stream_summary(&self, req: &Req) -> ApiResult<Value> {
        let s = self.stream_from(req)?;
        let now = self.clock.now();
        Ok(json!({
            "StreamDescriptionSummary": {
                "StreamName": &*s.name,
                "StreamARN": s.arn,
                "StreamStatus": s.status(now),
                "StreamModeDetails": { "StreamMode": "PROVISIONED" },
                "RetentionPeriodHours": s.retention_hours,
                "StreamCreationTimestamp": epoch_secs(s.created_micros),
                "EnhancedMonitoring": [ { "ShardLevelMetrics": [] } ],
                "EncryptionType": "NONE",
                "OpenShardCount": s.open_count(),
                "ConsumerCount": s.consumers.lock().len(),
            }
        }))
    }

    pub(super) fn list_streams(&self, req: &Req) -> ApiResult<Value> {
        let limit = req.int_opt("Limit", 1, 10_000)?.unwrap_or(100) as usize;
        let start = match req.str_opt("NextToken")? {
            Some(token) => Some(decode_token(token)?),
            None => req.str_opt("ExclusiveStartStreamName")?.map(str::to_string),
        };
        let streams = self.streams.read();
        let now = self.clock.now();
        let after: Vec<&Arc<Stream>> = streams
            .iter()
            .filter(|(name, _)| start.as_deref().is_none_or(|s| name.as_str() > s))
            .map(|(_, s)| s)
            .collect();
        let page = &after[..after.len().min(limit)];
        let more = after.len() > page.len();
        let mut out = json!({
            "StreamNames": page.iter().map(|s| &*s.name).collect::<Vec<_>>(),
            "HasMoreStreams": more,
            "StreamSummaries": page.iter().map(|s| json!({
                "StreamName": &*s.name,
                "StreamARN": s.arn,
                "StreamStatus": s.status(now),
                "StreamModeDetails": { "StreamMode": "PROVISIONED" },
                "StreamCreationTimestamp": epoch_secs(s.created_micros),
            })).collect::<Vec<_>>(),
        });
        if more && let Some(last) = page.last() {
            out["NextToken"] = Value::String(encode_token(&last.name));
        }
        Ok(out)
    }

    pub(super) fn add_tags(&self, req: &Req) -> ApiResult<Value> {
        let stream = self.stream_from(req)?;
        let new = parse_tag_map(req)?;
        if new.is_empty() {
            return Err(ApiError::missing("Tags"));
        }
        let mut tags = stream.tags.lock();
        for (k, v) in new {
            match tags.iter_mut().find(|(key, _)| *key == k) {
                Some(slot) => slot.1 = v,
                None => tags.push((k, v)),
            }
        }
        if tags.len() > 50 {
            return Err(ApiError::limit_exceeded(
                "A stream can have at most 50 tags.",
            ));
        }
        Ok(empty())
    }

    pub(super) fn list_tags(&self, req: &Req) -> ApiResult<Value> {
        let stream = self.stream_from(req)?;
        let tags = stream.tags.lock();
        Ok(json!({
            "Tags": tags.iter().map(|(k, v)| json!({ "Key": k, "Value": v })).collect::<Vec<_>>(),
            "HasMoreTags": false,
        }))
    }
}

/// `Tags` as a map of strings (CreateStream, AddTagsToStream).
fn parse_tag_map(req: &Req) -> ApiResult<Vec<(String, String)>> {
    let Some(map) = req.object_opt("Tags")? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for key in map_keys(&map) {
        let value = map
            .str(&key)
            .map_err(|_| ApiError::serialization(format!("Tags.{key} must be a string")))?;
        if key.is_empty() || key.len() > 128 || value.len() > 256 {
            return Err(ApiError::validation(
                "Tags",
                &format!("'{}'", preview(&key)),
                "Tag keys must have length 1 to 128 and values at most 256",
            ));
        }
        out.push((key, value.to_string()));
    }
    Ok(out)
}

fn map_keys(req: &Req) -> Vec<String> {
    req.keys()
}

pub(super) fn encode_token(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

pub(super) fn decode_token(token: &str) -> ApiResult<String> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(token)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| ApiError::invalid_argument("NextToken is not valid."))
}
