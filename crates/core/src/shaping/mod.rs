//! Rate and shaping primitives shared by the emulator (per-shard limits, S3 bandwidth), the
//! Kinesis producer and the Redis lab's link shaper: a call-rate window, a token bucket, and a
//! pacing bucket (all take `now` from the caller so that one clock reading decides a whole
//! request, and so tests can drive them with synthetic instants); delay distributions (`dist`)
//! and a sleep precise to well under a millisecond.

pub mod dist;

pub use dist::Dist;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::Deserialize;

const SECOND: Duration = Duration::from_secs(1);

/// How a per-shard "N calls per second" limit is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RateWindow {
    /// At most N admitted calls within any 1-second window.
    Sliding,
    /// At most N admitted calls per calendar second.
    Fixed,
    /// A bucket of N tokens refilled continuously at N per second.
    TokenBucket,
}

impl RateWindow {
    pub fn name(self) -> &'static str {
        match self {
            RateWindow::Sliding => "sliding",
            RateWindow::Fixed => "fixed",
            RateWindow::TokenBucket => "token-bucket",
        }
    }
}

/// The admission times a sliding window reserves room for up front; past this it grows as
/// calls are admitted (never past the limit).
const RESERVED_ADMISSIONS: usize = 64;

/// "At most N calls per second", counted as [`RateWindow`] says. Only admitted calls count.
#[derive(Debug)]
pub struct CallRate {
    mode: RateWindow,
    per_sec: u32,
    /// Sliding: admission times within the last second. Fixed: unused.
    recent: VecDeque<Instant>,
    /// Fixed: the start of the current second and the calls admitted in it.
    fixed: Option<(Instant, u32)>,
    /// Token bucket: tokens and when they were last refilled.
    bucket: (f64, Option<Instant>),
}

impl CallRate {
    pub fn new(mode: RateWindow, per_sec: u32) -> Self {
        CallRate {
            mode,
            per_sec,
            // Only the sliding window keeps admission times, and it grows with the calls
            // actually admitted: reserving a slot per allowed call asked for gigabytes when a
            // limit was set to u32::MAX (found by fuzz/s3_part_number).
            recent: VecDeque::with_capacity(match mode {
                RateWindow::Sliding => (per_sec as usize).min(RESERVED_ADMISSIONS) + 1,
                RateWindow::Fixed | RateWindow::TokenBucket => 0,
            }),
            fixed: None,
            bucket: (per_sec as f64, None),
        }
    }

    /// Admits the call (and counts it) or refuses it.
    pub fn try_admit(&mut self, now: Instant) -> bool {
        match self.mode {
            RateWindow::Sliding => {
                while let Some(&t) = self.recent.front() {
                    if now.saturating_duration_since(t) >= SECOND {
                        self.recent.pop_front();
                    } else {
                        break;
                    }
                }
                if self.recent.len() < self.per_sec as usize {
                    self.recent.push_back(now);
                    true
                } else {
                    false
                }
            }
            RateWindow::Fixed => {
                let (start, count) = match self.fixed {
                    Some((start, count)) if now.saturating_duration_since(start) < SECOND => {
                        (start, count)
                    }
                    Some((start, _)) => {
                        let whole = now.saturating_duration_since(start).as_secs();
                        (start + Duration::from_secs(whole), 0)
                    }
                    None => (now, 0),
                };
                let admit = count < self.per_sec;
                self.fixed = Some((start, count + u32::from(admit)));
                admit
            }
            RateWindow::TokenBucket => {
                let (tokens, last) = self.bucket;
                let refill = last.map_or(0.0, |l| now.saturating_duration_since(l).as_secs_f64());
                let tokens = (tokens + refill * self.per_sec as f64).min(self.per_sec as f64);
                if tokens >= 1.0 {
                    self.bucket = (tokens - 1.0, Some(now));
                    true
                } else {
                    self.bucket = (tokens, Some(now));
                    false
                }
            }
        }
    }
}

/// A continuously refilled bucket holding at most one second of `rate` units.
///
/// With `allow_debt`, a take succeeds whenever the bucket is positive and may drive it negative:
/// the next takes then wait until it has refilled (this is how a 2 MB/s read limit lets one call
/// return 10 MB and then throttles the calls after it). Without it, a take needs the whole amount
/// (capped at the capacity, so an item larger than one second's worth can still pass when full).
#[derive(Debug)]
pub struct Bucket {
    rate: f64,
    capacity: f64,
    tokens: f64,
    last: Option<Instant>,
    allow_debt: bool,
}

impl Bucket {
    /// A bucket holding one second of `rate`, full.
    pub fn new(rate: u64, allow_debt: bool) -> Self {
        Bucket::with_capacity(rate, rate, allow_debt)
    }

    /// A bucket refilled at `rate` that holds at most `capacity` (and starts full): a small
    /// capacity paces bytes evenly instead of letting a burst through.
    pub fn with_capacity(rate: u64, capacity: u64, allow_debt: bool) -> Self {
        Bucket {
            rate: rate as f64,
            capacity: capacity as f64,
            tokens: capacity as f64,
            last: None,
            allow_debt,
        }
    }

    fn refill(&mut self, now: Instant) {
        if let Some(last) = self.last {
            let dt = now.saturating_duration_since(last).as_secs_f64();
            self.tokens = (self.tokens + dt * self.rate).min(self.capacity);
        }
        self.last = Some(now);
    }

    /// Whether a take of `amount` would pass now (nothing is taken).
    pub fn can_take(&mut self, now: Instant, amount: u64) -> bool {
        self.refill(now);
        if self.allow_debt {
            self.tokens > 0.0
        } else {
            self.tokens >= (amount as f64).min(self.capacity)
        }
    }

