//! Amazon DynamoDB, as much of it as latlab's DynamoDB lab uses and a client of tables needs:
//! tables (provisioned or on-demand, a partition key and an optional sort key), items (put, get
//! strong or eventual, update, delete, conditional writes, Query on a partition key, batches with
//! what throughput left unprocessed) and the capacity each call consumes, enforced per table and
//! per partition as the developer guide states it, so that a hot partition key throttles its
//! partition while the table has capacity to spare. AWS JSON 1.0 (`DynamoDB_20120810.*`); errors
//! as DynamoDB sends them, throttles with their `ThrottlingReasons`.
//!
//! `limits.rs` its limits with their sources, `profile.rs` its latency legs, `item.rs` items, keys
//! and sizes, `table.rs` a table's capacity and partitions, `ops/` the operations (tables, items, expressions).

mod destination;
mod item;
pub mod limits;
mod ops;
pub mod profile;
mod streams;
mod table;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{Mutex, RwLock};

use crate::json_protocol::{self, JsonCall, Refused};
use crate::service::{Answer, Claim, Cx, Service};
use crate::time::ServiceClock;
use latlab_core::services::dynamodb::{Op, STREAMS_TARGET_PREFIX, TARGET_PREFIX};

pub use limits::DynamoLimits;
pub use profile::DynamoProfile;

/// The partitions a table starts with in latlab's model (`DynamoLimits::modelled`): for
/// provisioned `(read, write)` units, its reads over a partition's read units plus its writes over
/// a partition's write units, rounded up; for an on-demand table (None), its initial throughput's.
/// Partitions are added when a table needs more and never merged. Public so that a client of the
/// emulator (the DynamoDB lab's heat strip) draws the same partitions.
pub fn partitions_for(provisioned: Option<(u64, u64)>, l: &DynamoLimits) -> usize {
    let (r, w) = match provisioned {
        Some((read, write)) => (read as f64, write as f64),
        None => {
            // The initial throughput is either figure, not both: its partitions are the larger.
            let by_w = l.on_demand_initial_write_units as f64 / l.partition_write_units as f64;
            let by_r = l.on_demand_initial_read_units as f64 / l.partition_read_units as f64;
            return by_w.max(by_r).ceil().max(1.0) as usize;
        }
    };
    (r / l.partition_read_units as f64 + w / l.partition_write_units as f64)
        .ceil()
        .max(1.0) as usize
}

/// The partition of `partitions` a partition key's value (its bytes: a string's UTF-8, a
/// number's text, a binary's base64) lives on in latlab's model: its MD5's first 8 bytes cut
/// into equal ranges. DynamoDB does not publish its hash; this one spreads keys evenly, as
/// DynamoDB's is documented to.
pub fn partition_of(key: &[u8], partitions: usize) -> usize {
    use md5::{Digest, Md5};
    let d = Md5::digest(key);
    let h = u64::from_be_bytes(d[..8].try_into().expect("8 bytes"));
    ((h as u128 * partitions.max(1) as u128) >> 64) as usize
}

/// The JSON protocol's content type.
const CONTENT_TYPE: &str = "application/x-amz-json-1.0";

/// An error as DynamoDB sends it: its HTTP status, its type, its message, and a throttle's
/// reasons.
#[derive(Debug)]
pub struct DynamoError {
    pub status: u16,
    pub kind: &'static str,
    pub message: String,
    pub reasons: Vec<(String, String)>,
}

