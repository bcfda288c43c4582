//! The lab's Kinesis clients, built as every service's are (`aws::sdk_client!`): the run's
//! configuration, the given retry settings, a retry quota of their own, and the interceptor that
//! counts every attempt.

use std::sync::Arc;

use crate::aws::{Clients, QuotaPartition, RetrySettings};
use crate::metrics::SdkStats;

/// A Kinesis client with its own retry settings and quota partition, whose attempts are recorded
/// in `stats`.
pub fn client(
    clients: &Clients,
    retry: &RetrySettings,
    quota: &QuotaPartition,
    stats: Arc<SdkStats>,
) -> aws_sdk_kinesis::Client {
    crate::aws::sdk_client!(aws_sdk_kinesis, clients, retry, quota, stats)
}
