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
        let next = choices[at.map_or(0, |i| (i + 1) % choices.len())].clone();
        self.use_profile(emulator, &current, &next)
    }

    /// Switches the embedded emulator to the latency profile `next` (a built-in name or a file)
    /// from its next request on, and the links the labs shape themselves to what it says of
    /// them.
    pub fn switch_profile(&self, next: &str) -> anyhow::Result<String> {
        let Some(emulator) = &self.emulator else {
            bail!(
                "the latency profile shapes the embedded emulator; this run measures {}",
                self.backend().label
            );
        };
        let current = self.backend().latency_profile.unwrap_or_default();
        self.use_profile(emulator, &current, next)
    }

    fn use_profile(
        &self,
        emulator: &latlab_emulator::Emulator,
        current: &str,
        next: &str,
    ) -> anyhow::Result<String> {
        let profile = LatencyProfile::resolve(next)?;
        emulator.set_profile(&profile);
        let mut shaped = self.scenario.clone();
        shaped.shaped_by(&profile);
        let reshaped: Vec<String> = self
            .labs
            .iter()
            .filter_map(|l| l.reshape(&shaped))
            .collect();
        {
            let mut b = self.backend.lock();
            b.label = format!("embedded emulator, latency profile {next}");
            b.latency_profile = Some(next.to_string());
            b.model = super::model_params(&shaped, self.limits.as_ref().map(|l| (&profile, l)));
        }
        let at_secs = self.ctx.elapsed().as_secs_f64();
        self.profile_changes
            .lock()
            .push((at_secs, current.to_string(), next.to_string()));
        // What the labs changed goes before the profile's description, which a narrow status
        // line cuts off first (at 80 columns it had cut the Redis link's change).
        let mut line = format!("latency profile {next} (was {current})");
        for r in reshaped {
            line.push_str(", ");
            line.push_str(&r);
        }
        line.push_str(": ");
        line.push_str(&profile.description);
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
