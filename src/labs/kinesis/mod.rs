//! The Kinesis lab: one producer feeding enhanced fan-out consumers, GetRecords pollers and
//! Lambda-style event source mappings on one stream, every one a real aws-sdk-kinesis client over
//! HTTP. Probes live one per file: `producer.rs`, `efo.rs` (SDK and Lambda fan-out), `poller.rs`
//! (GetRecords pollers) and `lambda.rs` (Lambda's standard iterator); `reader.rs` is the
//! iterator-following GetRecords they share. `shards.rs` is the stream's live shard list,
//! `lineage.rs` how every consumer follows it across a reshard, and `reshard.rs` the reshards
//! the `x` and `X` keys and a scenario's schedule ask for.

mod calibrate;
pub mod cleanup;
/// Its SDK clients, built as every service's are.
pub mod client;
pub mod config;
pub mod cost;
mod doctor;
pub mod efo;
pub mod fleet;
pub mod foreign;
pub mod json;
pub mod kcl;
pub mod keys;
mod knobs;
mod lab;
pub mod lambda;
/// The record ledger: every acknowledged record counted by its seq for each consumer.
pub mod ledger;
pub mod lineage;
mod metrics;
/// Each partition key's order as a consumer received it.
pub mod order;
pub mod payload;
pub mod plan;
pub mod poller;
pub mod producer;
pub mod reader;
pub mod report;
mod reshard;
mod sample;
mod setup;
pub mod shards;
pub use knobs::{INTERVALS_MS, RATE_STEPS};
pub use reshard::{ReshardAt, Scale};
pub mod snapshot;
pub mod state;
pub mod target;
pub mod view;

use setup::{describe, list_shards, owned_name, sanitize, wait_active};

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use aws_sdk_kinesis::Client;
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::aws::{Clients, QuotaPartition, RetrySettings, error_line};
use config::{ConsumerKind, ConsumerSpec, KinesisScenario, RetryQuota, StartPosition};
use state::{ConsumerState, Received, Shared};

/// Converts an SDK record of shard `shard` (an index into the stream's shards) into what the lab
/// measures.
pub fn received(run: &str, shard: usize, r: &aws_sdk_kinesis::types::Record) -> Received {
    let arrival_us = r
        .approximate_arrival_timestamp()
        .map(|t| t.secs() * 1_000_000 + i64::from(t.subsec_nanos()) / 1000)
        .unwrap_or_else(latlab_core::clock::now_micros);
    let any = payload::decode_any(r.data().as_ref());
    let parsed = any.filter(|p| p.2 == run).map(|p| (p.0, p.1));
    // Another latlab run's record: its run and seq, for the accounting across hosts.
    let foreign = any
        .filter(|p| p.2 != run)
        .and_then(|p| Some((foreign::parse_run(p.2)?, p.0, p.1)));
    Received {
        seq: parsed.map(|p| p.0),
        sent_us: parsed.map(|p| p.1),
        foreign,
        arrival_us,
        shard,
        kseq: ledger::SeqNo::parse(r.sequence_number()),
    }
}

/// Sleeps for `d` unless cancelled first; returns false when cancelled.
pub async fn pause(cancel: &CancellationToken, d: Duration) -> bool {
    tokio::select! {
        _ = cancel.cancelled() => false,
        _ = tokio::time::sleep(d) => true,
    }
}

/// What the status line calls a consumer of `kind` added or removed live.
fn noun(kind: ConsumerKind) -> &'static str {
    match kind {
        ConsumerKind::Kcl => "KCL consumer",
        _ => "poller",
    }
}

/// Counts a consumer's shards down to "ready": it holds a position on every shard.
#[derive(Clone)]
pub struct Readiness {
    left: Arc<AtomicUsize>,
    shared: Arc<Shared>,
    consumer: Arc<ConsumerState>,
}

