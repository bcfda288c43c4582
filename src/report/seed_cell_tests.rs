//! Every seed cell a parameter names is one the seed scenarios compare, and the held-out cells
//! are never calibrated: the labels `calibrated` and `predicted` checked against the model.

use super::*;
use latlab_core::provenance::{Source, calibrating, matches};

/// The seeds of the built-in scenarios.
fn builtin_seeds() -> Vec<(crate::scenario::Scenario, Seed)> {
    crate::scenario::builtin()
        .iter()
        .filter_map(|(name, _)| {
            let s = crate::scenario::Scenario::resolve(name).unwrap();
            s.seed.clone().map(|seed| (s, seed))
        })
        .collect()
}

#[test]
fn every_seed_cell_a_parameter_names_is_one_the_seed_scenarios_compare() {
    let ids: Vec<String> = builtin_seeds()
        .iter()
        .flat_map(|(_, seed)| seed_cell_ids(seed))
        .collect();
    assert!(ids.contains(&"kinesis-round1/arrival_to_receive/Lambda EFO/p99".to_string()));
    assert!(ids.contains(&"s3/download/100 x 10 MB/ratio".to_string()));
    assert!(ids.contains(&"redis/average_lag/50 MB value/new_clients".to_string()));
    for name in latlab_emulator::profile::BUILTIN_PROFILES {
        let profile = latlab_emulator::profile::LatencyProfile::resolve(name).unwrap();
        for (scenario, _) in builtin_seeds() {
            let limits = latlab_emulator::limits::Limits::default();
            for p in crate::run::model_params(&scenario, Some((&profile, &limits))) {
                assert_eq!(
                    p.provenance.source == Source::Seed,
                    !p.provenance.seed_cells.is_empty(),
                    "{name} {}: a parameter is derived from seed cells exactly when its source is the seed",
                    p.name
                );
                for pattern in &p.provenance.seed_cells {
                    assert!(
                        ids.iter().any(|id| matches(pattern, id)),
                        "{name} {}: '{pattern}' names no cell any seed scenario compares",
                        p.name
                    );
                }
            }
        }
    }
}

#[test]
fn the_held_out_cells_are_never_calibrated_by_seed_tokyo() {
    // Kinesis is fitted on round 1 only and S3 on the 1 GB and 100 KB sets: round 2 and the
    // 10 MB set are predictions on every built-in profile.
    for name in latlab_emulator::profile::BUILTIN_PROFILES {
        let profile = latlab_emulator::profile::LatencyProfile::resolve(name).unwrap();
        for (scenario, seed) in builtin_seeds() {
            let limits = latlab_emulator::limits::Limits::default();
            let model = crate::run::model_params(&scenario, Some((&profile, &limits)));
            for id in seed_cell_ids(&seed) {
                let held_out = id.starts_with("kinesis-round2/") || id.contains("/100 x 10 MB/");
                if held_out {
                    assert!(
                        calibrating(&model, &id).is_empty(),
                        "{name}: {id} is held out but calibrated by {:?}",
                        calibrating(&model, &id)
                            .iter()
                            .map(|p| &p.name)
                            .collect::<Vec<_>>()
                    );
                }
            }
        }
    }
}
