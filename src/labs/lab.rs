//! What a lab is to the rest of latlab: one identity ([`Lab`]: its name, service and the types
//! its parts share) and a few narrow traits, each implemented in the file of the lab's folder
//! whose code it describes, in the spirit of mini-redis's one small shape per command:
//!
//! | trait          | the lab's file | what it answers                                              |
//! |----------------|----------------|--------------------------------------------------------------|
//! | [`Lab`]        | `mod.rs`       | its facts (name, demo, scenarios, service, ...) and types    |
//! | [`Setup`]      | `config.rs`    | its scenario section parsed and checked, its model           |
//! | [`Live`]       | `lab.rs`       | starting, commands, snapshots, stopping and cleaning up      |
//! | [`Shown`]      | `view.rs`      | its tab as data, header, status, brief rows, keys            |
//! | [`Fixture`]    | `sample.rs`    | a made-up sample for screen tests and benches                |
//! | [`Reported`]   | `report.rs`    | its report sections, seed cells, CSV, and what several hosts' |
//! |                |                | runs say together (none by default)                          |
//! | [`Measured`]   | `metrics.rs`   | its series for recordings, compare and Prometheus            |
//! | [`Planned`]    | `plan.rs`      | what a run would create and call, before it runs             |
//! | [`Cleanup`]    | `cleanup.rs`   | what runs left on a target, and removing it                  |
//! | [`Priced`]     | `cost.rs`      | its configuration at list price                              |
//! | [`Doctor`]     | `doctor.rs`    | its `latlab doctor` checks, its service's operations too     |
//! | [`Calibrated`] | `calibrate.rs` | its service's latency profile, measured (`latlab calibrate`)  |
//!
//! No trait shares its name with a type: `Live` is not `check::Probe`, `Measured` not
//! `metrics::Series`, `Reported` not `report::Report`, `Planned` not `plan::Plan`, `Priced` not
//! `report::cost::Cost`, `Shown` not `share::frame::Screen`. The four account traits' every
//! default means "nothing on any account".
//!
//! and three on its associated types: its command ([`LabCommand`], beside the enum), its part of
//! the JSON report ([`ReportJson`], `json.rs`) and its target options ([`LabTarget`],
//! `target.rs`). The registry (`labs/mod.rs`) asks each lab for all of them ([`Registered`]).
//!
//! One file, though long: the contract is read as a whole, each trait beside those it is
//! registered with, and most of its lines are the defaults that a lab of no account takes.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::{Facts, RunContext};
use latlab_core::faults::FaultSpec;

/// A lab's part of a report, its JSON (`Lab::Json`) or its seed (`Lab::Seed`): whether a report
/// of a run without the lab still carries its key, as `null`. True for the labs
/// `latlab-run-report/2` was frozen with; a lab added since is written only when the run has it,
/// so a report (or a recording's replay) of a run without it reads as it did before the lab
/// existed.
pub trait ReportPart {
    const REPORTED_WHEN_ABSENT: bool = false;
}

/// Whether a report leaves a lab's part out (serde's `skip_serializing_if`, the lab's type
/// inferred from the field's).
pub fn left_out<T: ReportPart>(part: &Option<T>) -> bool {
    part.is_none() && !T::REPORTED_WHEN_ABSENT
}

/// Who a lab is: its name, the service it measures, its built-in scenarios, and the types its
/// other parts share. Implemented beside the lab's type (`labs/X/mod.rs`).
pub trait Lab: Sized + Send + Sync + 'static {
    /// What it is, in one record: its name, demo, scenarios, service and every other fact the
    /// rest of latlab asks of it by kind.
    const FACTS: Facts;

    /// Its part of the scenario file, as parsed and checked.
    type Scenario: Clone + std::fmt::Debug + PartialEq + Send + Sync + 'static;
    /// Its section of the scenario file as written (`[kinesis]`), before it is checked.
    type File: serde::de::DeserializeOwned;
    /// The seed's own figures for it (`[seed.kinesis]`), printed beside its own.
    type Seed: ReportPart
        + Clone
        + std::fmt::Debug
        + PartialEq
        + serde::Serialize
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static;
    /// What its keys ask of it while it runs.
    type Command: LabCommand;
    /// Its figures at one moment, for screens, reports and recordings.
    type Snapshot: Clone + std::fmt::Debug + PartialEq + Send + 'static;
    /// Its last seconds, one value per second, for the sparklines.
    type History: Clone + std::fmt::Debug + PartialEq + Send + 'static;
    /// Its part of the JSON report (`latlab-run-report/2`, `labs/X/json.rs`): the schema's types,
    /// beside their conversions both ways.
    type Json: ReportJson<Self::Snapshot>;
    /// Where it measures, as the user names it (`labs/X/target.rs`): its flags and config file
    /// keys, declared once ([`crate::labs::target`]).
    type Target: LabTarget;
}

