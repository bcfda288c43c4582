//! The run: the supervisor that starts the scenario's labs (and, by default, the emulator they
//! measure), takes their snapshots, applies commands while they run and stops them.

pub mod export;
mod faults;
mod knobs;
mod labs;
mod model;
pub mod process;
pub mod record;
pub mod snapshot;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::aws::{Clients, Target};
use crate::emulator::limits::Limits;
use crate::emulator::profile::LatencyProfile;
use crate::emulator::{Emulator, EmulatorConfig};
use crate::faults::{FaultLog, FaultSpec, Service};
use crate::labs::kinesis::KinesisLab;
use crate::labs::kinesis::state::{LiveSettings, Shared};
use crate::labs::redis::snapshot::RedisSnapshot;
use crate::labs::{LabKind, kinesis, redis, s3};
use crate::scenario::Scenario;
use faults::check_faults;
use labs::Running;
pub use model::model_params;
use snapshot::{Backend, Snapshot};

/// Where a lab runs: the embedded emulator unless an endpoint (or real AWS) is named.
#[derive(Clone, Debug, Default)]
pub struct TargetOptions {
    /// Measure this endpoint (or real AWS with `aws = true`) instead of the embedded emulator.
    pub endpoint_url: Option<String>,
    pub aws: bool,
    pub region: Option<String>,
    /// Use this existing stream instead of creating one.
    pub stream: Option<String>,
    /// Embedded emulator only: the latency profile (default: the scenario's) and limit overrides.
    pub latency_profile: Option<String>,
    pub limits_file: Option<std::path::PathBuf>,
    pub limit_overrides: Vec<String>,
    /// Embedded emulator only: Kinesis operations it answers as an endpoint lacking them does.
    pub lacking: Vec<String>,
    /// Faults to inject, beside the scenario's (`--fault`).
    pub faults: Vec<crate::faults::FaultSpec>,
    /// Other endpoints: the S3 Standard bucket and S3 Express directory bucket to measure.
    pub s3_bucket: Option<String>,
    pub s3_express_bucket: Option<String>,
    /// Other Redis: the primary and its replica (redis:// or rediss://, with AUTH in the URL).
    pub redis_primary: Option<String>,
    pub redis_replica: Option<String>,
}

/// A command from the user, applied while the labs run: one of a lab's own, or one for all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Kinesis(kinesis::Command),
    S3(s3::Command),
    Redis(redis::Command),
    /// Every lab's histograms and counts start over.
    Reset,
    /// Inject one fault of this kind now, with its defaults (the TUI's fault menu).
    Fault(crate::faults::Kind),
    /// The embedded emulator's next latency profile.
    Profile,
}

impl Command {
    /// What it does, in a few words: "adding a GetRecords poller".
    pub fn what(self) -> String {
        use kinesis::Command as K;
        use redis::Command as R;
        use s3::Command as S;
        match self {
            Command::Kinesis(K::AddPoller) => "adding a GetRecords poller".into(),
            Command::Kinesis(K::RemovePoller) => "removing a GetRecords poller".into(),
            Command::Kinesis(K::PayloadUp) => "a larger Kinesis payload".into(),
            Command::Kinesis(K::PayloadDown) => "a smaller Kinesis payload".into(),
            Command::Kinesis(K::RateUp) => "a higher producer rate".into(),
            Command::Kinesis(K::RateDown) => "a lower producer rate".into(),
            Command::Kinesis(K::ProducerMode) => "switching the producer's put mode".into(),
            Command::Kinesis(K::PollerInterval) => "the pollers' next interval".into(),
            Command::Kinesis(K::RetryMode) => "switching the pollers' retry mode".into(),
            Command::Kinesis(K::RetryQuota) => "switching the pollers' retry quota".into(),
            Command::Kinesis(K::AddFanOut) => "adding a fan-out consumer".into(),
            Command::Kinesis(K::RemoveFanOut) => "removing a fan-out consumer".into(),
            Command::Kinesis(K::Reshard(kinesis::Scale::Double)) => {
                "doubling the stream's shards (UpdateShardCount)".into()
            }
            Command::Kinesis(K::Reshard(kinesis::Scale::Halve)) => {
                "halving the stream's shards (UpdateShardCount)".into()
            }
            Command::S3(S::ToggleClass) => "switching the S3 storage class".into(),
            Command::S3(S::PayloadUp) => "a larger S3 payload".into(),
            Command::S3(S::PayloadDown) => "a smaller S3 payload".into(),
            Command::S3(S::Concurrency) => "the next S3 concurrency".into(),
            Command::Redis(R::LinkNext) => "the next replication link profile".into(),
            Command::Redis(R::ValueNext) => "the next Redis value size".into(),
            Command::Redis(R::CpuLoad) => "toggling CPU load on the Redis primary".into(),
            Command::Redis(R::MemoryFull) => {
                "toggling a nearly full memory on the Redis primary".into()
            }
            Command::Reset => "resetting the histograms and counts".into(),
            Command::Fault(k) => format!("injecting {k}"),
            Command::Profile => "switching the latency profile".into(),
        }
    }

