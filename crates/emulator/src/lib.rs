//! The local cloud: an HTTP server on 127.0.0.1 that speaks Kinesis (awsJson1_1), S3 (REST) and
//! SQS (awsJson1_0) so that the real AWS SDKs, boto3 and the aws CLI work against it unchanged,
//! enforcing the services' documented limits and adding the delays of a latency profile.
//!
//! `latlab emulate` runs it on its own; every other command embeds it on an ephemeral port.

pub mod faults;
pub mod kinesis;
pub mod limits;
pub mod profile;
pub mod s3;
pub mod sqs;
pub mod stats;
pub mod time;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context;
use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::service::service_fn;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use faults::{ConnReset, Faulty, Injector};
use kinesis::Kinesis;
use kinesis::error::ApiError;
use limits::Limits;
use profile::LatencyProfile;
use s3::S3;
use sqs::Sqs;
use stats::StatsSnapshot;

/// Every response body the emulator sends: whole documents and event streams alike.
pub type Body = BoxBody<Bytes, Infallible>;

/// The largest request body accepted for JSON operations: a 10 MiB PutRecords grows by a third
/// in base64, plus its JSON.
const MAX_JSON_BODY: usize = 16 * 1024 * 1024;

/// Where the stats document is served.
pub const STATS_PATH: &str = "/_latlab/stats";

/// How long a client may take to send a request's headers before its connection is closed.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections served at once; more wait in the listen backlog until one closes.
pub const MAX_CONNECTIONS: usize = 4096;

#[derive(Clone, Debug)]
pub struct EmulatorConfig {
    pub listen: SocketAddr,
    pub limits: Limits,
    pub profile: LatencyProfile,
    /// See [`HEADER_TIMEOUT`].
    pub header_timeout: Duration,
    /// See [`MAX_CONNECTIONS`].
    pub max_connections: usize,
    /// Kinesis and S3 operations to answer as an endpoint that lacks them does: HTTP 500 with an
    /// HTML page, no AWS error. For trying latlab against a partial endpoint.
    pub lacking: Vec<String>,
    /// Faults to inject, from the start (more can be added while it runs).
    pub faults: Vec<latlab_core::faults::FaultSpec>,
    /// Where the faults that fire are recorded (a run shares its log with the Redis lab's).
    pub fault_log: Arc<latlab_core::faults::FaultLog>,
}

impl Default for EmulatorConfig {
    fn default() -> Self {
        EmulatorConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            limits: Limits::default(),
            profile: LatencyProfile::zero(),
            header_timeout: HEADER_TIMEOUT,
            max_connections: MAX_CONNECTIONS,
            lacking: Vec::new(),
            faults: Vec::new(),
            fault_log: Arc::default(),
        }
    }
}

/// A running emulator. Dropping it stops the server and closes its connections.
pub struct Emulator {
    addr: SocketAddr,
    connections: Arc<Connections>,
    kinesis: Arc<Kinesis>,
    s3: Arc<S3>,
    sqs: Arc<Sqs>,
    injector: Arc<Injector>,
    profile_name: parking_lot::Mutex<String>,
    task: tokio::task::JoinHandle<()>,
}

/// The counts only the emulator sees, by key (`s3.create_sessions`: the CreateSession calls it
/// has answered), kept while the emulator runs.
#[derive(Clone)]
pub struct Counts {
    s3: Arc<S3>,
}

impl Counts {
    /// A count by its key; None for a key the emulator does not count.
    pub fn get(&self, key: &str) -> Option<u64> {
        match key {
            "s3.create_sessions" => Some(self.s3.stats().create_sessions),
            _ => None,
        }
    }
}

struct App {
    kinesis: Arc<Kinesis>,
    s3: Arc<S3>,
    sqs: Arc<Sqs>,
    lacking: Vec<String>,
    injector: Arc<Injector>,
}

/// The server's connections: a permit each (at most `max`), how many are open, and the most
/// open at once.
struct Connections {
    permits: Arc<Semaphore>,
    open: AtomicUsize,
    peak: AtomicUsize,
}

/// One open connection, counted while it lives.
struct Open(Arc<Connections>);