/// The seed of a lab no seed experiment measured (SQS, the test build's echo lab): a scenario's
/// `[seed.X]` can only name where figures would come from, and the lab has none to compare.
#[derive(Clone, Debug, PartialEq, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct NoSeed {
    pub source: String,
}

impl ReportPart for NoSeed {}

/// A lab's command: what one of its keys asks of it while it runs.
pub trait LabCommand: Copy + std::fmt::Debug + PartialEq + Eq + Send + Sync + 'static {
    /// What it does, in a few words: "adding a GetRecords poller".
    fn what(self) -> &'static str;
}

/// A lab's part of the JSON report, converted from its snapshot and back.
pub trait ReportJson<S>: serde::Serialize + serde::de::DeserializeOwned + ReportPart {
    /// Its snapshot in the report's public form.
    fn of(snap: &S) -> Self;
    /// Its snapshot back from the report's public form.
    fn into_snapshot(self) -> S;
}

/// Where a lab measures, as the user names it: one struct whose fields are its flags (clap) and
/// its config file's keys (serde), with [`LabTarget::KEYS`] saying what `config show` and
/// `config example` say of each (`labs/X/target.rs`).
pub trait LabTarget:
    clap::Args
    + clap::FromArgMatches
    + Clone
    + std::fmt::Debug
    + Default
    + PartialEq
    + serde::Serialize
    + serde::de::DeserializeOwned
    + Send
    + Sync
    + 'static
{
    /// Its keys of the config file, in the order `config show` lists them: each field's (its
    /// flag's long name, with `_`), and any key of its own without a flag. None by default.
    const KEYS: &'static [crate::labs::target::Key] = &[];

    /// What its options may name that keeps what runs leave outside any endpoint, for
    /// `latlab cleanup`'s message (`a Redis (--redis-primary URL)`); none by default.
    const KEEPS: Option<&'static str> = None;

    /// Checks the options as given (a pair given half); the error names the flags. `external`:
    /// the run measures an endpoint or AWS.
    fn check(&self, _external: bool) -> anyhow::Result<()> {
        Ok(())
    }

    /// What the config file's keys without a flag do to the options once its keys with one are
    /// in (the Redis password from the variable the file names); nothing by default.
    fn after_config(&mut self, _file: &dyn crate::labs::target::FileKeys) -> anyhow::Result<()> {
        Ok(())
    }

    /// What the run measures when it has no lab of the emulator's services: this lab's own
    /// target (the Redis pair); None (the default) for a lab measured through the run's
    /// endpoint.
    fn own(&self) -> Option<crate::labs::target::Own> {
        None
    }
}

/// Its part of the scenario file (`labs/X/config.rs`).
pub trait Setup: Lab {
    /// Checks its section of the scenario file (`text`: the whole file, for errors that name a
    /// line) and makes its scenario.
    fn parse(file: Self::File, text: &str) -> anyhow::Result<Self::Scenario>;

    /// Checks the seed's figures against its scenario (a seed row naming a consumer the
    /// scenario lacks); nothing to check by default.
    fn check_seed(_seed: &Self::Seed, _scenario: &Self::Scenario) -> anyhow::Result<()> {
        Ok(())
    }

    /// Its part of the run's model (`latlab_core::provenance`): the parameters its scenario measures
    /// against, each with its source; none by default.
    fn model(_scenario: &Self::Scenario) -> Vec<latlab_core::provenance::Param> {
        Vec::new()
    }

    /// Readies its scenario for a headless run of `duration` (a producer that stops by itself
    /// after it); nothing by default.
    fn for_duration(_scenario: &mut Self::Scenario, _duration: Duration) {}

    /// Takes what the run's latency profile says of links the lab shapes itself (the profile's
    /// `[links]`, such as the Redis lab's own servers'); nothing by default. Only runs on
    /// latlab's own target are shaped by a profile: never another endpoint or AWS.
    fn shaped_by(
        _scenario: &mut Self::Scenario,
        _profile: &latlab_emulator::profile::LatencyProfile,
    ) {
    }
}

