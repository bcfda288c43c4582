//! The Kinesis lab running: its stream created (or found) and its consumers started before the
//! producer, its figures and last seconds read, what its keys do, and its drain, stop and
//! cleanup.

use super::*;
use crate::labs::series::Histogrammed;
use crate::labs::{Live, RunContext};
use snapshot::KinesisSnapshot;

impl Live for KinesisLab {
    /// The last `window` seconds.
    fn history(&self, window: usize) -> KinesisHistory {
        let shared = &self.ctx.shared;
        let now = shared.second();
        let consumers = shared.consumers.read().clone();
        KinesisHistory {
            consumers: consumers
                .iter()
                .map(|c| c.metrics.lock().arrival_to_receive.points(now, window))
                .collect(),
            // The last whole second and those before it.
            read_rate: snapshot::read_rate(
                shared,
                shared.shards.shape().open,
                now.saturating_sub(1),
                window,
            ),
        }
    }

    /// The lab's figures now; `complete` once the run has ended and the consumers drained.
    fn snapshot(&self, complete: bool) -> KinesisSnapshot {
        let read_limit = self.read_limit;
        let shared = &self.ctx.shared;
        // Every figure is read in its own statement: no lock (or lock guard kept alive by a
        // struct literal) is held while the next is taken, so readers never deadlock probes.
        let list = shared.consumers.read().clone();
        let consumers = list.iter().map(|c| snapshot::consumer(shared, c)).collect();
        let producer = snapshot::producer(shared, &self.scenario.producer, complete);
        let send_to_arrival = shared.send_to_arrival.lock().summary();
        let shape = shared.shards.shape();
        let rate = snapshot::get_records_rate(shared, shape.open);
        snapshot::KinesisSnapshot {
            stream: self.ctx.stream.clone(),
            shards: shape.open,
            updating: shape.updating,
            shard_counts: shape
                .history
                .iter()
                .map(|(at, n)| snapshot::ShardCount {
                    at_secs: at.as_secs_f64(),
                    shards: *n,
                })
                .collect(),
            retry: self.scenario.retry.describe(),
            producer,
            send_to_arrival,
            consumers,
            get_records_calls_per_sec: rate,
            get_records_limit_per_sec: read_limit,
        }
    }

    /// Creates (or finds) the stream, starts every consumer, waits until each holds its position,
    /// then starts the producer.
    async fn start(
        ctx: &Arc<RunContext>,
        scenario: &KinesisScenario,
        target: &super::target::KinesisTarget,
    ) -> anyhow::Result<Self> {
        let run = ctx.clone();
        let clients = run.clients(crate::labs::LabKind::Kinesis)?.clone();
        let existing_stream = target.stream.clone();
        let role = run.role();
        if role != crate::labs::Role::Both && existing_stream.is_none() {
            anyhow::bail!(
                "{}: the hosts share one stream; name it with --stream NAME on every host, the producing host's too (create it once, e.g. `aws kinesis create-stream --stream-name NAME --shard-count 1`)",
                role.flag()
            );
        }
        // The shard's GetRecords calls a second the gauge compares with: the emulator's limit,
        // or the documented one elsewhere.
        let read_limit = run
            .emulated
            .as_ref()
            .map_or(DOCUMENTED_READS_PER_SHARD, |e| {
                e.limit("kinesis.get_records_calls_per_sec")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(DOCUMENTED_READS_PER_SHARD)
            });
        let shared = Shared::new(run, state::LiveSettings::of(Some(scenario)));
        let embedded = matches!(clients.target(), crate::aws::Target::Emulator { .. });
        let admin_quota = QuotaPartition::new("latlab-admin");
        let admin = super::client::client(
            &clients,
            &RetrySettings::default(),
            &admin_quota,
            Default::default(),
        );
        let (stream, created) = match existing_stream {
            Some(name) => (name, false),
            None => (
                owned_name(&scenario.stream, &shared.run.run_id, embedded),
                true,
            ),
        };
        if created {
            let mut req = admin
                .create_stream()
                .stream_name(&stream)
                .shard_count(scenario.shards as i32);
            if !embedded {
                // Tagged so that `latlab cleanup` finds it if the run dies before deleting it.
                let created = crate::lab_kit::plan::now_rfc3339();
                for (k, v) in crate::lab_kit::plan::tags(&shared.run.run_id, &created) {
                    req = req.tags(k, v);
                }
            }
            req.send().await.map_err(|e| {
                anyhow::anyhow!(
                    "cannot create stream {stream} at {}: {}",
                    clients.endpoint(),
                    error_line(&e)
                )
            })?;
            shared.log(format!(
                "created stream {stream} with {} shard(s)",
                scenario.shards
            ));
        }
        let arn = wait_active(&admin, &stream, &clients.endpoint()).await?;
        if created && !embedded {
            setup::ensure_tagged(&admin, &stream, &shared.run.run_id).await;
        }
        let listed = list_shards(&admin, &stream).await?;
        shared.shards.listed(&listed);
        let open = listed.iter().filter(|s| !s.closed).count();
        shared.shards.set_active(open, shared.elapsed());
        let ctx = Ctx {
            shared: shared.clone(),
            stream,
            stream_arn: arn,
            start: scenario.start,
        };
        let poller_template = scenario.poller_template();
        let poller_name = poller_template.name.clone();
        let kcl_template = scenario.kcl_template();
        let lab = KinesisLab {
            ctx,
            clients,
            scenario: scenario.clone(),
            admin,
            created_stream: created,
            registered: Arc::new(Mutex::new(Vec::new())),
            producer: Mutex::new(None),
            tasks: Mutex::new(Vec::new()),
            pollers_quota: QuotaPartition::new("latlab-pollers"),
            partitions: AtomicUsize::new(0),
            poller_template,
            kcl_template,
            poller_name,
            background: Arc::new(Mutex::new(Vec::new())),
            read_limit,
        };
        if role.runs_consumers() {
            for spec in scenario.consumers.iter().flat_map(|c| c.expand()) {
                lab.spawn_consumer(&spec);
            }
            lab.wait_ready(Duration::from_secs(90)).await?;
        } else {
            lab.ctx
                .shared
                .log("consumers on other hosts (--producer-only)".to_string());
        }
        if role.runs_producer() {
            lab.start_producer();
        } else {
            lab.ctx
                .shared
                .log("producer on another host (--no-producer)".to_string());
        }
        lab.schedule_reshards();
        Ok(lab)
    }

