//! The probes that measure, and the supervisor that owns them and applies commands while they run.

pub mod kinesis;
pub mod payload;
pub mod snapshot;
pub mod state;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::aws::{Clients, Target};
use crate::emulator::limits::Limits;
use crate::emulator::profile::LatencyProfile;
use crate::emulator::{Emulator, EmulatorConfig};
use crate::scenario::Scenario;
use kinesis::KinesisLab;
use snapshot::{Backend, KinesisSnapshot, Snapshot};
use state::{LiveSettings, Shared};

/// Where a lab runs: the embedded emulator unless an endpoint (or real AWS) is named.
#[derive(Clone, Debug, Default)]
pub struct TargetOptions {
    /// Measure this endpoint (or real AWS with `aws = true`) instead of the embedded emulator.
    pub endpoint_url: Option<String>,
    pub aws: bool,
    pub region: Option<String>,
    /// Use this existing stream instead of creating one.
    pub stream: Option<String>,
    /// Embedded emulator only: the latency profile (default: the scenario's) and limit overrides.
    pub latency_profile: Option<String>,
    pub limits_file: Option<std::path::PathBuf>,
    pub limit_overrides: Vec<String>,
}

/// A command from the user, applied while the lab runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    AddPoller,
    RemovePoller,
    PayloadUp,
    PayloadDown,
    Reset,
}

/// Payload sizes the `[` and `]` keys step through.
pub const PAYLOAD_STEPS: &[u64] = &[128, 256, 1_000, 4_000, 16_000, 64_000, 256_000, 1_000_000];

/// A running lab: the probes, the state they write, and (by default) the emulator they measure.
pub struct Lab {
    pub shared: Arc<Shared>,
    pub scenario: Scenario,
    pub backend: Backend,
    kinesis: Option<KinesisLab>,
    emulator: Option<Emulator>,
    read_limit: u32,
}

impl Lab {
    pub async fn start(scenario: Scenario, opts: &TargetOptions) -> anyhow::Result<Lab> {
        let k = scenario
            .kinesis
            .as_ref()
            .context("the scenario has no [kinesis] section")?;
        let shared = Shared::new(LiveSettings {
            payload: k.producer.payload,
            rate: k.producer.rate,
        });
        let external = opts.endpoint_url.is_some() || opts.aws;
        let (target, emulator, backend, read_limit) = if external {
            let target = Target::Aws {
                endpoint_url: opts.endpoint_url.clone(),
                region: opts.region.clone(),
            };
            (target, None, None, 5)
        } else {
            let profile_name = opts
                .latency_profile
                .clone()
                .unwrap_or_else(|| scenario.latency_profile.clone());
            let mut overrides = scenario.emulator_limits.clone();
            overrides.extend(opts.limit_overrides.iter().cloned());
            let limits = Limits::load(opts.limits_file.as_deref(), &overrides)?;
            let read_limit = limits.kinesis.get_records_calls_per_sec;
            let profile = LatencyProfile::resolve(&profile_name)?;
            let emu = Emulator::start(EmulatorConfig {
                limits,
                profile,
                ..EmulatorConfig::default()
            })
            .await?;
            let backend = Backend {
                kind: "emulator".into(),
                label: format!("embedded emulator, latency profile {profile_name}"),
                latency_profile: Some(profile_name),
                endpoint: Some(emu.endpoint_url()),
                region: crate::aws::EMULATOR_REGION.into(),
            };
            (
                Target::Emulator {
                    url: emu.endpoint_url(),
                },
                Some(emu),
                Some(backend),
                read_limit,
            )
        };
        let clients = Clients::connect(&target, shared.start).await?;
        let backend = backend.unwrap_or_else(|| match &opts.endpoint_url {
            Some(url) => Backend {
                kind: "endpoint".into(),
                label: format!("endpoint {url} ({})", clients.region()),
                latency_profile: None,
                endpoint: Some(url.clone()),
                region: clients.region(),
            },
            None => Backend {
                kind: "aws".into(),
                label: format!("AWS {}", clients.region()),
                latency_profile: None,
                endpoint: None,
                region: clients.region(),
            },
        });
        shared.log(format!("backend: {}", backend.label));
        let kinesis = KinesisLab::start(shared.clone(), clients, k, opts.stream.clone()).await?;
        Ok(Lab {
            shared,
            scenario,
            backend,
            kinesis: Some(kinesis),
            emulator,
            read_limit,
        })
    }

    pub fn emulator(&self) -> Option<&Emulator> {
        self.emulator.as_ref()
    }

    pub fn snapshot(&self, complete: bool) -> Snapshot {
        let shared = &self.shared;
        let kinesis = self.kinesis.as_ref().map(|k| {
            // Every figure is read in its own statement: no lock (or lock guard kept alive by a
            // struct literal) is held while the next is taken, so readers never deadlock probes.
            let list = shared.consumers.read().clone();
            let consumers = list
                .iter()
                .map(|c| snapshot::consumer(shared, c, complete))
                .collect();
            let producer = snapshot::producer(shared);
            let send_to_arrival = shared.send_to_arrival.lock().summary();
            let rate = snapshot::get_records_rate(shared, k.ctx.shards.len());
            KinesisSnapshot {
                stream: k.ctx.stream.clone(),
                shards: k.ctx.shards.len(),
                retry: k.scenario().retry.describe(),
                producer,
                send_to_arrival,
                consumers,
                get_records_calls_per_sec: rate,
                get_records_limit_per_sec: self.read_limit,
            }
        });
        Snapshot {
            scenario: self.scenario.name.clone(),
            backend: self.backend.clone(),
            elapsed_secs: shared.elapsed().as_secs_f64(),
            producing_secs: shared.producing_for().as_secs_f64(),
            complete,
            kinesis,
        }
    }

    /// Applies a command; returns the line the screen confirms it with.
    pub async fn apply(&self, cmd: Command) -> anyhow::Result<String> {
        let k = self.kinesis.as_ref().context("no Kinesis lab is running")?;
        match cmd {
            Command::AddPoller => k.add_poller().await.map(|n| format!("added poller {n}")),
            Command::RemovePoller => Ok(match k.remove_poller() {
                Some(n) => format!("removed poller {n}"),
                None => "no poller to remove".into(),
            }),
            Command::PayloadUp | Command::PayloadDown => {
                let current = self.shared.settings.lock().payload;
                let next = if cmd == Command::PayloadUp {
                    PAYLOAD_STEPS
                        .iter()
                        .copied()
                        .find(|s| *s > current)
                        .unwrap_or(current)
                } else {
                    PAYLOAD_STEPS
                        .iter()
                        .rev()
                        .copied()
                        .find(|s| *s < current)
                        .unwrap_or(current)
                };
                k.set_payload(next);
                Ok(format!("payload size {}", crate::units::format_bytes(next)))
            }
            Command::Reset => {
                self.shared.reset();
                Ok("histograms and counts reset".into())
            }
        }
    }

    /// Ends the run: stops the producer, lets consumers drain, takes the final snapshot, removes
    /// what latlab created. Returns the snapshot and anything that could not be cleaned up.
    pub async fn finish(mut self) -> (Snapshot, Vec<String>) {
        if let Some(k) = &self.kinesis {
            k.stop().await;
        }
        let snap = self.snapshot(true);
        let mut problems = Vec::new();
        if let Some(k) = self.kinesis.take() {
            problems.extend(k.cleanup().await);
        }
        drop(self.emulator.take());
        tokio::time::sleep(Duration::from_millis(1)).await;
        (snap, problems)
    }
}
