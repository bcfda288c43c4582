//! `latlab calibrate` over the registry: which labs have a probe (by their keys), the plan of
//! those named, and their probes one after the other. Each lab's probe is its own
//! (`labs/X/calibrate.rs`, the [`Calibrated`] trait); what they are written against is
//! `lab_kit::calibrate`.

use crate::lab_kit::calibrate::{Calibration, PlanLine, Probe};
use crate::labs::target::LabTargets;
use crate::labs::{Calibrated, LabKind};

macro_rules! each {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        /// The labs with a probe: (kind, key), in the registry's order.
        pub fn calibrated() -> Vec<(LabKind, &'static str)> {
            let mut out = Vec::new();
            $(
                if <crate::labs::$module::$ty as Calibrated>::CALIBRATES {
                    out.push((LabKind::$kind, LabKind::$kind.key()));
                }
            )*
            out
        }

        /// Whether each of `labs` can be probed on this target: (lab, why not) for each that
        /// cannot.
        pub fn unready(
            labs: &[LabKind],
            embedded: bool,
            targets: &LabTargets,
        ) -> Vec<(LabKind, String)> {
            let mut out = Vec::new();
            $(
                if labs.contains(&LabKind::$kind)
                    && let Err(e) = <crate::labs::$module::$ty as Calibrated>::calibration_target(
                        embedded, &targets.$module,
                    )
                {
                    out.push((LabKind::$kind, format!("{e:#}")));
                }
            )*
            out
        }

        /// What probing `labs` creates and calls, at list price.
        pub fn plan(
            labs: &[LabKind],
            samples: usize,
            run: &str,
            embedded: bool,
            targets: &LabTargets,
            prices: &crate::lab_kit::cost::Prices,
        ) -> Vec<PlanLine> {
            let mut out = Vec::new();
            $(
                if labs.contains(&LabKind::$kind) {
                    out.extend(<crate::labs::$module::$ty as Calibrated>::calibration_plan(
                        samples, run, embedded, &targets.$module, prices,
                    ));
                }
            )*
            out
        }

        /// Probes `labs` one after the other; what each creates is deleted before the next
        /// starts, whether its probe finished, failed or was cancelled.
        pub async fn calibrate(
            probe: &Probe,
            labs: &[LabKind],
            targets: &LabTargets,
        ) -> anyhow::Result<Calibration> {
            let mut cal = Calibration::default();
            $(
                if labs.contains(&LabKind::$kind) {
                    probe.cancelled()?;
                    let key = LabKind::$kind.key();
                    probe.say(format!("calibrating {key} ..."));
                    <crate::labs::$module::$ty as Calibrated>::calibrate(probe, &targets.$module, &mut cal)
                        .await
                        .map_err(|e| anyhow::anyhow!("{key}: {e:#}"))?;
                }
            )*
            Ok(cal)
        }
    };
}
crate::labs::for_each_lab!(each);

/// `kinesis,s3` -> the labs; a name with no probe is one clear error naming those with one.
pub fn parse_list(text: &str) -> anyhow::Result<Vec<LabKind>> {
    let known = calibrated();
    let names: Vec<&str> = known.iter().map(|(_, k)| *k).collect();
    let mut out = Vec::new();
    for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let kind = known
            .iter()
            .find(|(_, k)| *k == word)
            .map(|(kind, _)| *kind)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--services: '{word}' is not a service calibrate probes; valid: {}",
                    names.join(", ")
                )
            })?;
        if !out.contains(&kind) {
            out.push(kind);
        }
    }
    if out.is_empty() {
        anyhow::bail!("--services names no service; valid: {}", names.join(", "));
    }
    Ok(out)
}
