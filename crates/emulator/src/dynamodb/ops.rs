//! DynamoDB's operations: tables, items, Query, batches, and the expressions they take as far as
//! the emulator reads them (a condition of `attribute_exists`, `attribute_not_exists`, `=` and
//! `<>` joined by AND; a key condition on the partition key with an optional sort-key
//! comparison, BETWEEN or begins_with; an update of SET, REMOVE and ADD). Anything else in an
//! expression is a ValidationException that says the emulator does not read it. Tables are
//! ACTIVE as soon as they are made.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::Ordering;

use serde_json::{Map, Value, json};

use super::item::{Item, KeyType, KeyValue, check_value, item_size, read_units, write_units};
use super::table::{Billing, Key, KeySchema, Table, Throttle, Use};
use super::{DynamoError, DynamoResult, Dynamodb};
use latlab_core::services::dynamodb::{Op, name_problem};

type Args = Map<String, Value>;

fn s<'a>(a: &'a Args, k: &str) -> Option<&'a str> {
    a.get(k).and_then(Value::as_str)
}

fn required<'a>(a: &'a Args, k: &str) -> DynamoResult<&'a str> {
    s(a, k).ok_or_else(|| {
        DynamoError::validation(format!(
            "1 validation error detected: Value null at '{}' failed to satisfy constraint: Member must not be null",
            lower_first(k)
        ))
    })
}

fn lower_first(k: &str) -> String {
    let mut c = k.chars();
    c.next()
        .map(|f| f.to_lowercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn object<'a>(a: &'a Args, k: &str) -> DynamoResult<&'a Map<String, Value>> {
    a.get(k).and_then(Value::as_object).ok_or_else(|| {
        DynamoError::validation(format!(
            "1 validation error detected: Value null at '{}' failed to satisfy constraint: Member must not be null",
            lower_first(k)
        ))
    })
}

