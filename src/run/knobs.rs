//! The run's own live knob: the embedded emulator's latency profile, switched while the labs
//! run (the `l` key). The backend every screen and report names follows, with the model's
//! parameters; the report says the run mixed profiles.

use anyhow::bail;

use super::Run;
use latlab_emulator::profile::{BUILTIN_PROFILES, LatencyProfile};

/// Where profile files of one's own are found: `profiles/*.toml` in the working directory.
pub const PROFILES_DIR: &str = "profiles";

/// The profiles the `l` key cycles through: the built-in ones, then the files in
/// [`PROFILES_DIR`] (sorted by name).
pub fn profile_choices() -> Vec<String> {
    let mut out: Vec<String> = BUILTIN_PROFILES.iter().map(|s| s.to_string()).collect();
    if let Ok(entries) = std::fs::read_dir(PROFILES_DIR) {
        let mut files: Vec<String> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .map(|p| p.display().to_string())
            .collect();
        files.sort();
        out.extend(files);
    }
    out
}

impl Run {
    /// The next latency profile of [`profile_choices`], applied to the embedded emulator from
    /// its next request on.
    pub fn next_profile(&self) -> anyhow::Result<String> {
        let Some(emulator) = &self.emulator else {
            bail!(
                "the latency profile shapes the embedded emulator; this run measures {}",
                self.backend().label
            );
        };
        let current = self.backend().latency_profile.unwrap_or_default();
        let choices = profile_choices();
        let at = choices.iter().position(|c| *c == current);
        let next = &choices[at.map_or(0, |i| (i + 1) % choices.len())];
        let profile = LatencyProfile::resolve(next)?;
        emulator.set_profile(&profile);
        {
            let mut b = self.backend.lock();
            b.label = format!("embedded emulator, latency profile {next}");
            b.latency_profile = Some(next.clone());
            b.model =
                super::model_params(&self.scenario, self.limits.as_ref().map(|l| (&profile, l)));
        }
        let at_secs = self.ctx.elapsed().as_secs_f64();
        self.profile_changes
            .lock()
            .push((at_secs, current.clone(), next.clone()));
        let line = format!(
            "latency profile {next} (was {current}): {}",
            profile.description
        );
        self.ctx.log(&line);
        Ok(line)
    }

    /// What a reader must know when the profile changed while the run went on.
    pub(super) fn profile_problem(&self) -> Option<String> {
        let changes = self.profile_changes.lock();
        if changes.is_empty() {
            return None;
        }
        let list: Vec<String> = changes
            .iter()
            .map(|(at, from, to)| format!("{from} -> {to} at {}", latlab_core::units::clock(*at)))
            .collect();
        Some(format!(
            "the latency profile changed while the run went on ({}): its figures mix the profiles, and the seed comparison is labelled by the last one",
            list.join(", ")
        ))
    }
}
