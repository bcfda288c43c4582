//! The SQS lab behind the one lab interface: its queues on the run's endpoint (the embedded
//! emulator's SQS, or the one named), created and tagged by the run and deleted at its end.

use std::sync::Arc;
use std::time::Duration;

use super::config::{SqsScenario, SqsSeed};
use super::snapshot::SqsSnapshot;
use super::{Command, History, Probes, SqsLab};
use crate::labs::series::{Histogrammed, SeriesId};
use crate::labs::{Lab, LabKind, RunContext};
use crate::services::Service;

/// How long the consumers may read what is left once the producer stops.
const DRAIN: Duration = Duration::from_secs(10);

impl Lab for SqsLab {
    const KIND: LabKind = LabKind::Sqs;
    const NAME: &'static str = "SQS";
    const DEMO: &'static str = "sqs-demo";
    const SERVICE: Service = Service::Sqs;
    /// A consumer.
    const SUBJECT_PARTS: usize = 1;
    const QUANTITIES: &'static [&'static str] = &["send_to_receive"];
    const OVERVIEW_WEIGHT: u16 = 3;
    const SCENARIOS: &'static [(&'static str, &'static str)] = &[
        ("sqs-demo", include_str!("scenarios/sqs-demo.toml")),
        (
            "queue-or-stream",
            include_str!("scenarios/queue-or-stream.toml"),
        ),
    ];

    const KEYS: &'static [crate::view::keys::LabKey<Command>] = super::keys::KEYS;
    type File = super::config::SqsFile;
    type Seed = SqsSeed;
    type Json = super::json::Sqs;
    type Scenario = SqsScenario;
    type Command = Command;
    type Snapshot = SqsSnapshot;
    type History = History;

    fn write(
        snap: &Self::Snapshot,
        cx: &crate::section::Cx<'_, Self::Seed>,
        out: &mut String,
        md: bool,
    ) {
        super::report::write(snap, cx, out, md);
    }

    /// No seed measured SQS: nothing is compared.
    fn compare(
        _snap: &Self::Snapshot,
        _seed: &Self::Seed,
        _run: &crate::section::Run<'_>,
        _cmp: &mut crate::section::compare::Comparer,
    ) {
    }

    fn csv(snap: &Self::Snapshot, rows: &mut crate::section::CsvRows) {
        super::report::csv(snap, rows);
    }

    fn facts(snap: &Self::Snapshot, _seed: Option<&Self::Seed>) -> Vec<(&'static str, String)> {
        super::report::facts(snap)
    }

    fn seed_ids(_seed: &Self::Seed, _ids: &mut Vec<String>) {}

    fn to_json(snap: &Self::Snapshot) -> super::json::Sqs {
        super::json::Sqs::from(snap)
    }

    fn from_json(json: super::json::Sqs) -> Self::Snapshot {
        json.into_snapshot()
    }

    /// The lab's own assumptions: Lambda's long poll and the producer's batching linger.
    fn model(s: &SqsScenario) -> Vec<crate::provenance::Param> {
        use crate::provenance::{Param, Provenance, Source};
        let mut params = Vec::new();
        if s.consumers
            .iter()
            .any(|c| matches!(c.kind, super::config::ConsumerKind::Lambda { .. }))
        {
            params.push(Param::new(
                "sqs.lambda_wait",
                format!("{} s", super::consumer::LAMBDA_WAIT_SECS),
                Provenance::new(
                    Source::Assumption,
                    "AWS's Lambda guide says the event source mapping 'uses long polling' on a \
                     queue but not for how long; the longest wait ReceiveMessage allows is assumed",
                ),
            ));
        }
        params.push(Param::new(
            "sqs.batch_linger",
            crate::units::format_duration(super::producer::LINGER),
            Provenance::new(
                Source::Assumption,
                "how long the producer gathers messages for one SendMessageBatch with batching \
                 on: latlab's choice, in every batched message's latency",
            ),
        ));
        params
    }

    fn for_duration(s: &mut SqsScenario, duration: Duration) {
        s.produce_for = Some(duration);
    }

    fn parse(file: super::config::SqsFile, _text: &str) -> anyhow::Result<SqsScenario> {
        super::config::parse(file)
    }

    fn check_seed(seed: &SqsSeed, _s: &SqsScenario) -> anyhow::Result<()> {
        anyhow::bail!(
            "seed.sqs (source '{}'): no seed measured SQS, so the SQS lab has no figures to compare; remove [seed.sqs]",
            seed.source
        )
    }

    async fn plan(cx: &crate::plan::PlanContext<'_>, s: &SqsScenario) -> crate::plan::LabPlan {
        super::plan::plan(cx, s).await
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

    async fn start(ctx: &Arc<RunContext>, s: &SqsScenario) -> anyhow::Result<Self> {
        let clients = ctx.clients(LabKind::Sqs)?.clone();
        let retry = crate::aws::RetrySettings::default();
        let n = std::sync::atomic::AtomicU32::new(0);
        let factory = move |stats: &Arc<crate::metrics::SdkStats>| {
            let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            super::client::client(&clients, &retry, &format!("latlab-sqs-{i}"), stats.clone())
        };
        let probes = Probes::start(Box::new(factory), &ctx.run_id, s).await?;
        Ok(SqsLab { probes })
    }

    /// A lab that could not create its queues says why; the run's other labs go on.
    fn unavailable(why: &str) -> Option<SqsSnapshot> {
        let mut s = SqsSnapshot::planned(&SqsScenario {
            consumers: Vec::new(),
            ..SqsScenario::default()
        });
        s.unavailable = Some(why.to_string());
        s.seconds = 0.0;
        Some(s)
    }

    fn runs(snap: &SqsSnapshot) -> bool {
        snap.unavailable.is_none()
    }

    fn view(snap: &SqsSnapshot, history: Option<&History>) -> crate::view::LabView {
        super::view::model(snap, history.map_or(&[][..], |h| h.as_slice()))
    }

    fn status(snap: &SqsSnapshot) -> String {
        super::view::status(snap)
    }

    fn brief(snap: &SqsSnapshot) -> Vec<Vec<crate::view::Text>> {
        super::view::brief(snap)
    }

    fn min_rows(snap: &SqsSnapshot) -> u16 {
        super::view::min_rows(snap)
    }

    fn cost(
        snap: &SqsSnapshot,
        _complete: bool,
        prices: &crate::cost::Prices,
    ) -> Option<(crate::cost::LabCost, Vec<String>)> {
        snap.unavailable
            .is_none()
            .then(|| super::cost::cost(snap, prices))
    }

    /// Each consumer's send -> receive, by its name.
    fn frame_series<'a>(
        snap: &'a SqsSnapshot,
        history: &'a History,
    ) -> Option<crate::labs::series::FrameSeries<'a>> {
        if history.len() != snap.consumers.len() {
            return None;
        }
        Some(crate::labs::series::FrameSeries {
            series: history
                .iter()
                .map(|(name, points)| {
                    let id = SeriesId::new(LabKind::Sqs, &[name], "send_to_receive");
                    (id, name.clone(), points.as_slice())
                })
                .collect(),
            gauge: &[],
            upto: history
                .iter()
                .filter_map(|(_, s)| s.last())
                .next_back()
                .map(|p| p.second.saturating_sub(1)),
        })
    }

    fn history_of_frames(
        snap: &SqsSnapshot,
        points: &dyn Fn(&str) -> Vec<crate::metrics::Point>,
        _gauge: &dyn Fn() -> Vec<f64>,
    ) -> History {
        snap.consumers
            .iter()
            .map(|c| (c.name.clone(), points(&c.name)))
            .collect()
    }

    fn summaries(snap: &SqsSnapshot) -> Vec<(SeriesId, &crate::metrics::Summary)> {
        snap.consumers
            .iter()
            .map(|c| {
                (
                    SeriesId::new(LabKind::Sqs, &[&c.name], "send_to_receive"),
                    &c.latency,
                )
            })
            .collect()
    }

    fn sample() -> (&'static str, Self::Snapshot, Self::History) {
        let (snapshot, history) = super::sample::sample();
        ("sqs-demo", snapshot, history)
    }

    async fn doctor(cx: &crate::labs::check::DoctorContext<'_>) -> Vec<crate::labs::check::Check> {
        super::doctor::checks(cx).await
    }

    /// Each consumer (its status, last error and throttles) and the producer.
    fn watched(s: &SqsSnapshot) -> Vec<crate::labs::series::Watched> {
        let mut w: Vec<crate::labs::series::Watched> = s
            .consumers
            .iter()
            .map(|c| crate::labs::series::Watched {
                name: format!("SQS {}", c.name),
                status: Some(c.status.clone()),
                error: c.last_error.clone(),
                throttles: c.sdk.counters.throttles,
            })
            .collect();
        w.push(crate::labs::series::Watched {
            name: "SQS producer".into(),
            status: Some(s.producer.status.clone()),
            error: s.producer.last_error.clone(),
            throttles: s.producer.sdk.counters.throttles,
        });
        w
    }

    fn progress(s: &SqsSnapshot) -> Option<String> {
        let received: u64 = s.consumers.iter().map(|c| c.counts.received).sum();
        let empty: u64 = s.consumers.iter().map(|c| c.empty_receives).sum();
        Some(format!(
            "SQS sent {} | received {received} | empty receives {empty} | throttled {}",
            s.producer.acknowledged, s.producer.sdk.counters.throttles
        ))
    }

    fn metric_families(
        snap: &SqsSnapshot,
        series: &[Histogrammed],
    ) -> Vec<crate::metrics::exposition::Family> {
        super::metrics::families(snap, series)
    }

    fn sdk_clients(
        snap: &SqsSnapshot,
    ) -> Vec<(
        Vec<(&'static str, String)>,
        &crate::metrics::sdk::SdkSnapshot,
    )> {
        let mut out = vec![(
            vec![("client", "sqs-producer".to_string())],
            &snap.producer.sdk,
        )];
        for c in &snap.consumers {
            out.push((vec![("client", format!("sqs-{}", c.name))], &c.sdk));
        }
        out
    }

    fn unit_costs(
        snap: Option<&SqsSnapshot>,
        prices: &crate::cost::Prices,
    ) -> Option<crate::cost::UnitCosts> {
        super::cost::unit_costs(snap, prices)
    }

    fn reset(&self) {
        for c in self.probes.consumers.lock().iter() {
            c.reset();
        }
        self.probes.producer.sdk.reset();
        let mut m = self.probes.producer.metrics.lock();
        m.send_latency.reset();
    }

    fn snapshot(&self, _complete: bool) -> SqsSnapshot {
        SqsLab::snapshot(self)
    }

    fn history(&self, window: usize) -> History {
        SqsLab::history(self, window)
    }

    /// Each consumer's send -> receive.
    fn histograms(&self) -> Vec<Histogrammed> {
        self.probes
            .consumers
            .lock()
            .iter()
            .map(|c| Histogrammed {
                id: SeriesId::new(LabKind::Sqs, &[&c.name], "send_to_receive"),
                labels: Vec::new(),
                histogram: c.metrics.lock().send_to_receive.histogram().clone(),
            })
            .collect()
    }

    fn what(cmd: Command) -> &'static str {
        match cmd {
            Command::WaitNext => "the SQS long pollers' next wait",
            Command::AddConsumer => "adding an SQS long poller",
            Command::RemoveConsumer => "removing an SQS long poller",
            Command::GroupsUp => "more SQS FIFO message groups",
            Command::GroupsDown => "fewer SQS FIFO message groups",
            Command::Batching => "switching the SQS producer's batching",
            Command::VisibilityNext => "the next SQS visibility timeout",
            Command::ProcessingUp => "a longer SQS processing time",
            Command::ProcessingDown => "a shorter SQS processing time",
        }
    }

    async fn apply(&self, cmd: Command) -> anyhow::Result<String> {
        SqsLab::apply(self, cmd).await
    }

    async fn stop(&self) {
        self.probes.stop(DRAIN).await
    }

    async fn cleanup(&self) -> Vec<String> {
        self.probes.cleanup().await
    }
}
