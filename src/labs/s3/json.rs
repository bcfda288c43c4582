//! The S3 lab's part of `latlab-run-report/2`: its types, written from the lab's snapshot and
//! read back into it.

use serde::{Deserialize, Serialize};

use crate::metrics::json::{Sdk, Summary, sdk, summary};

#[derive(Serialize, Deserialize)]
pub enum Class {
    Standard,
    ExpressOneZone,
}

#[derive(Serialize, Deserialize)]
pub struct S3 {
    pub class: Class,
    pub payload_bytes: u64,
    pub concurrency: usize,
    pub standard_bucket: String,
    pub express_bucket: String,
    pub ops: Vec<S3Op>,
    pub create_sessions: Option<u64>,
    pub sdk: Sdk,
    pub matrix: Option<Vec<MatrixRow>>,
    /// Absent in older reports.
    #[serde(default)]
    pub express_unsupported: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct S3Op {
    pub class: Class,
    pub op: String,
    pub first_byte: Summary,
    pub total: Summary,
    pub requests: u64,
    pub bytes: u64,
    pub mb_per_sec: f64,
    /// Requests per second over the last 10 seconds; absent in older reports.
    #[serde(default)]
    pub per_sec: Option<f64>,
    pub slow_downs: u64,
    pub errors: u64,
    /// Absent in older reports.
    #[serde(default)]
    pub last_error: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct Case {
    pub objects: u64,
    pub size: u64,
}

#[derive(Serialize, Deserialize)]
pub struct MatrixRow {
    pub case: Case,
    pub upload_express_s: f64,
    pub upload_standard_s: f64,
    pub download_express_s: f64,
    pub download_standard_s: f64,
    pub repetitions: u32,
}

fn class(c: latlab_core::services::s3::Class) -> Class {
    match c {
        latlab_core::services::s3::Class::Standard => Class::Standard,
        latlab_core::services::s3::Class::ExpressOneZone => Class::ExpressOneZone,
    }
}

impl crate::labs::ReportJson<crate::labs::s3::snapshot::S3Snapshot> for S3 {
    fn of(s: &crate::labs::s3::snapshot::S3Snapshot) -> S3 {
        S3 {
            class: class(s.class),
            payload_bytes: s.payload_bytes,
            concurrency: s.concurrency,
            standard_bucket: s.standard_bucket.clone(),
            express_bucket: s.express_bucket.clone(),
            ops: s
                .ops
                .iter()
                .map(|o| S3Op {
                    class: class(o.class),
                    op: o.op.clone(),
                    first_byte: summary(&o.first_byte),
                    total: summary(&o.total),
                    requests: o.requests,
                    bytes: o.bytes,
                    mb_per_sec: o.mb_per_sec,
                    per_sec: Some(o.per_sec),
                    slow_downs: o.slow_downs,
                    errors: o.errors,
                    last_error: o.last_error.clone(),
                })
                .collect(),
            create_sessions: s.create_sessions,
            sdk: sdk(&s.sdk),
            matrix: s.matrix.as_ref().map(|rows| {
                rows.iter()
                    .map(|r| MatrixRow {
                        case: Case {
                            objects: r.case.objects,
                            size: r.case.size,
                        },
                        upload_express_s: r.upload_express_s,
                        upload_standard_s: r.upload_standard_s,
                        download_express_s: r.download_express_s,
                        download_standard_s: r.download_standard_s,
                        repetitions: r.repetitions,
                    })
                    .collect()
            }),
            express_unsupported: s.express_unsupported.clone(),
        }
    }

    fn into_snapshot(self) -> crate::labs::s3::snapshot::S3Snapshot {
        use crate::labs::s3 as s;
        s::snapshot::S3Snapshot {
            class: self.class.into_class(),
            payload_bytes: self.payload_bytes,
            concurrency: self.concurrency,
            standard_bucket: self.standard_bucket,
            express_bucket: self.express_bucket,
            ops: self
                .ops
                .into_iter()
                .map(|o| s::OpSnapshot {
                    class: o.class.into_class(),
                    op: o.op,
                    first_byte: o.first_byte.into_summary(),
                    total: o.total.into_summary(),
                    requests: o.requests,
                    bytes: o.bytes,
                    mb_per_sec: o.mb_per_sec,
                    per_sec: o.per_sec.unwrap_or(0.0),
                    slow_downs: o.slow_downs,
                    errors: o.errors,
                    last_error: o.last_error,
                })
                .collect(),
            create_sessions: self.create_sessions,
            sdk: self.sdk.into_snapshot(),
            matrix: self.matrix.map(|rows| {
                rows.into_iter()
                    .map(|r| s::MatrixRow {
                        case: s::Case {
                            objects: r.case.objects,
                            size: r.case.size,
                        },
                        upload_express_s: r.upload_express_s,
                        upload_standard_s: r.upload_standard_s,
                        download_express_s: r.download_express_s,
                        download_standard_s: r.download_standard_s,
                        repetitions: r.repetitions,
                    })
                    .collect()
            }),
            express_unsupported: self.express_unsupported,
        }
    }
}

impl Class {
    fn into_class(self) -> latlab_core::services::s3::Class {
        match self {
            Class::Standard => latlab_core::services::s3::Class::Standard,
            Class::ExpressOneZone => latlab_core::services::s3::Class::ExpressOneZone,
        }
    }
}

/// In every report since `latlab-run-report/2`: `null` when the run has no such lab.
impl crate::labs::ReportPart for S3 {
    const REPORTED_WHEN_ABSENT: bool = true;
}
