//! A made-up service, compiled into the emulator's own tests alone: a JSON protocol
//! (`x-amz-target: Echo_20261206.Echo`) that answers what it was sent, with one limit (calls per
//! second, past which it throttles) and one latency leg. It is registered by one line of
//! `service.rs` and lives in this folder only, so its tests show that a service reaches the
//! dispatch, the limits (`--print-limits`, `--limit echo.KEY=VALUE`), the latency profiles
//! (`--list-profiles`, a profile file's `[echo]`), the stats document, the counts and `--lacking`
//! with nothing outside its folder changed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::bail;
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use parking_lot::{Mutex, RwLock};
use serde::Deserialize;

use crate::service::{Answer, Builtin, Cx, Service, ServiceLimits, ServiceProfile};
use crate::time::ServiceClock;
use crate::{Body, MAX_JSON_BODY, lacking_answer, respond};
use latlab_core::provenance::{Provenance, Source};
use latlab_core::shaping::dist::{Dist, DistSpec};
use latlab_core::shaping::{CallRate, RateWindow};

const TARGET_PREFIX: &str = "Echo_20261206.";
const OPERATIONS: &[&str] = &["Echo"];

pub struct Echo {
    clock: ServiceClock,
    profile: RwLock<EchoProfile>,
    window: Mutex<CallRate>,
    calls: AtomicU64,
    throttled: AtomicU64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EchoLimits {
    pub calls_per_sec: u32,
}

impl Default for EchoLimits {
    fn default() -> Self {
        EchoLimits { calls_per_sec: 100 }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EchoLimitsSpec {
    calls_per_sec: Option<u32>,
}

impl ServiceLimits for EchoLimits {
    type Spec = EchoLimitsSpec;

    fn from_spec(spec: EchoLimitsSpec) -> anyhow::Result<EchoLimits> {
        let mut l = EchoLimits::default();
        crate::limits::apply!(l, spec; plain: calls_per_sec; wrapped: );
        if l.calls_per_sec == 0 {
            bail!("echo.calls_per_sec must be greater than 0");
        }
        Ok(l)
    }

    fn describe(&self) -> Vec<(&'static str, String)> {
        vec![("calls_per_sec", self.calls_per_sec.to_string())]
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct EchoProfile {
    /// The time a call takes before its answer.
    pub reply: Dist,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EchoProfileSpec {
    reply: Option<DistSpec>,
}

impl ServiceProfile for EchoProfile {
    type Spec = EchoProfileSpec;

    fn zero() -> Self {
        EchoProfile { reply: Dist::ZERO }
    }

    fn values(&self) -> Vec<(String, String)> {
        vec![("echo.reply".into(), self.reply.describe())]
    }

    fn apply(&mut self, spec: EchoProfileSpec) -> anyhow::Result<Vec<String>> {
        let Some(s) = spec.reply else {
            return Ok(Vec::new());
        };
        self.reply = s.build("echo.reply")?;
        Ok(vec!["echo.reply".into()])
    }

    fn builtin(_: Builtin) -> (Self, Vec<(String, Provenance)>) {
        (
            EchoProfile {
                reply: Dist::fixed_ms(2.0),
            },
            vec![(
                "echo.reply".into(),
                Provenance::new(Source::Assumption, "a made-up service's made-up leg"),
            )],
        )
    }
}

impl Service for Echo {
    const NAME: &'static str = "echo";
    const LABEL: &'static str = "Echo";

    type Limits = EchoLimits;
    type Profile = EchoProfile;

    fn new(limits: EchoLimits, profile: EchoProfile) -> Echo {
        Echo {
            clock: ServiceClock::default(),
            profile: RwLock::new(profile),
            window: Mutex::new(CallRate::new(RateWindow::TokenBucket, limits.calls_per_sec)),
            calls: AtomicU64::new(0),
            throttled: AtomicU64::new(0),
        }
    }

    fn claims(request: &crate::service::Claim) -> bool {
        let target = request.target;
        target.is_some_and(|t| t.starts_with(TARGET_PREFIX))
    }

    fn serve<'a>(self: &'a Arc<Self>, cx: Cx<'a>, req: Request<Incoming>) -> Answer<'a> {
        Box::pin(async move {
            let op = req
                .headers()
                .get("x-amz-target")
                .and_then(|v| v.to_str().ok())
                .and_then(|t| t.strip_prefix(TARGET_PREFIX))
                .unwrap_or("")
                .to_string();
            if cx.lacks(&op) {
                return lacking_answer();
            }
            if !OPERATIONS.contains(&op.as_str()) {
                return error(400, "UnknownOperationException", &op);
            }
            let Ok(body) = Limited::new(req.into_body(), MAX_JSON_BODY).collect().await else {
                return error(413, "SerializationException", "the body could not be read");
            };
            let Ok(said) = serde_json::from_slice::<serde_json::Value>(&body.to_bytes()) else {
                return error(400, "SerializationException", "the body is not JSON");
            };
            self.calls.fetch_add(1, Ordering::Relaxed);
            if !self.window.lock().try_admit(self.clock.now()) {
                self.throttled.fetch_add(1, Ordering::Relaxed);
                return error(400, "ThrottlingException", "Rate exceeded");
            }
            let reply = self.profile.read().reply.clone();
            latlab_core::shaping::delay(&reply).await;
            let answer = serde_json::json!({ "Echo": said });
            respond(
                StatusCode::OK,
                "application/x-amz-json-1.0",
                Bytes::from(answer.to_string()),
            )
        })
    }

    fn operations() -> &'static [&'static str] {
        OPERATIONS
    }

    fn set_profile(&self, profile: EchoProfile) {
        *self.profile.write() = profile;
    }

    fn clock(&self) -> &ServiceClock {
        &self.clock
    }

    fn stats_document(&self) -> serde_json::Value {
        serde_json::json!({
            "calls": self.calls.load(Ordering::Relaxed),
            "throttled": self.throttled.load(Ordering::Relaxed),
        })
    }

    /// `calls`: the calls it was sent.
    fn count(&self, key: &str) -> Option<u64> {
        (key == "calls").then(|| self.calls.load(Ordering::Relaxed))
    }
}

fn error(status: u16, kind: &str, message: &str) -> Response<Body> {
    let body = serde_json::json!({ "__type": kind, "message": message });
    respond(
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
        "application/x-amz-json-1.0",
        Bytes::from(body.to_string()),
    )
}

mod tests;
