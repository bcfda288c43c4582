//! S3's operations: the protocol (a request parsed, resolved once into an [`Op`], answered in
//! XML) here, the behaviour one file per family: `bucket.rs`, `object.rs`, `multipart.rs`,
//! `session.rs`.

mod bucket;
mod multipart;
#[doc(hidden)]
pub mod object;
mod session;

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use tokio::sync::mpsc;

use super::error::{S3Error, S3Result};
use super::xml::{all, doc, el, text};
use super::{BucketState, Class, Object, Op, Part, S3, Session, Upload, is_directory_bucket};
use crate::Body;
use crate::faults::{Action, Faulty, Target};
use crate::query_protocol::percent_decode;
use crate::s3::body::{ALGORITHMS, Checksum, Chunked, algorithm_name};
use crate::s3::store::{Reader, Writer};
use crate::service::Cx;
use latlab_core::clock::{http_date_ms, rfc3339_ms};
use latlab_core::faults::Service;
use latlab_core::shaping::delay;

/// An S3 request, parsed.
struct Call {
    method: Method,
    bucket: String,
    key: String,
    query: BTreeMap<String, String>,
    headers: HeaderMap,
}

fn path_decode(s: &str) -> String {
    // '+' is literal in paths.
    percent_decode(&s.replace('+', "%2B"))
}

/// The bucket a virtual-hosted request names in its host: the labels before S3's own label
/// (`s3`, `s3-REGION`, `s3express-AZ`), as AWS's endpoints have them
/// (`BUCKET.s3.us-east-1.amazonaws.com`, `BUCKET.s3.amazonaws.com`,
/// `BUCKET--use1-az4--x-s3.s3express-use1-az4.us-east-1.amazonaws.com`) and any endpoint named
/// the same way (`BUCKET.s3.localhost`). None for path-style: an IP literal, or a host that starts
/// with S3's label or has none (`s3.us-east-1.amazonaws.com`, `localhost`,
/// `s3express-control.us-east-1.amazonaws.com`).
pub(crate) fn virtual_host_bucket(host: &str) -> Option<&str> {
    if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        return None;
    }
    let s3_label = |l: &str| {
        l == "s3"
            || (l.starts_with("s3-") && l.len() > 3)
            || (l.starts_with("s3express-") && l != "s3express-control")
    };
    let mut at = 0;
    for label in host.split('.') {
        if s3_label(label) {
            return (at > 0).then(|| &host[..at - 1]);
        }
        at += label.len() + 1;
    }
    None
}

fn parse(req: &Request<Incoming>) -> Call {
    let path = req.uri().path();
    let trimmed = path.strip_prefix('/').unwrap_or(path);
    let host = crate::host_of(req);
    let (bucket, key) = match host.as_deref().and_then(virtual_host_bucket) {
        // Virtual-hosted: the bucket is in the host and the whole path is the key.
        Some(b) => (b.to_string(), path_decode(trimmed)),
        None => match trimmed.split_once('/') {
            Some((b, k)) => (path_decode(b), path_decode(k)),
            None => (path_decode(trimmed), String::new()),
        },
    };
    let query = req
        .uri()
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (percent_decode(k), percent_decode(v)),
            None => (percent_decode(p), String::new()),
        })
        .collect();
    Call {
        method: req.method().clone(),
        bucket,
        key,
        query,
        headers: req.headers().clone(),
    }
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

fn request_id() -> String {
    let v: u64 = rand::random();
    format!("{v:016X}")
}

fn xml_response(status: u16, body: String) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(body)).boxed());
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    r.headers_mut()
        .insert("content-type", HeaderValue::from_static("application/xml"));
    r
}

fn empty(status: u16) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::new()).boxed());
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    r
}

/// 200 for a stored object or part: its ETag and the checksums S3 answers with.
fn stored_response(etag: &str, checksums: &[(String, String)]) -> Response<Body> {
    let mut r = empty(200);
    r.headers_mut()
        .insert("etag", HeaderValue::from_str(etag).expect("ascii"));
    for (h, v) in checksums {
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(h.as_bytes()),
            HeaderValue::from_str(v),
        ) {
            r.headers_mut().insert(name, value);
        }
    }
    r
}

