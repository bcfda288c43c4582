//! PutRecord, PutRecords, GetShardIterator and GetRecords, with the per-shard write and read limits.

use std::sync::Arc;

use base64::Engine;
use bytes::Bytes;
use serde::Serialize;
use serde_json::{Value, json};

use super::error::{ApiError, ApiResult};
use super::json::{Req, preview};
use super::store::{
    self, ACCOUNT, Iterator, Record, Shard, Stream, parse_sequence_number, sequence_number,
};
use super::{Kinesis, decode_data, epoch_secs};
use crate::kinesis::stats::{Api, Outcome};

/// A record of a put request, validated. Its shard is found when it is stored: a reshard may
/// take effect in between.
struct Entry {
    data: Bytes,
    key: Arc<str>,
    hash: u128,
}

/// The JSON form of a record in GetRecords and SubscribeToShard answers.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RecordOut<'a> {
    pub sequence_number: String,
    pub approximate_arrival_timestamp: f64,
    pub data: String,
    pub partition_key: &'a str,
}

impl<'a> RecordOut<'a> {
    pub fn new(shard: u32, r: &'a Record) -> Self {
        RecordOut {
            sequence_number: sequence_number(shard, r.counter),
            approximate_arrival_timestamp: epoch_secs(r.arrival_micros),
            data: base64::engine::general_purpose::STANDARD.encode(&r.data),
            partition_key: &r.partition_key,
        }
    }
}

impl Kinesis {
    /// Validates one record's members (PutRecord's, or an element of PutRecords' `Records`).
    fn entry(&self, req: &Req, prefix: &str) -> ApiResult<Entry> {
        let field = |name: &str| format!("{prefix}{name}");
        let data = decode_data(
            &field("Data"),
            req.str("Data")
                .map_err(|_| ApiError::missing(&field("Data")))?,
        )?;
        if data.len() as u64 > self.limits.max_record_bytes {
            return Err(ApiError::validation(
                &field("Data"),
                &format!("'<{} bytes>'", data.len()),
                &format!(
                    "Member must have length less than or equal to {}",
                    self.limits.max_record_bytes
                ),
            ));
        }
        let key = req
            .str_len("PartitionKey", 1, 256)
            .map_err(|e| rename(e, "PartitionKey", &field("PartitionKey")))?
            .ok_or_else(|| ApiError::missing(&field("PartitionKey")))?;
        if (data.len() + key.len()) as u64 > self.limits.max_record_bytes {
            return Err(ApiError::invalid_argument(format!(
                "{}: data and partition key together are {} bytes, over the record limit of {} bytes.",
                field("Data"),
                data.len() + key.len(),
                self.limits.max_record_bytes
            )));
        }
        let hash = match req.str_opt("ExplicitHashKey")? {
            Some(text) => text
                .parse::<u128>()
                .ok()
                .filter(|_| text.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| {
                    ApiError::invalid_argument(format!(
                        "{}: '{}' is not a number between 0 and 2^128-1.",
                        field("ExplicitHashKey"),
                        preview(text)
                    ))
                })?,
            None => store::partition_hash(key),
        };
        Ok(Entry {
            data,
            key: Arc::from(key),
            hash,
        })
    }

    /// Stores one record in the open shard its hash key maps to, if that shard's write limits
    /// allow; the shard's index and the answer entry either way. The shard map stays read-locked
    /// while the record is appended, so a reshard never closes the shard in between.
    fn store(
        &self,
        stream: &Stream,
        entry: Entry,
        visibility: std::time::Duration,
    ) -> (u32, Result<Value, ApiError>) {
        let now = self.clock.now();
        let arrival = self.clock.now_micros();
        let size = (entry.data.len() + entry.key.len()) as u64;
        let shards = stream.shards.read();
        let per_shard_cap = self.limits.stream_max_bytes / u64::from(shards.open_count().max(1));
        let mut shard = shards.route(entry.hash).lock();
        let index = shard.index;
        if !(shard.write_records.can_take(now, 1) && shard.write_bytes.can_take(now, size)) {
            return (
                index,
                Err(ApiError::throughput(&shard.id, &stream.name, ACCOUNT)),
            );
        }
        shard.write_records.take(now, 1);
        shard.write_bytes.take(now, size);
        let counter = shard.append(entry.data, entry.key, now, arrival, visibility);
        shard.trim(now, self.limits.retention, per_shard_cap);
        let answer =
            json!({ "ShardId": shard.id, "SequenceNumber": sequence_number(index, counter) });
        (index, Ok(answer))
    }

