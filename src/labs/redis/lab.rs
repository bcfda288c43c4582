//! The Redis lab running: on latlab's own redis-server pair, or on the primary and replica the
//! user named; its live tries and its conditions, its figures and last seconds, what its keys
//! do, its faults, and its stop and cleanup.

use super::*;
use crate::labs::series::Histogrammed;
use crate::labs::{Live, RunContext};
use config::RedisScenario;
use latlab_core::faults::FaultSpec;
use local::LocalRedis;
use snapshot::RedisSnapshot;

impl Live for RedisLab {
    async fn start(
        ctx: &Arc<RunContext>,
        r: &RedisScenario,
        target: &target::RedisTarget,
    ) -> anyhow::Result<Self> {
        let (ends, local) = match (&target.redis_primary, &target.redis_replica) {
            (Some(p), Some(rep)) => (Endpoints::open(p, rep, false)?, None),
            (None, None) => {
                let local = LocalRedis::start(r.replication_link()?, r.client_link()?).await?;
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

    /// Tries over and over with the live conditions, until stopped.
    fn start_live(&self) {
        let (shared, ends, cancel) = (self.shared.clone(), self.ends.clone(), self.cancel.clone());
        let fault_log = self.fault_log.clone();
        let task = tokio::spawn(async move {
            let Ok((mut p, mut r)) = ends.check().await else {
                return;
            };
            let mut size = 0u64;
            let mut value = bytes::Bytes::new();
            let mut memory_full = false;
            let mut n = 0u64;
            while !cancel.is_cancelled() {
                let want = shared.value_bytes.load(Ordering::Relaxed);
                if want != size {
                    size = want;
                    value = bytes::Bytes::from(vec![b'v'; size as usize]);
                }
                let mf = shared.memory_full.load(Ordering::Relaxed);
                if mf != memory_full {
                    *shared.status.lock() = if mf {
                        "filling memory".into()
                    } else {
                        "freeing memory".into()
                    };
                    if let Err(e) = set_memory_full(&ends, &mut p, &shared.keys, mf).await {
                        *shared.status.lock() = format!("{e:#}");
                        shared.memory_full.store(memory_full, Ordering::Relaxed);
                        continue;
                    }
                    memory_full = mf;
                }
                *shared.status.lock() = "measuring".into();
                n += 1;
                let started = Instant::now();
                let all_measured = tokio::select! {
                    _ = cancel.cancelled() => break,
                    ok = try_once(&shared, &ends, &mut p, &mut r, &value, n) => ok,
                };
                if all_measured {
                    shared.recovered(&fault_log, started);
                } else {
                    // A server restarted or a connection broke: connect again before the next try.
                    match tokio::time::timeout(Duration::from_secs(15), ends.check()).await {
                        Ok(Ok((np, nr))) => (p, r) = (np, nr),
                        Ok(Err(e)) => *shared.status.lock() = format!("reconnecting: {e:#}"),
                        Err(_) => {
                            *shared.status.lock() = "reconnecting: no answer within 15s".into()
                        }
                    }
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            if memory_full {
                let _ = set_memory_full(&ends, &mut p, &shared.keys, false).await;
            }
        });
        self.tasks.lock().push(task);
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

    fn reset(&self) {
        self.shared.reset();
    }

    /// The lab's figures now.
    fn snapshot(&self, _complete: bool) -> RedisSnapshot {
        let link = self.local.as_ref().map(|l| l.shaper.stats());
        snapshot::RedisSnapshot {
            primary: self.ends.primary_label.clone(),
            replica: self.ends.replica_label.clone(),
            local: self.ends.local,
            link,
            value_bytes: self.shared.value_bytes.load(Ordering::Relaxed),
            cpu_load: self.shared.cpu_load.load(Ordering::Relaxed),
            memory_full: self.shared.memory_full.load(Ordering::Relaxed),
            status: self.shared.status.lock().clone(),
            methods: self.shared.snapshot(),
            conditions: self.results.lock().clone(),
            unavailable: None,
            node_type: self.node_type.clone(),
        }
    }

    /// The last `window` seconds of each method's lag, oldest first, for the screen's
    /// sparklines.
    fn history(&self, window: usize) -> super::History {
        let now = self.shared.start.elapsed().as_secs();
        self.shared
            .methods
            .lock()
            .iter()
            .map(|(m, x)| (*m, x.lag.points(now, window)))
            .collect()
    }

    /// Each method's replication lag.
    fn histograms(&self) -> Vec<Histogrammed> {
        let methods = self.shared.methods.lock();
        methods
            .iter()
            .map(|(method, m)| Histogrammed {
                id: super::metrics::series_id(*method),
                labels: Vec::new(),
                histogram: m.lag.histogram().clone(),
            })
            .collect()
    }

    /// Applies one of the lab's commands; returns the line the screen confirms it with.
    async fn apply(&self, cmd: Command) -> anyhow::Result<String> {
        Ok(match cmd {
            Command::ValueNext => {
                let current = self.shared.value_bytes.load(Ordering::Relaxed);
                let i = VALUES
                    .iter()
                    .position(|v| *v == current)
                    .map_or(0, |i| (i + 1) % VALUES.len());
                self.shared.value_bytes.store(VALUES[i], Ordering::Relaxed);
                format!(
                    "Redis value size {}",
                    latlab_core::units::format_bytes(VALUES[i])
                )
            }
            Command::CpuLoad => {
                let on = !self.shared.cpu_load.fetch_xor(true, Ordering::Relaxed);
                format!("CPU load on the primary {}", if on { "on" } else { "off" })
            }
            Command::LinkNext => {
                let Some(local) = &self.local else {
                    bail!(
                        "the replication link is shaped only between latlab's own redis-servers, not for {}",
                        self.ends.primary_label
                    );
                };
                let now = local.shaper.link().name;
                let i = local::LINKS
                    .iter()
                    .position(|l| *l == now)
                    .map_or(0, |i| (i + 1) % local::LINKS.len());
                let link = local::LinkProfile::resolve(local::LINKS[i])?;
                let line = format!("replication link {}: {}", link.name, link.describe());
                local.shaper.set_link(link);
                line
            }
            Command::MemoryFull => {
                if !self.ends.local {
                    bail!(
                        "memory is only filled on latlab's own redis-server, not on {}",
                        self.ends.primary_label
                    );
                }
                let on = !self.shared.memory_full.fetch_xor(true, Ordering::Relaxed);
                format!(
                    "primary memory {}",
                    if on {
                        "filling to ~97% of maxmemory"
                    } else {
                        "back to normal"
                    }
                )
            }
        })
    }

    /// A new latency profile's `links.redis-replication` and `links.redis-client` on latlab's
    /// own pair: each link in use keeps its own name and bandwidth and takes the profile's delay,
    /// or its own latency back when the profile has none. Clients that reach the servers
    /// directly (a loopback client link) keep doing so until the next run.
    fn reshape(&self, r: &RedisScenario) -> Option<String> {
        let local = self.local.as_ref()?;
        let shaped = |now: &local::LinkProfile, delay: &Option<config::ProfiledDelay>| {
            let base = now
                .name
                .split(" delayed as profile ")
                .next()
                .unwrap_or(&now.name);
            let link = local::LinkProfile::resolve(base).ok()?;
            let link = match delay {
                Some(d) => link.with_delay(d.delay.clone(), &d.profile),
                None => link,
            };
            (link.name != now.name || link.describe() != now.describe()).then_some(link)
        };
        let mut said = Vec::new();
        if let Some(link) = shaped(&local.shaper.link(), &r.link_delay) {
            said.push(format!(
                "replication link {}: {}",
                link.name,
                link.describe()
            ));
            local.shaper.set_link(link);
        }
        match &local.client_shapers {
            Some((to_primary, to_replica)) => {
                if let Some(link) = shaped(&to_primary.link(), &r.client_link_delay) {
                    said.push(format!("client links {}: {}", link.name, link.describe()));
                    to_primary.set_link(link.clone());
                    to_replica.set_link(link);
                }
            }
            None if r.client_link_delay.is_some() => said.push(
                "the clients' link stays loopback until the next run (they reach the servers directly)"
                    .into(),
            ),
            None => {}
        }
        (!said.is_empty()).then(|| format!("Redis {}", said.join(", ")))
    }

    fn add_fault(self: &Arc<Self>, spec: FaultSpec) -> anyhow::Result<()> {
        self.set_fault(spec)
    }

    async fn stop(&self, hurry: &crate::labs::context::Hurry) {
        self.cancel.cancel();
        {
            let mut status = self.shared.status.lock();
            if !status.starts_with("finished") {
                *status = "stopped".into();
            }
        }
        let tasks: Vec<_> = self.tasks.lock().drain(..).collect();
        for t in tasks {
            crate::labs::context::join_within(t, Duration::from_secs(10), hurry).await;
        }
    }

    /// Deletes every key this run wrote, and no other run's (the servers latlab started go away
    /// with it).
    async fn cleanup(&self) -> Vec<String> {
        let result: anyhow::Result<()> = async {
            let mut p = connect(&self.ends.primary).await?;
            delete_matching(&mut p, &format!("{}*", glob_literal(&self.shared.keys))).await?;
            if self.ends.local {
                let _: () = redis::cmd("CONFIG")
                    .arg("SET")
                    .arg("maxmemory")
                    .arg("0")
                    .query_async(&mut p)
                    .await?;
            }
            Ok(())
        }
        .await;
        match result {
            Ok(()) => Vec::new(),
            Err(e) => vec![format!(
                "could not delete latlab's keys ({}*) on {}: {e:#}",
                self.shared.keys, self.ends.primary_label
            )],
        }
    }
}
