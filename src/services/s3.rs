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
        matches!(self, Op::PutObject | Op::UploadPart | Op::GetObject)
    }
}

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
