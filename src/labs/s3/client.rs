//! The lab's S3 clients, built as every service's are (`aws::sdk_client!`), with path-style
//! addressing against an endpoint URL (directory buckets then need an IP-literal host) and the
//! SDK's defaults against AWS.

use std::sync::Arc;

use crate::aws::{Clients, QuotaPartition, RetrySettings};
use crate::metrics::SdkStats;

/// An S3 client with its own retry settings and quota partition, whose attempts are recorded in
/// `stats`.
pub fn client(
    clients: &Clients,
    retry: &RetrySettings,
    quota: &QuotaPartition,
    stats: Arc<SdkStats>,
) -> aws_sdk_s3::Client {
    let path_style = clients.at_endpoint_url();
    crate::aws::sdk_client!(
        aws_sdk_s3,
        clients,
        retry,
        quota,
        stats,
        |b: aws_sdk_s3::config::Builder| b.force_path_style(path_style)
    )
}
