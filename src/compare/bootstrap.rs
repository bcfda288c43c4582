//! The runs' own noise: a bootstrap over their per-second intervals.
//!
//! A run's figures (p50, p90, p99, max) come from all its intervals added together. To see how
//! much they would move if the run were made again, each resample draws as many intervals as the
//! run has, with replacement, adds them, and takes the figure; the ratio B/A of one resample of
//! each run is one draw of the ratio. The 2.5th and 97.5th percentiles of those draws are the
//! ratio's 95% interval, and a difference is larger than the noise when that interval excludes 1.
//!
//! Seconds are treated as exchangeable: a run whose latency drifts over its length looks noisier
//! than one whose latency is steady, which errs on the side of "within noise".
//!
//! Resamples add intervals held as sparse (value, count) lists over the run's distinct values, so
//! a resample costs the values the intervals hold, not a whole histogram's counts array. Figures
//! are read the way `Histogram::value_at_quantile` reads them, so a resample that draws every
//! interval once gives exactly the run's figure (a test pins it).

use hdrhistogram::Histogram;

/// Resamples drawn per series.
pub const RESAMPLES: usize = 1000;
/// The interval's confidence.
pub const CONFIDENCE: f64 = 0.95;
/// Fewer per-second intervals than this in either run and the noise is not estimated: a
/// bootstrap of two or three seconds says nothing about the next run.
pub const MIN_INTERVALS: usize = 5;

/// The quantiles a comparison reads: p50, p90, p99 and the max (quantile 1).
pub const QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 1.0];

/// A small seeded PRNG (splitmix64): the same inputs give the same intervals on every machine.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0), without modulo bias worth the name for n far below 2^64.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// The seed of a series: fixed, and different per series (FNV-1a of its name).
pub fn seed_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A run's intervals over the distinct values they hold.
pub struct Sparse {
    /// Every distinct value (each bucket's highest equivalent value), ascending.
    values: Vec<u64>,
    /// Per interval, (index into `values`, count).
    intervals: Vec<Vec<(u32, u64)>>,
}

impl Sparse {
    pub fn new(intervals: &[&Histogram<u64>]) -> Sparse {
        let mut values: Vec<u64> = intervals
            .iter()
            .flat_map(|h| h.iter_recorded().map(|v| v.value_iterated_to()))
            .collect();
        values.sort_unstable();
        values.dedup();
        let intervals = intervals
            .iter()
            .map(|h| {
                h.iter_recorded()
                    .map(|v| {
                        let i = values
                            .binary_search(&v.value_iterated_to())
                            .expect("collected above");
                        (i as u32, v.count_at_value())
                    })
                    .collect()
            })
            .collect();
        Sparse { values, intervals }
    }

    pub fn len(&self) -> usize {
        self.intervals.len()
    }

    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty()
    }

    /// The figures at [`QUANTILES`] of the intervals drawn `times[i]` times each; None when the
    /// draw holds no value.
    fn figures(&self, times: &[u64], counts: &mut Vec<u64>) -> Option<[u64; 4]> {
        counts.clear();
        counts.resize(self.values.len(), 0);
        let mut total = 0u64;
        for (interval, &n) in self.intervals.iter().zip(times) {
            if n == 0 {
                continue;
            }
            for &(i, c) in interval {
                counts[i as usize] += c * n;
                total += c * n;
            }
        }
        if total == 0 {
            return None;
        }
        let mut out = [0u64; 4];
        let mut q = 0;
        let mut running = 0u64;
        for (i, &c) in counts.iter().enumerate() {
            running += c;
            while q < QUANTILES.len() && running >= target(QUANTILES[q], total) {
                out[q] = self.values[i];
                q += 1;
            }
            if q == QUANTILES.len() {
                break;
            }
        }
        Some(out)
    }

    /// The figures of every interval once: the run's own.
    pub fn whole(&self) -> Option<[u64; 4]> {
        self.figures(&vec![1; self.len()], &mut Vec::new())
    }

    /// One resample's figures: as many intervals as the run has, drawn with replacement.
    fn resample(
        &self,
        rng: &mut SplitMix64,
        times: &mut Vec<u64>,
        counts: &mut Vec<u64>,
    ) -> Option<[u64; 4]> {
        times.clear();
        times.resize(self.len(), 0);
        for _ in 0..self.len() {
            times[rng.below(self.len())] += 1;
        }
        self.figures(times, counts)
    }
}

/// The count a quantile reads up to, as `Histogram::value_at_quantile` computes it.
fn target(q: f64, total: u64) -> u64 {
    ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1)
}

