//! S3 error answers: the real codes, statuses and XML bodies.

use std::fmt;

use super::xml::{el, esc};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct S3Error {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
    /// Extra elements the service adds (`<Key>`, `<BucketName>`, ...).
    pub extra: Vec<(&'static str, String)>,
}

impl fmt::Display for S3Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for S3Error {}

pub type S3Result<T> = Result<T, S3Error>;

impl S3Error {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> S3Error {
        S3Error {
            status,
            code,
            message: message.into(),
            extra: Vec::new(),
        }
    }

    pub fn with(mut self, tag: &'static str, value: impl Into<String>) -> S3Error {
        self.extra.push((tag, value.into()));
        self
    }

    pub fn body(&self, request_id: &str) -> String {
        let extra: String = self.extra.iter().map(|(t, v)| el(t, v)).collect();
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{}</Code><Message>{}</Message>{extra}<RequestId>{request_id}</RequestId></Error>",
            self.code,
            esc(&self.message)
        )
    }

    pub fn no_such_bucket(bucket: &str) -> S3Error {
        S3Error::new(404, "NoSuchBucket", "The specified bucket does not exist")
            .with("BucketName", bucket)
    }

    pub fn no_such_key(key: &str) -> S3Error {
        S3Error::new(404, "NoSuchKey", "The specified key does not exist.").with("Key", key)
    }

    pub fn no_such_upload(id: &str) -> S3Error {
        S3Error::new(
            404,
            "NoSuchUpload",
            "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.",
        )
        .with("UploadId", id)
    }

    pub fn malformed_xml() -> S3Error {
        S3Error::new(
            400,
            "MalformedXML",
            "The XML you provided was not well-formed or did not validate against our published schema",
        )
    }

    pub fn invalid_argument(message: impl Into<String>) -> S3Error {
        S3Error::new(400, "InvalidArgument", message)
    }

    pub fn invalid_request(message: impl Into<String>) -> S3Error {
        S3Error::new(400, "InvalidRequest", message)
    }

    pub fn slow_down() -> S3Error {
        S3Error::new(503, "SlowDown", "Please reduce your request rate.")
    }

    pub fn bad_digest(algorithm: &str) -> S3Error {
        S3Error::new(
            400,
            "BadDigest",
            format!("The {algorithm} you specified did not match the calculated checksum."),
        )
    }
}
