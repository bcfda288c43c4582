//! The SQS lab: one producer feeding a long poller, a short poller, a FIFO long poller and Lambda
//! on a queue, each consumer on its own queue, every one a real aws-sdk-sqs client over HTTP. The
//! producer's rate is the Kinesis lab's, so a run can set a queue beside a stream.
//!
//! `config.rs` is its part of a scenario file; `body.rs` what a message carries; `ledger.rs` each
//! consumer's accounting by seq (`received + lost + in flight + unread = sent`); `state.rs` what
//! the probes write; `producer.rs` and `consumer.rs` the probes; `queues.rs` the queues a run
//! creates, names and tags, and removes.

pub mod body;
mod calibrate;
mod cleanup;
pub mod client;
pub mod config;
pub mod consumer;
pub mod cost;
mod doctor;
pub mod json;
pub mod keys;
mod lab;
pub mod ledger;
mod metrics;
mod plan;
pub mod producer;
pub mod queues;
pub mod report;
mod sample;
pub mod snapshot;
pub mod state;
pub mod view;

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use config::{ConsumerKind, SqsScenario};
use consumer::Consuming;
use producer::{Feed, Producing};
pub use snapshot::{ConsumerFigures, ProducerFigures, SqsSnapshot};
use state::{ConsumerState, Knobs, ProducerState};

/// What the SQS lab's keys ask of it while it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// The long pollers' next wait (of [`config::WAIT_STEPS`]).
    WaitNext,
    AddConsumer,
    RemoveConsumer,
    GroupsUp,
    GroupsDown,
    /// SendMessage per message <-> SendMessageBatch.
    Batching,
    /// The next visibility timeout (of [`config::VISIBILITY_STEPS`]).
    VisibilityNext,
    ProcessingUp,
    ProcessingDown,
    /// The producer's rate, a step of [`config::RATE_STEPS`] up or down.
    RateUp,
    RateDown,
}

/// The lab: its probes, once started.
pub struct SqsLab {
    probes: Probes,
}

/// Its last seconds: each consumer's send -> receive, by name.
pub type History = Vec<(String, Vec<crate::metrics::Point>)>;

const SCENARIOS: &[(&str, &str)] = &[
    ("sqs-demo", include_str!("scenarios/sqs-demo.toml")),
    (
        "queue-or-stream",
        include_str!("scenarios/queue-or-stream.toml"),
    ),
];

impl crate::labs::Lab for SqsLab {
    const FACTS: crate::labs::Facts = crate::labs::Facts {
        service: Some(latlab_core::services::Service::Sqs),
        stopping: "the producer has stopped; consumers are draining the queues",
        overview_weight: 3,
        colours: view::COLOURS,
        compared: ("SQS: send -> receive", "consumer"),
        quantities: &["send_to_receive"],
        prices: cost::PRICES,
        ..crate::labs::Facts::new(crate::labs::LabKind::Sqs, "SQS", "sqs-demo", SCENARIOS)
    };

    type File = config::SqsFile;
    type Seed = crate::labs::NoSeed;
    type Json = json::Sqs;
    type Scenario = SqsScenario;
    type Command = Command;
    type Snapshot = SqsSnapshot;
    type History = History;
    type Target = crate::labs::target::Nothing;
}

impl crate::labs::LabCommand for Command {
    fn what(self) -> &'static str {
        match self {
            Command::WaitNext => "the SQS long pollers' next wait",
            Command::AddConsumer => "adding an SQS long poller",
            Command::RemoveConsumer => "removing an SQS long poller",
            Command::GroupsUp => "more SQS FIFO message groups",
            Command::GroupsDown => "fewer SQS FIFO message groups",
            Command::Batching => "switching the SQS producer's batching",
            Command::VisibilityNext => "the next SQS visibility timeout",
            Command::ProcessingUp => "a longer SQS processing time",
            Command::ProcessingDown => "a shorter SQS processing time",
            Command::RateUp => "raising the SQS producer's rate",
            Command::RateDown => "lowering the SQS producer's rate",
        }
    }
}

use super::step;

/// The running probes: the producer, its feeds and the consumers, on one SQS client each.
pub struct Probes {
    pub run: String,
    pub knobs: Arc<Knobs>,
    pub producer: Arc<ProducerState>,
    pub consumers: Mutex<Vec<Arc<ConsumerState>>>,
    feeds: Arc<Mutex<Vec<Feed>>>,
    /// Makes a client whose attempts are counted in the stats given.
    client: Box<ClientOf>,
    producing: Producing,
    consuming: Consuming,
    queues: queues::Queues,
    scenario: SqsScenario,
    cancel: CancellationToken,
    producer_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Consumers added by a key so far (names `long-poll-2`, ...).
    added: std::sync::atomic::AtomicU32,
    pub clock: Instant,
}

/// Makes an SQS client counting its attempts in the stats given (each client its own retry
/// quota).
pub type ClientOf = dyn Fn(&Arc<crate::metrics::SdkStats>) -> aws_sdk_sqs::Client + Send + Sync;

