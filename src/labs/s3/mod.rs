//! The S3 lab: PUT and GET through aws-sdk-s3 against an S3 Standard bucket and an S3 Express One
//! Zone directory bucket. Live, it loops PUT-then-GET of one payload size with a concurrency, the
//! storage class and payload switchable while it runs. Headless, it runs the seed's matrix: sets of
//! equal total size uploaded then downloaded, one object after another, big objects in concurrent
//! 8 MiB parts and ranges as the seed's SDK did.

mod buckets;
mod calibrate;
pub mod cleanup;
/// Its SDK clients, built as every service's are.
pub mod client;
pub mod config;
pub mod cost;
mod doctor;
pub mod json;
pub mod keys;
mod lab;
mod matrix;
mod metrics;
pub mod plan;
pub mod report;
mod sample;
pub mod snapshot;
pub mod target;
mod transfer;
pub mod view;

pub use buckets::{Buckets, clean, create_buckets};
pub use matrix::{Case, MatrixRow, run_matrix};
pub use transfer::{Failed, Transfer, download, payload, upload};

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
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
use crate::metrics::{SdkStats, Series, Summary};
use latlab_core::services::s3::Class;

/// Every object latlab writes is under this prefix, then the run's id.
pub const PREFIX: &str = "latlab/";

/// Where the run `run_id` puts its objects: `latlab/RUN_ID/`. Runs on several hosts sharing a
/// bucket write apart, and each deletes only its own at the end.
pub fn object_prefix(run_id: &str) -> String {
    format!("{PREFIX}{run_id}/")
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
    pub last_error: Option<String>,
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
    /// Requests per second over the last 10 whole seconds (fewer at the start): the rate the
    /// configuration on screen runs at, which its cost is priced at.
    pub per_sec: f64,
    pub slow_downs: u64,
    pub errors: u64,
    /// The last request that failed, as one line.
    pub last_error: Option<String>,
}

pub struct S3Shared {
    pub start: Instant,
    /// Where this run's objects go in both buckets: `latlab/RUN_ID/` (see [`object_prefix`]).
    pub prefix: String,
    pub class: Mutex<Class>,
    pub payload: Mutex<u64>,
    /// (class, "PUT" | "GET") -> metrics.
    pub ops: Mutex<BTreeMap<(Class, &'static str), OpMetrics>>,
    pub sdk: Arc<SdkStats>,
    /// PUT-then-GET loops the live loop runs at once (the `C` key changes it).
    pub concurrency: std::sync::atomic::AtomicUsize,
}

const SCENARIOS: &[(&str, &str)] = &[
    ("seed-s3", include_str!("scenarios/seed-s3.toml")),
    ("s3-demo", include_str!("scenarios/s3-demo.toml")),
];

impl S3Shared {
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

    fn failed(&self, class: Class, op: &'static str, f: &Failed) {
        let mut ops = self.ops.lock();
        let m = ops.entry((class, op)).or_default();
        *m.errors.entry(f.code.clone()).or_default() += 1;
        m.last_error = Some(latlab_core::units::one_line(&f.line));
    }

    pub fn snapshot(&self) -> Vec<OpSnapshot> {
        let elapsed = self.start.elapsed().as_secs();
        // The last whole seconds, at most ten.
        let secs = elapsed.clamp(1, 10);
        let last = elapsed.saturating_sub(1);
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
                per_sec: m
                    .total
                    .points(last, secs as usize)
                    .iter()
                    .map(|p| u64::from(p.count))
                    .sum::<u64>() as f64
                    / secs as f64,
                slow_downs: m.errors.get("SlowDown").copied().unwrap_or(0),
                errors: m.errors.values().sum(),
                last_error: m.last_error.clone(),
            })
            .collect()
    }

    pub fn reset(&self) {
        self.ops.lock().clear();
        self.sdk.reset();
    }
}

/// Why S3 Express One Zone is not measured on another endpoint when no directory bucket is
/// named.
pub const NO_EXPRESS_BUCKET: &str =
    "no --s3-express-bucket named (a directory bucket, NAME--AZID--x-s3)";

/// Keys each live loop writes over and over: the objects the lab keeps stored per loop.
pub const LIVE_KEYS_PER_LOOP: u64 = 16;

