//! What a run gives every lab it starts: its clock and id, the SDK's clients, the fault log,
//! the user's target options, and what the embedded emulator (when the run has one) tells the
//! labs. It belongs to the run; no lab reaches into another's state for any of it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::aws::Clients;
use latlab_core::faults::FaultLog;

/// How every lab says an endpoint lacks an operation it needs (`not supported by this endpoint:
/// SubscribeToShard answered HTTP 500 ...`): reports find those lines by it.
pub const UNSUPPORTED: &str = "not supported by this endpoint";

/// Told when the user asks a stopping run to stop at once (a second `q` or Ctrl-C): a lab's stop
/// ends its drain there, and what it had not drained is counted unread, as a drain that ran out
/// of time counts it.
pub type Hurry = tokio_util::sync::CancellationToken;

/// Waits for a probe's task to end, at most `limit` or until `hurry`; a task not done by then is
/// aborted (its figures so far stand).
pub async fn join_within(task: tokio::task::JoinHandle<()>, limit: Duration, hurry: &Hurry) {
    let abort = task.abort_handle();
    tokio::select! {
        _ = tokio::time::timeout(limit, task) => {}
        _ = hurry.cancelled() => abort.abort(),
    }
}

/// Waits until `settled` holds, `limit` has passed or `hurry` is told, looking every 50 ms: a
/// lab's drain.
pub async fn drain_until(limit: Duration, hurry: &Hurry, settled: impl Fn() -> bool) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline && !settled() && !hurry.is_cancelled() {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(50)) => {}
            _ = hurry.cancelled() => {}
        }
    }
}

/// Where a lab runs: the embedded emulator unless an endpoint (or real AWS) is named.
#[derive(Clone, Debug, Default)]
pub struct TargetOptions {
    /// Measure this endpoint (or real AWS with `aws = true`) instead of the embedded emulator.
    pub endpoint_url: Option<String>,
    pub aws: bool,
    pub region: Option<String>,
    /// Embedded emulator only: the latency profile (default: the scenario's) and limit overrides.
    pub latency_profile: Option<String>,
    pub limits_file: Option<std::path::PathBuf>,
    pub limit_overrides: Vec<String>,
    /// Embedded emulator only: Kinesis operations it answers as an endpoint lacking them does.
    pub lacking: Vec<String>,
    /// Faults to inject, beside the scenario's (`--fault`).
    pub faults: Vec<latlab_core::faults::FaultSpec>,
    /// Each lab's own options (`labs/X/target.rs`): the stream, the buckets, the Redis pair.
    pub labs: super::target::LabTargets,
    /// The run id its names and tags carry: the one its plan showed (a new one when None).
    pub run_id: Option<String>,
    /// What this host runs of labs that split into a producer and consumers (`--no-producer`,
    /// `--producer-only`, the scenario's `role`); None: the scenario's, else both.
    pub role: Option<Role>,
}

/// What one host runs of a lab that splits into a producer and its consumers, so that one host
/// can produce and others read what it produced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The producer and the consumers (one host, as latlab always ran).
    #[default]
    Both,
    /// The consumers only, reading what another host produces (`--no-producer`).
    Consumers,
    /// The producer only (`--producer-only`).
    Producer,
}

impl Role {
    /// The scenario key's value, as a user writes it.
    pub fn name(self) -> &'static str {
        match self {
            Role::Both => "both",
            Role::Consumers => "consumers",
            Role::Producer => "producer",
        }
    }

    /// The flag that asks for it (a scenario's `role` says the same).
    pub fn flag(self) -> &'static str {
        match self {
            Role::Both => "(no role flag)",
            Role::Consumers => "--no-producer",
            Role::Producer => "--producer-only",
        }
    }

    pub fn runs_producer(self) -> bool {
        self != Role::Consumers
    }

    pub fn runs_consumers(self) -> bool {
        self != Role::Producer
    }
}

impl TargetOptions {
    /// Whether the run measures another endpoint or real AWS rather than the embedded emulator.
    pub fn external(&self) -> bool {
        self.endpoint_url.is_some() || self.aws
    }

    /// What a plan and a cleanup know of it.
    pub fn plan_target(&self) -> crate::lab_kit::plan::Target {
        crate::lab_kit::plan::Target {
            external: self.external(),
        }
    }
}

/// What the embedded emulator tells the labs measuring it: the limits it enforces and the
/// counts only it can see. The run implements it over its emulator; labs never import one.
pub trait Emulated: Send + Sync {
    /// A limit it enforces, as `latlab emulate --print-limits` writes it, by its key as
    /// `--limit` names it (`kinesis.get_records_calls_per_sec`).
    fn limit(&self, key: &str) -> Option<String>;
    /// A count only it sees, by key (`s3.create_sessions`).
    fn count(&self, key: &str) -> Option<u64>;
}

/// The run's context, shared by every lab of it.
pub struct RunContext {
    /// The run's clock: every lab's seconds count from here.
    pub start: Instant,
    /// Distinguishes this run's records and resources from any other's (see [`super::run_id`]).
    pub run_id: String,
    /// The SDK's clients, when a lab of the run speaks AWS (None: a Redis-only run).
    pub clients: Option<Clients>,
    /// Every fault that fired, the emulator's and the labs' own.
    pub fault_log: Arc<FaultLog>,
    /// What the user named to measure.
    pub target: TargetOptions,
    /// The embedded emulator the run measures, if it measures one.
    pub emulated: Option<Arc<dyn Emulated>>,
    /// Told when the user asks the stopping run to stop at once (`Run::hurry`).
    pub hurry: Hurry,
}

impl RunContext {
    /// A new run's context, its clock started at `start` (the SDK's clients time their
    /// attempts from it too) and a new run id.
    pub fn new(
        start: Instant,
        clients: Option<Clients>,
        fault_log: Arc<FaultLog>,
        target: TargetOptions,
        emulated: Option<Arc<dyn Emulated>>,
    ) -> Arc<RunContext> {
        Arc::new(RunContext {
            start,
            run_id: target.run_id.clone().unwrap_or_else(super::run_id),
            clients,
            fault_log,
            target,
            emulated,
            hurry: Hurry::new(),
        })
    }

    /// A context that reaches nothing: for a lab's state built without a run (tests, fixtures).
    pub fn offline() -> Arc<RunContext> {
        RunContext::new(
            Instant::now(),
            None,
            Arc::default(),
            TargetOptions::default(),
            None,
        )
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Whole seconds since the run started.
    pub fn second(&self) -> u64 {
        self.start.elapsed().as_secs()
    }

    /// One line of what happened, to the run's log (`--log FILE`, at the levels of `LATLAB_LOG`).
    pub fn log(&self, line: impl Into<String>) {
        tracing::info!("{}", line.into());
    }

    /// The SDK's clients, or an error naming the lab that needs them.
    pub fn clients(&self, lab: super::LabKind) -> anyhow::Result<&Clients> {
        self.clients
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("{} needs the SDK's clients", lab.name()))
    }

    /// What this host runs of a lab that splits into a producer and consumers.
    pub fn role(&self) -> Role {
        self.target.role.unwrap_or_default()
    }

    /// Whether the run measures the embedded emulator.
    pub fn embedded(&self) -> bool {
        self.emulated.is_some()
    }
}