fn check_item(item: &Item) -> DynamoResult<()> {
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
fn consumed(a: &Args, table: &str, what: Use, units: f64) -> Option<Value> {
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
        }
    }

    fn with_table<T>(
        &self,
        name: &str,
        f: impl FnOnce(&mut Table) -> DynamoResult<T>,
    ) -> DynamoResult<T> {
        let mut tables = self.tables.lock();
        let t = tables.get_mut(name).ok_or_else(|| not_found(name))?;
        f(t)
    }

    /// Takes capacity for a call, or turns the throttle into the error DynamoDB sends.
    fn admit(&self, t: &mut Table, pk: &KeyValue, what: Use, units: f64) -> DynamoResult<()> {
        let now = self.clock.now();
        let second = self.second();
        t.admit(pk, what, units, &self.limits, now, second)
            .map_err(|th| self.throttled(th, &t.arn))
    }

    fn throttled(&self, th: Throttle, arn: &str) -> DynamoError {
        self.throttled.fetch_add(1, Ordering::Relaxed);
        DynamoError {
            status: 400,
            kind: th.exception,
            message: th.message.to_string(),
            reasons: vec![(th.reason, arn.to_string())],
        }
    }

    fn create_table(&self, a: &Args, region: &str) -> DynamoResult<Value> {
        let name = required(a, "TableName")?;
        if let Some(p) = name_problem(name) {
            return Err(DynamoError::validation(p));
        }
        let defs = a
            .get("AttributeDefinitions")
            .and_then(Value::as_array)
            .ok_or_else(|| DynamoError::validation("AttributeDefinitions must be given"))?;
        let type_of = |attr: &str| -> DynamoResult<KeyType> {
            defs.iter()
                .find(|d| d.get("AttributeName").and_then(Value::as_str) == Some(attr))
                .and_then(|d| d.get("AttributeType").and_then(Value::as_str))
                .and_then(KeyType::parse)
                .ok_or_else(|| {
                    DynamoError::validation(format!(
                        "One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [{attr}]"
                    ))
                })
        };
        let schema = a
            .get("KeySchema")
            .and_then(Value::as_array)
            .ok_or_else(|| DynamoError::validation("KeySchema must be given"))?;
        let part = |kind: &str| {
            schema
                .iter()
                .find(|k| k.get("KeyType").and_then(Value::as_str) == Some(kind))
                .and_then(|k| k.get("AttributeName").and_then(Value::as_str))
                .map(str::to_string)
        };
        let hash = part("HASH").ok_or_else(|| {
            DynamoError::validation(
                "One or more parameter values were invalid: Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
            )
        })?;
        let key = KeySchema {
            hash: (hash.clone(), type_of(&hash)?),
            range: match part("RANGE") {
                Some(r) => Some((r.clone(), type_of(&r)?)),
                None => None,
            },
        };
        let billing = billing_of(a, None)?;
        let mut tables = self.tables.lock();
        if tables.contains_key(name) {
            return Err(DynamoError::of(
                400,
                "ResourceInUseException",
                format!("Table already exists: {name}"),
            ));
        }
        let arn = format!("arn:aws:dynamodb:{region}:{}:table/{name}", crate::ACCOUNT);
        let created = latlab_core::clock::now_micros() as f64 / 1e6;
        let mut t = Table::new(
            name.to_string(),
            arn.clone(),
            created,
            key,
            a.get("AttributeDefinitions").cloned().unwrap_or_default(),
            billing,
            &self.limits,
            self.clock.now(),
        );
        if let Some(g) = a.get("GlobalSecondaryIndexes").and_then(Value::as_array) {
            let described: Vec<Value> = g
                .iter()
                .map(|i| {
                    let mut d = i.clone();
                    let n = i.get("IndexName").and_then(Value::as_str).unwrap_or("");
                    d["IndexStatus"] = json!("ACTIVE");
                    d["IndexArn"] = json!(format!("{arn}/index/{n}"));
                    d
                })
                .collect();
            t.global_secondary_indexes = Some(Value::Array(described));
        }
        t.stream = a.get("StreamSpecification").cloned();
        for tag in a
            .get("Tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let (Some(k), Some(v)) = (
                tag.get("Key").and_then(Value::as_str),
                tag.get("Value").and_then(Value::as_str),
            ) {
                t.tags.insert(k.to_string(), v.to_string());
            }
        }
        let d = t.describe("ACTIVE");
        tables.insert(name.to_string(), t);
        Ok(json!({ "TableDescription": d }))
    }

    fn update_table(&self, a: &Args) -> DynamoResult<Value> {
        let name = required(a, "TableName")?;
        let now = self.clock.now();
        self.with_table(name, |t| {
            if a.contains_key("BillingMode") || a.contains_key("ProvisionedThroughput") {
                let billing = billing_of(a, Some(t.billing))?;
                t.set_billing(billing, &self.limits, now);
            }
            if let Some(spec) = a.get("StreamSpecification") {
                t.stream = Some(spec.clone());
            }
            Ok(json!({ "TableDescription": t.describe("ACTIVE") }))
        })
    }

    fn list_tables(&self, a: &Args) -> Value {
        let tables = self.tables.lock();
        let start = s(a, "ExclusiveStartTableName");
        let limit = a
            .get("Limit")
            .and_then(Value::as_u64)
            .unwrap_or(100)
            .clamp(1, 100) as usize;
        let names: Vec<&String> = tables
            .keys()
            .filter(|n| start.is_none_or(|s| n.as_str() > s))
            .collect();
        let page: Vec<&String> = names.iter().take(limit).copied().collect();
        let mut out = json!({ "TableNames": page });
        if names.len() > limit {
            out["LastEvaluatedTableName"] = json!(page.last());
        }
        out
    }

    fn tags(&self, op: Op, a: &Args) -> DynamoResult<Value> {
        let arn = required(a, "ResourceArn")?;
        let mut tables = self.tables.lock();
        let t = tables.values_mut().find(|t| t.arn == arn).ok_or_else(|| {
            DynamoError::not_found(format!(
                "Requested resource not found: ResourcArn: {arn} not found"
            ))
        })?;
        match op {
            Op::TagResource => {
                for tag in a
                    .get("Tags")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let (Some(k), Some(v)) = (
                        tag.get("Key").and_then(Value::as_str),
                        tag.get("Value").and_then(Value::as_str),
                    ) {
                        t.tags.insert(k.to_string(), v.to_string());
                    }
                }
                Ok(json!({}))
            }
            Op::UntagResource => {
                for k in a
                    .get("TagKeys")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(k) = k.as_str() {
                        t.tags.remove(k);
                    }
                }
                Ok(json!({}))
            }
            _ => Ok(json!({
                "Tags": t.tags.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>()
            })),
        }
    }

    fn put_item(&self, a: &Args) -> DynamoResult<Value> {
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
            let old = t.items.get(&key);
            let units = write_units(size.max(old.map_or(0, item_size)));
            self.admit(t, &key.0, Use::Write, units)?;
            check_condition(a, &exprs, t.items.get(&key))?;
            let old = put(t, key, item, size);
            let mut out = json!({});
            if s(a, "ReturnValues") == Some("ALL_OLD")
                && let Some(o) = old
            {
                out["Attributes"] = Value::Object(o);
            }
            if let Some(c) = consumed(a, name, Use::Write, units) {
                out["ConsumedCapacity"] = c;
            }
            Ok(out)
        })
    }

    fn get_item(&self, a: &Args) -> DynamoResult<Value> {
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

    fn update_item(&self, a: &Args) -> DynamoResult<Value> {
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
            self.admit(t, &key.0, Use::Write, units)?;
            check_condition(a, &exprs, old.as_ref())?;
            put(t, key, new.clone(), size);
            let mut out = json!({});
            match s(a, "ReturnValues").unwrap_or("NONE") {
                "ALL_NEW" => out["Attributes"] = Value::Object(new),
                "ALL_OLD" => {
                    if let Some(o) = old {
                        out["Attributes"] = Value::Object(o);
                    }
                }
                _ => {}
            }
            if let Some(c) = consumed(a, name, Use::Write, units) {
                out["ConsumedCapacity"] = c;
            }
            Ok(out)
        })
    }

    fn delete_item(&self, a: &Args) -> DynamoResult<Value> {
        let name = required(a, "TableName")?;
        let key_map = object(a, "Key")?.clone();
        let exprs = Exprs::of(a)?;
        self.with_table(name, |t| {
            let key = key_only(t, &key_map)?;
            let units = write_units(t.items.get(&key).map_or(0, item_size));
            self.admit(t, &key.0, Use::Write, units)?;
            check_condition(a, &exprs, t.items.get(&key))?;
            let old = t.items.remove(&key);
            if let Some(o) = &old {
                t.bytes = t.bytes.saturating_sub(item_size(o));
            }
            let mut out = json!({});
            if s(a, "ReturnValues") == Some("ALL_OLD")
                && let Some(o) = old
            {
                out["Attributes"] = Value::Object(o);
            }
            if let Some(c) = consumed(a, name, Use::Write, units) {
                out["ConsumedCapacity"] = c;
            }
            Ok(out)
        })
    }

    fn query(&self, a: &Args) -> DynamoResult<Value> {
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

    fn batch_write(&self, a: &Args) -> DynamoResult<Value> {
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
                let units = write_units(size.max(t.items.get(&key).map_or(0, item_size)));
                match self.admit(t, &key.0, Use::Write, units) {
                    Ok(()) => {
                        done += 1;
                        units_total += units;
                        if delete {
                            if let Some(o) = t.items.remove(&key) {
                                t.bytes = t.bytes.saturating_sub(item_size(&o));
                            }
                        } else {
                            put(t, key, item, size);
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

    fn batch_get(&self, a: &Args) -> DynamoResult<Value> {
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

fn not_found(name: &str) -> DynamoError {
    DynamoError::not_found(format!(
        "Requested resource not found: Table: {name} not found"
    ))
}

/// The billing a CreateTable or UpdateTable asks for (`current`: the table's, for an update).
fn billing_of(a: &Args, current: Option<Billing>) -> DynamoResult<Billing> {
    let mode = s(a, "BillingMode").unwrap_or(match current {
        Some(Billing::OnDemand) => "PAY_PER_REQUEST",
        _ => "PROVISIONED",
    });
    let pt = a.get("ProvisionedThroughput");
    match mode {
        "PAY_PER_REQUEST" => {
            if pt.is_some() && current.is_none() {
                return Err(DynamoError::validation(
                    "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
                ));
            }
            Ok(Billing::OnDemand)
        }
        "PROVISIONED" => {
            let units = |k: &str| pt.and_then(|p| p.get(k)).and_then(Value::as_u64);
            let (r, w) = match (
                units("ReadCapacityUnits"),
                units("WriteCapacityUnits"),
                current,
            ) {
                (Some(r), Some(w), _) => (r, w),
                (None, None, Some(Billing::Provisioned { read, write })) => (read, write),
                _ => {
                    return Err(DynamoError::validation(
                        "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED",
                    ));
                }
            };
            if r == 0 || w == 0 {
                return Err(DynamoError::validation(
                    "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must be at least 1",
                ));
            }
            Ok(Billing::Provisioned { read: r, write: w })
        }
        other => Err(DynamoError::validation(format!(
            "1 validation error detected: Value '{other}' at 'billingMode' failed to satisfy constraint: Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]"
        ))),
    }
}

/// A key given alone (GetItem, DeleteItem, ...): exactly the table's key attributes.
fn key_only(t: &Table, m: &Map<String, Value>) -> DynamoResult<Key> {
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
fn key_value(t: &Table, k: &Key) -> Value {
    let mut m = Map::new();
    m.insert(t.key.hash.0.clone(), k.0.to_value());
    if let (Some((rn, _)), Some(rv)) = (&t.key.range, &k.1) {
        m.insert(rn.clone(), rv.to_value());
    }
    Value::Object(m)
}

/// Stores an item of `size` bytes under `key`; the item it replaced.
fn put(t: &mut Table, key: Key, item: Item, size: u64) -> Option<Item> {
    let old = t.items.insert(key, item);
    t.bytes = t.bytes + size - old.as_ref().map_or(0, item_size).min(t.bytes + size);
    old
}

/// An expression's names (`#n`) and values (`:v`).
struct Exprs {
    names: Map<String, Value>,
    values: Map<String, Value>,
}

impl Exprs {
    fn of(a: &Args) -> DynamoResult<Exprs> {
        let values = a
            .get("ExpressionAttributeValues")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (k, v) in &values {
            check_value(v).map_err(|e| {
                DynamoError::validation(format!("ExpressionAttributeValues {k}: {e}"))
            })?;
        }
        Ok(Exprs {
            names: a
                .get("ExpressionAttributeNames")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            values,
        })
    }

    fn name(&self, token: &str) -> DynamoResult<String> {
        let token = token.trim();
        if token.starts_with('#') {
            self.names
                .get(token)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| {
                    DynamoError::validation(format!(
                        "Value provided in ExpressionAttributeNames unused in expressions or an expression attribute name used in an expression is not defined; attribute name: {token}"
                    ))
                })
        } else if token.is_empty() || token.contains(|c: char| !(c.is_alphanumeric() || c == '_')) {
            Err(DynamoError::validation(format!(
                "Invalid expression: the emulator reads a top-level attribute name or #name here, not '{token}'"
            )))
        } else {
            Ok(token.to_string())
        }
    }

    fn value(&self, token: &str) -> DynamoResult<Value> {
        let token = token.trim();
        self.values.get(token).cloned().ok_or_else(|| {
            DynamoError::validation(format!(
                "An expression attribute value used in expression is not defined; attribute value: {token}"
            ))
        })
    }
}

/// Splits on ` AND ` (any case) outside parentheses.
fn split_and(expr: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    let words: Vec<&str> = expr.split_whitespace().collect();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        depth += w.matches('(').count() as i32 - w.matches(')').count() as i32;
        if depth == 0 && w.eq_ignore_ascii_case("AND") && !cur.trim().is_empty() {
            // BETWEEN's own AND stays in its clause.
            if cur.to_ascii_uppercase().contains(" BETWEEN ") && !cur.contains("__and__") {
                cur.push_str(" __and__");
            } else {
                parts.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(' ');
            cur.push_str(w);
        }
        i += 1;
    }
    if !cur.trim().is_empty() {
        parts.push(cur);
    }
    parts.into_iter().map(|p| p.trim().to_string()).collect()
}

/// Whether a call's ConditionExpression holds against the item there now; ConditionalCheckFailed
/// when it does not.
fn check_condition(a: &Args, e: &Exprs, current: Option<&Item>) -> DynamoResult<()> {
    let Some(cond) = s(a, "ConditionExpression") else {
        return Ok(());
    };
    let attr = |n: &str| current.and_then(|i| i.get(n));
    for clause in split_and(cond) {
        let holds = if let Some(inner) = func(&clause, "attribute_not_exists") {
            attr(&e.name(inner)?).is_none()
        } else if let Some(inner) = func(&clause, "attribute_exists") {
            attr(&e.name(inner)?).is_some()
        } else if let Some((l, r)) = clause.split_once("<>") {
            attr(&e.name(l)?) != Some(&e.value(r)?)
        } else if let Some((l, r)) = clause.split_once('=') {
            attr(&e.name(l)?) == Some(&e.value(r)?)
        } else {
            return Err(DynamoError::validation(format!(
                "Invalid ConditionExpression: the emulator reads attribute_exists, attribute_not_exists, = and <> joined by AND; not '{clause}'"
            )));
        };
        if !holds {
            return Err(DynamoError::of(
                400,
                "ConditionalCheckFailedException",
                "The conditional request failed",
            ));
        }
    }
    Ok(())
}

/// The argument of `name(arg)` when `clause` is that call.
fn func<'a>(clause: &'a str, name: &str) -> Option<&'a str> {
    let c = clause.trim();
    let rest = c.strip_prefix(name)?.trim_start();
    rest.strip_prefix('(')?.strip_suffix(')')
}

/// A Query's key condition: the partition key's value and the sort key's test.
struct KeyCondition {
    pk: KeyValue,
    sort: Option<SortTest>,
}

enum SortTest {
    Cmp(&'static str, KeyValue),
    Between(KeyValue, KeyValue),
    BeginsWith(String),
}

impl KeyCondition {
    fn parse(expr: &str, e: &Exprs, key: &KeySchema) -> DynamoResult<KeyCondition> {
        let invalid =
            |why: &str| DynamoError::validation(format!("Invalid KeyConditionExpression: {why}"));
        let mut pk = None;
        let mut sort = None;
        for clause in split_and(expr) {
            let clause = clause.replace(" __and__", " AND");
            if let Some(inner) = func(&clause, "begins_with") {
                let (n, v) = inner
                    .split_once(',')
                    .ok_or_else(|| invalid("begins_with takes a key and a value"))?;
                let v = e.value(v)?;
                let text = v
                    .get("S")
                    .or_else(|| v.get("B"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid("begins_with takes a string or binary value"))?;
                check_sort_name(&e.name(n)?, key)?;
                sort = Some(SortTest::BeginsWith(text.to_string()));
                continue;
            }
            let upper = clause.to_ascii_uppercase();
            if let Some(at) = upper.find(" BETWEEN ") {
                let n = e.name(&clause[..at])?;
                let (rt, _) = check_sort_name(&n, key)?;
                let rest = &clause[at + 9..];
                let and = rest
                    .to_ascii_uppercase()
                    .find(" AND ")
                    .ok_or_else(|| invalid("BETWEEN takes two values"))?;
                let lo = KeyValue::of(&e.value(&rest[..and])?, rt).map_err(|x| invalid(&x))?;
                let hi = KeyValue::of(&e.value(&rest[and + 5..])?, rt).map_err(|x| invalid(&x))?;
                sort = Some(SortTest::Between(lo, hi));
                continue;
            }
            let op = ["<=", ">=", "<", ">", "="]
                .into_iter()
                .find(|op| clause.contains(op))
                .ok_or_else(|| invalid(&format!("the emulator reads =, <, <=, >, >=, BETWEEN and begins_with; not '{clause}'")))?;
            let (l, r) = clause.split_once(op).expect("found");
            let n = e.name(l)?;
            let v = e.value(r)?;
            if n == key.hash.0 && op == "=" {
                pk = Some(KeyValue::of(&v, key.hash.1).map_err(|x| invalid(&x))?);
            } else {
                let (rt, _) = check_sort_name(&n, key)?;
                sort = Some(SortTest::Cmp(
                    op,
                    KeyValue::of(&v, rt).map_err(|x| invalid(&x))?,
                ));
            }
        }
        let pk = pk.ok_or_else(|| {
            invalid(&format!(
                "Query condition missed key schema element: {}",
                key.hash.0
            ))
        })?;
        Ok(KeyCondition { pk, sort })
    }

    fn sort_matches(&self, sk: Option<&KeyValue>) -> bool {
        let Some(test) = &self.sort else {
            return true;
        };
        let Some(sk) = sk else {
            return false;
        };
        match test {
            SortTest::Cmp(op, v) => match *op {
                "=" => sk == v,
                "<" => sk < v,
                "<=" => sk <= v,
                ">" => sk > v,
                _ => sk >= v,
            },
            SortTest::Between(lo, hi) => sk >= lo && sk <= hi,
            SortTest::BeginsWith(p) => match sk {
                KeyValue::S(s) | KeyValue::B(s) => s.starts_with(p.as_str()),
                KeyValue::N(..) => false,
            },
        }
    }
}

fn check_sort_name<'a>(n: &str, key: &'a KeySchema) -> DynamoResult<(KeyType, &'a str)> {
    match &key.range {
        Some((rn, rt)) if rn == n => Ok((*rt, rn.as_str())),
        _ => Err(DynamoError::validation(format!(
            "Invalid KeyConditionExpression: '{n}' is not the table's partition key tested with = nor its sort key"
        ))),
    }
}

/// Applies an UpdateExpression's SET, REMOVE and ADD clauses to `item`; key attributes cannot
/// change.
fn apply_update(expr: &str, e: &Exprs, item: &mut Item, t: &Table) -> DynamoResult<()> {
    let keys: Vec<&str> = std::iter::once(t.key.hash.0.as_str())
        .chain(t.key.range.as_ref().map(|(n, _)| n.as_str()))
        .collect();
    let mut sections: BTreeMap<usize, (&str, &str)> = BTreeMap::new();
    let upper = expr.to_ascii_uppercase();
    for word in ["SET ", "REMOVE ", "ADD "] {
        let mut from = 0;
        while let Some(at) = upper[from..].find(word) {
            let at = from + at;
            let starts = at == 0 || upper.as_bytes()[at - 1].is_ascii_whitespace();
            if starts {
                sections.insert(at, (word.trim(), ""));
            }
            from = at + word.len();
        }
    }
    if sections.is_empty() {
        return Err(DynamoError::validation(format!(
            "Invalid UpdateExpression: the emulator reads SET, REMOVE and ADD; not '{expr}'"
        )));
    }
    let starts: Vec<usize> = sections.keys().copied().collect();
    for (i, at) in starts.iter().enumerate() {
        let (word, _) = sections[at];
        let end = starts.get(i + 1).copied().unwrap_or(expr.len());
        let body = &expr[at + word.len()..end];
        for part in body.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match word {
                "SET" => {
                    let (l, r) = part.split_once('=').ok_or_else(|| {
                        DynamoError::validation(format!(
                            "Invalid UpdateExpression: SET takes name = value; not '{part}'"
                        ))
                    })?;
                    let n = e.name(l)?;
                    let r = r.trim();
                    let v = if let Some((a, b)) = r.split_once('+') {
                        let base = item.get(&e.name(a)?).cloned();
                        add_numbers(base.as_ref(), &e.value(b)?)?
                    } else {
                        e.value(r)?
                    };
                    if keys.contains(&n.as_str()) {
                        return Err(key_change(&n));
                    }
                    item.insert(n, v);
                }
                "REMOVE" => {
                    let n = e.name(part)?;
                    if keys.contains(&n.as_str()) {
                        return Err(key_change(&n));
                    }
                    item.remove(&n);
                }
                _ => {
                    let (l, r) = part.split_once(char::is_whitespace).ok_or_else(|| {
                        DynamoError::validation(format!(
                            "Invalid UpdateExpression: ADD takes name :value; not '{part}'"
                        ))
                    })?;
                    let n = e.name(l)?;
                    if keys.contains(&n.as_str()) {
                        return Err(key_change(&n));
                    }
                    let v = add_numbers(item.get(&n), &e.value(r)?)?;
                    item.insert(n, v);
                }
            }
        }
    }
    Ok(())
}

fn key_change(n: &str) -> DynamoError {
    DynamoError::validation(format!(
        "One or more parameter values were invalid: Cannot update attribute {n}. This attribute is part of the key"
    ))
}

/// `base + add` for numbers (a missing base is 0).
fn add_numbers(base: Option<&Value>, add: &Value) -> DynamoResult<Value> {
    let num = |v: Option<&Value>| -> DynamoResult<f64> {
        match v {
            None => Ok(0.0),
            Some(v) => v
                .get("N")
                .and_then(Value::as_str)
                .and_then(|n| n.parse::<f64>().ok())
                .ok_or_else(|| {
                    DynamoError::validation(
                        "An operand in the update expression has an incorrect data type",
                    )
                }),
        }
    };
    let sum = num(base)? + num(Some(add))?;
    let text = if sum.fract() == 0.0 && sum.abs() < 1e15 {
        format!("{}", sum as i64)
    } else {
        format!("{sum}")
    };
    Ok(json!({ "N": text }))
}