/// The live loop: PUT then GET of the current payload size into the current class's bucket,
/// as many loops at once as `shared.concurrency` says now, until cancelled. A loop above a
/// lowered concurrency leaves after its PUT and GET; a raised one starts more.
pub async fn live(
    shared: Arc<S3Shared>,
    client: Client,
    buckets: Buckets,
    t: Transfer,
    cancel: CancellationToken,
) {
    let mut loops = JoinSet::new();
    let mut started = 0usize;
    while !cancel.is_cancelled() {
        let want = shared.concurrency.load(Ordering::Relaxed).max(1);
        started = started.min(want);
        while started < want {
            spawn_loop(&mut loops, started, &shared, &client, &buckets, &t, &cancel);
            started += 1;
        }
        tokio::select! {
            _ = cancel.cancelled() => {}
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
        while loops.try_join_next().is_some() {}
    }
    while loops.join_next().await.is_some() {}
}

/// One PUT-then-GET loop, number `worker` (its keys are its own).
fn spawn_loop(
    loops: &mut JoinSet<()>,
    worker: usize,
    shared: &Arc<S3Shared>,
    client: &Client,
    buckets: &Buckets,
    t: &Transfer,
    cancel: &CancellationToken,
) {
    {
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
            while !cancel.is_cancelled() && worker < shared.concurrency.load(Ordering::Relaxed) {
                let size = *shared.payload.lock();
                if data.len() as u64 != size {
                    data = payload(size);
                }
                let class = *shared.class.lock();
                let bucket = buckets.of(class).to_string();
                let key = format!("{}live/{worker}/{}", shared.prefix, n % LIVE_KEYS_PER_LOOP);
                n += 1;
                let put = tokio::select! {
                    _ = cancel.cancelled() => break,
                    r = upload(&client, &bucket, &key, &data, &t) => r,
                };
                match put {
                    Ok(total) => shared.record(class, "PUT", total, total, size),
                    Err(f) => {
                        shared.failed(class, "PUT", &f);
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
                    Err(f) => {
                        shared.failed(class, "GET", &f);
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }
        });
    }
}

/// Its last seconds: per (class, PUT/GET), the total time.
pub type History = Vec<(Class, String, Vec<crate::metrics::Point>)>;

impl crate::labs::Lab for S3Lab {
    const FACTS: crate::labs::Facts = crate::labs::Facts {
        service: Some(latlab_core::services::Service::S3),
        stopping: "the PUTs and GETs in flight finish",
        overview_weight: 2,
        colours: view::COLOURS,
        compared: ("S3: total time per request", "class and op"),
        subject_parts: 2,
        quantities: &["total"],
        prices: cost::PRICES,
        ..crate::labs::Facts::new(crate::labs::LabKind::S3, "S3", "s3-demo", SCENARIOS)
    };

    type File = config::S3File;
    type Seed = config::S3Seed;
    type Json = json::S3;
    type Scenario = config::S3Scenario;
    type Command = Command;
    type Snapshot = snapshot::S3Snapshot;
    type History = History;
    type Target = target::S3Target;
}

impl crate::labs::LabCommand for Command {
    fn what(self) -> &'static str {
        match self {
            Command::ToggleClass => "switching the S3 storage class",
            Command::PayloadUp => "a larger S3 payload",
            Command::PayloadDown => "a smaller S3 payload",
            Command::Concurrency => "the next S3 concurrency",
        }
    }
}

/// The S3 lab while it runs.
pub struct S3Lab {
    pub shared: Arc<S3Shared>,
    pub client: Client,
    pub buckets: Buckets,
    pub scenario: crate::labs::s3::config::S3Scenario,
    /// Buckets latlab created (and deletes at the end).
    created: bool,
    /// Why S3 Express One Zone cannot be measured on this endpoint (it lacks what it needs).
    pub express_unsupported: Option<String>,
    cancel: CancellationToken,
    live: Mutex<Option<tokio::task::JoinHandle<()>>>,
    pub matrix: Mutex<Option<Vec<MatrixRow>>>,
    /// The embedded emulator, when the run measures it (its count of CreateSession calls).
    emulated: Option<Arc<dyn crate::labs::context::Emulated>>,
}

impl S3Lab {
    /// Finds or creates the buckets; `given` are the user's (standard, express) on other
    /// endpoints. `clock` is the run's start, which the lab's seconds count from.
    pub async fn open(
        client: Client,
        scenario: &crate::labs::s3::config::S3Scenario,
        run_id: &str,
        given: Option<Buckets>,
        sdk: Arc<SdkStats>,
        clock: Instant,
    ) -> anyhow::Result<S3Lab> {
        let (buckets, created, express_unsupported) = match given {
            Some(b) => {
                let mut express_unsupported = None;
                for name in [&b.standard, &b.express] {
                    if name.is_empty() {
                        express_unsupported = Some(NO_EXPRESS_BUCKET.to_string());
                        continue;
                    }
                    if let Err(e) = client.head_bucket().bucket(name).send().await {
                        if *name == b.express
                            && let Some(answered) = crate::aws::unsupported(&e)
                        {
                            express_unsupported = Some(buckets::lacking_line(&e, &answered));
                            continue;
                        }
                        anyhow::bail!(
                            "bucket {name} is not reachable: {}",
                            crate::aws::error_line(&e)
                        );
                    }
                }
                (b, false, express_unsupported)
            }
            None => {
                let (b, why) = create_buckets(&client, run_id).await?;
                (b, true, why)
            }
        };
        // Without Express, Standard is measured: the class the loop starts on is one it can.
        let class = if express_unsupported.is_some() {
            Class::Standard
        } else {
            scenario.class
        };
        let shared = Arc::new(S3Shared {
            start: clock,
            prefix: object_prefix(run_id),
            class: Mutex::new(class),
            payload: Mutex::new(scenario.payload),
            ops: Mutex::new(BTreeMap::new()),
            sdk,
            concurrency: std::sync::atomic::AtomicUsize::new(scenario.concurrency),
        });
        Ok(S3Lab {
            shared,
            client,
            buckets,
            scenario: scenario.clone(),
            created,
            express_unsupported,
            cancel: CancellationToken::new(),
            live: Mutex::new(None),
            matrix: Mutex::new(None),
            emulated: None,
        })
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
        if let Some(why) = &self.express_unsupported {
            anyhow::bail!(
                "the S3 matrix compares Express One Zone with Standard, and S3 Express One Zone is {why}"
            );
        }
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
        if self.express_unsupported.is_some() {
            return *c;
        }
        *c = match *c {
            Class::Standard => Class::ExpressOneZone,
            Class::ExpressOneZone => Class::Standard,
        };
        *c
    }

    pub fn set_payload(&self, bytes: u64) {
        *self.shared.payload.lock() = bytes;
    }
}

/// What the S3 lab's keys ask of it while it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Express One Zone <-> Standard.
    ToggleClass,
    PayloadUp,
    PayloadDown,
    /// The next of [`CONCURRENCY_STEPS`].
    Concurrency,
}

/// Requests in flight the `C` key cycles through.
pub const CONCURRENCY_STEPS: &[usize] = &[1, 4, 16, 64];

/// Payload sizes the `[` and `]` keys step through on the S3 tab.
pub const PAYLOAD_STEPS: &[u64] = &[1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];
