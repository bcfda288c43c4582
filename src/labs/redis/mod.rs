//! The Redis lab: replication lag from a primary to its replica, measured three ways side by side.
//!
//! 1. The seed's method: new clients every try; SET on the primary, then a new replica client
//!    loops EXISTS until the key appears. Its figure mixes connection set-up into the lag.
//! 2. SET, then EXISTS polled on a persistent replica connection: lag after the SET's reply.
//! 3. Offset-based: after the SET, `WAIT 1` until the replica acknowledges the primary's
//!    replication offset; the bytes the replica was behind are read from both sides' INFO.
//!
//! Conditions switch live and per scenario: value size, CPU load on the primary (a Lua busy loop
//! on its own connection) and memory near `maxmemory` (filler keys, on latlab's own servers).

mod calibrate;
pub mod cleanup;
mod conditions;
pub mod config;
pub mod cost;
mod doctor;
mod endpoints;
mod faults;
pub mod json;
pub mod keys;
mod lab;
pub mod local;
mod methods;
mod metrics;
pub mod plan;
pub mod report;
mod sample;
mod shaper;
pub mod snapshot;
pub mod target;
pub mod view;

use conditions::{cpu_load, set_memory_full};
pub use endpoints::Endpoints;
use endpoints::connect;
use methods::{caught_up, field, offset, try_once};

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use parking_lot::Mutex;
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::metrics::{Series, Summary};

/// Every key latlab writes starts with this, then the run's id: `latlab:RUN_ID:lag:N:new`,
/// `latlab:RUN_ID:fill:N`. A run deletes only the keys under its own id.
pub const PREFIX: &str = "latlab:";

/// The prefix of every key the run `run_id` writes and reads.
pub fn key_prefix(run_id: &str) -> String {
    format!("{PREFIX}{run_id}:")
}

/// `text` as a SCAN/KEYS pattern that matches only itself (`*`, `?`, `[`, `]` and `\` escaped).
pub fn glob_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Deletes the keys matching `pattern`, found with SCAN (which, unlike KEYS, does not hold up
/// the server's other clients on a big database); returns how many were deleted.
pub async fn delete_matching(
    con: &mut MultiplexedConnection,
    pattern: &str,
) -> redis::RedisResult<u64> {
    let mut keys: Vec<String> = Vec::new();
    {
        let opts = redis::ScanOptions::default()
            .with_pattern(pattern)
            .with_count(1000);
        let mut found = con.scan_options::<String>(opts).await?;
        while let Some(k) = found.next_item().await {
            keys.push(k?);
        }
    }
    keys.sort();
    keys.dedup();
    let mut deleted = 0;
    for batch in keys.chunks(500) {
        let n: u64 = con.del(batch).await?;
        deleted += n;
    }
    Ok(deleted)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Method {
    /// New clients every try (the seed's program).
    NewClients,
    /// A persistent replica connection polling EXISTS.
    Persistent,
    /// WAIT for the replica to acknowledge the write's offset.
    Offset,
}

const SCENARIOS: &[(&str, &str)] = &[
    ("seed-redis", include_str!("scenarios/seed-redis.toml")),
    ("redis-demo", include_str!("scenarios/redis-demo.toml")),
];

impl Method {
    pub const ALL: [Method; 3] = [Method::NewClients, Method::Persistent, Method::Offset];

    pub fn label(self) -> &'static str {
        match self {
            Method::NewClients => "1. seed's method: new clients, EXISTS loop",
            Method::Persistent => "2. persistent connection, EXISTS loop",
            Method::Offset => "3. offset: WAIT for the replica's ACK",
        }
    }

    /// Its name in CSV columns and JSON keys.
    pub fn key(self) -> &'static str {
        match self {
            Method::NewClients => "new_clients",
            Method::Persistent => "persistent",
            Method::Offset => "offset",
        }
    }

    pub fn short(self) -> &'static str {
        match self {
            Method::NewClients => "new clients",
            Method::Persistent => "persistent",
            Method::Offset => "offset (WAIT)",
        }
    }
}

/// One condition of the experiment.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    pub name: String,
    pub value_bytes: u64,
    pub cpu_load: bool,
    pub memory_full: bool,
}

