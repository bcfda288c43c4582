//! The S3 lab running: on the emulator's buckets, or on the two the user named for another
//! endpoint; its live PUT/GET loop and its matrix, its figures and last seconds, what its keys
//! do, and its stop and cleanup.

use super::*;
use crate::labs::series::Histogrammed;
use crate::labs::{LabKind, Live, RunContext};
use config::S3Scenario;
use snapshot::S3Snapshot;

impl Live for S3Lab {
    async fn start(
        ctx: &Arc<RunContext>,
        scenario: &S3Scenario,
        target: &target::S3Target,
    ) -> anyhow::Result<Self> {
        let given = match (
            &target.s3_bucket,
            &target.s3_express_bucket,
            ctx.target.external(),
        ) {
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
        let client = super::client::client(
            ctx.clients(LabKind::S3)?,
            &crate::aws::RetrySettings::default(),
            &quota,
            stats.clone(),
        );
        let mut lab = S3Lab::open(client, scenario, &ctx.run_id, given, stats, ctx.start).await?;
        lab.emulated = ctx.emulated.clone();
        Ok(lab)
    }

    /// Starts the live PUT/GET loop.
    fn start_live(&self) {
        let task = tokio::spawn(live(
            self.shared.clone(),
            self.client.clone(),
            self.buckets.clone(),
            self.scenario.transfer.clone(),
            self.cancel.clone(),
        ));
        *self.live.lock() = Some(task);
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

    fn reset(&self) {
        self.shared.reset();
    }

    /// The lab's figures now, with the emulator's count of CreateSession calls when the run
    /// measures the embedded emulator.
    fn snapshot(&self, _complete: bool) -> S3Snapshot {
        let create_sessions = self
            .emulated
            .as_ref()
            .and_then(|e| e.count("s3.create_sessions"));
        let ops = self.shared.snapshot();
        let sdk = self.shared.sdk.snapshot();
        S3Snapshot {
            class: *self.shared.class.lock(),
            payload_bytes: *self.shared.payload.lock(),
            concurrency: self.shared.concurrency.load(Ordering::Relaxed),
            standard_bucket: self.buckets.standard.clone(),
            express_bucket: self.buckets.express.clone(),
            ops,
            create_sessions,
            sdk,
            matrix: self.matrix.lock().clone(),
            express_unsupported: self.express_unsupported.clone(),
        }
    }

    /// The last `window` seconds of each (class, PUT/GET) total time, oldest first, for the
    /// screen's sparklines.
    fn history(&self, window: usize) -> super::History {
        let now = self.shared.start.elapsed().as_secs();
        self.shared
            .ops
            .lock()
            .iter()
            .map(|((class, op), m)| (*class, op.to_string(), m.total.points(now, window)))
            .collect()
    }

    /// Each storage class and operation's total time.
    fn histograms(&self) -> Vec<Histogrammed> {
        let ops = self.shared.ops.lock();
        ops.iter()
            .map(|((class, op), m)| Histogrammed {
                id: super::metrics::series_id(*class, op),
                labels: Vec::new(),
                histogram: m.total.histogram().clone(),
            })
            .collect()
    }

    /// Applies one of the lab's commands; returns the line the screen confirms it with.
    async fn apply(&self, cmd: Command) -> anyhow::Result<String> {
        Ok(match cmd {
            Command::ToggleClass => {
                if let Some(why) = &self.express_unsupported {
                    return Ok(format!("S3 Express One Zone {why}; measuring Standard"));
                }
                let c = self.toggle_class();
                format!("S3 storage class {}", c.storage_class())
            }
            Command::Concurrency => {
                let now = self.shared.concurrency.load(Ordering::Relaxed);
                let next = CONCURRENCY_STEPS
                    .iter()
                    .copied()
                    .find(|c| *c > now)
                    .unwrap_or(CONCURRENCY_STEPS[0]);
                self.shared.concurrency.store(next, Ordering::Relaxed);
                format!("S3: {next} PUT-then-GET loop(s) in flight at once")
            }
            Command::PayloadUp | Command::PayloadDown => {
                let current = *self.shared.payload.lock();
                let next = crate::labs::step(PAYLOAD_STEPS, current, cmd == Command::PayloadUp);
                self.set_payload(next);
                format!("S3 payload size {}", latlab_core::units::format_bytes(next))
            }
        })
    }

    async fn stop(&self, hurry: &crate::labs::context::Hurry) {
        self.cancel.cancel();
        let task = self.live.lock().take();
        if let Some(t) = task {
            crate::labs::context::join_within(t, Duration::from_secs(10), hurry).await;
        }
    }

    /// Deletes this run's objects (under its own `latlab/RUN_ID/`, never another run's), and the
    /// buckets if latlab created them.
    async fn cleanup(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for name in [&self.buckets.standard, &self.buckets.express] {
            if *name == self.buckets.express && self.express_unsupported.is_some() {
                continue;
            }
            if let Err(e) = clean(&self.client, name, &self.shared.prefix).await {
                problems.push(format!("{e:#}"));
                continue;
            }
            if self.created
                && let Err(e) = self.client.delete_bucket().bucket(name).send().await
            {
                problems.push(format!(
                    "could not delete bucket {name}: {}",
                    crate::aws::error_line(&e)
                ));
            }
        }
        problems
    }
}
