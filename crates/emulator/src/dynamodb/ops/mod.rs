//! DynamoDB's operations: tables (`tables.rs`), items, Query and batches (`items.rs`), and the
//! expressions they take as far as the emulator reads them (`expr.rs`: a condition of
//! `attribute_exists`, `attribute_not_exists`, `=` and `<>` joined by AND; a key condition on the
//! partition key with an optional sort-key comparison, BETWEEN or begins_with; an update of SET,
//! REMOVE and ADD). Anything else in an expression is a ValidationException that says the
//! emulator does not read it. Tables are ACTIVE as soon as they are made.

mod expr;
mod items;
mod streams;
mod tables;

use std::sync::atomic::Ordering;

use serde_json::{Map, Value, json};

use super::item::{Item, KeyValue, check_value, item_size};
use super::table::{Key, Table, Throttle, Use};
use super::{DynamoError, DynamoResult, Dynamodb};
use latlab_core::services::dynamodb::Op;

type Args = Map<String, Value>;

pub(super) fn s<'a>(a: &'a Args, k: &str) -> Option<&'a str> {
    a.get(k).and_then(Value::as_str)
}

pub(super) fn required<'a>(a: &'a Args, k: &str) -> DynamoResult<&'a str> {
    s(a, k).ok_or_else(|| {
        DynamoError::validation(format!(
            "1 validation error detected: Value null at '{}' failed to satisfy constraint: Member must not be null",
            lower_first(k)
        ))
    })
}

pub(super) fn lower_first(k: &str) -> String {
    let mut c = k.chars();
    c.next()
        .map(|f| f.to_lowercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

pub(super) fn object<'a>(a: &'a Args, k: &str) -> DynamoResult<&'a Map<String, Value>> {
    a.get(k).and_then(Value::as_object).ok_or_else(|| {
        DynamoError::validation(format!(
            "1 validation error detected: Value null at '{}' failed to satisfy constraint: Member must not be null",
            lower_first(k)
        ))
    })
}

pub(super) fn check_item(item: &Item) -> DynamoResult<()> {
    for (name, v) in item {
        check_value(v).map_err(|e| {
            DynamoError::validation(format!(
                "One or more parameter values were invalid: {name}: {e}"
            ))
        })?;
    }
    Ok(())
}

