//! The one interface every lab implements, in its own folder: how it starts from the run's
//! context, what its commands do, and how it stops. The run's supervisor drives every lab
//! through it (statically: the registry in `mod.rs` names each lab's type).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::{LabKind, RunContext};
use crate::faults::FaultSpec;
use crate::services::Service;

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

pub trait Lab: Sized + Send + Sync + 'static {
    /// Its kind in the registry.
    const KIND: LabKind;
    /// As screens name it: "Kinesis".
    const NAME: &'static str;
    /// A built-in scenario that runs it alone.
    const DEMO: &'static str;
    /// The service it measures.
    const SERVICE: Service;

    /// Its own built-in scenarios, (name, file text), kept in its folder: `latlab scenarios`
    /// lists them after latlab's own (none by default: the first labs' are in `scenarios/`).
    const SCENARIOS: &'static [(&'static str, &'static str)] = &[];

    /// Whether it splits into a producer and consumers that may run on different hosts, one
    /// host producing and others reading what it produced (`--no-producer`, `--producer-only`,
    /// the scenario's `role`): such a lab reads [`crate::labs::RunContext::role`] as it starts.
    /// A run with a role refuses a scenario with any lab that does not.
    const ROLES: bool = false;

    /// What it says of several hosts' runs of one scenario taken together (`latlab merge`): one
    /// line each, from every host's part of its report (None where the host's report has no
    /// part of it).
    fn fleet(
        _hosts: &[crate::labs::hosts::HostPart<'_, Self::Snapshot>],
    ) -> Vec<crate::labs::hosts::Line> {
        Vec::new()
    }

    /// Whether its figures count from the moment it starts (a producer's period): such a lab
    /// starts after the others, so their set-up does not eat into what it measures.
    const MEASURES_FROM_START: bool = false;

    /// How many parts the subject of one of its series has: a consumer (1); a storage class
    /// and an operation (2).
    const SUBJECT_PARTS: usize;
    /// The quantities its series measure: `arrival_to_receive`, `total`, `lag`.
    const QUANTITIES: &'static [&'static str];

    /// Its share of its column on the overview (the others' weights beside it).
    const OVERVIEW_WEIGHT: u16 = 3;
    /// Whether it leads the overview: on a wide screen it takes the left and the other labs
    /// stack on the right (the lab whose panes are tallest).
    const OVERVIEW_LEAD: bool = false;

    /// Its key rows (`labs/X/keys.rs`): each key and the command it sends.
    const KEYS: &'static [crate::view::keys::LabKey<Self::Command>];

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
    type Command: Copy + std::fmt::Debug + PartialEq + Eq + Send + Sync + 'static;
    /// Its figures at one moment, for screens, reports and recordings.
    type Snapshot: Clone + std::fmt::Debug + PartialEq + Send + 'static;
    /// Its last seconds, one value per second, for the sparklines.
    type History: Clone + std::fmt::Debug + PartialEq + Send + 'static;

    /// Its sections of the text or Markdown report (`labs/X/report.rs`), from its snapshot, the
    /// run, the seed's figures for it and every compared cell.
    fn write(
        snap: &Self::Snapshot,
        cx: &crate::section::Cx<'_, Self::Seed>,
        out: &mut String,
        md: bool,
    );

    /// Its figures beside the seed's, each cell labelled (`crate::section::compare`).
    fn compare(
        snap: &Self::Snapshot,
        seed: &Self::Seed,
        run: &crate::section::Run<'_>,
        cmp: &mut crate::section::compare::Comparer,
    );

    /// Its rows of the report's CSV.
    fn csv(snap: &Self::Snapshot, rows: &mut crate::section::CsvRows);

    /// Its lines of the report's opening facts (`stream`, `SDK`: what it measured, set up how),
    /// with its seed's when the scenario has one; none by default.
    fn facts(_snap: &Self::Snapshot, _seed: Option<&Self::Seed>) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// Every cell id its seed can be compared on, whatever a run measured.
    fn seed_ids(seed: &Self::Seed, ids: &mut Vec<String>);

    /// Its part of the JSON report (`latlab-run-report/2`, `labs/X/json.rs`): the schema's types,
    /// beside their conversions both ways.
    type Json: serde::Serialize + serde::de::DeserializeOwned + ReportPart;

    /// Its snapshot in the report's public form.
    fn to_json(snap: &Self::Snapshot) -> Self::Json;

    /// Its snapshot back from the report's public form.
    fn from_json(json: Self::Json) -> Self::Snapshot;

    /// Its part of the run's model (`crate::provenance`): the parameters its scenario measures
    /// against, each with its source; none by default.
    fn model(_scenario: &Self::Scenario) -> Vec<crate::provenance::Param> {
        Vec::new()
    }

    /// Readies its scenario for a headless run of `duration` (a producer that stops by itself
    /// after it); nothing by default.
    fn for_duration(_scenario: &mut Self::Scenario, _duration: Duration) {}

    /// Checks its section of the scenario file (`text`: the whole file, for errors that name a
    /// line) and makes its scenario.
    fn parse(file: Self::File, text: &str) -> anyhow::Result<Self::Scenario>;

    /// Checks the seed's figures against its scenario (a seed row naming a consumer the
    /// scenario lacks); nothing to check by default.
    fn check_seed(_seed: &Self::Seed, _scenario: &Self::Scenario) -> anyhow::Result<()> {
        Ok(())
    }

    /// Its part of a run's plan (`labs/X/plan.rs`, `latlab plan`): what it would create and
    /// what it only uses, every call it would make, and its configuration at list price. It
    /// calls nothing but reads (Describe, List, Head) on `cx`'s clients.
    fn plan(
        cx: &crate::plan::PlanContext<'_>,
        scenario: &Self::Scenario,
    ) -> impl Future<Output = crate::plan::LabPlan> + Send;

    /// What runs left of its resources on the target (`labs/X/cleanup.rs`, `latlab cleanup`):
    /// those latlab's tag or prefix names, and those only named like them, which it leaves
    /// alone.
    fn leftovers(
        cx: &crate::plan::leftovers::CleanupContext<'_>,
    ) -> impl Future<Output = crate::plan::leftovers::Found> + Send;

    /// Deletes one of its leftovers; the service's reason when it cannot.
    fn remove(
        cx: &crate::plan::leftovers::CleanupContext<'_>,
        item: &crate::plan::leftovers::Leftover,
    ) -> impl Future<Output = Result<(), String>> + Send;

    /// Creates (or finds) what it measures and starts its probes, on the run's context.
    fn start(
        ctx: &Arc<RunContext>,
        scenario: &Self::Scenario,
    ) -> impl Future<Output = anyhow::Result<Self>> + Send;

    /// Its snapshot when it could not start, saying why, so that the run's other labs go on
    /// without it; None (the default): a lab that cannot start stops the run.
    fn unavailable(_why: &str) -> Option<Self::Snapshot> {
        None
    }

    /// Starts the live loop a run without a set experiment runs (nothing: its probes start with
    /// it).
    fn start_live(&self) {}

    /// A fixed sample of its figures and sparklines, made up (never measured), and the scenario
    /// a screen of it alone is named after: what the screen tests, the render benchmark and the
    /// cost examples draw (`labs/X/sample.rs`).
    fn sample() -> (&'static str, Self::Snapshot, Self::History);

    /// Its sample with every optional part its report can carry filled in (a headless run's
    /// results), for the report schema's test; the sample itself by default.
    fn sample_full() -> Self::Snapshot {
        Self::sample().1
    }

    /// Its own `latlab doctor` checks (`labs/X/doctor.rs`): what it needs beyond the endpoint's
    /// operations, which the doctor probes for every lab.
    fn doctor(
        cx: &crate::labs::check::DoctorContext<'_>,
    ) -> impl Future<Output = Vec<crate::labs::check::Check>> + Send;

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

    /// What its tab shows (`crate::view`), from its snapshot and its last seconds (None: none
    /// yet).
    fn view(snap: &Self::Snapshot, history: Option<&Self::History>) -> crate::view::LabView;

    /// Its parts of the screen's header (none by default).
    fn header(_snap: &Self::Snapshot) -> Vec<crate::view::HeaderPart> {
        Vec::new()
    }

    /// The status line under its tab when no message is shown: what its figures rest on.
    fn status(snap: &Self::Snapshot) -> String;

    /// Its rows of the overview's brief table (lab, what, p50, p99, max, count, counts).
    fn brief(snap: &Self::Snapshot) -> Vec<Vec<crate::view::Text>>;

    /// Rows its tab needs to show every pane with a row of sparkline.
    fn min_rows(snap: &Self::Snapshot) -> u16;

    /// Its configuration at list price (`labs/X/cost.rs`), with the price keys it used; None when
    /// there is nothing to price (it could not start). `complete`: the run has ended.
    fn cost(
        snap: &Self::Snapshot,
        complete: bool,
        prices: &crate::cost::Prices,
    ) -> Option<(crate::cost::LabCost, Vec<String>)>;

    /// The key a recording's frame writes its gauge series under (`read_rate`: Kinesis's
    /// GetRecords calls a second per shard); None (the default): it has no gauge series.
    const GAUGE: Option<&'static str> = None;

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
    /// bursts), from its snapshot.
    fn watched(snap: &Self::Snapshot) -> Vec<crate::labs::series::Watched>;

    /// Its part of a headless run's progress line (None: it has none).
    fn progress(_snap: &Self::Snapshot) -> Option<String> {
        None
    }

    /// Its figures as metric families for the Prometheus export (`labs/X/metrics.rs`), from its
    /// snapshot and its series' whole histograms (`series`: its own, from [`Lab::histograms`]).
    fn metric_families(
        snap: &Self::Snapshot,
        series: &[crate::labs::series::Histogrammed],
    ) -> Vec<crate::metrics::exposition::Family>;

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

    /// Its trade-off table for the report's cost section (None: it has none); `snap` is None when
    /// it is not in the run (the JSON still carries the table's key, empty).
    fn unit_costs(
        snap: Option<&Self::Snapshot>,
        prices: &crate::cost::Prices,
    ) -> Option<crate::cost::UnitCosts>;

    /// Its histograms and counts start over.
    fn reset(&self);

    /// Its figures now; `complete`: the run has ended and its probes drained.
    fn snapshot(&self, complete: bool) -> Self::Snapshot;

    /// Its last `window` seconds.
    fn history(&self, window: usize) -> Self::History;

    /// Every series' whole histogram now, each copied under its own lock, one at a time: the
    /// recorder's logs and the Prometheus export both read them here.
    fn histograms(&self) -> Vec<super::series::Histogrammed>;

    /// What a command does, in a few words: "adding a GetRecords poller".
    fn what(cmd: Self::Command) -> &'static str;

    /// Applies a command; returns the line the screen confirms it with.
    fn apply(&self, cmd: Self::Command) -> impl Future<Output = anyhow::Result<String>> + Send;

    /// Sets a fault the lab injects itself (those of a service the emulator does not serve).
    fn add_fault(self: &Arc<Self>, spec: FaultSpec) -> anyhow::Result<()> {
        anyhow::bail!("{} is injected by the embedded emulator", spec.kind)
    }

    /// How long it measured, when its figures are rates over a producing period (the Kinesis
    /// producer's); None when they are not.
    fn measured_for(&self) -> Option<Duration> {
        None
    }

    /// Stops its probes and lets them drain.
    fn stop(&self) -> impl Future<Output = ()> + Send;

    /// Removes what it created; returns what could not be removed.
    fn cleanup(&self) -> impl Future<Output = Vec<String>> + Send;
}