    /// The lab the command is for (None: every lab).
    pub fn lab(self) -> Option<LabKind> {
        match self {
            Command::Kinesis(_) => Some(LabKind::Kinesis),
            Command::S3(_) => Some(LabKind::S3),
            Command::Redis(_) => Some(LabKind::Redis),
            Command::Fault(k) => Some(match k.service() {
                crate::faults::Service::Kinesis => LabKind::Kinesis,
                crate::faults::Service::S3 => LabKind::S3,
                crate::faults::Service::Redis => LabKind::Redis,
            }),
            Command::Reset | Command::Profile => None,
        }
    }
}

/// The Redis lab on latlab's own servers, or on the endpoints the user named.
async fn start_redis(
    r: &crate::labs::redis::config::RedisScenario,
    opts: &TargetOptions,
    log: &Arc<FaultLog>,
    run_id: &str,
) -> anyhow::Result<redis::RedisLab> {
    match (&opts.redis_primary, &opts.redis_replica) {
        (Some(p), Some(rep)) => {
            let ends = redis::Endpoints::open(p, rep, false)?;
            let mut lab = redis::RedisLab::start(ends, None, r.value, run_id, log.clone()).await?;
            lab.node_type = r.node_type.clone();
            Ok(lab)
        }
        (None, None) => {
            let link = crate::labs::redis::local::LinkProfile::resolve(&r.link)?;
            let client_link = crate::labs::redis::local::LinkProfile::resolve(&r.client_link)?;
            let local = crate::labs::redis::local::LocalRedis::start(link, client_link).await?;
            let ends = redis::Endpoints::open(&local.primary_url(), &local.replica_url(), true)?;
            let mut lab =
                redis::RedisLab::start(ends, Some(local), r.value, run_id, log.clone()).await?;
            lab.node_type = r.node_type.clone();
            Ok(lab)
        }
        _ => anyhow::bail!(
            "--redis-primary and --redis-replica go together: name both, or neither to use latlab's own redis-server pair"
        ),
    }
}

/// What a run measures through: the SDK's clients (when a lab needs them), the embedded emulator
/// (unless an endpoint or AWS is named), and the backend every screen and report names.
struct Connected {
    clients: Option<Clients>,
    emulator: Option<Emulator>,
    backend: Backend,
    limits: Option<Limits>,
    /// The shard's GetRecords calls a second the gauge compares with.
    read_limit: u32,
}

