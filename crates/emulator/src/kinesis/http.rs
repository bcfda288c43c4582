//! Kinesis as one of the emulator's services: which requests are its own (`x-amz-target:
//! Kinesis_20131202.*`), and the path a request takes: `--lacking`, the body's bounds, the faults
//! around it, the answer (a JSON document or an event stream) or the error as the service sends it.

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;

use super::error::ApiError;
use super::limits::KinesisLimits;
use super::profile::KinesisProfile;
use super::{Kinesis, Op, Reply, TARGET_PREFIX, store};
use crate::faults::{self, Faulty};
use crate::json_protocol::{self, JsonCall, Refused};
use crate::service::{Answer, Cx, Service};
use crate::time::ServiceClock;
use crate::{Body, lacking_answer, request_id, respond};
use latlab_core::faults::Kind;

impl Service for Kinesis {
    const NAME: &'static str = "kinesis";
    const LABEL: &'static str = "Kinesis";

    type Limits = KinesisLimits;
    type Profile = KinesisProfile;

    fn new(limits: KinesisLimits, profile: KinesisProfile) -> Kinesis {
        Kinesis::new(limits, profile)
    }

    fn claims(request: &crate::service::Claim) -> bool {
        let target = request.target;
        target.is_some_and(|t| t.starts_with(TARGET_PREFIX))
    }

    fn serve<'a>(self: &'a Arc<Self>, cx: Cx<'a>, req: Request<Incoming>) -> Answer<'a> {
        Box::pin(request(self, cx, req))
    }

    fn operations() -> &'static [&'static str] {
        Op::NAMES
    }

    fn set_profile(&self, profile: KinesisProfile) {
        Kinesis::set_profile(self, profile)
    }

    fn clock(&self) -> &ServiceClock {
        &self.clock
    }

    fn stats_document(&self) -> serde_json::Value {
        serde_json::to_value(self.stats.snapshot()).unwrap_or_default()
    }

    /// Its rows (per stream, shard and API) are the stats document's top level, where they were
    /// before the other services joined it.
    fn write_stats(&self, doc: &mut serde_json::Map<String, serde_json::Value>) {
        if let serde_json::Value::Object(rows) = self.stats_document() {
            doc.extend(rows);
        }
    }

    fn on_fault(&self, kind: Kind) -> Option<faults::Changed> {
        (kind == super::faults::EXPIRE_ITERATORS).then(|| {
            self.expire_iterators();
            faults::Changed {
                what: "every shard iterator handed out so far".into(),
                recovers_on: "GetRecords".into(),
            }
        })
    }

    /// Records another service hands one of its streams.
    fn accept(&self, d: &crate::service::Delivery) -> Option<Result<(), String>> {
        self.deliver(d)
    }

    fn owns(&self, arn: &str) -> bool {
        super::store::stream_name_from_arn(arn).is_some_and(|n| self.stream_by_name(n).is_ok())
    }
}

async fn request(kinesis: &Arc<Kinesis>, cx: Cx<'_>, req: Request<Incoming>) -> Response<Body> {
    let JsonCall {
        target,
        op,
        region,
        body,
        ..
    } = match json_protocol::read(req, TARGET_PREFIX, &cx).await {
        Ok(call) => call,
        Err(Refused::Lacking) => return lacking_answer(),
        Err(Refused::NotPost(method, target)) => {
            return error(&ApiError::unknown_operation(&format!("{method} {target}")));
        }
        Err(Refused::Body(why)) => {
            let mut err = ApiError::serialization(why);
            err.status = 413;
            return error(&err);
        }
    };
    // Only with a fault set is the body read again for the shard and consumer it names.
    let aim = if cx.injector.active() {
        fault_target(&op, &body)
    } else {
        faults::Target {
            service: Some(latlab_core::faults::Service::Kinesis),
            operation: op.clone(),
            ..Default::default()
        }
    };
    let reply = cx
        .injector
        .around(
            &aim,
            cx.conn,
            |f| match f {
                faults::Failure::Reset => ApiError::internal("connection reset (fault)"),
                faults::Failure::Internal => ApiError::internal_failure(),
                faults::Failure::Unavailable => ApiError::service_unavailable(),
            },
            || kinesis.handle(&target, &body, &region),
        )
        .await;
    match reply {
        Ok(Reply::Json(v)) => respond(
            StatusCode::OK,
            "application/x-amz-json-1.1",
            Bytes::from(serde_json::to_vec(&v).unwrap_or_default()),
        ),
        Ok(Reply::EventStream(body)) => {
            let body = Faulty::stream(body, cx.injector.clone(), aim, cx.conn.clone());
            let mut resp = Response::new(body);
            let h = resp.headers_mut();
            h.insert(
                "content-type",
                "application/vnd.amazon.eventstream".parse().expect("valid"),
            );
            h.insert("x-amzn-requestid", request_id().parse().expect("valid"));
            resp
        }
        Err(e) => error(&e),
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
        (Some(id), _) => store::parse_shard_id(id),
        (None, Some(it)) => store::Iterator::decode(it).map(|it| it.shard),
        _ => None,
    };
    t.shard = index.map(|i| (i, store::shard_id(i)));
    t.consumer = v["ConsumerARN"]
        .as_str()
        .and_then(|arn| arn.split("/consumer/").nth(1))
        .and_then(|rest| rest.split(':').next())
        .map(str::to_string);
    t
}

/// An error as Kinesis sends it.
fn error(e: &ApiError) -> Response<Body> {
    tracing::debug!("emulator: {} {}", e.code, e.message);
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST);
    respond(status, "application/x-amz-json-1.1", Bytes::from(e.body()))
}
