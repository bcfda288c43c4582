//! Fixed views: round 2's set-up as the screen shows it, with made-up but plausible figures, its
//! backend labelled as a fixture (never as the emulator or a measurement). The snapshot tests and
//! the render benchmark draw them, since a live lab never draws the same screen twice.

use std::collections::BTreeMap;

use super::view::View;
use crate::labs::kinesis::config::ConsumerKind;
use crate::labs::kinesis::snapshot::{
    BatchSize, ConsumerSnapshot, KinesisSnapshot, ProducerSnapshot,
};
use crate::metrics::sdk::{SdkCounters, SdkSnapshot};
use crate::metrics::{Point, SeqCounts, Summary};
use crate::run::snapshot::{Backend, Snapshot};

fn summary(p50_ms: f64, p99_ms: f64, max_ms: f64, count: u64) -> Summary {
    let us = |ms: f64| (ms * 1000.0) as u64;
    Summary {
        count,
        min_us: us(p50_ms / 4.0),
        p50_us: us(p50_ms),
        p90_us: us((p50_ms + p99_ms) / 2.0),
        p99_us: us(p99_ms),
        p999_us: us(max_ms * 0.95),
        max_us: us(max_ms),
        mean_us: p50_ms * 1000.0,
    }
}

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
            ConsumerKind::Efo => "SubscribeToShard, re-subscribing from the continuation".into(),
        },
        status: if throttles > 0 {
            "reading, 812 ms behind".into()
        } else {
            "subscribed (14 ms to subscribe)".into()
        },
        stopped_at_secs: None,
        retry_quota_partition: format!("latlab-{}-0", kind.name()),
        arrival_to_receive: summary(p50, p99, max, 1500),
        send_to_receive: summary(p50 + 70.0, p99 + 70.0, max + 70.0, 1500),
        recent: summary(p50, p99, max, 50),
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
            attempt_latency: summary(25.0, 60.0, 80.0, 1500),
            retry_wait: summary(500.0, 1800.0, 2500.0, throttles),
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
        last_error: None,
    }
}

/// A fixed view of the seed's round 2: the same screen every time.
pub fn sample_view() -> View {
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
    View {
        snapshot: Snapshot {
            scenario: "seed-kinesis-round2".into(),
            backend: Backend {
                kind: "fixture".into(),
                label:
                    "test fixture: made-up figures in the shape of the seed's round 2, not measured"
                        .into(),
                latency_profile: None,
                endpoint: None,
                region: "us-east-1".into(),
                model: Vec::new(),
            },
            elapsed_secs: 300.0,
            producing_secs: 298.0,
            complete: false,
            kinesis: Some(KinesisSnapshot {
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
                    put_latency: summary(76.0, 130.0, 150.0, 1500),
                    sdk: SdkSnapshot::default(),
                    last_error: None,
                    unsupported: None,
                },
                send_to_arrival: summary(71.0, 122.0, 140.0, 1500),
                consumers,
                get_records_calls_per_sec: 9.0,
                get_records_limit_per_sec: 5,
            }),
            s3: None,
            redis: None,
            faults: Default::default(),
            process: Default::default(),
        },
        history: crate::run::History {
            kinesis: Some(crate::labs::kinesis::KinesisHistory {
                consumers: sparks,
                read_rate: (0..60)
                    .map(|s| if s % 3 == 0 { 5.0 } else { 9.0 })
                    .collect(),
            }),
            s3: None,
            redis: None,
        },
    }
}

