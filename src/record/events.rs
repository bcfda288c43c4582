//! What changed between two seconds of a run, as `events.jsonl` lines: throttle bursts (their
//! start, and their end with how many and how long), status changes and errors of what each lab
//! watches (`Lab::watched`: every consumer, the producer, each S3 operation, the Redis lab).
//! Faults and keys are written where they happen (see `Recorder`); these come from comparing one
//! second's snapshot with the last.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::snapshot::Snapshot;

/// A throttle burst under way: since when, and how many so far.
struct Burst {
    since: f64,
    count: u64,
}

/// The last second's figures and the bursts under way.
#[derive(Default)]
pub struct Watch {
    /// Per series: its status (its kind: the words before any figure), its last error, and its
    /// throttle count.
    last: BTreeMap<String, Seen>,
    bursts: BTreeMap<String, Burst>,
}

#[derive(Clone, Default, PartialEq)]
struct Seen {
    status: Option<String>,
    error: Option<String>,
    throttles: u64,
}

/// A status's kind: `reading, 120 ms behind` and `reading` are the same; what follows a comma,
/// a parenthesis or a colon is detail that changes every second.
pub fn status_kind(s: &str) -> &str {
    s.split([',', '(', ':']).next().unwrap_or(s).trim()
}

/// Each series' figures in a snapshot, by a name a reader knows it by (each lab's
/// `Lab::watched`).
fn seen(s: &Snapshot) -> BTreeMap<String, Seen> {
    s.watched()
        .into_iter()
        .map(|w| {
            let seen = Seen {
                status: w.status,
                error: w.error,
                throttles: w.throttles,
            };
            (w.name, seen)
        })
        .collect()
}

impl Watch {
    /// The events between the last second and `now` (at `at_secs` of the run).
    pub fn events(&mut self, at_secs: f64, now: &Snapshot) -> Vec<Value> {
        let mut out = Vec::new();
        let current = seen(now);
        for (name, s) in &current {
            let before = self.last.get(name).cloned().unwrap_or_default();
            let kind = |x: &Option<String>| x.as_deref().map(status_kind).map(str::to_string);
            if kind(&s.status) != kind(&before.status)
                && let Some(to) = &s.status
            {
                out.push(json!({
                    "at_secs": at_secs, "event": "status", "series": name, "text": to,
                }));
            }
            if s.error != before.error
                && let Some(e) = &s.error
            {
                out.push(json!({
                    "at_secs": at_secs, "event": "error", "series": name, "text": e,
                }));
            }
            // A reset (fewer than before) starts the count again; it is not a burst.
            let new = s.throttles.saturating_sub(before.throttles);
            match (new, self.bursts.get_mut(name)) {
                (0, Some(_)) => {
                    let b = self.bursts.remove(name).expect("present");
                    out.push(json!({
                        "at_secs": at_secs, "event": "throttle-burst-end", "series": name,
                        "count": b.count, "secs": at_secs - b.since,
                        "text": format!("{name}: {} throttled over {:.0} s", b.count, at_secs - b.since),
                    }));
                }
                (0, None) => {}
                (n, Some(b)) => b.count += n,
                (n, None) => {
                    self.bursts.insert(
                        name.clone(),
                        Burst {
                            since: at_secs,
                            count: n,
                        },
                    );
                    out.push(json!({
                        "at_secs": at_secs, "event": "throttle-burst", "series": name, "count": n,
                        "text": format!("{name}: throttled ({n} in the last second)"),
                    }));
                }
            }
        }
        self.last = current;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_kind_is_the_words_before_its_figures() {
        assert_eq!(status_kind("reading, 120 ms behind"), "reading");
        assert_eq!(status_kind("subscribed (35 ms to subscribe)"), "subscribed");
        assert_eq!(
            status_kind("subscription ended: re-subscribing"),
            "subscription ended"
        );
        assert_eq!(status_kind("polling"), "polling");
    }
}
