//! Items: put, get, update and delete one, Query a partition, and write or read in batches,
//! each taking the capacity it consumes or refused for throughput.

use std::ops::Bound;

use serde_json::{Map, Value, json};

use super::super::item::{Item, item_size, read_units, write_units};
use super::super::table::{Key, Use};
use super::expr::{Exprs, KeyCondition, apply_update, check_condition};
use super::{Args, check_item, consumed, key_only, key_value, not_found, object, required, s};
use crate::dynamodb::{DynamoError, DynamoResult, Dynamodb};

impl Dynamodb {
    pub(super) fn put_item(&self, a: &Args) -> DynamoResult<Value> {
        let name = required(a, "TableName")?;
        let item = object(a, "Item")?.clone();
        check_item(&item)?;
        let size = item_size(&item);
        if size > self.limits.max_item_bytes {
            return Err(DynamoError::validation(
                "Item size has exceeded the maximum allowed size",
            ));
        }
        let exprs = Exprs::of(a)?;
        self.with_table(name, |t| {
            let key = t.key_of(&item).map_err(|e| {
                DynamoError::validation(format!("One or more parameter values were invalid: {e}"))
            })?;
            let old = t.items.get(&key).cloned();
            let units = write_units(size.max(old.as_ref().map_or(0, item_size)));
            self.admit_write(t, &key, old.as_ref(), Some(&item), units)?;
            check_condition(a, &exprs, old.as_ref())?;
            let old = self.store(t, key, item, size);
            Ok(written(a, name, old, None, units))
        })
    }

    pub(super) fn get_item(&self, a: &Args) -> DynamoResult<Value> {
        let name = required(a, "TableName")?;
        let key_map = object(a, "Key")?.clone();
        let strong = a.get("ConsistentRead").and_then(Value::as_bool) == Some(true);
        self.with_table(name, |t| {
            let key = key_only(t, &key_map)?;
            let found = t.items.get(&key).cloned();
            let units = read_units(found.as_ref().map_or(0, item_size), strong);
            self.admit(t, &key.0, Use::Read, units)?;
            let mut out = json!({});
            if let Some(i) = found {
                out["Item"] = Value::Object(i);
            }
            if let Some(c) = consumed(a, name, Use::Read, units) {
                out["ConsumedCapacity"] = c;
            }
            Ok(out)
        })
    }

    pub(super) fn update_item(&self, a: &Args) -> DynamoResult<Value> {
        let name = required(a, "TableName")?;
        let key_map = object(a, "Key")?.clone();
        let exprs = Exprs::of(a)?;
        self.with_table(name, |t| {
            let key = key_only(t, &key_map)?;
            let old = t.items.get(&key).cloned();
            let mut new = old.clone().unwrap_or_else(|| key_map.clone());
            if let Some(u) = s(a, "UpdateExpression") {
                apply_update(u, &exprs, &mut new, t)?;
            }
            check_item(&new)?;
            let size = item_size(&new);
            if size > self.limits.max_item_bytes {
                return Err(DynamoError::validation(
                    "Item size to update has exceeded the maximum allowed size",
                ));
            }
            let units = write_units(size.max(old.as_ref().map_or(0, item_size)));
            self.admit_write(t, &key, old.as_ref(), Some(&new), units)?;
            check_condition(a, &exprs, old.as_ref())?;
            self.store(t, key, new.clone(), size);
            Ok(written(a, name, old, Some(new), units))
        })
    }

    pub(super) fn delete_item(&self, a: &Args) -> DynamoResult<Value> {
        let name = required(a, "TableName")?;
        let key_map = object(a, "Key")?.clone();
        let exprs = Exprs::of(a)?;
        self.with_table(name, |t| {
            let key = key_only(t, &key_map)?;
            let old = t.items.get(&key).cloned();
            let units = write_units(old.as_ref().map_or(0, item_size));
            self.admit_write(t, &key, old.as_ref(), None, units)?;
            check_condition(a, &exprs, old.as_ref())?;
            let old = self.remove(t, &key);
            Ok(written(a, name, old, None, units))
        })
    }

