//! The S3 lab behind the one lab interface: on the emulator's buckets, or on the two the user
//! named for another endpoint.

use std::sync::Arc;

use super::config::S3Scenario;
use super::{Buckets, Command, S3Lab, snapshot::S3Snapshot};
use crate::labs::series::{Histogrammed, SeriesId};
use crate::labs::{Lab, LabKind, RunContext};
use crate::services::Service;
use crate::services::s3::Class;

impl Lab for S3Lab {
    const KIND: LabKind = LabKind::S3;
    const NAME: &'static str = "S3";
    const DEMO: &'static str = "s3-demo";
    const SERVICE: Service = Service::S3;
    /// A storage class and an operation.
    const SUBJECT_PARTS: usize = 2;
    /// Two panes to Redis's three.
    const OVERVIEW_WEIGHT: u16 = 2;
    const QUANTITIES: &'static [&'static str] = &["total"];

    const KEYS: &'static [crate::view::keys::LabKey<Command>] = super::keys::KEYS;
    type File = super::config::S3File;
    type Seed = super::config::S3Seed;
    type Json = super::json::S3;
    type Scenario = S3Scenario;
    type Command = Command;
    type Snapshot = S3Snapshot;
    /// Per (class, PUT/GET): the total time.
    type History = Vec<(Class, String, Vec<crate::metrics::Point>)>;

    fn write(
        snap: &Self::Snapshot,
        cx: &crate::section::Cx<'_, Self::Seed>,
        out: &mut String,
        md: bool,
    ) {
        super::report::write(snap, cx, out, md);
    }

    fn compare(
        snap: &Self::Snapshot,
        seed: &Self::Seed,
        run: &crate::section::Run<'_>,
        cmp: &mut crate::section::compare::Comparer,
    ) {
        super::report::compare(snap, seed, run, cmp);
    }

    fn csv(snap: &Self::Snapshot, rows: &mut crate::section::CsvRows) {
        super::report::csv(snap, rows);
    }

    fn seed_ids(seed: &Self::Seed, ids: &mut Vec<String>) {
        super::report::seed_ids(seed, ids);
    }

    fn to_json(snap: &Self::Snapshot) -> super::json::S3 {
        super::json::S3::from(snap)
    }

    fn from_json(json: super::json::S3) -> Self::Snapshot {
        json.into_snapshot()
    }

    fn parse(file: super::config::S3File, _text: &str) -> anyhow::Result<S3Scenario> {
        super::config::parse(file)
    }

    async fn plan(
        cx: &crate::plan::PlanContext<'_>,
        scenario: &Self::Scenario,
    ) -> crate::plan::LabPlan {
        super::plan::plan(cx, scenario).await
    }

    async fn leftovers(
        cx: &crate::plan::leftovers::CleanupContext<'_>,
    ) -> crate::plan::leftovers::Found {
        super::cleanup::leftovers(cx).await
    }

    async fn remove(
        cx: &crate::plan::leftovers::CleanupContext<'_>,
        item: &crate::plan::leftovers::Leftover,
    ) -> Result<(), String> {
        super::cleanup::remove(cx, item).await
    }

    async fn start(ctx: &Arc<RunContext>, scenario: &S3Scenario) -> anyhow::Result<Self> {
        let opts = &ctx.target;
        let given = match (&opts.s3_bucket, &opts.s3_express_bucket, opts.external()) {
            (Some(std), exp, _) => Some(Buckets {
                standard: std.clone(),
                // None named: S3 Standard is measured alone, and the pane says why.
                express: exp.clone().unwrap_or_default(),
            }),
            (_, _, false) => None,
            _ => anyhow::bail!(
                "the S3 lab on another endpoint needs --s3-bucket NAME (S3 Standard), and --s3-express-bucket NAME--AZID--x-s3 (a directory bucket) to measure S3 Express One Zone; latlab writes only under their latlab/ prefix"
            ),
        };
        let stats = Arc::new(crate::metrics::SdkStats::default());
        let quota = crate::aws::QuotaPartition::new("latlab-s3");
        let client = ctx.clients(LabKind::S3)?.s3(
            &crate::aws::RetrySettings::default(),
            &quota,
            stats.clone(),
        );
        let mut lab = S3Lab::open(client, scenario, &ctx.run_id, given, stats, ctx.start).await?;
        lab.emulated = ctx.emulated.clone();
        Ok(lab)
    }

    fn start_live(&self) {
        S3Lab::start_live(self)
    }

    fn view(snap: &S3Snapshot, history: Option<&Self::History>) -> crate::view::LabView {
        super::view::model(snap, history.map_or(&[][..], |h| h.as_slice()))
    }

    fn status(snap: &S3Snapshot) -> String {
        super::view::status(snap)
    }

    fn brief(snap: &S3Snapshot) -> Vec<Vec<crate::view::Text>> {
        super::view::brief(snap)
    }

    fn min_rows(_snap: &S3Snapshot) -> u16 {
        super::view::MIN_ROWS
    }

    fn cost(
        snap: &S3Snapshot,
        _complete: bool,
        prices: &crate::cost::Prices,
    ) -> Option<(crate::cost::LabCost, Vec<String>)> {
        Some(super::cost::cost(snap, prices))
    }

    /// Each class and operation's total time, by `CLASS OP`.
    fn frame_series<'a>(
        _snap: &'a S3Snapshot,
        history: &'a Self::History,
    ) -> Option<crate::labs::series::FrameSeries<'a>> {
        Some(crate::labs::series::FrameSeries {
            series: history
                .iter()
                .map(|(class, op, points)| {
                    let id = SeriesId::new(LabKind::S3, &[class.storage_class(), op], "total");
                    (id, frame_key(*class, op), points.as_slice())
                })
                .collect(),
            gauge: &[],
            upto: history
                .iter()
                .filter_map(|(_, _, s)| s.last())
                .next_back()
                .map(|p| p.second.saturating_sub(1)),
        })
    }

    fn history_of_frames(
        snap: &S3Snapshot,
        points: &dyn Fn(&str) -> Vec<crate::metrics::Point>,
        _gauge: &dyn Fn() -> Vec<f64>,
    ) -> Self::History {
        snap.ops
            .iter()
            .map(|o| (o.class, o.op.clone(), points(&frame_key(o.class, &o.op))))
            .collect()
    }

    /// The scenario's matrix of classes, payloads and concurrencies.
    fn has_experiment(&self) -> bool {
        !self.scenario.matrix.is_empty()
    }

    async fn run_experiment(
        &self,
        quick: bool,
        say: &(dyn Fn(String) + Send + Sync),
    ) -> anyhow::Result<()> {
        if self.has_experiment() {
            self.run_matrix(quick, say).await?;
        }
        Ok(())
    }

    fn summaries(snap: &S3Snapshot) -> Vec<(SeriesId, &crate::metrics::Summary)> {
        snap.ops
            .iter()
            .map(|o| {
                let id = SeriesId::new(LabKind::S3, &[o.class.storage_class(), &o.op], "total");
                (id, &o.total)
            })
            .collect()
    }

    fn sample() -> (&'static str, Self::Snapshot, Self::History) {
        let (snapshot, history) = super::sample::sample();
        ("s3-demo", snapshot, history)
    }

    /// With a headless run's matrix row.
    fn sample_full() -> S3Snapshot {
        let mut s = super::sample::sample().0;
        s.matrix = Some(vec![super::MatrixRow {
            case: super::Case {
                objects: 1,
                size: 1_000_000_000,
            },
            upload_express_s: 10.0,
            upload_standard_s: 20.0,
            download_express_s: 5.0,
            download_standard_s: 9.0,
            repetitions: 1,
        }]);
        s
    }

    async fn doctor(cx: &crate::labs::check::DoctorContext<'_>) -> Vec<crate::labs::check::Check> {
        super::doctor::checks(cx).await
    }

    /// Each class and operation: its errors and SlowDowns.
    fn watched(s: &S3Snapshot) -> Vec<crate::labs::series::Watched> {
        s.ops
            .iter()
            .map(|op| crate::labs::series::Watched {
                name: format!("S3 {} {}", op.class.storage_class(), op.op),
                status: None,
                error: op.last_error.clone(),
                throttles: op.slow_downs,
            })
            .collect()
    }

    fn metric_families(
        snap: &S3Snapshot,
        series: &[Histogrammed],
    ) -> Vec<crate::metrics::exposition::Family> {
        super::metrics::families(snap, series)
    }

    fn sdk_clients(
        snap: &S3Snapshot,
    ) -> Vec<(
        Vec<(&'static str, String)>,
        &crate::metrics::sdk::SdkSnapshot,
    )> {
        vec![(vec![("client", "s3".to_string())], &snap.sdk)]
    }

    fn unit_costs(
        snap: Option<&S3Snapshot>,
        prices: &crate::cost::Prices,
    ) -> Option<crate::cost::UnitCosts> {
        Some(super::cost::unit_costs(snap, prices))
    }

    fn reset(&self) {
        self.shared.reset();
    }

    fn snapshot(&self, _complete: bool) -> S3Snapshot {
        S3Lab::snapshot(self)
    }

    fn history(&self, window: usize) -> Self::History {
        S3Lab::history(self, window)
    }

    /// Each storage class and operation's total time.
    fn histograms(&self) -> Vec<Histogrammed> {
        let ops = self.shared.ops.lock();
        ops.iter()
            .map(|((class, op), m)| Histogrammed {
                id: SeriesId::new(LabKind::S3, &[class.storage_class(), op], "total"),
                labels: Vec::new(),
                histogram: m.total.histogram().clone(),
            })
            .collect()
    }

    fn what(cmd: Command) -> &'static str {
        match cmd {
            Command::ToggleClass => "switching the S3 storage class",
            Command::PayloadUp => "a larger S3 payload",
            Command::PayloadDown => "a smaller S3 payload",
            Command::Concurrency => "the next S3 concurrency",
        }
    }

    async fn apply(&self, cmd: Command) -> anyhow::Result<String> {
        Ok(S3Lab::apply(self, cmd))
    }

    async fn stop(&self) {
        S3Lab::stop(self).await
    }

    async fn cleanup(&self) -> Vec<String> {
        S3Lab::cleanup(self).await
    }
}

/// An S3 series' key in a recording's frames: `EXPRESS_ONEZONE PUT`.
fn frame_key(class: Class, op: &str) -> String {
    format!("{} {op}", class.storage_class())
}
