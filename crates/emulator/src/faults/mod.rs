//! The emulator's fault injector: the emulated services' kinds of [`latlab_core::faults`] (each
//! service declares its own; the injector acts on what a kind does, its `Effect`), set at start
//! (`--fault`, a scenario's `[[faults]]`) or added while it runs (the TUI's menu).
//!
//! A fault that fires on a schedule arms itself: the next matching request (or `count` of them)
//! gets it. A rate is drawn on every matching request. Each hit is a [`latlab_core::faults::FaultEvent`]
//! naming what it hit; the event's recovery is the next correct answer to the same operation (on
//! the same shard, for the same consumer, where those were named), so a reset PutRecord recovers
//! when the SDK's retry is answered, a cut event stream when the consumer subscribes again.

mod cut;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

pub use cut::{ConnReset, Faulty};

use latlab_core::faults::{Effect, FaultLog, FaultSpec, Kind, Service, Trigger};

/// What a hit request gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    ResetBefore,
    ResetAfter,
    InternalError,
    Unavailable,
    Stall(Duration),
    BodyReset,
    FirstByteStall(Duration),
}

/// What a fault that changes a service's state changed ([`crate::service::Service::on_fault`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changed {
    /// What it hit, for the fault log (`every shard iterator handed out so far`).
    pub what: String,
    /// The operation whose next correct answer is the recovery (`GetRecords`).
    pub recovers_on: String,
}

/// What [`Injector::on_request`] decided for one request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hit {
    /// Added before the request is served (a latency spike).
    pub delay: Duration,
    /// The fault it got, and the event's id.
    pub action: Option<(Action, u64)>,
}

/// How a fault answers a request instead of the service ([`Injector::around`]): each service
/// says it in its own error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The connection was reset (the client sees no answer; the error is what a log shows).
    Reset,
    /// The service's internal error (HTTP 500).
    Internal,
    /// The service unavailable (HTTP 503).
    Unavailable,
}

/// What a fault can be matched against: one request, or one event stream's frame.
#[derive(Clone, Debug, Default)]
pub struct Target {
    pub service: Option<Service>,
    pub operation: String,
    /// Kinesis: the shard's index and id, where the request names one.
    pub shard: Option<(u32, String)>,
    /// Kinesis: the fan-out consumer's name (SubscribeToShard).
    pub consumer: Option<String>,
    /// S3: the bucket's class.
    pub class: Option<ResourceClass>,
}

/// A class of a service's resources, which a fault's `class=` can pick (S3's storage classes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceClass {
    /// As `class=` names it (`express`).
    pub key: &'static str,
    /// As the fault log shows it (`EXPRESS_ONEZONE`).
    pub shown: &'static str,
}

impl Target {
    fn describe(&self) -> String {
        let mut out = self.operation.clone();
        if let Some(c) = &self.consumer {
            out.push_str(&format!(" of consumer {c}"));
        }
        if let Some((_, id)) = &self.shard {
            out.push_str(&format!(" on {id}"));
        }
        if let Some(c) = self.class {
            out.push_str(&format!(" ({})", c.shown));
        }
        out
    }
}

struct Armed {
    spec: FaultSpec,
    /// Hits left to hand out (per-request kinds and stream faults).
    pending: AtomicU32,
    /// A spike's end.
    until: Mutex<Option<Instant>>,
}

impl Armed {
    fn matches(&self, t: &Target) -> bool {
        let s = &self.spec;
        if t.service != Some(s.kind.service()) {
            return false;
        }
        if let Some(op) = &s.operation
            && *op != t.operation
        {
            return false;
        }
        // A kind that hits some operations only (a body reset, a receive stall) passes the rest.
        if let Some(only) = s.kind.only()
            && !only.contains(&t.operation.as_str())
        {
            return false;
        }
        if let Some(want) = &s.shard {
            match &t.shard {
                Some((index, id)) if *want == index.to_string() || want == id => {}
                _ => return false,
            }
        }
        if let Some(want) = &s.consumer
            && t.consumer.as_deref() != Some(want.as_str())
        {
            return false;
        }
        if let Some(want) = &s.class
            && t.class.map(|c| c.key) != Some(want.as_str())
        {
            return false;
        }
        true
    }