fn error_response(e: &S3Error, head: bool) -> Response<Body> {
    let id = request_id();
    let mut r = if head {
        empty(e.status)
    } else {
        xml_response(e.status, e.body(&id))
    };
    r.headers_mut()
        .insert("x-amz-request-id", HeaderValue::from_str(&id).expect("hex"));
    if e.code == "SlowDown" {
        r.headers_mut()
            .insert("retry-after", HeaderValue::from_static("1"));
    }
    r
}

/// The name counted for a request that names no operation (answered 405 MethodNotAllowed).
const UNROUTED: &str = "Unknown";

/// The operation a call names, if any: resolved once from the method, the path and the query.
fn route(c: &Call) -> Option<Op> {
    let q = |k: &str| c.query.contains_key(k);
    Some(match (&c.method, c.bucket.is_empty(), c.key.is_empty()) {
        (&Method::GET, true, _) => Op::ListBuckets,
        (&Method::PUT, false, true) => Op::CreateBucket,
        (&Method::HEAD, false, true) => Op::HeadBucket,
        (&Method::DELETE, false, true) => Op::DeleteBucket,
        (&Method::GET, false, true) if q("session") => Op::CreateSession,
        (&Method::GET, false, true) if q("uploads") => Op::ListMultipartUploads,
        (&Method::GET, false, true) => Op::ListObjectsV2,
        (&Method::POST, false, true) if q("delete") => Op::DeleteObjects,
        (&Method::PUT, false, false) if q("uploadId") => Op::UploadPart,
        (&Method::PUT, false, false) => Op::PutObject,
        (&Method::GET, false, false) if q("uploadId") => Op::ListParts,
        (&Method::GET, false, false) => Op::GetObject,
        (&Method::HEAD, false, false) => Op::HeadObject,
        (&Method::DELETE, false, false) if q("uploadId") => Op::AbortMultipartUpload,
        (&Method::DELETE, false, false) => Op::DeleteObject,
        (&Method::POST, false, false) if q("uploads") => Op::CreateMultipartUpload,
        (&Method::POST, false, false) if q("uploadId") => Op::CompleteMultipartUpload,
        _ => return None,
    })
}

/// Waits a modelled delay (a first byte), skipping the timer for zero.
pub(super) async fn wait(d: std::time::Duration) {
    if !d.is_zero() {
        latlab_core::shaping::sleep_until(std::time::Instant::now() + d).await;
    }
}

/// Carries a body whose transfer pays the first-byte latency itself (else it is paid before
/// the answer).
fn pays_first_byte_with_body(op: Op) -> bool {
    matches!(
        op,
        Op::PutObject | Op::UploadPart | Op::GetObject | Op::HeadObject
    )
}

