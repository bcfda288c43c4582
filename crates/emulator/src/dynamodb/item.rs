//! Items as DynamoDB's JSON protocol writes them: maps of attribute names to typed values
//! (`{"S": "x"}`, `{"N": "12"}`, `{"B": "base64"}`, `{"M": {...}}`, ...), their keys, and their
//! size by the developer guide's rules, which decide the capacity units a call consumes.

use std::cmp::Ordering;

use serde_json::{Map, Value};

/// An item: attribute name to typed value.
pub type Item = Map<String, Value>;

/// The scalar types a key attribute may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyType {
    S,
    N,
    B,
}

impl KeyType {
    pub fn parse(t: &str) -> Option<KeyType> {
        match t {
            "S" => Some(KeyType::S),
            "N" => Some(KeyType::N),
            "B" => Some(KeyType::B),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            KeyType::S => "S",
            KeyType::N => "N",
            KeyType::B => "B",
        }
    }
}

/// One key attribute's value, ordered as DynamoDB orders sort keys: numbers by value, strings
/// and binary by their bytes.
#[derive(Clone, Debug)]
pub enum KeyValue {
    S(String),
    N(f64, String),
    B(String),
}

impl KeyValue {
    /// The key value of a typed value of type `t`; an error says what is wrong.
    pub fn of(v: &Value, t: KeyType) -> Result<KeyValue, String> {
        let inner = v.get(t.name()).and_then(Value::as_str);
        match (t, inner) {
            (KeyType::S, Some(s)) if !s.is_empty() => Ok(KeyValue::S(s.to_string())),
            (KeyType::N, Some(n)) => n
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(|f| KeyValue::N(f, n.to_string()))
                .ok_or_else(|| format!("the number '{n}' is not valid")),
            (KeyType::B, Some(b)) if !b.is_empty() => Ok(KeyValue::B(b.to_string())),
            (_, Some(_)) => Err("a key attribute cannot be empty".into()),
            (_, None) => Err(format!("the key attribute is not of type {}", t.name())),
        }
    }

    /// The bytes the partition key hashes.
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            KeyValue::S(s) => s.as_bytes().to_vec(),
            KeyValue::N(_, raw) => raw.trim().as_bytes().to_vec(),
            KeyValue::B(b) => b.as_bytes().to_vec(),
        }
    }

    /// The typed value again.
    pub fn to_value(&self) -> Value {
        match self {
            KeyValue::S(s) => serde_json::json!({ "S": s }),
            KeyValue::N(_, raw) => serde_json::json!({ "N": raw }),
            KeyValue::B(b) => serde_json::json!({ "B": b }),
        }
    }
}

impl PartialEq for KeyValue {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for KeyValue {}

impl PartialOrd for KeyValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for KeyValue {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (KeyValue::S(a), KeyValue::S(b)) | (KeyValue::B(a), KeyValue::B(b)) => a.cmp(b),
            (KeyValue::N(a, _), KeyValue::N(b, _)) => a.total_cmp(b),
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }
}

impl KeyValue {
    fn rank(&self) -> u8 {
        match self {
            KeyValue::S(_) => 0,
            KeyValue::N(..) => 1,
            KeyValue::B(_) => 2,
        }
    }
}

/// Whether a value is one typed attribute value DynamoDB takes (exactly one known type).
pub fn check_value(v: &Value) -> Result<(), String> {
    let Some(m) = v.as_object().filter(|m| m.len() == 1) else {
        return Err("an attribute value must name exactly one type".into());
    };
    let (t, inner) = m.iter().next().expect("one entry");
    let ok = match t.as_str() {
        "S" | "N" | "B" => inner.is_string(),
        "BOOL" => inner.is_boolean(),
        "NULL" => inner.as_bool() == Some(true),
        "SS" | "NS" | "BS" => inner
            .as_array()
            .is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_string)),
        "L" => inner
            .as_array()
            .is_some_and(|a| a.iter().all(|e| check_value(e).is_ok())),
        "M" => inner
            .as_object()
            .is_some_and(|m| m.values().all(|e| check_value(e).is_ok())),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("the attribute value of type '{t}' is not valid"))
    }
}

/// An item's size, by the developer guide's rules (CapacityUnitCalculations): each attribute's
/// name plus its value; a string its UTF-8 bytes, a number about one byte per two significant
/// digits plus one, binary its bytes, a boolean or null one byte, a list or map 3 bytes plus one
/// per element.
pub fn item_size(item: &Item) -> u64 {
    item.iter()
        .map(|(name, v)| name.len() as u64 + value_size(v))
        .sum()
}

fn value_size(v: &Value) -> u64 {
    let Some((t, inner)) = v.as_object().and_then(|m| m.iter().next()) else {
        return 0;
    };
    let number = |n: &str| {
        let digits = n.chars().filter(char::is_ascii_digit).count() as u64;
        digits.div_ceil(2) + 1
    };
    let binary = |b: &str| (b.len() as u64 * 3) / 4;
    match t.as_str() {
        "S" => inner.as_str().map_or(0, |s| s.len() as u64),
        "N" => inner.as_str().map_or(0, number),
        "B" => inner.as_str().map_or(0, binary),
        "BOOL" | "NULL" => 1,
        "SS" => arr(inner)
            .map(|s| s.as_str().map_or(0, |s| s.len() as u64))
            .sum(),
        "NS" => arr(inner).map(|s| s.as_str().map_or(0, number)).sum(),
        "BS" => arr(inner).map(|s| s.as_str().map_or(0, binary)).sum(),
        "L" => 3 + arr(inner).map(|e| 1 + value_size(e)).sum::<u64>(),
        "M" => {
            3 + inner.as_object().map_or(0, |m| {
                m.iter()
                    .map(|(k, e)| 1 + k.len() as u64 + value_size(e))
                    .sum()
            })
        }
        _ => 0,
    }
}

fn arr(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

/// Write units for an item of `bytes` (one per 1 KB, rounded up; at least one).
pub fn write_units(bytes: u64) -> f64 {
    bytes.div_ceil(1024).max(1) as f64
}

/// Read units for `bytes` read: one per 4 KB, rounded up, for a strongly consistent read; half
/// that for an eventually consistent one.
pub fn read_units(bytes: u64, strong: bool) -> f64 {
    let units = bytes.div_ceil(4096).max(1) as f64;
    if strong { units } else { units / 2.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_units_follow_the_guide() {
        let item: Item = serde_json::from_str(
            r#"{"pk": {"S": "user#1"}, "n": {"N": "12345"}, "ok": {"BOOL": true}}"#,
        )
        .unwrap();
        // pk: 2 + 6; n: 1 + (5 digits: 3) + 1; ok: 2 + 1.
        assert_eq!(item_size(&item), 8 + 5 + 3);
        assert_eq!(write_units(1), 1.0);
        assert_eq!(write_units(1025), 2.0);
        assert_eq!(read_units(4096, true), 1.0);
        assert_eq!(read_units(4097, true), 2.0);
        assert_eq!(read_units(100, false), 0.5);
        assert!(check_value(&serde_json::json!({"S": "x", "N": "1"})).is_err());
        assert!(check_value(&serde_json::json!({"M": {"a": {"L": [{"N": "1"}]}}})).is_ok());
        let a = KeyValue::of(&serde_json::json!({"N": "10"}), KeyType::N).unwrap();
        let b = KeyValue::of(&serde_json::json!({"N": "9"}), KeyType::N).unwrap();
        assert!(b < a, "numbers sort by value");
    }
}
