//! The Kinesis lab's figures as metric families for the Prometheus export: each consumer's
//! arrival -> receive histogram and record counts, the producer's counts and rates, and the
//! shard's GetRecords calls against its limit.

use super::snapshot::KinesisSnapshot;
use crate::labs::series::{Histogrammed, SeriesId};
use crate::metrics::exposition::{Family, Type, Value};
use crate::metrics::sdk::SdkSnapshot;

/// A consumer's series: its arrival at the service -> received by it.
pub(super) fn series_id(consumer: &str) -> SeriesId {
    SeriesId::new(
        crate::labs::LabKind::Kinesis,
        &[consumer],
        "arrival_to_receive",
    )
}

impl crate::labs::Measured for super::KinesisLab {
    /// Each consumer's arrival -> receive by its name, and the shard's GetRecords rate; its last
    /// whole second is the one before the consumers' newest.
    fn frame_series<'a>(
        snap: &'a KinesisSnapshot,
        history: &'a super::KinesisHistory,
    ) -> Option<crate::labs::series::FrameSeries<'a>> {
        (snap.consumers.len() == history.consumers.len()).then(|| {
            let upto = history
                .consumers
                .first()
                .and_then(|s| s.last())
                .map(|p| p.second.saturating_sub(1));
            // The rate's values end at the last whole second too; a run younger than the
            // history's window has fewer seconds than values, and those before its second 0
            // are none of its own (written, they would stand for later seconds).
            let rate = &history.read_rate;
            let gauge = match upto {
                Some(u) => &rate[rate.len().saturating_sub(u as usize + 1)..],
                None => &rate[..],
            };
            crate::labs::series::FrameSeries {
                series: snap
                    .consumers
                    .iter()
                    .zip(&history.consumers)
                    .map(|(c, points)| (series_id(&c.name), c.name.clone(), points.as_slice()))
                    .collect(),
                gauge,
                upto,
            }
        })
    }

    fn history_of_frames(
        snap: &KinesisSnapshot,
        points: &dyn Fn(&str) -> Vec<crate::metrics::Point>,
        gauge: &dyn Fn() -> Vec<f64>,
    ) -> super::KinesisHistory {
        super::KinesisHistory {
            consumers: snap.consumers.iter().map(|c| points(&c.name)).collect(),
            read_rate: gauge(),
        }
    }

    fn summaries(snap: &KinesisSnapshot) -> Vec<(SeriesId, &crate::metrics::Summary)> {
        snap.consumers
            .iter()
            .map(|c| (series_id(&c.name), &c.arrival_to_receive))
            .collect()
    }

    /// The producer and each consumer.
    fn watched(k: &KinesisSnapshot) -> Vec<crate::labs::series::Watched> {
        let producer = crate::labs::series::Watched {
            name: "producer".into(),
            status: k.producer.unsupported.clone(),
            error: k.producer.last_error.clone(),
            throttles: k.producer.sdk.counters.throttles,
        };
        std::iter::once(producer)
            .chain(k.consumers.iter().map(|c| crate::labs::series::Watched {
                name: c.name.clone(),
                status: Some(c.status.clone()),
                error: c.last_error.clone(),
                throttles: c.sdk.counters.throttles,
            }))
            .collect()
    }

    /// The lab's families now.
    fn metric_families(k: &KinesisSnapshot, series: &[Histogrammed]) -> Vec<Family> {
        let mut hist = Family::new(
            "latlab_kinesis_arrival_to_receive_seconds",
            Type::Histogram,
            "Kinesis: a record's arrival at the service to its receipt by the consumer, every record since the start or the last reset.",
        );
        for h in series {
            let kind = h.labels.iter().find(|(l, _)| *l == "kind");
            hist.push(
                vec![
                    ("consumer", h.id.subject.join(" ")),
                    ("kind", kind.map_or_else(String::new, |(_, v)| v.clone())),
                ],
                Value::histogram(&h.histogram),
            );
        }
        let mut received = Family::new(
            "latlab_kinesis_records_received",
            Type::Counter,
            "Kinesis: records the consumer received at least once, counted by sequence number.",
        );
        let mut lost = Family::new(
            "latlab_kinesis_records_lost",
            Type::Counter,
            "Kinesis: acknowledged records the consumer passed over without receiving.",
        );
        let mut duplicated = Family::new(
            "latlab_kinesis_records_duplicated",
            Type::Counter,
            "Kinesis: copies the consumer received beyond a record's first.",
        );
        let mut unread = Family::new(
            "latlab_kinesis_records_unread",
            Type::Gauge,
            "Kinesis: acknowledged records still ahead of the consumer's position.",
        );
        let mut behind = Family::new(
            "latlab_kinesis_behind_latest_seconds",
            Type::Gauge,
            "Kinesis: MillisBehindLatest of the consumer's last answer (the largest among its shards), in seconds.",
        );
        for c in &k.consumers {
            let labels = vec![
                ("consumer", c.name.clone()),
                ("kind", c.kind.name().to_string()),
            ];
            received.push(labels.clone(), Value::Count(c.counts.received));
            lost.push(labels.clone(), Value::Count(c.counts.lost));
            duplicated.push(labels.clone(), Value::Count(c.counts.duplicates));
            unread.push(labels.clone(), Value::Count(c.counts.unread));
            if let Some(ms) = c.millis_behind {
                behind.push(labels, Value::Number(ms as f64 / 1000.0));
            }
        }
        let p = &k.producer;
        let producer = |name, kind, help, value| {
            let mut f = Family::new(name, kind, help);
            f.push(vec![], value);
            f
        };
        vec![
            hist,
            received,
            lost,
            duplicated,
            unread,
            behind,
            producer(
                "latlab_kinesis_producer_records_sent",
                Type::Counter,
                "Kinesis producer: records handed to the service (a re-sent record counts again).",
                Value::Count(p.sent),
            ),
            producer(
                "latlab_kinesis_producer_records_acknowledged",
                Type::Counter,
                "Kinesis producer: records the service acknowledged.",
                Value::Count(p.acked),
            ),
            producer(
                "latlab_kinesis_producer_records_failed",
                Type::Counter,
                "Kinesis producer: records that failed after the SDK's retries and a re-send.",
                Value::Count(p.failed),
            ),
            producer(
                "latlab_kinesis_producer_asked_records_per_second",
                Type::Gauge,
                "Kinesis producer: the rate asked for, records per second.",
                Value::Number(p.asked_rate),
            ),
            producer(
                "latlab_kinesis_producer_achieved_records_per_second",
                Type::Gauge,
                "Kinesis producer: records acknowledged per second over the last whole seconds (at most 10).",
                Value::Number(p.achieved_rate),
            ),
            producer(
                "latlab_kinesis_get_records_calls_per_second",
                Type::Gauge,
                "Kinesis: GetRecords attempts per shard in the last whole second, every shared-throughput reader together.",
                Value::Number(k.get_records_calls_per_sec),
            ),
            producer(
                "latlab_kinesis_get_records_limit_per_second",
                Type::Gauge,
                "Kinesis: the GetRecords calls a second a shard allows, which the attempts count against.",
                Value::Count(u64::from(k.get_records_limit_per_sec)),
            ),
        ]
    }

    /// Its SDK clients: the producer's and each consumer's.
    fn sdk_clients(k: &KinesisSnapshot) -> Vec<(Vec<(&'static str, String)>, &SdkSnapshot)> {
        let mut clients = vec![(
            vec![("client", "kinesis-producer".to_string())],
            &k.producer.sdk,
        )];
        for c in &k.consumers {
            clients.push((
                vec![
                    ("client", "kinesis-consumer".to_string()),
                    ("consumer", c.name.clone()),
                ],
                &c.sdk,
            ));
        }
        clients
    }
}

#[cfg(test)]
mod tests {
    use super::super::KinesisLab;
    use crate::labs::{Fixture, Measured};

    /// Seven seconds into a run, a frame writes the GetRecords rate of seconds 0 to 6 (its last
    /// whole second), not ten values of which the first three stand before the run began.
    #[test]
    fn a_young_runs_frame_writes_its_rate_at_its_own_seconds() {
        let (_, snap, mut history) = KinesisLab::sample();
        for points in &mut history.consumers {
            points.truncate(8);
            for (i, p) in points.iter_mut().enumerate() {
                p.second = i as u64;
            }
        }
        history.read_rate = (1..=10).map(f64::from).collect();
        let f = KinesisLab::frame_series(&snap, &history).unwrap();
        assert_eq!(f.upto, Some(6));
        assert_eq!(f.gauge, &[4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        // Once the run is older than the window, every value is its own.
        for points in &mut history.consumers {
            for p in points.iter_mut() {
                p.second += 100;
            }
        }
        let f = KinesisLab::frame_series(&snap, &history).unwrap();
        assert_eq!(f.gauge.len(), 10);
    }
}