impl Probes {
    /// Creates the scenario's queues on `client`'s endpoint (named after `run`, tagged with it)
    /// and starts the consumers, then the producer.
    pub async fn start(
        client: Box<ClientOf>,
        run: &str,
        scenario: &SqsScenario,
    ) -> anyhow::Result<Probes> {
        let clock = Instant::now();
        let knobs = Arc::new(Knobs::new(scenario));
        let producer = Arc::new(ProducerState::default());
        // Creating and deleting queues is no producer's or consumer's call.
        let admin = Arc::new(crate::metrics::SdkStats::default());
        let queues = queues::Queues::new(client(&admin), run, &scenario.queue_prefix);
        let producing = Producing {
            client: client(&producer.sdk),
            run: run.to_string(),
            payload: scenario.payload,
            knobs: knobs.clone(),
            producer: producer.clone(),
            clock,
        };
        let mut consumers = Vec::new();
        for spec in &scenario.consumers {
            let c = Arc::new(ConsumerState::new(
                &spec.name,
                spec.kind,
                &queues.name_of(&spec.name, spec.kind.fifo()),
                false,
            ));
            let url = queues
                .create(&c.queue_name, spec.kind.fifo(), scenario.visibility)
                .await?;
            *c.queue_url.lock() = url;
            consumers.push(c);
        }
        // Each consumer's own client counts its own attempts.
        let consuming = Consuming {
            client: client(&admin),
            run: run.to_string(),
            knobs: knobs.clone(),
            clock,
        };
        let cancel = CancellationToken::new();
        let feeds = Arc::new(Mutex::new(Vec::new()));
        for c in &consumers {
            let cx = Consuming {
                client: client(&c.sdk),
                ..consuming.clone()
            };
            consumer::start(&cx, c);
            feeds.lock().push(producer::feed(&producing, c, &cancel));
        }
        let task = tokio::spawn(producer::pace(
            producing.clone(),
            feeds.clone(),
            cancel.clone(),
            scenario.produce_for,
        ));
        Ok(Probes {
            run: run.to_string(),
            knobs,
            producer,
            consumers: Mutex::new(consumers),
            feeds,
            client,
            producing,
            consuming,
            queues,
            scenario: scenario.clone(),
            cancel,
            producer_task: Mutex::new(Some(task)),
            added: std::sync::atomic::AtomicU32::new(1),
            clock,
        })
    }

    /// Seconds since the probes started.
    pub fn second(&self) -> u64 {
        self.clock.elapsed().as_secs()
    }

    /// Every consumer's figures now.
    pub fn figures(&self) -> Vec<ConsumerFigures> {
        let second = self.second();
        let retention = queues::RETENTION.as_secs();
        self.consumers
            .lock()
            .iter()
            .map(|c| {
                let counts = c.ledger.lock().counts(second, retention);
                let m = c.metrics.lock();
                ConsumerFigures {
                    name: c.name.clone(),
                    kind: *c.kind.lock(),
                    queue: c.queue_name.clone(),
                    counts,
                    latency: m.send_to_receive.summary(),
                    receive_calls: m.receive_calls,
                    empty_receives: m.empty_receives,
                    empty_while_waiting: m.empty_while_waiting,
                    messages: m.messages,
                    visibility_ran_out: m.visibility_ran_out,
                    out_of_order: m.out_of_order,
                    delete_failed: m.delete_failed,
                    invocations: m.invocations,
                    sdk: c.sdk.snapshot(),
                    status: c.status.lock().clone(),
                    last_error: c.last_error.lock().clone(),
                    stopped: c.removed.load(std::sync::atomic::Ordering::Relaxed),
                }
            })
            .collect()
    }

    /// Adds a long poller on a queue of its own; the producer feeds it from now on. Returns its
    /// name.
    pub async fn add_consumer(&self) -> anyhow::Result<String> {
        let n = self
            .added
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        let name = format!("long-poll-{n}");
        let kind = ConsumerKind::LongPoll {
            wait_secs: self.knobs.wait_secs(),
        };
        let c = Arc::new(ConsumerState::new(
            &name,
            kind,
            &self.queues.name_of(&name, false),
            true,
        ));
        let url = self
            .queues
            .create(
                &c.queue_name,
                false,
                Duration::from_secs(u64::from(self.knobs.visibility_secs())),
            )
            .await?;
        *c.queue_url.lock() = url;
        let cx = Consuming {
            client: (self.client)(&c.sdk),
            ..self.consuming.clone()
        };
        consumer::start(&cx, &c);
        self.consumers.lock().push(c.clone());
        self.feeds
            .lock()
            .push(producer::feed(&self.producing, &c, &self.cancel));
        Ok(name)
    }

    /// Removes the last consumer a key added that is still there (its queue goes at cleanup, its
    /// figures stay); its name, or None when none was added.
    pub fn remove_consumer(&self) -> Option<String> {
        let consumers = self.consumers.lock();
        let c = consumers
            .iter()
            .rfind(|c| c.added && !c.removed.load(std::sync::atomic::Ordering::Relaxed))?
            .clone();
        drop(consumers);
        c.removed.store(true, std::sync::atomic::Ordering::Relaxed);
        c.cancel.cancel();
        self.feeds.lock().retain(|f| !Arc::ptr_eq(&f.consumer, &c));
        Some(c.name.clone())
    }

    /// Stops the producer and waits for its sends in flight (a message is sent when its send
    /// is answered: one answered after the drain began would stay unread), lets the consumers
    /// read what is left for up to `drain`, then stops them.
    pub async fn stop(&self, drain: Duration, hurry: &crate::labs::context::Hurry) {
        self.cancel.cancel();
        let task = self.producer_task.lock().take();
        if let Some(t) = task {
            let _ = t.await;
        }
        let senders: Vec<_> = self
            .feeds
            .lock()
            .iter_mut()
            .filter_map(|f| f.sender.take())
            .collect();
        for s in senders {
            let _ = s.await;
        }
        crate::labs::context::drain_until(drain, hurry, || {
            self.figures()
                .iter()
                .all(|f| f.counts.unread == 0 && f.counts.in_flight == 0)
        })
        .await;
        for c in self.consumers.lock().iter() {
            c.cancel.cancel();
        }
    }

    /// Deletes the queues the run created; what could not be deleted.
    pub async fn cleanup(&self) -> Vec<String> {
        self.queues.delete_all().await
    }

    /// The scenario the probes started with.
    pub fn scenario(&self) -> &SqsScenario {
        &self.scenario
    }
}
