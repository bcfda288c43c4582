//! The Kinesis lab behind the one lab interface.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use super::config::KinesisScenario;
use super::state::ConsumerState;
use super::{Command, KinesisHistory, KinesisLab, PAYLOAD_STEPS, Scale, snapshot::KinesisSnapshot};
use crate::aws::error_line;
use crate::labs::series::{Histogrammed, SeriesId};
use crate::labs::{Lab, LabKind, RunContext};
use crate::services::Service;

impl Lab for KinesisLab {
    const KIND: LabKind = LabKind::Kinesis;
    const NAME: &'static str = "Kinesis";
    const DEMO: &'static str = "demo";
    const SERVICE: Service = Service::Kinesis;
    const ROLES: bool = true;

    fn fleet(
        hosts: &[crate::labs::hosts::HostPart<'_, KinesisSnapshot>],
    ) -> Vec<crate::labs::hosts::Line> {
        super::fleet::lines(hosts)
    }
    /// The producer puts from the moment the lab has started.
    const MEASURES_FROM_START: bool = true;
    /// Its panes are the tallest: on a wide overview it takes the left.
    const OVERVIEW_LEAD: bool = true;
    const OVERVIEW_WEIGHT: u16 = 4;
    /// A consumer.
    const SUBJECT_PARTS: usize = 1;
    const QUANTITIES: &'static [&'static str] = &["arrival_to_receive"];

    const KEYS: &'static [crate::view::keys::LabKey<Command>] = super::keys::KEYS;
    type File = super::config::KinesisFile;
    type Seed = super::config::KinesisSeed;
    type Json = super::json::Kinesis;
    type Scenario = KinesisScenario;
    type Command = Command;
    type Snapshot = KinesisSnapshot;
    type History = KinesisHistory;

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

    /// The stream and the producer, the SDK's retries, and the seed's source.
    fn facts(k: &KinesisSnapshot, seed: Option<&Self::Seed>) -> Vec<(&'static str, String)> {
        let p = &k.producer;
        let mut facts = vec![
            (
                "stream",
                format!(
                    "{}, {}; producer asked {} records/s, achieved {:.1}/s ({}), {} payloads",
                    k.stream,
                    k.shards_text(),
                    crate::section::rate_text(p.asked_rate),
                    p.achieved_rate,
                    p.mode,
                    crate::units::format_bytes(p.payload_bytes)
                ),
            ),
            ("SDK", k.retry.clone()),
        ];
        facts.extend(seed.map(|s| ("seed", s.source.clone())));
        facts
    }

    fn seed_ids(seed: &Self::Seed, ids: &mut Vec<String>) {
        super::report::seed_ids(seed, ids);
    }

    fn to_json(snap: &Self::Snapshot) -> super::json::Kinesis {
        super::json::Kinesis::from(snap)
    }

    fn from_json(json: super::json::Kinesis) -> Self::Snapshot {
        json.into_snapshot()
    }

    /// Lambda's retry model, when a Lambda consumer keeps it.
    fn model(k: &KinesisScenario) -> Vec<crate::provenance::Param> {
        let mut params = Vec::new();
        let lambda_default = k.consumers.iter().any(|c| {
            matches!(
                c.kind,
                crate::labs::kinesis::config::ConsumerKind::LambdaStandard
                    | crate::labs::kinesis::config::ConsumerKind::LambdaEfo
            ) && c.retry.as_ref() == Some(&crate::labs::kinesis::config::lambda_retry())
        });
        if lambda_default {
            params.push(crate::provenance::Param::new(
                "lambda.retry",
                format!(
                    "{}, no retry quota",
                    crate::labs::kinesis::config::lambda_retry().describe()
                ),
                crate::labs::kinesis::config::lambda_retry_provenance(),
            ));
        }
        params
    }

    /// The producer stops by itself after the run's length: exactly rate x duration records.
    fn for_duration(k: &mut KinesisScenario, duration: Duration) {
        k.producer.stop_after = Some(duration);
    }

    fn parse(file: super::config::KinesisFile, text: &str) -> anyhow::Result<KinesisScenario> {
        super::config::parse(file, text)
    }

