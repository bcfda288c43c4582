//! The run's faults: those that cannot be injected on it are refused before anything starts, and
//! one of a kind is injected now (the TUI's menu) into the emulator or the Redis lab.

use anyhow::Context;

use super::{Run, TargetOptions};
use crate::labs::LabKind;
use crate::scenario::Scenario;
use latlab_core::faults::{FaultSpec, Kind};

/// Faults that cannot be injected on this run are refused before anything starts: the
/// emulator's kinds on another endpoint, a lab's kinds without the lab.
pub(super) fn check_faults(
    scenario: &Scenario,
    opts: &TargetOptions,
    faults: &[FaultSpec],
) -> anyhow::Result<()> {
    let external = opts.external();
    let present = super::scenario_labs(scenario);
    for f in faults {
        let service = f.kind.service();
        let lab = LabKind::of_service(service);
        if !lab.is_some_and(|l| present.contains(&l)) {
            anyhow::bail!(
                "fault {}: scenario {} has no {} lab",
                f.describe(),
                scenario.name,
                lab.map_or("", LabKind::name)
            );
        }
        if external && service.emulated() {
            anyhow::bail!(
                "fault {}: the embedded emulator injects {} faults; with --endpoint-url or --aws only {} faults apply",
                f.describe(),
                latlab_core::services::Service::emulated_list(),
                latlab_core::services::Service::not_emulated_list()
            );
        }
    }
    Ok(())
}

impl Run {
    /// Injects one fault of `kind` now, with its defaults: into the emulator, or into the lab
    /// of a service the emulator does not serve.
    pub(super) fn inject(&self, kind: Kind) -> anyhow::Result<String> {
        let spec = FaultSpec::now(kind);
        if kind.service().emulated() {
            let e = self.emulator.as_ref().with_context(|| {
                format!(
                    "{kind} is injected by the embedded emulator; this run measures {}",
                    self.backend().label
                )
            })?;
            e.faults().add(spec.clone())?;
        } else {
            let lab = LabKind::of_service(kind.service())
                .with_context(|| format!("no lab injects {kind}"))?;
            match self.labs.iter().find(|l| l.kind() == lab) {
                Some(l) => l.add_fault(spec.clone())?,
                None => anyhow::bail!("{}", self.not_running(lab)),
            }
        }
        Ok(format!("fault injected: {}", spec.describe()))
    }
}
