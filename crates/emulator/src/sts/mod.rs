//! AWS STS, as much of it as a credential chain and `latlab doctor` use: AssumeRole (a profile's
//! `role_arn` with `source_profile`, the SDK's own STS client) and GetCallerIdentity (who the
//! credentials are, and their account). The query protocol: a form posted to `/`, answered in
//! XML. Credentials AssumeRole issues are remembered with their role, session and expiry, so
//! GetCallerIdentity names the assumed role, and a call signed with credentials past their
//! expiry is refused with `ExpiredToken`, as STS refuses it.
//!
//! Its limits are the API reference's bounds on a session's length (`[sts]` of a limits file);
//! its calls take no modelled time: no lab measures STS.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use anyhow::bail;
use http::Request;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use parking_lot::Mutex;
use serde::Deserialize;

use crate::query_protocol::{answer, error, esc, form};
use crate::service::{Answer, Builtin, Claim, Cx, Service, ServiceLimits, ServiceProfile};
use crate::time::ServiceClock;
use crate::{ACCOUNT, MAX_JSON_BODY, lacking_answer};
use latlab_core::provenance::Provenance;
use latlab_core::units::Dur;

const NS: &str = "https://sts.amazonaws.com/doc/2011-06-15/";
const OPERATIONS: &[&str] = &["AssumeRole", "GetCallerIdentity"];

/// The bounds on an AssumeRole session's length (`DurationSeconds`).
#[derive(Clone, Debug, PartialEq)]
pub struct StsLimits {
    /// AssumeRole API reference, DurationSeconds: "The value specified can range from 900
    /// seconds (15 minutes) up to the maximum session duration set for the role".
    pub min_session: Duration,
    /// The same: "The maximum session duration setting can have a value from 1 hour to 12
    /// hours" (43,200 seconds).
    pub max_session: Duration,
    /// The same: "By default, the value is set to 3600 seconds."
    pub default_session: Duration,
}

