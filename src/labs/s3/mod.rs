//! The S3 lab: PUT and GET through aws-sdk-s3 against an S3 Standard bucket and an S3 Express One
//! Zone directory bucket. Live, it loops PUT-then-GET of one payload size with a concurrency, the
//! storage class and payload switchable while it runs. Headless, it runs the seed's matrix: sets of
//! equal total size uploaded then downloaded, one object after another, big objects in concurrent
//! 8 MiB parts and ranges as the seed's SDK did.

pub mod config;
pub mod snapshot;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use aws_sdk_s3::Client;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
use bytes::Bytes;
use parking_lot::Mutex;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::aws::error_code;
use crate::emulator::s3::Class;
use crate::metrics::{SdkStats, Series, Summary};

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

/// One side of the lab: what a PUT or a GET measured, per storage class.
#[derive(Default)]
pub struct OpMetrics {
    /// Request sent -> answer's first byte (for a PUT the answer follows the whole body).
    pub first_byte: Series,
    /// Request sent -> last byte.
    pub total: Series,
    pub requests: u64,
    pub bytes: u64,
    /// Seconds spent moving those bytes, for MB/s.
    pub busy_secs: f64,
    pub errors: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OpSnapshot {
    pub class: Class,
    pub op: String,
    pub first_byte: Summary,
    pub total: Summary,
    pub requests: u64,
    pub bytes: u64,
    pub mb_per_sec: f64,
    pub slow_downs: u64,
    pub errors: u64,
}

pub struct S3Shared {
    pub start: Instant,
    pub class: Mutex<Class>,
    pub payload: Mutex<u64>,
    /// (class, "PUT" | "GET") -> metrics.
    pub ops: Mutex<BTreeMap<(Class, &'static str), OpMetrics>>,
    pub sdk: Arc<SdkStats>,
}

impl S3Shared {
    pub fn new(class: Class, payload: u64) -> Arc<S3Shared> {
        Arc::new(S3Shared {
            start: Instant::now(),
            class: Mutex::new(class),
            payload: Mutex::new(payload),
            ops: Mutex::new(BTreeMap::new()),
            sdk: Arc::new(SdkStats::default()),
        })
    }

    fn record(
        &self,
        class: Class,
        op: &'static str,
        first_byte: Duration,
        total: Duration,
        bytes: u64,
    ) {
        let sec = self.start.elapsed().as_secs();
        let mut ops = self.ops.lock();
        let m = ops.entry((class, op)).or_default();
        m.first_byte.record(first_byte.as_micros() as u64, sec);
        m.total.record(total.as_micros() as u64, sec);
        m.requests += 1;
        m.bytes += bytes;
        m.busy_secs += total.as_secs_f64();
    }

    fn failed(&self, class: Class, op: &'static str, code: &str) {
        *self
            .ops
            .lock()
            .entry((class, op))
            .or_default()
            .errors
            .entry(code.to_string())
            .or_default() += 1;
    }

    pub fn snapshot(&self) -> Vec<OpSnapshot> {
        self.ops
            .lock()
            .iter()
            .map(|((class, op), m)| OpSnapshot {
                class: *class,
                op: op.to_string(),
                first_byte: m.first_byte.summary(),
                total: m.total.summary(),
                requests: m.requests,
                bytes: m.bytes,
                mb_per_sec: if m.busy_secs > 0.0 {
                    m.bytes as f64 / m.busy_secs / 1e6
                } else {
                    0.0
                },
                slow_downs: m.errors.get("SlowDown").copied().unwrap_or(0),
                errors: m.errors.values().sum(),
            })
            .collect()
    }

    pub fn reset(&self) {
        self.ops.lock().clear();
        self.sdk.reset();
    }
}

/// The two buckets a run uses.
#[derive(Clone, Debug)]
pub struct Buckets {
    pub standard: String,
    pub express: String,
}

impl Buckets {
    pub fn of(&self, class: Class) -> &str {
        match class {
            Class::Standard => &self.standard,
            Class::ExpressOneZone => &self.express,
        }
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
) -> Result<Duration, String> {
    let started = Instant::now();
    if (data.len() as u64) < t.threshold {
        client
            .put_object()
            .bucket(bucket)
            .key(key)
            .body(ByteStream::from(data.clone()))
            .send()
            .await
            .map_err(|e| error_code(&e))?;
        return Ok(started.elapsed());
    }
    let id = client
        .create_multipart_upload()
        .bucket(bucket)
        .key(key)
        .send()
        .await
        .map_err(|e| error_code(&e))?
        .upload_id
        .ok_or("CreateMultipartUpload answered no upload id")?;
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
                (n, out.map_err(|e| error_code(&e)))
            });
            next += 1;
        }
        if let Some(joined) = set.join_next().await {
            let (n, out) = joined.map_err(|e| e.to_string())?;
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
        .map_err(|e| error_code(&e))?;
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
) -> Result<(Duration, Duration, u64), String> {
    let started = Instant::now();
    if size < t.threshold {
        let out = client
            .get_object()
            .bucket(bucket)
            .key(key)
            .send()
            .await
            .map_err(|e| error_code(&e))?;
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
                    .map_err(|e| error_code(&e))?;
                let fb = s.elapsed();
                Ok::<_, String>((fb, drain(out.body).await?))
            });
            next += 1;
        }
        if let Some(joined) = set.join_next().await {
            let (fb, n) = joined.map_err(|e| e.to_string())??;
            first = Some(first.map_or(fb, |f| f.min(fb)));
            got += n;
        }
    }
    Ok((first.unwrap_or_default(), started.elapsed(), got))
}

