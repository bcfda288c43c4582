//! The Redis lab's figures as metric families for the Prometheus export: each method's
//! replication-lag histogram and median, its tries and errors.

use super::snapshot::RedisSnapshot;
use crate::labs::series::{Histogrammed, SeriesId};
use crate::metrics::exposition::{Family, Type, Value};

/// A method's series: the replication lag it measures.
pub(super) fn series_id(method: super::Method) -> SeriesId {
    SeriesId::new(crate::labs::LabKind::Redis, &[method.key()], "lag")
}

impl crate::labs::Measured for super::RedisLab {
    /// Each method's lag, by the method's key.
    fn frame_series<'a>(
        _snap: &'a RedisSnapshot,
        history: &'a super::History,
    ) -> Option<crate::labs::series::FrameSeries<'a>> {
        Some(crate::labs::series::FrameSeries::of(
            history
                .iter()
                .map(|(method, points)| {
                    (
                        series_id(*method),
                        method.key().to_string(),
                        points.as_slice(),
                    )
                })
                .collect(),
        ))
    }

    fn history_of_frames(
        snap: &RedisSnapshot,
        points: &dyn Fn(&str) -> Vec<crate::metrics::Point>,
        _gauge: &dyn Fn() -> Vec<f64>,
    ) -> super::History {
        snap.methods
            .iter()
            .map(|m| (m.method, points(m.method.key())))
            .collect()
    }

    fn summaries(snap: &RedisSnapshot) -> Vec<(SeriesId, &crate::metrics::Summary)> {
        snap.methods
            .iter()
            .map(|m| (series_id(m.method), &m.lag))
            .collect()
    }

    /// The lab's status, and each method's errors.
    fn watched(r: &RedisSnapshot) -> Vec<crate::labs::series::Watched> {
        let lab = crate::labs::series::Watched {
            name: "Redis".into(),
            status: Some(r.status.clone()),
            error: None,
            throttles: 0,
        };
        std::iter::once(lab)
            .chain(r.methods.iter().map(|m| crate::labs::series::Watched {
                name: format!("Redis {}", m.method.key()),
                status: None,
                error: m.last_error.clone(),
                throttles: 0,
            }))
            .collect()
    }

    fn runs(snap: &RedisSnapshot) -> bool {
        snap.unavailable.is_none()
    }

    /// The lab's families now.
    fn metric_families(r: &RedisSnapshot, series: &[Histogrammed]) -> Vec<Family> {
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
}
