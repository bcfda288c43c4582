//! The emulator's SQS, on the same server and port as Kinesis and S3: the AWS JSON 1.0 protocol
//! today's SDKs speak (`x-amz-target: AmazonSQS.*`, `application/x-amz-json-1.0`, errors with
//! the `x-amzn-query-error` header), the queue operations latlab makes, and the quotas of the SQS
//! Developer Guide (`limits.rs`, docs/emulator.md). `queue.rs` holds one queue's rules;
//! `ops.rs` answers each operation.

pub mod error;
pub mod limits;
mod ops;
pub mod profile;
pub mod queue;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Mutex, RwLock};

use crate::json_protocol::{self, JsonCall, Refused};
use crate::service::{Answer, Cx, Service};
use crate::time::ServiceClock;
use error::{SqsError, SqsResult};
use latlab_core::services::sqs::Op;
use limits::SqsLimits;
use profile::SqsProfile;
use queue::{Queue, QueueCounts};

pub use crate::ACCOUNT;

pub struct Sqs {
    pub clock: super::time::ServiceClock,
    limits: SqsLimits,
    profile: RwLock<SqsProfile>,
    queues: RwLock<BTreeMap<String, Arc<Queue>>>,
    /// Names deleted, and when: a name cannot be created again for a while.
    deleted: Mutex<HashMap<String, Instant>>,
    /// Every operation asked for, by name.
    asked: Mutex<BTreeMap<String, u64>>,
}

/// What the stats document carries of SQS: each queue's counts, and every operation asked for.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SqsStats {
    pub queues: BTreeMap<String, QueueCounts>,
    pub operations: BTreeMap<String, u64>,
}

impl Sqs {
    pub fn new(limits: SqsLimits, profile: SqsProfile) -> Sqs {
        Sqs {
            clock: Default::default(),
            limits,
            profile: RwLock::new(profile),
            queues: RwLock::new(BTreeMap::new()),
            deleted: Mutex::new(HashMap::new()),
            asked: Mutex::new(BTreeMap::new()),
        }
    }

    pub fn limits(&self) -> &SqsLimits {
        &self.limits
    }

    pub fn set_profile(&self, profile: SqsProfile) {
        *self.profile.write() = profile;
    }

    pub fn stats(&self) -> SqsStats {
        SqsStats {
            queues: self
                .queues
                .read()
                .iter()
                .map(|(n, q)| (n.clone(), q.state.lock().counts))
                .collect(),
            operations: self.asked.lock().clone(),
        }
    }

    /// Answers one request: `target` is its `x-amz-target`, `host` the `Host` it was sent to
    /// (queue URLs name it), `region` the region it was signed for.
    pub async fn handle(
        &self,
        target: &str,
        body: &[u8],
        host: &str,
        region: &str,
    ) -> SqsResult<serde_json::Value> {
        let op = Op::of_target(target).ok_or_else(|| SqsError::unknown_operation(target))?;
        *self.asked.lock().entry(op.name().to_string()).or_default() += 1;
        let req: serde_json::Value = if body.is_empty() {
            serde_json::json!({})
        } else {
            serde_json::from_slice(body)
                .map_err(|e| SqsError::malformed(&format!("the request body is not JSON: {e}")))?
        };
        if !req.is_object() {
            return Err(SqsError::malformed(
                "the request body must be a JSON object",
            ));
        }
        let leg = {
            let p = self.profile.read();
            match op {
                Op::SendMessage | Op::SendMessageBatch => p.send.clone(),
                Op::ReceiveMessage => p.receive.clone(),
                Op::DeleteMessage
                | Op::DeleteMessageBatch
                | Op::ChangeMessageVisibility
                | Op::ChangeMessageVisibilityBatch => p.delete.clone(),
                _ => p.other.clone(),
            }
        };
        // Half the call's time before it takes effect, half after.
        let total = leg.sample();
        latlab_core::shaping::sleep_until(Instant::now() + total / 2).await;
        let cx = ops::Cx {
            sqs: self,
            req: &req,
            host,
            region,
        };
        let reply = cx.dispatch(op).await;
        latlab_core::shaping::sleep_until(Instant::now() + total / 2).await;
        reply
    }

