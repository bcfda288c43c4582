//! Latency profiles: named models of the delays a real service adds.
//!
//! A profile never holds constants where the service shows spread: each delay is a [`Dist`], sampled
//! per request (or per record), so percentiles measured against the emulator have tails the way the
//! service does. Every built-in profile's parameters and their sources are documented in
//! `docs/latency-profiles.md`; user profiles are TOML files of the same shape.

use std::time::Duration;

use anyhow::{Context, bail};
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use serde::Deserialize;

/// The z-score of the 99th percentile of a standard normal distribution.
const Z99: f64 = 2.326_347_874;

/// A delay distribution in milliseconds.
///
/// `Fixed` always returns the same value. `LogNormal` is a log-normal distribution shifted by
/// `min`: it never goes below `min`, has the given median and 99th percentile, and is capped at
/// `cap` (ten times the p99 unless set) so a single sample can never stall a run.
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    Fixed(f64),
    LogNormal {
        min: f64,
        median: f64,
        p99: f64,
        cap: f64,
    },
}

impl Dist {
    pub const ZERO: Dist = Dist::Fixed(0.0);

    pub fn fixed_ms(ms: f64) -> Dist {
        Dist::Fixed(ms)
    }

    /// A shifted log-normal; panics only on programmer error (used for the built-in tables).
    pub fn lognormal_ms(min: f64, median: f64, p99: f64) -> Dist {
        Dist::LogNormal {
            min,
            median,
            p99,
            cap: p99 * 10.0,
        }
    }

    pub fn is_zero(&self) -> bool {
        matches!(self, Dist::Fixed(v) if *v == 0.0)
    }

    /// Draws one delay.
    pub fn sample(&self) -> Duration {
        let ms = match *self {
            Dist::Fixed(ms) => ms,
            Dist::LogNormal {
                min,
                median,
                p99,
                cap,
            } => {
                let scale = median - min;
                let sigma = ((p99 - min) / scale).ln() / Z99;
                let z: f64 = StandardNormal.sample(&mut rand::rng());
                (min + scale * (sigma * z).exp()).min(cap)
            }
        };
        Duration::from_secs_f64(ms.max(0.0) / 1000.0)
    }

    /// The median of the distribution in milliseconds (for labels and documentation).
    pub fn median_ms(&self) -> f64 {
        match *self {
            Dist::Fixed(ms) => ms,
            Dist::LogNormal { median, .. } => median,
        }
    }

    pub fn describe(&self) -> String {
        match *self {
            Dist::Fixed(ms) => format!("{ms} ms"),
            Dist::LogNormal {
                min, median, p99, ..
            } => {
                format!("min {min} ms, median {median} ms, p99 {p99} ms")
            }
        }
    }
}

/// A random value in `[0, 1)`, for jitter decisions made by the emulator.
pub fn unit_random() -> f64 {
    rand::rng().random::<f64>()
}

/// How a distribution is written in a profile file: `{ fixed_ms = 50 }` or
/// `{ median_ms = 20, p99_ms = 60, min_ms = 5 }`.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct DistSpec {
    fixed_ms: Option<f64>,
    min_ms: Option<f64>,
    median_ms: Option<f64>,
    p99_ms: Option<f64>,
    cap_ms: Option<f64>,
}

impl DistSpec {
    fn build(&self, field: &str) -> anyhow::Result<Dist> {
        let check = |name: &str, v: f64| -> anyhow::Result<f64> {
            if !v.is_finite() || v < 0.0 {
                bail!("{field}.{name} must be a finite number of milliseconds >= 0, got {v}");
            }
            Ok(v)
        };
        match (self.fixed_ms, self.median_ms, self.p99_ms) {
            (Some(ms), None, None) if self.min_ms.is_none() && self.cap_ms.is_none() => {
                Ok(Dist::Fixed(check("fixed_ms", ms)?))
            }
            (None, Some(median), Some(p99)) => {
                let min = check("min_ms", self.min_ms.unwrap_or(0.0))?;
                let median = check("median_ms", median)?;
                let p99 = check("p99_ms", p99)?;
                if !(min < median && median < p99) {
                    bail!(
                        "{field} must satisfy min_ms < median_ms < p99_ms, got {min} / {median} / {p99}"
                    );
                }
                let cap = check("cap_ms", self.cap_ms.unwrap_or(p99 * 10.0))?;
                if cap < p99 {
                    bail!("{field}.cap_ms ({cap}) must be at least p99_ms ({p99})");
                }
                Ok(Dist::LogNormal {
                    min,
                    median,
                    p99,
                    cap,
                })
            }
            _ => bail!(
                "{field} must be either {{ fixed_ms = N }} or {{ median_ms = N, p99_ms = N }} \
                 (optionally with min_ms and cap_ms)"
            ),
        }
    }
}

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

/// A named latency profile.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyProfile {
    pub name: String,
    pub description: String,
    pub kinesis: KinesisProfile,
    pub s3: S3Profile,
}

/// The names of the built-in profiles, in the order they are listed.
pub const BUILTIN_PROFILES: &[&str] = &["zero", "same-region", "seed-tokyo"];

const MB: f64 = 1_000_000.0;