    fn action(&self) -> Option<Action> {
        Some(match self.spec.kind.effect() {
            Effect::ResetBefore => Action::ResetBefore,
            Effect::ResetAfter => Action::ResetAfter,
            Effect::InternalError => Action::InternalError,
            Effect::Unavailable => Action::Unavailable,
            Effect::Stall => Action::Stall(self.spec.duration),
            Effect::BodyReset => Action::BodyReset,
            Effect::FirstByteStall => Action::FirstByteStall(self.spec.duration),
            Effect::Spike | Effect::Change | Effect::StreamCut | Effect::StreamEnd => return None,
            Effect::OnServers => return None,
        })
    }
}

/// A fault waiting for its target's next correct answer.
struct Awaiting {
    id: u64,
    target: Target,
    /// Answers before this do not count (a spike's end).
    after: Instant,
}

/// Faults awaiting recovery at most; the oldest are dropped past it (they stay unrecovered).
const MAX_AWAITING: usize = 1_000;

/// The faults set on a running emulator.
pub struct Injector {
    armed: Mutex<Vec<Arc<Armed>>>,
    any: AtomicBool,
    awaiting: Mutex<Vec<Awaiting>>,
    pub log: Arc<FaultLog>,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Hands a fault that changes a service's state to the services (`Service::on_fault`).
    act: Box<dyn Fn(Kind) -> Option<Changed> + Send + Sync>,
}

impl Drop for Injector {
    fn drop(&mut self) {
        for t in self.tasks.lock().drain(..) {
            t.abort();
        }
    }
}

impl Injector {
    pub fn new(
        log: Arc<FaultLog>,
        act: Box<dyn Fn(Kind) -> Option<Changed> + Send + Sync>,
    ) -> Injector {
        Injector {
            armed: Mutex::new(Vec::new()),
            any: AtomicBool::new(false),
            awaiting: Mutex::new(Vec::new()),
            log,
            tasks: Mutex::new(Vec::new()),
            act,
        }
    }

    /// Sets a fault: one that fires now fires at once; one on a schedule starts its clock (the
    /// emulator's runtime must be current).
    pub fn add(self: &Arc<Self>, spec: FaultSpec) -> anyhow::Result<()> {
        if spec.kind.effect() == Effect::OnServers {
            anyhow::bail!(
                "{} is injected on the {} lab's servers, not by the emulator",
                spec.kind,
                spec.kind.service().label()
            );
        }
        let armed = Arc::new(Armed {
            pending: AtomicU32::new(0),
            until: Mutex::new(None),
            spec,
        });
        {
            let mut all = self.armed.lock();
            // Faults injected once (the menu's) leave when spent, so the list stays as long as
            // what is set and still pending.
            let now = Instant::now();
            all.retain(|a| {
                a.spec.trigger != Trigger::Now
                    || a.pending.load(Ordering::Relaxed) > 0
                    || a.until.lock().is_some_and(|end| end > now)
            });
            all.push(armed.clone());
        }
        self.any.store(true, Ordering::Relaxed);
        match armed.spec.trigger {
            Trigger::Now => self.fire(&armed),
            Trigger::Rate(_) => {}
            Trigger::Every { period, first } => {
                let this = Arc::downgrade(self);
                let task = tokio::spawn(async move {
                    tokio::time::sleep(first).await;
                    loop {
                        let Some(injector) = this.upgrade() else {
                            return;
                        };
                        injector.fire(&armed);
                        drop(injector);
                        tokio::time::sleep(period).await;
                    }
                });
                self.tasks.lock().push(task);
            }
        }
        Ok(())
    }

    /// One firing of a scheduled (or immediate) fault.
    fn fire(&self, armed: &Arc<Armed>) {
        let spec = &armed.spec;
        match spec.kind.effect() {
            Effect::Spike => {
                let end = Instant::now() + spec.duration;
                *armed.until.lock() = Some(end);
                let what = format!(
                    "every {} request +{} for {}",
                    spec.operation
                        .as_deref()
                        .unwrap_or(spec.kind.service().label()),
                    latlab_core::units::format_duration(spec.delay),
                    latlab_core::units::format_duration(spec.duration)
                );
                let id = self.log.fired(spec.kind, what);
                self.await_recovery(
                    id,
                    Target {
                        service: Some(spec.kind.service()),
                        operation: spec.operation.clone().unwrap_or_default(),
                        ..Target::default()
                    },
                    end,
                );
            }
            // The service changes its own state; it says what changed and which operation's
            // next correct answer is the recovery.
            Effect::Change => {
                let Some(changed) = (self.act)(spec.kind) else {
                    return;
                };
                let id = self.log.fired(spec.kind, changed.what);
                self.await_recovery(
                    id,
                    Target {
                        service: Some(spec.kind.service()),
                        operation: changed.recovers_on,
                        ..Target::default()
                    },
                    Instant::now(),
                );
            }
            // Armed anew, not added to what is left: a firing that found no request to hit
            // does not pile up behind the next.
            Effect::StreamCut | Effect::StreamEnd => {
                armed.pending.store(1, Ordering::Relaxed);
            }
            _ => {
                armed.pending.store(spec.count, Ordering::Relaxed);
            }
        }
    }

