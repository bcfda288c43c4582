//! The producer's achieved rate and its shortfall, judged over whole seconds (`producer`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::super::config::ProducerMode;
use super::super::state::LiveSettings;
use super::*;

fn spec() -> ProducerSpec {
    ProducerSpec {
        rate: 5.0,
        payload: 128,
        max_in_flight: 64,
        mode: ProducerMode::PutRecord,
        stop_after: None,
    }
}

/// A lab `elapsed` into its run, asked for 5 records/s, whose producer's first put was at
/// `first_put`, with `acks[i]` records acknowledged in run second `i`.
fn lab(elapsed: Duration, first_put: Duration, acks: &[u32]) -> Arc<Shared> {
    let mut run = crate::labs::RunContext::offline();
    Arc::get_mut(&mut run).unwrap().start = Instant::now().checked_sub(elapsed).unwrap();
    let shared = Shared::new(run, LiveSettings::of(None));
    shared.settings.lock().rate = 5.0;
    *shared.producing.lock() = (Some(first_put), None);
    {
        let mut series = shared.producer.put_latency.lock();
        for (second, n) in acks.iter().enumerate() {
            for _ in 0..*n {
                series.record(70_000, second as u64);
            }
        }
    }
    shared
        .producer
        .acked
        .store(acks.iter().map(|n| u64::from(*n)).sum(), Ordering::Relaxed);
    shared
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn a_producer_on_pace_is_not_short_in_its_first_seconds() {
    // The demo at 0:00:09: the first put at 2.4 s, so second 2 held only 3 acknowledgements.
    let shared = lab(ms(9_500), ms(2_400), &[0, 0, 3, 5, 5, 5, 5, 5, 5, 2]);
    let p = producer(&shared, &spec(), false);
    assert_eq!(p.achieved_rate, 5.0, "seconds 3 to 8, whole");
    assert_eq!(p.achieved_over_secs, 6.0);
    assert_eq!(p.shortfall(), None);
}

#[test]
fn a_real_shortfall_without_a_measured_cause_says_so_plainly() {
    let shared = lab(ms(9_500), ms(2_400), &[0, 0, 3, 4, 4, 4, 4, 4, 4, 2]);
    let p = producer(&shared, &spec(), false);
    assert_eq!(p.achieved_rate, 4.0);
    let short = p
        .shortfall()
        .expect("1/s short over 6 s is past the resolution");
    assert_eq!(short.describe(1), "1/s short, cause not measured");
}

#[test]
fn a_shortfall_within_the_resolution_is_not_claimed() {
    // One whole second measured: one record either side of its edges is all it can tell.
    let shared = lab(ms(4_500), ms(2_400), &[0, 0, 3, 4, 2]);
    let p = producer(&shared, &spec(), false);
    assert_eq!((p.achieved_rate, p.achieved_over_secs), (4.0, 1.0));
    assert_eq!(p.rate_resolution(), Some(1.0));
    assert_eq!(p.shortfall(), None);
    // Before the first whole second nothing is measured, so nothing is claimed.
    let shared = lab(ms(3_500), ms(2_400), &[0, 0, 3, 2]);
    let p = producer(&shared, &spec(), false);
    assert_eq!(p.rate_resolution(), None);
    assert_eq!(p.shortfall(), None);
}

#[test]
fn the_window_starts_again_when_the_asked_rate_changes() {
    // 5/s until 8.3 s, then asked for 10/s: seconds 9 and 10 are the new rate's.
    let shared = lab(
        ms(11_500),
        ms(2_400),
        &[0, 0, 3, 5, 5, 5, 5, 5, 6, 10, 10, 4],
    );
    shared.settings.lock().rate = 10.0;
    *shared.rate_set_at.lock() = ms(8_300);
    let p = producer(&shared, &spec(), false);
    assert_eq!((p.achieved_rate, p.achieved_over_secs), (10.0, 2.0));
    assert_eq!(p.shortfall(), None);
}

#[test]
fn a_reset_does_not_invent_a_producer_shortfall() {
    // The demo: 5/s from 2.4 s; `r` pressed at 13 s; the producer kept its pace.
    let shared = lab(
        ms(13_000),
        ms(2_400),
        &[0, 0, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5],
    );
    shared.reset();
    let reset_at = *shared.reset_at.lock();
    assert!(reset_at >= ms(13_000), "{reset_at:?}");
    assert_eq!(shared.producer.acked.load(Ordering::Relaxed), 0);
    // One second on (14.5 s): nothing whole measured since the reset, nothing claimed; the
    // seconds before the reset no longer count as seconds that acknowledged nothing.
    *shared.reset_at.lock() = ms(13_000);
    let p = producer(&shared, &spec(), false);
    assert_eq!(p.shortfall(), None, "{p:?}");
    // Ten seconds after the reset, the producer's pace since the reset.
    let later = lab(ms(23_500), ms(2_400), &[0; 13]);
    *later.reset_at.lock() = ms(13_000);
    {
        let mut series = later.producer.put_latency.lock();
        for second in 13..23 {
            for _ in 0..5 {
                series.record(70_000, second);
            }
        }
    }
    later.producer.acked.store(50, Ordering::Relaxed);
    let p = producer(&later, &spec(), false);
    assert_eq!((p.achieved_rate, p.achieved_over_secs), (5.0, 10.0));
    assert_eq!(p.shortfall(), None);
    // The finished run's rate counts from the reset: 50 records over 10 s.
    later.producing.lock().1 = Some(ms(23_000));
    let p = producer(&later, &spec(), true);
    assert_eq!((p.achieved_rate, p.achieved_over_secs), (5.0, 10.0));
    assert_eq!(p.shortfall(), None);
}

#[test]
fn a_finished_run_is_judged_by_the_same_rule() {
    // 14 records over 2.9 s: 4.8/s, short by less than one record over the time measured.
    let shared = lab(ms(3_500), ms(100), &[5, 5, 4]);
    *shared.producing.lock() = (Some(ms(100)), Some(ms(3_000)));
    let p = producer(&shared, &spec(), true);
    assert!((p.achieved_over_secs - 2.9).abs() < 1e-9);
    assert_eq!(p.shortfall(), None);
    // 10 records over 2.9 s is short by far more, and the in-flight cap says why.
    let shared = lab(ms(3_500), ms(100), &[4, 3, 3]);
    *shared.producing.lock() = (Some(ms(100)), Some(ms(3_000)));
    shared
        .producer
        .cap_wait_us
        .store(1_450_000, Ordering::Relaxed);
    let p = producer(&shared, &spec(), true);
    let short = p.shortfall().unwrap();
    assert_eq!(
        short.describe(usize::MAX),
        "1.6/s short: in-flight cap (64) full 50% of the time"
    );
}
