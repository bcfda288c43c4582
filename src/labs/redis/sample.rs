//! A fixed sample of the lab's figures, 1 KB values over the t3-micro link with the three
//! methods live, made up but plausible (never a measurement). The screen tests, the render
//! benchmark and the cost examples draw it (`Fixture::sample`).

use super::local::ShaperStats;
use super::snapshot::RedisSnapshot;
use super::{Method, MethodSnapshot};
use crate::metrics::{Point, Summary};

impl crate::labs::Fixture for super::RedisLab {
    /// With a headless run's condition.
    fn sample_full() -> RedisSnapshot {
        let mut r = Self::sample().1;
        r.conditions = vec![super::ConditionResult {
            condition: super::Condition {
                name: "1 KB".into(),
                value_bytes: 1000,
                cpu_load: false,
                memory_full: false,
            },
            methods: r.methods.clone(),
            skipped: None,
        }];
        r
    }

    /// The sample, and its last minute of sparklines.
    fn sample() -> (&'static str, RedisSnapshot, super::History) {
        let method = |method: Method, p50: f64, behind: Option<u64>| MethodSnapshot {
            method,
            lag: Summary::sample(p50, p50 * 2.5, p50 * 4.0, 240),
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
        let sparks: Vec<(Method, Vec<Point>)> = methods
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
        let snapshot = RedisSnapshot {
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
        };
        ("redis-demo", snapshot, sparks)
    }
}
