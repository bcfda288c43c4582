//! Latency profiles: named models of the delays a real service adds.
//!
//! A profile never holds constants where the service shows spread: each delay is a [`Dist`],
//! sampled per request (or per record), so percentiles measured against the emulator have tails
//! the way the service does. Each service's part is in its folder (`kinesis/profile.rs`, ...),
//! with the source of every built-in value; this file puts them together under a name, reads
//! profile files and lists parameters. Every built-in profile's parameters and their sources are
//! documented in `docs/latency-profiles.md`; user profiles are TOML files of the same shape.

use anyhow::{Context, bail};
use serde::Deserialize;
use std::collections::BTreeMap;

pub mod links;

use crate::service::{Builtin, ServiceProfile, for_each_service};
use latlab_core::provenance::{Param, Provenance, Source};
use latlab_core::shaping::dist::{Dist, DistSpec};

/// The names of the built-in profiles, in the order they are listed.
pub const BUILTIN_PROFILES: &[&str] = &["zero", "same-region", "seed-tokyo"];

macro_rules! profile {
    ($($field:ident: $module:ident::$ty:ident),+ $(,)?) => {
        /// A named latency profile: each service's part, with the provenance of every parameter.
        #[derive(Clone, Debug, PartialEq)]
        pub struct LatencyProfile {
            pub name: String,
            pub description: String,
            $(pub $field: <crate::$module::$ty as crate::service::Service>::Profile,)+
            /// Links between hosts that a program shaping its own connections plays (`links.NAME`,
            /// one way, each direction): none in a built-in profile; `latlab calibrate` writes
            /// those it measured (see [`links`]).
            pub links: BTreeMap<String, Dist>,
            /// Per parameter name (as [`LatencyProfile::values`] names them): where its value
            /// comes from, and the seed cells it was derived from.
            pub provenance: BTreeMap<String, Provenance>,
        }

        /// A profile file.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Spec {
            name: String,
            description: Option<String>,
            base: Option<String>,
            $($field: Option<<<crate::$module::$ty as crate::service::Service>::Profile as ServiceProfile>::Spec>,)+
            /// Links by name: `[links] NAME = { median_ms = .., p99_ms = .. }`.
            #[serde(default)]
            links: BTreeMap<String, DistSpec>,
            /// Per parameter name: where its value comes from.
            #[serde(default)]
            provenance: BTreeMap<String, Provenance>,
        }

        impl LatencyProfile {
            /// A profile of every service's part of `builtin` (`None`: nothing added), each
            /// parameter with the provenance its service gives.
            fn assembled(name: &str, description: &str, builtin: Option<Builtin>) -> Self {
                let mut provenance = BTreeMap::new();
                let p = LatencyProfile {
                    name: name.into(),
                    description: description.into(),
                    $($field: match builtin {
                        None => ServiceProfile::zero(),
                        Some(b) => {
                            let (part, prov) = ServiceProfile::builtin(b);
                            provenance.extend(prov);
                            part
                        }
                    },)+
                    links: BTreeMap::new(),
                    provenance: BTreeMap::new(),
                };
                LatencyProfile { provenance, ..p }
            }

            /// Every parameter's name and value in words, in a fixed order.
            pub fn values(&self) -> Vec<(String, String)> {
                let mut out = Vec::new();
                $(out.extend(self.$field.values());)+
                out.extend(links::values(&self.links));
                out
            }

            /// Applies a file's service tables; the parameters they set.
            fn apply(&mut self, spec: Spec) -> anyhow::Result<Vec<String>> {
                let mut set = Vec::new();
                $(if let Some(s) = spec.$field {
                    set.extend(self.$field.apply(s)?);
                })+
                set.extend(links::apply(&mut self.links, spec.links)?);
                Ok(set)
            }
        }
    };
}
for_each_service!(profile);

impl LatencyProfile {
    /// Every parameter with its value and provenance (a parameter of a profile file that gave
    /// no source is `user`).
    pub fn params(&self) -> Vec<Param> {
        self.values()
            .into_iter()
            .map(|(name, value)| {
                let provenance = self.provenance.get(&name).cloned().unwrap_or_else(|| {
                    Provenance::new(
                        Source::User,
                        &format!("set in profile {}; no source given", self.name),
                    )
                });
                Param {
                    name,
                    value,
                    provenance,
                }
            })
            .collect()
    }

    /// Nothing added: every figure measured is the emulator's own cost plus the client's.
    pub fn zero() -> Self {
        let mut p = Self::assembled("zero", "nothing added: the emulator's own cost only", None);
        for (name, _) in p.values() {
            p.provenance.insert(
                name,
                Provenance::new(Source::Nothing, "nothing added (0 ms; unlimited bandwidth)"),
            );
        }
        p
    }

    /// A client in the same region as the service, from AWS's documents and independent public
    /// measurements only: no parameter is derived from a seed figure, so a seed scenario run
    /// with it is an out-of-sample check.
    pub fn same_region() -> Self {
        Self::assembled(
            "same-region",
            "client and service in one region (AWS documents and public measurements; no seed figure)",
            Some(Builtin::SameRegion),
        )
    }

