//! The run's live figures as metric families, read at scrape time from the lab's snapshot and
//! its series' whole histograms: every number here is one the snapshot (or a histogram) holds,
//! and a figure the lab has not measured yet (a Redis median before the first try, how far
//! behind a consumer reads before its first answer) is left out rather than written as 0.
//!
//! Counts start over when the lab is reset (the TUI's reset key); Prometheus reads that as a
//! counter reset.

use hdrhistogram::Histogram;

use super::text::{Buckets, Family, Type, Value};
use crate::labs::LabKind;
use crate::metrics::sdk::SdkSnapshot;
use crate::run::Run;
use crate::run::snapshot::Snapshot;

/// Every series' whole histogram (microseconds), with what labels it.
#[derive(Default)]
struct Latency {
    /// (consumer, kind): arrival at the service -> received by the consumer.
    kinesis: Vec<(String, String, Histogram<u64>)>,
    /// (storage class, operation): the request's total time.
    s3: Vec<(String, String, Histogram<u64>)>,
    /// Method: the replication lag.
    redis: Vec<(String, Histogram<u64>)>,
}

impl Run {
    /// The run's series ([`Run::series`]), sorted by lab for the families.
    fn latency(&self) -> Latency {
        let mut out = Latency::default();
        for s in self.series() {
            let label = |k: &str| {
                s.labels
                    .iter()
                    .find(|(l, _)| *l == k)
                    .map_or_else(String::new, |(_, v)| v.clone())
            };
            match (s.id.lab, s.id.subject.as_slice()) {
                (LabKind::Kinesis, [consumer]) => {
                    out.kinesis
                        .push((consumer.clone(), label("kind"), s.histogram))
                }
                (LabKind::S3, [class, op]) => out.s3.push((class.clone(), op.clone(), s.histogram)),
                (LabKind::Redis, [method]) => out.redis.push((method.clone(), s.histogram)),
                _ => {}
            }
        }
        out
    }
}

/// The lab's figures now, family by family.
pub fn families(lab: &Run) -> Vec<Family> {
    let snap = lab.snapshot(false);
    let latency = lab.latency();
    let mut out = run(&snap);
    out.extend(kinesis(&snap, &latency));
    out.extend(s3(&snap, &latency));
    out.extend(redis(&snap, &latency));
    out.extend(sdk(&snap));
    out.extend(faults(&snap));
    out
}

fn s(v: &str) -> String {
    v.to_string()
}

fn histogram(h: &Histogram<u64>) -> Value {
    Value::Histogram(Box::new(Buckets::of(h)))
}

fn run(snap: &Snapshot) -> Vec<Family> {
    let mut info = Family::new(
        "latlab_run_info",
        Type::Gauge,
        "The run: its scenario and the backend that produced every figure (always 1).",
    );
    info.push(
        vec![
            ("scenario", snap.scenario.clone()),
            ("backend_kind", snap.backend.kind.clone()),
            ("backend", snap.backend.label.clone()),
        ],
        Value::Count(1),
    );
    let mut elapsed = Family::new(
        "latlab_run_elapsed_seconds",
        Type::Gauge,
        "Seconds since the lab started.",
    );
    elapsed.push(vec![], Value::Number(snap.elapsed_secs));
    let mut running = Family::new(
        "latlab_lab_running",
        Type::Gauge,
        "1 for each lab of the scenario that runs, 0 for one that could not start (the Redis lab without redis-server, say).",
    );
    if snap.kinesis.is_some() {
        running.push(vec![("lab", s("kinesis"))], Value::Count(1));
    }
    if snap.s3.is_some() {
        running.push(vec![("lab", s("s3"))], Value::Count(1));
    }
    if let Some(r) = &snap.redis {
        let up = u64::from(r.unavailable.is_none());
        running.push(vec![("lab", s("redis"))], Value::Count(up));
    }
    vec![info, elapsed, running]
}