/// Starts the embedded emulator (unless another endpoint is named) and the SDK's clients. The
/// emulator and clients serve Kinesis and S3; a Redis-only scenario needs neither.
async fn connect(
    scenario: &Scenario,
    opts: &TargetOptions,
    shared: &Shared,
    faults: &[FaultSpec],
    log: &Arc<FaultLog>,
) -> anyhow::Result<Connected> {
    if scenario.kinesis.is_none() && scenario.s3.is_none() {
        let label = match &opts.redis_primary {
            Some(p) => format!("Redis {}", crate::labs::redis::local::redact(p)),
            None => "redis-server primary and replica on 127.0.0.1 (real servers, shaped replication link)".into(),
        };
        return Ok(Connected {
            clients: None,
            emulator: None,
            backend: Backend {
                kind: "redis".into(),
                label,
                latency_profile: None,
                endpoint: None,
                region: String::new(),
                model: if opts.redis_primary.is_some() {
                    Vec::new()
                } else {
                    model_params(scenario, None)
                },
            },
            read_limit: 0,
            limits: None,
        });
    }
    if opts.endpoint_url.is_some() || opts.aws {
        let target = Target::Aws {
            endpoint_url: opts.endpoint_url.clone(),
            region: opts.region.clone(),
        };
        let clients = Clients::connect(&target, shared.start).await?;
        let backend = match &opts.endpoint_url {
            Some(url) => Backend {
                kind: "endpoint".into(),
                label: format!("endpoint {url} ({})", clients.region()),
                latency_profile: None,
                endpoint: Some(url.clone()),
                region: clients.region(),
                model: model_params(scenario, None),
            },
            None => Backend {
                kind: "aws".into(),
                label: format!("AWS {}", clients.region()),
                latency_profile: None,
                endpoint: None,
                region: clients.region(),
                model: model_params(scenario, None),
            },
        };
        return Ok(Connected {
            clients: Some(clients),
            emulator: None,
            backend,
            read_limit: 5,
            limits: None,
        });
    }
    let profile_name = opts
        .latency_profile
        .clone()
        .unwrap_or_else(|| scenario.latency_profile.clone());
    let mut overrides = scenario.emulator_limits.clone();
    overrides.extend(opts.limit_overrides.iter().cloned());
    let limits = Limits::load(opts.limits_file.as_deref(), &overrides)?;
    let profile = LatencyProfile::resolve(&profile_name)?;
    let emu = Emulator::start(EmulatorConfig {
        limits: limits.clone(),
        profile: profile.clone(),
        lacking: opts.lacking.clone(),
        faults: faults
            .iter()
            .filter(|f| f.kind.service() != Service::Redis)
            .cloned()
            .collect(),
        fault_log: log.clone(),
        ..EmulatorConfig::default()
    })
    .await?;
    let clients = Clients::connect(
        &Target::Emulator {
            url: emu.endpoint_url(),
        },
        shared.start,
    )
    .await?;
    Ok(Connected {
        clients: Some(clients),
        backend: Backend {
            kind: "emulator".into(),
            label: format!("embedded emulator, latency profile {profile_name}"),
            latency_profile: Some(profile_name),
            endpoint: Some(emu.endpoint_url()),
            region: crate::aws::EMULATOR_REGION.into(),
            model: model_params(scenario, Some((&profile, &limits))),
        },
        emulator: Some(emu),
        read_limit: limits.kinesis.get_records_calls_per_sec,
        limits: Some(limits),
    })
}

/// The S3 lab, on the emulator's buckets or on the two the user named for another endpoint.
async fn start_s3(
    s: &crate::labs::s3::config::S3Scenario,
    opts: &TargetOptions,
    clients: Option<&Clients>,
    run_id: &str,
) -> anyhow::Result<s3::S3Lab> {
    let external = opts.endpoint_url.is_some() || opts.aws;
    let given = match (&opts.s3_bucket, &opts.s3_express_bucket, external) {
        (Some(std), Some(exp), _) => Some(s3::Buckets {
            standard: std.clone(),
            express: exp.clone(),
        }),
        (_, _, false) => None,
        _ => anyhow::bail!(
            "the S3 lab on another endpoint needs --s3-bucket NAME (S3 Standard) and --s3-express-bucket NAME--AZID--x-s3 (a directory bucket); latlab writes only under their latlab/ prefix"
        ),
    };
    let stats = Arc::new(crate::metrics::SdkStats::default());
    let quota = crate::aws::QuotaPartition::new("latlab-s3");
    let client = clients.context("S3 needs the SDK's clients")?.s3(
        &crate::aws::RetrySettings::default(),
        &quota,
        stats.clone(),
    );
    s3::S3Lab::start(client, s, run_id, given, stats).await
}

/// The labs' last seconds, one value per second, oldest first, for the screen's sparklines.
pub struct History {
    pub kinesis: Option<kinesis::KinesisHistory>,
    /// Per (class, PUT/GET): the total time.
    pub s3: Vec<(
        crate::services::s3::Class,
        String,
        Vec<crate::metrics::Point>,
    )>,
    /// Per method: the lag.
    pub redis: Vec<(redis::Method, Vec<crate::metrics::Point>)>,
}

/// A running lab: the probes, the state they write, and (by default) the emulator they measure.
pub struct Lab {
    pub shared: Arc<Shared>,
    pub scenario: Scenario,
    /// What the figures come from; a live change of latency profile rewrites it.
    backend: parking_lot::Mutex<Backend>,
    /// The embedded emulator's limits (the model's parameters are read from them).
    limits: Option<Limits>,
    /// Latency profiles switched to while the run went on: (seconds, from, to).
    profile_changes: parking_lot::Mutex<Vec<(f64, String, String)>>,
    /// The labs running, in screen order.
    labs: Vec<Running>,
    /// Why the Redis lab is not running (redis-server missing, an endpoint unreachable).
    pub redis_unavailable: Option<String>,
    emulator: Option<Emulator>,
    read_limit: u32,
    /// Every fault that fired, the emulator's and Redis's.
    fault_log: Arc<FaultLog>,
    /// The faults set, as they read.
    faults_set: Vec<String>,
    /// latlab's own memory, descriptors and tasks over the run.
    process: process::ProcessWatch,
}

