//! Object operations: PutObject (and the body every upload is received through), GetObject,
//! HeadObject, with ranges.

use super::*;

impl S3 {
    /// Receives a body into storage: plain or aws-chunked, paced to the class's bandwidth, with
    /// every checksum the request names checked. Returns the stored piece and its checksums.
    pub(super) async fn receive(
        &self,
        bucket: &BucketState,
        c: &Call,
        body: Incoming,
    ) -> S3Result<(Arc<crate::s3::store::Stored>, Vec<(String, String)>)> {
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

    pub(super) async fn put_object(
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
        super::wait(
            self.class_profile(bucket.class)
                .first_byte(true, stored.len()),
        )
        .await;
        let etag = etag_of(&checksums, stored.len());
        let obj = Object {
            size: stored.len(),
            parts: vec![stored],
            etag: etag.clone(),
            checksums: checksums.clone(),
            content_type: header(&c.headers, "content-type")
                .unwrap_or("binary/octet-stream")
                .to_string(),
            last_modified_ms: latlab_core::clock::now_micros() / 1000,
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

    pub(super) async fn get_object(
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
        let len = end - start;
        super::wait(
            self.class_profile(bucket.class)
                .first_byte(false, if head { 0 } else { len }),
        )
        .await;
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
pub(super) async fn stream_object(
    obj: Arc<Object>,
    start: u64,
    end: u64,
    mut shaper: crate::s3::body::Shaper,
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
pub fn parse_range(r: &str, size: u64) -> S3Result<(u64, u64)> {
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
            (a, b.saturating_add(1).min(size))
        }
    };
    if start >= size || start >= end {
        return Err(invalid());
    }
    Ok((start, end))
}

/// An ETag from what was computed anyway (S3's are opaque; Express's are not MD5s either).
pub(super) fn etag_of(checksums: &[(String, String)], len: u64) -> String {
    match checksums.first() {
        Some((_, v)) => {
            let hex: String = v.bytes().map(|b| format!("{b:02x}")).collect();
            format!("\"{}\"", &hex[..hex.len().min(32)])
        }
        None => format!("\"{:016x}{:016x}\"", len, rand::random::<u64>()),
    }
}

/// `Mon, 30 Nov 2026 03:18:48 GMT`.
pub(super) fn http_date_rfc1123(ms: i64) -> String {
    let d = http_date_ms(ms); // `Mon Nov 30 03:18:48 UTC 2026`
    let p: Vec<&str> = d.split(' ').collect();
    format!("{}, {} {} {} {} GMT", p[0], p[2], p[1], p[5], p[3])
}
