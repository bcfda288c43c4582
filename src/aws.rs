//! SDK client construction: endpoint, credentials, region and retry settings.

use aws_credential_types::Credentials;
use aws_sdk_kinesis::config::{BehaviorVersion, Region};
use aws_smithy_types::retry::RetryConfig;

/// The region used against the emulator when none is given.
pub const EMULATOR_REGION: &str = "us-east-1";

/// Static credentials for the emulator (it does not verify signatures, but the SDK must sign).
pub fn emulator_credentials() -> Credentials {
    Credentials::new(
        "LATLABEMULATOR",
        "latlab-emulator-secret",
        None,
        None,
        "latlab-emulator",
    )
}

/// A Kinesis client for an emulator endpoint with the given retry settings.
pub fn emulator_kinesis_client(endpoint_url: &str, retry: RetryConfig) -> aws_sdk_kinesis::Client {
    let config = aws_sdk_kinesis::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(EMULATOR_REGION))
        .credentials_provider(emulator_credentials())
        .endpoint_url(endpoint_url)
        .retry_config(retry)
        .build();
    aws_sdk_kinesis::Client::from_conf(config)
}
