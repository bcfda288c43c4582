//! A frozen view of a run: what the TUI draws each frame and what reports print, one part per
//! lab (each built by its lab from its shared state); nothing here is measured, only read.

use crate::labs::LabKind;
use crate::labs::kinesis::snapshot::KinesisSnapshot;
use crate::labs::redis::snapshot::RedisSnapshot;
use crate::labs::s3::snapshot::S3Snapshot;

/// Where the figures came from; every screen and report shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Backend {
    /// `emulator` (embedded), `endpoint` (any URL) or `aws` (the SDK's default endpoints).
    pub kind: String,
    /// One line for headers: "embedded emulator, latency profile seed-tokyo".
    pub label: String,
    pub latency_profile: Option<String>,
    pub endpoint: Option<String>,
    pub region: String,
    /// The model in effect (emulator runs, and the Redis lab's shaped links): every parameter
    /// with its source and the seed figures it was derived from.
    pub model: Vec<crate::provenance::Param>,
}

impl Backend {
    /// A few words for the screen's header: "emulator · seed-tokyo", "AWS ap-northeast-1".
    pub fn short(&self) -> String {
        match (self.kind.as_str(), &self.latency_profile, &self.endpoint) {
            ("emulator", Some(p), _) => format!("emulator · {p} profile"),
            ("endpoint", _, Some(url)) => format!("endpoint {url}"),
            ("fixture", _, _) => "fixture · not measured".into(),
            ("redis", _, _) => self
                .label
                .split(" (")
                .next()
                .unwrap_or(&self.label)
                .to_string(),
            _ => format!("AWS {}", self.region),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub scenario: String,
    pub backend: Backend,
    pub elapsed_secs: f64,
    /// How long the producer ran: the measured period.
    pub producing_secs: f64,
    /// Taken after the run ended and the consumers drained: lost counts are final.
    pub complete: bool,
    pub kinesis: Option<KinesisSnapshot>,
    pub s3: Option<S3Snapshot>,
    pub redis: Option<RedisSnapshot>,
}

impl Snapshot {
    /// The labs the run has, in screen order.
    pub fn labs(&self) -> Vec<LabKind> {
        LabKind::ALL
            .into_iter()
            .filter(|l| match l {
                LabKind::Kinesis => self.kinesis.is_some(),
                LabKind::S3 => self.s3.is_some(),
                LabKind::Redis => self.redis.is_some(),
            })
            .collect()
    }
}