    /// Takes `amount` unconditionally (may go negative with `allow_debt`, never below 0 without).
    pub fn take(&mut self, now: Instant, amount: u64) {
        self.refill(now);
        self.tokens -= amount as f64;
        if !self.allow_debt {
            self.tokens = self.tokens.max(0.0);
        }
    }

    /// How long until `amount` could be taken.
    pub fn wait_for(&mut self, now: Instant, amount: u64) -> Duration {
        self.refill(now);
        let need = if self.allow_debt {
            f64::MIN_POSITIVE
        } else {
            (amount as f64).min(self.capacity)
        };
        if self.tokens >= need {
            Duration::ZERO
        } else {
            Duration::from_secs_f64((need - self.tokens) / self.rate)
        }
    }
}

/// The burst a pacing bucket allows: 5 ms of its rate, at most 256 KiB.
pub fn pacing_bucket(rate: f64) -> Bucket {
    let capacity = (rate * 0.005).clamp(1.0, 256.0 * 1024.0);
    Bucket::with_capacity(rate as u64, capacity as u64, true)
}

/// Sleeps for one sample of `dist`, skipping the timer entirely for a zero delay.
pub async fn delay(dist: &Dist) {
    if !dist.is_zero() {
        sleep_until(std::time::Instant::now() + dist.sample()).await;
    }
}

/// Sleeps until `deadline` to well under a millisecond. tokio's timer wakes on whole-millisecond
/// ticks, at the first tick after the time asked, and a busy runtime parks a little late besides:
/// a timer asked for the last millisecond overshot by about 0.7 ms on average (`latlab
/// calibrate` of fixed delays, 2026-12-06). The last two milliseconds are spent yielding instead
/// (a delay of 0 never sleeps at all).
pub async fn sleep_until(deadline: std::time::Instant) {
    const TICK: Duration = Duration::from_millis(2);
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

    fn burst(rate: &mut CallRate, start: Instant, n: u32, gap: Duration) -> u32 {
        (0..n).filter(|i| rate.try_admit(start + gap * *i)).count() as u32
    }

    #[test]
    fn sliding_window_admits_five_per_second() {
        let t0 = Instant::now();
        let mut r = CallRate::new(RateWindow::Sliding, 5);
        assert_eq!(burst(&mut r, t0, 20, Duration::from_millis(10)), 5);
        let mut r = CallRate::new(RateWindow::Sliding, 5);
        assert_eq!(burst(&mut r, t0, 20, Duration::from_millis(200)), 20);
        // 4 calls/s from one client plus 1/s from another exceed 5 in some windows.
        let mut r = CallRate::new(RateWindow::Sliding, 5);
        assert_eq!(burst(&mut r, t0, 10, Duration::from_millis(100)), 5);
    }

    #[test]
    fn fixed_window_resets_each_second() {
        let t0 = Instant::now();
        // 5 calls late in one second and 5 early in the next: a fixed window admits all ten,
        // a sliding one only what leaves five in any second (the first call has expired).
        let late = t0 + Duration::from_millis(900);
        let early = t0 + Duration::from_millis(1050);
        for (mode, want) in [(RateWindow::Fixed, 10), (RateWindow::Sliding, 6)] {
            let mut r = CallRate::new(mode, 5);
            assert!(r.try_admit(t0));
            let n = burst(&mut r, late, 4, Duration::from_millis(10))
                + burst(&mut r, early, 5, Duration::from_millis(10));
            assert_eq!(n + 1, want, "{mode:?}");
        }
        let mut r = CallRate::new(RateWindow::Fixed, 5);
        assert_eq!(burst(&mut r, t0, 20, Duration::from_millis(40)), 5);
    }

    #[test]
    fn the_largest_limit_costs_no_more_memory_than_the_calls_made() {
        // u32::MAX calls/s is a limit a user may set; each window must be built without
        // reserving room for it, and still admit every call.
        let t0 = Instant::now();
        for mode in [
            RateWindow::Sliding,
            RateWindow::Fixed,
            RateWindow::TokenBucket,
        ] {
            let mut r = CallRate::new(mode, u32::MAX);
            assert!(r.recent.capacity() <= RESERVED_ADMISSIONS + 1, "{mode:?}");
            assert_eq!(burst(&mut r, t0, 1_000, Duration::ZERO), 1_000, "{mode:?}");
        }
    }

    #[test]
    fn token_bucket_refills_continuously() {
        let t0 = Instant::now();
        let mut r = CallRate::new(RateWindow::TokenBucket, 5);
        assert_eq!(burst(&mut r, t0, 5, Duration::ZERO), 5);
        assert!(!r.try_admit(t0 + Duration::from_millis(100)));
        assert!(r.try_admit(t0 + Duration::from_millis(200)));
    }

    #[test]
    fn debt_bucket_blocks_after_a_large_take() {
        let t0 = Instant::now();
        let mut b = Bucket::new(2_000_000, true);
        assert!(b.can_take(t0, 10_000_000));
        b.take(t0, 10_000_000);
        assert!(!b.can_take(t0 + Duration::from_secs(3), 1));
        assert!(b.can_take(t0 + Duration::from_millis(4001), 1));
        let mut w = Bucket::new(1000, false);
        assert!(w.can_take(t0, 600));
        w.take(t0, 600);
        assert!(!w.can_take(t0, 600));
        assert_eq!(w.wait_for(t0, 600), Duration::from_millis(200));
    }
}
