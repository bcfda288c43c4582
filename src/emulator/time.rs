//! The emulator's clock: real time plus an offset that only ever moves forward.
//!
//! Every time-based rule of the emulated service (iterator expiry, subscription length, retention,
//! penalties, rate windows, activation delays) reads this clock, so a test can check a documented
//! default such as "iterators expire after 5 minutes" at its real value by moving the clock forward
//! instead of waiting. Nothing but tests moves it; in normal use it is the wall clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub struct ServiceClock {
    offset_us: AtomicU64,
}

impl ServiceClock {
    fn offset(&self) -> Duration {
        Duration::from_micros(self.offset_us.load(Ordering::Relaxed))
    }

    /// Now, as the service sees it.
    pub fn now(&self) -> Instant {
        Instant::now() + self.offset()
    }

    /// Now as microseconds since the Unix epoch, as the service stamps records.
    pub fn now_micros(&self) -> i64 {
        crate::clock::now_micros() + self.offset().as_micros() as i64
    }

    /// Moves the clock forward, as if `by` had passed.
    pub fn advance(&self, by: Duration) {
        self.offset_us
            .fetch_add(by.as_micros() as u64, Ordering::Relaxed);
    }

    /// Sleeps until `deadline` on this clock (a move of the clock while asleep takes effect at
    /// the next wake-up).
    pub async fn sleep_until(&self, deadline: Instant) {
        let real = deadline.checked_sub(self.offset()).unwrap_or(deadline);
        super::profile::sleep_until(real).await;
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
}
