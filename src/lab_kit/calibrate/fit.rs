//! The statistics a calibration turns samples into: quantiles, a distribution's three figures,
//! a straight line through medians by size, and the median of a delay seen only as "visible yet
//! or not" at known times (current-status data, fitted by isotonic regression).

/// The `q` quantile of sorted samples, interpolated between neighbours.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let w = pos - lo as f64;
    sorted[lo] * (1.0 - w) + sorted[hi] * w
}

pub fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.retain(|x| x.is_finite());
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

/// A delay as a profile writes it: the shifted log-normal's floor, median and p99, in ms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    pub min: f64,
    pub median: f64,
    pub p99: f64,
}

impl Shape {
    /// The shape of samples (ms): the floor is the 1st percentile, the median and the p99 the
    /// samples'. A profile needs min < median < p99, so a spread too narrow to show is widened
    /// by 5% of the median each way.
    pub fn of(samples: &[f64]) -> Option<Shape> {
        let s = sorted(samples.to_vec());
        if s.is_empty() {
            return None;
        }
        let median = quantile(&s, 0.5).max(0.001);
        Some(Shape::from_quantiles(
            quantile(&s, 0.01),
            median,
            quantile(&s, 0.99),
        ))
    }

    /// From three quantiles, kept in order and positive.
    pub fn from_quantiles(min: f64, median: f64, p99: f64) -> Shape {
        let median = median.max(0.001);
        let min = min.clamp(0.0, median * 0.95);
        let p99 = p99.max(median * 1.05);
        Shape { min, median, p99 }
    }

    /// Its shifted log-normal's value at the standard normal `z` (0: the median; 2.326: the
    /// p99), as the emulator draws a profile's delay.
    pub fn at(&self, z: f64) -> f64 {
        let sigma = ((self.p99 - self.min) / (self.median - self.min).max(1e-9))
            .ln()
            .max(1e-6)
            / 2.326_348;
        self.min + (self.median - self.min) * (sigma * z).exp()
    }

    /// `k` points of this delay less its median, at the probabilities (i + 0.5) / k of its
    /// shifted log-normal: its spread about the median, as equally likely points.
    pub fn spread(&self, k: usize) -> Vec<f64> {
        (0..k)
            .map(|i| self.at(inverse_phi((i as f64 + 0.5) / k as f64)) - self.median)
            .collect()
    }

    /// Every figure times `k` (a round trip halved into one leg).
    pub fn scaled(self, k: f64) -> Shape {
        Shape::from_quantiles(self.min * k, self.median * k, self.p99 * k)
    }

    /// Every figure less `ms` (a leg measured apart), kept positive.
    pub fn less(self, ms: f64) -> Shape {
        Shape::from_quantiles(
            (self.min - ms).max(0.0),
            (self.median - ms).max(0.001),
            self.p99 - ms,
        )
    }

    /// Its profile form: `{ min_ms = 1.2, median_ms = 3.4, p99_ms = 9.1 }`, rounded to a
    /// microsecond and kept in order (a profile refuses min = median or median = p99).
    pub fn toml(&self) -> String {
        let median = round(self.median).max(0.002);
        let min = round(self.min).min(median - 0.001).max(0.0);
        let p99 = round(self.p99).max(median + 0.001);
        format!("{{ min_ms = {min}, median_ms = {median}, p99_ms = {p99} }}")
    }
}

/// One summand of a sum whose quantiles were measured: the shape `x` (the sum's shape scaled by
/// one factor) such that the median of `x + other` (or, with `other` None, of `x + x'` for an
/// independent copy `x'` of `x`: a round trip of two like legs) is the measured median. The
/// median of a sum is not the sum of the medians (a skewed delay's sum lies above it), so the
/// factor is found by bisection on simulated sums of the profile's shifted log-normal, drawn
/// from the same 20,000 standard normals each step. The tails follow the sum's shape, scaled.
pub fn summand(sum: Shape, other: Option<Shape>) -> Shape {
    let z = normals(20_000);
    // The other summand's draws come from the second half of the normals, independent of x's.
    let (zx, zo) = z.split_at(z.len() / 2);
    let median_of = |k: f64| {
        let x = sum.scaled(k);
        let sums = sorted(
            zx.iter()
                .zip(zo)
                .map(|(a, b)| x.at(*a) + other.map_or_else(|| x.at(*b), |o| o.at(*b)))
                .collect(),
        );
        quantile(&sums, 0.5)
    };
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..40 {
        let mid = (lo + hi) / 2.0;
        if median_of(mid) < sum.median {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    sum.scaled((lo + hi) / 2.0)
}

/// `n` standard normal draws from a fixed seed (Box-Muller on a 64-bit LCG): the same every
/// time, so that a fit's steps compare like with like.
pub(super) fn normals(n: usize) -> Vec<f64> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut uniform = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let (u, v) = (uniform(), uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        })
        .collect()
}