impl LatencyProfile {
    /// Nothing added: every figure measured is the emulator's own cost plus the client's.
    pub fn zero() -> Self {
        LatencyProfile {
            name: "zero".into(),
            description: "nothing added: the emulator's own cost only".into(),
            kinesis: KinesisProfile::zero(),
            s3: S3Profile::zero(),
        }
    }

    /// A client in the same region as the service, modelled on AWS's published figures.
    pub fn same_region() -> Self {
        LatencyProfile {
            name: "same-region".into(),
            description: "client and service in one region (published in-region figures)".into(),
            kinesis: KinesisProfile {
                request: Dist::lognormal_ms(0.5, 2.0, 8.0),
                response: Dist::lognormal_ms(0.5, 2.0, 8.0),
                put_commit: Dist::lognormal_ms(5.0, 20.0, 60.0),
                read_visibility: Dist::lognormal_ms(5.0, 25.0, 80.0),
                efo_push: Dist::lognormal_ms(20.0, 65.0, 110.0),
            },
            s3: S3Profile {
                standard: S3ClassProfile {
                    put_first_byte: Dist::lognormal_ms(10.0, 30.0, 120.0),
                    get_first_byte: Dist::lognormal_ms(8.0, 22.0, 90.0),
                    connection_upload: 90.0 * MB,
                    connection_download: 90.0 * MB,
                    aggregate_upload: 0.0,
                    aggregate_download: 0.0,
                },
                express: S3ClassProfile {
                    put_first_byte: Dist::lognormal_ms(2.0, 6.0, 15.0),
                    get_first_byte: Dist::lognormal_ms(2.0, 5.0, 12.0),
                    connection_upload: 150.0 * MB,
                    connection_download: 150.0 * MB,
                    aggregate_upload: 0.0,
                    aggregate_download: 0.0,
                },
                nic_bandwidth: 625.0 * MB,
                create_session: Dist::lognormal_ms(2.0, 6.0, 15.0),
            },
        }
    }

    /// Calibrated against the three seed experiments (see `docs/latency-profiles.md`).
    pub fn seed_tokyo() -> Self {
        LatencyProfile {
            name: "seed-tokyo".into(),
            description: "calibrated to the seed experiments (ap-northeast-1)".into(),
            kinesis: KinesisProfile {
                request: Dist::lognormal_ms(3.0, 11.0, 40.0),
                response: Dist::lognormal_ms(3.0, 11.0, 40.0),
                put_commit: Dist::lognormal_ms(25.0, 52.0, 100.0),
                read_visibility: Dist::lognormal_ms(5.0, 25.0, 90.0),
                efo_push: Dist::lognormal_ms(12.0, 70.0, 125.0),
            },
            s3: S3Profile {
                standard: S3ClassProfile {
                    put_first_byte: Dist::lognormal_ms(20.0, 52.0, 180.0),
                    get_first_byte: Dist::lognormal_ms(30.0, 90.0, 300.0),
                    connection_upload: 36.0 * MB,
                    connection_download: 36.0 * MB,
                    aggregate_upload: 36.0 * MB,
                    aggregate_download: 90.0 * MB,
                },
                express: S3ClassProfile {
                    put_first_byte: Dist::lognormal_ms(4.0, 8.0, 25.0),
                    get_first_byte: Dist::lognormal_ms(4.0, 9.0, 28.0),
                    connection_upload: 91.0 * MB,
                    connection_download: 120.0 * MB,
                    aggregate_upload: 100.0 * MB,
                    aggregate_download: 145.0 * MB,
                },
                nic_bandwidth: 625.0 * MB,
                create_session: Dist::lognormal_ms(4.0, 9.0, 25.0),
            },
        }
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
        }
        let spec: Spec = toml::from_str(text)
            .map_err(|e| anyhow::anyhow!("{}", crate::units::toml_error(text, &e)))?;
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
        fn set(slot: &mut Dist, spec: Option<DistSpec>, field: &str) -> anyhow::Result<()> {
            if let Some(s) = spec {
                *slot = s.build(field)?;
            }
            Ok(())
        }
        fn bandwidth(slot: &mut f64, v: Option<f64>, field: &str) -> anyhow::Result<()> {
            if let Some(v) = v {
                if !v.is_finite() || v < 0.0 {
                    bail!("{field} must be a number of MB/s >= 0 (0 = unlimited), got {v}");
                }
                *slot = v * MB;
            }
            Ok(())
        }
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
        Ok(p)
    }
}

/// Sleeps for one sample of `dist`, skipping the timer entirely for a zero delay.
pub async fn delay(dist: &Dist) {
    if !dist.is_zero() {
        sleep_until(std::time::Instant::now() + dist.sample()).await;
    }
}

/// Sleeps until `deadline` to well under a millisecond. tokio's timer wakes on whole-millisecond
/// ticks, which would add half a millisecond on average to every modelled delay; the last
/// millisecond is spent yielding instead (a delay of 0 never sleeps at all).
pub async fn sleep_until(deadline: std::time::Instant) {
    const TICK: Duration = Duration::from_millis(1);
    let now = std::time::Instant::now();
    if deadline > now + TICK {
        tokio::time::sleep_until((deadline - TICK).into()).await;
    }
    while std::time::Instant::now() < deadline {
        tokio::task::yield_now().await;
    }
}

#[cfg(test)]
mod tests {
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
