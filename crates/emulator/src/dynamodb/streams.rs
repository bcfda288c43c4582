//! DynamoDB Streams: a table's changes, one shard per partition, read with ListStreams,
//! DescribeStream, GetShardIterator and GetRecords (`DynamoDBStreams_20120810.*`). Each write that
//! changes an item appends a record (INSERT, MODIFY or REMOVE) with the images its view type
//! keeps; a record becomes readable after the latency profile's `dynamodb.stream_visibility`. As
//! the developer guide states: records are kept 24 hours, a shard iterator expires 15 minutes
//! after it is handed out, and "no more than two processes at most should be reading from the
//! same streams shard at the same time": a third reader of a shard within a second is refused.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

use super::item::Item;
use super::{DynamoError, DynamoResult};

/// Records kept per shard at most, whatever their age: memory stays bounded under any write
/// rate (a model bound; DynamoDB keeps 24 hours of any volume).
const MAX_RECORDS_PER_SHARD: usize = 100_000;
/// How long records are kept (streams-ddb: "data in the stream is retained for 24 hours").
const RETENTION: Duration = Duration::from_secs(24 * 3600);
/// How long an iterator lives (GetShardIterator API reference: "A shard iterator expires 15
/// minutes after it is returned to the requester").
const ITERATOR_LIFE: Duration = Duration::from_secs(15 * 60);

/// What a stream record keeps of the item (StreamViewType).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    KeysOnly,
    NewImage,
    OldImage,
    NewAndOldImages,
}

impl View {
    pub fn parse(v: &str) -> Option<View> {
        match v {
            "KEYS_ONLY" => Some(View::KeysOnly),
            "NEW_IMAGE" => Some(View::NewImage),
            "OLD_IMAGE" => Some(View::OldImage),
            "NEW_AND_OLD_IMAGES" => Some(View::NewAndOldImages),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            View::KeysOnly => "KEYS_ONLY",
            View::NewImage => "NEW_IMAGE",
            View::OldImage => "OLD_IMAGE",
            View::NewAndOldImages => "NEW_AND_OLD_IMAGES",
        }
    }
}

/// One change as GetRecords returns it, and when it becomes readable.
struct Record {
    seq: u64,
    visible: Instant,
    written: Instant,
    body: Value,
}

#[derive(Default)]
struct Shard {
    records: VecDeque<Record>,
    /// Readers (iterator lineages) and their last GetRecords.
    readers: BTreeMap<u64, Instant>,
}

/// A table's stream while it is enabled (and after, until its records age out).
pub struct Stream {
    pub arn: String,
    pub label: String,
    pub view: View,
    pub enabled: bool,
    created: f64,
    shards: Vec<Shard>,
}

impl Stream {
    pub fn new(table_arn: &str, view: View, created: f64, shards: usize) -> Stream {
        let label = latlab_core::clock::rfc3339_ms((created * 1000.0) as i64)
            .trim_end_matches('Z')
            .to_string();
        Stream {
            arn: format!("{table_arn}/stream/{label}"),
            label,
            view,
            enabled: true,
            created,
            shards: (0..shards).map(|_| Shard::default()).collect(),
        }
    }