/// Three significant decimals at most, for a file a person reads.
pub fn round(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// A least-squares line `y = a + b x` through points; None with fewer than two distinct x.
pub fn line(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let b = sxy / sxx;
    Some((my - b * mx, b))
}

/// Current-status data: at each time `x` (ms after the event) whether the event's effect was
/// seen. Returns the x at which the fitted fraction seen first reaches each `q` of `qs`, from
/// the monotone (isotonic) fit of the fraction seen against x; None for a `q` the fit never
/// reaches. When every probe saw it, that x is the earliest probe's: an upper bound.
pub fn current_status(mut data: Vec<(f64, bool)>, qs: &[f64]) -> Vec<Option<f64>> {
    data.retain(|(x, _)| x.is_finite());
    data.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Pool adjacent violators: blocks of (sum seen, count, x of the block's last point).
    let mut blocks: Vec<(f64, f64, f64, f64)> = Vec::new(); // (seen, n, x_first, x_last)
    for (x, seen) in &data {
        blocks.push((if *seen { 1.0 } else { 0.0 }, 1.0, *x, *x));
        while blocks.len() > 1 {
            let b = blocks[blocks.len() - 1];
            let a = blocks[blocks.len() - 2];
            if a.0 / a.1 <= b.0 / b.1 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (a.0 + b.0, a.1 + b.1, a.2, b.3);
        }
    }
    // The fitted fraction is a step: each block's from its first x. A quantile is the first x
    // where it reaches q (the nonparametric maximum-likelihood estimate's quantile).
    qs.iter()
        .map(|&q| {
            blocks
                .iter()
                .find(|(s, n, _, _)| s / n >= q)
                .map(|(_, _, x0, _)| *x0)
        })
        .collect()
}

/// Current-status data fitted to a normal distribution by maximum likelihood: P(seen at x) =
/// Phi((x - mu) / sigma). Returns (mu, sigma): mu is the median of the fit. Calibrate used it
/// until a skewed delay showed its bias; kept for the tests that compare the two fits. A grid
/// search, then a finer one around the best.
#[cfg(test)]
pub fn probit(data: &[(f64, bool)]) -> Option<(f64, f64)> {
    let xs: Vec<f64> = data.iter().map(|d| d.0).filter(|x| x.is_finite()).collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        });
    if xs.len() < 10 || hi <= lo || data.iter().all(|d| d.1) || data.iter().all(|d| !d.1) {
        return None;
    }
    let log_likelihood = |mu: f64, sigma: f64| -> f64 {
        data.iter()
            .filter(|d| d.0.is_finite())
            .map(|(x, seen)| {
                let p = phi((x - mu) / sigma).clamp(1e-9, 1.0 - 1e-9);
                if *seen { p.ln() } else { (1.0 - p).ln() }
            })
            .sum()
    };
    let mut best = (f64::NEG_INFINITY, lo, hi - lo);
    let search = |mus: (f64, f64), sigmas: (f64, f64), best: &mut (f64, f64, f64)| {
        for i in 0..=60 {
            let mu = mus.0 + (mus.1 - mus.0) * i as f64 / 60.0;
            for j in 0..=30 {
                let sigma = sigmas.0 * (sigmas.1 / sigmas.0).powf(j as f64 / 30.0);
                let l = log_likelihood(mu, sigma);
                if l > best.0 {
                    *best = (l, mu, sigma);
                }
            }
        }
    };
    let span = hi - lo;
    search((lo, hi), (span / 200.0, span), &mut best);
    let (mu, sigma) = (best.1, best.2);
    search(
        (mu - span / 30.0, mu + span / 30.0),
        (sigma / 1.5, sigma * 1.5),
        &mut best,
    );
    Some((best.1, best.2))
}

