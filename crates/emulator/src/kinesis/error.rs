//! Kinesis error answers: the real error type names, HTTP statuses and message forms.

use std::fmt;

/// An error answered to a client as `{"__type": code, "message": message}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub code: &'static str,
    pub message: String,
    pub status: u16,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            status: 400,
        }
    }

    pub fn body(&self) -> String {
        serde_json::json!({ "__type": self.code, "message": self.message }).to_string()
    }

    pub fn unknown_operation(target: &str) -> Self {
        Self::new(
            "UnknownOperationException",
            format!(
                "Unknown operation '{target}': this endpoint serves Kinesis_20131202.<Operation> for {}",
                super::Op::NAMES.join(", ")
            ),
        )
    }

    pub fn serialization(message: impl Into<String>) -> Self {
        Self::new("SerializationException", message)
    }

    /// The service's validation message form, e.g.
    /// `1 validation error detected: Value '0' at 'shardCount' failed to satisfy constraint: ...`.
    pub fn validation(field: &str, value: &str, constraint: &str) -> Self {
        Self::new(
            "ValidationException",
            format!(
                "1 validation error detected: Value {value} at '{}' failed to satisfy constraint: {constraint}",
                camel(field)
            ),
        )
    }

    pub fn missing(field: &str) -> Self {
        Self::validation(field, "null", "Member must not be null")
    }

    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new("InvalidArgumentException", message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new("ResourceNotFoundException", message)
    }

    pub fn in_use(message: impl Into<String>) -> Self {
        Self::new("ResourceInUseException", message)
    }

    pub fn limit_exceeded(message: impl Into<String>) -> Self {
        Self::new("LimitExceededException", message)
    }

    pub fn throughput(shard_id: &str, stream: &str, account: &str) -> Self {
        Self::new(
            "ProvisionedThroughputExceededException",
            format!(
                "Rate exceeded for shard {shard_id} in stream {stream} under account {account}."
            ),
        )
    }

    pub fn expired_iterator(created_ms: i64, now_ms: i64, tolerated_ms: u128) -> Self {
        Self::new(
            "ExpiredIteratorException",
            format!(
                "Iterator expired. The iterator was created at time {} while right now it is {} which is further in the future than the tolerated delay of {tolerated_ms} milliseconds.",
                latlab_core::clock::http_date_ms(created_ms),
                latlab_core::clock::http_date_ms(now_ms)
            ),
        )
    }

    pub fn internal(message: impl Into<String>) -> Self {
        ApiError {
            code: "InternalFailure",
            message: message.into(),
            status: 500,
        }
    }

    /// The service's 500, as an injected fault answers it.
    pub fn internal_failure() -> Self {
        Self::internal("Internal service failure.")
    }

    /// The service's 503.
    pub fn service_unavailable() -> Self {
        ApiError {
            code: "ServiceUnavailable",
            message: "The service is unavailable. Please try again.".into(),
            status: 503,
        }
    }
}

/// `StreamName` -> `streamName`, as the service spells members in validation messages.
fn camel(field: &str) -> String {
    if field.contains(['.', '[']) {
        return field.to_string();
    }
    let mut c = field.chars();
    match c.next() {
        Some(first) => first.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}
