//! `--max-cost`: the list-price cost a run has accrued, second by second at the hourly cost of
//! its configuration then, and whether going on would pass the cap. The run stops itself before
//! it would: the check looks one tick and the run's stopping (draining, cleaning up) ahead.

use std::time::{Duration, Instant};

use super::usd;

/// What a run may take after a check before the next one sees it: the next tick, and its
/// stopping (the consumers' drain and the clean-up, when resources still exist).
pub const AHEAD: Duration = Duration::from_secs(11);

#[derive(Clone, Debug, PartialEq)]
pub struct Cap {
    /// The cap, in US dollars.
    pub limit: f64,
    /// What the run has cost so far at list price.
    pub accrued: f64,
    /// The configuration's hourly cost at the last check.
    pub hourly: f64,
    last: Option<Instant>,
}

impl Cap {
    pub fn new(limit: f64) -> Cap {
        Cap {
            limit,
            accrued: 0.0,
            hourly: 0.0,
            last: None,
        }
    }

    /// Adds the cost since the last check (at the hourly cost then) and takes `hourly` as the
    /// cost from now on. Returns why the run must stop when going on for `ahead` more would
    /// pass the cap.
    pub fn check(&mut self, hourly: f64, now: Instant, ahead: Duration) -> Option<String> {
        if let Some(last) = self.last {
            self.accrued +=
                self.hourly * now.saturating_duration_since(last).as_secs_f64() / 3600.0;
        }
        self.last = Some(now);
        self.hourly = if hourly.is_finite() {
            hourly.max(0.0)
        } else {
            0.0
        };
        let next = self.accrued + self.hourly * ahead.as_secs_f64() / 3600.0;
        (next > self.limit).then(|| {
            format!(
                "stopped at the cost cap: {} accrued at list price ({}/h); going on {}s more would pass --max-cost {}",
                usd(self.accrued),
                usd(self.hourly),
                ahead.as_secs(),
                usd(self.limit)
            )
        })
    }

    /// The header's part: `cost $0.0012 of $0.05 cap`.
    pub fn header(&self) -> String {
        format!("cost {} of {} cap", usd(self.accrued), usd(self.limit))
    }

    /// Whether the run has used most of the cap (the header shows it strong).
    pub fn near(&self) -> bool {
        self.accrued >= 0.8 * self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_accrues_at_the_hourly_cost_and_stops_before_it_is_passed() {
        let t0 = Instant::now();
        // $36 an hour is a cent a second.
        let mut cap = Cap::new(0.095);
        assert_eq!(cap.check(36.0, t0, Duration::from_secs(1)), None);
        assert_eq!(cap.accrued, 0.0);
        let mut stopped = None;
        for s in 1..=20 {
            if let Some(why) = cap.check(36.0, t0 + Duration::from_secs(s), Duration::from_secs(1))
            {
                stopped = Some((s, why));
                break;
            }
        }
        let (at, why) = stopped.expect("the cap stops the run");
        // At 9 s, $0.09 has accrued and the next second would make $0.10, past the cap.
        assert_eq!(at, 9, "{why}");
        assert!((cap.accrued - 0.09).abs() < 1e-9);
        assert!(why.contains("$0.0900 accrued"), "{why}");
        assert!(why.contains("--max-cost $0.0950"), "{why}");
        assert_eq!(cap.header(), "cost $0.0900 of $0.0950 cap");
        assert!(cap.near());
    }

    #[test]
    fn a_cheaper_configuration_accrues_from_when_it_changed() {
        let t0 = Instant::now();
        let mut cap = Cap::new(1.0);
        cap.check(3600.0, t0, Duration::ZERO);
        // A dollar a second for half a second, then nothing.
        cap.check(0.0, t0 + Duration::from_millis(500), Duration::ZERO);
        cap.check(0.0, t0 + Duration::from_secs(100), Duration::ZERO);
        assert!((cap.accrued - 0.5).abs() < 1e-9, "{}", cap.accrued);
    }
}
