//! The S3 lab's figures as metric families for the Prometheus export: each class and
//! operation's request-time histogram, requests, bytes, SlowDowns, errors and throughput.

use super::snapshot::S3Snapshot;
use crate::labs::series::{Histogrammed, SeriesId};
use crate::metrics::exposition::{Family, Type, Value};
use latlab_core::services::s3::Class;

/// A class and operation's series: its total time per request.
pub(super) fn series_id(class: Class, op: &str) -> SeriesId {
    SeriesId::new(
        crate::labs::LabKind::S3,
        &[class.storage_class(), op],
        "total",
    )
}

/// An S3 series' key in a recording's frames: `EXPRESS_ONEZONE PUT`.
fn frame_key(class: Class, op: &str) -> String {
    format!("{} {op}", class.storage_class())
}

impl crate::labs::Measured for super::S3Lab {
    /// Each class and operation's total time, by `CLASS OP`.
    fn frame_series<'a>(
        _snap: &'a S3Snapshot,
        history: &'a super::History,
    ) -> Option<crate::labs::series::FrameSeries<'a>> {
        Some(crate::labs::series::FrameSeries::of(
            history
                .iter()
                .map(|(class, op, points)| {
                    (
                        series_id(*class, op),
                        frame_key(*class, op),
                        points.as_slice(),
                    )
                })
                .collect(),
        ))
    }

    fn history_of_frames(
        snap: &S3Snapshot,
        points: &dyn Fn(&str) -> Vec<crate::metrics::Point>,
        _gauge: &dyn Fn() -> Vec<f64>,
    ) -> super::History {
        snap.ops
            .iter()
            .map(|o| (o.class, o.op.clone(), points(&frame_key(o.class, &o.op))))
            .collect()
    }

    fn summaries(snap: &S3Snapshot) -> Vec<(SeriesId, &crate::metrics::Summary)> {
        snap.ops
            .iter()
            .map(|o| (series_id(o.class, &o.op), &o.total))
            .collect()
    }

    /// Each class and operation: its errors and SlowDowns.
    fn watched(s: &S3Snapshot) -> Vec<crate::labs::series::Watched> {
        s.ops
            .iter()
            .map(|op| crate::labs::series::Watched {
                name: format!("S3 {} {}", op.class.storage_class(), op.op),
                status: None,
                error: op.last_error.clone(),
                throttles: op.slow_downs,
            })
            .collect()
    }

    fn sdk_clients(
        snap: &S3Snapshot,
    ) -> Vec<(
        Vec<(&'static str, String)>,
        &crate::metrics::sdk::SdkSnapshot,
    )> {
        vec![(vec![("client", "s3".to_string())], &snap.sdk)]
    }

    /// The lab's families now.
    fn metric_families(s3: &S3Snapshot, series: &[Histogrammed]) -> Vec<Family> {
        let mut hist = Family::new(
            "latlab_s3_request_duration_seconds",
            Type::Histogram,
            "S3: a request's total time, sent to last byte, every request since the start or the last reset.",
        );
        for h in series {
            if let [class, op] = h.id.subject.as_slice() {
                hist.push(
                    vec![("storage_class", class.clone()), ("operation", op.clone())],
                    Value::histogram(&h.histogram),
                );
            }
        }
        let mut requests = Family::new(
            "latlab_s3_requests",
            Type::Counter,
            "S3: requests that completed.",
        );
        let mut bytes = Family::new(
            "latlab_s3_transferred_bytes",
            Type::Counter,
            "S3: payload bytes the completed requests moved.",
        );
        let mut slow_downs = Family::new(
            "latlab_s3_slow_downs",
            Type::Counter,
            "S3: requests answered SlowDown.",
        );
        let mut errors = Family::new(
            "latlab_s3_errors",
            Type::Counter,
            "S3: requests that failed after the SDK's retries.",
        );
        let mut rate = Family::new(
            "latlab_s3_throughput_bytes_per_second",
            Type::Gauge,
            "S3: payload bytes moved per second of request time (bytes over the time requests were in flight).",
        );
        for o in &s3.ops {
            let labels = vec![
                ("storage_class", o.class.storage_class().to_string()),
                ("operation", o.op.clone()),
            ];
            requests.push(labels.clone(), Value::Count(o.requests));
            bytes.push(labels.clone(), Value::Count(o.bytes));
            slow_downs.push(labels.clone(), Value::Count(o.slow_downs));
            errors.push(labels.clone(), Value::Count(o.errors));
            rate.push(labels, Value::Number(o.mb_per_sec * 1e6));
        }
        vec![hist, requests, bytes, slow_downs, errors, rate]
    }
}
