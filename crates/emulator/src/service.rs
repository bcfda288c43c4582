//! What an emulated service is to the emulator, and the registry of them.
//!
//! A service is one folder (`kinesis/`, `s3/`, `sqs/`) that implements [`Service`]: it says which
//! requests are its own, answers them, and owns its limits ([`ServiceLimits`], its `[NAME]` table
//! of a limits file), its part of a latency profile ([`ServiceProfile`], its `[NAME]` table of a
//! profile file, with the provenance of every built-in value), its clock, its counters and the
//! operations `--lacking` can take away. `for_each_service!` lists them once; from that list the
//! emulator builds its dispatch, [`crate::limits::Limits`], [`crate::profile::LatencyProfile`],
//! `--print-limits`, the profile listing and `--lacking`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use http::{Request, Response};
use hyper::body::Incoming;
use serde::de::DeserializeOwned;

use crate::Body;
use crate::faults::{ConnReset, Injector};
use crate::time::ServiceClock;
use latlab_core::provenance::{Param, Provenance};

/// The emulated services, written once: `for_each_service!(callback)` hands the list to
/// `callback!` as `field: module::Type` entries, in the order files and listings show them. No two
/// services claim one request, so the order is not the dispatch's. The library's own test build
/// adds a made-up service from a test-only folder (`echo_service/`, one line below).
macro_rules! for_each_service {
    ($callback:ident) => {
        $crate::service::with_test_service! {
            $callback,
            kinesis: kinesis::Kinesis,
            s3: s3::S3,
            sqs: sqs::Sqs,
            dynamodb: dynamodb::Dynamodb,
            sts: sts::Sts,
        }
    };
}
pub(crate) use for_each_service;

/// The registry as it is.
#[cfg(not(test))]
macro_rules! with_test_service {
    ($callback:ident, $($services:tt)*) => {
        $callback! { $($services)* }
    };
}

/// The registry of the library's own test build: with a made-up service from a test-only folder
/// (`echo_service/`), registered by this one line, so the tests show a new service reaching the
/// dispatch, the limits, the profiles and `--lacking` with nothing outside its folder changed.
#[cfg(test)]
macro_rules! with_test_service {
    ($callback:ident, $($services:tt)*) => {
        $callback! { $($services)* echo: echo_service::Echo, }
    };
}
pub(crate) use with_test_service;

/// A service's limits: its `[NAME]` table of a limits file (`--limit NAME.KEY=VALUE`).
pub trait ServiceLimits: Clone + fmt::Debug + PartialEq + Default + Send + Sync + 'static {
    /// The table's form: every key optional, unknown keys rejected.
    type Spec: DeserializeOwned;

    /// The documented limits with a table applied, checked.
    fn from_spec(spec: Self::Spec) -> anyhow::Result<Self>;

    /// Every limit as `key = value` (`latlab emulate --print-limits`), in a fixed order.
    fn describe(&self) -> Vec<(&'static str, String)>;

    /// Limits that are a model rather than a documented figure (how a rate is counted, a size
    /// no document gives), with their provenance, for a run that uses the service.
    fn modelled(&self) -> Vec<Param> {
        Vec::new()
    }
}

/// A built-in latency profile other than `zero` (whose every part is [`ServiceProfile::zero`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// A client in the service's region, from AWS's documents and independent measurements.
    SameRegion,
    /// Calibrated on the seed experiments where they measured the service.
    SeedTokyo,
}

/// A service's part of a latency profile: its `[NAME]` table of a profile file.
pub trait ServiceProfile: Clone + fmt::Debug + PartialEq + Send + Sync + 'static {
    /// The table's form: every key optional, unknown keys rejected.
    type Spec: DeserializeOwned;

    /// Nothing added.
    fn zero() -> Self;

    /// Every parameter's name (`NAME.…`) and value in words, in a fixed order.
    fn values(&self) -> Vec<(String, String)>;

    /// Applies a profile file's table; returns the names of the parameters it set.
    fn apply(&mut self, spec: Self::Spec) -> anyhow::Result<Vec<String>>;

    /// Its part of a built-in profile, with where each parameter's value comes from.
    fn builtin(profile: Builtin) -> (Self, Vec<(String, Provenance)>);
}

/// What a service's request path is given besides the request.
pub struct Cx<'a> {
    /// The faults set on the emulator.
    pub injector: &'a Arc<Injector>,
    /// The connection the request came on (a fault may reset it).
    pub conn: &'a Arc<ConnReset>,
    /// Operations to answer as an endpoint that lacks them does (`--lacking`).
    pub lacking: &'a [String],
}

