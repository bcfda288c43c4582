//! The run: the supervisor that starts the scenario's labs (and, by default, the emulator they
//! measure), takes their snapshots, applies commands while they run and stops them.

pub mod cleanup;
pub mod export;
mod faults;
mod knobs;
mod labs;
mod model;
pub mod plan;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::aws::{Clients, Target};
use crate::labs::{LabKind, RunContext};
use crate::scenario::Scenario;
use crate::snapshot::{Backend, Snapshot};
use faults::check_faults;
pub use labs::{Command, History};
use labs::{Running, start_all, unavailable_into};
use latlab_core::faults::{FaultLog, FaultSpec};
use latlab_emulator::limits::Limits;
use latlab_emulator::profile::LatencyProfile;
use latlab_emulator::{Emulator, EmulatorConfig};
pub use model::model_params;

pub use crate::labs::TargetOptions;

/// What a run measures through: the SDK's clients (when a lab needs them), the embedded emulator
/// (unless an endpoint or AWS is named), and the backend every screen and report names.
struct Connected {
    clients: Option<Clients>,
    emulator: Option<Emulator>,
    backend: Backend,
    limits: Option<Limits>,
}

/// Starts the embedded emulator (unless another endpoint is named) and the SDK's clients. The
/// emulator and clients serve Kinesis and S3; a Redis-only scenario needs neither.
async fn connect(
    scenario: &Scenario,
    opts: &TargetOptions,
    start: std::time::Instant,
    faults: &[FaultSpec],
    log: &Arc<FaultLog>,
) -> anyhow::Result<Connected> {
    if !scenario_labs(scenario)
        .iter()
        .any(|l| l.service().is_some_and(|s| s.emulated()))
    {
        // No lab of the emulator's services: the run measures a lab's own target (the Redis
        // pair), named by that lab.
        let own = opts
            .labs
            .own()
            .filter(|(lab, _)| scenario_labs(scenario).contains(lab));
        let (kind, label, model) = match own {
            Some((lab, own)) => (
                lab.key().to_string(),
                own.label,
                if own.latlab_runs_it {
                    model_params(scenario, None)
                } else {
                    Vec::new()
                },
            ),
            None => (
                "local".to_string(),
                "latlab's own processes".to_string(),
                model_params(scenario, None),
            ),
        };
        return Ok(Connected {
            clients: None,
            emulator: None,
            backend: Backend {
                kind,
                label,
                latency_profile: None,
                endpoint: None,
                region: String::new(),
                model,
            },
            limits: None,
        });
    }
    if opts.endpoint_url.is_some() || opts.aws {
        let target = Target::Aws {
            endpoint_url: opts.endpoint_url.clone(),
            region: opts.region.clone(),
        };
        let clients = Clients::connect(&target, start).await?;
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
            .filter(|f| f.kind.service().emulated())
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
        start,
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
        limits: Some(limits),
    })
}

/// The labs a scenario runs, in screen order.
pub fn scenario_labs(scenario: &Scenario) -> Vec<LabKind> {
    macro_rules! present {
        ($($kind:ident: $module:ident::$ty:ident,)*) => {
            LabKind::ALL
                .into_iter()
                .filter(|l| match l {
                    $(LabKind::$kind => scenario.$module.is_some(),)*
                })
                .collect()
        };
    }
    crate::labs::for_each_lab!(present)
}