    fn await_recovery(&self, id: u64, target: Target, after: Instant) {
        let mut awaiting = self.awaiting.lock();
        if awaiting.len() >= MAX_AWAITING {
            awaiting.remove(0);
        }
        awaiting.push(Awaiting { id, target, after });
    }

    /// Takes one armed hit, or draws the rate, for a fault that matches.
    fn take(&self, armed: &Armed) -> bool {
        match armed.spec.trigger {
            Trigger::Rate(r) => rand::random::<f64>() < r,
            _ => armed
                .pending
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok(),
        }
    }

    /// Whether any fault is set: with none, requests are not looked at.
    pub fn active(&self) -> bool {
        self.any.load(Ordering::Relaxed)
    }

    /// Decides what one request gets: a spike's delay, and at most one fault.
    /// The faults around one request of a service whose answer is sent whole (Kinesis's and
    /// SQS's JSON protocols), written once: a spike's delay first; a reset before, an internal
    /// error or unavailability instead of the answer; `handle` serves it; then a reset instead of
    /// the answer, or the answer held back (its recovery logged when it succeeds); a success
    /// clears what waited for one. `fail` says each failure in the service's own words.
    pub async fn around<T, E, F>(
        &self,
        aim: &Target,
        conn: &ConnReset,
        fail: impl Fn(Failure) -> E,
        handle: impl FnOnce() -> F,
    ) -> Result<T, E>
    where
        F: std::future::Future<Output = Result<T, E>>,
    {
        let hit = self.on_request(aim);
        if !hit.delay.is_zero() {
            tokio::time::sleep(hit.delay).await;
        }
        let action = hit.action.map(|(a, _)| a);
        match action {
            Some(Action::ResetBefore) => {
                conn.reset();
                return Err(fail(Failure::Reset));
            }
            Some(Action::InternalError) => return Err(fail(Failure::Internal)),
            Some(Action::Unavailable) => return Err(fail(Failure::Unavailable)),
            _ => {}
        }
        let reply = handle().await;
        match action {
            Some(Action::ResetAfter) => {
                conn.reset();
                return Err(fail(Failure::Reset));
            }
            Some(Action::Stall(d)) => {
                tokio::time::sleep(d).await;
                if reply.is_ok()
                    && let Some((_, id)) = hit.action
                {
                    self.log.recovered(id);
                }
            }
            _ => {}
        }
        if reply.is_ok() {
            self.on_success(aim);
        }
        reply
    }

    pub fn on_request(&self, t: &Target) -> Hit {
        let mut hit = Hit::default();
        if !self.any.load(Ordering::Relaxed) {
            return hit;
        }
        let armed: Vec<Arc<Armed>> = self.armed.lock().clone();
        let now = Instant::now();
        for a in armed.iter().filter(|a| a.matches(t)) {
            if a.spec.kind.effect() == Effect::Spike {
                if a.until.lock().is_some_and(|end| now < end) {
                    hit.delay += a.spec.delay;
                }
                continue;
            }
            let Some(action) = a.action() else {
                continue;
            };
            if hit.action.is_none() && self.take(a) {
                let id = self.log.fired(a.spec.kind, t.describe());
                if !matches!(action, Action::Stall(_) | Action::FirstByteStall(_)) {
                    // Recovery is the operation answered again, on the same shard and consumer
                    // (the emulator cannot tell two pollers of one shard apart). A stall
                    // recovers when the held answer goes out.
                    let mut recovery = t.clone();
                    recovery.class = None;
                    self.await_recovery(id, recovery, now);
                }
                hit.action = Some((action, id));
            }
        }
        hit
    }