impl Default for StsLimits {
    fn default() -> Self {
        StsLimits {
            min_session: Duration::from_secs(900),
            max_session: Duration::from_secs(43_200),
            default_session: Duration::from_secs(3600),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StsLimitsSpec {
    min_session: Option<Dur>,
    max_session: Option<Dur>,
    default_session: Option<Dur>,
}

impl ServiceLimits for StsLimits {
    type Spec = StsLimitsSpec;

    fn from_spec(spec: StsLimitsSpec) -> anyhow::Result<StsLimits> {
        let mut l = StsLimits::default();
        crate::limits::apply!(l, spec; plain: ; wrapped: min_session, max_session, default_session);
        if l.min_session.is_zero()
            || l.min_session > l.max_session
            || !(l.min_session..=l.max_session).contains(&l.default_session)
        {
            bail!(
                "sts.min_session, sts.default_session and sts.max_session must be more than 0 and in that order; got {:?}, {:?}, {:?}",
                l.min_session,
                l.default_session,
                l.max_session
            );
        }
        Ok(l)
    }

    fn describe(&self) -> Vec<(&'static str, String)> {
        let secs = |d: Duration| format!("\"{}s\"", d.as_secs());
        vec![
            ("min_session", secs(self.min_session)),
            ("max_session", secs(self.max_session)),
            ("default_session", secs(self.default_session)),
        ]
    }
}

/// STS's part of a latency profile: nothing to shape (no lab measures it).
#[derive(Clone, Debug, PartialEq)]
pub struct StsProfile;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StsProfileSpec {}

impl ServiceProfile for StsProfile {
    type Spec = StsProfileSpec;

    fn zero() -> Self {
        StsProfile
    }

    fn values(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    fn apply(&mut self, _spec: StsProfileSpec) -> anyhow::Result<Vec<String>> {
        Ok(Vec::new())
    }

    fn builtin(_: Builtin) -> (Self, Vec<(String, Provenance)>) {
        (StsProfile, Vec::new())
    }
}

/// Credentials AssumeRole issued.
struct Issued {
    role_arn: String,
    session: String,
    expires: SystemTime,
}

pub struct Sts {
    clock: ServiceClock,
    limits: StsLimits,
    issued: Mutex<HashMap<String, Issued>>,
    calls: AtomicU64,
    assumed: AtomicU64,
}

/// The access key a request was signed with (`Authorization: AWS4-HMAC-SHA256
/// Credential=AKID/DATE/REGION/sts/aws4_request, ...`).
fn access_key<B>(req: &Request<B>) -> Option<String> {
    let auth = req.headers().get("authorization")?.to_str().ok()?;
    let cred = auth.split("Credential=").nth(1)?;
    Some(cred.split('/').next()?.to_string())
}

/// A made-up identifier of `len` characters after `prefix` (`ASIA`, `AROA`), from `[A-Z0-9]`.
fn id(prefix: &str, len: usize) -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let tail: String = (0..len)
        .map(|_| CHARS[rand::random::<u8>() as usize % CHARS.len()] as char)
        .collect();
    format!("{prefix}{tail}")
}

impl Sts {
    fn assume_role(
        &self,
        f: &std::collections::BTreeMap<String, String>,
    ) -> http::Response<crate::Body> {
        let role_arn = f.get("RoleArn").map(String::as_str).unwrap_or("");
        let session = f.get("RoleSessionName").map(String::as_str).unwrap_or("");
        let role = role_arn
            .strip_prefix("arn:aws:iam::")
            .and_then(|r| r.split_once(":role/"))
            .filter(|(account, name)| {
                account.len() == 12
                    && account.bytes().all(|b| b.is_ascii_digit())
                    && !name.is_empty()
            });
        let Some((account, role_name)) = role else {
            return error(
                NS,
                400,
                "ValidationError",
                &format!(
                    "RoleArn '{role_arn}' is not a role's ARN (arn:aws:iam::ACCOUNT:role/NAME)"
                ),
            );
        };
        let session_ok = (2..=64).contains(&session.len())
            && session
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+=,.@_-".contains(c));
        if !session_ok {
            return error(
                NS,
                400,
                "ValidationError",
                &format!("RoleSessionName '{session}' must be 2 to 64 characters of [\\w+=,.@-]"),
            );
        }
        let l = &self.limits;
        let duration = match f.get("DurationSeconds") {
            None => l.default_session,
            Some(s) => match s.parse::<u64>().map(Duration::from_secs) {
                Ok(d) if (l.min_session..=l.max_session).contains(&d) => d,
                _ => {
                    return error(
                        NS,
                        400,
                        "ValidationError",
                        &format!(
                            "DurationSeconds {s} is not between {} and {} seconds",
                            l.min_session.as_secs(),
                            l.max_session.as_secs()
                        ),
                    );
                }
            },
        };
        let key = id("ASIA", 16);
        let expires = SystemTime::now() + duration;
        let expiration = latlab_core::clock::rfc3339_ms(latlab_core::clock::micros(expires) / 1000);
        let arn = format!("arn:aws:sts::{account}:assumed-role/{role_name}/{session}");
        let result = format!(
            "<Credentials><AccessKeyId>{key}</AccessKeyId><SecretAccessKey>{}</SecretAccessKey>\
             <SessionToken>{}</SessionToken><Expiration>{expiration}</Expiration></Credentials>\
             <AssumedRoleUser><AssumedRoleId>{}:{}</AssumedRoleId><Arn>{}</Arn></AssumedRoleUser>\
             <PackedPolicySize>0</PackedPolicySize>",
            id("", 40),
            id("FwoGZXIvYXdzE", 120),
            id("AROA", 17),
            esc(session),
            esc(&arn),
        );
        self.issued.lock().insert(
            key,
            Issued {
                role_arn: role_arn.to_string(),
                session: session.to_string(),
                expires,
            },
        );
        self.assumed.fetch_add(1, Ordering::Relaxed);
        answer(NS, "AssumeRole", &result)
    }

    fn get_caller_identity(&self, key: Option<&str>) -> http::Response<crate::Body> {
        let key = key.unwrap_or("");
        let (arn, user) = match self.issued.lock().get(key) {
            Some(i) => {
                let name = i.role_arn.rsplit('/').next().unwrap_or("");
                (
                    format!("arn:aws:sts::{ACCOUNT}:assumed-role/{name}/{}", i.session),
                    format!("{}:{}", id("AROA", 17), i.session),
                )
            }
            None => (
                format!("arn:aws:iam::{ACCOUNT}:user/latlab"),
                id("AIDA", 17),
            ),
        };
        answer(
            NS,
            "GetCallerIdentity",
            &format!(
                "<Arn>{}</Arn><UserId>{user}</UserId><Account>{ACCOUNT}</Account>",
                esc(&arn)
            ),
        )
    }
}

impl Service for Sts {
    const NAME: &'static str = "sts";
    const LABEL: &'static str = "STS";

    type Limits = StsLimits;
    type Profile = StsProfile;

    fn new(limits: StsLimits, _profile: StsProfile) -> Sts {
        Sts {
            clock: ServiceClock::default(),
            limits,
            issued: Mutex::new(HashMap::new()),
            calls: AtomicU64::new(0),
            assumed: AtomicU64::new(0),
        }
    }

    /// The query protocol's requests: a form posted to `/`.
    fn claims(request: &Claim) -> bool {
        request.target.is_none() && request.query_protocol
    }

    fn serve<'a>(self: &'a Arc<Self>, cx: Cx<'a>, req: Request<Incoming>) -> Answer<'a> {
        Box::pin(async move {
            let key = access_key(&req);
            let Ok(body) = Limited::new(req.into_body(), MAX_JSON_BODY).collect().await else {
                return error(NS, 413, "ValidationError", "the form could not be read");
            };
            let f = form(&body.to_bytes());
            let action = f.get("Action").cloned().unwrap_or_default();
            if cx.lacks(&action) {
                return lacking_answer();
            }
            self.calls.fetch_add(1, Ordering::Relaxed);
            // Credentials it issued that have run out are refused, as STS refuses them.
            let expired = key
                .as_deref()
                .and_then(|k| self.issued.lock().get(k).map(|i| i.expires))
                .is_some_and(|t| t <= SystemTime::now());
            if expired {
                return error(
                    NS,
                    403,
                    "ExpiredToken",
                    "The security token included in the request is expired",
                );
            }
            match action.as_str() {
                "AssumeRole" => self.assume_role(&f),
                "GetCallerIdentity" => self.get_caller_identity(key.as_deref()),
                "" => error(NS, 400, "MissingAction", "the form names no Action"),
                other => error(
                    NS,
                    400,
                    "InvalidAction",
                    &format!(
                        "Could not find operation {other}; the emulator's STS answers {}",
                        OPERATIONS.join(" and ")
                    ),
                ),
            }
        })
    }

    fn operations() -> &'static [&'static str] {
        OPERATIONS
    }

    fn set_profile(&self, _profile: StsProfile) {}

    fn clock(&self) -> &ServiceClock {
        &self.clock
    }

    fn stats_document(&self) -> serde_json::Value {
        serde_json::json!({
            "calls": self.calls.load(Ordering::Relaxed),
            "assumed_roles": self.assumed.load(Ordering::Relaxed),
        })
    }

    /// `calls`: the calls it answered; `assumed_roles`: the AssumeRole calls that issued
    /// credentials.
    fn count(&self, key: &str) -> Option<u64> {
        match key {
            "calls" => Some(self.calls.load(Ordering::Relaxed)),
            "assumed_roles" => Some(self.assumed.load(Ordering::Relaxed)),
            _ => None,
        }
    }
}
