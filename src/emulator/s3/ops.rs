//! S3's operations, routed from the method, the path (`/bucket/key`, path-style) and the query.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use tokio::sync::mpsc;

use super::body::{ALGORITHMS, Checksum, Chunked, algorithm_name};
use super::error::{S3Error, S3Result};
use super::store::{Reader, Writer};
use super::xml::{all, doc, el, text};
use super::{BucketState, Class, Object, Part, S3, Session, Upload, is_directory_bucket};
use crate::clock::{http_date_ms, rfc3339_ms};
use crate::emulator::Body;
use crate::emulator::profile::delay;

/// An S3 request, parsed.
struct Call {
    method: Method,
    bucket: String,
    key: String,
    query: BTreeMap<String, String>,
    headers: HeaderMap,
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(
                    std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"),
                    16,
                ) {
                    Ok(b) => {
                        out.push(b);
                        i += 3;
                    }
                    Err(_) => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn path_decode(s: &str) -> String {
    // '+' is literal in paths.
    percent_decode(&s.replace('+', "%2B"))
}

fn parse(req: &Request<Incoming>) -> Call {
    let path = req.uri().path();
    let trimmed = path.strip_prefix('/').unwrap_or(path);
    let (bucket, key) = match trimmed.split_once('/') {
        Some((b, k)) => (path_decode(b), path_decode(k)),
        None => (path_decode(trimmed), String::new()),
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

/// The operation a call names, for counting and errors.
fn operation(c: &Call) -> &'static str {
    let q = |k: &str| c.query.contains_key(k);
    match (&c.method, c.bucket.is_empty(), c.key.is_empty()) {
        (&Method::GET, true, _) => "ListBuckets",
        (&Method::PUT, false, true) => "CreateBucket",
        (&Method::HEAD, false, true) => "HeadBucket",
        (&Method::DELETE, false, true) => "DeleteBucket",
        (&Method::GET, false, true) if q("session") => "CreateSession",
        (&Method::GET, false, true) if q("uploads") => "ListMultipartUploads",
        (&Method::GET, false, true) => "ListObjectsV2",
        (&Method::POST, false, true) if q("delete") => "DeleteObjects",
        (&Method::PUT, false, false) if q("uploadId") => "UploadPart",
        (&Method::PUT, false, false) => "PutObject",
        (&Method::GET, false, false) if q("uploadId") => "ListParts",
        (&Method::GET, false, false) => "GetObject",
        (&Method::HEAD, false, false) => "HeadObject",
        (&Method::DELETE, false, false) if q("uploadId") => "AbortMultipartUpload",
        (&Method::DELETE, false, false) => "DeleteObject",
        (&Method::POST, false, false) if q("uploads") => "CreateMultipartUpload",
        (&Method::POST, false, false) if q("uploadId") => "CompleteMultipartUpload",
        _ => "Unknown",
    }
}

fn is_write(op: &str) -> bool {
    !matches!(
        op,
        "GetObject"
            | "HeadObject"
            | "HeadBucket"
            | "ListObjectsV2"
            | "ListParts"
            | "ListBuckets"
            | "CreateSession"
            | "ListMultipartUploads"
    )
}

impl S3 {
    /// Answers one S3 request.
    pub async fn handle(self: &Arc<Self>, req: Request<Incoming>) -> Response<Body> {
        let call = parse(&req);
        let op = operation(&call);
        let head = call.method == Method::HEAD;
        let class = Class::of_bucket(&call.bucket);
        let result = self.dispatch(op, call, req.into_body()).await;
        match result {
            Ok(r) => {
                self.count(class, op, |c| c.requests += 1);
                r
            }
            Err(e) => {
                self.count(class, op, |c| {
                    c.requests += 1;
                    if e.code == "SlowDown" {
                        c.slow_downs += 1;
                    } else {
                        c.errors += 1;
                    }
                });
                tracing::debug!("s3 {op}: {e}");
                error_response(&e, head)
            }
        }
    }

    async fn dispatch(
        self: &Arc<Self>,
        op: &'static str,
        c: Call,
        body: Incoming,
    ) -> S3Result<Response<Body>> {
        if op == "Unknown" {
            return Err(S3Error::new(
                405,
                "MethodNotAllowed",
                format!(
                    "{} on {} is not an S3 operation this endpoint answers",
                    c.method,
                    if c.key.is_empty() {
                        "a bucket"
                    } else {
                        "an object"
                    }
                ),
            ));
        }
        match op {
            "ListBuckets" => return self.list_buckets(),
            "CreateBucket" => return self.create_bucket(&c, body).await,
            _ => {}
        }
        if op == "CreateSession" {
            // Against a custom endpoint the SDK asks for a session even before CreateBucket (on
            // AWS it would use the control-plane endpoint): a directory bucket's name is enough.
            if !is_directory_bucket(&c.bucket) {
                self.bucket(&c.bucket)?;
            }
            return self.create_session(&c.bucket).await;
        }
        let bucket = self.bucket(&c.bucket)?;
        // Directory buckets answer zonal operations only with a valid session token.
        if bucket.class == Class::ExpressOneZone && op != "DeleteBucket" {
            self.check_session(&c.headers, &bucket.name)?;
        }
        if !self.admit(&bucket, &c.key, is_write(op)) {
            return Err(S3Error::slow_down());
        }
        // Requests without a body of their own pay the class's first-byte latency here (PUT,
        // UploadPart and GET pay it after receiving, or before sending, their bodies).
        if !matches!(op, "PutObject" | "UploadPart" | "GetObject" | "HeadObject") {
            let p = self.class_profile(bucket.class);
            delay(if is_write(op) {
                &p.put_first_byte
            } else {
                &p.get_first_byte
            })
            .await;
        }
        match op {
            "HeadBucket" => Ok(empty(200)),
            "DeleteBucket" => self.delete_bucket(&bucket),
            "ListObjectsV2" => self.list_objects(&bucket, &c),
            "ListMultipartUploads" => self.list_uploads(&bucket),
            "DeleteObjects" => self.delete_objects(&bucket, body).await,
            "PutObject" => self.put_object(&bucket, &c, body).await,
            "UploadPart" => self.upload_part(&bucket, &c, body).await,
            "GetObject" => self.get_object(&bucket, &c, false).await,
            "HeadObject" => self.get_object(&bucket, &c, true).await,
            "DeleteObject" => {
                bucket.objects.write().remove(&c.key);
                Ok(empty(204))
            }
            "CreateMultipartUpload" => self.create_upload(&bucket, &c),
            "CompleteMultipartUpload" => self.complete_upload(&bucket, &c, body).await,
            "AbortMultipartUpload" => {
                let id = c.query.get("uploadId").cloned().unwrap_or_default();
                bucket
                    .uploads
                    .lock()
                    .remove(&id)
                    .ok_or_else(|| S3Error::no_such_upload(&id))?;
                Ok(empty(204))
            }
            "ListParts" => self.list_parts(&bucket, &c),
            _ => unreachable!("every operation is routed"),
        }
    }

    fn bucket(&self, name: &str) -> S3Result<Arc<BucketState>> {
        self.buckets
            .read()
            .get(name)
            .cloned()
            .ok_or_else(|| S3Error::no_such_bucket(name))
    }

    fn list_buckets(&self) -> S3Result<Response<Body>> {
        let buckets: String = self
            .buckets
            .read()
            .values()
            .map(|b| {
                format!(
                    "<Bucket>{}{}</Bucket>",
                    el("Name", &b.name),
                    el("CreationDate", rfc3339_ms(b.created_ms))
                )
            })
            .collect();
        Ok(xml_response(
            200,
            doc(
                "ListAllMyBucketsResult",
                &format!(
                    "<Owner><ID>latlab</ID><DisplayName>latlab</DisplayName></Owner><Buckets>{buckets}</Buckets>"
                ),
            ),
        ))
    }

    async fn create_bucket(&self, c: &Call, body: Incoming) -> S3Result<Response<Body>> {
        let name = &c.bucket;
        let valid_char =
            |ch: char| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-' || ch == '.';
        if name.len() < 3
            || name.len() > 63
            || !name.chars().all(valid_char)
            || name.starts_with(['-', '.'])
        {
            return Err(S3Error::new(
                400,
                "InvalidBucketName",
                "The specified bucket is not valid.",
            )
            .with("BucketName", name));
        }
        let config = collect(body, 64 * 1024).await?;
        let config = String::from_utf8_lossy(&config);
        if is_directory_bucket(name) {
            // A directory bucket's configuration names its zone; the name carries it too.
            if !config.trim().is_empty() && text(&config, "Type")?.is_none() {
                return Err(S3Error::malformed_xml());
            }
        } else if name.contains("--") && name.ends_with("--x-s3") {
            return Err(S3Error::new(
                400,
                "InvalidBucketName",
                "directory bucket names are name--azid--x-s3",
            )
            .with("BucketName", name));
        }
        let mut buckets = self.buckets.write();
        if buckets.contains_key(name) {
            return Err(S3Error::new(
                409,
                "BucketAlreadyOwnedByYou",
                "Your previous request to create the named bucket succeeded and you already own it.",
            )
            .with("BucketName", name));
        }
        buckets.insert(
            name.clone(),
            Arc::new(BucketState {
                name: name.clone(),
                class: Class::of_bucket(name),
                created_ms: crate::clock::now_micros() / 1000,
                objects: Default::default(),
                uploads: Default::default(),
            }),
        );
        let mut r = empty(200);
        r.headers_mut().insert(
            "location",
            HeaderValue::from_str(&format!("/{name}")).unwrap_or(HeaderValue::from_static("/")),
        );
        Ok(r)
    }

    fn delete_bucket(&self, bucket: &BucketState) -> S3Result<Response<Body>> {
        if !bucket.objects.read().is_empty() {
            return Err(S3Error::new(
                409,
                "BucketNotEmpty",
                "The bucket you tried to delete is not empty",
            )
            .with("BucketName", &bucket.name));
        }
        self.buckets.write().remove(&bucket.name);
        Ok(empty(204))
    }

    async fn create_session(&self, bucket: &str) -> S3Result<Response<Body>> {
        if !is_directory_bucket(bucket) {
            return Err(S3Error::invalid_request(
                "CreateSession is only for directory buckets (name--azid--x-s3)",
            ));
        }
        delay(&self.profile().create_session).await;
        let token = format!(
            "latlab-session-{:x}-{:016x}",
            self.next_id(),
            rand::random::<u64>()
        );
        let duration = self.session_duration();
        let expires_ms = self.clock.now_micros() / 1000 + duration.as_millis() as i64;
        let now = self.clock.now();
        self.sessions.lock().insert(
            token.clone(),
            Session {
                bucket: bucket.to_string(),
                expires: now + duration,
                expires_ms,
            },
        );
        // Old sessions are forgotten so the table stays small.
        self.sessions
            .lock()
            .retain(|_, s| s.expires + Duration::from_secs(600) > now);
        *self.create_sessions.lock() += 1;
        let inner = format!(
            "<Credentials>{}{}{}{}</Credentials>",
            el("SessionToken", &token),
            el("SecretAccessKey", "latlab-session-secret"),
            el("AccessKeyId", "LATLABSESSION"),
            el("Expiration", rfc3339_ms(expires_ms))
        );
        Ok(xml_response(200, doc("CreateSessionResult", &inner)))
    }

    fn check_session(&self, h: &HeaderMap, bucket: &str) -> S3Result<()> {
        let Some(token) = header(h, "x-amz-s3session-token") else {
            return Err(S3Error::new(
                403,
                "AccessDenied",
                "Directory buckets require session authentication: send CreateSession and the x-amz-s3session-token header",
            ));
        };
        let sessions = self.sessions.lock();
        let Some(s) = sessions.get(token) else {
            return Err(S3Error::new(
                400,
                "InvalidToken",
                "The provided token is malformed or otherwise invalid.",
            ));
        };
        if s.bucket != bucket {
            return Err(S3Error::new(
                403,
                "AccessDenied",
                format!(
                    "the session token was created for bucket {}, not {bucket}",
                    s.bucket
                ),
            ));
        }
        if self.clock.now() >= s.expires {
            return Err(
                S3Error::new(400, "ExpiredToken", "The provided token has expired.")
                    .with("Expiration", rfc3339_ms(s.expires_ms)),
            );
        }
        Ok(())
    }

    fn list_objects(&self, bucket: &BucketState, c: &Call) -> S3Result<Response<Body>> {
        let prefix = c.query.get("prefix").cloned().unwrap_or_default();
        let max: usize = match c.query.get("max-keys") {
            Some(m) => m.parse().map_err(|_| {
                S3Error::invalid_argument(format!("max-keys '{m}' is not a number"))
            })?,
            None => 1000,
        };
        let max = max.min(1000);
        let start = c
            .query
            .get("continuation-token")
            .or_else(|| c.query.get("start-after"))
            .cloned()
            .unwrap_or_default();
        let objects = bucket.objects.read();
        let matching = objects
            .range::<String, _>((
                std::ops::Bound::Excluded(&start),
                std::ops::Bound::Unbounded,
            ))
            .filter(|(k, _)| k.starts_with(&prefix));
        let mut contents = String::new();
        let mut count = 0;
        let mut last = None;
        let mut truncated = false;
        for (k, o) in matching {
            if count == max {
                truncated = true;
                break;
            }
            contents.push_str(&format!(
                "<Contents>{}{}{}{}{}</Contents>",
                el("Key", k),
                el("LastModified", rfc3339_ms(o.last_modified_ms)),
                el("ETag", &o.etag),
                el("Size", o.size.to_string()),
                el("StorageClass", bucket.class.storage_class())
            ));
            count += 1;
            last = Some(k.clone());
        }
        let mut inner = format!(
            "{}{}{}{}{}{contents}",
            el("Name", &bucket.name),
            el("Prefix", &prefix),
            el("KeyCount", count.to_string()),
            el("MaxKeys", max.to_string()),
            el("IsTruncated", truncated.to_string())
        );
        if let (true, Some(l)) = (truncated, last) {
            inner.push_str(&el("NextContinuationToken", l));
        }
        Ok(xml_response(200, doc("ListBucketResult", &inner)))
    }

    fn list_uploads(&self, bucket: &BucketState) -> S3Result<Response<Body>> {
        let uploads: String = bucket
            .uploads
            .lock()
            .iter()
            .map(|(id, u)| {
                format!(
                    "<Upload>{}{}{}</Upload>",
                    el("Key", &u.key),
                    el("UploadId", id),
                    el("Initiated", rfc3339_ms(u.initiated_ms))
                )
            })
            .collect();
        Ok(xml_response(
            200,
            doc(
                "ListMultipartUploadsResult",
                &format!("{}{uploads}", el("Bucket", &bucket.name)),
            ),
        ))
    }

    async fn delete_objects(
        &self,
        bucket: &BucketState,
        body: Incoming,
    ) -> S3Result<Response<Body>> {
        let body = collect(body, 2 * 1024 * 1024).await?;
        let body = String::from_utf8(body.to_vec()).map_err(|_| S3Error::malformed_xml())?;
        let quiet = text(&body, "Quiet")?.as_deref() == Some("true");
        let keys: Vec<String> = all(&body, "Object")?
            .iter()
            .map(|o| text(o, "Key").and_then(|k| k.ok_or_else(S3Error::malformed_xml)))
            .collect::<S3Result<_>>()?;
        if keys.len() > 1000 {
            return Err(S3Error::malformed_xml());
        }
        let mut objects = bucket.objects.write();
        let mut out = String::new();
        for k in keys {
            objects.remove(&k);
            if !quiet {
                out.push_str(&format!("<Deleted>{}</Deleted>", el("Key", &k)));
            }
        }
        Ok(xml_response(200, doc("DeleteResult", &out)))
    }

    /// Receives a body into storage: plain or aws-chunked, paced to the class's bandwidth, with
    /// every checksum the request names checked. Returns the stored piece and its checksums.
    async fn receive(
        &self,
        bucket: &BucketState,
        c: &Call,
        body: Incoming,
    ) -> S3Result<(Arc<super::store::Stored>, Vec<(String, String)>)> {
        let chunked = header(&c.headers, "content-encoding")
            .is_some_and(|e| e.split(',').any(|p| p.trim() == "aws-chunked"))
            || header(&c.headers, "x-amz-content-sha256")
                .is_some_and(|v| v.starts_with("STREAMING-"));
        let declared: Option<u64> = header(
            &c.headers,
            if chunked {
                "x-amz-decoded-content-length"
            } else {
                "content-length"
            },
        )
        .and_then(|v| v.parse().ok());
        if let Some(n) = declared
            && n > self.limits.max_object_bytes
        {
            return Err(S3Error::new(
                400,
                "EntityTooLarge",
                "Your proposed upload exceeds the maximum allowed size",
            ));
        }
        // Checksums named in headers (plain bodies) or announced as trailers (chunked).
        let mut expected: Vec<(String, Option<String>)> = Vec::new();
        for (h, _) in ALGORITHMS {
            if let Some(v) = header(&c.headers, h) {
                expected.push((h.to_string(), Some(v.to_string())));
            }
        }
        if let Some(trailer) = header(&c.headers, "x-amz-trailer") {
            for t in trailer.split(',').map(|t| t.trim().to_ascii_lowercase()) {
                if ALGORITHMS.iter().any(|(h, _)| *h == t) && !expected.iter().any(|(h, _)| *h == t)
                {
                    expected.push((t, None));
                }
            }
        }
        let mut sums: Vec<(String, Checksum)> = expected
            .iter()
            .filter_map(|(h, _)| Checksum::for_header(h).map(|c| (h.clone(), c)))
            .collect();
        let mut writer = Writer::new(&self.storage);
        let mut shaper = self.shaper(bucket.class, true);
        let mut decoder = chunked.then(Chunked::default);
        let mut body = body;
        let mut received = 0u64;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| {
                S3Error::new(
                    400,
                    "IncompleteBody",
                    format!("the request body broke off: {e}"),
                )
            })?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            shaper.pass(data.len()).await;
            let pieces = match &mut decoder {
                Some(d) => d.feed(data)?,
                None => vec![data],
            };
            for p in pieces {
                received += p.len() as u64;
                if received > self.limits.max_object_bytes {
                    return Err(S3Error::new(
                        400,
                        "EntityTooLarge",
                        "Your proposed upload exceeds the maximum allowed size",
                    ));
                }
                for (_, s) in &mut sums {
                    s.update(&p);
                }
                writer.write(&p).await?;
            }
        }
        if let Some(d) = &decoder {
            d.finish()?;
            for (k, v) in &d.trailers {
                if let Some(slot) = expected.iter_mut().find(|(h, _)| h == k) {
                    slot.1 = Some(v.clone());
                }
            }
        }
        if let Some(n) = declared
            && n != received
        {
            return Err(S3Error::new(
                400,
                "IncompleteBody",
                format!(
                    "You did not provide the number of bytes specified by the Content-Length HTTP header: {n} declared, {received} received"
                ),
            ));
        }
        let mut checksums = Vec::new();
        for (h, sum) in sums {
            let got = sum.finish();
            match expected
                .iter()
                .find(|(e, _)| *e == h)
                .and_then(|(_, v)| v.clone())
            {
                Some(want) if want != got => return Err(S3Error::bad_digest(algorithm_name(&h))),
                Some(_) => checksums.push((h, got)),
                None => {
                    return Err(S3Error::invalid_request(format!(
                        "the trailer {h} was announced but not sent"
                    )));
                }
            }
        }
        self.count(bucket.class, "PutObject", |c| c.bytes_in += received);
        Ok((Arc::new(writer.finish().await?), checksums))
    }

    async fn put_object(
        &self,
        bucket: &BucketState,
        c: &Call,
        body: Incoming,
    ) -> S3Result<Response<Body>> {
        if c.headers.contains_key("x-amz-copy-source") {
            return Err(S3Error::new(
                501,
                "NotImplemented",
                "CopyObject is not emulated",
            ));
        }
        let (stored, checksums) = self.receive(bucket, c, body).await?;
        delay(&self.class_profile(bucket.class).put_first_byte).await;
        let etag = etag_of(&checksums, stored.len());
        let obj = Object {
            size: stored.len(),
            parts: vec![stored],
            etag: etag.clone(),
            checksums: checksums.clone(),
            content_type: header(&c.headers, "content-type")
                .unwrap_or("binary/octet-stream")
                .to_string(),
            last_modified_ms: crate::clock::now_micros() / 1000,
        };
        bucket.objects.write().insert(c.key.clone(), Arc::new(obj));
        let mut r = stored_response(&etag, &checksums);
        if bucket.class == Class::ExpressOneZone {
            r.headers_mut().insert(
                "x-amz-storage-class",
                HeaderValue::from_static("EXPRESS_ONEZONE"),
            );
        }
        Ok(r)
    }

    fn create_upload(&self, bucket: &BucketState, c: &Call) -> S3Result<Response<Body>> {
        let id = format!(
            "latlab-upload-{:x}-{:08x}",
            self.next_id(),
            rand::random::<u32>()
        );
        bucket.uploads.lock().insert(
            id.clone(),
            Upload {
                key: c.key.clone(),
                parts: BTreeMap::new(),
                content_type: header(&c.headers, "content-type")
                    .unwrap_or("binary/octet-stream")
                    .to_string(),
                initiated_ms: crate::clock::now_micros() / 1000,
            },
        );
        let inner = format!(
            "{}{}{}",
            el("Bucket", &bucket.name),
            el("Key", &c.key),
            el("UploadId", &id)
        );
        Ok(xml_response(
            200,
            doc("InitiateMultipartUploadResult", &inner),
        ))
    }

    async fn upload_part(
        &self,
        bucket: &BucketState,
        c: &Call,
        body: Incoming,
    ) -> S3Result<Response<Body>> {
        let id = c.query.get("uploadId").cloned().unwrap_or_default();
        let number: u32 = c
            .query
            .get("partNumber")
            .and_then(|n| n.parse().ok())
            .filter(|n| (1..=10_000).contains(n))
            .ok_or_else(|| {
                S3Error::invalid_argument(
                    "Part number must be an integer between 1 and 10000, inclusive",
                )
                .with("ArgumentName", "partNumber")
            })?;
        if !bucket.uploads.lock().contains_key(&id) {
            return Err(S3Error::no_such_upload(&id));
        }
        let (stored, checksums) = self.receive(bucket, c, body).await?;
        delay(&self.class_profile(bucket.class).put_first_byte).await;
        let etag = etag_of(&checksums, stored.len());
        let part = Part {
            stored,
            etag: etag.clone(),
            checksums: checksums.clone(),
            last_modified_ms: crate::clock::now_micros() / 1000,
        };
        bucket
            .uploads
            .lock()
            .get_mut(&id)
            .ok_or_else(|| S3Error::no_such_upload(&id))?
            .parts
            .insert(number, part);
        Ok(stored_response(&etag, &checksums))
    }

    async fn complete_upload(
        &self,
        bucket: &BucketState,
        c: &Call,
        body: Incoming,
    ) -> S3Result<Response<Body>> {
        let id = c.query.get("uploadId").cloned().unwrap_or_default();
        let xml = collect(body, 4 * 1024 * 1024).await?;
        let xml = String::from_utf8(xml.to_vec()).map_err(|_| S3Error::malformed_xml())?;
        let mut listed = Vec::new();
        for p in all(&xml, "Part")? {
            let n: u32 = text(p, "PartNumber")?
                .and_then(|n| n.parse().ok())
                .ok_or_else(S3Error::malformed_xml)?;
            let etag = text(p, "ETag")?;
            listed.push((n, etag));
        }
        if listed.is_empty() {
            return Err(S3Error::malformed_xml());
        }
        if listed.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(S3Error::new(
                400,
                "InvalidPartOrder",
                "The list of parts was not in ascending order. The parts list must be specified in order by part number.",
            ));
        }
        let upload = {
            let mut uploads = bucket.uploads.lock();
            let u = uploads
                .get(&id)
                .ok_or_else(|| S3Error::no_such_upload(&id))?;
            for (i, (n, etag)) in listed.iter().enumerate() {
                let part = u.parts.get(n).ok_or_else(|| {
                    S3Error::new(400, "InvalidPart", "One or more of the specified parts could not be found. The part might not have been uploaded, or the specified entity tag might not have matched the part's entity tag.")
                })?;
                if etag
                    .as_ref()
                    .is_some_and(|e| e.trim_matches('"') != part.etag.trim_matches('"'))
                {
                    return Err(S3Error::new(
                        400,
                        "InvalidPart",
                        format!("part {n}'s ETag does not match the part uploaded"),
                    ));
                }
                if i + 1 < listed.len() && part.stored.len() < self.limits.min_part_bytes {
                    return Err(S3Error::new(
                        400,
                        "EntityTooSmall",
                        "Your proposed upload is smaller than the minimum allowed object size.",
                    )
                    .with("PartNumber", n.to_string()));
                }
            }
            uploads.remove(&id).expect("checked above")
        };
        let mut parts = Vec::new();
        let mut size = 0;
        let mut upload = upload;
        for (n, _) in &listed {
            let p = upload.parts.remove(n).expect("checked above");
            size += p.stored.len();
            parts.push(p.stored);
        }
        let etag = format!("\"{:016x}-{}\"", size ^ rand::random::<u64>(), parts.len());
        let obj = Object {
            parts,
            size,
            etag: etag.clone(),
            checksums: Vec::new(),
            content_type: upload.content_type,
            last_modified_ms: crate::clock::now_micros() / 1000,
        };
        bucket
            .objects
            .write()
            .insert(upload.key.clone(), Arc::new(obj));
        let inner = format!(
            "{}{}{}{}",
            el("Location", format!("/{}/{}", bucket.name, upload.key)),
            el("Bucket", &bucket.name),
            el("Key", &upload.key),
            el("ETag", &etag)
        );
        Ok(xml_response(
            200,
            doc("CompleteMultipartUploadResult", &inner),
        ))
    }

