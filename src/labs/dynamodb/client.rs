//! The lab's clients, built as every service's are (`aws::sdk_client!`): DynamoDB's, DynamoDB
//! Streams' and Kinesis's (for the table's Kinesis destination), each with the run's retry
//! settings, a retry quota of its own and the interceptor that counts every attempt. Beside them,
//! [`Throttles`]: one call's interceptor that reads each throttled attempt's
//! `ThrottlingReasons`, so that a throttle the SDK retried and then got past is still counted by
//! its reason and its partition.

use std::sync::Arc;

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::FinalizerInterceptorContextRef;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;
use parking_lot::Mutex;

use crate::aws::{Clients, QuotaPartition, RetrySettings};
use crate::metrics::SdkStats;

pub fn dynamodb(
    clients: &Clients,
    retry: &RetrySettings,
    name: &str,
    stats: Arc<SdkStats>,
) -> aws_sdk_dynamodb::Client {
    let quota = QuotaPartition::new(name);
    crate::aws::sdk_client!(aws_sdk_dynamodb, clients, retry, &quota, stats)
}

pub fn streams(
    clients: &Clients,
    retry: &RetrySettings,
    name: &str,
    stats: Arc<SdkStats>,
) -> aws_sdk_dynamodbstreams::Client {
    let quota = QuotaPartition::new(name);
    crate::aws::sdk_client!(aws_sdk_dynamodbstreams, clients, retry, &quota, stats)
}

pub fn kinesis(
    clients: &Clients,
    retry: &RetrySettings,
    name: &str,
    stats: Arc<SdkStats>,
) -> aws_sdk_kinesis::Client {
    let quota = QuotaPartition::new(name);
    crate::aws::sdk_client!(aws_sdk_kinesis, clients, retry, &quota, stats)
}

/// The reason a throttle without `ThrottlingReasons` is counted under (an endpoint that sends
/// none, as DynamoDB did before 2025).
pub const UNSTATED: &str = "(no reason given)";

/// One call's throttled attempts, each by the reasons DynamoDB gave: added to a call with
/// `.customize().interceptor(...)`, read when the call has ended.
#[derive(Clone, Debug, Default)]
pub struct Throttles {
    pub reasons: Arc<Mutex<Vec<String>>>,
}

impl Throttles {
    /// The reasons of every throttled attempt so far (one per attempt: its first reason).
    pub fn taken(&self) -> Vec<String> {
        std::mem::take(&mut *self.reasons.lock())
    }
}

/// The first `ThrottlingReasons` entry's `reason` of a DynamoDB error body, or None when the body
/// is not a throttle.
pub fn throttle_reason(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let kind = v.get("__type")?.as_str()?.rsplit('#').next()?.to_string();
    // `ThrottlingReasons`, or `throttlingReasons` in a ThrottlingException (the service model's
    // spelling of the member there).
    let reason = v
        .get("ThrottlingReasons")
        .or_else(|| v.get("throttlingReasons"))
        .and_then(|r| r.as_array())
        .and_then(|r| r.first())
        .and_then(|r| r.get("reason"))
        .and_then(|r| r.as_str())
        .map(str::to_string);
    let throttle = crate::metrics::sdk::is_throttle(&kind) || kind == "RequestLimitExceeded";
    match (throttle, reason) {
        (_, Some(r)) => Some(r),
        (true, None) => Some(UNSTATED.to_string()),
        (false, None) => None,
    }
}

impl Intercept for Throttles {
    fn name(&self) -> &'static str {
        "latlab::dynamodb::Throttles"
    }

    fn read_after_attempt(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(resp) = context.response() else {
            return Ok(());
        };
        if resp.status().as_u16() != 400 {
            return Ok(());
        }
        let reason = resp
            .body()
            .bytes()
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(throttle_reason);
        if let Some(r) = reason {
            self.reasons.lock().push(r);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_throttles_reason_is_read_from_its_body() {
        let body = r#"{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"x","ThrottlingReasons":[{"reason":"TableWriteKeyRangeThroughputExceeded","resource":"arn:aws:dynamodb:us-east-1:000000000000:table/t"}]}"#;
        assert_eq!(
            throttle_reason(body).as_deref(),
            Some("TableWriteKeyRangeThroughputExceeded")
        );
        let bare = r#"{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"x"}"#;
        assert_eq!(throttle_reason(bare).as_deref(), Some(UNSTATED));
        let other =
            r#"{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"}"#;
        assert_eq!(throttle_reason(other), None);
    }
}