    /// A record another service hands a stream it owns (a table's changes, say): stored as
    /// a PutRecord's, within the shard's limits, counted as PutRecord calls; None when `to` is
    /// not one of its streams.
    pub(super) fn deliver(&self, d: &crate::service::Delivery) -> Option<Result<(), String>> {
        let name = store::stream_name_from_arn(d.to)?;
        let stream = self.stream_by_name(name).ok()?;
        let entry = Entry {
            data: Bytes::copy_from_slice(d.data),
            key: Arc::from(d.partition_key),
            hash: store::partition_hash(d.partition_key),
        };
        let size = (d.data.len() + d.partition_key.len()) as u64;
        let (shard, result) = self.store(&stream, entry, self.profile().read_visibility.sample());
        let outcome = if result.is_ok() {
            Outcome::delivered(1, size)
        } else {
            Outcome::THROTTLED
        };
        self.stats
            .record(&stream.name, shard, Api::PutRecord, outcome);
        Some(
            result
                .map(|_| ())
                .map_err(|e| format!("{}: {}", e.code, e.message)),
        )
    }

    pub(super) async fn put_record(&self, req: &Req) -> ApiResult<Value> {
        let stream = self.active_stream_from(req)?;
        let entry = self.entry(req, "")?;
        let size = (entry.data.len() + entry.key.len()) as u64;
        let p = self.profile();
        latlab_core::shaping::delay(&p.put_commit).await;
        let (shard, result) = self.store(&stream, entry, p.read_visibility.sample());
        let outcome = if result.is_ok() {
            Outcome::delivered(1, size)
        } else {
            Outcome::THROTTLED
        };
        self.stats
            .record(&stream.name, shard, Api::PutRecord, outcome);
        let mut answer = result?;
        answer["EncryptionType"] = "NONE".into();
        Ok(answer)
    }

    pub(super) async fn put_records(&self, req: &Req) -> ApiResult<Value> {
        let stream = self.active_stream_from(req)?;
        let list = req
            .list("Records")?
            .ok_or_else(|| ApiError::missing("Records"))?;
        let max = self.limits.put_records_max_records as usize;
        if list.is_empty() || list.len() > max {
            return Err(ApiError::validation(
                "Records",
                &format!("'<{} records>'", list.len()),
                &format!("Member must have length between 1 and {max}, inclusive"),
            ));
        }
        let mut entries = Vec::with_capacity(list.len());
        let mut total = 0u64;
        for (i, item) in list.iter().enumerate() {
            let Value::Object(map) = item else {
                return Err(ApiError::serialization(format!(
                    "Records[{i}] must be a structure"
                )));
            };
            let entry = self.entry(&Req::from_map(map.clone()), &format!("Records[{i}]."))?;
            total += (entry.data.len() + entry.key.len()) as u64;
            entries.push(entry);
        }
        if total > self.limits.put_records_max_bytes {
            return Err(ApiError::invalid_argument(format!(
                "Records total {total} bytes, over the PutRecords limit of {} bytes.",
                self.limits.put_records_max_bytes
            )));
        }
        let p = self.profile();
        latlab_core::shaping::delay(&p.put_commit).await;
        let mut failed = 0u64;
        let mut per_shard: std::collections::BTreeMap<u32, (u64, u64, u64)> = Default::default();
        let mut results = Vec::with_capacity(entries.len());
        for entry in entries {
            let size = (entry.data.len() + entry.key.len()) as u64;
            let (shard, result) = self.store(&stream, entry, p.read_visibility.sample());
            let counts = per_shard.entry(shard).or_default();
            match result {
                Ok(ok) => {
                    counts.0 += 1;
                    counts.1 += size;
                    results.push(ok);
                }
                Err(e) => {
                    failed += 1;
                    counts.2 += 1;
                    results.push(json!({ "ErrorCode": e.code, "ErrorMessage": e.message }));
                }
            }
        }
        for (i, (records, bytes, throttled)) in per_shard {
            let outcome = Outcome {
                throttled,
                records,
                bytes,
            };
            self.stats.record(&stream.name, i, Api::PutRecords, outcome);
        }
        Ok(json!({ "FailedRecordCount": failed, "Records": results, "EncryptionType": "NONE" }))
    }