impl Lab {
    /// What the figures come from, now.
    pub fn backend(&self) -> Backend {
        self.backend.lock().clone()
    }

    pub async fn start(scenario: Scenario, opts: &TargetOptions) -> anyhow::Result<Lab> {
        let settings = LiveSettings::of(scenario.kinesis.as_ref());
        let shared = Shared::new(settings);
        let faults: Vec<FaultSpec> = scenario
            .faults
            .iter()
            .chain(&opts.faults)
            .cloned()
            .collect();
        check_faults(&scenario, opts, &faults)?;
        let fault_log = Arc::new(FaultLog::default());
        let Connected {
            clients,
            emulator,
            backend,
            read_limit,
            limits,
        } = connect(&scenario, opts, &shared, &faults, &fault_log).await?;
        shared.log(format!("backend: {}", backend.label));
        let s3 = match &scenario.s3 {
            Some(s) => Some(start_s3(s, opts, clients.as_ref(), &shared.run_id).await?),
            None => None,
        };
        let (redis, redis_unavailable) = match &scenario.redis {
            Some(r) => match start_redis(r, opts, &fault_log, &shared.run_id).await {
                Ok(lab) => (Some(lab), None),
                Err(e) if scenario.kinesis.is_some() || scenario.s3.is_some() => {
                    // The other labs keep working; the Redis pane says what is wrong.
                    shared.log(format!("Redis lab unavailable: {e:#}"));
                    (None, Some(format!("{e:#}")))
                }
                Err(e) => return Err(e),
            },
            None => (None, None),
        };
        let kinesis = match &scenario.kinesis {
            Some(k) => Some(
                KinesisLab::start(
                    shared.clone(),
                    clients.clone().context("Kinesis needs the SDK's clients")?,
                    k,
                    opts.stream.clone(),
                )
                .await?,
            ),
            None => None,
        };
        let labs = [
            kinesis.map(|k| Running::Kinesis(Box::new(k))),
            s3.map(|s| Running::S3(Box::new(s))),
            redis.map(|r| Running::Redis(Arc::new(r))),
        ]
        .into_iter()
        .flatten()
        .collect();
        let start = shared.start;
        let lab = Lab {
            shared,
            scenario,
            backend: parking_lot::Mutex::new(backend),
            limits,
            profile_changes: parking_lot::Mutex::new(Vec::new()),
            labs,
            redis_unavailable,
            emulator,
            read_limit,
            fault_log,
            faults_set: faults.iter().map(FaultSpec::describe).collect(),
            process: process::ProcessWatch::start(start),
        };
        for f in faults.iter().filter(|f| f.kind.service() == Service::Redis) {
            match lab.redis_lab() {
                Some(r) => r.add_fault(f.clone())?,
                None => lab.shared.log(format!(
                    "fault {} not set: the Redis lab is not running",
                    f.describe()
                )),
            }
        }
        Ok(lab)
    }

    /// Starts the labs' live loops: S3's PUT and GET, Redis's tries (Kinesis's producer and
    /// consumers start with the lab). The TUI, screenshots and a headless run without a set
    /// experiment run them.
    pub fn start_live(&self) {
        for lab in &self.labs {
            lab.start_live();
        }
    }

    fn kinesis(&self) -> Option<&KinesisLab> {
        self.labs.iter().find_map(|l| match l {
            Running::Kinesis(k) => Some(k.as_ref()),
            _ => None,
        })
    }

    fn s3(&self) -> Option<&s3::S3Lab> {
        self.labs.iter().find_map(|l| match l {
            Running::S3(s) => Some(s.as_ref()),
            _ => None,
        })
    }

    fn redis(&self) -> Option<&redis::RedisLab> {
        self.labs.iter().find_map(|l| match l {
            Running::Redis(r) => Some(r.as_ref()),
            _ => None,
        })
    }

    /// The Redis conditions a headless run measures, when the scenario sets them.
    fn conditions(&self) -> Option<&crate::labs::redis::config::RedisScenario> {
        self.redis()
            .and(self.scenario.redis.as_ref())
            .filter(|r| !r.conditions.is_empty())
    }

    /// Whether the scenario sets an experiment that runs to its own end (the S3 matrix, the Redis
    /// conditions) rather than for its duration.
    pub fn has_experiment(&self) -> bool {
        self.s3().is_some_and(|s| !s.scenario.matrix.is_empty()) || self.conditions().is_some()
    }