/// The lab running: started on the run's context, driven by its commands, read by snapshots,
/// stopped and cleaned up (`labs/X/lab.rs`).
pub trait Live: Lab {
    /// Creates (or finds) what it measures and starts its probes, on the run's context.
    fn start(
        ctx: &Arc<RunContext>,
        scenario: &Self::Scenario,
        target: &Self::Target,
    ) -> impl Future<Output = anyhow::Result<Self>> + Send;

    /// Its snapshot when it could not start, saying why, so that the run's other labs go on
    /// without it; None (the default): a lab that cannot start stops the run.
    fn unavailable(_why: &str) -> Option<Self::Snapshot> {
        None
    }

    /// Starts the live loop a run without a set experiment runs (nothing: its probes start with
    /// it).
    fn start_live(&self) {}

    /// Whether the scenario sets it an experiment that runs to its own end (the S3 matrix, the
    /// Redis conditions) rather than for the run's duration; none by default.
    fn has_experiment(&self) -> bool {
        false
    }

    /// Runs its set experiment to the end (`quick`: its short form); `say` hears what is being
    /// measured.
    fn run_experiment(
        &self,
        _quick: bool,
        _say: &(dyn Fn(String) + Send + Sync),
    ) -> impl Future<Output = anyhow::Result<()>> + Send {
        async { Ok(()) }
    }

    /// Its histograms and counts start over.
    fn reset(&self);

    /// Its figures now; `complete`: the run has ended and its probes drained.
    fn snapshot(&self, complete: bool) -> Self::Snapshot;

    /// Its last `window` seconds.
    fn history(&self, window: usize) -> Self::History;

    /// Every series' whole histogram now, each copied under its own lock, one at a time: the
    /// recorder's logs and the Prometheus export both read them here. None by default (a lab
    /// whose figures are all counts).
    fn histograms(&self) -> Vec<super::series::Histogrammed> {
        Vec::new()
    }

    /// Applies a command; returns the line the screen confirms it with.
    fn apply(&self, cmd: Self::Command) -> impl Future<Output = anyhow::Result<String>> + Send;

    /// The run's latency profile changed while it runs (the `l` key): `scenario` is its part as
    /// the new profile shapes it ([`Setup::shaped_by`]). Applies what that changes of what the
    /// lab shapes itself, returning what it says of it; None (the default): nothing of it is
    /// shaped by the profile.
    fn reshape(&self, _scenario: &Self::Scenario) -> Option<String> {
        None
    }

    /// Sets a fault the lab injects itself (those of a service the emulator does not serve).
    fn add_fault(self: &Arc<Self>, spec: FaultSpec) -> anyhow::Result<()> {
        anyhow::bail!("{} is injected by the embedded emulator", spec.kind)
    }

    /// How long it measured, when its figures are rates over a producing period (the Kinesis
    /// producer's); None when they are not.
    fn measured_for(&self) -> Option<Duration> {
        None
    }

    /// Stops its probes and lets them drain; `hurry` told (a second `q` or Ctrl-C) ends the
    /// drain at once, and what was not drained counts as unread.
    fn stop(&self, hurry: &super::context::Hurry) -> impl Future<Output = ()> + Send;

    /// Removes what it created; returns what could not be removed. Nothing by default (a lab
    /// that creates nothing).
    fn cleanup(&self) -> impl Future<Output = Vec<String>> + Send {
        async { Vec::new() }
    }
}

/// What its tab and its parts of the screen show, as data (`labs/X/view.rs`).
pub trait Shown: Lab {
    /// Its key rows (`labs/X/keys.rs`): each key and the command it sends.
    const KEYS: &'static [crate::lab_kit::view::keys::LabKey<Self::Command>];

    /// What its tab shows (`crate::lab_kit::view`), from its snapshot and its last seconds (None: none
    /// yet).
    fn view(
        snap: &Self::Snapshot,
        history: Option<&Self::History>,
    ) -> crate::lab_kit::view::LabView;

    /// Its parts of the screen's header (none by default).
    fn header(_snap: &Self::Snapshot) -> Vec<crate::lab_kit::view::HeaderPart> {
        Vec::new()
    }

    /// The status line under its tab when no message is shown: what its figures rest on.
    fn status(snap: &Self::Snapshot) -> String;

    /// Its rows of the overview's brief table (lab, what, p50, p99, max, count, counts).
    fn brief(snap: &Self::Snapshot) -> Vec<Vec<crate::lab_kit::view::Text>>;

