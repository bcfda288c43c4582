//! The run's faults: those that cannot be injected on it are refused before anything starts, and
//! one of a kind is injected now (the TUI's menu) into the emulator or the Redis lab.

use std::sync::Arc;

use anyhow::Context;

use super::{Lab, Running, TargetOptions};
use crate::faults::{FaultSpec, Kind, Service};
use crate::labs::redis;
use crate::scenario::Scenario;

/// Faults that cannot be injected on this run are refused before anything starts: the
/// emulator's kinds on another endpoint, a lab's kinds without the lab.
pub(super) fn check_faults(
    scenario: &Scenario,
    opts: &TargetOptions,
    faults: &[FaultSpec],
) -> anyhow::Result<()> {
    let external = opts.endpoint_url.is_some() || opts.aws;
    for f in faults {
        let (service, present) = match f.kind.service() {
            Service::Kinesis => ("Kinesis", scenario.kinesis.is_some()),
            Service::S3 => ("S3", scenario.s3.is_some()),
            Service::Redis => ("Redis", scenario.redis.is_some()),
        };
        if !present {
            anyhow::bail!(
                "fault {}: scenario {} has no {service} lab",
                f.describe(),
                scenario.name
            );
        }
        if external && f.kind.service() != Service::Redis {
            anyhow::bail!(
                "fault {}: the embedded emulator injects Kinesis and S3 faults; with --endpoint-url or --aws only Redis faults apply",
                f.describe()
            );
        }
    }
    Ok(())
}

impl Lab {
    pub(super) fn redis_lab(&self) -> Option<&Arc<redis::RedisLab>> {
        self.labs.iter().find_map(|l| match l {
            Running::Redis(r) => Some(r),
            _ => None,
        })
    }

    /// Injects one fault of `kind` now, with its defaults.
    pub(super) fn inject(&self, kind: Kind) -> anyhow::Result<String> {
        let spec = FaultSpec::now(kind);
        match kind.service() {
            Service::Redis => {
                let r = self.redis_lab().with_context(|| {
                    self.redis_unavailable
                        .clone()
                        .unwrap_or_else(|| "no Redis lab in this scenario".into())
                })?;
                r.add_fault(spec.clone())?;
            }
            _ => {
                let e = self.emulator.as_ref().with_context(|| {
                    format!(
                        "{kind} is injected by the embedded emulator; this run measures {}",
                        self.backend().label
                    )
                })?;
                e.faults().add(spec.clone())?;
            }
        }
        Ok(format!("fault injected: {}", spec.describe()))
    }
}
