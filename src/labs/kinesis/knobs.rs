//! The Kinesis lab's live knobs: the producer's rate and mode, the pollers' interval, retry mode
//! and retry quota, and fan-out consumers added and removed. Each returns the line the screen
//! confirms it with, or the service's answer when it refuses.

use super::*;
use crate::aws::RetryMode;
use crate::labs::kinesis::config::ProducerMode;

/// Producer rates the `<` and `>` keys step through, records per second.
pub const RATE_STEPS: &[u64] = &[1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000];

/// Poller intervals the `i` key cycles through.
pub const INTERVALS_MS: &[u64] = &[200, 500, 1_000, 2_000];

/// How long adding a fan-out consumer waits for the service's answer before it confirms.
const REGISTER_WAIT: Duration = Duration::from_secs(10);

impl KinesisLab {
    /// The next or previous step of the producer's asked rate.
    pub(super) fn step_rate(&self, up: bool) -> String {
        let rate = {
            let mut s = self.ctx.shared.settings.lock();
            let now = s.rate.round() as u64;
            s.rate = crate::labs::step(RATE_STEPS, now, up) as f64;
            s.rate
        };
        *self.ctx.shared.rate_set_at.lock() = self.ctx.shared.elapsed();
        let line = format!(
            "producer asks {}/s",
            latlab_core::units::plural(rate as u64, "record", "records")
        );
        self.ctx.shared.log(&line);
        line
    }

    /// PutRecord per record <-> PutRecords batches (the scenario's batching, or 500 records with
    /// a 50 ms linger).
    pub(super) fn toggle_mode(&self) -> String {
        let mode = {
            let mut s = self.ctx.shared.settings.lock();
            s.mode = match s.mode {
                ProducerMode::PutRecord => match self.scenario.producer.mode {
                    m @ ProducerMode::PutRecords { .. } => m,
                    ProducerMode::PutRecord => ProducerMode::PutRecords {
                        linger: Duration::from_millis(50),
                        batch: 500,
                    },
                },
                ProducerMode::PutRecords { .. } => ProducerMode::PutRecord,
            };
            s.mode
        };
        let line = format!("producer: {}", mode.describe());
        self.ctx.shared.log(&line);
        line
    }

    /// Every poller's interval, the next of [`INTERVALS_MS`].
    pub(super) fn next_interval(&self) -> String {
        let interval = {
            let mut s = self.ctx.shared.settings.lock();
            let now = s
                .pollers
                .interval
                .unwrap_or(self.poller_template.interval)
                .as_millis() as u64;
            let next = INTERVALS_MS
                .iter()
                .copied()
                .find(|ms| *ms > now)
                .unwrap_or(INTERVALS_MS[0]);
            let d = Duration::from_millis(next);
            s.pollers.interval = Some(d);
            d
        };
        self.redescribe_pollers();
        let line = format!(
            "pollers call GetRecords every {}",
            latlab_core::units::format_duration(interval)
        );
        self.ctx.shared.log(&line);
        line
    }

    /// The pollers' SDK retry mode: standard <-> adaptive (its client-side rate limiter).
    pub(super) fn toggle_retry_mode(&self) -> String {
        let mode = {
            let mut s = self.ctx.shared.settings.lock();
            s.pollers.retry.mode = s.pollers.retry.mode.other();
            s.pollers.retry.mode
        };
        let n = self.reclient_pollers();
        let line = match mode {
            RetryMode::Adaptive => format!(
                "{n} poller(s) now retry in the SDK's adaptive mode: its client-side rate limiter holds calls back after throttles"
            ),
            RetryMode::Standard => format!("{n} poller(s) now retry in the SDK's standard mode"),
        };
        self.ctx.shared.log(&line);
        line
    }

    /// One retry quota for every poller (one process) <-> one each (separate processes).
    pub(super) fn toggle_quota(&self) -> String {
        let quota = {
            let mut s = self.ctx.shared.settings.lock();
            s.pollers.quota = match s.pollers.quota {
                RetryQuota::Shared => RetryQuota::PerPoller,
                RetryQuota::PerPoller => RetryQuota::Shared,
            };
            s.pollers.quota
        };
        let n = self.reclient_pollers();
        let line = match quota {
            RetryQuota::Shared => format!("{n} poller(s) now share one retry quota (one process)"),
            RetryQuota::PerPoller => {
                format!("{n} poller(s) now have a retry quota each (separate processes)")
            }
        };
        self.ctx.shared.log(&line);
        line
    }