/// A fixed view of the S3 lab: Standard now active, after a stretch on Express.
pub fn sample_s3_view() -> View {
    use crate::labs::s3::OpSnapshot;
    use crate::labs::s3::snapshot::S3Snapshot;
    use crate::services::s3::Class;
    let op = |class: Class, op: &str, fb: f64, total: f64, mbs: f64| OpSnapshot {
        class,
        op: op.into(),
        first_byte: summary(fb, fb * 3.0, fb * 6.0, 900),
        total: summary(total, total * 3.0, total * 6.0, 900),
        requests: 900,
        bytes: 90_000_000,
        mb_per_sec: mbs,
        per_sec: 2.0,
        slow_downs: 0,
        errors: 0,
        last_error: None,
    };
    let ops = vec![
        op(Class::ExpressOneZone, "PUT", 11.6, 11.6, 8.6),
        op(Class::ExpressOneZone, "GET", 10.9, 13.2, 7.6),
        op(Class::Standard, "PUT", 67.7, 67.7, 1.5),
        op(Class::Standard, "GET", 95.4, 116.0, 0.9),
    ];
    // Express for the first half minute, then `s` switched to Standard.
    let sparks = ops
        .iter()
        .map(|o| {
            let pts = (0..60u64)
                .map(|s| {
                    if (s < 30) == (o.class == Class::ExpressOneZone) {
                        Point {
                            second: 100 + s,
                            count: 8,
                            p50_us: o.total.p50_us,
                            p99_us: o.total.p99_us / 60 * (30 + (s * 11) % 30),
                            max_us: o.total.max_us,
                        }
                    } else {
                        Point {
                            second: 100 + s,
                            ..Point::default()
                        }
                    }
                })
                .collect();
            (o.class, o.op.clone(), pts)
        })
        .collect();
    let mut view = sample_view();
    view.snapshot.scenario = "s3-demo".into();
    view.snapshot.kinesis = None;
    view.snapshot.s3 = Some(S3Snapshot {
        class: Class::Standard,
        payload_bytes: 100_000,
        concurrency: 1,
        standard_bucket: "latlab-standard-5e3d".into(),
        express_bucket: "latlab-express-5e3d--use1-az4--x-s3".into(),
        ops,
        create_sessions: Some(1),
        sdk: SdkSnapshot::default(),
        matrix: None,
        express_unsupported: None,
    });
    view.history.kinesis = None;
    view.history.s3 = Some(sparks);
    view
}

/// A fixed view of the Redis lab: 1 KB values over the t3-micro link, the three methods live.
pub fn sample_redis_view() -> View {
    use crate::labs::redis::local::ShaperStats;
    use crate::labs::redis::snapshot::RedisSnapshot;
    use crate::labs::redis::{Method, MethodSnapshot};
    let method = |method: Method, p50: f64, behind: Option<u64>| MethodSnapshot {
        method,
        lag: summary(p50, p50 * 2.5, p50 * 4.0, 240),
        tries: 240,
        last_error: None,
        errors: 0,
        behind_bytes: behind.map(|b| crate::metrics::BytesSummary {
            count: 240,
            min_bytes: b,
            p50_bytes: b,
            p90_bytes: b,
            p99_bytes: b,
            max_bytes: b,
            mean_bytes: b as f64,
        }),
    };
    let methods = vec![
        method(Method::NewClients, 3.4, None),
        method(Method::Persistent, 1.3, None),
        method(Method::Offset, 3.2, Some(1_061)),
    ];
    let sparks = methods
        .iter()
        .map(|m| {
            let pts = (0..60u64)
                .map(|s| Point {
                    second: 100 + s,
                    count: 4,
                    p50_us: m.lag.p50_us,
                    p99_us: m.lag.p99_us,
                    max_us: m.lag.p99_us / 60 * (1 + (s * 7) % 60),
                })
                .collect();
            (m.method, pts)
        })
        .collect();
    let mut view = sample_view();
    view.snapshot.scenario = "redis-demo".into();
    view.snapshot.kinesis = None;
    view.snapshot.redis = Some(RedisSnapshot {
        primary: "redis://127.0.0.1:40411".into(),
        replica: "redis://127.0.0.1:40413".into(),
        local: true,
        link: Some(ShaperStats {
            link: "t3-micro".into(),
            latency_ms: 0.25,
            bandwidth: 62_500_000.0,
            bytes_to_replica: 1_250_000,
            bytes_to_primary: 9_000,
        }),
        value_bytes: 1_000,
        cpu_load: false,
        memory_full: false,
        status: "measuring".into(),
        methods,
        conditions: Vec::new(),
        unavailable: None,
        node_type: "cache.t3.micro".into(),
    });
    view.history.kinesis = None;
    view.history.redis = Some(sparks);
    view
}

/// A fixed view of the `tour` scenario: the Kinesis round 2, S3 and Redis labs at once, as the
/// overview shows them.
pub fn sample_tour_view() -> View {
    let mut view = sample_view();
    let s3 = sample_s3_view();
    let redis = sample_redis_view();
    view.snapshot.scenario = "tour".into();
    view.snapshot.s3 = s3.snapshot.s3;
    view.history.s3 = s3.history.s3;
    view.snapshot.redis = redis.snapshot.redis;
    view.history.redis = redis.history.redis;
    view
}