#[derive(Default)]
pub struct MethodMetrics {
    pub lag: Series,
    pub tries: u64,
    /// Failed tries by what went wrong (at most [`ERROR_KINDS`] kinds; the rest as "other").
    pub errors: BTreeMap<String, u64>,
    pub last_error: Option<String>,
    /// Method 3: bytes the replica was behind right after the write.
    pub behind: Series,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MethodSnapshot {
    pub method: Method,
    pub lag: Summary,
    pub tries: u64,
    pub errors: u64,
    pub behind_bytes: Option<crate::metrics::BytesSummary>,
    /// The last try that failed, as one line.
    pub last_error: Option<String>,
}

/// Kinds of error kept apart per method; more are counted together.
pub const ERROR_KINDS: usize = 32;

/// A condition's figures, for reports.
#[derive(Clone, Debug, PartialEq)]
pub struct ConditionResult {
    pub condition: Condition,
    pub methods: Vec<MethodSnapshot>,
    /// Why the condition was not run, when it was not.
    pub skipped: Option<String>,
}

pub struct RedisShared {
    pub start: Instant,
    /// The prefix of every key this run writes and reads: `latlab:RUN_ID:`.
    pub keys: String,
    pub value_bytes: AtomicU64,
    pub cpu_load: AtomicBool,
    pub memory_full: AtomicBool,
    pub methods: Mutex<BTreeMap<Method, MethodMetrics>>,
    pub status: Mutex<String>,
    /// Faults waiting for a try that measures every method again: (event id, not before).
    awaiting: Mutex<Vec<(u64, Instant)>>,
}

impl RedisShared {
    pub fn new(value_bytes: u64, run_id: &str, clock: Instant) -> Arc<RedisShared> {
        Arc::new(RedisShared {
            start: clock,
            keys: key_prefix(run_id),
            value_bytes: AtomicU64::new(value_bytes),
            cpu_load: AtomicBool::new(false),
            memory_full: AtomicBool::new(false),
            methods: Mutex::new(BTreeMap::new()),
            status: Mutex::new("starting".into()),
            awaiting: Mutex::new(Vec::new()),
        })
    }

    fn record(&self, m: Method, lag: Duration, behind: Option<u64>) {
        let sec = self.start.elapsed().as_secs();
        let mut all = self.methods.lock();
        let e = all.entry(m).or_default();
        e.lag.record(lag.as_micros() as u64, sec);
        e.tries += 1;
        if let Some(b) = behind {
            // The histogram starts at 1: bytes are recorded plus one, and taken back in snapshots.
            e.behind.record(b + 1, sec);
        }
    }

    fn failed(&self, m: Method, what: &str) {
        let line = latlab_core::units::one_line(what);
        let mut all = self.methods.lock();
        let e = all.entry(m).or_default();
        let key = if e.errors.len() < ERROR_KINDS || e.errors.contains_key(&line) {
            line.clone()
        } else {
            "other".to_string()
        };
        *e.errors.entry(key).or_default() += 1;
        e.last_error = Some(line);
    }

    pub fn snapshot(&self) -> Vec<MethodSnapshot> {
        let all = self.methods.lock();
        Method::ALL
            .iter()
            .map(|m| {
                let e = all.get(m);
                MethodSnapshot {
                    method: *m,
                    lag: e.map(|e| e.lag.summary()).unwrap_or_default(),
                    tries: e.map_or(0, |e| e.tries),
                    errors: e.map_or(0, |e| e.errors.values().sum()),
                    last_error: e.and_then(|e| e.last_error.clone()),
                    behind_bytes: if *m == Method::Offset {
                        Some(
                            e.map(|e| {
                                crate::metrics::BytesSummary::from_plus_one(&e.behind.summary())
                            })
                            .unwrap_or_default(),
                        )
                    } else {
                        None
                    },
                }
            })
            .collect()
    }

    pub fn reset(&self) {
        self.methods.lock().clear();
    }

    /// A try that began at `started` measured every method: the faults that ended before it
    /// have recovered.
    fn recovered(&self, log: &latlab_core::faults::FaultLog, started: Instant) {
        self.awaiting.lock().retain(|(id, after)| {
            let done = started >= *after;
            if done {
                log.recovered(*id);
            }
            !done
        });
    }
}

/// What the Redis lab's keys ask of it while it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// The next value size (1 KB, 10 MB, 50 MB).
    ValueNext,
    CpuLoad,
    MemoryFull,
    /// The replication link's next profile (latlab's own servers).
    LinkNext,
}

impl crate::labs::LabCommand for Command {
    fn what(self) -> &'static str {
        match self {
            Command::LinkNext => "the next replication link profile",
            Command::ValueNext => "the next Redis value size",
            Command::CpuLoad => "toggling CPU load on the Redis primary",
            Command::MemoryFull => "toggling a nearly full memory on the Redis primary",
        }
    }
}

/// Its last seconds: per method, the lag.
pub type History = Vec<(Method, Vec<crate::metrics::Point>)>;

impl crate::labs::Lab for RedisLab {
    const FACTS: crate::labs::Facts = crate::labs::Facts {
        service: Some(latlab_core::services::Service::Redis),
        stopping: "the tries in flight finish",
        colours: view::COLOURS,
        compared: ("Redis: replication lag", "method"),
        quantities: &["lag"],
        prices: cost::PRICES,
        ..crate::labs::Facts::new(
            crate::labs::LabKind::Redis,
            "Redis",
            "redis-demo",
            SCENARIOS,
        )
    };

