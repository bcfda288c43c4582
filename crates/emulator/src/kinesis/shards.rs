//! ListShards (with `ShardFilter`) and DescribeStream: a stream's shards, open and closed.
//!
//! A closed shard is listed with its `EndingSequenceNumber` until it expires: once every record it
//! held is past retention (it closed more than `retention` ago) it is no longer listed, as the API
//! reference says of ListShards ("This action does not list expired shards").

use serde_json::{Value, json};

use super::error::{ApiError, ApiResult};
use super::json::{Req, preview};
use super::store::{Shard, Stream};
use super::streams::{decode_token, encode_token};
use super::{Kinesis, epoch_secs};

/// Which shards a ListShards call lists: the `ShardFilter` types of the API reference.
/// (`AFTER_SHARD_ID` is "identical in functionality to the ExclusiveStartShardId parameter", so
/// it is read as that, over every shard within the retention period.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Filter {
    /// Every shard within the retention period (the default).
    FromTrimHorizon,
    /// Shards open at the trim horizon.
    AtTrimHorizon,
    /// Open shards only.
    AtLatest,
    /// Shards open at the time (epoch microseconds).
    AtTimestamp(i64),
    /// Shards closed at or after the time, and every open shard.
    FromTimestamp(i64),
}

const FILTER_TYPES: &str =
    "[AFTER_SHARD_ID, AT_TRIM_HORIZON, FROM_TRIM_HORIZON, AT_LATEST, AT_TIMESTAMP, FROM_TIMESTAMP]";

impl Filter {
    /// The filter, and the shard id the listing starts after (`AFTER_SHARD_ID`).
    fn parse(req: &Req) -> ApiResult<(Filter, Option<String>)> {
        let Some(f) = req.object_opt("ShardFilter")? else {
            return Ok((Filter::FromTrimHorizon, None));
        };
        let kind = f
            .str("Type")
            .map_err(|_| ApiError::missing("ShardFilter.Type"))?;
        let shard_id = f.str_len("ShardId", 1, 128)?;
        let micros = f.timestamp_opt("Timestamp")?.map(|t| (t * 1e6) as i64);
        let needs = |what: &str| {
            ApiError::invalid_argument(format!(
                "ShardFilter.{what} is required for ShardFilter.Type {kind}."
            ))
        };
        let filter = match kind {
            "FROM_TRIM_HORIZON" => Filter::FromTrimHorizon,
            "AT_TRIM_HORIZON" => Filter::AtTrimHorizon,
            "AT_LATEST" => Filter::AtLatest,
            "AFTER_SHARD_ID" => {
                let id = shard_id.ok_or_else(|| needs("ShardId"))?;
                return Ok((Filter::FromTrimHorizon, Some(id.to_string())));
            }
            "AT_TIMESTAMP" => Filter::AtTimestamp(micros.ok_or_else(|| needs("Timestamp"))?),
            "FROM_TIMESTAMP" => Filter::FromTimestamp(micros.ok_or_else(|| needs("Timestamp"))?),
            other => {
                return Err(ApiError::validation(
                    "ShardFilter.Type",
                    &format!("'{}'", preview(other)),
                    &format!("Member must satisfy enum value set: {FILTER_TYPES}"),
                ));
            }
        };
        Ok((filter, None))
    }

    /// The filter as it travels in a NextToken.
    fn encode(self) -> String {
        match self {
            Filter::FromTrimHorizon => "F".into(),
            Filter::AtTrimHorizon => "H".into(),
            Filter::AtLatest => "L".into(),
            Filter::AtTimestamp(t) => format!("T{t}"),
            Filter::FromTimestamp(t) => format!("S{t}"),
        }
    }

    fn decode(text: &str) -> Option<Filter> {
        let (kind, arg) = text.split_at_checked(1)?;
        Some(match kind {
            "F" => Filter::FromTrimHorizon,
            "H" => Filter::AtTrimHorizon,
            "L" => Filter::AtLatest,
            "T" => Filter::AtTimestamp(arg.parse().ok()?),
            "S" => Filter::FromTimestamp(arg.parse().ok()?),
            _ => return None,
        })
    }
}

/// What a filter needs to know of the stream and the time.
struct View {
    now_micros: i64,
    retention_micros: i64,
    created_micros: i64,
}

impl View {
    fn trim_horizon(&self) -> i64 {
        (self.now_micros - self.retention_micros).max(self.created_micros)
    }

    /// Whether the shard was open at `t`: made at or before it, closed at or after it, or open.
    fn open_at(s: &Shard, t: i64) -> bool {
        s.created_micros <= t && s.closed.as_ref().is_none_or(|c| c.at_micros >= t)
    }

    fn expired(&self, s: &Shard) -> bool {
        s.closed
            .as_ref()
            .is_some_and(|c| c.at_micros < self.now_micros - self.retention_micros)
    }