async fn drain(mut body: ByteStream) -> Result<u64, String> {
    let mut n = 0u64;
    while let Some(chunk) = body
        .try_next()
        .await
        .map_err(|e| format!("the body broke off: {e}"))?
    {
        n += chunk.len() as u64;
    }
    Ok(n)
}

/// The live loop: PUT then GET of the current payload size into the current class's bucket,
/// `concurrency` loops at once, until cancelled.
pub async fn live(
    shared: Arc<S3Shared>,
    client: Client,
    buckets: Buckets,
    concurrency: usize,
    t: Transfer,
    cancel: CancellationToken,
) {
    let mut loops = JoinSet::new();
    for worker in 0..concurrency.max(1) {
        let (shared, client, buckets, t, cancel) = (
            shared.clone(),
            client.clone(),
            buckets.clone(),
            t.clone(),
            cancel.clone(),
        );
        loops.spawn(async move {
            let mut data = payload(*shared.payload.lock());
            let mut n = 0u64;
            while !cancel.is_cancelled() {
                let size = *shared.payload.lock();
                if data.len() as u64 != size {
                    data = payload(size);
                }
                let class = *shared.class.lock();
                let bucket = buckets.of(class).to_string();
                let key = format!("latlab/live/{worker}/{}", n % 16);
                n += 1;
                let put = tokio::select! {
                    _ = cancel.cancelled() => break,
                    r = upload(&client, &bucket, &key, &data, &t) => r,
                };
                match put {
                    Ok(total) => shared.record(class, "PUT", total, total, size),
                    Err(code) => {
                        shared.failed(class, "PUT", &code);
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        continue;
                    }
                }
                let get = tokio::select! {
                    _ = cancel.cancelled() => break,
                    r = download(&client, &bucket, &key, size, &t) => r,
                };
                match get {
                    Ok((fb, total, bytes)) => shared.record(class, "GET", fb, total, bytes),
                    Err(code) => {
                        shared.failed(class, "GET", &code);
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }
        });
    }
    while loops.join_next().await.is_some() {}
}

/// Creates the buckets a run needs on an endpoint latlab owns (the emulator) and returns them.
pub async fn create_buckets(client: &Client, run_id: &str) -> anyhow::Result<Buckets> {
    let b = Buckets {
        standard: format!("latlab-standard-{run_id}"),
        express: format!("latlab-express-{run_id}--use1-az4--x-s3"),
    };
    for name in [&b.standard, &b.express] {
        client
            .create_bucket()
            .bucket(name)
            .send()
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot create bucket {name}: {}",
                    crate::aws::error_line(&e)
                )
            })?;
    }
    Ok(b)
}

/// Deletes every object under `latlab/` in a bucket (and nothing else).
pub async fn clean(client: &Client, bucket: &str) -> anyhow::Result<u64> {
    let mut removed = 0;
    let mut token: Option<String> = None;
    loop {
        let page = client
            .list_objects_v2()
            .bucket(bucket)
            .prefix("latlab/")
            .set_continuation_token(token.clone())
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("cannot list {bucket}: {}", crate::aws::error_line(&e)))
            .context("cleaning up")?;
        for o in page.contents() {
            if let Some(k) = o.key() {
                client
                    .delete_object()
                    .bucket(bucket)
                    .key(k)
                    .send()
                    .await
                    .map_err(|e| {
                        anyhow::anyhow!("cannot delete {k}: {}", crate::aws::error_line(&e))
                    })?;
                removed += 1;
            }
        }
        token = page.next_continuation_token().map(String::from);
        if token.is_none() {
            return Ok(removed);
        }
    }
}

/// One set of the seed's matrix: `objects` objects of `size` bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub objects: u64,
    pub size: u64,
}

