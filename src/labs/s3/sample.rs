//! A fixed sample of the lab's figures, S3 Standard active after a stretch on Express, made up
//! but plausible (never a measurement). The screen tests, the render benchmark and the cost
//! examples draw it (`Fixture::sample`).

use super::OpSnapshot;
use super::snapshot::S3Snapshot;
use crate::metrics::sdk::SdkSnapshot;
use crate::metrics::{Point, Summary};
use latlab_core::services::s3::Class;

impl crate::labs::Fixture for super::S3Lab {
    /// With a headless run's matrix row.
    fn sample_full() -> S3Snapshot {
        let mut s = Self::sample().1;
        s.matrix = Some(vec![super::MatrixRow {
            case: super::Case {
                objects: 1,
                size: 1_000_000_000,
            },
            upload_express_s: 10.0,
            upload_standard_s: 20.0,
            download_express_s: 5.0,
            download_standard_s: 9.0,
            repetitions: 1,
        }]);
        s
    }

    /// The sample, and its last minute of sparklines.
    fn sample() -> (&'static str, S3Snapshot, super::History) {
        let op = |class: Class, op: &str, fb: f64, total: f64, mbs: f64| OpSnapshot {
            class,
            op: op.into(),
            first_byte: Summary::sample(fb, fb * 3.0, fb * 6.0, 900),
            total: Summary::sample(total, total * 3.0, total * 6.0, 900),
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
        let sparks: Vec<(Class, String, Vec<Point>)> = ops
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
        let snapshot = S3Snapshot {
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
        };
        ("s3-demo", snapshot, sparks)
    }
}
