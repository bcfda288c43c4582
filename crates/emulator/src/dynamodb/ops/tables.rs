//! Tables: create, describe, update, delete, list, and their tags.

use serde_json::{Value, json};

use super::super::item::KeyType;
use super::super::streams::{Stream, View};
use super::super::table::{Billing, Index, KeySchema, Table};
use super::{Args, required, s};
use crate::dynamodb::{DynamoError, DynamoResult, Dynamodb};
use latlab_core::services::dynamodb::{Op, name_problem};

impl Dynamodb {
    pub(super) fn create_table(&self, a: &Args, region: &str) -> DynamoResult<Value> {
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
            let provisioned = matches!(billing, Billing::Provisioned { .. });
            for i in g {
                let name = i.get("IndexName").and_then(Value::as_str).unwrap_or("");
                let hash = i
                    .get("KeySchema")
                    .and_then(Value::as_array)
                    .and_then(|k| {
                        k.iter()
                            .find(|e| e.get("KeyType").and_then(Value::as_str) == Some("HASH"))
                    })
                    .and_then(|e| e.get("AttributeName").and_then(Value::as_str))
                    .ok_or_else(|| {
                        DynamoError::validation(format!(
                            "One or more parameter values were invalid: index {name} has no HASH key"
                        ))
                    })?;
                let write = i
                    .get("ProvisionedThroughput")
                    .and_then(|p| p.get("WriteCapacityUnits"))
                    .and_then(Value::as_u64)
                    .filter(|_| provisioned);
                t.indexes.push(Index::new(
                    format!("{arn}/index/{name}"),
                    hash.to_string(),
                    write,
                    &self.limits,
                    self.clock.now(),
                ));
            }
        }
        if let Some(spec) = a.get("StreamSpecification") {
            set_stream(&mut t, spec, created)?;
        }
        if let Some((r, w)) = on_demand_throughput(a, t.billing)? {
            t.set_max(r, w, self.clock.now());
        }
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

    pub(super) fn update_table(&self, a: &Args) -> DynamoResult<Value> {
        let name = required(a, "TableName")?;
        let now = self.clock.now();
        self.with_table(name, |t| {
            if a.contains_key("BillingMode") || a.contains_key("ProvisionedThroughput") {
                let billing = billing_of(a, Some(t.billing))?;
                t.set_billing(billing, &self.limits, now);
            }
            if let Some((r, w)) = on_demand_throughput(a, t.billing)? {
                t.set_max(r, w, now);
            }
            if let Some(spec) = a.get("StreamSpecification") {
                let now = latlab_core::clock::now_micros() as f64 / 1e6;
                set_stream(t, spec, now)?;
            }
            Ok(json!({ "TableDescription": t.describe("ACTIVE") }))
        })
    }

    pub(super) fn list_tables(&self, a: &Args) -> Value {
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

    pub(super) fn tags(&self, op: Op, a: &Args) -> DynamoResult<Value> {
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

/// Applies a StreamSpecification: enabling makes a new stream (its label the time), disabling
/// keeps the old one readable until its records age out.
fn set_stream(t: &mut Table, spec: &Value, now: f64) -> DynamoResult<()> {
    let enabled = spec.get("StreamEnabled").and_then(Value::as_bool) == Some(true);
    if !enabled {
        if let Some(st) = &mut t.stream {
            st.enabled = false;
        }
        return Ok(());
    }
    let view = spec
        .get("StreamViewType")
        .and_then(Value::as_str)
        .and_then(View::parse)
        .ok_or_else(|| {
            DynamoError::validation(
                "One or more parameter values were invalid: StreamViewType is KEYS_ONLY, NEW_IMAGE, OLD_IMAGE or NEW_AND_OLD_IMAGES when StreamEnabled is true",
            )
        })?;
    if t.stream.as_ref().is_some_and(|s| s.enabled) {
        return Err(DynamoError::validation(format!(
            "Table already has an enabled stream: {}",
            t.name
        )));
    }
    t.stream = Some(Stream::new(&t.arn, view, now, t.partitions.len()));
    Ok(())
}

/// `OnDemandThroughput`'s `MaxReadRequestUnits` and `MaxWriteRequestUnits` (-1: no maximum), for
/// an on-demand table only; None when the call gives none.
fn on_demand_throughput(
    a: &Args,
    billing: Billing,
) -> DynamoResult<Option<(Option<i64>, Option<i64>)>> {
    let Some(o) = a.get("OnDemandThroughput") else {
        return Ok(None);
    };
    let o = o
        .as_object()
        .ok_or_else(|| DynamoError::validation("OnDemandThroughput must be a structure"))?;
    if billing != Billing::OnDemand {
        return Err(DynamoError::validation(
            "One or more parameter values were invalid: OnDemandThroughput can be specified only when BillingMode is PAY_PER_REQUEST",
        ));
    }
    let units = |k: &str| -> DynamoResult<Option<i64>> {
        match o.get(k) {
            None => Ok(None),
            Some(v) => match v.as_i64() {
                Some(n) if n == -1 || n >= 1 => Ok(Some(n)),
                _ => Err(DynamoError::validation(format!(
                    "One or more parameter values were invalid: {k} must be -1 (no maximum) or at least 1, not {v}"
                ))),
            },
        }
    };
    Ok(Some((
        units("MaxReadRequestUnits")?,
        units("MaxWriteRequestUnits")?,
    )))
}
