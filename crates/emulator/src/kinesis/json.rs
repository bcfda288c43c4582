//! Typed access to a request's JSON members. Every accessor names the member in its error, with the
//! real error type: a member of the wrong JSON type is a SerializationException, a value outside the
//! model's constraints a ValidationException.

use serde_json::{Map, Value};

use super::error::{ApiError, ApiResult};

pub struct Req(Map<String, Value>);

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "structure",
    }
}

fn wrong_type(field: &str, expected: &str, got: &Value) -> ApiError {
    ApiError::serialization(format!(
        "{field} must be a {expected}, but the request has a {}",
        type_name(got)
    ))
}

impl Req {
    /// Parses a request body; an empty body is an empty structure, as the SDKs send for no input.
    pub fn parse(body: &[u8]) -> ApiResult<Req> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Req(Map::new()));
        }
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(map)) => Ok(Req(map)),
            Ok(other) => Err(ApiError::serialization(format!(
                "the request body must be a JSON structure, got a {}",
                type_name(&other)
            ))),
            Err(e) => Err(ApiError::serialization(format!(
                "the request body is not valid JSON: {e}"
            ))),
        }
    }

    pub fn from_map(map: Map<String, Value>) -> Req {
        Req(map)
    }

    fn get(&self, field: &str) -> Option<&Value> {
        self.0.get(field).filter(|v| !v.is_null())
    }

    pub fn str_opt(&self, field: &str) -> ApiResult<Option<&str>> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(wrong_type(field, "string", v)),
        }
    }

    pub fn str(&self, field: &str) -> ApiResult<&str> {
        self.str_opt(field)?.ok_or_else(|| ApiError::missing(field))
    }

    /// A string member whose length must lie in `min..=max`.
    pub fn str_len(&self, field: &str, min: usize, max: usize) -> ApiResult<Option<&str>> {
        let Some(s) = self.str_opt(field)? else {
            return Ok(None);
        };
        let n = s.chars().count();
        if n < min || n > max {
            return Err(ApiError::validation(
                field,
                &format!("'{}'", preview(s)),
                &format!("Member must have length between {min} and {max}, inclusive"),
            ));
        }
        Ok(Some(s))
    }

    pub fn int_opt(&self, field: &str, min: i64, max: i64) -> ApiResult<Option<i64>> {
        match self.get(field) {
            None => Ok(None),
            Some(v @ Value::Number(n)) => {
                let i = n
                    .as_i64()
                    .ok_or_else(|| wrong_type(field, "whole number", v))?;
                if i < min {
                    return Err(ApiError::validation(
                        field,
                        &format!("'{i}'"),
                        &format!("Member must have value greater than or equal to {min}"),
                    ));
                }
                if i > max {
                    return Err(ApiError::validation(
                        field,
                        &format!("'{i}'"),
                        &format!("Member must have value less than or equal to {max}"),
                    ));
                }
                Ok(Some(i))
            }
            Some(v) => Err(wrong_type(field, "number", v)),
        }
    }

    pub fn bool_opt(&self, field: &str) -> ApiResult<Option<bool>> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(wrong_type(field, "boolean", v)),
        }
    }

    /// A timestamp member: epoch seconds as a number (what the SDKs send).
    pub fn timestamp_opt(&self, field: &str) -> ApiResult<Option<f64>> {
        match self.get(field) {
            None => Ok(None),
            Some(v @ Value::Number(n)) => n
                .as_f64()
                .filter(|f| f.is_finite())
                .map(Some)
                .ok_or_else(|| wrong_type(field, "timestamp in epoch seconds", v)),
            Some(v) => Err(wrong_type(field, "timestamp in epoch seconds", v)),
        }
    }

    pub fn object_opt(&self, field: &str) -> ApiResult<Option<Req>> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(Req(m.clone()))),
            Some(v) => Err(wrong_type(field, "structure", v)),
        }
    }

    pub fn list(&self, field: &str) -> ApiResult<Option<&Vec<Value>>> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(v) => Err(wrong_type(field, "list", v)),
        }
    }
}

/// At most 64 characters of a value, for messages.
pub fn preview(s: &str) -> String {
    if s.chars().count() > 64 {
        format!("{}...", s.chars().take(64).collect::<String>())
    } else {
        s.to_string()
    }
}

/// Stream and consumer names: 1-128 of `[a-zA-Z0-9_.-]`
/// ([`latlab_core::services::kinesis::name_problem`]), refused as the service's validation does.
pub fn check_name(field: &str, name: &str) -> ApiResult<()> {
    match latlab_core::services::kinesis::name_problem(name) {
        Some(problem) => Err(ApiError::validation(
            field,
            &format!("'{}'", preview(name)),
            problem,
        )),
        None => Ok(()),
    }
}

impl Req {
    /// The member names, in the order they appear.
    pub fn keys(&self) -> Vec<String> {
        self.0.keys().cloned().collect()
    }
}
