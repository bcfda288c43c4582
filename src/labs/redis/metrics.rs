//! The Redis lab's figures as metric families for the Prometheus export: each method's
//! replication-lag histogram and median, its tries and errors.

use super::snapshot::RedisSnapshot;
use crate::labs::series::Histogrammed;
use crate::metrics::exposition::{Family, Type, Value};

/// The lab's families now.
pub fn families(r: &RedisSnapshot, series: &[Histogrammed]) -> Vec<Family> {
    let mut hist = Family::new(
        "latlab_redis_replication_lag_seconds",
        Type::Histogram,
        "Redis: primary -> replica replication lag per try, every try since the start or the last reset.",
    );
    for h in series {
        hist.push(
            vec![("method", h.id.subject.join(" "))],
            Value::histogram(&h.histogram),
        );
    }
    let mut median = Family::new(
        "latlab_redis_replication_lag_median_seconds",
        Type::Gauge,
        "Redis: the median replication lag (p50) of every try since the start or the last reset; absent before the first.",
    );
    let mut tries = Family::new(
        "latlab_redis_tries",
        Type::Counter,
        "Redis: tries made (a write on the primary, then its read on the replica).",
    );
    let mut errors = Family::new(
        "latlab_redis_errors",
        Type::Counter,
        "Redis: tries that failed.",
    );
    for m in &r.methods {
        let labels = vec![("method", m.method.key().to_string())];
        if m.lag.count > 0 {
            median.push(labels.clone(), Value::Number(m.lag.p50_us as f64 / 1e6));
        }
        tries.push(labels.clone(), Value::Count(m.tries));
        errors.push(labels, Value::Count(m.errors));
    }
    vec![hist, median, tries, errors]
}
