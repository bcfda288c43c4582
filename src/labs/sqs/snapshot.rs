//! A frozen view of the SQS lab: the producer's figures, each consumer's, and the live settings.

use super::config::ConsumerKind;
use super::ledger::Counts;
use crate::metrics::Summary;
use crate::metrics::sdk::SdkSnapshot;

/// One consumer's figures at a moment.
#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerFigures {
    pub name: String,
    pub kind: ConsumerKind,
    /// Its queue's name.
    pub queue: String,
    pub counts: Counts,
    /// Send -> first receive (Lambda: send -> the invocation that carried it).
    pub latency: Summary,
    pub receive_calls: u64,
    pub empty_receives: u64,
    /// Empty answers while a message sent before the receive waited in the queue.
    pub empty_while_waiting: u64,
    /// Messages handed over, redeliveries included.
    pub messages: u64,
    pub visibility_ran_out: u64,
    pub out_of_order: u64,
    pub delete_failed: u64,
    /// Lambda: invocations.
    pub invocations: u64,
    pub sdk: SdkSnapshot,
    pub status: String,
    pub last_error: Option<String>,
    /// Removed by a key (it counts no more).
    pub stopped: bool,
}

impl ConsumerFigures {
    /// ReceiveMessage calls per message received (first receipts).
    pub fn receives_per_message(&self) -> Option<f64> {
        (self.counts.received + self.counts.in_flight > 0).then(|| {
            self.receive_calls as f64 / (self.counts.received + self.counts.in_flight) as f64
        })
    }
}

/// The producer's figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProducerFigures {
    /// Messages handed out (each to every queue).
    pub produced: u64,
    /// Sends acknowledged, over all queues.
    pub acknowledged: u64,
    pub failed: u64,
    /// Sends never made: a queue's sender was behind by its whole buffer.
    pub behind: u64,
    /// Send calls (a batch is one).
    pub calls: u64,
    pub send_latency: Summary,
    pub sdk: SdkSnapshot,
    pub status: String,
    pub last_error: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SqsSnapshot {
    /// Messages a second the producer sends to each queue.
    pub rate: u32,
    pub payload_bytes: u64,
    pub batching: bool,
    pub groups: u32,
    /// The long pollers' wait, seconds (0: short polling).
    pub wait_secs: u32,
    pub visibility_secs: u32,
    pub processing_ms: u64,
    /// Seconds the producer has sent for.
    pub seconds: f64,
    pub producer: ProducerFigures,
    pub consumers: Vec<ConsumerFigures>,
    /// Why the lab did not run.
    pub unavailable: Option<String>,
}

/// Messages a plan assumes each receive and each delete carries.
pub const PLANNED_BATCH: u64 = 10;

impl SqsSnapshot {
    /// What an hour of a scenario would look like, for its plan's cost: the scenario's rate
    /// sent to every queue, each message received once and deleted in batches of
    /// [`PLANNED_BATCH`]. An assumption, said on the plan; a run prices what it measures.
    pub fn planned(s: &super::config::SqsScenario) -> SqsSnapshot {
        use crate::metrics::sdk::{OpCounts, SdkCounters};
        let per_hour = u64::from(s.rate) * 3600;
        let ops = |list: &[(&str, u64)]| SdkSnapshot {
            counters: SdkCounters {
                operations: list
                    .iter()
                    .map(|(op, n)| {
                        (
                            op.to_string(),
                            OpCounts {
                                calls: *n,
                                attempts: *n,
                                throttles: 0,
                            },
                        )
                    })
                    .collect(),
                ..SdkCounters::default()
            },
            ..SdkSnapshot::default()
        };
        let per_send = if s.batching { PLANNED_BATCH } else { 1 };
        let sends = per_hour.div_ceil(per_send) * s.consumers.len() as u64;
        let batches = per_hour.div_ceil(PLANNED_BATCH);
        SqsSnapshot {
            rate: s.rate,
            payload_bytes: s.payload,
            batching: s.batching,
            groups: s.groups,
            wait_secs: 20,
            visibility_secs: s.visibility.as_secs() as u32,
            processing_ms: s.processing.as_millis() as u64,
            seconds: 3600.0,
            producer: ProducerFigures {
                acknowledged: per_hour * s.consumers.len() as u64,
                calls: sends,
                sdk: ops(&[(
                    if s.batching {
                        "SendMessageBatch"
                    } else {
                        "SendMessage"
                    },
                    sends,
                )]),
                ..ProducerFigures::default()
            },
            consumers: s
                .consumers
                .iter()
                .map(|c| ConsumerFigures {
                    name: c.name.clone(),
                    kind: c.kind,
                    queue: String::new(),
                    counts: Counts::default(),
                    latency: Summary::default(),
                    receive_calls: batches,
                    empty_receives: 0,
                    empty_while_waiting: 0,
                    messages: per_hour,
                    visibility_ran_out: 0,
                    out_of_order: 0,
                    delete_failed: 0,
                    invocations: 0,
                    sdk: ops(&[("ReceiveMessage", batches), ("DeleteMessageBatch", batches)]),
                    status: String::new(),
                    last_error: None,
                    stopped: false,
                })
                .collect(),
            unavailable: None,
        }
    }
}