/// Current-status data fitted by maximum likelihood to the profile's own family, a shifted
/// log-normal: P(seen at x) = Phi((ln(x - floor) - ln(median - floor)) / sigma) above the floor,
/// 0 at or below it. Returns (floor, median, sigma). A smooth fit says more of the median than
/// the step of [`current_status`] from the same probes (the step's error shrinks as the cube
/// root of their number, a fit's as the square root); and a fit of the profile's own family
/// keeps a skewed delay's median where a symmetric (normal) fit moved it by 8% on average (see
/// the tests). A grid over the three, then two finer grids around the best.
///
/// `blur` is how far a probe's true x may lie from the x it was given, as equally likely points
/// (empty: x is exact). A probe that places its look by a leg's median, when the look's own leg
/// was longer or shorter, is seen at x + e for an e of the leg's spread: P(seen at x) is then the
/// mean over `blur` of P(seen at x + e). Fitted as if exact, such probes read a delay lower. Of a
/// read visibility of floor 25, median 45 and p99 80 probed by looks placed with a leg of floor
/// 4, median 12 and p99 30 (200 probes a set), the exact fit found 0.964 of the median and this
/// one 0.990 (mean of 20 simulated sets); 0.986 and 1.003 (12 random sets of this file's test,
/// one run); 0.997 and 1.013 (its 6 fixed sets).
pub fn shifted_lognormal(data: &[(f64, bool)], blur: &[f64]) -> Option<(f64, f64, f64)> {
    let data: Vec<(f64, bool)> = data.iter().copied().filter(|d| d.0.is_finite()).collect();
    let blur: Vec<f64> = match blur
        .iter()
        .copied()
        .filter(|e| e.is_finite())
        .collect::<Vec<_>>()
    {
        b if b.is_empty() => vec![0.0],
        b => b,
    };
    let (lo, hi) = data
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (x, _)| {
            (a.min(*x), b.max(*x))
        });
    if data.len() < 10 || hi <= lo || data.iter().all(|d| d.1) || data.iter().all(|d| !d.1) {
        return None;
    }
    // The floor lies below the earliest probe that saw it, as far as its blur reaches (and not
    // below 0: no delay is less).
    let first_seen = data
        .iter()
        .filter(|d| d.1)
        .map(|d| d.0)
        .fold(f64::INFINITY, f64::min);
    let reach = blur.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let floor_hi = (first_seen + reach).max(0.0);
    // For one floor: each probe's ln(x + e - floor) for every e of the blur (None at or below
    // the floor), computed once for all the medians and sigmas tried with it.
    let logs = |floor: f64| -> Vec<(bool, Vec<Option<f64>>)> {
        data.iter()
            .map(|(x, seen)| {
                let ls = blur
                    .iter()
                    .map(|e| (x + e > floor).then(|| (x + e - floor).ln()))
                    .collect();
                (*seen, ls)
            })
            .collect()
    };
    let log_likelihood = |logs: &[(bool, Vec<Option<f64>>)], mu: f64, sigma: f64| -> f64 {
        let n = blur.len() as f64;
        logs.iter()
            .map(|(seen, ls)| {
                let p = ls
                    .iter()
                    .map(|l| l.map_or(0.0, |l| phi((l - mu) / sigma)))
                    .sum::<f64>()
                    / n;
                let p = p.clamp(1e-9, 1.0 - 1e-9);
                if *seen { p.ln() } else { (1.0 - p).ln() }
            })
            .sum()
    };
    // (log-likelihood, floor, median, sigma)
    let mut best = (f64::NEG_INFINITY, 0.0, (lo + hi) / 2.0, 0.5);
    let search = |floors: (f64, f64),
                  medians: (f64, f64),
                  sigmas: (f64, f64),
                  best: &mut (f64, f64, f64, f64)| {
        for i in 0..=16 {
            let floor = floors.0 + (floors.1 - floors.0) * i as f64 / 16.0;
            let logs = logs(floor);
            for j in 0..=24 {
                let median = medians.0 + (medians.1 - medians.0) * j as f64 / 24.0;
                if median <= floor + 1e-6 {
                    continue;
                }
                let mu = (median - floor).ln();
                for k in 0..=16 {
                    let sigma = sigmas.0 * (sigmas.1 / sigmas.0).powf(k as f64 / 16.0);
                    let l = log_likelihood(&logs, mu, sigma);
                    if l > best.0 {
                        *best = (l, floor, median, sigma);
                    }
                }
            }
        }
    };
    let top = hi.max(floor_hi + 1e-3);
    search((0.0, floor_hi), (0.0, top), (0.02, 3.0), &mut best);
    for zoom in [4.0, 16.0] {
        let (_, f, m, s) = best;
        let (fw, mw) = (floor_hi / zoom, top / zoom);
        search(
            ((f - fw).max(0.0), (f + fw).min(floor_hi)),
            ((m - mw).max(0.0), m + mw),
            (s / (1.0 + 4.0 / zoom), s * (1.0 + 4.0 / zoom)),
            &mut best,
        );
    }
    Some((best.1, best.2, best.3))
}

