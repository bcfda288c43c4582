//! The lab's SQS clients, built as every service's are (`aws::sdk_client!`): the run's retry settings, a retry quota per client (each consumer is like a
//! process of its own), and the interceptor that counts every attempt.

use std::sync::Arc;

use crate::aws::{Clients, QuotaPartition, RetrySettings};
use crate::metrics::SdkStats;

/// An SQS client whose attempts are recorded in `stats`, with its own retry quota `name`.
pub fn client(
    clients: &Clients,
    retry: &RetrySettings,
    name: &str,
    stats: Arc<SdkStats>,
) -> aws_sdk_sqs::Client {
    let quota = QuotaPartition::new(name);
    crate::aws::sdk_client!(aws_sdk_sqs, clients, retry, &quota, stats)
}
