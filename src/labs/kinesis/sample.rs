//! A fixed sample of the lab's figures: round 2's set-up as its screen shows it, with made-up
//! but plausible figures (never a measurement). The screen tests, the render benchmark and the
//! cost examples draw it (`Fixture::sample`).

use std::collections::BTreeMap;

use super::KinesisHistory;
use super::config::ConsumerKind;
use super::ledger::SeqCounts;
use super::snapshot::{BatchSize, ConsumerSnapshot, KinesisSnapshot, ProducerSnapshot};
use crate::metrics::sdk::{SdkCounters, SdkSnapshot};
use crate::metrics::{Point, Summary};

fn consumer(
    name: &str,
    kind: ConsumerKind,
    p50: f64,
    p99: f64,
    max: f64,
    throttles: u64,
    escaped: u64,
) -> ConsumerSnapshot {
    // A throttled poller is a few records behind.
    let unread = (throttles / 30).min(20);
    let mut esc = BTreeMap::new();
    if escaped > 0 {
        esc.insert(
            "ProvisionedThroughputExceededException".to_string(),
            escaped,
        );
    }
    ConsumerSnapshot {
        name: name.into(),
        kind,
        detail: match kind {
            ConsumerKind::Poller => "every 200ms (sleep after each call), own retry quota".into(),
            ConsumerKind::LambdaStandard => "polls every 1s, batch size 100, window 0ms".into(),
            ConsumerKind::LambdaEfo => "batch size 100, window 0ms".into(),
            ConsumerKind::Kcl => {
                "KCL 2.x: idle 1.5s after each call returns, 10,000 records a call".into()
            }
            ConsumerKind::Efo => "SubscribeToShard, re-subscribing from the continuation".into(),
        },
        status: if throttles > 0 {
            "reading, 812 ms behind".into()
        } else {
            "subscribed (14 ms to subscribe)".into()
        },
        stopped_at_secs: None,
        retry_quota_partition: format!("latlab-{}-0", kind.name()),
        arrival_to_receive: Summary::sample(p50, p99, max, 1500),
        send_to_receive: Summary::sample(p50 + 70.0, p99 + 70.0, max + 70.0, 1500),
        recent: Summary::sample(p50, p99, max, 50),
        counts: SeqCounts {
            acknowledged: 1500,
            received: 1500 - unread,
            unread,
            ..SeqCounts::default()
        },
        out_of_order: 0,
        shards: Vec::new(),
        millis_behind: Some(if unread > 0 { 812 } else { 0 }),
        sdk: SdkSnapshot {
            counters: SdkCounters {
                calls: 1500,
                attempts: 1500 + throttles,
                retries: throttles,
                throttles,
                escaped: esc,
                quota_left: Some(500 - throttles.min(400)),
                quota_refusals: 0,
                client_waits: 0,
                operations: BTreeMap::from([(
                    "GetRecords".to_string(),
                    crate::metrics::sdk::OpCounts {
                        calls: 1500,
                        attempts: 1500 + throttles,
                        throttles,
                    },
                )]),
            },
            attempt_latency: Summary::sample(25.0, 60.0, 80.0, 1500),
            retry_wait: Summary::sample(500.0, 1800.0, 2500.0, throttles),
            client_wait: Summary::default(),
        },
        batches: 300,
        batch_sizes: vec![
            BatchSize {
                size: 5,
                records: 1020,
            },
            BatchSize {
                size: 4,
                records: 240,
            },
            BatchSize {
                size: 6,
                records: 240,
            },
        ],
        events: BTreeMap::from([("subscriptions".to_string(), 1)]),
        foreign_records: 0,
        foreign_runs: Vec::new(),
        last_error: None,
    }
}

impl crate::labs::Fixture for super::KinesisLab {
    /// Round 2's consumers: two fan-out readers, three GetRecords pollers throttled on the shard,
    /// a Lambda on the standard iterator; their last minute of sparklines.
    fn sample() -> (&'static str, KinesisSnapshot, KinesisHistory) {
        let consumers = vec![
            consumer(
                "SDK subscribe_to_shard",
                ConsumerKind::Efo,
                73.4,
                133.2,
                149.1,
                0,
                0,
            ),
            consumer(
                "Lambda EFO",
                ConsumerKind::LambdaEfo,
                71.6,
                118.7,
                149.2,
                0,
                0,
            ),
            consumer(
                "get_records",
                ConsumerKind::Poller,
                730.2,
                8039.4,
                12041.4,
                214,
                19,
            ),
            consumer(
                "get_records 2",
                ConsumerKind::Poller,
                774.0,
                6991.7,
                10990.7,
                198,
                10,
            ),
            consumer(
                "get_records 3",
                ConsumerKind::Poller,
                838.3,
                7427.0,
                11556.9,
                205,
                15,
            ),
            consumer(
                "Lambda standard iterator",
                ConsumerKind::LambdaStandard,
                511.1,
                1915.8,
                3207.8,
                31,
                0,
            ),
        ];
        let sparks = consumers
            .iter()
            .map(|c| {
                (0..60u64)
                    .map(|s| Point {
                        second: 240 + s,
                        count: 5,
                        p50_us: c.arrival_to_receive.p50_us,
                        p99_us: c.arrival_to_receive.p99_us / 60 * (1 + (s * 7) % 60),
                        max_us: c.arrival_to_receive.max_us,
                    })
                    .collect()
            })
            .collect();
        (
            "seed-kinesis-round2",
            KinesisSnapshot {
                stream: "order-events".into(),
                shards: 1,
                updating: false,
                shard_counts: Vec::new(),
                retry: "standard retries: 4 attempts, back-off 1s .. 20s full jitter".into(),
                producer: ProducerSnapshot {
                    asked_rate: 5.0,
                    achieved_rate: 5.0,
                    achieved_over_secs: 10.0,
                    mode: "PutRecord per record".into(),
                    max_in_flight: 64,
                    payload_bytes: 128,
                    sent: 1500,
                    acked: 1500,
                    resent: 0,
                    failed: 0,
                    records_refused: 0,
                    in_flight_full: 0.0,
                    behind: 0,
                    cpu: 0.04,
                    cores: 2,
                    put_latency: Summary::sample(76.0, 130.0, 150.0, 1500),
                    sdk: SdkSnapshot::default(),
                    last_error: None,
                    unsupported: None,
                    elsewhere: None,
                },
                send_to_arrival: Summary::sample(71.0, 122.0, 140.0, 1500),
                consumers,
                get_records_calls_per_sec: 9.0,
                get_records_limit_per_sec: 5,
            },
            KinesisHistory {
                consumers: sparks,
                read_rate: (0..60)
                    .map(|s| if s % 3 == 0 { 5.0 } else { 9.0 })
                    .collect(),
            },
        )
    }
}
