//! A fixed sample of the lab's figures, made up but plausible (never a measurement): the long
//! poller flat, the short poller with its empty receives, the FIFO poller in order, Lambda with
//! its batches, and a stretch where processing outlasted the visibility timeout. The screen tests,
//! the render benchmark and the cost examples draw it (`Fixture::sample`).

use std::collections::BTreeMap;
use std::time::Duration;

use super::config::ConsumerKind;
use super::ledger::Counts;
use super::snapshot::{ConsumerFigures, ProducerFigures, SqsSnapshot};
use crate::metrics::sdk::{OpCounts, SdkCounters, SdkSnapshot};
use crate::metrics::{Point, Summary};

fn sdk(ops: &[(&str, u64)], throttles: u64, retries: u64) -> SdkSnapshot {
    let operations: BTreeMap<String, OpCounts> = ops
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
        .collect();
    let calls = ops.iter().map(|(_, n)| n).sum::<u64>();
    SdkSnapshot {
        counters: SdkCounters {
            calls,
            attempts: calls + retries,
            retries,
            throttles,
            operations,
            ..SdkCounters::default()
        },
        ..SdkSnapshot::default()
    }
}

impl crate::labs::Fixture for super::SqsLab {
    /// The sample, and its last minute of sparklines.
    fn sample() -> (&'static str, SqsSnapshot, super::History) {
        let consumer = |name: &str,
                        kind: ConsumerKind,
                        p50: f64,
                        p99: f64,
                        receives: u64,
                        empty: u64,
                        redelivered: u64| ConsumerFigures {
            name: name.into(),
            kind,
            queue: format!("latlab-5e3d0a1b-{name}"),
            counts: Counts {
                sent: 6_000,
                received: 5_990 - redelivered.min(10),
                in_flight: 10 + redelivered.min(10),
                lost: 0,
                unread: 0,
                redelivered,
                foreign: 0,
                late: 0,
            },
            latency: Summary::sample(p50, p99, p99 * 2.0, 6_000),
            receive_calls: receives,
            empty_receives: empty,
            empty_while_waiting: empty / 2,
            messages: 6_000 + redelivered,
            visibility_ran_out: redelivered,
            out_of_order: 0,
            delete_failed: 0,
            invocations: if matches!(kind, ConsumerKind::Lambda { .. }) {
                1_200
            } else {
                0
            },
            sdk: sdk(
                &[("ReceiveMessage", receives), ("DeleteMessageBatch", 5_000)],
                0,
                0,
            ),
            status: "receiving".into(),
            last_error: None,
            stopped: false,
        };
        let consumers = vec![
            consumer(
                "long-poll",
                ConsumerKind::LongPoll { wait_secs: 20 },
                32.0,
                95.0,
                5_200,
                0,
                0,
            ),
            consumer(
                "short-poll",
                ConsumerKind::ShortPoll {
                    interval: Duration::from_millis(200),
                },
                140.0,
                420.0,
                3_000,
                900,
                0,
            ),
            consumer(
                "fifo",
                ConsumerKind::Fifo { wait_secs: 20 },
                38.0,
                110.0,
                5_600,
                0,
                0,
            ),
            consumer(
                "lambda",
                ConsumerKind::Lambda {
                    pollers: 5,
                    batch_size: 10,
                    window: Duration::ZERO,
                },
                45.0,
                3_100.0,
                6_500,
                300,
                140,
            ),
        ];
        let sparks = consumers
            .iter()
            .map(|c| {
                let points = (0..60u64)
                    .map(|s| Point {
                        second: 100 + s,
                        count: 10,
                        p50_us: c.latency.p50_us,
                        p99_us: if c.counts.redelivered > 0 && s >= 40 {
                            c.latency.p99_us
                        } else {
                            c.latency.p50_us * (2 + s % 3)
                        },
                        max_us: c.latency.max_us,
                    })
                    .collect();
                (c.name.clone(), points)
            })
            .collect();
        let snapshot = SqsSnapshot {
            rate: 10,
            payload_bytes: 256,
            batching: false,
            groups: 2,
            wait_secs: 20,
            visibility_secs: 30,
            processing_ms: 0,
            seconds: 600.0,
            producer: ProducerFigures {
                produced: 6_000,
                acknowledged: 24_000,
                failed: 0,
                behind: 0,
                calls: 24_000,
                send_latency: Summary::sample(16.0, 50.0, 80.0, 24_000),
                sdk: sdk(&[("SendMessage", 24_000)], 0, 0),
                status: "sending 10/s".into(),
                last_error: None,
            },
            consumers,
            unavailable: None,
        };
        ("sqs-demo", snapshot, sparks)
    }
}
