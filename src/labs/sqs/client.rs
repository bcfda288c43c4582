//! The lab's SQS clients, made from the run's loaded SDK configuration like every other client
//! latlab builds: the run's retry settings, a retry quota per client (each consumer is like a
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
    let (config, partition, observer) = clients.parts(retry, &quota, stats);
    let config = aws_sdk_sqs::config::Builder::from(config)
        .http_client(crate::aws::https_client())
        .retry_config(retry.config())
        .retry_partition(partition)
        .interceptor(observer)
        .build();
    aws_sdk_sqs::Client::from_conf(config)
}
