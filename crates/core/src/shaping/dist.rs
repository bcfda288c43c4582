//! Delay distributions: how a latency profile's numbers (the emulator's, a Redis link's) become a
//! delay per request, and how they are written in a profile file.

use std::time::Duration;

use anyhow::bail;
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

/// How a distribution is written in a profile file: `{ fixed_ms = 50 }` or
/// `{ median_ms = 20, p99_ms = 60, min_ms = 5 }`.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct DistSpec {
    fixed_ms: Option<f64>,
    min_ms: Option<f64>,
    median_ms: Option<f64>,
    mean_ms: Option<f64>,
    p99_ms: Option<f64>,
    cap_ms: Option<f64>,
}

impl DistSpec {
    pub fn build(&self, field: &str) -> anyhow::Result<Dist> {
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
