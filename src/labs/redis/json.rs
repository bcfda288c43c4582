//! The Redis lab's part of `latlab-run-report/2`: its types, written from the lab's snapshot
//! and read back into it.

use serde::{Deserialize, Serialize};

use crate::metrics::json::{BytesSummary, Summary, summary};

#[derive(Serialize, Deserialize)]
pub enum Method {
    NewClients,
    Persistent,
    Offset,
}

#[derive(Serialize, Deserialize)]
pub struct Redis {
    pub primary: String,
    pub replica: String,
    pub local: bool,
    pub link: Option<Link>,
    pub value_bytes: u64,
    pub cpu_load: bool,
    pub memory_full: bool,
    pub status: String,
    pub methods: Vec<RedisMethod>,
    pub conditions: Vec<RedisCondition>,
    pub unavailable: Option<String>,
    /// The ElastiCache node type the cost prices the pair as; absent in older reports.
    #[serde(default)]
    pub node_type: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct Link {
    pub link: String,
    pub latency_ms: f64,
    pub bandwidth: f64,
    pub bytes_to_replica: u64,
    pub bytes_to_primary: u64,
}

#[derive(Serialize, Deserialize)]
pub struct RedisMethod {
    pub method: Method,
    pub lag: Summary,
    pub tries: u64,
    pub errors: u64,
    pub behind_bytes: Option<BytesSummary>,
    /// Absent in older reports.
    #[serde(default)]
    pub last_error: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct Condition {
    pub name: String,
    pub value_bytes: u64,
    pub cpu_load: bool,
    pub memory_full: bool,
}

#[derive(Serialize, Deserialize)]
pub struct RedisCondition {
    pub condition: Condition,
    pub methods: Vec<RedisMethod>,
    #[serde(default)]
    pub skipped: Option<String>,
}

fn method(m: &crate::labs::redis::MethodSnapshot) -> RedisMethod {
    use crate::labs::redis::Method as M;
    RedisMethod {
        method: match m.method {
            M::NewClients => Method::NewClients,
            M::Persistent => Method::Persistent,
            M::Offset => Method::Offset,
        },
        lag: summary(&m.lag),
        tries: m.tries,
        errors: m.errors,
        behind_bytes: m.behind_bytes.as_ref().map(|b| BytesSummary {
            count: b.count,
            min_bytes: b.min_bytes,
            p50_bytes: b.p50_bytes,
            p90_bytes: b.p90_bytes,
            p99_bytes: b.p99_bytes,
            max_bytes: b.max_bytes,
            mean_bytes: b.mean_bytes,
        }),
        last_error: m.last_error.clone(),
    }
}

impl crate::labs::ReportJson<crate::labs::redis::snapshot::RedisSnapshot> for Redis {
    fn of(r: &crate::labs::redis::snapshot::RedisSnapshot) -> Redis {
        Redis {
            primary: r.primary.clone(),
            replica: r.replica.clone(),
            local: r.local,
            link: r.link.as_ref().map(|l| Link {
                link: l.link.clone(),
                latency_ms: l.latency_ms,
                bandwidth: l.bandwidth,
                bytes_to_replica: l.bytes_to_replica,
                bytes_to_primary: l.bytes_to_primary,
            }),
            value_bytes: r.value_bytes,
            cpu_load: r.cpu_load,
            memory_full: r.memory_full,
            status: r.status.clone(),
            methods: r.methods.iter().map(method).collect(),
            conditions: r
                .conditions
                .iter()
                .map(|c| RedisCondition {
                    condition: Condition {
                        name: c.condition.name.clone(),
                        value_bytes: c.condition.value_bytes,
                        cpu_load: c.condition.cpu_load,
                        memory_full: c.condition.memory_full,
                    },
                    methods: c.methods.iter().map(method).collect(),
                    skipped: c.skipped.clone(),
                })
                .collect(),
            unavailable: r.unavailable.clone(),
            node_type: Some(r.node_type.clone()),
        }
    }

    fn into_snapshot(self) -> crate::labs::redis::snapshot::RedisSnapshot {
        use crate::labs::redis as r;
        r::snapshot::RedisSnapshot {
            primary: self.primary,
            replica: self.replica,
            local: self.local,
            link: self.link.map(|l| r::local::ShaperStats {
                link: l.link,
                latency_ms: l.latency_ms,
                bandwidth: l.bandwidth,
                bytes_to_replica: l.bytes_to_replica,
                bytes_to_primary: l.bytes_to_primary,
            }),
            value_bytes: self.value_bytes,
            cpu_load: self.cpu_load,
            memory_full: self.memory_full,
            status: self.status,
            methods: self
                .methods
                .into_iter()
                .map(RedisMethod::into_snapshot)
                .collect(),
            conditions: self
                .conditions
                .into_iter()
                .map(|c| r::ConditionResult {
                    condition: r::Condition {
                        name: c.condition.name,
                        value_bytes: c.condition.value_bytes,
                        cpu_load: c.condition.cpu_load,
                        memory_full: c.condition.memory_full,
                    },
                    methods: c
                        .methods
                        .into_iter()
                        .map(RedisMethod::into_snapshot)
                        .collect(),
                    skipped: c.skipped,
                })
                .collect(),
            unavailable: self.unavailable,
            node_type: self
                .node_type
                .unwrap_or_else(|| crate::labs::redis::config::DEFAULT_NODE_TYPE.into()),
        }
    }
}

impl RedisMethod {
    pub fn into_snapshot(self) -> crate::labs::redis::MethodSnapshot {
        use crate::labs::redis::Method as M;
        crate::labs::redis::MethodSnapshot {
            method: match self.method {
                Method::NewClients => M::NewClients,
                Method::Persistent => M::Persistent,
                Method::Offset => M::Offset,
            },
            lag: self.lag.into_summary(),
            tries: self.tries,
            errors: self.errors,
            behind_bytes: self.behind_bytes.map(|b| crate::metrics::BytesSummary {
                count: b.count,
                min_bytes: b.min_bytes,
                p50_bytes: b.p50_bytes,
                p90_bytes: b.p90_bytes,
                p99_bytes: b.p99_bytes,
                max_bytes: b.max_bytes,
                mean_bytes: b.mean_bytes,
            }),
            last_error: self.last_error,
        }
    }
}

/// In every report since `latlab-run-report/2`: `null` when the run has no such lab.
impl crate::labs::ReportPart for Redis {
    const REPORTED_WHEN_ABSENT: bool = true;
}
