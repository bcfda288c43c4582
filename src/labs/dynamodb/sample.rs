//! A fixed sample of the lab's figures, made up but plausible (never a measurement): a provisioned
//! table of five partitions with the keys skewed, one partition at its limit and throttled while
//! the table uses a fifth of its capacity, and the three change consumers. The screen tests, the
//! render benchmark and the cost examples draw it (`Fixture::sample`).

use std::collections::BTreeMap;

use super::config::{Billing, CdcKind};
use super::snapshot::{
    CdcCounts, CdcFigures, DynamoSnapshot, PartitionFigures, ReaderFigures, TableUse, WriterFigures,
};
use crate::metrics::sdk::{OpCounts, SdkCounters, SdkSnapshot};
use crate::metrics::{Point, Summary};

fn sdk(op: &str, calls: u64, throttles: u64, retries: u64) -> SdkSnapshot {
    SdkSnapshot {
        counters: SdkCounters {
            calls,
            attempts: calls + retries,
            retries,
            throttles,
            operations: BTreeMap::from([(
                op.to_string(),
                OpCounts {
                    calls,
                    attempts: calls + retries,
                    throttles,
                },
            )]),
            ..SdkCounters::default()
        },
        ..SdkSnapshot::default()
    }
}

impl crate::labs::Fixture for super::DynamoLab {
    fn sample() -> (&'static str, DynamoSnapshot, super::History) {
        let partitions = (0..5)
            .map(|i| PartitionFigures {
                index: i,
                write_units: if i == 2 { 1_000.0 } else { 32.0 },
                read_units: if i == 2 { 36.0 } else { 1.0 },
                write_limit: 1_000,
                read_limit: 3_000,
                throttled_last_second: if i == 2 { 190 } else { 0 },
                throttled: if i == 2 { 9_400 } else { 0 },
                write_units_total: if i == 2 { 61_000.0 } else { 9_800.0 },
            })
            .collect();
        let consumer = |name: &str, how: CdcKind, p50: f64, p99: f64, calls: u64| CdcFigures {
            name: name.into(),
            how,
            counts: CdcCounts {
                written: 23_800,
                received: 23_790,
                lost: 0,
                unread: 10,
                duplicates: 0,
                unacknowledged: 0,
            },
            latency: Summary::sample(p50, p99, p99 * 1.6, 23_790),
            calls,
            empty: calls / 3,
            invocations: if matches!(how, CdcKind::Lambda { .. }) {
                calls - calls / 3
            } else {
                0
            },
            sdk: sdk(
                if how == CdcKind::FanOut {
                    "SubscribeToShard"
                } else {
                    "GetRecords"
                },
                calls,
                0,
                0,
            ),
            status: "reading 5 shard(s)".into(),
            last_error: None,
            added: false,
            stopped: false,
        };
        let cdc = vec![
            consumer(
                "streams-poller",
                CdcKind::StreamsPoller { interval_ms: 500 },
                290.0,
                560.0,
                1_200,
            ),
            consumer(
                "lambda",
                CdcKind::Lambda { batch_size: 100 },
                170.0,
                330.0,
                2_400,
            ),
            consumer("fan-out", CdcKind::FanOut, 110.0, 240.0, 600),
        ];
        let snapshot = DynamoSnapshot {
            table: "latlab-5e3d0a1b".into(),
            billing: Billing::Provisioned {
                read: 3_000,
                write: 4_000,
            },
            item_size: 4096,
            rate: 300,
            keys: 100,
            skewed: true,
            hot_share: 0.9,
            reads: 20,
            consistent: false,
            seconds: 120.0,
            writer: WriterFigures {
                produced: 36_000,
                written: 23_800,
                failed: 4_100,
                behind: 0,
                units: 100_200.0,
                latency: Summary::sample(6.0, 410.0, 1_900.0, 27_900),
                throttled: BTreeMap::from([(
                    "TableWriteKeyRangeThroughputExceeded".to_string(),
                    9_400,
                )]),
                sdk: sdk("PutItem", 27_900, 9_400, 5_300),
                status: "writing 300/s".into(),
                last_error: Some(
                    "ProvisionedThroughputExceededException: Throughput exceeds the current capacity for one or more partitions of your table".into(),
                ),
            },
            readers: vec![
                ReaderFigures {
                    consistency: "strong".into(),
                    reads: 0,
                    failed: 0,
                    units: 0.0,
                    latency: Summary::default(),
                    throttled: BTreeMap::new(),
                },
                ReaderFigures {
                    consistency: "eventual".into(),
                    reads: 2_400,
                    failed: 0,
                    units: 1_200.0,
                    latency: Summary::sample(4.0, 9.0, 14.0, 2_400),
                    throttled: BTreeMap::new(),
                },
            ],
            table_use: TableUse {
                write_units: 1_128.0,
                read_units: 40.0,
                write_capacity: Some(4_000),
                read_capacity: Some(3_000),
            },
            partitions,
            cdc,
            unavailable: None,
        };
        let series = |name: &str, p50: u64, p99: u64| {
            let points = (0..60u64)
                .map(|s| Point {
                    second: 60 + s,
                    count: if p50 == 0 { 0 } else { 20 },
                    p50_us: p50,
                    p99_us: if s >= 30 { p99 * 4 } else { p99 } + s % 5 * 1_000,
                    max_us: p99 * 5,
                })
                .collect();
            (name.to_string(), points)
        };
        let history = vec![
            series("writer", 6_000, 40_000),
            series("strong", 0, 0),
            series("eventual", 4_000, 9_000),
            series("streams-poller", 290_000, 560_000),
            series("lambda", 170_000, 330_000),
            series("fan-out", 110_000, 240_000),
        ];
        ("dynamodb-demo", snapshot, history)
    }
}