    type File = config::RedisFile;
    type Seed = config::RedisSeed;
    type Json = json::Redis;
    type Scenario = config::RedisScenario;
    type Command = Command;
    type Snapshot = snapshot::RedisSnapshot;
    type History = History;
    type Target = target::RedisTarget;
}

/// Value sizes the `v` key cycles through.
pub const VALUES: &[u64] = &[1_000, 10_000_000, 50_000_000];

/// The Redis lab while it runs.
pub struct RedisLab {
    pub shared: Arc<RedisShared>,
    pub ends: Endpoints,
    pub local: Option<crate::labs::redis::local::LocalRedis>,
    cancel: CancellationToken,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    pub results: Mutex<Vec<ConditionResult>>,
    /// Where the faults injected on Redis are recorded.
    pub fault_log: Arc<latlab_core::faults::FaultLog>,
    /// The ElastiCache node type the scenario prices the pair as (`[redis] node_type`).
    pub node_type: String,
    /// The conditions a headless run measures one after another, when the scenario sets them.
    pub experiment: Option<config::RedisScenario>,
}

impl RedisLab {
    /// Starts the lab on `ends`; every key it writes carries `run_id` (see [`key_prefix`]).
    /// `clock` is the run's start, which the lab's seconds count from.
    pub async fn open(
        ends: Endpoints,
        local: Option<crate::labs::redis::local::LocalRedis>,
        value_bytes: u64,
        run_id: &str,
        fault_log: Arc<latlab_core::faults::FaultLog>,
        clock: Instant,
    ) -> anyhow::Result<RedisLab> {
        let (mut p, _) = ends.check().await?;
        let shared = RedisShared::new(value_bytes, run_id, clock);
        cleanup::mark(&mut p, run_id).await.with_context(|| {
            format!(
                "cannot write the run's marker key on {}",
                ends.primary_label
            )
        })?;
        let lab = RedisLab {
            shared,
            ends,
            local,
            cancel: CancellationToken::new(),
            tasks: Mutex::new(Vec::new()),
            results: Mutex::new(Vec::new()),
            fault_log,
            node_type: config::DEFAULT_NODE_TYPE.into(),
            experiment: None,
        };
        let load = tokio::spawn(cpu_load(
            lab.ends.clone(),
            lab.shared.clone(),
            lab.cancel.clone(),
        ));
        lab.tasks.lock().push(load);
        Ok(lab)
    }

    /// Runs `tries` tries under each condition, one after another; returns their figures.
    pub async fn run_conditions(
        &self,
        conditions: &[Condition],
        tries: u32,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> anyhow::Result<()> {
        let (mut p, mut r) = self.ends.check().await?;
        for c in conditions {
            if c.memory_full && !self.ends.local {
                let why = "memory is only filled on latlab's own servers".to_string();
                progress(format!("{}: skipped: {why}", c.name));
                self.results.lock().push(ConditionResult {
                    condition: c.clone(),
                    methods: Vec::new(),
                    skipped: Some(why),
                });
                continue;
            }
            *self.shared.status.lock() = format!("measuring: {}", c.name);
            self.shared.reset();
            self.shared.cpu_load.store(c.cpu_load, Ordering::Relaxed);
            set_memory_full(&self.ends, &mut p, &self.shared.keys, c.memory_full)
                .await
                .ok();
            let value = bytes::Bytes::from(vec![b'v'; c.value_bytes as usize]);
            for n in 0..tries {
                if self.cancel.is_cancelled() {
                    bail!("stopped");
                }
                progress(format!("{}: try {} of {tries}", c.name, n + 1));
                if !try_once(&self.shared, &self.ends, &mut p, &mut r, &value, n as u64).await
                    && let Ok(Ok((np, nr))) =
                        tokio::time::timeout(Duration::from_secs(15), self.ends.check()).await
                {
                    (p, r) = (np, nr);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            self.shared.cpu_load.store(false, Ordering::Relaxed);
            if c.memory_full {
                set_memory_full(&self.ends, &mut p, &self.shared.keys, false)
                    .await
                    .context("removing the memory fill")?;
            }
            self.results.lock().push(ConditionResult {
                condition: c.clone(),
                methods: self.shared.snapshot(),
                skipped: None,
            });
        }
        *self.shared.status.lock() = format!("finished: {} conditions", conditions.len());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_ids_pattern_matches_only_that_run() {
        assert_eq!(key_prefix("0a1b2c3d"), "latlab:0a1b2c3d:");
        assert_eq!(glob_literal("latlab:0a1b2c3d:"), "latlab:0a1b2c3d:");
        // A run id with glob characters in it cannot widen the clean-up to other runs' keys.
        assert_eq!(glob_literal(r"latlab:*?[x]\:"), r"latlab:\*\?\[x\]\\:");
    }
}