    fn reset(&self) {
        self.ctx.shared.reset();
    }

    /// Each consumer's arrival at the service -> received by it, labelled with its kind.
    fn histograms(&self) -> Vec<Histogrammed> {
        let consumers = self.ctx.shared.consumers.read().clone();
        consumers
            .iter()
            .map(|c| Histogrammed {
                id: super::metrics::series_id(&c.name),
                labels: vec![("kind", c.kind.name().to_string())],
                histogram: c.metrics.lock().arrival_to_receive.histogram().clone(),
            })
            .collect()
    }

    async fn apply(&self, cmd: Command) -> anyhow::Result<String> {
        match cmd {
            Command::AddPoller => self.add_poller().await.map(|n| format!("added poller {n}")),
            Command::AddKcl => self
                .add_polling(ConsumerKind::Kcl)
                .map(|n| format!("added KCL consumer {n}")),
            Command::RemoveKcl => match self.remove_polling(ConsumerKind::Kcl) {
                Some(n) => Ok(format!("removed KCL consumer {n}")),
                None => anyhow::bail!("no KCL consumer to remove: * adds one"),
            },
            // Nothing to remove is a refusal, not a confirmation.
            Command::RemovePoller => match self.remove_poller() {
                Some(n) => Ok(format!("removed poller {n}")),
                None => anyhow::bail!("no poller to remove: + adds one"),
            },
            Command::PayloadUp | Command::PayloadDown => {
                let current = self.ctx.shared.settings.lock().payload;
                let next = crate::labs::step(PAYLOAD_STEPS, current, cmd == Command::PayloadUp);
                self.set_payload(next);
                Ok(format!(
                    "payload size {}",
                    latlab_core::units::format_bytes(next)
                ))
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

    /// Stops the producer, lets the consumers catch up for at most the scenario's drain time (or
    /// until the user hurries it), then stops them.
    async fn stop(&self, hurry: &crate::labs::context::Hurry) {
        for task in self.background.lock().drain(..) {
            task.abort();
        }
        let producer = self.producer.lock().take();
        if let Some((cancel, task)) = producer {
            cancel.cancel();
            crate::labs::context::join_within(task, Duration::from_secs(30), hurry).await;
        }
        crate::labs::context::drain_until(self.scenario.drain, hurry, || self.missing() == 0).await;
        let consumers: Vec<Arc<ConsumerState>> = self.ctx.shared.consumers.read().clone();
        for c in &consumers {
            self.ctx.shared.stop_consumer(c);
        }
        let tasks: Vec<JoinHandle<()>> = self.tasks.lock().drain(..).collect();
        for t in tasks {
            crate::labs::context::join_within(t, Duration::from_secs(5), hurry).await;
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