    /// Runs the set experiments to their end: the S3 matrix, then the Redis conditions (`quick`:
    /// their short forms). `say` hears what is being measured.
    pub async fn run_experiment(
        &self,
        quick: bool,
        say: &(dyn Fn(String) + Send + Sync),
    ) -> anyhow::Result<()> {
        if let Some(s3) = self.s3().filter(|s| !s.scenario.matrix.is_empty()) {
            s3.run_matrix(quick, say).await?;
        }
        if let (Some(redis), Some(r)) = (self.redis(), self.conditions()) {
            let tries = if quick { r.quick_tries } else { r.tries };
            redis.run_conditions(&r.conditions, tries, say).await?;
        }
        Ok(())
    }

    /// The labs' last `window` seconds, for the screen's sparklines.
    pub fn history(&self, window: usize) -> History {
        History {
            kinesis: self.kinesis().map(|k| k.history(window)),
            s3: self.s3().map_or_else(Vec::new, |s| s.history(window)),
            redis: self.redis().map_or_else(Vec::new, |r| r.history(window)),
        }
    }

    pub fn emulator(&self) -> Option<&Emulator> {
        self.emulator.as_ref()
    }

    pub fn snapshot(&self, complete: bool) -> Snapshot {
        let shared = &self.shared;
        let kinesis = self
            .kinesis()
            .map(|k| k.snapshot(complete, self.read_limit));
        let s3 = self.s3().map(|l| {
            l.snapshot(
                self.emulator
                    .as_ref()
                    .map(|e| e.s3().stats().create_sessions),
            )
        });
        let redis = match (self.redis(), &self.redis_unavailable) {
            (Some(r), _) => Some(r.snapshot()),
            (None, Some(why)) => Some(RedisSnapshot::unavailable(why)),
            (None, None) => None,
        };
        Snapshot {
            scenario: self.scenario.name.clone(),
            backend: self.backend(),
            elapsed_secs: shared.elapsed().as_secs_f64(),
            producing_secs: shared.producing_for().as_secs_f64(),
            complete,
            kinesis,
            s3,
            redis,
            faults: snapshot::FaultsSnapshot::of(
                &self.fault_log,
                self.faults_set.clone(),
                shared.start,
            ),
            process: self.process.snapshot(),
        }
    }

    /// Applies a command; returns the line the screen confirms it with.
    pub async fn apply(&self, cmd: Command) -> anyhow::Result<String> {
        match cmd {
            Command::Reset => {
                self.shared.reset();
                for lab in &self.labs {
                    lab.reset();
                }
                self.fault_log.clear();
                Ok("histograms and counts reset".into())
            }
            Command::Fault(kind) => self.inject(kind),
            Command::Profile => self.next_profile(),
            Command::Kinesis(c) => {
                let k = self.kinesis().context("no Kinesis lab in this scenario")?;
                k.apply(c).await
            }
            Command::S3(c) => Ok(self.s3().context("no S3 lab in this scenario")?.apply(c)),
            Command::Redis(c) => self
                .redis()
                .with_context(|| {
                    self.redis_unavailable
                        .clone()
                        .unwrap_or_else(|| "no Redis lab in this scenario".into())
                })?
                .apply(c),
        }
    }

    /// Ends the run: stops the producer, lets consumers drain, takes the final snapshot, removes
    /// what latlab created. Returns the snapshot and anything that could not be cleaned up.
    pub async fn finish(self) -> (Snapshot, Vec<String>) {
        self.finish_with(&mut |_| {}).await
    }

    /// [`Lab::finish`], with `last` seeing the lab once its probes have stopped and drained,
    /// before anything is cleaned up (a recording's last second).
    pub async fn finish_with(
        mut self,
        last: &mut (dyn FnMut(&Lab) + Send),
    ) -> (Snapshot, Vec<String>) {
        self.process.sample_now();
        for lab in &self.labs {
            lab.stop().await;
        }
        last(&self);
        let snap = self.snapshot(true);
        let mut problems: Vec<String> = self.profile_problem().into_iter().collect();
        for lab in std::mem::take(&mut self.labs) {
            problems.extend(lab.cleanup().await);
        }
        if let Some(why) = self.redis_unavailable.take() {
            problems.push(format!("the Redis lab did not run: {why}"));
        }
        drop(self.emulator.take());
        tokio::time::sleep(Duration::from_millis(1)).await;
        (snap, problems)
    }
}
