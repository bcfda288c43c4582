//! The Kinesis lab's part of `latlab-run-report/2`: its types, written from the lab's snapshot
//! and read back into it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::metrics::json::{Sdk, Summary, sdk, summary};

#[derive(Serialize, Deserialize)]
pub struct Kinesis {
    pub stream: String,
    pub shards: usize,
    /// A reshard was under way when the report was taken; absent when not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub updating: bool,
    /// The open shards when the lab started and after each reshard took effect; absent when the
    /// stream was never resharded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shard_counts: Vec<ShardCount>,
    pub retry: String,
    pub producer: Producer,
    pub send_to_arrival: Summary,
    pub consumers: Vec<Consumer>,
    pub get_records_calls_per_sec: f64,
    pub get_records_limit_per_sec: u32,
}

#[derive(Serialize, Deserialize)]
pub struct Producer {
    pub asked_rate: f64,
    pub achieved_rate: f64,
    /// The seconds `achieved_rate` was measured over; absent from reports written before it
    /// was kept.
    #[serde(default)]
    pub achieved_over_secs: Option<f64>,
    pub mode: String,
    pub max_in_flight: u32,
    pub payload_bytes: u64,
    pub sent: u64,
    pub acked: u64,
    pub resent: u64,
    pub failed: u64,
    pub records_refused: u64,
    pub in_flight_full: f64,
    pub behind: u64,
    pub cpu: f64,
    pub cores: usize,
    pub put_latency: Summary,
    pub sdk: Sdk,
    #[serde(default)]
    pub last_error: Option<String>,
    #[serde(default)]
    pub unsupported: Option<String>,
    /// This host did not run the producer (`--no-producer`): what its consumers read instead.
    /// Absent when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elsewhere: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct ShardCount {
    pub at_secs: f64,
    pub shards: usize,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConsumerKind {
    Efo,
    Poller,
    LambdaStandard,
    LambdaEfo,
    Kcl,
}

#[derive(Serialize, Deserialize)]
pub struct Consumer {
    pub name: String,
    pub kind: ConsumerKind,
    pub detail: String,
    pub status: String,
    pub stopped_at_secs: Option<f64>,
    pub retry_quota_partition: String,
    pub arrival_to_receive: Summary,
    pub send_to_receive: Summary,
    pub recent: Summary,
    pub counts: Counts,
    pub millis_behind: Option<i64>,
    pub sdk: Sdk,
    pub batches: u64,
    pub batch_sizes: Vec<BatchSize>,
    pub events: BTreeMap<String, u64>,
    pub foreign_records: u64,
    /// Of the foreign records, each other latlab run's (hosts splitting the lab); absent when
    /// there were none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_runs: Vec<ForeignRun>,
    /// Absent in older reports.
    #[serde(default)]
    pub last_error: Option<String>,
    /// Records that arrived after a record of their partition key stored later; present when
    /// the stream was resharded or it is not 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_order: Option<u64>,
}

/// Another run's records at one consumer: distinct records received, and copies beyond.
#[derive(Serialize, Deserialize)]
pub struct ForeignRun {
    pub run: String,
    pub received: u64,
    pub duplicates: u64,
    /// Records past the seqs tracked: counted, not told apart. Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unchecked: u64,
    /// The smallest arrival - send of its records, in microseconds (negative when the producing
    /// host's clock is ahead of the service's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_send_to_arrival_us: Option<i64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A consumer's records: received + lost + unread = acknowledged.
#[derive(Serialize, Deserialize)]
pub struct Counts {
    pub acknowledged: u64,
    pub received: u64,
    pub lost: u64,
    pub unread: u64,
    pub duplicates: u64,
    pub late: u64,
    pub unacknowledged: u64,
    pub unchecked: u64,
}

#[derive(Serialize, Deserialize)]
pub struct BatchSize {
    pub size: u32,
    pub records: u64,
}

impl crate::labs::ReportJson<crate::labs::kinesis::snapshot::KinesisSnapshot> for Kinesis {
    fn of(k: &crate::labs::kinesis::snapshot::KinesisSnapshot) -> Kinesis {
        use crate::labs::kinesis::config::ConsumerKind as Kind;
        let p = &k.producer;
        let resharded = k.resharded();
        Kinesis {
            stream: k.stream.clone(),
            shards: k.shards,
            updating: k.updating,
            shard_counts: if resharded {
                k.shard_counts
                    .iter()
                    .map(|c| ShardCount {
                        at_secs: c.at_secs,
                        shards: c.shards,
                    })
                    .collect()
            } else {
                Vec::new()
            },
            retry: k.retry.clone(),
            producer: Producer {
                asked_rate: p.asked_rate,
                achieved_rate: p.achieved_rate,
                achieved_over_secs: Some(p.achieved_over_secs),
                mode: p.mode.clone(),
                max_in_flight: p.max_in_flight,
                payload_bytes: p.payload_bytes,
                sent: p.sent,
                acked: p.acked,
                resent: p.resent,
                failed: p.failed,
                records_refused: p.records_refused,
                in_flight_full: p.in_flight_full,
                behind: p.behind,
                cpu: p.cpu,
                cores: p.cores,
                put_latency: summary(&p.put_latency),
                sdk: sdk(&p.sdk),
                last_error: p.last_error.clone(),
                unsupported: p.unsupported.clone(),
                elsewhere: p.elsewhere.clone(),
            },
            send_to_arrival: summary(&k.send_to_arrival),
            consumers: k
                .consumers
                .iter()
                .map(|c| {
                    let n = &c.counts;
                    Consumer {
                        name: c.name.clone(),
                        kind: match c.kind {
                            Kind::Efo => ConsumerKind::Efo,
                            Kind::Poller => ConsumerKind::Poller,
                            Kind::LambdaStandard => ConsumerKind::LambdaStandard,
                            Kind::LambdaEfo => ConsumerKind::LambdaEfo,
                            Kind::Kcl => ConsumerKind::Kcl,
                        },
                        detail: c.detail.clone(),
                        status: c.status.clone(),
                        stopped_at_secs: c.stopped_at_secs,
                        retry_quota_partition: c.retry_quota_partition.clone(),
                        arrival_to_receive: summary(&c.arrival_to_receive),
                        send_to_receive: summary(&c.send_to_receive),
                        recent: summary(&c.recent),
                        counts: Counts {
                            acknowledged: n.acknowledged,
                            received: n.received,
                            lost: n.lost,
                            unread: n.unread,
                            duplicates: n.duplicates,
                            late: n.late,
                            unacknowledged: n.unacknowledged,
                            unchecked: n.unchecked,
                        },
                        millis_behind: c.millis_behind,
                        sdk: sdk(&c.sdk),
                        batches: c.batches,
                        batch_sizes: c
                            .batch_sizes
                            .iter()
                            .map(|b| BatchSize {
                                size: b.size,
                                records: b.records,
                            })
                            .collect(),
                        events: c.events.clone(),
                        foreign_records: c.foreign_records,
                        foreign_runs: c
                            .foreign_runs
                            .iter()
                            .map(|f| ForeignRun {
                                run: f.run.clone(),
                                received: f.received,
                                duplicates: f.duplicates,
                                unchecked: f.unchecked,
                                min_send_to_arrival_us: f.min_send_to_arrival_us,
                            })
                            .collect(),
                        last_error: c.last_error.clone(),
                        out_of_order: (resharded || c.out_of_order > 0).then_some(c.out_of_order),
                    }
                })
                .collect(),
            get_records_calls_per_sec: k.get_records_calls_per_sec,
            get_records_limit_per_sec: k.get_records_limit_per_sec,
        }
    }