impl DynamoError {
    pub fn validation(message: impl Into<String>) -> DynamoError {
        DynamoError {
            status: 400,
            kind: "ValidationException",
            message: message.into(),
            reasons: Vec::new(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> DynamoError {
        DynamoError {
            status: 400,
            kind: "ResourceNotFoundException",
            message: message.into(),
            reasons: Vec::new(),
        }
    }

    pub fn of(status: u16, kind: &'static str, message: impl Into<String>) -> DynamoError {
        DynamoError {
            status,
            kind,
            message: message.into(),
            reasons: Vec::new(),
        }
    }

    fn body(&self) -> Vec<u8> {
        let mut b = serde_json::json!({
            "__type": format!("com.amazonaws.dynamodb.v20120810#{}", self.kind),
            "message": self.message,
        });
        if !self.reasons.is_empty() {
            // The service model spells the member `ThrottlingReasons` in
            // ProvisionedThroughputExceededException and RequestLimitExceeded, and
            // `throttlingReasons` in ThrottlingException (as aws-sdk-dynamodb's deserializers
            // read them).
            let member = if self.kind == "ThrottlingException" {
                "throttlingReasons"
            } else {
                "ThrottlingReasons"
            };
            b[member] = self
                .reasons
                .iter()
                .map(|(reason, resource)| serde_json::json!({"reason": reason, "resource": resource}))
                .collect();
        }
        serde_json::to_vec(&b).unwrap_or_default()
    }
}

pub type DynamoResult<T> = Result<T, DynamoError>;

pub struct Dynamodb {
    clock: ServiceClock,
    limits: DynamoLimits,
    profile: RwLock<DynamoProfile>,
    tables: Mutex<BTreeMap<String, table::Table>>,
    calls: AtomicU64,
    throttled: AtomicU64,
    /// The last stream record's sequence number.
    seq: AtomicU64,
    /// The other services, for the changes it puts into Kinesis data streams.
    peers: std::sync::OnceLock<std::sync::Weak<dyn crate::service::Peers>>,
    /// The queue of those changes (its worker starts with the first destination), and their
    /// counts.
    pushes: Mutex<Option<tokio::sync::mpsc::Sender<destination::Push>>>,
    pushed: Arc<destination::Counts>,
}

impl Service for Dynamodb {
    const NAME: &'static str = "dynamodb";
    const LABEL: &'static str = "DynamoDB";

    type Limits = DynamoLimits;
    type Profile = DynamoProfile;

    fn new(limits: DynamoLimits, profile: DynamoProfile) -> Dynamodb {
        Dynamodb {
            clock: ServiceClock::default(),
            limits,
            profile: RwLock::new(profile),
            tables: Mutex::new(BTreeMap::new()),
            calls: AtomicU64::new(0),
            throttled: AtomicU64::new(0),
            seq: AtomicU64::new(0),
            peers: std::sync::OnceLock::new(),
            pushes: Mutex::new(None),
            pushed: Arc::default(),
        }
    }

    fn claims(request: &Claim) -> bool {
        request
            .target
            .is_some_and(|t| t.starts_with(TARGET_PREFIX) || t.starts_with(STREAMS_TARGET_PREFIX))
    }

    fn serve<'a>(
        self: &'a Arc<Self>,
        cx: Cx<'a>,
        req: http::Request<hyper::body::Incoming>,
    ) -> Answer<'a> {
        Box::pin(serve(self, cx, req))
    }

    fn operations() -> &'static [&'static str] {
        Op::NAMES
    }

    fn connect(&self, peers: std::sync::Weak<dyn crate::service::Peers>) {
        let _ = self.peers.set(peers);
    }

    fn set_profile(&self, profile: DynamoProfile) {
        *self.profile.write() = profile;
    }

    fn clock(&self) -> &ServiceClock {
        &self.clock
    }

    fn stats_document(&self) -> serde_json::Value {
        let second = self.second();
        let mut tables = self.tables.lock();
        let docs: Vec<serde_json::Value> = tables
            .values_mut()
            .map(|t| {
                let partitions: Vec<serde_json::Value> = t
                    .partitions
                    .iter_mut()
                    .enumerate()
                    .map(|(i, p)| {
                        serde_json::json!({
                            "partition": i,
                            "read_units_last_second": p.read.last(second),
                            "write_units_last_second": p.write.last(second),
                            "throttled": p.throttled,
                        })
                    })
                    .collect();
                serde_json::json!({
                    "table": t.name,
                    "items": t.items.len(),
                    "partitions": partitions,
                    "throttles": t.throttles,
                })
            })
            .collect();
        serde_json::json!({
            "calls": self.calls.load(Ordering::Relaxed),
            "throttled": self.throttled.load(Ordering::Relaxed),
            "kinesis_pushed": self.pushed.pushed.load(Ordering::Relaxed),
            "kinesis_push_failed": self.pushed.failed.load(Ordering::Relaxed),
            "tables": docs,
        })
    }

    /// `calls`: the calls it answered; `throttled`: the calls (and batch entries) refused for
    /// throughput.
    fn count(&self, key: &str) -> Option<u64> {
        match key {
            "calls" => Some(self.calls.load(Ordering::Relaxed)),
            "throttled" => Some(self.throttled.load(Ordering::Relaxed)),
            _ => None,
        }
    }
}

impl Dynamodb {
    /// One call as the HTTP path answers it, without its latency leg or faults: the operation an
    /// `x-amz-target` header names (under DynamoDB's prefix or DynamoDB Streams') on `body`. For
    /// what drives the service in process: the fuzz targets.
    pub fn answer(
        &self,
        target: &str,
        body: &[u8],
        region: &str,
    ) -> DynamoResult<serde_json::Value> {
        let op = Op::of_target(target).ok_or_else(|| {
            DynamoError::of(
                400,
                "UnknownOperationException",
                format!("not an operation the emulator's DynamoDB answers: '{target}'"),
            )
        })?;
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.handle(op, body, region)
    }