impl Cx<'_> {
    /// Whether `op` is to be answered as missing.
    pub fn lacks(&self, op: &str) -> bool {
        self.lacking.iter().any(|l| l == op)
    }
}

/// What a service is told of a request to say whether it is its own.
pub struct Claim<'a> {
    /// `x-amz-target`: the JSON protocols' `Service_Version.Operation`.
    pub target: Option<&'a str>,
    /// A POST of a form to `/` (`application/x-www-form-urlencoded`): the query protocol, whose
    /// body names its `Action`.
    pub query_protocol: bool,
}

impl<'a> Claim<'a> {
    pub fn of<B>(req: &'a Request<B>) -> Claim<'a> {
        let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
        Claim {
            target: header("x-amz-target"),
            query_protocol: req.method() == http::Method::POST
                && req.uri().path() == "/"
                && header("content-type")
                    .is_some_and(|t| t.starts_with("application/x-www-form-urlencoded")),
        }
    }
}

/// A record one service hands another: a resource's ARN, a partition key and the data
/// (a table's changes put into a data stream, say).
pub struct Delivery<'a> {
    pub to: &'a str,
    pub partition_key: &'a str,
    pub data: &'a [u8],
}

/// What a service may ask of the others, whichever they are: the registry answers by asking
/// each service in turn (`Service::accept`, `Service::owns`).
pub trait Peers: Send + Sync {
    /// Hands `d` to the service that owns `d.to`; why not, when none does or it refused.
    fn deliver(&self, d: &Delivery) -> Result<(), String>;
    /// Whether a service owns the resource `arn` and takes deliveries to it.
    fn owns(&self, arn: &str) -> bool;
}

/// An answer on its way.
pub type Answer<'a> = Pin<Box<dyn Future<Output = Response<Body>> + Send + 'a>>;

/// An emulated service: one folder of the emulator.
pub trait Service: Send + Sync + Sized + 'static {
    /// Its name in limits and profile files, `--limit`, the stats document and fault kinds
    /// (`kinesis`).
    const NAME: &'static str;
    /// As people write it (`Kinesis`).
    const LABEL: &'static str;

    type Limits: ServiceLimits;
    type Profile: ServiceProfile;

    fn new(limits: Self::Limits, profile: Self::Profile) -> Self;

    /// Whether a request is this service's, from its protocol: the JSON protocols name their
    /// operation in `x-amz-target`, the query protocol posts a form, S3's REST does neither.
    fn claims(request: &Claim) -> bool;

    /// Answers one of its requests.
    fn serve<'a>(self: &'a Arc<Self>, cx: Cx<'a>, req: Request<Incoming>) -> Answer<'a>;

    /// The operations it answers, by API name (what `--lacking` takes).
    fn operations() -> &'static [&'static str];

    /// Applies another part of a latency profile from the next request on.
    fn set_profile(&self, profile: Self::Profile);

    /// Its clock: every time-based rule reads it.
    fn clock(&self) -> &ServiceClock;

    /// Its counts for the stats document (`GET /_latlab/stats`).
    fn stats_document(&self) -> serde_json::Value;

    /// Writes its part of the stats document into it: under its name by default.
    fn write_stats(&self, doc: &mut serde_json::Map<String, serde_json::Value>) {
        doc.insert(Self::NAME.into(), self.stats_document());
    }

    /// Acts on its own state when one of its faults that changes it fires (Kinesis expires every
    /// iterator): what it changed, and the operation whose next correct answer is the recovery.
    /// A fault that hits requests needs nothing here.
    fn on_fault(&self, _kind: latlab_core::faults::Kind) -> Option<crate::faults::Changed> {
        None
    }

    /// A count only the emulator sees, by its key within the service (`create_sessions`).
    fn count(&self, _key: &str) -> Option<u64> {
        None
    }

    /// Takes a delivery to a resource it owns (Some: whether it stored it); None when `d.to`
    /// is not its own. Nothing is its own by default.
    fn accept(&self, _d: &Delivery) -> Option<Result<(), String>> {
        None
    }

    /// Whether it owns the resource `arn` and takes deliveries to it.
    fn owns(&self, _arn: &str) -> bool {
        false
    }

    /// Given, once every service runs, what it may ask of the others.
    fn connect(&self, _peers: std::sync::Weak<dyn Peers>) {}
}
