//! Latency profiles: named models of the delays a real service adds.
//!
//! A profile never holds constants where the service shows spread: each delay is a [`Dist`], sampled
//! per request (or per record), so percentiles measured against the emulator have tails the way the
//! service does. Every built-in profile's parameters and their sources are documented in
//! `docs/latency-profiles.md`; user profiles are TOML files of the same shape.

use anyhow::{Context, bail};
use serde::Deserialize;
use std::collections::BTreeMap;

use latlab_core::provenance::{Param, Provenance, Source};

mod builtin;

use latlab_core::shaping::dist::Dist;
use latlab_core::shaping::dist::DistSpec;

/// A megabyte (10^6 bytes), the unit profiles write bandwidths in.
const MB: f64 = 1_000_000.0;

/// Delays the Kinesis emulator adds. See `docs/latency-profiles.md` for what each models.
#[derive(Clone, Debug, PartialEq)]
pub struct KinesisProfile {
    /// Client -> service leg of every request, before the service handles it.
    pub request: Dist,
    /// Service -> client leg of every response (and of the first frame of SubscribeToShard).
    pub response: Dist,
    /// A put's time inside the service before the record is stored and stamped with its
    /// ApproximateArrivalTimestamp (durable write across zones).
    pub put_commit: Dist,
    /// Delay from a record's arrival until GetRecords can return it (shared-throughput propagation).
    pub read_visibility: Dist,
    /// Delay from a record's arrival until an enhanced fan-out subscription pushes it (per consumer).
    pub efo_push: Dist,
}

impl KinesisProfile {
    pub fn zero() -> Self {
        KinesisProfile {
            request: Dist::ZERO,
            response: Dist::ZERO,
            put_commit: Dist::ZERO,
            read_visibility: Dist::ZERO,
            efo_push: Dist::ZERO,
        }
    }
}

/// Delays and bandwidth the S3 emulator applies, per storage class. Bandwidths are bytes/s,
/// 0 = unlimited.
#[derive(Clone, Debug, PartialEq)]
pub struct S3ClassProfile {
    /// Time to first byte of a PUT answer (after the body was received).
    pub put_first_byte: Dist,
    /// Time to first byte of a GET answer.
    pub get_first_byte: Dist,
    /// One connection's upload and download bandwidth.
    pub connection_upload: f64,
    pub connection_download: f64,
    /// All of a client's connections to this class together, up and down.
    pub aggregate_upload: f64,
    pub aggregate_download: f64,
}

