//! The expressions the emulator reads: names and values, conditions, key conditions and
//! updates.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::super::item::{Item, KeyType, KeyValue, check_value};
use super::super::table::{KeySchema, Table};
use super::{Args, s};
use crate::dynamodb::{DynamoError, DynamoResult};

/// An expression's names (`#n`) and values (`:v`).
pub(super) struct Exprs {
    names: Map<String, Value>,
    values: Map<String, Value>,
}

impl Exprs {
    pub(super) fn of(a: &Args) -> DynamoResult<Exprs> {
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

    pub(super) fn name(&self, token: &str) -> DynamoResult<String> {
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

    pub(super) fn value(&self, token: &str) -> DynamoResult<Value> {
        let token = token.trim();
        self.values.get(token).cloned().ok_or_else(|| {
            DynamoError::validation(format!(
                "An expression attribute value used in expression is not defined; attribute value: {token}"
            ))
        })
    }
}

/// Splits on ` AND ` (any case) outside parentheses.
pub(super) fn split_and(expr: &str) -> Vec<String> {
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
pub(super) fn check_condition(a: &Args, e: &Exprs, current: Option<&Item>) -> DynamoResult<()> {
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
pub(super) fn func<'a>(clause: &'a str, name: &str) -> Option<&'a str> {
    let c = clause.trim();
    let rest = c.strip_prefix(name)?.trim_start();
    rest.strip_prefix('(')?.strip_suffix(')')
}

/// A Query's key condition: the partition key's value and the sort key's test.
pub(super) struct KeyCondition {
    pub(super) pk: KeyValue,
    sort: Option<SortTest>,
}

pub(super) enum SortTest {
    Cmp(&'static str, KeyValue),
    Between(KeyValue, KeyValue),
    BeginsWith(String),
}

impl KeyCondition {
    pub(super) fn parse(expr: &str, e: &Exprs, key: &KeySchema) -> DynamoResult<KeyCondition> {
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

    pub(super) fn sort_matches(&self, sk: Option<&KeyValue>) -> bool {
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

pub(super) fn check_sort_name<'a>(n: &str, key: &'a KeySchema) -> DynamoResult<(KeyType, &'a str)> {
    match &key.range {
        Some((rn, rt)) if rn == n => Ok((*rt, rn.as_str())),
        _ => Err(DynamoError::validation(format!(
            "Invalid KeyConditionExpression: '{n}' is not the table's partition key tested with = nor its sort key"
        ))),
    }
}

/// Applies an UpdateExpression's SET, REMOVE and ADD clauses to `item`; key attributes cannot
/// change.
pub(super) fn apply_update(expr: &str, e: &Exprs, item: &mut Item, t: &Table) -> DynamoResult<()> {
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

pub(super) fn key_change(n: &str) -> DynamoError {
    DynamoError::validation(format!(
        "One or more parameter values were invalid: Cannot update attribute {n}. This attribute is part of the key"
    ))
}

/// `base + add` for numbers (a missing base is 0).
pub(super) fn add_numbers(base: Option<&Value>, add: &Value) -> DynamoResult<Value> {
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