const SCENARIOS: &[(&str, &str)] = &[
    ("demo", include_str!("scenarios/demo.toml")),
    (
        "seed-kinesis-round1",
        include_str!("scenarios/seed-kinesis-round1.toml"),
    ),
    (
        "seed-kinesis-round2",
        include_str!("scenarios/seed-kinesis-round2.toml"),
    ),
    ("kinesis-kcl", include_str!("scenarios/kinesis-kcl.toml")),
];

impl Readiness {
    fn new(shared: &Arc<Shared>, consumer: &Arc<ConsumerState>, shards: usize) -> Readiness {
        if shards == 0 {
            shared.ready(consumer);
        }
        Readiness {
            left: Arc::new(AtomicUsize::new(shards)),
            shared: shared.clone(),
            consumer: consumer.clone(),
        }
    }

    /// One shard holds its position (call once per shard).
    pub fn shard_ready(&self) {
        if self.left.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.shared.ready(&self.consumer);
        }
    }
}

/// What every probe needs.
#[derive(Clone)]
pub struct Ctx {
    pub shared: Arc<Shared>,
    pub stream: String,
    pub stream_arn: String,
    pub start: StartPosition,
}

impl Ctx {
    /// The index of a shard id in the stream's shards (a shard seen for the first time, a
    /// reshard's child, is added).
    pub fn shard_index(&self, id: &str) -> usize {
        self.shared.shards.index_or_add(id, &[])
    }
}

pub struct KinesisLab {
    pub ctx: Ctx,
    clients: Clients,
    scenario: KinesisScenario,
    admin: Client,
    created_stream: bool,
    registered: Arc<Mutex<Vec<String>>>,
    producer: Mutex<Option<(CancellationToken, JoinHandle<()>)>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// Quota partitions: the shared pollers' one, and a counter for names.
    pollers_quota: QuotaPartition,
    partitions: AtomicUsize,
    /// The spec a new poller (the `+` key) copies.
    poller_template: ConsumerSpec,
    /// The spec a new KCL consumer (the `*` key) copies.
    kcl_template: ConsumerSpec,
    poller_name: String,
    /// Scheduled reshards and the watchers of accepted ones (stopped with the lab).
    background: Arc<Mutex<Vec<JoinHandle<()>>>>,
    /// The GetRecords calls a second one shard allows, where the run measures.
    read_limit: u32,
}

/// GetRecords calls a second per shard, as the Kinesis Data Streams quotas page documents them.
pub const DOCUMENTED_READS_PER_SHARD: u32 = 5;

/// The lab's last seconds, one value per second, oldest first, for the screen's sparklines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KinesisHistory {
    /// Per consumer (in snapshot order): arrival -> receive.
    pub consumers: Vec<Vec<crate::metrics::Point>>,
    /// GetRecords attempts per second per shard, every shared-throughput reader together.
    pub read_rate: Vec<f64>,
}

impl KinesisLab {
    fn quota_for(&self, spec: &ConsumerSpec) -> QuotaPartition {
        if spec.kind == ConsumerKind::Poller && spec.retry_quota == RetryQuota::Shared {
            return self.pollers_quota.clone();
        }
        let n = self.partitions.fetch_add(1, Ordering::Relaxed);
        let name = format!("latlab-{}-{n}", spec.kind.name());
        match spec.kind {
            // Lambda's pollers are AWS's own: no SDK retry quota runs out on them.
            ConsumerKind::LambdaStandard | ConsumerKind::LambdaEfo => {
                QuotaPartition::unlimited(&name)
            }
            _ => QuotaPartition::new(&name),
        }
    }