    /// Rows its tab needs to show every pane with a row of sparkline; by default one pane of a
    /// sparkline over a one-row table (its borders, a row of sparkline, the table's head and
    /// row, a line under it).
    fn min_rows(_snap: &Self::Snapshot) -> u16 {
        6
    }

    /// Its part of a headless run's progress line (None: it has none).
    fn progress(_snap: &Self::Snapshot) -> Option<String> {
        None
    }
}

/// A fixed sample of its figures and sparklines, made up (never measured): what the screen
/// tests, the render benchmark and the cost examples draw (`labs/X/sample.rs`).
pub trait Fixture: Lab {
    /// The sample, and the scenario a screen of it alone is named after.
    fn sample() -> (&'static str, Self::Snapshot, Self::History);

    /// Its sample with every optional part its report can carry filled in (a headless run's
    /// results), for the report schema's test; the sample itself by default.
    fn sample_full() -> Self::Snapshot {
        Self::sample().1
    }
}

/// Its sections of a finished run's report and its title in a comparison (`labs/X/report.rs`).
pub trait Reported: Lab {
    /// Its sections of the text or Markdown report, from its snapshot, the run, the seed's
    /// figures for it and every compared cell.
    fn write(
        snap: &Self::Snapshot,
        cx: &crate::lab_kit::section::Cx<'_, Self::Seed>,
        out: &mut String,
        md: bool,
    );

    /// Its figures beside the seed's, each cell labelled (`crate::lab_kit::section::compare`); nothing
    /// by default (a lab no seed measured).
    fn compare(
        _snap: &Self::Snapshot,
        _seed: &Self::Seed,
        _run: &crate::lab_kit::section::Run<'_>,
        _cmp: &mut crate::lab_kit::section::compare::Comparer,
    ) {
    }

    /// Its rows of the report's CSV.
    fn csv(snap: &Self::Snapshot, rows: &mut crate::lab_kit::section::CsvRows);

    /// Its lines of the report's opening facts (`stream`, `SDK`: what it measured, set up how),
    /// with its seed's when the scenario has one; none by default.
    fn facts(_snap: &Self::Snapshot, _seed: Option<&Self::Seed>) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// Every cell id its seed can be compared on, whatever a run measured; none by default.
    fn seed_ids(_seed: &Self::Seed, _ids: &mut Vec<String>) {}

    /// Its lines of the soak's summary (`report::soak`), from its part of a run's JSON report
    /// (`null` when the run has none): every count that must add up; returns the records it
    /// lost. Nothing by default.
    fn soak(_part: &serde_json::Value, _out: &mut String) -> u64 {
        0
    }

    /// What it says of several hosts' runs of one scenario taken together (`latlab merge`): one
    /// line each, from every host's part of its report (None where the host's report has no
    /// part of it). Nothing by default.
    fn fleet(
        _hosts: &[crate::labs::hosts::HostPart<'_, Self::Snapshot>],
    ) -> Vec<crate::labs::hosts::Line> {
        Vec::new()
    }
}

/// Its measured series as recordings, comparisons and the Prometheus export name and read them
/// (`labs/X/metrics.rs`).
pub trait Measured: Lab {
    /// Its sparklines as a recording's frame writes them, from its snapshot and history; None
    /// while the two disagree (a consumer added between them: the next tick writes it).
    fn frame_series<'a>(
        snap: &'a Self::Snapshot,
        history: &'a Self::History,
    ) -> Option<crate::labs::series::FrameSeries<'a>>;

    /// Its history at a recording's frame: `points(key)` is the series the frames wrote under
    /// `key`, `gauge()` its gauge, each the screen's window ending at its last whole second.
    fn history_of_frames(
        snap: &Self::Snapshot,
        points: &dyn Fn(&str) -> Vec<crate::metrics::Point>,
        gauge: &dyn Fn() -> Vec<f64>,
    ) -> Self::History;

    /// Each of its series with its summary in the snapshot: what a report's figures say of the
    /// series a recording logs (`latlab compare` of a report file).
    fn summaries(
        snap: &Self::Snapshot,
    ) -> Vec<(crate::labs::series::SeriesId, &crate::metrics::Summary)>;

    /// What a recording watches of its parts (`events.jsonl`: status changes, errors, throttle
    /// bursts), from its snapshot. Nothing by default.
    fn watched(_snap: &Self::Snapshot) -> Vec<crate::labs::series::Watched> {
        Vec::new()
    }