impl S3ClassProfile {
    pub fn zero() -> Self {
        S3ClassProfile {
            put_first_byte: Dist::ZERO,
            get_first_byte: Dist::ZERO,
            connection_upload: 0.0,
            connection_download: 0.0,
            aggregate_upload: 0.0,
            aggregate_download: 0.0,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct S3Profile {
    pub standard: S3ClassProfile,
    pub express: S3ClassProfile,
    /// Client network interface cap in bytes/s shared by all connections (0 = unlimited).
    pub nic_bandwidth: f64,
    /// Round trip of a CreateSession call.
    pub create_session: Dist,
}

impl S3Profile {
    pub fn zero() -> Self {
        S3Profile {
            standard: S3ClassProfile::zero(),
            express: S3ClassProfile::zero(),
            nic_bandwidth: 0.0,
            create_session: Dist::ZERO,
        }
    }
}

/// A named latency profile, with the provenance of every parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyProfile {
    pub name: String,
    pub description: String,
    pub kinesis: KinesisProfile,
    pub s3: S3Profile,
    pub sqs: crate::sqs::profile::SqsProfile,
    /// Per parameter name (as [`LatencyProfile::values`] names them): where its value comes
    /// from, and the seed cells it was derived from.
    pub provenance: BTreeMap<String, Provenance>,
}

/// The names of the built-in profiles, in the order they are listed.
pub const BUILTIN_PROFILES: &[&str] = &["zero", "same-region", "seed-tokyo"];

impl LatencyProfile {
    /// Every parameter's name and value in words, in a fixed order.
    pub fn values(&self) -> Vec<(String, String)> {
        let k = &self.kinesis;
        let mut out: Vec<(String, String)> = vec![
            ("kinesis.request".into(), k.request.describe()),
            ("kinesis.response".into(), k.response.describe()),
            ("kinesis.put_commit".into(), k.put_commit.describe()),
            (
                "kinesis.read_visibility".into(),
                k.read_visibility.describe(),
            ),
            ("kinesis.efo_push".into(), k.efo_push.describe()),
        ];
        let rate = |v: f64| {
            if v == 0.0 {
                "unlimited".to_string()
            } else {
                format!("{} MB/s", v / MB)
            }
        };
        for (name, c) in [
            ("standard", &self.s3.standard),
            ("express", &self.s3.express),
        ] {
            out.extend([
                (
                    format!("s3.{name}.put_first_byte"),
                    c.put_first_byte.describe(),
                ),
                (
                    format!("s3.{name}.get_first_byte"),
                    c.get_first_byte.describe(),
                ),
                (
                    format!("s3.{name}.connection_upload_mb_s"),
                    rate(c.connection_upload),
                ),
                (
                    format!("s3.{name}.connection_download_mb_s"),
                    rate(c.connection_download),
                ),
                (
                    format!("s3.{name}.aggregate_upload_mb_s"),
                    rate(c.aggregate_upload),
                ),
                (
                    format!("s3.{name}.aggregate_download_mb_s"),
                    rate(c.aggregate_download),
                ),
            ]);
        }
        out.push(("s3.nic_bandwidth_mb_s".into(), rate(self.s3.nic_bandwidth)));
        out.push((
            "s3.create_session".into(),
            self.s3.create_session.describe(),
        ));
        out.extend(self.sqs.values());
        out
    }

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
        #[derive(Deserialize, Default)]
        #[serde(deny_unknown_fields)]
        struct KinesisSpec {
            request: Option<DistSpec>,
            response: Option<DistSpec>,
            put_commit: Option<DistSpec>,
            read_visibility: Option<DistSpec>,
            efo_push: Option<DistSpec>,
        }
        #[derive(Deserialize, Default)]
        #[serde(deny_unknown_fields)]
        struct S3ClassSpec {
            put_first_byte: Option<DistSpec>,
            get_first_byte: Option<DistSpec>,
            connection_upload_mb_s: Option<f64>,
            connection_download_mb_s: Option<f64>,
            aggregate_upload_mb_s: Option<f64>,
            aggregate_download_mb_s: Option<f64>,
        }
        #[derive(Deserialize, Default)]
        #[serde(deny_unknown_fields)]
        struct S3Spec {
            standard: Option<S3ClassSpec>,
            express: Option<S3ClassSpec>,
            nic_bandwidth_mb_s: Option<f64>,
            create_session: Option<DistSpec>,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Spec {
            name: String,
            description: Option<String>,
            base: Option<String>,
            kinesis: Option<KinesisSpec>,
            s3: Option<S3Spec>,
            sqs: Option<crate::sqs::profile::SqsSpec>,
            /// Per parameter name: where its value comes from.
            #[serde(default)]
            provenance: BTreeMap<String, Provenance>,
        }
        let spec: Spec = toml::from_str(text)
            .map_err(|e| anyhow::anyhow!("{}", latlab_core::units::toml_error(text, &e)))?;
        let mut p = match spec.base.as_deref() {
            None => Self::zero(),
            Some(b) if BUILTIN_PROFILES.contains(&b) => Self::resolve(b)?,
            Some(b) => bail!(
                "base = '{b}' is not a built-in profile; valid: {}",
                BUILTIN_PROFILES.join(", ")
            ),
        };
        p.name = spec.name;
        p.description = spec.description.unwrap_or_else(|| "user profile".into());
        // The parameters the file sets: their base's provenance no longer applies.
        let set_names = std::cell::RefCell::new(Vec::<String>::new());
        let set = |slot: &mut Dist, spec: Option<DistSpec>, field: &str| -> anyhow::Result<()> {
            if let Some(s) = spec {
                *slot = s.build(field)?;
                set_names.borrow_mut().push(field.to_string());
            }
            Ok(())
        };
        let bandwidth = |slot: &mut f64, v: Option<f64>, field: &str| -> anyhow::Result<()> {
            if let Some(v) = v {
                if !v.is_finite() || v < 0.0 {
                    bail!("{field} must be a number of MB/s >= 0 (0 = unlimited), got {v}");
                }
                *slot = v * MB;
                set_names.borrow_mut().push(field.to_string());
            }
            Ok(())
        };
        if let Some(k) = spec.kinesis {
            let kp = &mut p.kinesis;
            set(&mut kp.request, k.request, "kinesis.request")?;
            set(&mut kp.response, k.response, "kinesis.response")?;
            set(&mut kp.put_commit, k.put_commit, "kinesis.put_commit")?;
            set(
                &mut kp.read_visibility,
                k.read_visibility,
                "kinesis.read_visibility",
            )?;
            set(&mut kp.efo_push, k.efo_push, "kinesis.efo_push")?;
        }
        if let Some(s) = spec.s3 {
            for (class, spec, name) in [
                (&mut p.s3.standard, s.standard, "s3.standard"),
                (&mut p.s3.express, s.express, "s3.express"),
            ] {
                if let Some(c) = spec {
                    set(
                        &mut class.put_first_byte,
                        c.put_first_byte,
                        &format!("{name}.put_first_byte"),
                    )?;
                    set(
                        &mut class.get_first_byte,
                        c.get_first_byte,
                        &format!("{name}.get_first_byte"),
                    )?;
                    for (slot, v, key) in [
                        (
                            &mut class.connection_upload,
                            c.connection_upload_mb_s,
                            "connection_upload_mb_s",
                        ),
                        (
                            &mut class.connection_download,
                            c.connection_download_mb_s,
                            "connection_download_mb_s",
                        ),
                        (
                            &mut class.aggregate_upload,
                            c.aggregate_upload_mb_s,
                            "aggregate_upload_mb_s",
                        ),
                        (
                            &mut class.aggregate_download,
                            c.aggregate_download_mb_s,
                            "aggregate_download_mb_s",
                        ),
                    ] {
                        bandwidth(slot, v, &format!("{name}.{key}"))?;
                    }
                }
            }
            bandwidth(
                &mut p.s3.nic_bandwidth,
                s.nic_bandwidth_mb_s,
                "s3.nic_bandwidth_mb_s",
            )?;
            set(
                &mut p.s3.create_session,
                s.create_session,
                "s3.create_session",
            )?;
        }
        let mut set_names = set_names.into_inner();
        if let Some(q) = spec.sqs {
            set_names.extend(p.sqs.apply(q)?);
        }
        for name in set_names {
            p.provenance.remove(&name);
        }
        let known: Vec<String> = p.values().into_iter().map(|(n, _)| n).collect();
        for (name, prov) in spec.provenance {
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
    fn profile_file_overrides_a_base() {
        let p = LatencyProfile::from_toml(
            "name = \"fixed\"\nbase = \"seed-tokyo\"\n[kinesis]\nefo_push = { fixed_ms = 50 }\n",
        )
        .unwrap();
        assert_eq!(p.kinesis.efo_push, Dist::Fixed(50.0));
        assert_eq!(
            p.kinesis.put_commit,
            LatencyProfile::seed_tokyo().kinesis.put_commit
        );
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

    #[test]
    fn a_profile_file_overriding_a_parameter_takes_over_its_provenance() {
        let p = LatencyProfile::from_toml(
            "name = \"mine\"\nbase = \"seed-tokyo\"\n[kinesis]\nefo_push = { mean_ms = 60, p99_ms = 100, min_ms = 10 }\nput_commit = { fixed_ms = 30 }\n\
             [provenance.\"kinesis.efo_push\"]\nsource = \"measurement\"\nnote = \"our own in-region test\"\n",
        )
        .unwrap();
        let by = |n: &str| {
            p.params()
                .into_iter()
                .find(|x| x.name == n)
                .unwrap()
                .provenance
        };
        assert_eq!(by("kinesis.efo_push").source, Source::Measurement);
        assert!(by("kinesis.efo_push").seed_cells.is_empty());
        assert_eq!(
            by("kinesis.put_commit").source,
            Source::User,
            "set, with no source given"
        );
        assert_eq!(
            by("kinesis.read_visibility").source,
            Source::Seed,
            "the base's, untouched"
        );
        let e = LatencyProfile::from_toml(
            "name = \"x\"\n[provenance.\"kinesis.efo_pushh\"]\nsource = \"seed\"\nnote = \"n\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("'kinesis.efo_pushh', which is not a parameter"),
            "{e}"
        );
        let e = LatencyProfile::from_toml("name = \"x\"\n[kinesis]\nefo_push = { mean_ms = 60 }\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("mean_ms needs p99_ms"), "{e}");
    }

    #[test]
    fn profile_file_errors_name_the_field() {
        let e =
            LatencyProfile::from_toml("name = \"x\"\n[kinesis]\nefo_pushh = { fixed_ms = 5 }\n")
                .unwrap_err()
                .to_string();
        assert!(e.contains("efo_pushh") && e.contains("efo_push"), "{e}");
        let e = LatencyProfile::from_toml(
            "name = \"x\"\n[kinesis]\nefo_push = { median_ms = 50, p99_ms = 20 }\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("kinesis.efo_push must satisfy"), "{e}");
        let e = LatencyProfile::resolve("nope").unwrap_err().to_string();
        assert!(e.contains("zero, same-region, seed-tokyo"), "{e}");
    }
}