    fn lists(&self, filter: Filter, s: &Shard) -> bool {
        if self.expired(s) {
            return false;
        }
        match filter {
            Filter::FromTrimHorizon => true,
            Filter::AtLatest => s.is_open(),
            Filter::AtTrimHorizon => Self::open_at(s, self.trim_horizon()),
            // The API reference does not say what a time before the stream existed lists; it is
            // read as the stream's creation (its first shards), as AT_TRIM_HORIZON on a young
            // stream.
            Filter::AtTimestamp(t) => Self::open_at(s, t.max(self.created_micros)),
            // "Corrected to TRIM_HORIZON of the data stream if FROM_TIMESTAMP is less than the
            // TRIM_HORIZON value."
            Filter::FromTimestamp(t) => {
                let t = t.max(self.now_micros - self.retention_micros);
                s.closed.as_ref().is_none_or(|c| c.at_micros >= t)
            }
        }
    }
}

/// A shard as ListShards and DescribeStream show it.
fn shard_json(s: &Shard) -> Value {
    let mut range = json!({ "StartingSequenceNumber": s.starting_sequence_number() });
    if let Some(end) = s.ending_sequence_number() {
        range["EndingSequenceNumber"] = end.into();
    }
    let mut out = json!({
        "ShardId": s.id,
        "HashKeyRange": {
            "StartingHashKey": s.hash_start.to_string(),
            "EndingHashKey": s.hash_end.to_string(),
        },
        "SequenceNumberRange": range,
    });
    if let Some(p) = s.parent {
        out["ParentShardId"] = super::store::shard_id(p).into();
    }
    if let Some(p) = s.adjacent_parent {
        out["AdjacentParentShardId"] = super::store::shard_id(p).into();
    }
    out
}

impl Kinesis {
    fn view(&self, stream: &Stream) -> View {
        View {
            now_micros: self.clock.now_micros(),
            retention_micros: self.limits.retention.as_micros() as i64,
            created_micros: stream.created_micros,
        }
    }

    /// Up to `max` shards after `after` (an index) that `filter` lists, and whether more remain.
    fn page(
        &self,
        stream: &Stream,
        filter: Filter,
        after: Option<&str>,
        max: usize,
    ) -> (Vec<Value>, Option<u32>) {
        let view = self.view(stream);
        let mut out = Vec::new();
        for shard in stream.all_shards() {
            let s = shard.lock();
            // Shard ids are listed in their order as text, as the service sorts them.
            if after.is_some_and(|a| s.id.as_str() <= a) || !view.lists(filter, &s) {
                continue;
            }
            if out.len() == max {
                return (out, Some(s.index - 1));
            }
            out.push(shard_json(&s));
        }
        (out, None)
    }

    pub(super) fn list_shards(&self, req: &Req) -> ApiResult<Value> {
        // "If you specify a value greater than 1000, at most 1000 results are returned."
        let max = req
            .int_opt("MaxResults", 1, 10_000)?
            .unwrap_or(1000)
            .min(1000) as usize;
        let (stream, filter, after) = match req.str_opt("NextToken")? {
            Some(token) => {
                if req.str_opt("StreamName")?.is_some() {
                    return Err(ApiError::invalid_argument(
                        "NextToken and StreamName cannot be provided together.",
                    ));
                }
                let bad = || ApiError::invalid_argument("NextToken is not valid.");
                let decoded = decode_token(token)?;
                let mut parts = decoded.rsplitn(3, '|');
                let filter = parts.next().and_then(Filter::decode).ok_or_else(bad)?;
                let after: u32 = parts.next().and_then(|i| i.parse().ok()).ok_or_else(bad)?;
                let name = parts.next().ok_or_else(bad)?;
                // The token carries the filter of the call that made it; a ShardFilter given
                // with a NextToken is not read.
                let after = super::store::shard_id(after);
                (self.stream_by_name(name)?, filter, Some(after))
            }
            None => {
                let stream = self.stream_from(req)?;
                let (filter, after_filter) = Filter::parse(req)?;
                let start = req.str_len("ExclusiveStartShardId", 1, 128)?;
                // Both given: the later of the two.
                let after = match (start.map(str::to_string), after_filter) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                (stream, filter, after)
            }
        };
        let (shards, last) = self.page(&stream, filter, after.as_deref(), max);
        let mut out = json!({ "Shards": shards });
        if let Some(last) = last {
            let token = format!("{}|{last}|{}", stream.name, filter.encode());
            out["NextToken"] = Value::String(encode_token(&token));
        }
        Ok(out)
    }

    pub(super) fn describe_stream(&self, req: &Req) -> ApiResult<Value> {
        let s = self.stream_from(req)?;
        let limit = req.int_opt("Limit", 1, 10_000)?.unwrap_or(100) as usize;
        let after = req.str_len("ExclusiveStartShardId", 1, 128)?;
        let (shards, more) = self.page(&s, Filter::FromTrimHorizon, after, limit);
        Ok(json!({
            "StreamDescription": {
                "StreamName": &*s.name,
                "StreamARN": s.arn,
                "StreamStatus": s.status(self.clock.now()),
                "StreamModeDetails": { "StreamMode": "PROVISIONED" },
                "Shards": shards,
                "HasMoreShards": more.is_some(),
                "RetentionPeriodHours": s.retention_hours,
                "StreamCreationTimestamp": epoch_secs(s.created_micros),
                "EnhancedMonitoring": [ { "ShardLevelMetrics": [] } ],
                "EncryptionType": "NONE",
            }
        }))
    }
}