impl Case {
    pub fn label(&self) -> String {
        format!(
            "{} x {}",
            crate::units::thousands(self.objects),
            crate::units::format_bytes(self.size)
        )
    }
}

/// Seconds to move a whole set, one object after another, averaged over the repetitions.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixRow {
    pub case: Case,
    pub upload_express_s: f64,
    pub upload_standard_s: f64,
    pub download_express_s: f64,
    pub download_standard_s: f64,
    pub repetitions: u32,
}

/// Runs the matrix: per case and class, upload every object, then download every object, then
/// delete them; `progress` hears what runs.
#[allow(clippy::too_many_arguments)]
pub async fn run_matrix(
    shared: &S3Shared,
    client: &Client,
    buckets: &Buckets,
    cases: &[Case],
    repetitions: u32,
    t: &Transfer,
    cancel: &CancellationToken,
    progress: &(dyn Fn(String) + Send + Sync),
) -> anyhow::Result<Vec<MatrixRow>> {
    let mut rows = Vec::new();
    for case in cases {
        let data = payload(case.size);
        let mut totals: BTreeMap<(Class, &str), f64> = BTreeMap::new();
        for rep in 0..repetitions {
            for class in [Class::ExpressOneZone, Class::Standard] {
                let bucket = buckets.of(class);
                progress(format!(
                    "{} on {}: upload, repetition {} of {repetitions}",
                    case.label(),
                    class.storage_class(),
                    rep + 1
                ));
                let started = Instant::now();
                for i in 0..case.objects {
                    if cancel.is_cancelled() {
                        anyhow::bail!("stopped");
                    }
                    let key = format!("latlab/matrix/{i}");
                    match upload(client, bucket, &key, &data, t).await {
                        Ok(d) => shared.record(class, "PUT", d, d, case.size),
                        Err(code) => {
                            shared.failed(class, "PUT", &code);
                            anyhow::bail!("uploading {key} to {bucket} failed: {code}");
                        }
                    }
                }
                *totals.entry((class, "up")).or_default() += started.elapsed().as_secs_f64();
                progress(format!(
                    "{} on {}: download, repetition {} of {repetitions}",
                    case.label(),
                    class.storage_class(),
                    rep + 1
                ));
                let started = Instant::now();
                for i in 0..case.objects {
                    if cancel.is_cancelled() {
                        anyhow::bail!("stopped");
                    }
                    let key = format!("latlab/matrix/{i}");
                    match download(client, bucket, &key, case.size, t).await {
                        Ok((fb, d, n)) => shared.record(class, "GET", fb, d, n),
                        Err(code) => {
                            shared.failed(class, "GET", &code);
                            anyhow::bail!("downloading {key} from {bucket} failed: {code}");
                        }
                    }
                }
                *totals.entry((class, "down")).or_default() += started.elapsed().as_secs_f64();
                clean(client, bucket).await?;
            }
        }
        let avg = |c, d| totals.get(&(c, d)).copied().unwrap_or(0.0) / repetitions.max(1) as f64;
        rows.push(MatrixRow {
            case: case.clone(),
            upload_express_s: avg(Class::ExpressOneZone, "up"),
            upload_standard_s: avg(Class::Standard, "up"),
            download_express_s: avg(Class::ExpressOneZone, "down"),
            download_standard_s: avg(Class::Standard, "down"),
            repetitions,
        });
    }
    Ok(rows)
}

/// The S3 lab while it runs.
pub struct S3Lab {
    pub shared: Arc<S3Shared>,
    pub client: Client,
    pub buckets: Buckets,
    pub scenario: crate::labs::s3::config::S3Scenario,
    /// Buckets latlab created (and deletes at the end).
    created: bool,
    cancel: CancellationToken,
    live: Mutex<Option<tokio::task::JoinHandle<()>>>,
    pub matrix: Mutex<Option<Vec<MatrixRow>>>,
}

impl S3Lab {
    /// The last `window` seconds of each (class, PUT/GET) total time, oldest first, for the
    /// screen's sparklines.
    pub fn history(&self, window: usize) -> Vec<(Class, String, Vec<crate::metrics::Point>)> {
        let now = self.shared.start.elapsed().as_secs();
        self.shared
            .ops
            .lock()
            .iter()
            .map(|((class, op), m)| (*class, op.to_string(), m.total.points(now, window)))
            .collect()
    }

    /// The lab's figures now. `create_sessions`: the emulator's count of CreateSession calls,
    /// when the run measures the embedded emulator.
    pub fn snapshot(&self, create_sessions: Option<u64>) -> snapshot::S3Snapshot {
        let ops = self.shared.snapshot();
        let sdk = self.shared.sdk.snapshot();
        snapshot::S3Snapshot {
            class: *self.shared.class.lock(),
            payload_bytes: *self.shared.payload.lock(),
            concurrency: self.scenario.concurrency,
            standard_bucket: self.buckets.standard.clone(),
            express_bucket: self.buckets.express.clone(),
            ops,
            create_sessions,
            sdk,
            matrix: self.matrix.lock().clone(),
        }
    }