    fn queue(&self, name: &str) -> SqsResult<Arc<Queue>> {
        self.queues
            .read()
            .get(name)
            .cloned()
            .ok_or_else(SqsError::queue_does_not_exist)
    }
}

/// One SQS request over HTTP: its body read (bounded), the faults set on SQS applied, answered
/// as the JSON protocol answers.
impl Service for Sqs {
    const NAME: &'static str = "sqs";
    const LABEL: &'static str = "SQS";

    type Limits = SqsLimits;
    type Profile = SqsProfile;

    fn new(limits: SqsLimits, profile: SqsProfile) -> Sqs {
        Sqs::new(limits, profile)
    }

    fn claims(request: &crate::service::Claim) -> bool {
        let target = request.target;
        target.is_some_and(|t| t.starts_with(latlab_core::services::sqs::TARGET_PREFIX))
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

    fn set_profile(&self, profile: SqsProfile) {
        Sqs::set_profile(self, profile)
    }

    fn clock(&self) -> &ServiceClock {
        &self.clock
    }

    fn stats_document(&self) -> serde_json::Value {
        serde_json::to_value(self.stats()).unwrap_or_default()
    }
}

/// One request's path: `--lacking`, the body's bounds, the faults around it, the answer or the
/// error as SQS sends it.
async fn serve(
    sqs: &Sqs,
    cx: Cx<'_>,
    req: http::Request<hyper::body::Incoming>,
) -> http::Response<super::Body> {
    let JsonCall {
        target,
        op,
        region,
        host,
        body,
    } = match json_protocol::read(req, latlab_core::services::sqs::TARGET_PREFIX, &cx).await {
        Ok(call) => call,
        Err(Refused::Lacking) => return super::lacking_answer(),
        Err(Refused::NotPost(method, target)) => {
            return answer_error(&SqsError::malformed(&format!(
                "{method} {target}: SQS's JSON protocol takes POST"
            )));
        }
        Err(Refused::Body(why)) => {
            let mut err = SqsError::malformed(&why);
            err.status = 413;
            return answer_error(&err);
        }
    };
    let aim = super::faults::Target {
        service: Some(latlab_core::services::Service::Sqs),
        operation: op,
        ..Default::default()
    };
    let reply = cx
        .injector
        .around(
            &aim,
            cx.conn,
            |f| match f {
                super::faults::Failure::Reset => SqsError::internal("connection reset (fault)"),
                super::faults::Failure::Internal => {
                    SqsError::internal("We encountered an internal error. Please try again.")
                }
                super::faults::Failure::Unavailable => SqsError::unavailable(),
            },
            || sqs.handle(&target, &body, &host, &region),
        )
        .await;
    match reply {
        Ok(v) => super::respond(
            http::StatusCode::OK,
            CONTENT_TYPE,
            bytes::Bytes::from(serde_json::to_vec(&v).unwrap_or_default()),
        ),
        Err(e) => answer_error(&e),
    }
}

/// The JSON protocol's content type.
const CONTENT_TYPE: &str = "application/x-amz-json-1.0";

fn answer_error(e: &SqsError) -> http::Response<super::Body> {
    tracing::debug!("emulator: sqs {} {}", e.code, e.message);
    let status = http::StatusCode::from_u16(e.status).unwrap_or(http::StatusCode::BAD_REQUEST);
    let mut resp = super::respond(status, CONTENT_TYPE, bytes::Bytes::from(e.body()));
    if let Ok(v) = e.query_error().parse() {
        resp.headers_mut().insert("x-amzn-query-error", v);
    }
    resp
}
