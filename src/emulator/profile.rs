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
use std::collections::BTreeMap;

use crate::provenance::{Param, Provenance, Source};

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

    /// A shifted log-normal given by its mean rather than its median (documents often state an
    /// average): the median is solved for so that the distribution's mean is `mean`.
    pub fn lognormal_mean_ms(min: f64, mean: f64, p99: f64) -> Dist {
        let mean_of = |median: f64| {
            let sigma = ((p99 - min) / (median - min)).ln() / Z99;
            min + (median - min) * (sigma * sigma / 2.0).exp()
        };
        // The mean grows with the median between min and p99: bisect.
        let (mut lo, mut hi) = (min + 1e-6, p99 - 1e-6);
        for _ in 0..100 {
            let mid = (lo + hi) / 2.0;
            if mean_of(mid) < mean {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Dist::lognormal_ms(min, ((lo + hi) / 2.0 * 100.0).round() / 100.0, p99)
    }

    /// The mean in milliseconds (the cap ignored).
    pub fn mean_ms(&self) -> f64 {
        match *self {
            Dist::Fixed(ms) => ms,
            Dist::LogNormal {
                min, median, p99, ..
            } => {
                let sigma = ((p99 - min) / (median - min)).ln() / Z99;
                min + (median - min) * (sigma * sigma / 2.0).exp()
            }
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
        let n = |v: f64| {
            let t = format!("{v:.2}");
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        match *self {
            Dist::Fixed(ms) => format!("{} ms", n(ms)),
            Dist::LogNormal {
                min, median, p99, ..
            } => format!(
                "min {} ms, median {} ms, p99 {} ms (mean {} ms)",
                n(min),
                n(median),
                n(p99),
                n(self.mean_ms())
            ),
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
    mean_ms: Option<f64>,
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
        if let (Some(mean), None, None) = (self.mean_ms, self.fixed_ms, self.median_ms) {
            let min = check("min_ms", self.min_ms.unwrap_or(0.0))?;
            let mean = check("mean_ms", mean)?;
            let p99 = check("p99_ms", self.p99_ms.unwrap_or(f64::NAN)).map_err(|_| {
                anyhow::anyhow!("{field}: mean_ms needs p99_ms (and optionally min_ms)")
            })?;
            // A log-normal's mean lies above its median; with the median at the minimum the mean
            // is the minimum, with the median at the p99 it is the p99.
            if !(min < mean && mean < p99) {
                bail!("{field} must satisfy min_ms < mean_ms < p99_ms, got {min} / {mean} / {p99}");
            }
            if self.cap_ms.is_some() {
                bail!("{field}: cap_ms goes with median_ms, not mean_ms");
            }
            return Ok(Dist::lognormal_mean_ms(min, mean, p99));
        }
        if self.mean_ms.is_some() {
            bail!("{field}: mean_ms cannot be combined with fixed_ms or median_ms");
        }
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
                "{field} must be {{ fixed_ms = N }}, {{ median_ms = N, p99_ms = N }} (optionally \
                 with min_ms and cap_ms) or {{ mean_ms = N, p99_ms = N }} (optionally with min_ms)"
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

/// A named latency profile, with the provenance of every parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyProfile {
    pub name: String,
    pub description: String,
    pub kinesis: KinesisProfile,
    pub s3: S3Profile,
    /// Per parameter name (as [`LatencyProfile::values`] names them): where its value comes
    /// from, and the seed cells it was derived from.
    pub provenance: BTreeMap<String, Provenance>,
}

/// The names of the built-in profiles, in the order they are listed.
pub const BUILTIN_PROFILES: &[&str] = &["zero", "same-region", "seed-tokyo"];

const MB: f64 = 1_000_000.0;

// Sources named by more than one parameter.
const DOC_EFO: &str = "AWS, Kinesis Data Streams Developer Guide, 'Reading data': enhanced fan-out \
    propagation is 'typically an average of 70 ms' (the mean); min and p99";
const DOC_CONNECTION: &str = "AWS, Amazon S3 performance guidelines, 'Horizontal scaling of \
    storage connections': about one concurrent request per 85-90 MB/s of network throughput";
const DOC_NIC: &str = "AWS, EC2 instance types: t3.medium (the seed's client) has 'up to 5 \
    Gigabit' of network bandwidth";
const MEASURED_STANDARD: &str = "published in-region measurements put S3 Standard's first byte \
    at about 20-30 ms (WIRE-NOTES.md); the spread (min, p99) is assumed";
const MEASURED_EXPRESS: &str = "AWS: 'single-digit millisecond' first-byte latency; published \
    in-region measurements about 5-6 ms (WIRE-NOTES.md); the spread (min, p99) is assumed";
const SEED_100KB: &str = "the seed's mean time per object of its 10,000 x 100 KB set, less the \
    100 KB transfer at 88 MB/s and latlab's own time per request; shape assumed (min half, p99 \
    three times the median)";
const SEED_1GB: &str = "the seed's 1 x 1 GB set (ten 8 MiB parts or ranges at once, so the class's \
    rate for one client binds, not one connection's): the rate that gives its time";

/// The S3 part of `seed-tokyo`, fitted to the seed's 10,000 x 100 KB set (first-byte medians, ms)
/// and its 1 x 1 GB set (each class's rate for one client, MB/s). docs/latency-profiles.md shows
/// the arithmetic; the 100 x 10 MB set was not used and is a prediction.
struct S3Fit {
    standard_put: f64,
    standard_get: f64,
    express_put: f64,
    express_get: f64,
    standard_up: f64,
    standard_down: f64,
    express_up: f64,
    express_down: f64,
}

const S3_FIT: S3Fit = S3Fit {
    standard_put: 51.76,
    standard_get: 88.59,
    express_put: 8.26,
    express_get: 9.24,
    standard_up: 34.9,
    standard_down: 88.5,
    express_up: 99.8,
    express_down: 141.3,
};

impl S3Fit {
    /// A fitted first byte: the seed gives means only, so the shape is assumed (the minimum half
    /// the median, the p99 three times it: the mean is then 1.135 times the median).
    fn first_byte(median_ms: f64) -> Dist {
        Dist::lognormal_ms(median_ms / 2.0, median_ms, median_ms * 3.0)
    }

    /// A class with fitted first bytes and rates (MB/s) and AWS's 88 MB/s per connection.
    fn class(&self, put_ms: f64, get_ms: f64, up: f64, down: f64) -> S3ClassProfile {
        S3ClassProfile {
            put_first_byte: S3Fit::first_byte(put_ms),
            get_first_byte: S3Fit::first_byte(get_ms),
            connection_upload: CONNECTION,
            connection_download: CONNECTION,
            aggregate_upload: up * MB,
            aggregate_download: down * MB,
        }
    }
}

/// One S3 connection's throughput (AWS: about 85-90 MB/s per concurrent request).
const CONNECTION: f64 = 88.0 * MB;

impl LatencyProfile {
    /// Nothing added: every figure measured is the emulator's own cost plus the client's.
    pub fn zero() -> Self {
        let mut p = LatencyProfile {
            name: "zero".into(),
            description: "nothing added: the emulator's own cost only".into(),
            kinesis: KinesisProfile::zero(),
            s3: S3Profile::zero(),
            provenance: BTreeMap::new(),
        };
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
        let mut p = LatencyProfile {
            name: "same-region".into(),
            description: "client and service in one region (AWS documents and public measurements; no seed figure)".into(),
            kinesis: KinesisProfile {
                request: Dist::lognormal_ms(0.5, 2.0, 8.0),
                response: Dist::lognormal_ms(0.5, 2.0, 8.0),
                put_commit: Dist::lognormal_ms(5.0, 20.0, 60.0),
                read_visibility: Dist::lognormal_ms(5.0, 25.0, 80.0),
                efo_push: Dist::lognormal_mean_ms(20.0, 70.0, 110.0),
            },
            s3: S3Profile {
                standard: S3ClassProfile {
                    put_first_byte: Dist::lognormal_ms(10.0, 30.0, 120.0),
                    get_first_byte: Dist::lognormal_ms(8.0, 22.0, 90.0),
                    connection_upload: CONNECTION,
                    connection_download: CONNECTION,
                    aggregate_upload: 0.0,
                    aggregate_download: 0.0,
                },
                express: S3ClassProfile {
                    put_first_byte: Dist::lognormal_ms(2.0, 6.0, 15.0),
                    get_first_byte: Dist::lognormal_ms(2.0, 5.0, 12.0),
                    connection_upload: CONNECTION,
                    connection_download: CONNECTION,
                    aggregate_upload: 0.0,
                    aggregate_download: 0.0,
                },
                nic_bandwidth: 625.0 * MB,
                create_session: Dist::lognormal_ms(2.0, 6.0, 15.0),
            },
            provenance: BTreeMap::new(),
        };
        let leg = Provenance::new(
            Source::Assumption,
            "one network leg between a client and the service in one region: a few ms; AWS \
             publishes no figure and latlab has not measured one",
        );
        let unlimited = Provenance::new(
            Source::Assumption,
            "no cap for the class as a whole: a client gets what its connections and NIC carry",
        );
        let prov = [
            ("kinesis.request", leg.clone()),
            ("kinesis.response", leg),
            (
                "kinesis.put_commit",
                Provenance::new(
                    Source::Assumption,
                    "the service's write before it stamps ApproximateArrivalTimestamp: tens of \
                     ms; AWS publishes no figure",
                ),
            ),
            (
                "kinesis.read_visibility",
                Provenance::new(
                    Source::Assumption,
                    "from arrival until GetRecords returns a record: AWS documents ~200 ms average \
                     propagation for one shared-throughput consumer, which includes the \
                     consumer's polling wait; the part after arrival is assumed small",
                ),
            ),
            (
                "kinesis.efo_push",
                Provenance::new(Source::AwsDoc, &format!("{DOC_EFO} are assumed")),
            ),
            (
                "s3.standard.put_first_byte",
                Provenance::new(Source::Measurement, MEASURED_STANDARD),
            ),
            (
                "s3.standard.get_first_byte",
                Provenance::new(Source::Measurement, MEASURED_STANDARD),
            ),
            (
                "s3.express.put_first_byte",
                Provenance::new(Source::Measurement, MEASURED_EXPRESS),
            ),
            (
                "s3.express.get_first_byte",
                Provenance::new(Source::Measurement, MEASURED_EXPRESS),
            ),
            (
                "s3.create_session",
                Provenance::new(Source::Measurement, MEASURED_EXPRESS),
            ),
            (
                "s3.nic_bandwidth_mb_s",
                Provenance::new(Source::AwsDoc, DOC_NIC),
            ),
        ];
        for class in ["standard", "express"] {
            for dir in ["upload", "download"] {
                p.provenance.insert(
                    format!("s3.{class}.connection_{dir}_mb_s"),
                    Provenance::new(Source::AwsDoc, DOC_CONNECTION),
                );
                p.provenance.insert(
                    format!("s3.{class}.aggregate_{dir}_mb_s"),
                    unlimited.clone(),
                );
            }
        }
        p.provenance
            .extend(prov.into_iter().map(|(k, v)| (k.to_string(), v)));
        p
    }

    /// Calibrated on the seed experiments: Kinesis on round 1 only (all of round 2 is then a
    /// prediction), S3 on the 1 x 1 GB and 10,000 x 100 KB sets (the 100 x 10 MB set is a
    /// prediction). Each parameter names the seed cells it was derived from; those cells are
    /// `calibrated` in every report of a run with this profile.
    pub fn seed_tokyo() -> Self {
        let mut p = LatencyProfile {
            name: "seed-tokyo".into(),
            description: "calibrated on the seed experiments (ap-northeast-1): Kinesis round 1, S3's 1 GB and 100 KB sets".into(),
            kinesis: KinesisProfile {
                request: Dist::lognormal_ms(3.0, 11.0, 40.0),
                response: Dist::lognormal_ms(3.0, 11.0, 40.0),
                put_commit: Dist::lognormal_ms(25.0, 52.0, 100.0),
                read_visibility: Dist::lognormal_ms(5.0, 25.0, 90.0),
                efo_push: Dist::lognormal_mean_ms(12.0, 70.0, 119.1),
            },
            s3: S3Profile {
                standard: S3_FIT.class(
                    S3_FIT.standard_put,
                    S3_FIT.standard_get,
                    S3_FIT.standard_up,
                    S3_FIT.standard_down,
                ),
                express: S3_FIT.class(
                    S3_FIT.express_put,
                    S3_FIT.express_get,
                    S3_FIT.express_up,
                    S3_FIT.express_down,
                ),
                nic_bandwidth: 625.0 * MB,
                create_session: S3Fit::first_byte(S3_FIT.express_put),
            },
            provenance: BTreeMap::new(),
        };
        let leg = Provenance::seed(
            "chosen so that a GetRecords call takes 20-50 ms end to end: the reading \
             (SEED-FIGURES.md) under which a poller sleeping 200 ms after each call makes about \
             4.4 calls/s and, with Lambda's one poll a second, round 1's 12-24 throttles a minute",
            &["kinesis-round1/read_throttles_per_minute/shard/value"],
        );
        // A class's time for a set in one direction, and the ratio of the two classes' times.
        let class_cells = |class: &str, dir: &str, set: &str| -> Vec<String> {
            vec![
                format!("s3/{dir}/{set}/{class}"),
                format!("s3/{dir}/{set}/ratio"),
            ]
        };
        let seed_owned = |note: String, cells: Vec<String>| Provenance {
            source: Source::Seed,
            note,
            seed_cells: cells,
        };
        let mut prov: Vec<(String, Provenance)> = vec![
            ("kinesis.request".into(), leg.clone()),
            ("kinesis.response".into(), leg),
            (
                "kinesis.put_commit".into(),
                Provenance::seed(
                    "round 1's send -> arrival (p50 71.1 ms, p99 122.2 ms) less the request leg",
                    &["kinesis-round1/send_to_arrival/all/*"],
                ),
            ),
            (
                "kinesis.read_visibility".into(),
                Provenance::seed(
                    "round 1's Lambda standard iterator p50 (525 ms) less half of Lambda's 1 s \
                     polling period",
                    &["kinesis-round1/arrival_to_receive/Lambda standard iterator/p50"],
                ),
            ),
            (
                "kinesis.efo_push".into(),
                Provenance::seed(
                    &format!("{DOC_EFO} from round 1's Lambda EFO (lowest 13.7 ms, p99 119.1 ms)"),
                    &["kinesis-round1/arrival_to_receive/Lambda EFO/p99"],
                ),
            ),
            (
                "s3.nic_bandwidth_mb_s".into(),
                Provenance::new(Source::AwsDoc, DOC_NIC),
            ),
        ];
        for (class, name) in [("standard", "standard"), ("express", "express")] {
            for (op, dir) in [("put", "upload"), ("get", "download")] {
                prov.push((
                    format!("s3.{name}.{op}_first_byte"),
                    seed_owned(
                        format!("{SEED_100KB}: {class} {dir}"),
                        class_cells(class, dir, "10,000 x 100 KB"),
                    ),
                ));
                prov.push((
                    format!("s3.{name}.connection_{dir}_mb_s"),
                    Provenance::new(Source::AwsDoc, DOC_CONNECTION),
                ));
                prov.push((
                    format!("s3.{name}.aggregate_{dir}_mb_s"),
                    seed_owned(
                        format!("{SEED_1GB}: {class} {dir}"),
                        class_cells(class, dir, "1 x 1 GB"),
                    ),
                ));
            }
        }
        prov.push((
            "s3.create_session".into(),
            seed_owned(
                "a zonal request like any other: taken as s3.express.put_first_byte".into(),
                class_cells("express", "upload", "10,000 x 100 KB"),
            ),
        ));
        p.provenance.extend(prov);
        p
    }

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
            /// Per parameter name: where its value comes from.
            #[serde(default)]
            provenance: BTreeMap<String, Provenance>,
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
        for name in set_names.into_inner() {
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