/// What this host runs of the scenario's labs: the flag's role, else the scenario's, else both.
/// A role needs every lab of the scenario to split into a producer and consumers, and an
/// endpoint other hosts reach too.
pub fn role(scenario: &Scenario, opts: &TargetOptions) -> anyhow::Result<crate::labs::Role> {
    let role = opts.role.or(scenario.role).unwrap_or_default();
    if role == crate::labs::Role::Both {
        return Ok(role);
    }
    let how = match opts.role {
        Some(_) => role.flag().to_string(),
        None => format!("the scenario's role = \"{}\"", role.name()),
    };
    // Each lab: (in the scenario, splits, name).
    macro_rules! split {
        ($($kind:ident: $module:ident::$ty:ident,)*) => {
            [$((
                scenario.$module.is_some(),
                <crate::labs::$module::$ty as crate::labs::Lab>::FACTS.roles,
                <crate::labs::$module::$ty as crate::labs::Lab>::FACTS.name,
            ),)*]
        };
    }
    let labs = crate::labs::for_each_lab!(split);
    if let Some((_, _, name)) = labs.iter().find(|(present, splits, _)| *present && !splits) {
        let splits: Vec<&str> = labs.iter().filter(|l| l.1).map(|l| l.2).collect();
        anyhow::bail!(
            "{how}: the {name} lab does not split into a producer and consumers (the {} lab does); run scenario {} without a role",
            splits.join(" and the "),
            scenario.name
        );
    }
    if !opts.external() {
        anyhow::bail!(
            "{how}: the embedded emulator lives and dies with this run, so no other host reaches it; point every host at one endpoint with --endpoint-url URL (`latlab emulate --allow-remote` on one of them) or --aws"
        );
    }
    Ok(role)
}

/// What the run's labs learn from the embedded emulator: its limits and its counts, by key.
struct EmulatorFacts {
    limits: Limits,
    counts: latlab_emulator::Counts,
}

impl crate::labs::context::Emulated for EmulatorFacts {
    fn limit(&self, key: &str) -> Option<String> {
        self.limits.get(key)
    }

    fn count(&self, key: &str) -> Option<u64> {
        self.counts.get(key)
    }
}

/// A run: the supervisor that starts the scenario's labs on one context, and (by default) the
/// emulator they measure.
pub struct Run {
    /// The run's clock, id, clients and fault log, shared by its labs.
    pub ctx: Arc<RunContext>,
    pub scenario: Scenario,
    /// What the figures come from; a live change of latency profile rewrites it.
    backend: parking_lot::Mutex<Backend>,
    /// The embedded emulator's limits (the model's parameters are read from them).
    limits: Option<Limits>,
    /// Latency profiles switched to while the run went on: (seconds, from, to).
    profile_changes: parking_lot::Mutex<Vec<(f64, String, String)>>,
    /// The labs running, in screen order.
    labs: Vec<Running>,
    /// The labs that could not start, and why (redis-server missing, an endpoint unreachable):
    /// their panes say so and the others go on.
    unavailable: Vec<(LabKind, String)>,
    emulator: Option<Emulator>,
    /// The faults set, as they read.
    pub faults_set: Vec<String>,
    /// latlab's own memory, descriptors and tasks over the run.
    process: crate::snapshot::process::ProcessWatch,
}

impl Run {
    /// What the figures come from, now.
    pub fn backend(&self) -> Backend {
        self.backend.lock().clone()
    }

