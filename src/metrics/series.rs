//! A latency series: an exact hdrhistogram of everything since the last reset (for percentile
//! tables), and a rolling per-second window (for sparklines and "last N seconds" views).
//! Both have a fixed size, so memory stays flat however long a run lasts.

use std::collections::VecDeque;

use hdrhistogram::Histogram;

/// Values above one hour are recorded as one hour (and counted in `clamped`).
pub const MAX_US: u64 = 3_600_000_000;

/// Seconds of history the rolling window keeps.
pub const ROLLING_SECONDS: usize = 600;

/// Log-scale buckets per power of two in the rolling window (a bucket spans a factor of 2^(1/4)).
const STEPS: f64 = 4.0;
const BUCKETS: usize = 33 * 4;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    pub count: u64,
    pub min_us: u64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
    pub mean_us: f64,
}

impl Summary {
    /// One of its figures (`us`, one of its own fields) in milliseconds for a table, or `-`
    /// when it holds no samples: a series that measured nothing has no latency, not 0.0 ms.
    pub fn ms(&self, us: u64) -> String {
        if self.count == 0 {
            "-".into()
        } else {
            latlab_core::units::ms(us)
        }
    }

    /// A made-up summary for the labs' fixed samples (`Fixture::sample`): the percentiles between
    /// `p50_ms` and `max_ms`, in milliseconds. Never a measurement.
    pub fn sample(p50_ms: f64, p99_ms: f64, max_ms: f64, count: u64) -> Summary {
        // No samples, no figures: as a measured series of none.
        if count == 0 {
            return Summary::default();
        }
        let us = |ms: f64| (ms * 1000.0) as u64;
        Summary {
            count,
            min_us: us(p50_ms / 4.0),
            p50_us: us(p50_ms),
            p90_us: us((p50_ms + p99_ms) / 2.0),
            p99_us: us(p99_ms),
            p999_us: us(max_ms * 0.95),
            max_us: us(max_ms),
            mean_us: p50_ms * 1000.0,
        }
    }
}

/// A distribution of sizes in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BytesSummary {
    pub count: u64,
    pub min_bytes: u64,
    pub p50_bytes: u64,
    pub p90_bytes: u64,
    pub p99_bytes: u64,
    pub max_bytes: u64,
    pub mean_bytes: f64,
}

impl BytesSummary {
    /// From a [`Series`] that recorded sizes plus one (its histogram starts at 1, so a size of
    /// 0 is recorded as 1 and taken back here).
    pub fn from_plus_one(s: &Summary) -> BytesSummary {
        if s.count == 0 {
            return BytesSummary::default();
        }
        BytesSummary {
            count: s.count,
            min_bytes: s.min_us - 1,
            p50_bytes: s.p50_us - 1,
            p90_bytes: s.p90_us - 1,
            p99_bytes: s.p99_us - 1,
            max_bytes: s.max_us - 1,
            mean_bytes: s.mean_us - 1.0,
        }
    }
}

/// One second of the rolling window.
#[derive(Clone)]
struct Slot {
    count: u32,
    max_us: u64,
    buckets: Box<[u32; BUCKETS]>,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            count: 0,
            max_us: 0,
            buckets: Box::new([0; BUCKETS]),
        }
    }

    fn clear(&mut self) {
        self.count = 0;
        self.max_us = 0;
        self.buckets.fill(0);
    }
}

fn bucket_of(us: u64) -> usize {
    ((us.max(1) as f64).log2() * STEPS) as usize
}

fn bucket_upper(i: usize) -> u64 {
    2f64.powf((i + 1) as f64 / STEPS) as u64
}

/// A point of the rolling window: one second's count and percentiles (bucket precision, ~19%).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Point {
    pub second: u64,
    pub count: u32,
    pub p50_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

#[derive(Clone)]
pub struct Series {
    hist: Histogram<u64>,
    clamped: u64,
    /// `slots[i]` is second `first_second + i`.
    slots: VecDeque<Slot>,
    first_second: u64,
}

impl Default for Series {
    fn default() -> Self {
        Self::new()
    }
}

impl Series {
    pub fn new() -> Series {
        Series {
            hist: Histogram::new_with_bounds(1, MAX_US, 3).expect("valid histogram bounds"),
            clamped: 0,
            slots: VecDeque::with_capacity(ROLLING_SECONDS),
            first_second: 0,
        }
    }