/// `ConsumedCapacity` as a call with `ReturnConsumedCapacity` TOTAL or INDEXES gets it.
pub(super) fn consumed(a: &Args, table: &str, what: Use, units: f64) -> Option<Value> {
    let mode = s(a, "ReturnConsumedCapacity").unwrap_or("NONE");
    if mode == "NONE" {
        return None;
    }
    let mut c = json!({ "TableName": table, "CapacityUnits": units });
    match what {
        Use::Read => c["ReadCapacityUnits"] = json!(units),
        Use::Write => c["WriteCapacityUnits"] = json!(units),
    }
    if mode == "INDEXES" {
        c["Table"] = json!({ "CapacityUnits": units });
    }
    Some(c)
}
impl Dynamodb {
    /// Answers one call.
    pub(super) fn handle(&self, op: Op, body: &[u8], region: &str) -> DynamoResult<Value> {
        let args: Args = match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(m)) => m,
            _ => {
                return Err(DynamoError::of(
                    400,
                    "SerializationException",
                    "the request body is not a JSON object",
                ));
            }
        };
        match op {
            Op::CreateTable => self.create_table(&args, region),
            Op::DescribeTable => {
                let name = required(&args, "TableName")?;
                self.with_table(name, |t| Ok(json!({ "Table": t.describe("ACTIVE") })))
            }
            Op::UpdateTable => self.update_table(&args),
            Op::DeleteTable => {
                let name = required(&args, "TableName")?;
                let t = self
                    .tables
                    .lock()
                    .remove(name)
                    .ok_or_else(|| not_found(name))?;
                Ok(json!({ "TableDescription": t.describe("DELETING") }))
            }
            Op::ListTables => Ok(self.list_tables(&args)),
            Op::TagResource | Op::UntagResource | Op::ListTagsOfResource => self.tags(op, &args),
            Op::PutItem => self.put_item(&args),
            Op::GetItem => self.get_item(&args),
            Op::UpdateItem => self.update_item(&args),
            Op::DeleteItem => self.delete_item(&args),
            Op::Query => self.query(&args),
            Op::BatchWriteItem => self.batch_write(&args),
            Op::BatchGetItem => self.batch_get(&args),
            Op::EnableKinesisStreamingDestination
            | Op::DisableKinesisStreamingDestination
            | Op::DescribeKinesisStreamingDestination => self.destination(op, &args),
            Op::ListStreams => Ok(self.list_streams(&args)),
            Op::DescribeStream => self.describe_stream(&args),
            Op::GetShardIterator => self.get_shard_iterator(&args),
            Op::GetRecords => self.get_records(&args),
        }
    }

    pub(super) fn with_table<T>(
        &self,
        name: &str,
        f: impl FnOnce(&mut Table) -> DynamoResult<T>,
    ) -> DynamoResult<T> {
        let mut tables = self.tables.lock();
        let t = tables.get_mut(name).ok_or_else(|| not_found(name))?;
        f(t)
    }

    /// Takes capacity for a call, or turns the throttle into the error DynamoDB sends.
    pub(super) fn admit(
        &self,
        t: &mut Table,
        pk: &KeyValue,
        what: Use,
        units: f64,
    ) -> DynamoResult<()> {
        let now = self.clock.now();
        let second = self.second();
        t.admit(pk, what, units, &self.limits, now, second)
            .map_err(|th| self.throttled(th, &t.arn))
    }

    /// Stores an item of `size` bytes under `key`, and its change on the table's stream; the
    /// item it replaced.
    pub(super) fn store(&self, t: &mut Table, key: Key, item: Item, size: u64) -> Option<Item> {
        let old = t.items.insert(key.clone(), item);
        t.bytes = (t.bytes + size).saturating_sub(old.as_ref().map_or(0, item_size));
        let new = t.items.get(&key).cloned();
        self.changed(t, &key, old.as_ref(), new.as_ref());
        old
    }

    /// Removes the item under `key`, and records its removal on the table's stream.
    pub(super) fn remove(&self, t: &mut Table, key: &Key) -> Option<Item> {
        let old = t.items.remove(key);
        if let Some(o) = &old {
            t.bytes = t.bytes.saturating_sub(item_size(o));
            self.changed(t, key, Some(o), None);
        }
        old
    }

    /// A change of the item under `key` on the table's stream and into its Kinesis data
    /// streams, if it has them.
    fn changed(&self, t: &mut Table, key: &Key, old: Option<&Item>, new: Option<&Item>) {
        let pushes: Vec<String> = t
            .destinations
            .iter()
            .filter(|(_, on)| *on)
            .map(|(arn, _)| arn.clone())
            .collect();
        if t.stream.is_none() && pushes.is_empty() {
            return;
        }
        let partition = t.partition_of(&key.0);
        let keys = key_value(t, key);
        let region = t.arn.split(':').nth(3).unwrap_or("us-east-1").to_string();
        let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        let delay = self.profile.read().stream_visibility.sample();
        let now = self.clock.now();
        if !pushes.is_empty() {
            let event = match (old, new) {
                (None, _) => "INSERT",
                (Some(_), Some(_)) => "MODIFY",
                (Some(_), None) => "REMOVE",
            };
            let obj = |i: Option<&Item>| i.map(|i| Value::Object(i.clone()));
            let size = new.or(old).map_or(0, item_size);
            let data = super::destination::record(
                event,
                &t.name,
                &region,
                seq,
                &keys,
                obj(old).as_ref(),
                obj(new).as_ref(),
                size,
            );
            // One partition key per item, so an item's changes keep their order (an assumption:
            // AWS does not publish the key it uses).
            let partition_key = format!("{:032x}", md5_hex(&keys));
            let due = tokio::time::Instant::now() + self.profile.read().kinesis_push.sample();
            for to in pushes {
                self.push(super::destination::Push {
                    due,
                    to,
                    partition_key: partition_key.clone(),
                    data: data.clone(),
                });
            }
        }
        if let Some(stream) = &mut t.stream {
            stream.record(partition, seq, keys, old, new, &region, now, delay);
        }
    }

    pub(super) fn throttled(&self, th: Throttle, arn: &str) -> DynamoError {
        self.throttled.fetch_add(1, Ordering::Relaxed);
        let resource = th.index_arn.unwrap_or_else(|| arn.to_string());
        DynamoError {
            status: 400,
            kind: th.exception,
            message: th.message.to_string(),
            reasons: vec![(th.reason, resource)],
        }
    }

    /// Takes write capacity for a change of the item under `key` from `old` to `new` (the
    /// table's indexes first), or turns the throttle into the error DynamoDB sends.
    pub(super) fn admit_write(
        &self,
        t: &mut Table,
        key: &Key,
        old: Option<&Item>,
        new: Option<&Item>,
        units: f64,
    ) -> DynamoResult<()> {
        let now = self.clock.now();
        let second = self.second();
        t.admit_write(&key.0, old, new, units, &self.limits, now, second)
            .map_err(|th| self.throttled(th, &t.arn))
    }
}

pub(super) fn not_found(name: &str) -> DynamoError {
    DynamoError::not_found(format!(
        "Requested resource not found: Table: {name} not found"
    ))
}
/// A key given alone (GetItem, DeleteItem, ...): exactly the table's key attributes.
pub(super) fn key_only(t: &Table, m: &Map<String, Value>) -> DynamoResult<Key> {
    let expected = 1 + usize::from(t.key.range.is_some());
    if m.len() != expected {
        return Err(DynamoError::validation(
            "The provided key element does not match the schema",
        ));
    }
    t.key_of(m)
        .map_err(|_| DynamoError::validation("The provided key element does not match the schema"))
}

/// A key as an answer writes it (`LastEvaluatedKey`).
pub(super) fn key_value(t: &Table, k: &Key) -> Value {
    let mut m = Map::new();
    m.insert(t.key.hash.0.clone(), k.0.to_value());
    if let (Some((rn, _)), Some(rv)) = (&t.key.range, &k.1) {
        m.insert(rn.clone(), rv.to_value());
    }
    Value::Object(m)
}

/// The MD5 of a value's JSON, as a number.
fn md5_hex(v: &Value) -> u128 {
    use md5::{Digest, Md5};
    u128::from_be_bytes(Md5::digest(v.to_string().as_bytes()).into())
}