    fn spawn_consumer(&self, spec: &ConsumerSpec) -> Arc<ConsumerState> {
        let quota = self.quota_for(spec);
        let detail = describe(spec);
        let state =
            self.ctx
                .shared
                .add_consumer(spec.name.clone(), spec.kind, detail, quota.clone());
        let retry = spec.retry.as_ref().unwrap_or(&self.scenario.retry);
        let client = client::client(&self.clients, retry, &quota, state.sdk.clone());
        // Where it starts: the open shards (LATEST) or the oldest of each lineage (TRIM_HORIZON);
        // it counts as ready once it holds a position on each.
        let initial = self
            .ctx
            .shared
            .shards
            .starting_shards(self.ctx.start == StartPosition::Latest);
        let ready = Readiness::new(&self.ctx.shared, &state, initial.len());
        let ctx = self.ctx.clone();
        let spec = spec.clone();
        let c = state.clone();
        // A polling consumer follows each shard's lineage with its own loop for one shard.
        macro_rules! polling {
            ($run:path) => {
                vec![tokio::spawn(async move {
                    lineage::follow(&ctx, &c, initial, ready, |i, start, ready| {
                        $run(
                            ctx.clone(),
                            client.clone(),
                            c.clone(),
                            spec.clone(),
                            i,
                            start,
                            ready,
                        )
                    })
                    .await
                })]
            };
        }
        let handles: Vec<JoinHandle<()>> = match spec.kind {
            ConsumerKind::Poller => polling!(poller::run),
            ConsumerKind::Kcl => polling!(kcl::run),
            ConsumerKind::LambdaStandard => polling!(lambda::run),
            ConsumerKind::Efo | ConsumerKind::LambdaEfo => {
                let embedded = matches!(self.clients.target(), crate::aws::Target::Emulator { .. });
                let name = owned_name(&sanitize(&spec.name), &ctx.shared.run.run_id, embedded);
                vec![tokio::spawn(efo::run(
                    ctx,
                    client,
                    state.clone(),
                    spec,
                    name,
                    (initial, ready),
                    self.registered.clone(),
                ))]
            }
        };
        self.tasks.lock().extend(handles);
        state
    }

