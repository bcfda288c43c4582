//! The probes that measure, and the supervisor that owns them and applies commands while they run.

pub mod kinesis;
pub mod payload;
pub mod s3;
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
    /// Other endpoints: the S3 Standard bucket and S3 Express directory bucket to measure.
    pub s3_bucket: Option<String>,
    pub s3_express_bucket: Option<String>,
}

/// A command from the user, applied while the lab runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    AddPoller,
    RemovePoller,
    PayloadUp,
    PayloadDown,
    Reset,
    /// S3: Express One Zone <-> Standard.
    ToggleS3Class,
    S3PayloadUp,
    S3PayloadDown,
}

/// S3 payload sizes the `[` and `]` keys step through on the S3 tab.
pub const S3_PAYLOAD_STEPS: &[u64] = &[1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

/// Payload sizes the `[` and `]` keys step through.
pub const PAYLOAD_STEPS: &[u64] = &[128, 256, 1_000, 4_000, 16_000, 64_000, 256_000, 1_000_000];

/// The next step up (or down) from `current`; the end stays put.
fn step(steps: &[u64], current: u64, up: bool) -> u64 {
    if up {
        steps
            .iter()
            .copied()
            .find(|s| *s > current)
            .unwrap_or(current)
    } else {
        steps
            .iter()
            .rev()
            .copied()
            .find(|s| *s < current)
            .unwrap_or(current)
    }
}

/// A running lab: the probes, the state they write, and (by default) the emulator they measure.
pub struct Lab {
    pub shared: Arc<Shared>,
    pub scenario: Scenario,
    pub backend: Backend,
    kinesis: Option<KinesisLab>,
    pub s3: Option<s3::S3Lab>,
    emulator: Option<Emulator>,
    read_limit: u32,
}

impl Lab {
    pub async fn start(scenario: Scenario, opts: &TargetOptions) -> anyhow::Result<Lab> {
        let settings = match &scenario.kinesis {
            Some(k) => LiveSettings {
                payload: k.producer.payload,
                rate: k.producer.rate,
            },
            None => LiveSettings {
                payload: 0,
                rate: 0.0,
            },
        };
        let shared = Shared::new(settings);
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
        let s3 = match &scenario.s3 {
            Some(s) => {
                let given = match (&opts.s3_bucket, &opts.s3_express_bucket, external) {
                    (Some(std), Some(exp), _) => Some(s3::Buckets {
                        standard: std.clone(),
                        express: exp.clone(),
                    }),
                    (_, _, false) => None,
                    _ => anyhow::bail!(
                        "the S3 lab on another endpoint needs --s3-bucket NAME (S3 Standard) and --s3-express-bucket NAME--AZID--x-s3 (a directory bucket); latlab writes only under their latlab/ prefix"
                    ),
                };
                let stats = Arc::new(crate::metrics::SdkStats::default());
                let quota = crate::aws::QuotaPartition::new("latlab-s3");
                let client =
                    clients.s3(&crate::aws::RetrySettings::default(), &quota, stats.clone());
                Some(s3::S3Lab::start(client, s, &shared.run_id, given, stats).await?)
            }
            None => None,
        };
        let kinesis = match &scenario.kinesis {
            Some(k) => {
                Some(KinesisLab::start(shared.clone(), clients, k, opts.stream.clone()).await?)
            }
            None => None,
        };
        Ok(Lab {
            shared,
            scenario,
            backend,
            kinesis,
            s3,
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
        let s3 = self.s3.as_ref().map(|l| {
            let ops = l.shared.snapshot();
            let sdk = l.shared.sdk.snapshot();
            let create_sessions = self
                .emulator
                .as_ref()
                .map(|e| e.s3().stats().create_sessions);
            snapshot::S3Snapshot {
                class: *l.shared.class.lock(),
                payload_bytes: *l.shared.payload.lock(),
                concurrency: l.scenario.concurrency,
                standard_bucket: l.buckets.standard.clone(),
                express_bucket: l.buckets.express.clone(),
                ops,
                create_sessions,
                sdk,
                matrix: l.matrix.lock().clone(),
            }
        });
        Snapshot {
            scenario: self.scenario.name.clone(),
            backend: self.backend.clone(),
            elapsed_secs: shared.elapsed().as_secs_f64(),
            producing_secs: shared.producing_for().as_secs_f64(),
            complete,
            kinesis,
            s3,
        }
    }

    /// Applies a command; returns the line the screen confirms it with.
    pub async fn apply(&self, cmd: Command) -> anyhow::Result<String> {
        if let Command::ToggleS3Class | Command::S3PayloadUp | Command::S3PayloadDown = cmd {
            let s3 = self.s3.as_ref().context("no S3 lab in this scenario")?;
            return Ok(match cmd {
                Command::ToggleS3Class => {
                    let c = s3.toggle_class();
                    format!("S3 storage class {}", c.storage_class())
                }
                _ => {
                    let current = *s3.shared.payload.lock();
                    let next = step(S3_PAYLOAD_STEPS, current, cmd == Command::S3PayloadUp);
                    s3.set_payload(next);
                    format!("S3 payload size {}", crate::units::format_bytes(next))
                }
            });
        }
        if cmd == Command::Reset {
            self.shared.reset();
            if let Some(s3) = &self.s3 {
                s3.shared.reset();
            }
            return Ok("histograms and counts reset".into());
        }
        let k = self
            .kinesis
            .as_ref()
            .context("no Kinesis lab in this scenario")?;
        match cmd {
            Command::AddPoller => k.add_poller().await.map(|n| format!("added poller {n}")),
            Command::RemovePoller => Ok(match k.remove_poller() {
                Some(n) => format!("removed poller {n}"),
                None => "no poller to remove".into(),
            }),
            Command::PayloadUp | Command::PayloadDown => {
                let current = self.shared.settings.lock().payload;
                let next = step(PAYLOAD_STEPS, current, cmd == Command::PayloadUp);
                k.set_payload(next);
                Ok(format!("payload size {}", crate::units::format_bytes(next)))
            }
            Command::Reset
            | Command::ToggleS3Class
            | Command::S3PayloadUp
            | Command::S3PayloadDown => {
                unreachable!("handled above")
            }
        }
    }

    /// Ends the run: stops the producer, lets consumers drain, takes the final snapshot, removes
    /// what latlab created. Returns the snapshot and anything that could not be cleaned up.
    pub async fn finish(mut self) -> (Snapshot, Vec<String>) {
        if let Some(k) = &self.kinesis {
            k.stop().await;
        }
        if let Some(s) = &self.s3 {
            s.stop().await;
        }
        let snap = self.snapshot(true);
        let mut problems = Vec::new();
        if let Some(k) = self.kinesis.take() {
            problems.extend(k.cleanup().await);
        }
        if let Some(s) = self.s3.take() {
            problems.extend(s.cleanup().await);
        }
        drop(self.emulator.take());
        tokio::time::sleep(Duration::from_millis(1)).await;
        (snap, problems)
    }
}