fn kinesis(snap: &Snapshot, latency: &Latency) -> Vec<Family> {
    let Some(k) = &snap.kinesis else {
        return Vec::new();
    };
    let mut hist = Family::new(
        "latlab_kinesis_arrival_to_receive_seconds",
        Type::Histogram,
        "Kinesis: a record's arrival at the service to its receipt by the consumer, every record since the start or the last reset.",
    );
    for (consumer, kind, h) in &latency.kinesis {
        hist.push(
            vec![("consumer", consumer.clone()), ("kind", s(kind))],
            histogram(h),
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
        let labels = vec![("consumer", c.name.clone()), ("kind", s(c.kind.name()))];
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

fn s3(snap: &Snapshot, latency: &Latency) -> Vec<Family> {
    let Some(s3) = &snap.s3 else {
        return Vec::new();
    };
    let mut hist = Family::new(
        "latlab_s3_request_duration_seconds",
        Type::Histogram,
        "S3: a request's total time, sent to last byte, every request since the start or the last reset.",
    );
    for (class, op, h) in &latency.s3 {
        hist.push(
            vec![("storage_class", s(class)), ("operation", s(op))],
            histogram(h),
        );
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
            ("storage_class", s(o.class.storage_class())),
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

fn redis(snap: &Snapshot, latency: &Latency) -> Vec<Family> {
    let Some(r) = &snap.redis else {
        return Vec::new();
    };
    let mut hist = Family::new(
        "latlab_redis_replication_lag_seconds",
        Type::Histogram,
        "Redis: primary -> replica replication lag per try, every try since the start or the last reset.",
    );
    for (method, h) in &latency.redis {
        hist.push(vec![("method", s(method))], histogram(h));
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
        let labels = vec![("method", s(m.method.key()))];
        if m.lag.count > 0 {
            median.push(labels.clone(), Value::Number(m.lag.p50_us as f64 / 1e6));
        }
        tries.push(labels.clone(), Value::Count(m.tries));
        errors.push(labels, Value::Count(m.errors));
    }
    vec![hist, median, tries, errors]
}

/// The SDK's counts of each client: the Kinesis producer, each Kinesis consumer, the S3 lab's.
fn sdk(snap: &Snapshot) -> Vec<Family> {
    let mut clients: Vec<(Vec<(&'static str, String)>, &SdkSnapshot)> = Vec::new();
    if let Some(k) = &snap.kinesis {
        clients.push((vec![("client", s("kinesis-producer"))], &k.producer.sdk));
        for c in &k.consumers {
            clients.push((
                vec![
                    ("client", s("kinesis-consumer")),
                    ("consumer", c.name.clone()),
                ],
                &c.sdk,
            ));
        }
    }
    if let Some(s3) = &snap.s3 {
        clients.push((vec![("client", s("s3"))], &s3.sdk));
    }
    let mut calls = Family::new(
        "latlab_sdk_calls",
        Type::Counter,
        "AWS SDK: operations started.",
    );
    let mut attempts = Family::new(
        "latlab_sdk_attempts",
        Type::Counter,
        "AWS SDK: HTTP attempts, the first of each call and every retry.",
    );
    let mut retries = Family::new(
        "latlab_sdk_retries",
        Type::Counter,
        "AWS SDK: attempts beyond the first of a call.",
    );
    let mut throttles = Family::new(
        "latlab_sdk_throttles",
        Type::Counter,
        "AWS SDK: attempts answered with a throttling error (ProvisionedThroughputExceededException, SlowDown, ...).",
    );
    let mut held = Family::new(
        "latlab_sdk_client_waits",
        Type::Counter,
        "AWS SDK: first attempts its client-side rate limiter held back before sending (adaptive retry mode).",
    );
    let mut escaped = Family::new(
        "latlab_sdk_escaped_errors",
        Type::Counter,
        "AWS SDK: calls that failed after the SDK's retries, by error code.",
    );
    for (labels, sdk) in clients {
        let c = &sdk.counters;
        calls.push(labels.clone(), Value::Count(c.calls));
        attempts.push(labels.clone(), Value::Count(c.attempts));
        retries.push(labels.clone(), Value::Count(c.retries));
        throttles.push(labels.clone(), Value::Count(c.throttles));
        held.push(labels.clone(), Value::Count(c.client_waits));
        for (code, n) in &c.escaped {
            let mut l = labels.clone();
            l.push(("code", code.clone()));
            escaped.push(l, Value::Count(*n));
        }
    }
    vec![calls, attempts, retries, throttles, held, escaped]
}

fn faults(snap: &Snapshot) -> Vec<Family> {
    let mut fired = Family::new(
        "latlab_faults_injected",
        Type::Counter,
        "Faults that fired (set with --fault or the scenario's [[faults]], or from the TUI's fault menu), by kind.",
    );
    let mut recovered = Family::new(
        "latlab_faults_recovered",
        Type::Counter,
        "Faults after which the target answered correctly again, by kind.",
    );
    for (kind, counts) in &snap.faults.counts {
        let labels = vec![("fault", s(kind.name()))];
        fired.push(labels.clone(), Value::Count(counts.fired));
        recovered.push(labels, Value::Count(counts.recovered));
    }
    vec![fired, recovered]
}