    /// Calibrated on the seed experiments: Kinesis on round 1 only (all of round 2 is then a
    /// prediction), S3 on the 1 x 1 GB and 10,000 x 100 KB sets (the 100 x 10 MB set is a
    /// prediction). Each parameter names the seed cells it was derived from; those cells are
    /// `calibrated` in every report of a run with this profile.
    pub fn seed_tokyo() -> Self {
        Self::assembled(
            "seed-tokyo",
            "calibrated on the seed experiments (ap-northeast-1), where they measured the service; each parameter names its seed cells",
            Some(Builtin::SeedTokyo),
        )
    }

    /// A built-in profile by name, or a TOML file by path.
    pub fn resolve(name_or_path: &str) -> anyhow::Result<Self> {
        match name_or_path {
            "zero" => Ok(Self::zero()),
            "same-region" => Ok(Self::same_region()),
            "seed-tokyo" => Ok(Self::seed_tokyo()),
            other if other.ends_with(".toml") || std::path::Path::new(other).exists() => {
                let text = std::fs::read_to_string(other)
                    .with_context(|| format!("cannot read latency profile file {other}"))?;
                Self::from_toml(&text).with_context(|| format!("latency profile file {other}"))
            }
            other => bail!(
                "unknown latency profile '{other}': valid names are {}, or a path to a .toml file",
                BUILTIN_PROFILES.join(", ")
            ),
        }
    }

    /// Parses a profile file. Sections and keys not named are taken from the `zero` profile, or
    /// from the built-in profile named by `base`.
    pub fn from_toml(text: &str) -> anyhow::Result<Self> {
        let mut spec: Spec = toml::from_str(text)
            .map_err(|e| anyhow::anyhow!("{}", latlab_core::units::toml_error(text, &e)))?;
        let mut p = match spec.base.as_deref() {
            None => Self::zero(),
            Some(b) if BUILTIN_PROFILES.contains(&b) => Self::resolve(b)?,
            Some(b) => bail!(
                "base = '{b}' is not a built-in profile; valid: {}",
                BUILTIN_PROFILES.join(", ")
            ),
        };
        p.name = std::mem::take(&mut spec.name);
        p.description = spec
            .description
            .take()
            .unwrap_or_else(|| "user profile".into());
        let given = std::mem::take(&mut spec.provenance);
        // The parameters the file sets: their base's provenance no longer applies.
        for name in p.apply(spec)? {
            p.provenance.remove(&name);
        }
        let known: Vec<String> = p.values().into_iter().map(|(n, _)| n).collect();
        for (name, prov) in given {
            if !known.contains(&name) {
                bail!(
                    "provenance names '{name}', which is not a parameter; parameters are {}",
                    known.join(", ")
                );
            }
            p.provenance.insert(name, prov);
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn percentile(mut v: Vec<f64>, q: f64) -> f64 {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[((v.len() as f64 - 1.0) * q) as usize]
    }

    #[test]
    fn lognormal_hits_its_median_and_p99() {
        let d = Dist::lognormal_ms(10.0, 40.0, 120.0);
        let v: Vec<f64> = (0..200_000)
            .map(|_| d.sample().as_secs_f64() * 1000.0)
            .collect();
        let p50 = percentile(v.clone(), 0.5);
        let p99 = percentile(v.clone(), 0.99);
        assert!((p50 - 40.0).abs() < 1.0, "p50 {p50}");
        assert!((p99 - 120.0).abs() < 6.0, "p99 {p99}");
        assert!(v.iter().all(|&x| (10.0..=1200.0).contains(&x)));
    }

    #[test]
    fn fixed_is_fixed() {
        assert_eq!(Dist::fixed_ms(50.0).sample(), Duration::from_millis(50));
        assert!(Dist::ZERO.is_zero());
    }

    #[test]
    fn every_parameter_of_a_builtin_profile_says_where_it_comes_from() {
        for name in BUILTIN_PROFILES {
            let p = LatencyProfile::resolve(name).unwrap();
            let names: Vec<String> = p.values().into_iter().map(|(n, _)| n).collect();
            for n in &names {
                assert!(
                    p.provenance.contains_key(n),
                    "{name}: {n} has no provenance"
                );
            }
            for k in p.provenance.keys() {
                assert!(names.contains(k), "{name}: provenance for unknown {k}");
            }
            for param in p.params() {
                assert!(!param.provenance.note.is_empty(), "{name}: {}", param.name);
                assert_ne!(
                    param.provenance.source,
                    Source::User,
                    "{name}: {}",
                    param.name
                );
            }
        }
        let same = LatencyProfile::same_region();
        let seeded: Vec<String> = same
            .params()
            .into_iter()
            .filter(|p| p.provenance.source == Source::Seed || !p.provenance.seed_cells.is_empty())
            .map(|p| p.name)
            .collect();
        assert!(
            seeded.is_empty(),
            "same-region holds seed-derived {seeded:?}"
        );
    }

    #[test]
    fn a_mean_given_is_the_mean_sampled() {
        let d = Dist::lognormal_mean_ms(12.0, 70.0, 119.1);
        assert!((d.mean_ms() - 70.0).abs() < 0.05, "{d:?}");
        let n = 200_000;
        let mean = (0..n)
            .map(|_| d.sample().as_secs_f64() * 1000.0)
            .sum::<f64>()
            / n as f64;
        assert!((mean - 70.0).abs() < 0.7, "sampled mean {mean}");
    }
}
