//! The Kinesis lab's figures as metric families for the Prometheus export: each consumer's
//! arrival -> receive histogram and record counts, the producer's counts and rates, and the
//! shard's GetRecords calls against its limit.

use super::snapshot::KinesisSnapshot;
use crate::labs::series::Histogrammed;
use crate::metrics::exposition::{Family, Type, Value};
use crate::metrics::sdk::SdkSnapshot;

/// The lab's families now.
pub fn families(k: &KinesisSnapshot, series: &[Histogrammed]) -> Vec<Family> {
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
pub fn sdk_clients(k: &KinesisSnapshot) -> Vec<(Vec<(&'static str, String)>, &SdkSnapshot)> {
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