/// The 95% interval of B/A for each of [`QUANTILES`], from [`RESAMPLES`] paired resamples.
pub fn ratio_intervals(a: &Sparse, b: &Sparse, seed: u64) -> Option<[(f64, f64); 4]> {
    if a.len() < MIN_INTERVALS || b.len() < MIN_INTERVALS {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    let (mut times, mut counts) = (Vec::new(), Vec::new());
    let mut draws: [Vec<f64>; 4] = Default::default();
    for _ in 0..RESAMPLES {
        let fa = a.resample(&mut rng, &mut times, &mut counts)?;
        let fb = b.resample(&mut rng, &mut times, &mut counts)?;
        for (k, d) in draws.iter_mut().enumerate() {
            d.push(fb[k] as f64 / fa[k].max(1) as f64);
        }
    }
    let tail = (1.0 - CONFIDENCE) / 2.0;
    Some(draws.map(|mut d| {
        d.sort_by(f64::total_cmp);
        let at = |p: f64| d[((p * (d.len() - 1) as f64).round() as usize).min(d.len() - 1)];
        (at(tail), at(1.0 - tail))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    /// `n` seconds of `per` values each around `centre` µs, spread by a deterministic jitter.
    fn run(n: usize, per: usize, centre: u64, seed: u64) -> Vec<Histogram<u64>> {
        let mut rng = SplitMix64::new(seed);
        (0..n)
            .map(|_| {
                let vals: Vec<u64> = (0..per)
                    .map(|_| centre / 2 + rng.below(centre as usize) as u64)
                    .collect();
                hist(&vals)
            })
            .collect()
    }

    fn sparse(run: &[Histogram<u64>]) -> Sparse {
        Sparse::new(&run.iter().collect::<Vec<_>>())
    }

    #[test]
    fn every_interval_once_reads_as_the_added_histogram_does() {
        let r = run(12, 40, 5_000, 1);
        let mut sum = Histogram::new_from(&r[0]);
        for h in &r {
            sum.add(h).unwrap();
        }
        let whole = sparse(&r).whole().unwrap();
        for (k, q) in QUANTILES.iter().enumerate() {
            assert_eq!(whole[k], sum.value_at_quantile(*q), "quantile {q}");
        }
        assert_eq!(whole[3], sum.max());
        // Small counts, where the ceiling of q x total decides the bucket.
        let few = [hist(&[10]), hist(&[20, 30]), hist(&[1_000_000])];
        let mut sum = Histogram::new_from(&few[0]);
        for h in &few {
            sum.add(h).unwrap();
        }
        let whole = sparse(&few).whole().unwrap();
        for (k, q) in QUANTILES.iter().enumerate() {
            assert_eq!(whole[k], sum.value_at_quantile(*q), "quantile {q}");
        }
    }

    #[test]
    fn a_run_against_itself_is_within_noise() {
        let a = sparse(&run(20, 30, 10_000, 2));
        let iv = ratio_intervals(&a, &a, seed_of("kinesis.x")).unwrap();
        for (lo, hi) in iv {
            assert!(lo <= 1.0 && hi >= 1.0, "{lo}..{hi}");
            assert!(lo > 0.5 && hi < 2.0, "{lo}..{hi}");
        }
        // The same inputs and seed, the same intervals.
        assert_eq!(iv, ratio_intervals(&a, &a, seed_of("kinesis.x")).unwrap());
    }

    #[test]
    fn a_tenfold_shift_is_larger_than_noise_and_a_small_one_on_noisy_data_is_not() {
        let a = sparse(&run(20, 30, 10_000, 3));
        let b = sparse(&run(20, 30, 100_000, 4));
        for (lo, hi) in ratio_intervals(&a, &b, 7).unwrap() {
            assert!(lo > 5.0 && hi < 20.0, "{lo}..{hi}");
        }
        // Two draws of one distribution: whatever their figures, the intervals hold 1.
        let c = sparse(&run(20, 30, 10_000, 5));
        for (lo, hi) in ratio_intervals(&a, &c, 7).unwrap() {
            assert!(lo < 1.0 && hi > 1.0, "{lo}..{hi}");
        }
    }

    #[test]
    fn too_few_intervals_give_no_interval() {
        let a = sparse(&run(MIN_INTERVALS - 1, 30, 10_000, 6));
        let b = sparse(&run(20, 30, 10_000, 7));
        assert!(ratio_intervals(&a, &b, 1).is_none());
        assert!(ratio_intervals(&b, &a, 1).is_none());
    }

    #[test]
    fn the_prng_is_splitmix64() {
        // The first output of splitmix64 seeded with 0 (the reference implementation's).
        assert_eq!(SplitMix64::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
        let mut r = SplitMix64::new(9);
        assert!((0..1000).all(|_| r.below(7) < 7));
    }
}