    /// Its figures as metric families for the Prometheus export, from its snapshot and its
    /// series' whole histograms (`series`: its own, from [`Live::histograms`]). By default one
    /// histogram family per quantity, `latlab_LAB_QUANTITY_seconds`, a sample per series with
    /// the series' labels.
    fn metric_families(
        _snap: &Self::Snapshot,
        series: &[crate::labs::series::Histogrammed],
    ) -> Vec<crate::metrics::exposition::Family> {
        use crate::metrics::exposition::{Family, Type, Value};
        let facts = Self::FACTS;
        facts
            .quantities
            .iter()
            .map(|q| {
                let mut f = Family::new(
                    format!("latlab_{}_{q}_seconds", facts.kind.key()),
                    Type::Histogram,
                    format!("{}: {}, in seconds.", facts.name, q.replace('_', " ")),
                );
                for h in series.iter().filter(|h| h.id.quantity == *q) {
                    f.push(h.labels.clone(), Value::histogram(&h.histogram));
                }
                f
            })
            .collect()
    }

    /// Its AWS SDK clients' counts, labelled (`client`, ...), for the export's SDK families;
    /// none by default (a lab that uses no AWS SDK).
    fn sdk_clients(
        _snap: &Self::Snapshot,
    ) -> Vec<(
        Vec<(&'static str, String)>,
        &crate::metrics::sdk::SdkSnapshot,
    )> {
        Vec::new()
    }

    /// Whether it runs: false when it could not start and its snapshot says why.
    fn runs(_snap: &Self::Snapshot) -> bool {
        true
    }
}

/// Its part of a run's plan (`labs/X/plan.rs`, `latlab plan`). A lab of no account (one that
/// creates nothing, calls no service and costs nothing) takes every default of this trait and of
/// [`Cleanup`], [`Priced`] and [`Doctor`]: its plan says so, it leaves nothing, has no price and
/// no check.
pub trait Planned: Lab {
    /// What it would create and what it only uses, every call it would make, and its
    /// configuration at list price. It calls nothing but reads (Describe, List, Head) on `cx`'s
    /// clients. By default: nothing on any account.
    fn plan(
        _cx: &crate::lab_kit::plan::PlanContext<'_>,
        _scenario: &Self::Scenario,
        _target: &Self::Target,
    ) -> impl Future<Output = crate::lab_kit::plan::LabPlan> + Send {
        async {
            let mut p =
                crate::lab_kit::plan::LabPlan::new(Self::FACTS.name, "latlab's own process");
            p.notes
                .push("it creates nothing and calls no service: nothing on any account".into());
            p
        }
    }
}

/// What runs left of its resources on the target (`labs/X/cleanup.rs`, `latlab cleanup`).
pub trait Cleanup: Lab {
    /// Those latlab's tag or prefix names, and those only named like them, which it leaves
    /// alone. None by default.
    fn leftovers(
        _cx: &crate::lab_kit::plan::leftovers::CleanupContext<'_>,
        _target: &Self::Target,
    ) -> impl Future<Output = crate::lab_kit::plan::leftovers::Found> + Send {
        async { crate::lab_kit::plan::leftovers::Found::default() }
    }

    /// Deletes one of its leftovers; the service's reason when it cannot. By default it has
    /// none, so any item named is not its own.
    fn remove(
        _cx: &crate::lab_kit::plan::leftovers::CleanupContext<'_>,
        _target: &Self::Target,
        item: &crate::lab_kit::plan::leftovers::Leftover,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let name = item.name.clone();
        async move {
            Err(format!(
                "the {} lab leaves nothing behind, not {name}",
                Self::FACTS.name
            ))
        }
    }
}

/// What it costs at list price (`labs/X/cost.rs`).
pub trait Priced: Lab {
    /// Its configuration at list price, with the price keys it used; None when there is nothing
    /// to price (it could not start, or it has no list price: the default). `complete`: the run
    /// has ended.
    fn cost(
        _snap: &Self::Snapshot,
        _complete: bool,
        _prices: &crate::lab_kit::cost::Prices,
    ) -> Option<(crate::lab_kit::cost::LabCost, Vec<String>)> {
        None
    }

