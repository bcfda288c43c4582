//! A request of the AWS JSON protocols (Kinesis's awsJson1_1, SQS's awsJson1_0), read once for
//! every service that speaks one: its operation from `x-amz-target`, the region it was signed
//! for, the Host it was sent to and its body within bounds; or what is wrong with it, which the
//! service says in its own error.

use bytes::Bytes;
use http::{Method, Request};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;

use crate::service::Cx;
use crate::{MAX_JSON_BODY, signing_region};

/// A JSON protocol's request, read.
pub struct JsonCall {
    /// The `x-amz-target` header as sent.
    pub target: String,
    /// The operation it names (the target without the service's prefix).
    pub op: String,
    /// The region its signature names (us-east-1 when it names none).
    pub region: String,
    /// The Host it was sent to (queue URLs name it).
    pub host: String,
    pub body: Bytes,
}

/// Why a request is not read.
pub enum Refused {
    /// `--lacking` names its operation: it gets what an endpoint without it answers.
    Lacking,
    /// Not a POST: the method and the target, for the service's error.
    NotPost(Method, String),
    /// Its body is larger than any operation takes, or could not be read: said in a sentence.
    Body(String),
}

/// Reads a request of a service whose targets start with `prefix`.
pub async fn read(req: Request<Incoming>, prefix: &str, cx: &Cx<'_>) -> Result<JsonCall, Refused> {
    let header = |name: http::header::HeaderName| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let target = header(http::header::HeaderName::from_static("x-amz-target")).unwrap_or_default();
    let op = target.strip_prefix(prefix).unwrap_or(&target).to_string();
    if cx.lacks(&op) {
        return Err(Refused::Lacking);
    }
    if req.method() != Method::POST {
        return Err(Refused::NotPost(req.method().clone(), target));
    }
    let region = signing_region(req.headers()).unwrap_or_else(|| "us-east-1".into());
    let host = header(http::header::HOST).unwrap_or_else(|| "127.0.0.1".into());
    // A body declared larger than any operation takes is refused before a byte of it is read.
    let declared = header(http::header::CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok());
    if let Some(n) = declared.filter(|n| *n > MAX_JSON_BODY as u64) {
        return Err(Refused::Body(format!(
            "the request body is {n} bytes; at most {MAX_JSON_BODY} are accepted"
        )));
    }
    let body = match Limited::new(req.into_body(), MAX_JSON_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return Err(Refused::Body(format!(
                "the request body could not be read or exceeds {MAX_JSON_BODY} bytes: {e}"
            )));
        }
    };
    Ok(JsonCall {
        target,
        op,
        region,
        host,
        body,
    })
}