    fn into_snapshot(self) -> crate::labs::kinesis::snapshot::KinesisSnapshot {
        use crate::labs::kinesis::config::ConsumerKind as Kind;
        use crate::labs::kinesis::snapshot as k;
        let p = self.producer;
        k::KinesisSnapshot {
            stream: self.stream,
            shards: self.shards,
            updating: self.updating,
            shard_counts: self
                .shard_counts
                .into_iter()
                .map(|c| k::ShardCount {
                    at_secs: c.at_secs,
                    shards: c.shards,
                })
                .collect(),
            retry: self.retry,
            producer: k::ProducerSnapshot {
                asked_rate: p.asked_rate,
                achieved_rate: p.achieved_rate,
                // A report without it measured its rate over the producing time, which
                // acknowledged / achieved gives back.
                achieved_over_secs: p.achieved_over_secs.unwrap_or(if p.achieved_rate > 0.0 {
                    p.acked as f64 / p.achieved_rate
                } else {
                    0.0
                }),
                mode: p.mode,
                max_in_flight: p.max_in_flight,
                payload_bytes: p.payload_bytes,
                sent: p.sent,
                acked: p.acked,
                resent: p.resent,
                failed: p.failed,
                records_refused: p.records_refused,
                in_flight_full: p.in_flight_full,
                behind: p.behind,
                cpu: p.cpu,
                cores: p.cores,
                put_latency: p.put_latency.into_summary(),
                sdk: p.sdk.into_snapshot(),
                last_error: p.last_error,
                unsupported: p.unsupported,
                elsewhere: p.elsewhere,
            },
            send_to_arrival: self.send_to_arrival.into_summary(),
            consumers: self
                .consumers
                .into_iter()
                .map(|c| {
                    let n = c.counts;
                    k::ConsumerSnapshot {
                        name: c.name,
                        kind: match c.kind {
                            ConsumerKind::Efo => Kind::Efo,
                            ConsumerKind::Poller => Kind::Poller,
                            ConsumerKind::LambdaStandard => Kind::LambdaStandard,
                            ConsumerKind::LambdaEfo => Kind::LambdaEfo,
                            ConsumerKind::Kcl => Kind::Kcl,
                        },
                        detail: c.detail,
                        status: c.status,
                        stopped_at_secs: c.stopped_at_secs,
                        retry_quota_partition: c.retry_quota_partition,
                        arrival_to_receive: c.arrival_to_receive.into_summary(),
                        send_to_receive: c.send_to_receive.into_summary(),
                        recent: c.recent.into_summary(),
                        counts: super::ledger::SeqCounts {
                            acknowledged: n.acknowledged,
                            received: n.received,
                            lost: n.lost,
                            unread: n.unread,
                            duplicates: n.duplicates,
                            late: n.late,
                            unacknowledged: n.unacknowledged,
                            unchecked: n.unchecked,
                        },
                        out_of_order: c.out_of_order.unwrap_or(0),
                        shards: Vec::new(),
                        millis_behind: c.millis_behind,
                        sdk: c.sdk.into_snapshot(),
                        batches: c.batches,
                        batch_sizes: c
                            .batch_sizes
                            .into_iter()
                            .map(|b| k::BatchSize {
                                size: b.size,
                                records: b.records,
                            })
                            .collect(),
                        events: c.events,
                        foreign_records: c.foreign_records,
                        foreign_runs: c
                            .foreign_runs
                            .into_iter()
                            .map(|f| crate::labs::kinesis::foreign::ForeignCount {
                                run: f.run,
                                received: f.received,
                                duplicates: f.duplicates,
                                unchecked: f.unchecked,
                                min_send_to_arrival_us: f.min_send_to_arrival_us,
                            })
                            .collect(),
                        last_error: c.last_error,
                    }
                })
                .collect(),
            get_records_calls_per_sec: self.get_records_calls_per_sec,
            get_records_limit_per_sec: self.get_records_limit_per_sec,
        }
    }
}

/// In every report since `latlab-run-report/2`: `null` when the run has no such lab.
impl crate::labs::ReportPart for Kinesis {
    const REPORTED_WHEN_ABSENT: bool = true;
}