    fn list_parts(&self, bucket: &BucketState, c: &Call) -> S3Result<Response<Body>> {
        let id = c.query.get("uploadId").cloned().unwrap_or_default();
        let uploads = bucket.uploads.lock();
        let u = uploads
            .get(&id)
            .ok_or_else(|| S3Error::no_such_upload(&id))?;
        let parts: String = u
            .parts
            .iter()
            .map(|(n, p)| {
                let sums: String = p
                    .checksums
                    .iter()
                    .map(|(h, v)| el(&format!("Checksum{}", algorithm_name(h)), v))
                    .collect();
                format!(
                    "<Part>{}{}{}{}{sums}</Part>",
                    el("PartNumber", n.to_string()),
                    el("LastModified", rfc3339_ms(p.last_modified_ms)),
                    el("ETag", &p.etag),
                    el("Size", p.stored.len().to_string())
                )
            })
            .collect();
        let inner = format!(
            "{}{}{}{parts}{}",
            el("Bucket", &bucket.name),
            el("Key", &u.key),
            el("UploadId", &id),
            el("IsTruncated", "false")
        );
        Ok(xml_response(200, doc("ListPartsResult", &inner)))
    }

    async fn get_object(
        &self,
        bucket: &BucketState,
        c: &Call,
        head: bool,
    ) -> S3Result<Response<Body>> {
        let obj = bucket
            .objects
            .read()
            .get(&c.key)
            .cloned()
            .ok_or_else(|| S3Error::no_such_key(&c.key))?;
        let range = match header(&c.headers, "range") {
            Some(r) => Some(parse_range(r, obj.size)?),
            None => None,
        };
        let (start, end) = range.unwrap_or((0, obj.size));
        delay(&self.class_profile(bucket.class).get_first_byte).await;
        let len = end - start;
        let mut r = if head || len == 0 {
            empty(if range.is_some() { 206 } else { 200 })
        } else {
            let (tx, rx) = mpsc::channel::<Bytes>(4);
            let shaper = self.shaper(bucket.class, false);
            tokio::spawn(stream_object(obj.clone(), start, end, shaper, tx));
            let frames = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv()
                    .await
                    .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
            });
            let mut r = Response::new(StreamBody::new(frames).boxed());
            if range.is_some() {
                *r.status_mut() = StatusCode::PARTIAL_CONTENT;
            }
            r
        };
        self.count(
            bucket.class,
            if head { "HeadObject" } else { "GetObject" },
            |c| c.bytes_out += if head { 0 } else { len },
        );
        let h = r.headers_mut();
        h.insert("content-length", HeaderValue::from(len));
        h.insert("etag", HeaderValue::from_str(&obj.etag).expect("ascii"));
        h.insert(
            "last-modified",
            HeaderValue::from_str(&http_date_rfc1123(obj.last_modified_ms)).expect("ascii"),
        );
        h.insert(
            "content-type",
            HeaderValue::from_str(&obj.content_type)
                .unwrap_or(HeaderValue::from_static("binary/octet-stream")),
        );
        h.insert("accept-ranges", HeaderValue::from_static("bytes"));
        if let Some((s, e)) = range {
            h.insert(
                "content-range",
                HeaderValue::from_str(&format!("bytes {s}-{}/{}", e.saturating_sub(1), obj.size))
                    .expect("ascii"),
            );
        }
        if bucket.class == Class::ExpressOneZone {
            h.insert(
                "x-amz-storage-class",
                HeaderValue::from_static("EXPRESS_ONEZONE"),
            );
        }
        // A whole object's checksum, when asked for and known (a range has none).
        if range.is_none()
            && header(&c.headers, "x-amz-checksum-mode")
                .is_some_and(|m| m.eq_ignore_ascii_case("ENABLED"))
        {
            for (name, v) in &obj.checksums {
                if let (Ok(name), Ok(value)) = (
                    http::HeaderName::from_bytes(name.as_bytes()),
                    HeaderValue::from_str(v),
                ) {
                    h.insert(name, value);
                }
            }
        }
        Ok(r)
    }
}