    pub async fn start(mut scenario: Scenario, opts: &TargetOptions) -> anyhow::Result<Run> {
        let start = std::time::Instant::now();
        let mut opts = opts.clone();
        opts.role = Some(role(&scenario, &opts)?);
        let opts = &opts;
        if !opts.external() {
            // On latlab's own target the latency profile shapes the links the labs shape
            // themselves too (its `[links]`), before the model is read from the scenario.
            let name = opts
                .latency_profile
                .as_deref()
                .unwrap_or(&scenario.latency_profile);
            let profile = LatencyProfile::resolve(name)?;
            scenario.shaped_by(&profile);
        }
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
            limits,
        } = connect(&scenario, opts, start, &faults, &fault_log).await?;
        let emulated = emulator.as_ref().zip(limits.as_ref()).map(|(e, l)| {
            Arc::new(EmulatorFacts {
                limits: l.clone(),
                counts: e.counts(),
            }) as Arc<dyn crate::labs::context::Emulated>
        });
        let ctx = RunContext::new(start, clients, fault_log, opts.clone(), emulated);
        ctx.log(format!("backend: {}", backend.label));
        let present = scenario_labs(&scenario);
        // A lab that can say on its pane why it could not start does, when the run has other
        // labs to go on with.
        let (labs, failed) = start_all(&ctx, &scenario, |kind| {
            present.len() > 1 && unavailable_into(kind, "", None)
        })
        .await?;
        let mut unavailable = Vec::new();
        for (kind, e) in failed {
            ctx.log(format!("{} lab unavailable: {e:#}", kind.name()));
            unavailable.push((kind, format!("{e:#}")));
        }
        let lab = Run {
            ctx: ctx.clone(),
            scenario,
            backend: parking_lot::Mutex::new(backend),
            limits,
            profile_changes: parking_lot::Mutex::new(Vec::new()),
            labs,
            unavailable,
            emulator,
            faults_set: faults.iter().map(FaultSpec::describe).collect(),
            process: crate::snapshot::process::ProcessWatch::start(start),
        };
        for f in faults.iter().filter(|f| !f.kind.service().emulated()) {
            let kind = LabKind::of_service(f.kind.service());
            match lab.labs.iter().find(|l| Some(l.kind()) == kind) {
                Some(l) => l.add_fault(f.clone())?,
                None => lab.ctx.log(format!(
                    "fault {} not set: the {} lab is not running",
                    f.describe(),
                    kind.map_or("", LabKind::name)
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

    /// Every lab's series, each with its whole histogram now (copied under its own lock, one at
    /// a time): what the recorder logs and the Prometheus export reads.
    pub fn series(&self) -> Vec<crate::labs::series::Histogrammed> {
        self.labs.iter().flat_map(Running::histograms).collect()
    }

    /// `--max-cost`'s check, a second at a time: the configuration now at `chosen`'s list
    /// prices, added to what the run has accrued. Returns why the run must stop, when it must.
    pub fn check_cap(
        &self,
        cap: Option<&mut crate::lab_kit::cost::cap::Cap>,
        chosen: Option<&crate::lab_kit::cost::Chosen>,
    ) -> Option<String> {
        let (cap, chosen) = (cap?, chosen?);
        let hourly = self.snapshot(false).cost(chosen).hourly();
        cap.check(
            hourly,
            std::time::Instant::now(),
            crate::lab_kit::cost::cap::AHEAD,
        )
    }

    /// How long the run has gone on.
    pub fn elapsed(&self) -> Duration {
        self.ctx.elapsed()
    }

    /// How long the run's figures were measured over: a producing lab's period (the Kinesis
    /// producer's), zero when no lab of the run has one.
    pub fn producing_for(&self) -> Duration {
        self.labs
            .iter()
            .find_map(Running::measured_for)
            .unwrap_or(Duration::ZERO)
    }

    /// Whether the scenario sets an experiment that runs to its own end (the S3 matrix, the Redis
    /// conditions) rather than for its duration.
    pub fn has_experiment(&self) -> bool {
        self.labs.iter().any(Running::has_experiment)
    }

    /// Runs the set experiments to their end, lab by lab in screen order (the S3 matrix, then
    /// the Redis conditions; `quick`: their short forms). `say` hears what is being measured.
    pub async fn run_experiment(
        &self,
        quick: bool,
        say: &(dyn Fn(String) + Send + Sync),
    ) -> anyhow::Result<()> {
        for lab in self.labs.iter().filter(|l| l.has_experiment()) {
            lab.run_experiment(quick, say).await?;
        }
        Ok(())
    }

    /// The labs' last `window` seconds, for the screen's sparklines.
    pub fn history(&self, window: usize) -> History {
        let mut history = History::default();
        for lab in &self.labs {
            lab.history_into(window, &mut history);
        }
        history
    }

    pub fn emulator(&self) -> Option<&Emulator> {
        self.emulator.as_ref()
    }

    pub fn snapshot(&self, complete: bool) -> Snapshot {
        let mut snap = Snapshot {
            elapsed_secs: self.elapsed().as_secs_f64(),
            producing_secs: self.producing_for().as_secs_f64(),
            complete,
            faults: crate::snapshot::FaultsSnapshot::of(
                &self.ctx.fault_log,
                self.faults_set.clone(),
                self.ctx.start,
            ),
            process: self.process.snapshot(),
            ..Snapshot::empty(self.scenario.name.clone(), self.backend())
        };
        for lab in &self.labs {
            lab.snapshot_into(complete, &mut snap);
        }
        for (kind, why) in &self.unavailable {
            unavailable_into(*kind, why, Some(&mut snap));
        }
        snap
    }

    /// Why a lab of the scenario is not running, if it is not.
    fn not_running(&self, kind: LabKind) -> String {
        self.unavailable
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or_else(
                || format!("no {} lab in this scenario", kind.name()),
                |(_, why)| why.clone(),
            )
    }

    /// Applies a command; returns the line the screen confirms it with.
    pub async fn apply(&self, cmd: Command) -> anyhow::Result<String> {
        match cmd {
            Command::Reset => {
                for lab in &self.labs {
                    lab.reset();
                }
                self.ctx.fault_log.clear();
                Ok("histograms and counts reset".into())
            }
            Command::Fault(kind) => self.inject(kind),
            Command::Profile => self.next_profile(),
            _ => {
                for lab in &self.labs {
                    if let Some(done) = lab.apply(cmd).await {
                        return done;
                    }
                }
                let kind = cmd.lab().context("a command for every lab")?;
                anyhow::bail!("{}", self.not_running(kind))
            }
        }
    }

    /// Ends the run: stops the producer, lets consumers drain, takes the final snapshot, removes
    /// what latlab created. Returns the snapshot and anything that could not be cleaned up.
    pub async fn finish(self) -> (Snapshot, Vec<String>) {
        self.finish_with(&mut |_| {}).await
    }

    /// [`Run::finish`], with `last` seeing the lab once its probes have stopped and drained,
    /// before anything is cleaned up (a recording's last second).
    /// [`Run::finish_with`], cut short when `now` resolves first (a second `q`, Ctrl-C): each
    /// lab's drain then ends at once, what it had not drained counting as unread, and `hurried`
    /// is told (to say so on the screen). The TUI and a headless run both stop this way.
    pub async fn finish_or_hurry(
        self,
        last: &mut (dyn FnMut(&Run) + Send),
        now: impl Future<Output = ()>,
        hurried: impl FnOnce(),
    ) -> (Snapshot, Vec<String>) {
        let hurry = self.ctx.hurry.clone();
        let finishing = self.finish_with(last);
        tokio::pin!(finishing, now);
        tokio::select! {
            done = &mut finishing => return done,
            () = &mut now => {}
        }
        hurry.cancel();
        hurried();
        finishing.await
    }

    /// What the run waits for while it stops, lab by lab: `stopping: Kinesis: the producer has
    /// stopped; consumers are draining · S3: the PUTs and GETs in flight finish`.
    pub fn stopping(&self) -> String {
        let labs: Vec<String> = self.labs.iter().map(Running::stopping).collect();
        if labs.is_empty() {
            "stopping".into()
        } else {
            format!("stopping: {}", labs.join(" · "))
        }
    }

    pub async fn finish_with(
        mut self,
        last: &mut (dyn FnMut(&Run) + Send),
    ) -> (Snapshot, Vec<String>) {
        self.process.sample_now();
        for lab in &self.labs {
            lab.stop(&self.ctx.hurry).await;
        }
        last(&self);
        let snap = self.snapshot(true);
        let mut problems: Vec<String> = self.profile_problem().into_iter().collect();
        for lab in std::mem::take(&mut self.labs) {
            problems.extend(lab.cleanup().await);
        }
        for (kind, why) in std::mem::take(&mut self.unavailable) {
            problems.push(format!("the {} lab did not run: {why}", kind.name()));
        }
        drop(self.emulator.take());
        tokio::time::sleep(Duration::from_millis(1)).await;
        (snap, problems)
    }
}