    /// Queues a change for a Kinesis data stream, starting the worker with the first; a full
    /// queue counts it as failed.
    fn push(&self, p: destination::Push) {
        let mut tx = self.pushes.lock();
        if tx.is_none() {
            let Some(peers) = self.peers.get().cloned() else {
                self.pushed.failed.fetch_add(1, Ordering::Relaxed);
                return;
            };
            let (sender, rx) = tokio::sync::mpsc::channel(destination::QUEUE);
            tokio::spawn(destination::run(rx, peers, self.pushed.clone()));
            *tx = Some(sender);
        }
        if let Some(sender) = tx.as_ref()
            && sender.try_send(p).is_err()
        {
            self.pushed.failed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether a Kinesis data stream of the emulator's is `arn`.
    fn stream_exists(&self, arn: &str) -> bool {
        self.peers
            .get()
            .and_then(std::sync::Weak::upgrade)
            .is_some_and(|p| p.owns(arn))
    }

    /// Whole seconds on its clock (for the per-second meters).
    fn second(&self) -> u64 {
        (self.clock.now_micros() / 1_000_000).max(0) as u64
    }
}

/// One request's path: `--lacking`, the body's bounds, the faults around it, the answer or the
/// error as DynamoDB sends it.
async fn serve(
    db: &Dynamodb,
    cx: Cx<'_>,
    req: http::Request<hyper::body::Incoming>,
) -> http::Response<crate::Body> {
    let streams = req
        .headers()
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with(STREAMS_TARGET_PREFIX));
    let prefix = if streams {
        STREAMS_TARGET_PREFIX
    } else {
        TARGET_PREFIX
    };
    let JsonCall {
        op, region, body, ..
    } = match json_protocol::read(req, prefix, &cx).await {
        Ok(call) => call,
        Err(Refused::Lacking) => return crate::lacking_answer(),
        Err(Refused::NotPost(method, target)) => {
            return answer_error(&DynamoError::of(
                400,
                "SerializationException",
                format!("{method} {target}: DynamoDB's JSON protocol takes POST"),
            ));
        }
        Err(Refused::Body(why)) => {
            return answer_error(&DynamoError::of(413, "SerializationException", why));
        }
    };
    let Some(operation) = Op::parse(&op).filter(|o| o.of_streams() == streams) else {
        return answer_error(&DynamoError::of(
            400,
            "UnknownOperationException",
            format!(
                "the emulator's DynamoDB answers {}; not '{op}'",
                Op::NAMES.join(", ")
            ),
        ));
    };
    let aim = crate::faults::Target {
        service: Some(latlab_core::services::Service::Dynamodb),
        operation: op.clone(),
        ..Default::default()
    };
    let leg = {
        let p = db.profile.read();
        match operation {
            Op::GetItem | Op::Query | Op::BatchGetItem | Op::GetRecords => p.read.clone(),
            Op::PutItem | Op::UpdateItem | Op::DeleteItem | Op::BatchWriteItem => p.write.clone(),
            _ => p.other.clone(),
        }
    };
    let reply = cx
        .injector
        .around(
            &aim,
            cx.conn,
            |f| match f {
                crate::faults::Failure::Reset => {
                    DynamoError::of(500, "InternalServerError", "connection reset (fault)")
                }
                crate::faults::Failure::Internal => {
                    DynamoError::of(500, "InternalServerError", "Internal server error (fault)")
                }
                crate::faults::Failure::Unavailable => DynamoError::of(
                    503,
                    "ServiceUnavailable",
                    "The service is unavailable (fault)",
                ),
            },
            || async {
                db.calls.fetch_add(1, Ordering::Relaxed);
                let answer = db.handle(operation, &body, &region);
                latlab_core::shaping::delay(&leg).await;
                answer
            },
        )
        .await;
    match reply {
        Ok(v) => crate::respond(
            http::StatusCode::OK,
            CONTENT_TYPE,
            bytes::Bytes::from(serde_json::to_vec(&v).unwrap_or_default()),
        ),
        Err(e) => answer_error(&e),
    }
}

fn answer_error(e: &DynamoError) -> http::Response<crate::Body> {
    tracing::debug!("emulator: dynamodb {} {}", e.kind, e.message);
    let status = http::StatusCode::from_u16(e.status).unwrap_or(http::StatusCode::BAD_REQUEST);
    crate::respond(status, CONTENT_TYPE, bytes::Bytes::from(e.body()))
}