    pub(super) fn query(&self, a: &Args) -> DynamoResult<Value> {
        let name = required(a, "TableName")?;
        let cond = required(a, "KeyConditionExpression")?;
        let exprs = Exprs::of(a)?;
        let strong = a.get("ConsistentRead").and_then(Value::as_bool) == Some(true);
        let forward = a.get("ScanIndexForward").and_then(Value::as_bool) != Some(false);
        let limit = a.get("Limit").and_then(Value::as_u64).map(|l| l as usize);
        self.with_table(name, |t| {
            let kc = KeyCondition::parse(cond, &exprs, &t.key)?;
            let start = match a.get("ExclusiveStartKey").and_then(Value::as_object) {
                Some(m) => Some(key_only(t, m)?),
                None => None,
            };
            let lo = Bound::Included((kc.pk.clone(), None));
            let mut matched: Vec<(&Key, &Item)> = t
                .items
                .range((lo, Bound::Unbounded))
                .take_while(|(k, _)| k.0 == kc.pk)
                .filter(|(k, _)| kc.sort_matches(k.1.as_ref()))
                .collect();
            if !forward {
                matched.reverse();
            }
            if let Some(s) = &start
                && let Some(i) = matched.iter().position(|(k, _)| *k == s)
            {
                matched.drain(..=i);
            }
            let more = limit.is_some_and(|l| matched.len() > l);
            if let Some(l) = limit {
                matched.truncate(l);
            }
            let bytes: u64 = matched.iter().map(|(_, i)| item_size(i)).sum();
            let last = more.then(|| matched.last().map(|(k, _)| key_value(t, k)));
            let items: Vec<Value> = matched
                .iter()
                .map(|(_, i)| Value::Object((*i).clone()))
                .collect();
            let units = read_units(bytes, strong);
            let pk = kc.pk.clone();
            self.admit(t, &pk, Use::Read, units)?;
            let mut out = json!({
                "Count": items.len(),
                "ScannedCount": items.len(),
            });
            if s(a, "Select") != Some("COUNT") {
                out["Items"] = Value::Array(items);
            }
            if let Some(Some(k)) = last {
                out["LastEvaluatedKey"] = k;
            }
            if let Some(c) = consumed(a, name, Use::Read, units) {
                out["ConsumedCapacity"] = c;
            }
            Ok(out)
        })
    }

    pub(super) fn batch_write(&self, a: &Args) -> DynamoResult<Value> {
        let requests = object(a, "RequestItems")?;
        let total: usize = requests
            .values()
            .map(|v| v.as_array().map_or(0, Vec::len))
            .sum();
        if total == 0 || total > self.limits.batch_write_max as usize {
            return Err(DynamoError::validation(format!(
                "1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Member must have between 1 and {} put or delete requests; {total} were given",
                self.limits.batch_write_max
            )));
        }
        let mut unprocessed: Map<String, Value> = Map::new();
        let mut capacity = Vec::new();
        let mut done = 0;
        let mut last_throttle = None;
        let mut tables = self.tables.lock();
        for (name, entries) in requests {
            let t = tables.get_mut(name).ok_or_else(|| not_found(name))?;
            let mut units_total = 0.0;
            for e in entries.as_array().into_iter().flatten() {
                let (item, delete) = match (
                    e.get("PutRequest")
                        .and_then(|p| p.get("Item"))
                        .and_then(Value::as_object),
                    e.get("DeleteRequest")
                        .and_then(|d| d.get("Key"))
                        .and_then(Value::as_object),
                ) {
                    (Some(i), None) => (i.clone(), false),
                    (None, Some(k)) => (k.clone(), true),
                    _ => {
                        return Err(DynamoError::validation(
                            "each request of RequestItems is one PutRequest with an Item or one DeleteRequest with a Key",
                        ));
                    }
                };
                check_item(&item)?;
                let key = if delete {
                    key_only(t, &item)?
                } else {
                    t.key_of(&item).map_err(|e| {
                        DynamoError::validation(format!(
                            "One or more parameter values were invalid: {e}"
                        ))
                    })?
                };
                let size = if delete { 0 } else { item_size(&item) };
                if size > self.limits.max_item_bytes {
                    return Err(DynamoError::validation(
                        "Item size has exceeded the maximum allowed size",
                    ));
                }
                let old = t.items.get(&key).cloned();
                let units = write_units(size.max(old.as_ref().map_or(0, item_size)));
                let new = (!delete).then_some(&item);
                match self.admit_write(t, &key, old.as_ref(), new, units) {
                    Ok(()) => {
                        done += 1;
                        units_total += units;
                        if delete {
                            self.remove(t, &key);
                        } else {
                            self.store(t, key, item, size);
                        }
                    }
                    Err(err) => {
                        last_throttle = Some(err);
                        unprocessed
                            .entry(name.clone())
                            .or_insert_with(|| Value::Array(Vec::new()))
                            .as_array_mut()
                            .expect("an array")
                            .push(e.clone());
                    }
                }
            }
            if let Some(c) = consumed(a, name, Use::Write, units_total) {
                capacity.push(c);
            }
        }
        // None processed, all for throughput: the call itself is throttled, as DynamoDB does.
        if done == 0
            && let Some(err) = last_throttle
        {
            return Err(err);
        }
        let mut out = json!({ "UnprocessedItems": unprocessed });
        if !capacity.is_empty() {
            out["ConsumedCapacity"] = Value::Array(capacity);
        }
        Ok(out)
    }

