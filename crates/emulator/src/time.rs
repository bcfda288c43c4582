//! The emulator's clock: real time plus an offset that only ever moves forward.
//!
//! Every time-based rule of the emulated service (iterator expiry, subscription length, retention,
//! penalties, rate windows, activation delays) reads this clock, so a test can check a documented
//! default such as "iterators expire after 5 minutes" at its real value by moving the clock forward
//! instead of waiting. Nothing but tests moves it; in normal use it is the wall clock.
//!
//! A test that checks a margin shorter than a busy machine's pauses (a 5 s penalty checked at
//! 4.5 s) freezes the clock first: then only its own moves make time pass.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

#[derive(Debug, Default)]
pub struct ServiceClock {
    offset_us: AtomicU64,
    /// When frozen: the real instant and epoch microseconds the clock stopped at.
    frozen: Mutex<Option<(Instant, i64)>>,
}

impl ServiceClock {
    fn offset(&self) -> Duration {
        Duration::from_micros(self.offset_us.load(Ordering::Relaxed))
    }

    /// Now, as the service sees it.
    pub fn now(&self) -> Instant {
        let base = self.frozen.lock().map_or_else(Instant::now, |(at, _)| at);
        base + self.offset()
    }

    /// Now as microseconds since the Unix epoch, as the service stamps records.
    pub fn now_micros(&self) -> i64 {
        let base = self
            .frozen
            .lock()
            .map_or_else(latlab_core::clock::now_micros, |(_, us)| us);
        base + self.offset().as_micros() as i64
    }

    /// Stops the clock following real time: from now on only [`ServiceClock::advance`] moves
    /// it.
    pub fn freeze(&self) {
        let mut f = self.frozen.lock();
        if f.is_none() {
            *f = Some((Instant::now(), latlab_core::clock::now_micros()));
        }
    }

    /// Moves the clock forward, as if `by` had passed.
    pub fn advance(&self, by: Duration) {
        self.offset_us
            .fetch_add(by.as_micros() as u64, Ordering::Relaxed);
    }

    /// Sleeps until `deadline` on this clock (a move of the clock while asleep takes effect at
    /// the next wake-up).
    pub async fn sleep_until(&self, deadline: Instant) {
        if self.frozen.lock().is_some() {
            // A frozen clock's wait takes as long in real time as it has left on the clock.
            let left = deadline.saturating_duration_since(self.now());
            latlab_core::shaping::sleep_until(Instant::now() + left).await;
            return;
        }
        let real = deadline.checked_sub(self.offset()).unwrap_or(deadline);
        latlab_core::shaping::sleep_until(real).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advancing_moves_both_clocks() {
        let c = ServiceClock::default();
        let (t, us) = (c.now(), c.now_micros());
        c.advance(Duration::from_secs(300));
        assert!(c.now() >= t + Duration::from_secs(300));
        assert!(c.now_micros() >= us + 300_000_000);
    }

    #[test]
    fn a_frozen_clock_moves_only_when_moved() {
        let c = ServiceClock::default();
        c.freeze();
        let (t, us) = (c.now(), c.now_micros());
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!((c.now(), c.now_micros()), (t, us));
        c.advance(Duration::from_millis(1500));
        assert_eq!(c.now(), t + Duration::from_millis(1500));
        assert_eq!(c.now_micros(), us + 1_500_000);
    }
}