    /// Its trade-off table for the report's cost section (None: it has none); `snap` is None when
    /// it is not in the run (the JSON still carries the table's key, empty).
    fn unit_costs(
        _snap: Option<&Self::Snapshot>,
        _prices: &crate::lab_kit::cost::Prices,
    ) -> Option<crate::lab_kit::cost::UnitCosts> {
        None
    }
}

/// Its own `latlab doctor` checks (`labs/X/doctor.rs`): its service's operations on the
/// endpoint the doctor found, and what else it needs (the stream or buckets given,
/// redis-server or the given Redis pair).
pub trait Doctor: Lab {
    /// One call of its service on the endpoint, made before any other: an endpoint that answers
    /// no lab's is one line, not thirty. None (the default): it measures no service of the
    /// endpoint's.
    fn ping(
        _cx: &crate::labs::check::DoctorContext<'_>,
    ) -> impl Future<Output = Option<crate::labs::check::Outcome>> + Send {
        async { None }
    }

    /// Every operation of its service it calls, each called once on a name that exists nowhere
    /// (nothing is created on an endpoint latlab does not own): its line, and each probe for
    /// the permissions line. None (the default): it calls no operation of the endpoint's.
    fn ops(
        _cx: &crate::labs::check::DoctorContext<'_>,
        _target: &Self::Target,
    ) -> impl Future<Output = Option<(crate::labs::check::Check, Vec<crate::labs::check::Probe>)>> + Send
    {
        async { None }
    }

    /// Its other checks: the stream or buckets given, redis-server or the given Redis pair.
    /// None by default.
    fn doctor(
        _cx: &crate::labs::check::DoctorContext<'_>,
        _target: &Self::Target,
    ) -> impl Future<Output = Vec<crate::labs::check::Check>> + Send {
        async { Vec::new() }
    }
}

/// What `latlab calibrate` measures of its service (`labs/X/calibrate.rs`): the parameters of
/// its part of a latency profile, on any target. By default it has no probe.
pub trait Calibrated: Lab {
    /// Whether it has a probe (`latlab calibrate --services` names it by its key).
    const CALIBRATES: bool = false;

    /// Whether its probe can run on this target (`embedded`: latlab's emulator); an error says
    /// what it needs. A service left out of the default list for it is said to be left out;
    /// named in `--services`, the error stops the calibration before anything is created.
    fn calibration_target(_embedded: bool, _target: &Self::Target) -> anyhow::Result<()> {
        Ok(())
    }

    /// What a probe of `samples` a figure would create and call, at list price: a line each.
    fn calibration_plan(
        _samples: usize,
        _run: &str,
        _embedded: bool,
        _target: &Self::Target,
        _prices: &crate::lab_kit::cost::Prices,
    ) -> Vec<crate::lab_kit::calibrate::PlanLine> {
        Vec::new()
    }

    /// Probes its service on the target and adds what it measured to `cal`; deletes what it
    /// created, whether the probe finished, failed or was cancelled.
    fn calibrate(
        _probe: &crate::lab_kit::calibrate::Probe,
        _target: &Self::Target,
        _cal: &mut crate::lab_kit::calibrate::Calibration,
    ) -> impl Future<Output = anyhow::Result<()>> + Send {
        async { Ok(()) }
    }
}

/// Every part the registry asks of a lab: a lab missing one is a compile error naming it.
pub trait Registered:
    Lab
    + Setup
    + Live
    + Shown
    + Fixture
    + Reported
    + Measured
    + Planned
    + Cleanup
    + Priced
    + Doctor
    + Calibrated
{
}

impl<L> Registered for L where
    L: Lab
        + Setup
        + Live
        + Shown
        + Fixture
        + Reported
        + Measured
        + Planned
        + Cleanup
        + Priced
        + Doctor
        + Calibrated
{
}

/// A snapshot that is its own part of the JSON report (its fields in the report's form, as the
/// echo lab's): written and read back as it is.
impl<S> ReportJson<S> for S
where
    S: serde::Serialize + serde::de::DeserializeOwned + ReportPart + Clone,
{
    fn of(snap: &S) -> S {
        snap.clone()
    }

    fn into_snapshot(self) -> S {
        self
    }
}

/// A lab's snapshot in the report's public form.
pub fn to_json<L: Lab>(snap: &L::Snapshot) -> L::Json {
    <L::Json as ReportJson<L::Snapshot>>::of(snap)
}

/// A lab's snapshot back from the report's public form.
pub fn from_json<L: Lab>(json: L::Json) -> L::Snapshot {
    <L::Json as ReportJson<L::Snapshot>>::into_snapshot(json)
}