    /// Records one value in microseconds at `second` (seconds since the lab started).
    pub fn record(&mut self, us: u64, second: u64) {
        let v = if us > MAX_US {
            self.clamped += 1;
            MAX_US
        } else {
            us.max(1)
        };
        self.hist.record(v).expect("value within bounds");
        let slot = self.slot(second);
        slot.count += 1;
        slot.max_us = slot.max_us.max(v);
        slot.buckets[bucket_of(v).min(BUCKETS - 1)] += 1;
    }

    /// The slot for `second`, rolling the window forward (and never backward) as needed.
    fn slot(&mut self, second: u64) -> &mut Slot {
        if self.slots.is_empty() {
            self.first_second = second;
            self.slots.push_back(Slot::new());
        }
        let last = self.first_second + self.slots.len() as u64 - 1;
        if second > last {
            for _ in 0..(second - last).min(ROLLING_SECONDS as u64) {
                if self.slots.len() == ROLLING_SECONDS {
                    let mut s = self.slots.pop_front().expect("full");
                    s.clear();
                    self.slots.push_back(s);
                } else {
                    self.slots.push_back(Slot::new());
                }
            }
            self.first_second = second + 1 - self.slots.len() as u64;
        }
        // A late sample for a second that already left the window lands in the oldest slot.
        let i = second.saturating_sub(self.first_second) as usize;
        let i = i.min(self.slots.len() - 1);
        &mut self.slots[i]
    }

    pub fn reset(&mut self) {
        self.hist.reset();
        self.clamped = 0;
        self.slots.clear();
    }

    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    pub fn summary(&self) -> Summary {
        let h = &self.hist;
        if h.is_empty() {
            return Summary::default();
        }
        Summary {
            count: h.len(),
            min_us: h.min(),
            p50_us: h.value_at_quantile(0.5),
            p90_us: h.value_at_quantile(0.9),
            p99_us: h.value_at_quantile(0.99),
            p999_us: h.value_at_quantile(0.999),
            max_us: h.max(),
            mean_us: h.mean(),
        }
    }

    /// The value at quantile `q` of everything since the last reset.
    pub fn quantile(&self, q: f64) -> u64 {
        self.hist.value_at_quantile(q)
    }

    /// The last `n` seconds up to and including `now_second`, oldest first; seconds without
    /// samples are zero points.
    pub fn points(&self, now_second: u64, n: usize) -> Vec<Point> {
        let n = n.min(ROLLING_SECONDS);
        let start = (now_second + 1).saturating_sub(n as u64);
        (start..=now_second)
            .map(|sec| {
                let slot = sec
                    .checked_sub(self.first_second)
                    .and_then(|i| self.slots.get(i as usize))
                    .filter(|s| s.count > 0);
                match slot {
                    None => Point {
                        second: sec,
                        ..Point::default()
                    },
                    Some(s) => Point {
                        second: sec,
                        count: s.count,
                        p50_us: slot_quantile(s, 0.5),
                        p99_us: slot_quantile(s, 0.99),
                        max_us: s.max_us,
                    },
                }
            })
            .collect()
    }

    /// Percentiles over the last `n` seconds (bucket precision), for "recent" views.
    pub fn recent(&self, now_second: u64, n: usize) -> Summary {
        let mut merged = Slot::new();
        let start = (now_second + 1).saturating_sub(n as u64);
        for sec in start..=now_second {
            if let Some(s) = sec
                .checked_sub(self.first_second)
                .and_then(|i| self.slots.get(i as usize))
            {
                merged.count += s.count;
                merged.max_us = merged.max_us.max(s.max_us);
                for (m, v) in merged.buckets.iter_mut().zip(s.buckets.iter()) {
                    *m += v;
                }
            }
        }
        if merged.count == 0 {
            return Summary::default();
        }
        Summary {
            count: merged.count as u64,
            min_us: 0,
            p50_us: slot_quantile(&merged, 0.5),
            p90_us: slot_quantile(&merged, 0.9),
            p99_us: slot_quantile(&merged, 0.99),
            p999_us: slot_quantile(&merged, 0.999),
            max_us: merged.max_us,
            mean_us: 0.0,
        }
    }

    /// The underlying histogram (for reports that need more than the summary).
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.hist
    }
}

/// Events per second over the rolling window: a count a second, nothing else (for rates such as
/// an operation's calls per second, where a whole [`Series`] would be wasted).
#[derive(Clone, Debug, Default)]
pub struct Rate {
    /// `slots[i]` is second `first_second + i`.
    slots: VecDeque<u32>,
    first_second: u64,
}

