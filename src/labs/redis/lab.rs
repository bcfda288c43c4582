//! The Redis lab behind the one lab interface: on latlab's own redis-server pair, or on the
//! primary and replica the user named.

use std::sync::Arc;

use super::config::RedisScenario;
use super::local::{LinkProfile, LocalRedis};
use super::snapshot::RedisSnapshot;
use super::{Command, Endpoints, Method, RedisLab};
use crate::faults::FaultSpec;
use crate::labs::series::{Histogrammed, SeriesId};
use crate::labs::{Lab, LabKind, RunContext};
use crate::services::Service;

impl Lab for RedisLab {
    const KIND: LabKind = LabKind::Redis;
    const NAME: &'static str = "Redis";
    const DEMO: &'static str = "redis-demo";
    const SERVICE: Service = Service::Redis;
    /// A method.
    const SUBJECT_PARTS: usize = 1;
    const QUANTITIES: &'static [&'static str] = &["lag"];

    const KEYS: &'static [crate::view::keys::LabKey<Command>] = super::keys::KEYS;
    type File = super::config::RedisFile;
    type Seed = super::config::RedisSeed;
    type Json = super::json::Redis;
    type Scenario = RedisScenario;
    type Command = Command;
    type Snapshot = RedisSnapshot;
    /// Per method: the lag.
    type History = Vec<(Method, Vec<crate::metrics::Point>)>;

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

    fn to_json(snap: &Self::Snapshot) -> super::json::Redis {
        super::json::Redis::from(snap)
    }

    fn from_json(json: super::json::Redis) -> Self::Snapshot {
        json.into_snapshot()
    }

    /// Its shaped links: replication's and the clients'.
    fn model(r: &RedisScenario) -> Vec<crate::provenance::Param> {
        let mut params = Vec::new();
        for (name, link) in [
            ("redis.link", &r.link),
            ("redis.client_link", &r.client_link),
        ] {
            if let Ok(l) = crate::labs::redis::local::LinkProfile::resolve(link) {
                params.push(crate::provenance::Param::new(
                    name,
                    format!("{} ({})", l.name, l.describe()),
                    l.provenance(),
                ));
            }
        }
        params
    }

    fn parse(file: super::config::RedisFile, _text: &str) -> anyhow::Result<RedisScenario> {
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

    async fn start(ctx: &Arc<RunContext>, r: &RedisScenario) -> anyhow::Result<Self> {
        let opts = &ctx.target;
        let (ends, local) = match (&opts.redis_primary, &opts.redis_replica) {
            (Some(p), Some(rep)) => (Endpoints::open(p, rep, false)?, None),
            (None, None) => {
                let link = LinkProfile::resolve(&r.link)?;
                let client_link = LinkProfile::resolve(&r.client_link)?;
                let local = LocalRedis::start(link, client_link).await?;
                let ends = Endpoints::open(&local.primary_url(), &local.replica_url(), true)?;
                (ends, Some(local))
            }
            _ => anyhow::bail!(
                "--redis-primary and --redis-replica go together: name both, or neither to use latlab's own redis-server pair"
            ),
        };
        let mut lab = RedisLab::open(
            ends,
            local,
            r.value,
            &ctx.run_id,
            ctx.fault_log.clone(),
            ctx.start,
        )
        .await?;
        lab.node_type = r.node_type.clone();
        lab.experiment = Some(r.clone()).filter(|r| !r.conditions.is_empty());
        Ok(lab)
    }

    /// redis-server missing or an endpoint unreachable: the Redis pane says so and the run's
    /// other labs go on.
    fn unavailable(why: &str) -> Option<RedisSnapshot> {
        Some(RedisSnapshot::unavailable(why))
    }

    fn start_live(&self) {
        RedisLab::start_live(self)
    }

    fn view(snap: &RedisSnapshot, history: Option<&Self::History>) -> crate::view::LabView {
        super::view::model(snap, history.map_or(&[][..], |h| h.as_slice()))
    }

    fn status(_snap: &RedisSnapshot) -> String {
        super::view::status()
    }

    fn brief(snap: &RedisSnapshot) -> Vec<Vec<crate::view::Text>> {
        super::view::brief(snap)
    }

    fn min_rows(_snap: &RedisSnapshot) -> u16 {
        super::view::MIN_ROWS
    }

    /// An unavailable pair (redis-server missing) costs nothing: it is not priced.
    fn cost(
        snap: &RedisSnapshot,
        _complete: bool,
        prices: &crate::cost::Prices,
    ) -> Option<(crate::cost::LabCost, Vec<String>)> {
        snap.unavailable
            .is_none()
            .then(|| super::cost::cost(snap, prices))
    }

    /// Each method's lag, by the method's key.
    fn frame_series<'a>(
        _snap: &'a RedisSnapshot,
        history: &'a Self::History,
    ) -> Option<crate::labs::series::FrameSeries<'a>> {
        Some(crate::labs::series::FrameSeries {
            series: history
                .iter()
                .map(|(method, points)| {
                    let id = SeriesId::new(LabKind::Redis, &[method.key()], "lag");
                    (id, method.key().to_string(), points.as_slice())
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
        snap: &RedisSnapshot,
        points: &dyn Fn(&str) -> Vec<crate::metrics::Point>,
        _gauge: &dyn Fn() -> Vec<f64>,
    ) -> Self::History {
        snap.methods
            .iter()
            .map(|m| (m.method, points(m.method.key())))
            .collect()
    }

    /// The scenario's conditions, each measured for its tries.
    fn has_experiment(&self) -> bool {
        self.experiment.is_some()
    }

    async fn run_experiment(
        &self,
        quick: bool,
        say: &(dyn Fn(String) + Send + Sync),
    ) -> anyhow::Result<()> {
        if let Some(r) = &self.experiment {
            let tries = if quick { r.quick_tries } else { r.tries };
            self.run_conditions(&r.conditions, tries, say).await?;
        }
        Ok(())
    }

    fn summaries(snap: &RedisSnapshot) -> Vec<(SeriesId, &crate::metrics::Summary)> {
        snap.methods
            .iter()
            .map(|m| {
                (
                    SeriesId::new(LabKind::Redis, &[m.method.key()], "lag"),
                    &m.lag,
                )
            })
            .collect()
    }

    fn sample() -> (&'static str, Self::Snapshot, Self::History) {
        let (snapshot, history) = super::sample::sample();
        ("redis-demo", snapshot, history)
    }

    /// With a headless run's condition.
    fn sample_full() -> RedisSnapshot {
        let mut r = super::sample::sample().0;
        r.conditions = vec![super::ConditionResult {
            condition: super::Condition {
                name: "1 KB".into(),
                value_bytes: 1000,
                cpu_load: false,
                memory_full: false,
            },
            methods: r.methods.clone(),
            skipped: None,
        }];
        r
    }

    async fn doctor(cx: &crate::labs::check::DoctorContext<'_>) -> Vec<crate::labs::check::Check> {
        super::doctor::checks(cx).await
    }

    /// The lab's status, and each method's errors.
    fn watched(r: &RedisSnapshot) -> Vec<crate::labs::series::Watched> {
        let lab = crate::labs::series::Watched {
            name: "Redis".into(),
            status: Some(r.status.clone()),
            error: None,
            throttles: 0,
        };
        std::iter::once(lab)
            .chain(r.methods.iter().map(|m| crate::labs::series::Watched {
                name: format!("Redis {}", m.method.key()),
                status: None,
                error: m.last_error.clone(),
                throttles: 0,
            }))
            .collect()
    }

    fn metric_families(
        snap: &RedisSnapshot,
        series: &[Histogrammed],
    ) -> Vec<crate::metrics::exposition::Family> {
        super::metrics::families(snap, series)
    }

    fn runs(snap: &RedisSnapshot) -> bool {
        snap.unavailable.is_none()
    }

    /// A primary and its replica have no per-unit trade-off to show.
    fn unit_costs(
        _snap: Option<&RedisSnapshot>,
        _prices: &crate::cost::Prices,
    ) -> Option<crate::cost::UnitCosts> {
        None
    }

    fn reset(&self) {
        self.shared.reset();
    }

    fn snapshot(&self, _complete: bool) -> RedisSnapshot {
        RedisLab::snapshot(self)
    }

    fn history(&self, window: usize) -> Self::History {
        RedisLab::history(self, window)
    }

    /// Each method's replication lag.
    fn histograms(&self) -> Vec<Histogrammed> {
        let methods = self.shared.methods.lock();
        methods
            .iter()
            .map(|(method, m)| Histogrammed {
                id: SeriesId::new(LabKind::Redis, &[method.key()], "lag"),
                labels: Vec::new(),
                histogram: m.lag.histogram().clone(),
            })
            .collect()
    }

    fn what(cmd: Command) -> &'static str {
        match cmd {
            Command::LinkNext => "the next replication link profile",
            Command::ValueNext => "the next Redis value size",
            Command::CpuLoad => "toggling CPU load on the Redis primary",
            Command::MemoryFull => "toggling a nearly full memory on the Redis primary",
        }
    }

    async fn apply(&self, cmd: Command) -> anyhow::Result<String> {
        RedisLab::apply(self, cmd)
    }

    fn add_fault(self: &Arc<Self>, spec: FaultSpec) -> anyhow::Result<()> {
        RedisLab::add_fault(self, spec)
    }

    async fn stop(&self) {
        RedisLab::stop(self).await
    }

    async fn cleanup(&self) -> Vec<String> {
        RedisLab::cleanup(self).await
    }
}