    /// Every seed row names a consumer the scenario has.
    fn check_seed(seed: &Self::Seed, k: &Self::Scenario) -> anyhow::Result<()> {
        for row in &seed.arrival_to_receive {
            if !k.consumer_names().contains(&row.consumer) {
                anyhow::bail!(
                    "seed.kinesis.arrival_to_receive names consumer '{}', which the scenario does not have; its consumers are {}",
                    row.consumer,
                    k.consumer_names().join(", ")
                );
            }
        }
        Ok(())
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

    async fn start(ctx: &Arc<RunContext>, scenario: &KinesisScenario) -> anyhow::Result<Self> {
        KinesisLab::start(ctx.clone(), scenario).await
    }

    fn view(snap: &KinesisSnapshot, history: Option<&KinesisHistory>) -> crate::view::LabView {
        match history {
            Some(h) => super::view::model(snap, &h.consumers, &h.read_rate),
            None => super::view::model(snap, &[], &[]),
        }
    }

    fn header(snap: &KinesisSnapshot) -> Vec<crate::view::HeaderPart> {
        super::view::header(snap)
    }

    fn status(snap: &KinesisSnapshot) -> String {
        super::view::status(snap)
    }

    fn brief(snap: &KinesisSnapshot) -> Vec<Vec<crate::view::Text>> {
        super::view::brief(snap)
    }

    fn min_rows(snap: &KinesisSnapshot) -> u16 {
        super::view::min_rows(snap)
    }

    fn cost(
        snap: &KinesisSnapshot,
        complete: bool,
        prices: &crate::cost::Prices,
    ) -> Option<(crate::cost::LabCost, Vec<String>)> {
        Some(super::cost::cost(snap, complete, prices))
    }

    fn summaries(snap: &KinesisSnapshot) -> Vec<(SeriesId, &crate::metrics::Summary)> {
        snap.consumers
            .iter()
            .map(|c| {
                let id = SeriesId::new(LabKind::Kinesis, &[&c.name], "arrival_to_receive");
                (id, &c.arrival_to_receive)
            })
            .collect()
    }

    /// What is sent, the shard's GetRecords calls against its limit, and the readers' throttles
    /// and escaped errors.
    fn progress(k: &KinesisSnapshot) -> Option<String> {
        let throttled: u64 = k.consumers.iter().map(|c| c.sdk.counters.throttles).sum();
        let escaped: u64 = k
            .consumers
            .iter()
            .map(|c| c.sdk.counters.escaped_total())
            .sum();
        Some(format!(
            "sent {} | GetRecords {:.1}/s of {} | throttled {throttled} | escaped {escaped}",
            k.producer.acked, k.get_records_calls_per_sec, k.get_records_limit_per_sec
        ))
    }

    fn sample() -> (&'static str, Self::Snapshot, Self::History) {
        let (snapshot, history) = super::sample::sample();
        ("seed-kinesis-round2", snapshot, history)
    }

    async fn doctor(cx: &crate::labs::check::DoctorContext<'_>) -> Vec<crate::labs::check::Check> {
        super::doctor::checks(cx).await
    }

    /// The producer and each consumer.
    fn watched(k: &KinesisSnapshot) -> Vec<crate::labs::series::Watched> {
        let producer = crate::labs::series::Watched {
            name: "producer".into(),
            status: k.producer.unsupported.clone(),
            error: k.producer.last_error.clone(),
            throttles: k.producer.sdk.counters.throttles,
        };
        std::iter::once(producer)
            .chain(k.consumers.iter().map(|c| crate::labs::series::Watched {
                name: c.name.clone(),
                status: Some(c.status.clone()),
                error: c.last_error.clone(),
                throttles: c.sdk.counters.throttles,
            }))
            .collect()
    }

    fn metric_families(
        snap: &KinesisSnapshot,
        series: &[Histogrammed],
    ) -> Vec<crate::metrics::exposition::Family> {
        super::metrics::families(snap, series)
    }

    fn sdk_clients(
        snap: &KinesisSnapshot,
    ) -> Vec<(
        Vec<(&'static str, String)>,
        &crate::metrics::sdk::SdkSnapshot,
    )> {
        super::metrics::sdk_clients(snap)
    }

    const GAUGE: Option<&'static str> = Some("read_rate");

    /// Each consumer's arrival -> receive by its name, and the shard's GetRecords rate; its last
    /// whole second is the one before the consumers' newest.
    fn frame_series<'a>(
        snap: &'a KinesisSnapshot,
        history: &'a KinesisHistory,
    ) -> Option<crate::labs::series::FrameSeries<'a>> {
        (snap.consumers.len() == history.consumers.len()).then(|| {
            let upto = history
                .consumers
                .first()
                .and_then(|s| s.last())
                .map(|p| p.second.saturating_sub(1));
            // The rate's values end at the last whole second too; a run younger than the
            // history's window has fewer seconds than values, and those before its second 0
            // are none of its own (written, they would stand for later seconds).
            let rate = &history.read_rate;
            let gauge = match upto {
                Some(u) => &rate[rate.len().saturating_sub(u as usize + 1)..],
                None => &rate[..],
            };
            crate::labs::series::FrameSeries {
                series: snap
                    .consumers
                    .iter()
                    .zip(&history.consumers)
                    .map(|(c, points)| {
                        let id = SeriesId::new(LabKind::Kinesis, &[&c.name], "arrival_to_receive");
                        (id, c.name.clone(), points.as_slice())
                    })
                    .collect(),
                gauge,
                upto,
            }
        })
    }

