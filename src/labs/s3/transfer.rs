//! Moving one object: PUT (whole, or multipart above the threshold) and GET (whole, or ranged
//! parts at once), timed to the first byte and to the end, as the AWS SDK's transfer manager does.

use super::*;

/// How big objects move: the transfer manager's settings (boto3's defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct Transfer {
    pub threshold: u64,
    pub part_size: u64,
    pub concurrency: usize,
}

impl Default for Transfer {
    fn default() -> Self {
        Transfer {
            threshold: 8 * 1024 * 1024,
            part_size: 8 * 1024 * 1024,
            concurrency: 10,
        }
    }
}

/// A transfer that failed: its error code (counted per class and operation) and one line for
/// the screen and the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Failed {
    pub code: String,
    pub line: String,
}

impl Failed {
    fn other(line: impl Into<String>) -> Failed {
        Failed {
            code: "Other".into(),
            line: line.into(),
        }
    }
}

fn sdk_failed<E>(
    e: &aws_smithy_runtime_api::client::result::SdkError<E, aws_smithy_runtime_api::http::Response>,
) -> Failed
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
{
    Failed {
        code: error_code(e),
        line: crate::aws::error_line(e),
    }
}

/// A payload of `n` bytes, the same pattern every time (cheap to clone: one buffer).
pub fn payload(n: u64) -> Bytes {
    Bytes::from((0..n).map(|i| (i % 251) as u8).collect::<Vec<u8>>())
}

/// Uploads one object: a single PUT below the threshold, else a multipart upload with concurrent
/// parts. Returns the whole time (a PUT's answer comes only after its body, so its first byte is
/// its last).
pub async fn upload(
    client: &Client,
    bucket: &str,
    key: &str,
    data: &Bytes,
    t: &Transfer,
) -> Result<Duration, Failed> {
    let started = Instant::now();
    if (data.len() as u64) < t.threshold {
        client
            .put_object()
            .bucket(bucket)
            .key(key)
            .body(ByteStream::from(data.clone()))
            .send()
            .await
            .map_err(|e| sdk_failed(&e))?;
        return Ok(started.elapsed());
    }
    let id = client
        .create_multipart_upload()
        .bucket(bucket)
        .key(key)
        .send()
        .await
        .map_err(|e| sdk_failed(&e))?
        .upload_id
        .ok_or_else(|| Failed::other("CreateMultipartUpload answered no upload id"))?;
    let parts = data.len().div_ceil(t.part_size as usize);
    let mut set = JoinSet::new();
    let mut done: Vec<CompletedPart> = Vec::with_capacity(parts);
    let mut next = 0usize;
    while next < parts || !set.is_empty() {
        while next < parts && set.len() < t.concurrency {
            let (c, b, k, id) = (
                client.clone(),
                bucket.to_string(),
                key.to_string(),
                id.clone(),
            );
            let lo = next * t.part_size as usize;
            let chunk = data.slice(lo..(lo + t.part_size as usize).min(data.len()));
            let n = next as i32 + 1;
            set.spawn(async move {
                let out = c
                    .upload_part()
                    .bucket(b)
                    .key(k)
                    .upload_id(id)
                    .part_number(n)
                    .body(ByteStream::from(chunk))
                    .send()
                    .await;
                (n, out.map_err(|e| sdk_failed(&e)))
            });
            next += 1;
        }
        if let Some(joined) = set.join_next().await {
            let (n, out) = joined.map_err(|e| Failed::other(e.to_string()))?;
            let out = out?;
            done.push(
                CompletedPart::builder()
                    .part_number(n)
                    .set_e_tag(out.e_tag)
                    .set_checksum_crc32(out.checksum_crc32)
                    .build(),
            );
        }
    }
    done.sort_by_key(|p| p.part_number());
    client
        .complete_multipart_upload()
        .bucket(bucket)
        .key(key)
        .upload_id(id)
        .multipart_upload(
            CompletedMultipartUpload::builder()
                .set_parts(Some(done))
                .build(),
        )
        .send()
        .await
        .map_err(|e| sdk_failed(&e))?;
    Ok(started.elapsed())
}

/// Downloads one object of `size`: a single GET below the threshold, else concurrent ranged GETs.
/// Returns (time to first byte of the first answer, whole time).
pub async fn download(
    client: &Client,
    bucket: &str,
    key: &str,
    size: u64,
    t: &Transfer,
) -> Result<(Duration, Duration, u64), Failed> {
    let started = Instant::now();
    if size < t.threshold {
        let out = client
            .get_object()
            .bucket(bucket)
            .key(key)
            .send()
            .await
            .map_err(|e| sdk_failed(&e))?;
        let fb = started.elapsed();
        let n = drain(out.body).await?;
        return Ok((fb, started.elapsed(), n));
    }
    let ranges = size.div_ceil(t.part_size);
    let mut set = JoinSet::new();
    let mut next = 0u64;
    let mut got = 0u64;
    let mut first: Option<Duration> = None;
    while next < ranges || !set.is_empty() {
        while next < ranges && set.len() < t.concurrency {
            let (c, b, k) = (client.clone(), bucket.to_string(), key.to_string());
            let lo = next * t.part_size;
            let hi = (lo + t.part_size).min(size) - 1;
            set.spawn(async move {
                let s = Instant::now();
                let out = c
                    .get_object()
                    .bucket(b)
                    .key(k)
                    .range(format!("bytes={lo}-{hi}"))
                    .send()
                    .await
                    .map_err(|e| sdk_failed(&e))?;
                let fb = s.elapsed();
                Ok::<_, Failed>((fb, drain(out.body).await?))
            });
            next += 1;
        }
        if let Some(joined) = set.join_next().await {
            let (fb, n) = joined.map_err(|e| Failed::other(e.to_string()))??;
            first = Some(first.map_or(fb, |f| f.min(fb)));
            got += n;
        }
    }
    Ok((first.unwrap_or_default(), started.elapsed(), got))
}

async fn drain(mut body: ByteStream) -> Result<u64, Failed> {
    let mut n = 0u64;
    // One code for every cut body, so counts stay per cause.
    while let Some(chunk) = body.try_next().await.map_err(|e| Failed {
        code: "BodyBrokeOff".into(),
        line: format!("the body broke off: {}", crate::aws::error_chain(&e)),
    })? {
        n += chunk.len() as u64;
    }
    Ok(n)
}
