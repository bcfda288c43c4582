//! The S3 lab's figures as metric families for the Prometheus export: each class and
//! operation's request-time histogram, requests, bytes, SlowDowns, errors and throughput.

use super::snapshot::S3Snapshot;
use crate::labs::series::Histogrammed;
use crate::metrics::exposition::{Family, Type, Value};

/// The lab's families now.
pub fn families(s3: &S3Snapshot, series: &[Histogrammed]) -> Vec<Family> {
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