    /// Finds or creates the buckets; `given` are the user's (standard, express) on other endpoints.
    pub async fn start(
        client: Client,
        scenario: &crate::labs::s3::config::S3Scenario,
        run_id: &str,
        given: Option<Buckets>,
        sdk: Arc<SdkStats>,
    ) -> anyhow::Result<S3Lab> {
        let (buckets, created) = match given {
            Some(b) => {
                for name in [&b.standard, &b.express] {
                    client
                        .head_bucket()
                        .bucket(name)
                        .send()
                        .await
                        .map_err(|e| {
                            anyhow::anyhow!(
                                "bucket {name} is not reachable: {}",
                                crate::aws::error_line(&e)
                            )
                        })?;
                }
                (b, false)
            }
            None => (create_buckets(&client, run_id).await?, true),
        };
        let shared = Arc::new(S3Shared {
            start: Instant::now(),
            class: Mutex::new(scenario.class),
            payload: Mutex::new(scenario.payload),
            ops: Mutex::new(BTreeMap::new()),
            sdk,
        });
        Ok(S3Lab {
            shared,
            client,
            buckets,
            scenario: scenario.clone(),
            created,
            cancel: CancellationToken::new(),
            live: Mutex::new(None),
            matrix: Mutex::new(None),
        })
    }

    /// Starts the live PUT/GET loop.
    pub fn start_live(&self) {
        let task = tokio::spawn(live(
            self.shared.clone(),
            self.client.clone(),
            self.buckets.clone(),
            self.scenario.concurrency,
            self.scenario.transfer.clone(),
            self.cancel.clone(),
        ));
        *self.live.lock() = Some(task);
    }

    /// Runs the matrix (or its quick form) to the end, or until stopped.
    pub async fn run_matrix(
        &self,
        quick: bool,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> anyhow::Result<()> {
        let cases = if quick && !self.scenario.quick.is_empty() {
            &self.scenario.quick
        } else {
            &self.scenario.matrix
        };
        let reps = if quick { 1 } else { self.scenario.repetitions };
        let rows = run_matrix(
            &self.shared,
            &self.client,
            &self.buckets,
            cases,
            reps,
            &self.scenario.transfer,
            &self.cancel,
            progress,
        )
        .await?;
        *self.matrix.lock() = Some(rows);
        Ok(())
    }

    pub fn toggle_class(&self) -> Class {
        let mut c = self.shared.class.lock();
        *c = match *c {
            Class::Standard => Class::ExpressOneZone,
            Class::ExpressOneZone => Class::Standard,
        };
        *c
    }

    pub fn set_payload(&self, bytes: u64) {
        *self.shared.payload.lock() = bytes;
    }

    /// Applies one of the lab's commands; returns the line the screen confirms it with.
    pub fn apply(&self, cmd: Command) -> String {
        match cmd {
            Command::ToggleClass => {
                let c = self.toggle_class();
                format!("S3 storage class {}", c.storage_class())
            }
            Command::PayloadUp | Command::PayloadDown => {
                let current = *self.shared.payload.lock();
                let next = crate::labs::step(PAYLOAD_STEPS, current, cmd == Command::PayloadUp);
                self.set_payload(next);
                format!("S3 payload size {}", crate::units::format_bytes(next))
            }
        }
    }

    pub async fn stop(&self) {
        self.cancel.cancel();
        let task = self.live.lock().take();
        if let Some(t) = task {
            let _ = tokio::time::timeout(Duration::from_secs(10), t).await;
        }
    }

    /// Deletes latlab's objects, and the buckets if latlab created them.
    pub async fn cleanup(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for name in [&self.buckets.standard, &self.buckets.express] {
            if let Err(e) = clean(&self.client, name).await {
                problems.push(format!("{e:#}"));
                continue;
            }
            if self.created
                && let Err(e) = self.client.delete_bucket().bucket(name).send().await
            {
                problems.push(format!(
                    "could not delete bucket {name}: {}",
                    crate::aws::error_line(&e)
                ));
            }
        }
        problems
    }
}

/// What the S3 lab's keys ask of it while it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Express One Zone <-> Standard.
    ToggleClass,
    PayloadUp,
    PayloadDown,
}

/// Payload sizes the `[` and `]` keys step through on the S3 tab.
pub const PAYLOAD_STEPS: &[u64] = &[1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];