impl S3 {
    /// Answers one S3 request, with the faults set on the emulator (`cx.conn` resets the
    /// connection it came on) and the operations it is to lack.
    pub async fn handle(self: &Arc<Self>, req: Request<Incoming>, cx: Cx<'_>) -> Response<Body> {
        let (faults, conn) = (cx.injector, cx.conn);
        let call = parse(&req);
        let op = route(&call);
        let name = op.map_or(UNROUTED, Op::name);
        let head = call.method == Method::HEAD;
        let class = Class::of_bucket(&call.bucket);
        if cx.lacks(name) {
            return crate::lacking_answer();
        }
        let aim = Target {
            service: Some(Service::S3),
            operation: name.to_string(),
            class: Some(crate::faults::ResourceClass {
                key: class.key(),
                shown: class.storage_class(),
            }),
            ..Target::default()
        };
        let hit = faults.on_request(&aim);
        if !hit.delay.is_zero() {
            tokio::time::sleep(hit.delay).await;
        }
        let action = hit.action.map(|(a, _)| a);
        let result = match (op, action) {
            (_, Some(Action::InternalError)) => Err(S3Error::new(
                500,
                "InternalError",
                "We encountered an internal error. Please try again.",
            )),
            (_, Some(Action::Unavailable)) => Err(S3Error::slow_down()),
            (Some(Op::PutObject | Op::UploadPart), Some(Action::BodyReset)) => {
                read_half(&call.headers, req.into_body()).await;
                conn.reset();
                Err(S3Error::new(
                    500,
                    "InternalError",
                    "connection reset (fault)",
                ))
            }
            (Some(op), _) => self.dispatch(op, call, req.into_body()).await,
            (None, _) => Err(S3Error::new(
                405,
                "MethodNotAllowed",
                format!(
                    "{} on {} is not an S3 operation this endpoint answers",
                    call.method,
                    if call.key.is_empty() {
                        "a bucket"
                    } else {
                        "an object"
                    }
                ),
            )),
        };
        match result {
            Ok(mut r) => {
                self.count(class, name, |c| c.requests += 1);
                match action {
                    Some(Action::FirstByteStall(d)) => {
                        tokio::time::sleep(d).await;
                        if let Some((_, id)) = hit.action {
                            faults.log.recovered(id);
                        }
                    }
                    Some(Action::BodyReset) => {
                        // A download: half its body, then the connection is reset.
                        let half = header(r.headers(), "content-length")
                            .and_then(|v| v.parse::<u64>().ok())
                            .unwrap_or(0)
                            / 2;
                        let (parts, body) = r.into_parts();
                        r = Response::from_parts(
                            parts,
                            Faulty::cut_after(body, half, conn.clone()),
                        );
                        return r;
                    }
                    _ => {}
                }
                faults.on_success(&aim);
                r
            }
            Err(e) => {
                self.count(class, name, |c| {
                    c.requests += 1;
                    if e.code == "SlowDown" {
                        c.slow_downs += 1;
                    } else {
                        c.errors += 1;
                    }
                });
                tracing::debug!("s3 {name}: {e}");
                error_response(&e, head)
            }
        }
    }

    async fn dispatch(
        self: &Arc<Self>,
        op: Op,
        c: Call,
        body: Incoming,
    ) -> S3Result<Response<Body>> {
        match op {
            Op::ListBuckets => return self.list_buckets(),
            Op::CreateBucket => return self.create_bucket(&c, body).await,
            Op::CreateSession => {
                // Against a custom endpoint the SDK asks for a session even before CreateBucket
                // (on AWS it would use the control-plane endpoint): a directory bucket's name is
                // enough.
                if !is_directory_bucket(&c.bucket) {
                    self.bucket(&c.bucket)?;
                }
                if let Some(v) = c.headers.get("x-amz-create-session-mode") {
                    let mode = v.to_str().unwrap_or("\u{fffd}").trim();
                    if !["", "ReadWrite", "ReadOnly"].contains(&mode) {
                        return Err(S3Error::invalid_argument(format!(
                            "x-amz-create-session-mode '{}' is not a session mode; valid: ReadWrite, ReadOnly",
                            mode.chars().take(40).collect::<String>()
                        ))
                        .with("ArgumentName", "x-amz-create-session-mode"));
                    }
                }
                return self.create_session(&c.bucket).await;
            }
            _ => {}
        }
        let bucket = self.bucket(&c.bucket)?;
        // Directory buckets answer zonal operations only with a valid session token.
        if bucket.class == Class::ExpressOneZone && op != Op::DeleteBucket {
            self.check_session(&c.headers, &bucket.name)?;
        }
        if !self.admit(&bucket, &c.key, op.is_write()) {
            return Err(S3Error::slow_down());
        }
        // Requests without a body of their own pay the class's first-byte latency here (PUT,
        // UploadPart and GET pay it after receiving, or before sending, their bodies).
        if !pays_first_byte_with_body(op) {
            let p = self.class_profile(bucket.class);
            delay(if op.is_write() {
                &p.put_first_byte
            } else {
                &p.get_first_byte
            })
            .await;
        }
        match op {
            Op::HeadBucket => Ok(empty(200)),
            Op::DeleteBucket => self.delete_bucket(&bucket),
            Op::ListObjectsV2 => self.list_objects(&bucket, &c),
            Op::ListMultipartUploads => self.list_uploads(&bucket),
            Op::DeleteObjects => self.delete_objects(&bucket, body).await,
            Op::PutObject => self.put_object(&bucket, &c, body).await,
            Op::UploadPart => self.upload_part(&bucket, &c, body).await,
            Op::GetObject => self.get_object(&bucket, &c, false).await,
            Op::HeadObject => self.get_object(&bucket, &c, true).await,
            Op::DeleteObject => {
                bucket.objects.write().remove(&c.key);
                Ok(empty(204))
            }
            Op::CreateMultipartUpload => self.create_upload(&bucket, &c),
            Op::CompleteMultipartUpload => self.complete_upload(&bucket, &c, body).await,
            Op::AbortMultipartUpload => self.abort_upload(&bucket, &c),
            Op::ListParts => self.list_parts(&bucket, &c),
            // Answered above, before the bucket is looked up.
            Op::ListBuckets | Op::CreateBucket | Op::CreateSession => {
                unreachable!("answered before the bucket is looked up")
            }
        }
    }