    /// A poller's spec as the live settings make it.
    pub(super) fn live_poller_spec(&self, name: &str) -> ConsumerSpec {
        let live = self.ctx.shared.settings.lock().pollers.clone();
        let t = &self.poller_template;
        let scenario_retry = t
            .retry
            .clone()
            .unwrap_or_else(|| self.scenario.retry.clone());
        ConsumerSpec {
            name: name.to_string(),
            interval: live.interval.unwrap_or(t.interval),
            retry_quota: live.quota,
            // Retries of its own only once a key made them differ from the scenario's.
            retry: if live.retry == scenario_retry {
                t.retry.clone()
            } else {
                Some(live.retry)
            },
            ..t.clone()
        }
    }

    fn running_pollers(&self) -> Vec<Arc<ConsumerState>> {
        self.ctx
            .shared
            .consumers
            .read()
            .iter()
            .filter(|c| c.kind == ConsumerKind::Poller && !c.is_stopped())
            .cloned()
            .collect()
    }

    fn redescribe_pollers(&self) {
        for c in self.running_pollers() {
            *c.detail.lock() = describe(&self.live_poller_spec(&c.name));
        }
    }

    /// Gives every running poller a client built from the live settings; returns how many.
    fn reclient_pollers(&self) -> usize {
        let pollers = self.running_pollers();
        for c in &pollers {
            let spec = self.live_poller_spec(&c.name);
            let quota = self.quota_for(&spec);
            let retry = spec
                .retry
                .clone()
                .unwrap_or_else(|| self.scenario.retry.clone());
            let client = super::client::client(&self.clients, &retry, &quota, c.sdk.clone());
            c.replace_client(client, quota);
            *c.detail.lock() = describe(&spec);
        }
        pollers.len()
    }

    /// Registers and subscribes one more fan-out consumer. The service's refusal (the stream's
    /// consumer cap, too many consumers CREATING) is the answer, and the consumer stops.
    pub(super) async fn add_fan_out(&self) -> anyhow::Result<String> {
        let n = self
            .ctx
            .shared
            .consumers
            .read()
            .iter()
            .filter(|c| c.kind == ConsumerKind::Efo)
            .count()
            + 1;
        let spec = ConsumerSpec {
            kind: ConsumerKind::Efo,
            name: format!("fan-out {n}"),
            count: 1,
            retry: None,
            ..self.poller_template.clone()
        };
        let c = self.spawn_consumer(&spec);
        let deadline = Instant::now() + REGISTER_WAIT;
        while Instant::now() < deadline {
            if c.ready.load(Ordering::Relaxed) {
                let line = format!("added fan-out consumer {} (subscribed)", spec.name);
                self.ctx.shared.log(&line);
                return Ok(line);
            }
            if let Some(e) = c.last_error.lock().clone() {
                self.ctx.shared.stop_consumer(&c);
                bail!("{}: {e}", spec.name);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let line = format!("added fan-out consumer {} ({})", spec.name, c.status.lock());
        self.ctx.shared.log(&line);
        Ok(line)
    }

    /// Stops the newest running fan-out consumer and deregisters it from the stream.
    pub(super) async fn remove_fan_out(&self) -> anyhow::Result<String> {
        let Some(victim) = self
            .ctx
            .shared
            .consumers
            .read()
            .iter()
            .rev()
            .find(|c| c.kind == ConsumerKind::Efo && !c.is_stopped())
            .cloned()
        else {
            anyhow::bail!("no fan-out consumer to remove: e adds one");
        };
        self.ctx.shared.stop_consumer(&victim);
        let embedded = matches!(self.clients.target(), crate::aws::Target::Emulator { .. });
        let name = owned_name(
            &sanitize(&victim.name),
            &self.ctx.shared.run.run_id,
            embedded,
        );
        let arn = self
            .admin
            .describe_stream_consumer()
            .stream_arn(&self.ctx.stream_arn)
            .consumer_name(&name)
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("DescribeStreamConsumer {name}: {}", error_line(&e)))?
            .consumer_description()
            .map(|d| d.consumer_arn().to_string())
            .context("DescribeStreamConsumer answered without a consumer")?;
        self.admin
            .deregister_stream_consumer()
            .consumer_arn(&arn)
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("DeregisterStreamConsumer {name}: {}", error_line(&e)))?;
        self.registered.lock().retain(|a| *a != arn);
        let line = format!("removed fan-out consumer {} (deregistered)", victim.name);
        self.ctx.shared.log(&line);
        Ok(line)
    }
}