impl Open {
    fn new(c: &Arc<Connections>) -> Open {
        let now = c.open.fetch_add(1, Ordering::Relaxed) + 1;
        c.peak.fetch_max(now, Ordering::Relaxed);
        Open(c.clone())
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Emulator {
    /// Binds the listen address and starts serving on the current tokio runtime.
    pub async fn start(config: EmulatorConfig) -> anyhow::Result<Emulator> {
        let listener = TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("cannot listen on {}", config.listen))?;
        let addr = listener.local_addr()?;
        let kinesis = Arc::new(Kinesis::new(config.limits.kinesis, config.profile.kinesis));
        let s3 = Arc::new(S3::new(config.limits.s3, config.profile.s3));
        let sqs = Arc::new(Sqs::new(config.limits.sqs, config.profile.sqs));
        for op in &config.lacking {
            if kinesis::Op::parse(op).is_none() && s3::Op::parse(op).is_none() {
                anyhow::bail!(
                    "--lacking {op}: not a Kinesis operation the emulator answers; valid: {}; or an S3 operation: {}",
                    kinesis::Op::NAMES.join(", "),
                    s3::Op::NAMES.join(", ")
                );
            }
        }
        *s3.lacking.write() = config
            .lacking
            .iter()
            .filter(|op| s3::Op::parse(op).is_some())
            .cloned()
            .collect();
        let expire = {
            let kinesis = Arc::downgrade(&kinesis);
            Box::new(move || {
                if let Some(k) = kinesis.upgrade() {
                    k.expire_iterators();
                }
            })
        };
        let injector = Arc::new(Injector::new(config.fault_log.clone(), expire));
        for spec in &config.faults {
            injector.add(spec.clone())?;
        }
        let app = Arc::new(App {
            kinesis: kinesis.clone(),
            s3: s3.clone(),
            sqs: sqs.clone(),
            lacking: config.lacking.clone(),
            injector: injector.clone(),
        });
        let max = config.max_connections.max(1);
        let connections = Arc::new(Connections {
            permits: Arc::new(Semaphore::new(max)),
            open: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        });
        let task = tokio::spawn(serve(
            listener,
            app,
            connections.clone(),
            config.header_timeout,
        ));
        Ok(Emulator {
            addr,
            connections,
            kinesis,
            s3,
            sqs,
            injector,
            profile_name: parking_lot::Mutex::new(config.profile.name),
            task,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint URL to give an SDK: an IP literal, never `localhost` (S3 Express would turn
    /// `localhost` into `bucket.localhost`).
    pub fn endpoint_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn profile_name(&self) -> String {
        self.profile_name.lock().clone()
    }

    /// Applies another latency profile to Kinesis and S3 from the next request on (requests in
    /// flight finish under the old one).
    pub fn set_profile(&self, profile: &LatencyProfile) {
        self.kinesis.set_profile(profile.kinesis.clone());
        self.s3.set_profile(profile.s3.clone());
        self.sqs.set_profile(profile.sqs.clone());
        *self.profile_name.lock() = profile.name.clone();
    }

    pub fn kinesis(&self) -> &Arc<Kinesis> {
        &self.kinesis
    }

    /// A handle on the counts only the emulator sees, by key, for the labs measuring it.
    pub fn counts(&self) -> Counts {
        Counts {
            s3: self.s3.clone(),
        }
    }

    pub fn s3(&self) -> &Arc<S3> {
        &self.s3
    }

    pub fn sqs(&self) -> &Arc<Sqs> {
        &self.sqs
    }

    /// The faults set on it, and the log of those that fired.
    pub fn faults(&self) -> &Arc<Injector> {
        &self.injector
    }

    /// Moves the emulated services' clock forward, as if `by` had passed: iterators age,
    /// subscriptions and S3 Express sessions run out, records pass their retention, rate limits
    /// refill. For tests of time-based limits at their documented values.
    pub fn advance_clock(&self, by: std::time::Duration) {
        self.kinesis.clock.advance(by);
        self.s3.clock.advance(by);
        self.sqs.clock.advance(by);
    }

    /// Stops the services' clock following real time: from then on only
    /// [`Emulator::advance_clock`] moves it. For tests whose margins are shorter than a busy
    /// machine's pauses.
    pub fn freeze_clock(&self) {
        self.kinesis.clock.freeze();
        self.s3.clock.freeze();
        self.sqs.clock.freeze();
    }

    /// Connections open now, and the most that were open at once.
    pub fn connections(&self) -> (usize, usize) {
        (
            self.connections.open.load(Ordering::Relaxed),
            self.connections.peak.load(Ordering::Relaxed),
        )
    }

    /// Calls and throttles per shard and API so far.
    pub fn stats(&self) -> StatsSnapshot {
        self.kinesis.stats.snapshot()
    }

    /// Serves until the server task ends (it runs until the process does).
    pub async fn wait(mut self) -> anyhow::Result<()> {
        (&mut self.task)
            .await
            .context("the emulator's server task failed")
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Accepts connections, at most as many at once as `connections` has permits (the rest wait in
/// the listen backlog), and serves each over HTTP/1.1 (`crate::serve`). A client that has not
/// sent a request's headers within `header_timeout` is disconnected; one that half-closes after
/// its request still gets the answer: every request read whole is answered, an event stream
/// until it ends, then the connection closes (without it, hyper drops the connection at the read
/// side's end while an answer is still delayed by the latency profile).
async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    connections: Arc<Connections>,
    header_timeout: Duration,
) {
    let serve = latlab_core::http::Serve {
        half_close: true,
        permits: connections.permits.clone(),
        ..latlab_core::http::Serve::new("emulator", 1, header_timeout)
    };
    serve
        .run(listener, |socket, _peer| {
            let open = Open::new(&connections);
            let _ = socket.set_nodelay(true);
            let conn = Arc::new(ConnReset::of(socket));
            let app = app.clone();
            let service = service_fn(move |req| route(app.clone(), conn.clone(), req));
            (service, open)
        })
        .await
}

async fn route(
    app: Arc<App>,
    conn: Arc<ConnReset>,
    req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    if req.method() == Method::GET && req.uri().path() == STATS_PATH {
        let mut doc = serde_json::to_value(app.kinesis.stats.snapshot()).unwrap_or_default();
        doc["s3"] = serde_json::to_value(app.s3.stats()).unwrap_or_default();
        doc["sqs"] = serde_json::to_value(app.sqs.stats()).unwrap_or_default();
        let body = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        return Ok(respond(
            StatusCode::OK,
            "application/json",
            Bytes::from(body),
        ));
    }
    // Kinesis names its operation in a header; everything else is S3's path-style REST.
    let target = req
        .headers()
        .get("x-amz-target")
        .map(|v| v.to_str().unwrap_or("").to_string());
    match target {
        Some(target) if target.starts_with(latlab_core::services::sqs::TARGET_PREFIX) => {
            Ok(sqs::serve(&app.sqs, &app.injector, &conn, target, req).await)
        }
        Some(target) => Ok(kinesis_request(&app, &conn, target, req).await),
        None => Ok(app.s3.handle(req, &app.injector, &conn).await),
    }
}

async fn kinesis_request(
    app: &App,
    conn: &Arc<ConnReset>,
    target: String,
    req: Request<Incoming>,
) -> Response<Body> {
    let region = signing_region(req.headers()).unwrap_or_else(|| "us-east-1".into());
    if let Some(op) = target.strip_prefix(kinesis::TARGET_PREFIX)
        && app.lacking.iter().any(|l| l == op)
    {
        return lacking_answer();
    }
    if req.method() != Method::POST {
        return kinesis_error(&ApiError::unknown_operation(&format!(
            "{} {target}",
            req.method()
        )));
    }
    // A body declared larger than any operation takes is refused before a byte of it is read.
    let declared = req
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(n) = declared.filter(|n| *n > MAX_JSON_BODY as u64) {
        let mut err = ApiError::serialization(format!(
            "the request body is {n} bytes; at most {MAX_JSON_BODY} are accepted"
        ));
        err.status = 413;
        return kinesis_error(&err);
    }
    let body = match Limited::new(req.into_body(), MAX_JSON_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            let mut err = ApiError::serialization(format!(
                "the request body could not be read or exceeds {MAX_JSON_BODY} bytes: {e}"
            ));
            err.status = 413;
            return kinesis_error(&err);
        }
    };
    let op = target
        .strip_prefix(kinesis::TARGET_PREFIX)
        .unwrap_or(&target)
        .to_string();
    // Only with a fault set is the body read again for the shard and consumer it names.
    let aim = if app.injector.active() {
        fault_target(&op, &body)
    } else {
        faults::Target {
            service: Some(latlab_core::faults::Service::Kinesis),
            operation: op.clone(),
            ..Default::default()
        }
    };
    let reply = app
        .injector
        .around(
            &aim,
            conn,
            |f| match f {
                faults::Failure::Reset => ApiError::internal("connection reset (fault)"),
                faults::Failure::Internal => ApiError::internal_failure(),
                faults::Failure::Unavailable => ApiError::service_unavailable(),
            },
            || app.kinesis.handle(&target, &body, &region),
        )
        .await;
    match reply {
        Ok(kinesis::Reply::Json(v)) => respond(
            StatusCode::OK,
            "application/x-amz-json-1.1",
            Bytes::from(serde_json::to_vec(&v).unwrap_or_default()),
        ),
        Ok(kinesis::Reply::EventStream(body)) => {
            let body = Faulty::stream(body, app.injector.clone(), aim, conn.clone());
            let mut resp = Response::new(body);
            let h = resp.headers_mut();
            h.insert(
                "content-type",
                "application/vnd.amazon.eventstream".parse().expect("valid"),
            );
            h.insert("x-amzn-requestid", request_id().parse().expect("valid"));
            resp
        }
        Err(e) => kinesis_error(&e),
    }
}

/// What a Kinesis request is, for matching faults: its operation, the shard it names (by
/// `ShardId` or inside its `ShardIterator`) and its fan-out consumer.
fn fault_target(op: &str, body: &[u8]) -> faults::Target {
    let mut t = faults::Target {
        service: Some(latlab_core::faults::Service::Kinesis),
        operation: op.to_string(),
        ..Default::default()
    };
    if !matches!(op, "GetRecords" | "GetShardIterator" | "SubscribeToShard") {
        return t;
    }
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) else {
        return t;
    };
    let index = match (v["ShardId"].as_str(), v["ShardIterator"].as_str()) {
        (Some(id), _) => kinesis::store::parse_shard_id(id),
        (None, Some(it)) => kinesis::store::Iterator::decode(it).map(|it| it.shard),
        _ => None,
    };
    t.shard = index.map(|i| (i, kinesis::store::shard_id(i)));
    t.consumer = v["ConsumerARN"]
        .as_str()
        .and_then(|arn| arn.split("/consumer/").nth(1))
        .and_then(|rest| rest.split(':').next())
        .map(str::to_string);
    t
}

/// What an endpoint that lacks an operation answers: HTTP 500 with an HTML page, no AWS error.
pub fn lacking_answer() -> Response<Body> {
    respond(
        StatusCode::INTERNAL_SERVER_ERROR,
        "text/html",
        Bytes::from_static(
            b"<html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1></body></html>",
        ),
    )
}

fn kinesis_error(e: &ApiError) -> Response<Body> {
    tracing::debug!("emulator: {} {}", e.code, e.message);
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST);
    respond(status, "application/x-amz-json-1.1", Bytes::from(e.body()))
}

fn respond(status: StatusCode, content_type: &'static str, body: Bytes) -> Response<Body> {
    let mut resp = Response::new(Full::new(body).boxed());
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert("content-type", content_type.parse().expect("valid header"));
    h.insert(
        "x-amzn-requestid",
        request_id().parse().expect("valid header"),
    );
    resp
}

/// A request id in the service's UUID form.
fn request_id() -> String {
    let v: u128 = rand::random();
    let h = format!("{v:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// The region of a SigV4 `Authorization` header (`Credential=AKID/DATE/REGION/SERVICE/aws4_request`).
fn signing_region(headers: &HeaderMap) -> Option<String> {
    let auth = headers.get("authorization")?.to_str().ok()?;
    let cred = auth.split("Credential=").nth(1)?;
    let region = cred.split('/').nth(2)?;
    (!region.is_empty()
        && region
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-'))
    .then(|| region.to_string())
}