    fn history_of_frames(
        snap: &KinesisSnapshot,
        points: &dyn Fn(&str) -> Vec<crate::metrics::Point>,
        gauge: &dyn Fn() -> Vec<f64>,
    ) -> KinesisHistory {
        KinesisHistory {
            consumers: snap.consumers.iter().map(|c| points(&c.name)).collect(),
            read_rate: gauge(),
        }
    }

    fn unit_costs(
        snap: Option<&KinesisSnapshot>,
        prices: &crate::cost::Prices,
    ) -> Option<crate::cost::UnitCosts> {
        Some(super::cost::unit_costs(snap, prices))
    }

    fn reset(&self) {
        self.ctx.shared.reset();
    }

    fn snapshot(&self, complete: bool) -> KinesisSnapshot {
        KinesisLab::snapshot(self, complete)
    }

    fn history(&self, window: usize) -> KinesisHistory {
        KinesisLab::history(self, window)
    }

    /// Each consumer's arrival at the service -> received by it, labelled with its kind.
    fn histograms(&self) -> Vec<Histogrammed> {
        let consumers = self.ctx.shared.consumers.read().clone();
        consumers
            .iter()
            .map(|c| Histogrammed {
                id: SeriesId::new(LabKind::Kinesis, &[&c.name], "arrival_to_receive"),
                labels: vec![("kind", c.kind.name().to_string())],
                histogram: c.metrics.lock().arrival_to_receive.histogram().clone(),
            })
            .collect()
    }

