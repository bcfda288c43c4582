//! S3's vocabulary: its operations, its storage classes and the naming rule that tells a
//! directory bucket (S3 Express One Zone) from a general purpose one.

use serde::{Deserialize, Serialize};

super::operations! {
    /// Every S3 operation latlab makes (and the emulator answers).
    pub enum Op {
        ListBuckets,
        CreateBucket,
        HeadBucket,
        DeleteBucket,
        CreateSession,
        ListMultipartUploads,
        ListObjectsV2,
        DeleteObjects,
        UploadPart,
        PutObject,
        ListParts,
        GetObject,
        HeadObject,
        AbortMultipartUpload,
        DeleteObject,
        CreateMultipartUpload,
        CompleteMultipartUpload,
    }
}

impl Op {
    /// Counts against a prefix's write request rate (PUT, COPY, POST, DELETE; 3,500/s on S3
    /// Standard), else the read rate (GET, HEAD; 5,500/s).
    pub fn is_write(self) -> bool {
        !matches!(
            self,
            Op::GetObject
                | Op::HeadObject
                | Op::HeadBucket
                | Op::ListObjectsV2
                | Op::ListParts
                | Op::ListBuckets
                | Op::CreateSession
                | Op::ListMultipartUploads
        )
    }

    /// Moves an object's bytes in its body: the request's (PutObject, UploadPart) or the
    /// answer's (GetObject).
    pub fn carries_object_body(self) -> bool {
        BODY_OPERATIONS.contains(&self.name())
    }
}

/// The operations that move an object's bytes in their body (what `s3.body-reset` can cut).
pub const BODY_OPERATIONS: &[&str] = &["PutObject", "UploadPart", "GetObject"];

/// The storage class of a bucket, decided by its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Class {
    Standard,
    ExpressOneZone,
}

impl Class {
    pub fn of_bucket(name: &str) -> Class {
        if is_directory_bucket(name) {
            Class::ExpressOneZone
        } else {
            Class::Standard
        }
    }

    /// As a fault's `class=` names it.
    pub fn key(self) -> &'static str {
        match self {
            Class::Standard => "standard",
            Class::ExpressOneZone => "express",
        }
    }

    pub fn storage_class(self) -> &'static str {
        match self {
            Class::Standard => "STANDARD",
            Class::ExpressOneZone => "EXPRESS_ONEZONE",
        }
    }
}

/// `name--azid--x-s3`.
pub fn is_directory_bucket(name: &str) -> bool {
    name.ends_with("--x-s3") && name.matches("--").count() >= 2
}

impl Op {
    /// The IAM action that allows it on a bucket of `class`. A directory bucket's (S3 Express
    /// One Zone's) object operations are allowed by the session CreateSession opens
    /// (`s3express:CreateSession`); its bucket operations have `s3express:` actions of their own.
    pub fn iam_action(self, class: Class) -> &'static str {
        if class == Class::ExpressOneZone {
            return match self {
                Op::ListBuckets => "s3express:ListAllMyDirectoryBuckets",
                Op::CreateBucket => "s3express:CreateBucket",
                Op::DeleteBucket => "s3express:DeleteBucket",
                Op::HeadBucket
                | Op::CreateSession
                | Op::ListMultipartUploads
                | Op::ListObjectsV2
                | Op::DeleteObjects
                | Op::UploadPart
                | Op::PutObject
                | Op::ListParts
                | Op::GetObject
                | Op::HeadObject
                | Op::AbortMultipartUpload
                | Op::DeleteObject
                | Op::CreateMultipartUpload
                | Op::CompleteMultipartUpload => "s3express:CreateSession",
            };
        }
        match self {
            Op::ListBuckets => "s3:ListAllMyBuckets",
            Op::CreateBucket => "s3:CreateBucket",
            Op::HeadBucket | Op::ListObjectsV2 => "s3:ListBucket",
            Op::DeleteBucket => "s3:DeleteBucket",
            Op::CreateSession => "s3express:CreateSession",
            Op::ListMultipartUploads => "s3:ListBucketMultipartUploads",
            Op::DeleteObjects | Op::DeleteObject => "s3:DeleteObject",
            Op::UploadPart
            | Op::PutObject
            | Op::CreateMultipartUpload
            | Op::CompleteMultipartUpload => "s3:PutObject",
            Op::ListParts => "s3:ListMultipartUploadParts",
            Op::GetObject | Op::HeadObject => "s3:GetObject",
            Op::AbortMultipartUpload => "s3:AbortMultipartUpload",
        }
    }

    /// Whether it only reads: it changes nothing on the account (what `latlab plan` may call).
    /// CreateSession opens a session and stores nothing.
    pub fn read_only(self) -> bool {
        matches!(
            self,
            Op::ListBuckets
                | Op::HeadBucket
                | Op::ListMultipartUploads
                | Op::ListObjectsV2
                | Op::ListParts
                | Op::GetObject
                | Op::HeadObject
                | Op::CreateSession
        )
    }

    /// Whether it acts on an object (a key in the bucket) rather than on the bucket.
    pub fn on_object(self) -> bool {
        matches!(
            self,
            Op::DeleteObjects
                | Op::UploadPart
                | Op::PutObject
                | Op::ListParts
                | Op::GetObject
                | Op::HeadObject
                | Op::AbortMultipartUpload
                | Op::DeleteObject
                | Op::CreateMultipartUpload
                | Op::CompleteMultipartUpload
        )
    }
}

/// The faults the emulator injects into S3 (`--fault s3.KIND`, `[[faults]]`, the TUI's menu), in
/// the order they are listed.
pub mod faults {
    use std::time::Duration;

    use crate::services::Service;
    use crate::services::fault_kinds::{Effect, KindInfo, declare};

    declare! { Service::S3;
        /// 500 InternalError.
        INTERNAL_ERROR = KindInfo::hits("s3.internal-error", "500 InternalError", Effect::InternalError);
        /// 503 SlowDown, ten requests at a time by default (S3 throttles in bursts).
        SLOW_DOWN = KindInfo::hits("s3.slow-down", "503 SlowDown", Effect::Unavailable).count(10);
        /// The connection is reset halfway through a body (an upload's or a download's).
        BODY_RESET = KindInfo::hits(
            "s3.body-reset",
            "connection reset halfway through a body",
            Effect::BodyReset,
        )
        .only(super::BODY_OPERATIONS);
        /// The answer's first byte is held back for the fault's duration.
        FIRST_BYTE_STALL = KindInfo::lasting(
            "s3.first-byte-stall",
            "an answer's first byte held back",
            Effect::FirstByteStall,
            Duration::from_secs(3),
        );
    }
}
