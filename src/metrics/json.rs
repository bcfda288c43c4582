//! What every lab's part of `latlab-run-report/2` is made of: latency summaries and the SDK's
//! counts, with their conversions both ways.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Latency percentiles in microseconds; each `null` when the series holds no samples (a latency
/// of zero would read as a measurement). Reports written before that said 0 there: read back,
/// either is a summary of no samples.
#[derive(Serialize, Deserialize)]
pub struct Summary {
    pub count: u64,
    pub min_us: Option<u64>,
    pub p50_us: Option<u64>,
    pub p90_us: Option<u64>,
    pub p99_us: Option<u64>,
    pub p999_us: Option<u64>,
    pub max_us: Option<u64>,
    pub mean_us: Option<f64>,
}

#[derive(Serialize, Deserialize)]
pub struct BytesSummary {
    pub count: u64,
    pub min_bytes: u64,
    pub p50_bytes: u64,
    pub p90_bytes: u64,
    pub p99_bytes: u64,
    pub max_bytes: u64,
    pub mean_bytes: f64,
}

/// What the SDK did for one client.
#[derive(Serialize, Deserialize)]
pub struct Sdk {
    pub calls: u64,
    pub attempts: u64,
    pub retries: u64,
    pub throttles: u64,
    pub escaped: BTreeMap<String, u64>,
    pub quota_left: Option<u64>,
    pub quota_refusals: u64,
    pub operations: BTreeMap<String, OpCounts>,
    pub attempt_latency: Summary,
    pub retry_wait: Summary,
    /// First attempts the SDK's client-side rate limiter held back (adaptive mode); absent in
    /// reports from before it was measured.
    #[serde(default)]
    pub client_waits: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_wait: Option<Summary>,
}

#[derive(Serialize, Deserialize)]
pub struct OpCounts {
    pub calls: u64,
    pub attempts: u64,
    pub throttles: u64,
}

pub fn summary(s: &crate::metrics::Summary) -> Summary {
    let some = |us: u64| (s.count > 0).then_some(us);
    Summary {
        count: s.count,
        min_us: some(s.min_us),
        p50_us: some(s.p50_us),
        p90_us: some(s.p90_us),
        p99_us: some(s.p99_us),
        p999_us: some(s.p999_us),
        max_us: some(s.max_us),
        mean_us: (s.count > 0).then_some(s.mean_us),
    }
}

pub fn sdk(s: &crate::metrics::sdk::SdkSnapshot) -> Sdk {
    let c = &s.counters;
    Sdk {
        calls: c.calls,
        attempts: c.attempts,
        retries: c.retries,
        throttles: c.throttles,
        escaped: c.escaped.clone(),
        quota_left: c.quota_left,
        quota_refusals: c.quota_refusals,
        operations: c
            .operations
            .iter()
            .map(|(op, o)| {
                (
                    op.clone(),
                    OpCounts {
                        calls: o.calls,
                        attempts: o.attempts,
                        throttles: o.throttles,
                    },
                )
            })
            .collect(),
        attempt_latency: summary(&s.attempt_latency),
        retry_wait: summary(&s.retry_wait),
        client_waits: c.client_waits,
        client_wait: (s.client_wait.count > 0).then(|| summary(&s.client_wait)),
    }
}

impl Summary {
    pub fn into_summary(self) -> crate::metrics::Summary {
        crate::metrics::Summary {
            count: self.count,
            min_us: self.min_us.unwrap_or(0),
            p50_us: self.p50_us.unwrap_or(0),
            p90_us: self.p90_us.unwrap_or(0),
            p99_us: self.p99_us.unwrap_or(0),
            p999_us: self.p999_us.unwrap_or(0),
            max_us: self.max_us.unwrap_or(0),
            mean_us: self.mean_us.unwrap_or(0.0),
        }
    }
}

impl Sdk {
    pub fn into_snapshot(self) -> crate::metrics::sdk::SdkSnapshot {
        crate::metrics::sdk::SdkSnapshot {
            counters: crate::metrics::sdk::SdkCounters {
                calls: self.calls,
                attempts: self.attempts,
                retries: self.retries,
                throttles: self.throttles,
                escaped: self.escaped,
                quota_left: self.quota_left,
                quota_refusals: self.quota_refusals,
                client_waits: self.client_waits,
                operations: self
                    .operations
                    .into_iter()
                    .map(|(op, o)| {
                        (
                            op,
                            crate::metrics::sdk::OpCounts {
                                calls: o.calls,
                                attempts: o.attempts,
                                throttles: o.throttles,
                            },
                        )
                    })
                    .collect(),
            },
            attempt_latency: self.attempt_latency.into_summary(),
            retry_wait: self.retry_wait.into_summary(),
            client_wait: self
                .client_wait
                .map(Summary::into_summary)
                .unwrap_or_default(),
        }
    }
}

/// A [`crate::metrics::Summary`] field written in the report's form ([`Summary`]: no latency
/// for a series with no samples) and read back: `#[serde(with = "crate::metrics::json::as_report")]`
/// on a snapshot that is its own JSON part.
pub mod as_report {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(
        s: &crate::metrics::Summary,
        ser: S,
    ) -> Result<S::Ok, S::Error> {
        super::summary(s).serialize(ser)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<crate::metrics::Summary, D::Error> {
        super::Summary::deserialize(d).map(super::Summary::into_summary)
    }
}

/// A [`crate::metrics::sdk::SdkSnapshot`] field written in the report's form ([`Sdk`]) and read
/// back: `#[serde(with = "crate::metrics::json::sdk_as_report")]` on a snapshot that is its own
/// JSON part.
pub mod sdk_as_report {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(
        s: &crate::metrics::sdk::SdkSnapshot,
        ser: S,
    ) -> Result<S::Ok, S::Error> {
        super::sdk(s).serialize(ser)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<crate::metrics::sdk::SdkSnapshot, D::Error> {
        super::Sdk::deserialize(d).map(super::Sdk::into_snapshot)
    }
}