    fn what(cmd: Command) -> &'static str {
        match cmd {
            Command::AddPoller => "adding a GetRecords poller",
            Command::RemovePoller => "removing a GetRecords poller",
            Command::PayloadUp => "a larger Kinesis payload",
            Command::PayloadDown => "a smaller Kinesis payload",
            Command::RateUp => "a higher producer rate",
            Command::RateDown => "a lower producer rate",
            Command::ProducerMode => "switching the producer's put mode",
            Command::PollerInterval => "the pollers' next interval",
            Command::RetryMode => "switching the pollers' retry mode",
            Command::RetryQuota => "switching the pollers' retry quota",
            Command::AddFanOut => "adding a fan-out consumer",
            Command::RemoveFanOut => "removing a fan-out consumer",
            Command::Reshard(Scale::Double) => "doubling the stream's shards (UpdateShardCount)",
            Command::Reshard(Scale::Halve) => "halving the stream's shards (UpdateShardCount)",
        }
    }

    async fn apply(&self, cmd: Command) -> anyhow::Result<String> {
        match cmd {
            Command::AddPoller => self.add_poller().await.map(|n| format!("added poller {n}")),
            Command::RemovePoller => Ok(match self.remove_poller() {
                Some(n) => format!("removed poller {n}"),
                None => "no poller to remove".into(),
            }),
            Command::PayloadUp | Command::PayloadDown => {
                let current = self.ctx.shared.settings.lock().payload;
                let next = crate::labs::step(PAYLOAD_STEPS, current, cmd == Command::PayloadUp);
                self.set_payload(next);
                Ok(format!("payload size {}", crate::units::format_bytes(next)))
            }
            Command::RateUp => Ok(self.step_rate(true)),
            Command::RateDown => Ok(self.step_rate(false)),
            Command::ProducerMode => Ok(self.toggle_mode()),
            Command::PollerInterval => Ok(self.next_interval()),
            Command::RetryMode => Ok(self.toggle_retry_mode()),
            Command::RetryQuota => Ok(self.toggle_quota()),
            Command::AddFanOut => self.add_fan_out().await,
            Command::RemoveFanOut => self.remove_fan_out().await,
            Command::Reshard(scale) => self.reshard(scale).await,
        }
    }

    fn measured_for(&self) -> Option<Duration> {
        Some(self.ctx.shared.producing_for())
    }

    /// Stops the producer, lets the consumers catch up for at most the scenario's drain time,
    /// then stops them.
    async fn stop(&self) {
        for task in self.background.lock().drain(..) {
            task.abort();
        }
        let producer = self.producer.lock().take();
        if let Some((cancel, task)) = producer {
            cancel.cancel();
            let _ = task.await;
        }
        let deadline = Instant::now() + self.scenario.drain;
        while Instant::now() < deadline && self.missing() > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let consumers: Vec<Arc<ConsumerState>> = self.ctx.shared.consumers.read().clone();
        for c in &consumers {
            self.ctx.shared.stop_consumer(c);
        }
        let tasks: Vec<JoinHandle<()>> = self.tasks.lock().drain(..).collect();
        for t in tasks {
            let _ = tokio::time::timeout(Duration::from_secs(5), t).await;
        }
    }

    /// Deregisters the consumers latlab registered and deletes the stream if latlab created it.
    async fn cleanup(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let registered: Vec<String> = self.registered.lock().drain(..).collect();
        for arn in registered {
            if let Err(e) = self
                .admin
                .deregister_stream_consumer()
                .consumer_arn(&arn)
                .send()
                .await
            {
                problems.push(format!(
                    "could not deregister consumer {arn}: {}",
                    error_line(&e)
                ));
            }
        }
        if self.created_stream {
            let r = self
                .admin
                .delete_stream()
                .stream_name(&self.ctx.stream)
                .enforce_consumer_deletion(true)
                .send()
                .await;
            match r {
                Ok(_) => self
                    .ctx
                    .shared
                    .log(format!("deleted stream {}", self.ctx.stream)),
                Err(e) => problems.push(format!(
                    "could not delete stream {}: {}",
                    self.ctx.stream,
                    error_line(&e)
                )),
            }
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seven seconds into a run, a frame writes the GetRecords rate of seconds 0 to 6 (its last
    /// whole second), not ten values of which the first three stand before the run began.
    #[test]
    fn a_young_runs_frame_writes_its_rate_at_its_own_seconds() {
        let (_, snap, mut history) = <KinesisLab as Lab>::sample();
        for points in &mut history.consumers {
            points.truncate(8);
            for (i, p) in points.iter_mut().enumerate() {
                p.second = i as u64;
            }
        }
        history.read_rate = (1..=10).map(f64::from).collect();
        let f = KinesisLab::frame_series(&snap, &history).unwrap();
        assert_eq!(f.upto, Some(6));
        assert_eq!(f.gauge, &[4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        // Once the run is older than the window, every value is its own.
        for points in &mut history.consumers {
            for p in points.iter_mut() {
                p.second += 100;
            }
        }
        let f = KinesisLab::frame_series(&snap, &history).unwrap();
        assert_eq!(f.gauge.len(), 10);
    }
}