    /// Whether the next frame of an event stream is cut ([`Effect::StreamCut`]) or ends it early
    /// ([`Effect::StreamEnd`]).
    pub fn on_frame(&self, t: &Target) -> Option<Effect> {
        if !self.any.load(Ordering::Relaxed) {
            return None;
        }
        let armed: Vec<Arc<Armed>> = self.armed.lock().clone();
        for a in armed.iter().filter(|a| {
            matches!(a.spec.kind.effect(), Effect::StreamCut | Effect::StreamEnd) && a.matches(t)
        }) {
            if self.take(a) {
                let id = self
                    .log
                    .fired(a.spec.kind, format!("{} event stream", t.describe()));
                self.await_recovery(id, t.clone(), Instant::now());
                return Some(a.spec.kind.effect());
            }
        }
        None
    }

    /// A request was answered correctly: the faults waiting for it have recovered.
    pub fn on_success(&self, t: &Target) {
        if !self.any.load(Ordering::Relaxed) {
            return;
        }
        let now = Instant::now();
        let mut awaiting = self.awaiting.lock();
        awaiting.retain(|a| {
            let w = &a.target;
            let hit = now >= a.after
                && w.service == t.service
                && (w.operation.is_empty() || w.operation == t.operation)
                && (w.shard.is_none() || w.shard == t.shard)
                && (w.consumer.is_none() || w.consumer == t.consumer);
            if hit {
                self.log.recovered(a.id);
            }
            !hit
        });
    }

    /// The faults set, as they read.
    pub fn describe(&self) -> Vec<String> {
        self.armed
            .lock()
            .iter()
            .filter(|a| a.spec.trigger != Trigger::Now)
            .map(|a| a.spec.describe())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_core::faults::{Effect, Kind};

    /// A declared kind that answers a 500 to any operation of its service (whichever service
    /// declares one: the injector names none).
    fn internal_error() -> Kind {
        Kind::all()
            .find(|k| k.effect() == Effect::InternalError && k.only().is_none())
            .expect("a service declares a 500")
    }

    fn target(kind: Kind, op: &str) -> Target {
        Target {
            service: Some(kind.service()),
            operation: op.into(),
            ..Target::default()
        }
    }

    #[tokio::test]
    async fn faults_injected_once_leave_when_spent() {
        let kind = internal_error();
        let op = kind.service().operations()[0];
        let injector = Arc::new(Injector::new(Arc::default(), Box::new(|_| None)));
        for _ in 0..100 {
            injector.add(FaultSpec::now(kind)).unwrap();
            let hit = injector.on_request(&target(kind, op));
            assert_eq!(hit.action.map(|(a, _)| a), Some(Action::InternalError));
            assert_eq!(injector.on_request(&target(kind, op)).action, None);
        }
        assert!(injector.armed.lock().len() <= 1);
        assert_eq!(injector.log.counts()[&kind].fired, 100);
        // A success of the same operation is each one's recovery.
        injector.on_success(&target(kind, op));
        assert_eq!(injector.log.counts()[&kind].recovered, 100);
    }

    #[tokio::test]
    async fn a_fault_hits_only_what_it_names() {
        // A stall a service lets aim at one operation and one shard.
        let (kind, op, mut spec) = Kind::all()
            .filter(|k| k.effect() == Effect::Stall)
            .find_map(|k| {
                let op = k
                    .only()
                    .and_then(|o| o.first())
                    .or(k.service().operations().first())?;
                let text = format!("{}:operation={op},shard=1,every=1h", k.name());
                Some((k, *op, FaultSpec::parse(&text).ok()?))
            })
            .expect("a service declares a stall aimed by operation and shard");
        spec.trigger = Trigger::Now;
        let injector = Arc::new(Injector::new(Arc::default(), Box::new(|_| None)));
        injector.add(spec).unwrap();
        let other_op = kind
            .service()
            .operations()
            .iter()
            .find(|o| **o != op)
            .expect("another operation");
        let mut other_shard = target(kind, op);
        other_shard.shard = Some((0, "shardId-000000000000".into()));
        assert_eq!(injector.on_request(&other_shard).action, None);
        assert_eq!(injector.on_request(&target(kind, other_op)).action, None);
        let mut shard = target(kind, op);
        shard.shard = Some((1, "shardId-000000000001".into()));
        assert_eq!(
            injector.on_request(&shard).action.map(|(a, _)| a),
            Some(Action::Stall(kind.default_duration()))
        );
    }
}
