//! The SQS lab's part of `latlab-run-report/2`: its types, written from the lab's snapshot and
//! read back into it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::config::ConsumerKind;
use super::ledger::Counts;
use super::snapshot::{ConsumerFigures, ProducerFigures, SqsSnapshot};
use crate::metrics::json::{Sdk, Summary, sdk, summary};

#[derive(Serialize, Deserialize)]
pub struct Sqs {
    pub rate: u32,
    pub payload_bytes: u64,
    pub batching: bool,
    pub groups: u32,
    pub wait_secs: u32,
    pub visibility_secs: u32,
    pub processing_ms: u64,
    pub seconds: f64,
    pub producer: Producer,
    pub consumers: Vec<Consumer>,
    pub unavailable: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct Producer {
    pub produced: u64,
    pub acknowledged: u64,
    pub failed: u64,
    pub behind: u64,
    pub calls: u64,
    pub send_latency: Summary,
    pub sdk: Sdk,
    pub status: String,
    pub last_error: Option<String>,
}

/// How a consumer reads its queue.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Kind {
    LongPoll {
        wait_secs: u32,
    },
    ShortPoll {
        interval_ms: u64,
    },
    Fifo {
        wait_secs: u32,
    },
    Lambda {
        pollers: u32,
        batch_size: u32,
        window_ms: u64,
    },
}

#[derive(Serialize, Deserialize)]
pub struct Consumer {
    pub name: String,
    pub how: Kind,
    pub queue: String,
    /// received + lost + in_flight + unread = sent.
    pub sent: u64,
    pub received: u64,
    pub in_flight: u64,
    pub lost: u64,
    pub unread: u64,
    pub redelivered: u64,
    pub foreign: u64,
    pub late: u64,
    pub send_to_receive: Summary,
    pub receive_calls: u64,
    pub empty_receives: u64,
    pub empty_while_waiting: u64,
    pub messages: u64,
    pub visibility_ran_out: u64,
    pub out_of_order: u64,
    pub delete_failed: u64,
    pub invocations: u64,
    pub sdk: Sdk,
    pub status: String,
    pub last_error: Option<String>,
    pub stopped: bool,
}

fn kind(k: ConsumerKind) -> Kind {
    match k {
        ConsumerKind::LongPoll { wait_secs } => Kind::LongPoll { wait_secs },
        ConsumerKind::ShortPoll { interval } => Kind::ShortPoll {
            interval_ms: interval.as_millis() as u64,
        },
        ConsumerKind::Fifo { wait_secs } => Kind::Fifo { wait_secs },
        ConsumerKind::Lambda {
            pollers,
            batch_size,
            window,
        } => Kind::Lambda {
            pollers,
            batch_size,
            window_ms: window.as_millis() as u64,
        },
    }
}

impl Kind {
    fn into_kind(self) -> ConsumerKind {
        match self {
            Kind::LongPoll { wait_secs } => ConsumerKind::LongPoll { wait_secs },
            Kind::ShortPoll { interval_ms } => ConsumerKind::ShortPoll {
                interval: Duration::from_millis(interval_ms),
            },
            Kind::Fifo { wait_secs } => ConsumerKind::Fifo { wait_secs },
            Kind::Lambda {
                pollers,
                batch_size,
                window_ms,
            } => ConsumerKind::Lambda {
                pollers,
                batch_size,
                window: Duration::from_millis(window_ms),
            },
        }
    }
}

impl crate::labs::ReportJson<SqsSnapshot> for Sqs {
    fn of(s: &SqsSnapshot) -> Sqs {
        let p = &s.producer;
        Sqs {
            rate: s.rate,
            payload_bytes: s.payload_bytes,
            batching: s.batching,
            groups: s.groups,
            wait_secs: s.wait_secs,
            visibility_secs: s.visibility_secs,
            processing_ms: s.processing_ms,
            seconds: s.seconds,
            producer: Producer {
                produced: p.produced,
                acknowledged: p.acknowledged,
                failed: p.failed,
                behind: p.behind,
                calls: p.calls,
                send_latency: summary(&p.send_latency),
                sdk: sdk(&p.sdk),
                status: p.status.clone(),
                last_error: p.last_error.clone(),
            },
            consumers: s
                .consumers
                .iter()
                .map(|c| Consumer {
                    name: c.name.clone(),
                    how: kind(c.kind),
                    queue: c.queue.clone(),
                    sent: c.counts.sent,
                    received: c.counts.received,
                    in_flight: c.counts.in_flight,
                    lost: c.counts.lost,
                    unread: c.counts.unread,
                    redelivered: c.counts.redelivered,
                    foreign: c.counts.foreign,
                    late: c.counts.late,
                    send_to_receive: summary(&c.latency),
                    receive_calls: c.receive_calls,
                    empty_receives: c.empty_receives,
                    empty_while_waiting: c.empty_while_waiting,
                    messages: c.messages,
                    visibility_ran_out: c.visibility_ran_out,
                    out_of_order: c.out_of_order,
                    delete_failed: c.delete_failed,
                    invocations: c.invocations,
                    sdk: sdk(&c.sdk),
                    status: c.status.clone(),
                    last_error: c.last_error.clone(),
                    stopped: c.stopped,
                })
                .collect(),
            unavailable: s.unavailable.clone(),
        }
    }

    fn into_snapshot(self) -> SqsSnapshot {
        let p = self.producer;
        SqsSnapshot {
            rate: self.rate,
            payload_bytes: self.payload_bytes,
            batching: self.batching,
            groups: self.groups,
            wait_secs: self.wait_secs,
            visibility_secs: self.visibility_secs,
            processing_ms: self.processing_ms,
            seconds: self.seconds,
            producer: ProducerFigures {
                produced: p.produced,
                acknowledged: p.acknowledged,
                failed: p.failed,
                behind: p.behind,
                calls: p.calls,
                send_latency: p.send_latency.into_summary(),
                sdk: p.sdk.into_snapshot(),
                status: p.status,
                last_error: p.last_error,
            },
            consumers: self
                .consumers
                .into_iter()
                .map(|c| ConsumerFigures {
                    name: c.name,
                    kind: c.how.into_kind(),
                    queue: c.queue,
                    counts: Counts {
                        sent: c.sent,
                        received: c.received,
                        in_flight: c.in_flight,
                        lost: c.lost,
                        unread: c.unread,
                        redelivered: c.redelivered,
                        foreign: c.foreign,
                        late: c.late,
                    },
                    latency: c.send_to_receive.into_summary(),
                    receive_calls: c.receive_calls,
                    empty_receives: c.empty_receives,
                    empty_while_waiting: c.empty_while_waiting,
                    messages: c.messages,
                    visibility_ran_out: c.visibility_ran_out,
                    out_of_order: c.out_of_order,
                    delete_failed: c.delete_failed,
                    invocations: c.invocations,
                    sdk: c.sdk.into_snapshot(),
                    status: c.status,
                    last_error: c.last_error,
                    stopped: c.stopped,
                })
                .collect(),
            unavailable: self.unavailable,
        }
    }
}

/// Added after `latlab-run-report/2` was frozen: written only when the run has the lab.
impl crate::labs::ReportPart for Sqs {}