    pub fn view_name(&self) -> &'static str {
        self.view.name()
    }

    fn shard_id(&self, i: usize) -> String {
        format!("shardId-{:020}-{:08x}", (self.created * 1000.0) as u64, i)
    }

    fn shard_index(&self, id: &str) -> Option<usize> {
        (0..self.shards.len()).find(|i| self.shard_id(*i) == id)
    }

    /// Keeps one shard per partition.
    pub fn grow(&mut self, partitions: usize) {
        while self.shards.len() < partitions {
            self.shards.push(Shard::default());
        }
    }

    /// Appends a change of the item under `keys` on `partition`'s shard.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        partition: usize,
        seq: u64,
        keys: Value,
        old: Option<&Item>,
        new: Option<&Item>,
        region: &str,
        now: Instant,
        visible_after: Duration,
    ) {
        if !self.enabled {
            return;
        }
        let event = match (old, new) {
            (None, Some(_)) => "INSERT",
            (Some(_), Some(_)) => "MODIFY",
            (Some(_), None) => "REMOVE",
            (None, None) => return,
        };
        let mut d = json!({
            "ApproximateCreationDateTime": (latlab_core::clock::now_micros() / 1_000_000) as f64,
            "Keys": keys,
            "SequenceNumber": format!("{seq:021}"),
            "SizeBytes": new.or(old).map_or(0, super::item::item_size),
            "StreamViewType": self.view.name(),
        });
        if matches!(self.view, View::NewImage | View::NewAndOldImages)
            && let Some(n) = new
        {
            d["NewImage"] = Value::Object(n.clone());
        }
        if matches!(self.view, View::OldImage | View::NewAndOldImages)
            && let Some(o) = old
        {
            d["OldImage"] = Value::Object(o.clone());
        }
        let body = json!({
            "eventID": format!("{:032x}", seq as u128 * 0x9e37_79b9_7f4a_7c15),
            "eventName": event,
            "eventVersion": "1.1",
            "eventSource": "aws:dynamodb",
            "awsRegion": region,
            "dynamodb": d,
        });
        let last = self.shards.len() - 1;
        let shard = &mut self.shards[partition.min(last)];
        shard.records.push_back(Record {
            seq,
            visible: now + visible_after,
            written: now,
            body,
        });
        while shard.records.len() > MAX_RECORDS_PER_SHARD
            || shard
                .records
                .front()
                .is_some_and(|r| now.saturating_duration_since(r.written) > RETENTION)
        {
            shard.records.pop_front();
        }
    }

    /// DescribeStream's description.
    pub fn describe(&self, table: &str, key_schema: Value) -> Value {
        let shards: Vec<Value> = (0..self.shards.len())
            .map(|i| {
                let first = self.shards[i].records.front().map_or(0, |r| r.seq);
                json!({
                    "ShardId": self.shard_id(i),
                    "SequenceNumberRange": { "StartingSequenceNumber": format!("{first:021}") },
                })
            })
            .collect();
        json!({
            "StreamArn": self.arn,
            "StreamLabel": self.label,
            "StreamStatus": if self.enabled { "ENABLED" } else { "DISABLED" },
            "StreamViewType": self.view.name(),
            "CreationRequestDateTime": self.created,
            "TableName": table,
            "KeySchema": key_schema,
            "Shards": shards,
        })
    }
}

/// A shard iterator: the stream, the shard, the next sequence number to read, the reader it
/// belongs to and when it was handed out (on the service's clock, in microseconds).
struct Iterator {
    arn: String,
    shard: usize,
    next: u64,
    reader: u64,
    issued_us: i64,
}

impl Iterator {
    fn encode(&self) -> String {
        let raw = format!(
            "{}|{}|{}|{}|{}",
            self.arn, self.shard, self.next, self.reader, self.issued_us
        );
        base64::engine::general_purpose::STANDARD.encode(raw)
    }

    fn decode(token: &str) -> DynamoResult<Iterator> {
        let invalid = || DynamoError::validation("Invalid ShardIterator");
        let raw = base64::engine::general_purpose::STANDARD
            .decode(token)
            .map_err(|_| invalid())?;
        let raw = String::from_utf8(raw).map_err(|_| invalid())?;
        let parts: Vec<&str> = raw.rsplitn(5, '|').collect();
        let [issued, reader, next, shard, arn] = parts[..] else {
            return Err(invalid());
        };
        Ok(Iterator {
            arn: arn.to_string(),
            shard: shard.parse().map_err(|_| invalid())?,
            next: next.parse().map_err(|_| invalid())?,
            reader: reader.parse().map_err(|_| invalid())?,
            issued_us: issued.parse().map_err(|_| invalid())?,
        })
    }
}

