//! The model a run measures against: every parameter of the latency profile, the emulator's
//! limits and each lab's own (`Lab::model`: Lambda's retry model, the Redis lab's shaped links),
//! each with its provenance.

use crate::scenario::Scenario;
use latlab_emulator::limits::Limits;
use latlab_emulator::profile::LatencyProfile;

/// The model in effect for a run, every parameter with its provenance: the latency profile and
/// the emulator's limits (emulator runs), Lambda's retry model, and the Redis lab's shaped links.
pub fn model_params(
    scenario: &Scenario,
    emulated: Option<(&LatencyProfile, &Limits)>,
) -> Vec<latlab_core::provenance::Param> {
    let mut params = Vec::new();
    let labs = super::scenario_labs(scenario);
    if let Some((profile, _)) = emulated {
        // Only the labs the scenario runs: an S3 run's figures owe nothing to Kinesis's model.
        params.extend(profile.params().into_iter().filter(|p| {
            labs.iter()
                .any(|l| p.name.starts_with(&format!("{}.", l.key())))
        }));
    }
    if let Some((_, limits)) = emulated {
        let services: Vec<&str> = labs
            .iter()
            .filter_map(|l| l.service())
            .map(|s| s.key())
            .collect();
        params.extend(limits.model_params(&services));
    }
    params.extend(scenario.lab_model());
    params
}
