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
    /// The run's latency profile's delays for latlab's own servers' links
    /// ([`local::REPLICATION_LINK`], [`local::CLIENT_LINK`]), in place of `link`'s and
    /// `client_link`'s latency (their bandwidths stay): None where it has none.
    pub link_delay: Option<ProfiledDelay>,
    pub client_link_delay: Option<ProfiledDelay>,
}

/// A link's one-way delay as a latency profile gives it, with the profile's name and the
/// parameter's provenance.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfiledDelay {
    pub delay: latlab_core::shaping::Dist,
    pub profile: String,
    pub provenance: latlab_core::provenance::Provenance,
}

impl RedisScenario {
    /// The replication link latlab's own servers run with: the scenario's, delayed as the
    /// profile says when it does.
    pub fn replication_link(&self) -> anyhow::Result<super::local::LinkProfile> {
        Self::shaped(&self.link, &self.link_delay)
    }

    /// The link between latlab's clients and its own servers.
    pub fn client_link(&self) -> anyhow::Result<super::local::LinkProfile> {
        Self::shaped(&self.client_link, &self.client_link_delay)
    }

    fn shaped(
        name: &str,
        delay: &Option<ProfiledDelay>,
    ) -> anyhow::Result<super::local::LinkProfile> {
        let link = super::local::LinkProfile::resolve(name)?;
        Ok(match delay {
            Some(d) => link.with_delay(d.delay.clone(), &d.profile),
            None => link,
        })
    }
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
        link_delay: None,
        client_link_delay: None,
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

    /// Its shaped links: replication's and the clients', each delayed as the run's latency
    /// profile says when it has the link (its provenance then), else as the link profile says.
    fn model(r: &RedisScenario) -> Vec<latlab_core::provenance::Param> {
        let mut params = Vec::new();
        for (name, link, delay) in [
            ("redis.link", r.replication_link(), &r.link_delay),
            ("redis.client_link", r.client_link(), &r.client_link_delay),
        ] {
            if let Ok(l) = link {
                let provenance = match delay {
                    Some(d) => latlab_core::provenance::Provenance {
                        note: format!(
                            "the delay is the latency profile's links.{} ({}); the bandwidth is \
                             the scenario's link's",
                            if name == "redis.link" {
                                super::local::REPLICATION_LINK
                            } else {
                                super::local::CLIENT_LINK
                            },
                            d.provenance.note
                        ),
                        ..d.provenance.clone()
                    },
                    None => l.provenance(),
                };
                params.push(latlab_core::provenance::Param::new(
                    name,
                    format!("{} ({})", l.name, l.describe()),
                    provenance,
                ));
            }
        }
        params
    }

    /// The profile's `links.redis-replication` and `links.redis-client`, when it has them.
    fn shaped_by(r: &mut RedisScenario, profile: &latlab_emulator::profile::LatencyProfile) {
        let delay = |link: &str| {
            profile.links.get(link).map(|d| ProfiledDelay {
                delay: d.clone(),
                profile: profile.name.clone(),
                provenance: profile
                    .params()
                    .into_iter()
                    .find(|p| p.name == format!("links.{link}"))
                    .map(|p| p.provenance)
                    .unwrap_or_else(|| {
                        latlab_core::provenance::Provenance::new(
                            latlab_core::provenance::Source::User,
                            "no source given",
                        )
                    }),
            })
        };
        r.link_delay = delay(super::local::REPLICATION_LINK);
        r.client_link_delay = delay(super::local::CLIENT_LINK);
    }
}