/// GetShardIterator on `stream`: the iterator's token.
pub fn shard_iterator(
    stream: &Stream,
    args: &serde_json::Map<String, Value>,
    now_us: i64,
) -> DynamoResult<Value> {
    let shard_id = args.get("ShardId").and_then(Value::as_str).unwrap_or("");
    let shard = stream.shard_index(shard_id).ok_or_else(|| {
        DynamoError::not_found(format!(
            "Requested resource not found: Shard does not exist: {shard_id}"
        ))
    })?;
    let records = &stream.shards[shard].records;
    let seq = || -> DynamoResult<u64> {
        args.get("SequenceNumber")
            .and_then(Value::as_str)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| {
                DynamoError::validation("SequenceNumber must be given for this ShardIteratorType")
            })
    };
    let next = match args.get("ShardIteratorType").and_then(Value::as_str) {
        Some("TRIM_HORIZON") => records.front().map_or(0, |r| r.seq),
        Some("LATEST") => records.back().map_or(0, |r| r.seq + 1),
        Some("AT_SEQUENCE_NUMBER") => seq()?,
        Some("AFTER_SEQUENCE_NUMBER") => seq()? + 1,
        other => {
            return Err(DynamoError::validation(format!(
                "1 validation error detected: Value '{}' at 'shardIteratorType' failed to satisfy constraint: Member must satisfy enum value set: [TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER]",
                other.unwrap_or("null")
            )));
        }
    };
    let it = Iterator {
        arn: stream.arn.clone(),
        shard,
        next,
        reader: rand::random(),
        issued_us: now_us,
    };
    Ok(json!({ "ShardIterator": it.encode() }))
}

/// The stream an iterator names (its ARN), for the caller to find.
pub fn iterator_stream(token: &str) -> DynamoResult<String> {
    Iterator::decode(token).map(|i| i.arn)
}

/// GetRecords on `stream`: up to `limit` readable records from the iterator's position, and the
/// next iterator; an expired iterator, or a third reader of the shard, is refused.
pub fn get_records(
    stream: &mut Stream,
    token: &str,
    limit: usize,
    readers: usize,
    now: Instant,
    now_us: i64,
) -> DynamoResult<Value> {
    let it = Iterator::decode(token)?;
    if now_us.saturating_sub(it.issued_us) > ITERATOR_LIFE.as_micros() as i64 {
        return Err(DynamoError::of(
            400,
            "ExpiredIteratorException",
            "Iterator expired. The iterator was created over 15 minutes ago.",
        ));
    }
    let shard = stream
        .shards
        .get_mut(it.shard)
        .ok_or_else(|| DynamoError::validation("Invalid ShardIterator"))?;
    // Readers: the iterator lineages that read this shard within the last second.
    shard
        .readers
        .retain(|_, at| now.saturating_duration_since(*at) < Duration::from_secs(1));
    if !shard.readers.contains_key(&it.reader) && shard.readers.len() >= readers {
        return Err(DynamoError::of(
            400,
            "LimitExceededException",
            format!("Rate exceeded for shard: more than {readers} readers of one shard at once"),
        ));
    }
    shard.readers.insert(it.reader, now);
    if shard.records.front().is_some_and(|r| r.seq > it.next) && it.next > 0 {
        return Err(DynamoError::of(
            400,
            "TrimmedDataAccessException",
            "The operation attempted to read past the oldest stream record in a shard.",
        ));
    }
    let mut out = Vec::new();
    let mut next = it.next;
    for r in shard.records.iter().filter(|r| r.seq >= it.next) {
        if out.len() >= limit || r.visible > now {
            break;
        }
        out.push(r.body.clone());
        next = r.seq + 1;
    }
    let following = Iterator {
        next,
        issued_us: now_us,
        ..it
    };
    Ok(json!({ "Records": out, "NextShardIterator": following.encode() }))
}