impl Rate {
    /// Counts one event at `second`.
    pub fn tick(&mut self, second: u64) {
        if self.slots.is_empty() {
            self.first_second = second;
            self.slots.push_back(0);
        }
        let last = self.first_second + self.slots.len() as u64 - 1;
        if second > last {
            for _ in 0..(second - last).min(ROLLING_SECONDS as u64) {
                if self.slots.len() == ROLLING_SECONDS {
                    self.slots.pop_front();
                }
                self.slots.push_back(0);
            }
            self.first_second = second + 1 - self.slots.len() as u64;
        }
        let i = (second.saturating_sub(self.first_second) as usize).min(self.slots.len() - 1);
        self.slots[i] += 1;
    }

    /// The counts of the last `n` seconds up to and including `now_second`, oldest first: always
    /// `n` of them (seconds before the lab started count zero), so the newest is last.
    pub fn counts(&self, now_second: u64, n: usize) -> Vec<u32> {
        let n = n.min(ROLLING_SECONDS);
        (0..n as u64)
            .rev()
            .map(|ago| {
                now_second
                    .checked_sub(ago)
                    .and_then(|sec| sec.checked_sub(self.first_second))
                    .and_then(|i| self.slots.get(i as usize))
                    .copied()
                    .unwrap_or(0)
            })
            .collect()
    }

    pub fn reset(&mut self) {
        self.slots.clear();
    }
}

fn slot_quantile(s: &Slot, q: f64) -> u64 {
    let rank = ((s.count as f64) * q).ceil().max(1.0) as u64;
    let mut seen = 0u64;
    for (i, c) in s.buckets.iter().enumerate() {
        seen += *c as u64;
        if seen >= rank {
            return bucket_upper(i).min(s.max_us);
        }
    }
    s.max_us
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_counts_per_second_and_rolls() {
        let mut r = Rate::default();
        for sec in [5, 5, 6, 9] {
            r.tick(sec);
        }
        assert_eq!(r.counts(9, 5), [2, 1, 0, 0, 1]);
        r.tick(5000);
        assert_eq!(r.counts(5000, 2), [0, 1]);
        assert_eq!(r.counts(9, 3), [0, 0, 0], "old seconds left the window");
        // Early in a run: still n values, the newest last.
        let mut early = Rate::default();
        early.tick(1);
        assert_eq!(early.counts(1, 4), [0, 0, 0, 1]);
    }

    #[test]
    fn percentiles_are_exact_to_three_digits() {
        let mut s = Series::new();
        for v in 1..=1000u64 {
            s.record(v * 1000, 0);
        }
        let sum = s.summary();
        assert_eq!(sum.count, 1000);
        assert_eq!(sum.p50_us / 1000, 500);
        assert_eq!(sum.p99_us / 1000, 990);
        assert_eq!(sum.max_us / 1000, 1000);
        assert!((sum.p90_us as f64 / 900_000.0 - 1.0).abs() < 0.001);
    }

    #[test]
    fn the_rolling_window_keeps_the_last_ten_minutes_only() {
        let mut s = Series::new();
        for sec in 0..2000u64 {
            s.record(1000 + sec, sec);
        }
        let pts = s.points(1999, 5);
        assert_eq!(pts.len(), 5);
        assert_eq!(pts[4].second, 1999);
        assert_eq!(pts[4].count, 1);
        assert_eq!(pts[4].max_us, 2999);
        assert!(s.points(1999, 10_000).len() == ROLLING_SECONDS);
        assert_eq!(s.points(1999, 601)[0].count, 1, "the oldest second kept");
        // Seconds with no samples are zero.
        assert_eq!(s.points(2005, 3).iter().map(|p| p.count).sum::<u32>(), 0);
        assert_eq!(s.count(), 2000);
    }

    #[test]
    fn recent_percentiles_are_within_bucket_precision() {
        let mut s = Series::new();
        for i in 0..1000u64 {
            s.record(50_000 + i, 10);
        }
        s.record(2_000_000, 11);
        let r = s.recent(11, 2);
        assert_eq!(r.count, 1001);
        assert!((r.p50_us as f64 / 50_500.0 - 1.0).abs() < 0.2, "{r:?}");
        assert_eq!(r.max_us, 2_000_000);
    }

    #[test]
    fn huge_values_are_clamped_not_lost() {
        let mut s = Series::new();
        s.record(u64::MAX, 0);
        assert_eq!(s.summary().max_us, s.histogram().highest_equivalent(MAX_US));
        assert_eq!(s.count(), 1);
    }
}