    pub(super) fn get_shard_iterator(&self, req: &Req) -> ApiResult<Value> {
        let stream = self.active_stream_from(req)?;
        let shard_id = req.str("ShardId")?;
        let kind = req.str("ShardIteratorType")?;
        let shard_lock = stream.shard(shard_id)?;
        let seq = req.str_opt("StartingSequenceNumber")?;
        let timestamp = req.timestamp_opt("Timestamp")?;
        let now = self.clock.now();
        let mut shard = shard_lock.lock();
        let position = match kind {
            "TRIM_HORIZON" => shard.first_counter,
            "LATEST" => shard.next_counter,
            "AT_SEQUENCE_NUMBER" | "AFTER_SEQUENCE_NUMBER" => {
                let seq = seq.ok_or_else(|| {
                    ApiError::invalid_argument(format!(
                        "StartingSequenceNumber is required for ShardIteratorType {kind}."
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
                let ts = timestamp.ok_or_else(|| {
                    ApiError::invalid_argument(
                        "Timestamp is required for ShardIteratorType AT_TIMESTAMP.",
                    )
                })?;
                shard.counter_at_time((ts * 1e6) as i64)
            }
            other => {
                return Err(ApiError::validation(
                    "ShardIteratorType",
                    &format!("'{}'", preview(other)),
                    "Member must satisfy enum value set: [AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER, TRIM_HORIZON, LATEST, AT_TIMESTAMP]",
                ));
            }
        };
        if !shard.iterator_rate.try_admit(now) {
            drop(shard);
            self.stats.record(
                &stream.name,
                parse_index(shard_id),
                Api::GetShardIterator,
                Outcome::THROTTLED,
            );
            return Err(ApiError::throughput(shard_id, &stream.name, ACCOUNT));
        }
        let index = shard.index;
        drop(shard);
        self.stats.record(
            &stream.name,
            index,
            Api::GetShardIterator,
            Outcome::default(),
        );
        let it = Iterator {
            stream: stream.name.to_string(),
            incarnation: stream.incarnation,
            shard: index,
            position,
            created_ms: self.clock.now_micros() / 1000,
            epoch: self
                .iterator_epoch
                .load(std::sync::atomic::Ordering::Relaxed),
        };
        Ok(json!({ "ShardIterator": it.encode() }))
    }

    pub(super) fn get_records(&self, req: &Req) -> ApiResult<Value> {
        let text = req
            .str_len("ShardIterator", 1, 512)?
            .ok_or_else(|| ApiError::missing("ShardIterator"))?;
        let limit = req
            .int_opt("Limit", 1, 10_000)?
            .map_or(self.limits.get_records_max_records, |l| l as u32)
            .min(self.limits.get_records_max_records) as usize;
        let it = Iterator::decode(text)
            .ok_or_else(|| ApiError::invalid_argument("Invalid ShardIterator."))?;
        let stream = self
            .stream_by_name(&it.stream)
            .ok()
            .filter(|s| s.incarnation == it.incarnation)
            .ok_or_else(|| {
                ApiError::not_found(format!(
                    "Shard {} in stream {} under account {ACCOUNT} does not exist",
                    store::shard_id(it.shard),
                    it.stream
                ))
            })?;
        let now_ms = self.clock.now_micros() / 1000;
        let expiry = self.limits.iterator_expiry.as_millis();
        if (now_ms - it.created_ms) as i128 > expiry as i128 {
            return Err(ApiError::expired_iterator(it.created_ms, now_ms, expiry));
        }
        if it.epoch
            < self
                .iterator_epoch
                .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Err(ApiError::new(
                "ExpiredIteratorException",
                "Iterator expired: every iterator handed out before an injected fault (kinesis.expire-iterators) has expired.",
            ));
        }
        let shard_lock = stream
            .shard_at(it.shard)
            .ok_or_else(|| ApiError::invalid_argument("Invalid ShardIterator."))?;
        let now = self.clock.now();
        let mut shard = shard_lock.lock();
        if !shard.is_open() {
            // Nothing is appended to a closed shard, so only reads trim it.
            shard.trim(now, self.limits.retention, u64::MAX);
        }
        let penalized = shard.penalty_until.is_some_and(|t| now < t);
        if penalized || !shard.read_bytes.can_take(now, 0) || !shard.get_records_rate.try_admit(now)
        {
            let id = shard.id.clone();
            drop(shard);
            self.stats
                .record(&stream.name, it.shard, Api::GetRecords, Outcome::THROTTLED);
            return Err(ApiError::throughput(&id, &stream.name, ACCOUNT));
        }
        let start = it.position.max(shard.first_counter);
        let mut taken: Vec<Record> = Vec::new();
        let mut bytes = 0u64;
        // Whether the call returned the per-call maximum of data: it stopped because the next
        // visible record would have taken it past 10 MiB (or it reached 10 MiB exactly). Either
        // way it returned all the data one call may; docs/emulator.md explains the reading.
        let mut at_byte_maximum = false;
        for r in shard.records.range(shard.index_of(start)..) {
            if taken.len() >= limit || r.visible_at > now {
                break;
            }
            if bytes + r.size() > self.limits.get_records_max_bytes && !taken.is_empty() {
                at_byte_maximum = true;
                break;
            }
            bytes += r.size();
            taken.push(r.clone());
        }
        at_byte_maximum |= bytes >= self.limits.get_records_max_bytes;
        let next = taken.last().map_or(start, |r| r.counter + 1);
        let behind = shard
            .records
            .get(shard.index_of(next))
            .filter(|r| r.counter == next && r.visible_at <= now)
            .map_or(0, |r| {
                ((self.clock.now_micros() - r.arrival_micros) / 1000).max(0)
            });
        shard.read_bytes.take(now, bytes);
        if at_byte_maximum {
            shard.penalty_until = Some(now + self.limits.large_read_penalty);
        }
        let index = shard.index;
        // A closed shard read to its end: no next iterator, and the shards its keys went to.
        let children = shard
            .closed
            .as_ref()
            .filter(|c| next >= c.end)
            .map(|c| c.children.clone());
        drop(shard);
        self.stats.record(
            &stream.name,
            index,
            Api::GetRecords,
            Outcome::delivered(taken.len() as u64, bytes),
        );
        let records: Vec<RecordOut> = taken.iter().map(|r| RecordOut::new(index, r)).collect();
        let next_it = Iterator {
            position: next,
            created_ms: now_ms,
            ..it
        };
        Ok(match children {
            Some(children) => json!({
                "Records": records,
                "NextShardIterator": null,
                "MillisBehindLatest": 0,
                "ChildShards": child_shards(&stream, &children),
            }),
            None => json!({
                "Records": records,
                "NextShardIterator": next_it.encode(),
                "MillisBehindLatest": behind,
            }),
        })
    }
}

/// The counter of a sequence number given for this shard, or the service's error for it.
pub(super) fn counter_of(seq: &str, shard: &Shard, stream: &Stream) -> ApiResult<u64> {
    let invalid = |why: &str| {
        ApiError::invalid_argument(format!(
            "StartingSequenceNumber {} used in GetShardIterator on shard {} in stream {} under account {ACCOUNT} is invalid{why}.",
            preview(seq),
            shard.id,
            stream.name
        ))
    };
    match parse_sequence_number(seq) {
        None => Err(invalid("")),
        Some((index, _)) if index != shard.index => {
            Err(invalid(" because it did not come from this shard"))
        }
        Some((_, counter)) if counter >= shard.next_counter => Err(invalid(
            " because it is beyond the newest record of the shard",
        )),
        Some((_, counter)) => Ok(counter),
    }
}

/// The `ChildShards` of a closed shard: each child with its parents and hash key range.
pub(super) fn child_shards(stream: &Stream, children: &[u32]) -> Vec<Value> {
    children
        .iter()
        .filter_map(|i| stream.shard_at(*i))
        .map(|c| {
            let c = c.lock();
            json!({
                "ShardId": c.id,
                "ParentShards": c.parent_ids(),
                "HashKeyRange": {
                    "StartingHashKey": c.hash_start.to_string(),
                    "EndingHashKey": c.hash_end.to_string(),
                },
            })
        })
        .collect()
}

fn parse_index(shard_id: &str) -> u32 {
    store::parse_shard_id(shard_id).unwrap_or(0)
}

/// Puts the member path of a nested record into an error raised for a plain member name.
fn rename(e: ApiError, from: &str, to: &str) -> ApiError {
    let camel_from = format!("'{}{}'", from[..1].to_lowercase(), &from[1..]);
    ApiError {
        message: e.message.replace(&camel_from, &format!("'{to}'")),
        ..e
    }
}