    pub(super) fn batch_get(&self, a: &Args) -> DynamoResult<Value> {
        let requests = object(a, "RequestItems")?;
        let total: usize = requests
            .values()
            .map(|v| v.get("Keys").and_then(Value::as_array).map_or(0, Vec::len))
            .sum();
        if total == 0 || total > self.limits.batch_get_max as usize {
            return Err(DynamoError::validation(format!(
                "Too many items requested for the BatchGetItem call: at most {}, and at least 1; {total} were given",
                self.limits.batch_get_max
            )));
        }
        let mut responses: Map<String, Value> = Map::new();
        let mut unprocessed: Map<String, Value> = Map::new();
        let mut capacity = Vec::new();
        let mut done = 0;
        let mut last_throttle = None;
        let mut tables = self.tables.lock();
        for (name, req) in requests {
            let t = tables.get_mut(name).ok_or_else(|| not_found(name))?;
            let strong = req.get("ConsistentRead").and_then(Value::as_bool) == Some(true);
            let mut got = Vec::new();
            let mut left = Vec::new();
            let mut units_total = 0.0;
            for k in req
                .get("Keys")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let m = k
                    .as_object()
                    .ok_or_else(|| DynamoError::validation("each of Keys is a map"))?;
                let key = key_only(t, m)?;
                let found = t.items.get(&key).cloned();
                let units = read_units(found.as_ref().map_or(0, item_size), strong);
                match self.admit(t, &key.0, Use::Read, units) {
                    Ok(()) => {
                        done += 1;
                        units_total += units;
                        if let Some(i) = found {
                            got.push(Value::Object(i));
                        }
                    }
                    Err(e) => {
                        last_throttle = Some(e);
                        left.push(k.clone());
                    }
                }
            }
            responses.insert(name.clone(), Value::Array(got));
            if !left.is_empty() {
                let mut r = req.clone();
                r["Keys"] = Value::Array(left);
                unprocessed.insert(name.clone(), r);
            }
            if let Some(c) = consumed(a, name, Use::Read, units_total) {
                capacity.push(c);
            }
        }
        if done == 0
            && let Some(err) = last_throttle
        {
            return Err(err);
        }
        let mut out = json!({ "Responses": responses, "UnprocessedKeys": unprocessed });
        if !capacity.is_empty() {
            out["ConsumedCapacity"] = Value::Array(capacity);
        }
        Ok(out)
    }
}

/// A write's answer: the item before (`ReturnValues` ALL_OLD) or after it (ALL_NEW, for an
/// update) and the capacity it consumed, as the call asked.
fn written(a: &Args, table: &str, old: Option<Item>, new: Option<Item>, units: f64) -> Value {
    let mut out = json!({});
    let attributes = match s(a, "ReturnValues") {
        Some("ALL_OLD") => old,
        Some("ALL_NEW") => new,
        _ => None,
    };
    if let Some(i) = attributes {
        out["Attributes"] = Value::Object(i);
    }
    if let Some(c) = consumed(a, table, Use::Write, units) {
        out["ConsumedCapacity"] = c;
    }
    out
}
