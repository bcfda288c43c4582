//! The Redis lab's part of a scenario file (`[redis]`) and the seed's Redis table
//! (`[seed.redis]`).

use anyhow::bail;
use serde::{Deserialize, Serialize};

use latlab_core::units::Bytes;

/// The seed's Redis table: the average lag per condition, in milliseconds.
#[derive(Clone, Debug, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RedisSeed {
    #[serde(default)]
    pub experiment: String,
    pub source: String,
    pub rows: Vec<RedisSeedRow>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RedisSeedRow {
    pub condition: String,
    pub average_ms: f64,
    pub range: Option<String>,
}

/// The ElastiCache node type a scenario prices its pair as when it names none: the seed's.
pub const DEFAULT_NODE_TYPE: &str = "cache.t3.micro";

/// The Redis lab: a link profile, the live value size, and the conditions of a headless run.
#[derive(Clone, Debug, PartialEq)]
pub struct RedisScenario {
    /// The ElastiCache node type the cost figures price the primary and the replica as.
    pub node_type: String,
    pub link: String,
    /// The link between latlab's clients and the servers (the seed's client was in the region).
    pub client_link: String,
    pub value: u64,
    pub conditions: Vec<super::Condition>,
    pub tries: u32,
    pub quick_tries: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedisFile {
    node_type: Option<String>,
    link: Option<String>,
    client_link: Option<String>,
    value: Option<Bytes>,
    #[serde(default)]
    conditions: Vec<ConditionFile>,
    tries: Option<u32>,
    quick_tries: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConditionFile {
    name: String,
    value: Bytes,
    #[serde(default)]
    cpu_load: bool,
    #[serde(default)]
    memory_full: bool,
}

pub fn parse(f: RedisFile) -> anyhow::Result<RedisScenario> {
    let link = f.link.unwrap_or_else(|| "loopback".into());
    let client_link = f.client_link.unwrap_or_else(|| "loopback".into());
    super::local::LinkProfile::resolve(&client_link)
        .map_err(|e| anyhow::anyhow!("redis.client_link: {e}"))?;
    super::local::LinkProfile::resolve(&link).map_err(|e| anyhow::anyhow!("redis.link: {e}"))?;
    let limit = 512 * 1024 * 1024;
    let value = f.value.map_or(1000, |b| b.0);
    if value == 0 || value > limit {
        bail!("redis.value must be between 1 B and 512 MB (Redis's largest string)");
    }
    let mut conditions = Vec::new();
    for (i, c) in f.conditions.into_iter().enumerate() {
        if c.value.0 == 0 || c.value.0 > limit {
            bail!("redis.conditions[{i}].value must be between 1 B and 512 MB");
        }
        conditions.push(super::Condition {
            name: c.name,
            value_bytes: c.value.0,
            cpu_load: c.cpu_load,
            memory_full: c.memory_full,
        });
    }
    let tries = f.tries.unwrap_or(10);
    let quick_tries = f.quick_tries.unwrap_or(3);
    if !(1..=10_000).contains(&tries) || !(1..=10_000).contains(&quick_tries) {
        bail!("redis.tries and redis.quick_tries must be between 1 and 10000");
    }
    let node_type = f.node_type.unwrap_or_else(|| DEFAULT_NODE_TYPE.into());
    let well_formed = node_type.strip_prefix("cache.").is_some_and(|rest| {
        !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
    });
    if !well_formed {
        bail!(
            "redis.node_type must be an ElastiCache node type such as cache.t3.micro, not '{node_type}'"
        );
    }
    Ok(RedisScenario {
        node_type,
        link,
        client_link,
        value,
        conditions,
        tries,
        quick_tries,
    })
}

/// In every report since `latlab-run-report/2`: `null` when the run has no such lab.
impl crate::labs::ReportPart for RedisSeed {
    const REPORTED_WHEN_ABSENT: bool = true;
}

impl crate::labs::Setup for super::RedisLab {
    fn parse(file: RedisFile, _text: &str) -> anyhow::Result<RedisScenario> {
        parse(file)
    }

    /// Its shaped links: replication's and the clients'.
    fn model(r: &RedisScenario) -> Vec<latlab_core::provenance::Param> {
        let mut params = Vec::new();
        for (name, link) in [
            ("redis.link", &r.link),
            ("redis.client_link", &r.client_link),
        ] {
            if let Ok(l) = super::local::LinkProfile::resolve(link) {
                params.push(latlab_core::provenance::Param::new(
                    name,
                    format!("{} ({})", l.name, l.describe()),
                    l.provenance(),
                ));
            }
        }
        params
    }
}