/// Sends `[start, end)` of an object into a response body, paced by the shaper.
async fn stream_object(
    obj: Arc<Object>,
    start: u64,
    end: u64,
    mut shaper: super::body::Shaper,
    tx: mpsc::Sender<Bytes>,
) {
    let mut offset = 0u64;
    for part in &obj.parts {
        let (p_start, p_end) = (offset, offset + part.len());
        offset = p_end;
        if p_end <= start || p_start >= end {
            continue;
        }
        let from = start.max(p_start) - p_start;
        let to = end.min(p_end) - p_start;
        let mut reader = Reader::new(part.clone(), from, to, 64 * 1024);
        loop {
            match reader.next().await {
                Ok(Some(chunk)) => {
                    shaper.pass(chunk.len()).await;
                    if tx.send(chunk).await.is_err() {
                        return;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!("s3: reading a stored object failed: {e}");
                    return;
                }
            }
        }
    }
}

/// `bytes=a-b`, `bytes=a-`, `bytes=-n` to a half-open range; an unsatisfiable one is InvalidRange.
fn parse_range(r: &str, size: u64) -> S3Result<(u64, u64)> {
    let invalid = || {
        S3Error::new(
            416,
            "InvalidRange",
            "The requested range is not satisfiable",
        )
        .with("RangeRequested", r)
        .with("ActualObjectSize", size.to_string())
    };
    let spec = r.trim().strip_prefix("bytes=").ok_or_else(invalid)?;
    let (a, b) = spec.split_once('-').ok_or_else(invalid)?;
    let (start, end) = match (a.trim(), b.trim()) {
        ("", n) => {
            let n: u64 = n.parse().map_err(|_| invalid())?;
            (size.saturating_sub(n), size)
        }
        (a, "") => (a.parse().map_err(|_| invalid())?, size),
        (a, b) => {
            let (a, b): (u64, u64) = (
                a.parse().map_err(|_| invalid())?,
                b.parse().map_err(|_| invalid())?,
            );
            if b < a {
                return Err(invalid());
            }
            (a, (b + 1).min(size))
        }
    };
    if start >= size || start >= end {
        return Err(invalid());
    }
    Ok((start, end))
}

/// An ETag from what was computed anyway (S3's are opaque; Express's are not MD5s either).
fn etag_of(checksums: &[(String, String)], len: u64) -> String {
    match checksums.first() {
        Some((_, v)) => {
            let hex: String = v.bytes().map(|b| format!("{b:02x}")).collect();
            format!("\"{}\"", &hex[..hex.len().min(32)])
        }
        None => format!("\"{:016x}{:016x}\"", len, rand::random::<u64>()),
    }
}

/// `Mon, 30 Nov 2026 03:18:48 GMT`.
fn http_date_rfc1123(ms: i64) -> String {
    let d = http_date_ms(ms); // `Mon Nov 30 03:18:48 UTC 2026`
    let p: Vec<&str> = d.split(' ').collect();
    format!("{}, {} {} {} {} GMT", p[0], p[2], p[1], p[5], p[3])
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
}