    fn bucket(&self, name: &str) -> S3Result<Arc<BucketState>> {
        self.buckets
            .read()
            .get(name)
            .cloned()
            .ok_or_else(|| S3Error::no_such_bucket(name))
    }
}

/// Reads about half of an upload's body (by its Content-Length), for a reset mid-body.
async fn read_half(headers: &HeaderMap, mut body: Incoming) {
    let half = header(headers, "content-length")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
        / 2;
    let mut read = 0u64;
    while read < half {
        match body.frame().await {
            Some(Ok(f)) => read += f.data_ref().map_or(0, |d| d.len() as u64),
            _ => break,
        }
    }
}

/// A small request body, whole.
async fn collect(body: Incoming, max: usize) -> S3Result<Bytes> {
    http_body_util::Limited::new(body, max)
        .collect()
        .await
        .map(|b| b.to_bytes())
        .map_err(|e| {
            S3Error::new(
                400,
                "MaxMessageLengthExceeded",
                format!("the request body is over {max} bytes or broke off: {e}"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::object::{http_date_rfc1123, parse_range};
    use super::*;

    #[test]
    fn ranges_parse_like_s3() {
        assert_eq!(parse_range("bytes=0-9", 100).unwrap(), (0, 10));
        assert_eq!(parse_range("bytes=90-", 100).unwrap(), (90, 100));
        assert_eq!(parse_range("bytes=-10", 100).unwrap(), (90, 100));
        assert_eq!(parse_range("bytes=50-500", 100).unwrap(), (50, 100));
        assert_eq!(
            parse_range("bytes=100-", 100).unwrap_err().code,
            "InvalidRange"
        );
        assert_eq!(
            parse_range("lines=1-2", 100).unwrap_err().code,
            "InvalidRange"
        );
        assert_eq!(
            http_date_rfc1123(1_497_997_189_000),
            "Tue, 20 Jun 2017 22:19:49 GMT"
        );
        assert_eq!(percent_decode("a%20b%2Fc"), "a b/c");
        assert_eq!(path_decode("a+b"), "a+b");
    }

    #[test]
    fn a_bucket_in_the_host_is_read_as_aws_names_it() {
        use super::virtual_host_bucket as b;
        assert_eq!(
            b("rehearsal-std.s3.us-east-1.amazonaws.com"),
            Some("rehearsal-std")
        );
        assert_eq!(
            b("my.dotted.bucket.s3.amazonaws.com"),
            Some("my.dotted.bucket")
        );
        assert_eq!(b("old.s3-eu-west-1.amazonaws.com"), Some("old"));
        assert_eq!(
            b("r--use1-az4--x-s3.s3express-use1-az4.us-east-1.amazonaws.com"),
            Some("r--use1-az4--x-s3")
        );
        assert_eq!(b("b.s3.localhost"), Some("b"));
        // Path-style: no bucket in the host.
        for host in [
            "s3.us-east-1.amazonaws.com",
            "s3express-control.us-east-1.amazonaws.com",
            "s3express-use1-az4.us-east-1.amazonaws.com",
            "127.0.0.1",
            "::1",
            "localhost",
            "kinesis.us-east-1.amazonaws.com",
            "s3-bucket.example.com",
        ] {
            assert_eq!(b(host), None, "{host}");
        }
    }
}
