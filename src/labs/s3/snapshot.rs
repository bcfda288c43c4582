//! A frozen view of the S3 lab.

use super::{MatrixRow, OpSnapshot};
use crate::metrics::sdk::SdkSnapshot;

#[derive(Clone, Debug, PartialEq)]
pub struct S3Snapshot {
    /// The class the live loop writes to now.
    pub class: latlab_core::services::s3::Class,
    pub payload_bytes: u64,
    pub concurrency: usize,
    pub standard_bucket: String,
    pub express_bucket: String,
    /// Per class and operation (PUT, GET).
    pub ops: Vec<OpSnapshot>,
    /// CreateSession calls (S3 Express sessions), counted by the embedded emulator. The SDK makes
    /// them from an inner client no interceptor sees, so on other endpoints this is None.
    pub create_sessions: Option<u64>,
    pub sdk: SdkSnapshot,
    /// The seed's matrix, when the run made it.
    pub matrix: Option<Vec<MatrixRow>>,
    /// Why S3 Express One Zone is not measured: the endpoint lacks what it needs.
    pub express_unsupported: Option<String>,
}