    async fn wait_ready(&self, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let waiting: Vec<(String, String)> = self
                .ctx
                .shared
                .consumers
                .read()
                .iter()
                .filter(|c| !c.ready.load(Ordering::SeqCst) && !c.is_stopped())
                .map(|c| (c.name.clone(), c.status.lock().clone()))
                .collect();
            if waiting.is_empty() {
                return Ok(());
            }
            if Instant::now() > deadline {
                let list: Vec<String> = waiting.iter().map(|(n, s)| format!("{n} ({s})")).collect();
                bail!(
                    "consumers did not start within {}s: {}",
                    timeout.as_secs(),
                    list.join(", ")
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn start_producer(&self) {
        let cancel = CancellationToken::new();
        let quota = QuotaPartition::new("latlab-producer");
        let client = client::client(
            &self.clients,
            &self.scenario.retry,
            &quota,
            self.ctx.shared.producer_sdk.clone(),
        );
        let task = tokio::spawn(producer::run(
            self.ctx.clone(),
            client,
            self.scenario.producer.clone(),
            cancel.clone(),
        ));
        *self.producer.lock() = Some((cancel, task));
        self.ctx.shared.log(format!(
            "producer started: {} records/s, {} B payloads",
            self.scenario.producer.rate, self.scenario.producer.payload
        ));
    }

    /// Adds a GetRecords poller like the scenario's (the `+` key); returns its name.
    pub async fn add_poller(&self) -> anyhow::Result<String> {
        self.add_polling(ConsumerKind::Poller)
    }

    /// Starts one more polling consumer of `kind` (a GetRecords poller with `+`, a KCL consumer
    /// with `*`), named after the scenario's first of its kind.
    fn add_polling(&self, kind: ConsumerKind) -> anyhow::Result<String> {
        let consumers = self.ctx.shared.consumers.read().clone();
        if consumers.iter().filter(|c| !c.is_stopped()).count() >= 64 {
            bail!("at most 64 consumers run at once");
        }
        let n = consumers.iter().filter(|c| c.kind == kind).count() + 1;
        let base = match kind {
            ConsumerKind::Kcl => self.kcl_template.name.clone(),
            _ => self.poller_name.clone(),
        };
        let name = if n == 1 { base } else { format!("{base} {n}") };
        let spec = match kind {
            ConsumerKind::Kcl => ConsumerSpec {
                name: name.clone(),
                count: 1,
                ..self.kcl_template.clone()
            },
            _ => self.live_poller_spec(&name),
        };
        self.spawn_consumer(&spec);
        self.ctx.shared.log(format!("added {} {name}", noun(kind)));
        Ok(name)
    }

    /// Stops the newest running poller (the `-` key); its figures stay in the report.
    pub fn remove_poller(&self) -> Option<String> {
        self.remove_polling(ConsumerKind::Poller)
    }

    /// Stops the newest running consumer of `kind`; its figures stay in the report.
    fn remove_polling(&self, kind: ConsumerKind) -> Option<String> {
        let victim = self
            .ctx
            .shared
            .consumers
            .read()
            .iter()
            .rev()
            .find(|c| c.kind == kind && !c.is_stopped())
            .cloned()?;
        self.ctx.shared.stop_consumer(&victim);
        self.ctx
            .shared
            .log(format!("removed {} {}", noun(kind), victim.name));
        Some(victim.name.clone())
    }

    /// Records acknowledged and not yet read, summed over the running consumers.
    fn missing(&self) -> u64 {
        let running: Vec<Arc<ConsumerState>> = self
            .ctx
            .shared
            .consumers
            .read()
            .iter()
            .filter(|c| !c.is_stopped())
            .cloned()
            .collect();
        let ledger = self.ctx.shared.ledger.lock();
        running.iter().map(|c| ledger.counts(c.id).unread).sum()
    }

    pub fn scenario(&self) -> &KinesisScenario {
        &self.scenario
    }

    pub fn set_payload(&self, bytes: u64) {
        self.ctx.shared.settings.lock().payload = bytes;
        self.ctx.shared.log(format!(
            "payload size {}",
            latlab_core::units::format_bytes(bytes)
        ));
    }
}

/// What the Kinesis lab's keys ask of it while it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    AddPoller,
    RemovePoller,
    /// A KCL consumer more or less (the scenario's first KCL consumer's settings).
    AddKcl,
    RemoveKcl,
    PayloadUp,
    PayloadDown,
    RateUp,
    RateDown,
    /// PutRecord per record <-> PutRecords batches.
    ProducerMode,
    /// The pollers' next interval.
    PollerInterval,
    /// The pollers' SDK retry mode: standard <-> adaptive.
    RetryMode,
    /// The pollers' retry quota: shared <-> one each.
    RetryQuota,
    AddFanOut,
    RemoveFanOut,
    /// Double or halve the stream's open shards (UpdateShardCount, uniform scaling).
    Reshard(Scale),
}

impl crate::labs::Lab for KinesisLab {
    const FACTS: crate::labs::Facts = crate::labs::Facts {
        service: Some(latlab_core::services::Service::Kinesis),
        roles: true,
        measures_from_start: true,
        stopping: "the producer has stopped; consumers are draining",
        overview_weight: 4,
        overview_lead: true,
        colours: view::COLOURS,
        compared: (
            "Kinesis: arrival -> receive (receive time - ApproximateArrivalTimestamp)",
            "consumer",
        ),
        quantities: &["arrival_to_receive"],
        gauge: Some("read_rate"),
        prices: cost::PRICES,
        ..crate::labs::Facts::new(crate::labs::LabKind::Kinesis, "Kinesis", "demo", SCENARIOS)
    };

    type File = config::KinesisFile;
    type Seed = config::KinesisSeed;
    type Json = json::Kinesis;
    type Scenario = KinesisScenario;
    type Command = Command;
    type Snapshot = snapshot::KinesisSnapshot;
    type History = KinesisHistory;
    type Target = target::KinesisTarget;
}

impl crate::labs::LabCommand for Command {
    fn what(self) -> &'static str {
        match self {
            Command::AddPoller => "adding a GetRecords poller",
            Command::RemovePoller => "removing a GetRecords poller",
            Command::AddKcl => "adding a KCL consumer",
            Command::RemoveKcl => "removing a KCL consumer",
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
}

/// Payload sizes the `[` and `]` keys step through.
pub const PAYLOAD_STEPS: &[u64] = &[128, 256, 1_000, 4_000, 16_000, 64_000, 256_000, 1_000_000];
