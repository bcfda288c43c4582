//! The SQS lab running: its queues on the run's endpoint (the embedded emulator's SQS, or the
//! one named), created and tagged as it starts and deleted at its end; its figures, its last
//! seconds and what its keys do.

use std::sync::Arc;
use std::time::Duration;

use super::config::SqsScenario;
use super::snapshot::SqsSnapshot;
use super::{Command, History, Probes, SqsLab};
use crate::labs::series::Histogrammed;
use crate::labs::{LabKind, Live, RunContext};

/// How long the consumers may read what is left once the producer stops.
const DRAIN: Duration = Duration::from_secs(10);

impl Live for SqsLab {
    async fn start(
        ctx: &Arc<RunContext>,
        s: &SqsScenario,
        _target: &<SqsLab as crate::labs::Lab>::Target,
    ) -> anyhow::Result<Self> {
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

    fn reset(&self) {
        for c in self.probes.consumers.lock().iter() {
            c.reset();
        }
        self.probes.producer.sdk.reset();
        let mut m = self.probes.producer.metrics.lock();
        m.send_latency.reset();
    }

    /// Its figures now.
    fn snapshot(&self, _complete: bool) -> SqsSnapshot {
        let p = &self.probes;
        let k = &p.knobs;
        let m = p.producer.metrics.lock();
        let producer = super::ProducerFigures {
            produced: m.produced,
            acknowledged: m.acknowledged,
            failed: m.failed,
            behind: m.behind,
            calls: m.calls,
            send_latency: m.send_latency.summary(),
            sdk: p.producer.sdk.snapshot(),
            status: p.producer.status.lock().clone(),
            last_error: p.producer.last_error.lock().clone(),
        };
        drop(m);
        SqsSnapshot {
            rate: k.rate(),
            payload_bytes: p.scenario.payload,
            batching: k.batching(),
            groups: k.groups(),
            wait_secs: k.wait_secs(),
            visibility_secs: k.visibility_secs(),
            processing_ms: k.processing().as_millis() as u64,
            seconds: p.clock.elapsed().as_secs_f64(),
            producer,
            consumers: p.figures(),
            unavailable: None,
        }
    }

    /// Each consumer's last `window` seconds of send -> receive.
    fn history(&self, window: usize) -> History {
        let now = self.probes.second();
        self.probes
            .consumers
            .lock()
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    c.metrics.lock().send_to_receive.points(now, window),
                )
            })
            .collect()
    }

    /// Applies a key's command; the line the screen confirms it with.
    async fn apply(&self, cmd: Command) -> anyhow::Result<String> {
        use std::sync::atomic::Ordering::Relaxed;
        let k = &self.probes.knobs;
        let next = |steps: &[u64], now: u64| {
            steps
                .iter()
                .position(|s| *s == now)
                .map_or(steps[0], |i| steps[(i + 1) % steps.len()])
        };
        Ok(match cmd {
            Command::WaitNext => {
                let now = u64::from(k.wait_secs());
                let steps: Vec<u64> = super::config::WAIT_STEPS
                    .iter()
                    .map(|w| u64::from(*w))
                    .collect();
                let w = next(&steps, now) as u32;
                k.wait_secs.store(w, Relaxed);
                if w == 0 {
                    "SQS long pollers now short-poll (wait 0 s): empty receives will show".into()
                } else {
                    format!("SQS long pollers now wait up to {w} s")
                }
            }
            Command::AddConsumer => {
                let name = self.probes.add_consumer().await?;
                format!("SQS consumer {name} joined, on a queue of its own")
            }
            Command::RemoveConsumer => match self.probes.remove_consumer() {
                Some(name) => format!("SQS consumer {name} left (its figures stay, struck out)"),
                None => anyhow::bail!("no SQS consumer joined with j to remove"),
            },
            Command::RateUp | Command::RateDown => {
                let r = super::step(
                    super::config::RATE_STEPS,
                    u64::from(k.rate()),
                    cmd == Command::RateUp,
                ) as u32;
                k.rate.store(r, Relaxed);
                format!(
                    "SQS producer: {} messages/s",
                    latlab_core::units::thousands(u64::from(r))
                )
            }
            Command::GroupsUp | Command::GroupsDown => {
                let g = super::step(
                    super::config::GROUP_STEPS,
                    u64::from(k.groups()),
                    cmd == Command::GroupsUp,
                ) as u32;
                k.groups.store(g, Relaxed);
                format!("SQS FIFO queues: {g} message group(s)")
            }
            Command::Batching => {
                let on = !k.batching();
                k.batching.store(on, Relaxed);
                if on {
                    "SQS producer: SendMessageBatch, up to 10 a call".into()
                } else {
                    "SQS producer: SendMessage, one message a call".into()
                }
            }
            Command::VisibilityNext => {
                let v = next(
                    super::config::VISIBILITY_STEPS,
                    u64::from(k.visibility_secs()),
                ) as u32;
                k.visibility_secs.store(v, Relaxed);
                format!("SQS visibility timeout {v} s (each receive asks for it)")
            }
            Command::ProcessingUp | Command::ProcessingDown => {
                let ms = super::step(
                    super::config::PROCESSING_STEPS,
                    k.processing().as_millis() as u64,
                    cmd == Command::ProcessingUp,
                );
                k.processing_ms.store(ms, Relaxed);
                let vis = u64::from(k.visibility_secs()) * 1000;
                format!(
                    "SQS processing {} a message{}",
                    latlab_core::units::format_duration(Duration::from_millis(ms)),
                    if ms * 10 > vis && vis > 0 {
                        " (a batch of 10 outlasts the visibility timeout: watch redeliveries)"
                    } else {
                        ""
                    }
                )
            }
        })
    }

    /// Each consumer's send -> receive.
    fn histograms(&self) -> Vec<Histogrammed> {
        self.probes
            .consumers
            .lock()
            .iter()
            .map(|c| Histogrammed {
                id: super::metrics::series_id(&c.name),
                labels: Vec::new(),
                histogram: c.metrics.lock().send_to_receive.histogram().clone(),
            })
            .collect()
    }

    async fn stop(&self, hurry: &crate::labs::context::Hurry) {
        self.probes.stop(DRAIN, hurry).await
    }

    async fn cleanup(&self) -> Vec<String> {
        self.probes.cleanup().await
    }
}