/// The standard normal's quantile at `p` (0 < p < 1), by bisection of [`phi`].
fn inverse_phi(p: f64) -> f64 {
    let (mut lo, mut hi) = (-10.0, 10.0);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if phi(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The standard normal's distribution function (Abramowitz and Stegun 7.1.26 for erf).
fn phi(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let erf = 1.0
        - t * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))))
            * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        let s = sorted(vec![4.0, 1.0, 3.0, 2.0]);
        assert_eq!(quantile(&s, 0.5), 2.5);
        assert_eq!(quantile(&s, 0.0), 1.0);
        assert_eq!(quantile(&s, 1.0), 4.0);
    }

    #[test]
    fn a_line_through_medians_by_size() {
        let (a, b) = line(&[(0.0, 10.0), (1.0, 30.0), (4.0, 90.0)]).unwrap();
        assert!(
            (a - 10.0).abs() < 1e-9 && (b - 20.0).abs() < 1e-9,
            "{a} {b}"
        );
        assert_eq!(line(&[(1.0, 2.0)]), None);
    }

    #[test]
    fn current_status_finds_the_median_of_a_delay_seen_only_as_yes_or_no() {
        // A delay uniform on 20..60 ms, probed at x = 0..100 ms: its median is 40 ms.
        let data: Vec<(f64, bool)> = (0..1000)
            .map(|i| {
                let x = (i % 100) as f64;
                let delay = 20.0 + ((i * 37) % 41) as f64;
                (x, delay <= x)
            })
            .collect();
        let q = current_status(data.clone(), &[0.5, 0.99]);
        let m = q[0].unwrap();
        // The estimate is where the fitted step first reaches a half: within its steps of 40.
        assert!((m - 40.0).abs() <= 4.0, "median {m}");
        assert!(q[1].unwrap() > 55.0);
        // Never seen: no median.
        assert_eq!(current_status(vec![(1.0, false)], &[0.5]), vec![None]);
        // The smooth fit finds it too.
        let (mu, _) = probit(&data).unwrap();
        assert!((mu - 40.0).abs() < 1.5, "probit median {mu}");
    }

    #[test]
    fn a_skewed_delay_seen_only_as_yes_or_no_keeps_its_median_in_the_log_normal_fit() {
        use latlab_core::shaping::dist::Dist;
        // The recovery test's first read visibility: floor 15 ms, median 45, p99 100 (a right
        // tail 2.8 times the left), 250 probes evenly over 0..150 ms, in 12 sets of draws. In
        // 40 sets the normal fit came back 1.083 of the median on average (sd 0.05), this one
        // 0.992 (sd 0.05).
        let d = Dist::lognormal_ms(15.0, 45.0, 100.0);
        let (mut lognormal, mut normal) = (Vec::new(), Vec::new());
        for set in 0..12 {
            let data: Vec<(f64, bool)> = (0..250)
                .map(|i| {
                    let x = 150.0 * ((i * 7919 + set * 31) % 250) as f64 / 250.0;
                    (x, d.sample().as_secs_f64() * 1000.0 <= x)
                })
                .collect();
            let (_, median, _) = shifted_lognormal(&data, &[]).unwrap();
            lognormal.push(median / 45.0);
            normal.push(probit(&data).unwrap().0 / 45.0);
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        eprintln!(
            "median found / set, mean of 12 sets: log-normal fit {:.3}, normal fit {:.3}",
            mean(&lognormal),
            mean(&normal)
        );
        assert!((mean(&lognormal) - 1.0).abs() < 0.05, "{lognormal:?}");
        assert!(
            lognormal.iter().all(|r| (r - 1.0).abs() < 0.2),
            "{lognormal:?}"
        );
        assert_eq!(shifted_lognormal(&[(1.0, true); 20], &[]), None);
    }

    #[test]
    fn probes_placed_by_a_legs_median_keep_the_delays_median_when_the_legs_spread_is_fitted() {
        // The recovery test's read visibility (floor 25 ms, median 45, p99 80) probed by looks
        // each placed by a leg's median (floor 4, median 12, p99 30) while its own leg was a
        // draw of it: 200 probes evenly over 0..90 ms, in 6 sets of fixed draws (the same every
        // run: at these sizes a set's median varies by about 4%).
        let (v, leg) = (
            Shape::from_quantiles(25.0, 45.0, 80.0),
            Shape::from_quantiles(4.0, 12.0, 30.0),
        );
        let blur = leg.spread(16);
        assert_eq!(blur.len(), 16);
        assert!(blur[0] < 0.0 && blur[15] > 0.0 && (blur[7] + blur[8]).abs() < 1.0);
        let z = normals(6 * 400);
        let (mut exact, mut blurred) = (Vec::new(), Vec::new());
        for set in 0..6 {
            let data: Vec<(f64, bool)> = (0..200)
                .map(|i| {
                    let x = 90.0 * ((i * 7919) % 200) as f64 / 200.0;
                    let (zv, zl) = (z[set * 400 + 2 * i], z[set * 400 + 2 * i + 1]);
                    // Seen when the delay is over by the look's true time; given by the median.
                    (x - (leg.at(zl) - leg.median), v.at(zv) <= x)
                })
                .collect();
            exact.push(shifted_lognormal(&data, &[]).unwrap().1 / 45.0);
            blurred.push(shifted_lognormal(&data, &blur).unwrap().1 / 45.0);
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        eprintln!(
            "median found / set, mean of 6 sets: fitted as exact {:.3}, with the leg's spread {:.3}",
            mean(&exact),
            mean(&blurred)
        );
        assert!((mean(&blurred) - 1.0).abs() < 0.03, "{blurred:?}");
        assert!(blurred.iter().all(|r| (r - 1.0).abs() < 0.1), "{blurred:?}");
    }

    #[test]
    fn a_summand_is_found_from_its_sum() {
        use latlab_core::shaping::dist::Dist;
        let leg = Dist::lognormal_ms(2.0, 6.0, 15.0);
        let rtt = Shape::of(
            &(0..50_000)
                .map(|_| (leg.sample() + leg.sample()).as_secs_f64() * 1000.0)
                .collect::<Vec<_>>(),
        )
        .unwrap();
        // The median of a sum of two legs is more than twice a leg's: halving it misses.
        assert!(rtt.median / 2.0 > 6.1, "{rtt:?}");
        let found = summand(rtt, None);
        assert!((found.median - 6.0).abs() < 0.3, "{found:?}");
        let commit = Dist::lognormal_ms(8.0, 20.0, 45.0);
        let sta = Shape::of(
            &(0..50_000)
                .map(|_| (leg.sample() + commit.sample()).as_secs_f64() * 1000.0)
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let found = summand(sta, Some(Shape::from_quantiles(2.0, 6.0, 15.0)));
        assert!((found.median - 20.0).abs() < 1.0, "{found:?}");
    }

    #[test]
    fn a_delay_too_short_to_resolve_is_still_a_valid_profile_entry() {
        let s = Shape::from_quantiles(-0.4, -0.1, 0.0004);
        let text = format!("name = \"x\"\n[kinesis]\nread_visibility = {}\n", s.toml());
        latlab_emulator::profile::LatencyProfile::from_toml(&text).expect(&text);
    }

    #[test]
    fn a_shape_stays_in_order() {
        let s = Shape::of(&[5.0; 20]).unwrap();
        assert!(s.min < s.median && s.median < s.p99, "{s:?}");
        assert_eq!(Shape::of(&[]), None);
        let leg = Shape::of(&[10.0, 12.0, 20.0]).unwrap().scaled(0.5);
        assert_eq!(leg.median, 6.0);
    }
}
