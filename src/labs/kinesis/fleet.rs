//! The Kinesis lab across hosts: what one host's run can bound of its clock, and, in a merge,
//! each producing host's records set beside what every host's consumers received of them.
//!
//! **Clocks.** Kinesis stamps each record with its `ApproximateArrivalTimestamp`, on the
//! service's clock; the producer stamps its send time and the consumer its receive time on the
//! host's. With `off` the host's clock minus the service's, and every delay at least 0:
//! - `arrival - send = delay - off`, so the smallest `arrival - send` bounds how far the host's
//!   clock is *behind*: `-off <= min(arrival - send)`;
//! - `receive - arrival = delay + off`, so the smallest `receive - arrival` bounds how far it
//!   is *ahead*: `off <= min(receive - arrival)` (the seed's "minimum arrival -> receive").
//!
//! A host that only produces (`--producer-only`) reads nothing, so the hosts reading its records
//! measure its `arrival - send` for it (each keeps the least per producing run).
//!
//! A negative difference is recorded as 0 in the latency series, so a minimum of 0 there says
//! the bound is 0 or tighter; the per-run minimum of another host's records keeps its sign.
//! Two hosts' minima differ by their clocks' difference plus their paths' (a minimum holds the
//! least network and service time), so a difference bounds neither alone: it is shown, and a
//! difference over [`SKEW_WARNING_US`] is flagged, for the reader to check the hosts' NTP.

use super::snapshot::KinesisSnapshot;
use crate::labs::hosts::{HostPart, Line};
use latlab_core::units::{ms, thousands};

/// Signed milliseconds.
fn ms_signed(us: i64) -> String {
    if us < 0 {
        format!("-{}", ms(us.unsigned_abs()))
    } else {
        ms(us as u64)
    }
}

/// Two hosts' minima further apart than this get a warning in a merge.
pub const SKEW_WARNING_US: u64 = 10_000;

/// What one run bounds of its host's clock against the service's.
#[derive(Clone, Debug, PartialEq)]
pub struct Clock {
    /// The smallest send -> arrival of this host's own records: at most this far behind.
    pub behind_at_most_us: Option<u64>,
    /// The smallest arrival -> receive at any of its consumers, and which: at most this far
    /// ahead.
    pub ahead_at_most_us: Option<(u64, String)>,
}

pub fn clock(k: &KinesisSnapshot) -> Clock {
    let behind_at_most_us = (k.send_to_arrival.count > 0).then_some(k.send_to_arrival.min_us);
    let ahead_at_most_us = k
        .consumers
        .iter()
        .filter(|c| c.arrival_to_receive.count > 0)
        .map(|c| (c.arrival_to_receive.min_us, c.name.clone()))
        .min_by_key(|(us, _)| *us);
    Clock {
        behind_at_most_us,
        ahead_at_most_us,
    }
}

impl Clock {
    /// One line for the report, or None when the run measured neither minimum.
    pub fn line(&self) -> Option<String> {
        let behind = self
            .behind_at_most_us
            .map(|us| format!("at most {} behind (least send -> arrival)", ms(us)));
        let ahead = self.ahead_at_most_us.as_ref().map(|(us, who)| {
            format!(
                "at most {} ahead (least arrival -> receive, {who})",
                ms(*us)
            )
        });
        let parts: Vec<String> = [behind, ahead].into_iter().flatten().collect();
        (!parts.is_empty()).then(|| {
            format!(
                "clock: this host's against the service's arrival stamps: {}\n",
                parts.join(", ")
            )
        })
    }
}

/// A reading host's records of other latlab runs, a line per run and consumer.
pub fn foreign_lines(k: &KinesisSnapshot) -> Vec<String> {
    let mut out = Vec::new();
    for c in &k.consumers {
        for f in &c.foreign_runs {
            out.push(format!(
                "records of run {} (another host's producer) at {}: {} received, {} duplicates{}{}\n",
                f.run,
                c.name,
                thousands(f.received),
                thousands(f.duplicates),
                if f.unchecked > 0 {
                    format!(", {} past the seqs tracked", thousands(f.unchecked))
                } else {
                    String::new()
                },
                f.min_send_to_arrival_us.map_or(String::new(), |us| format!(
                    "; least send -> arrival {} (the producing host's clock)",
                    ms_signed(us)
                ))
            ));
        }
    }
    out
}

/// Each host's clock bounds, and a warning where two hosts' minima differ by more than
/// [`SKEW_WARNING_US`].
fn clock_lines(hosts: &[HostPart<'_, KinesisSnapshot>]) -> Vec<Line> {
    // Per host: the least send -> arrival of its records (its own consumers', else the least
    // any other host's consumers saw of its run) and the least arrival -> receive it saw.
    let mut clocks: Vec<(&str, Option<i64>, Option<u64>)> = Vec::new();
    for h in hosts {
        let Some(k) = h.part else { continue };
        let own = clock(k);
        let read_elsewhere = hosts
            .iter()
            .filter_map(|o| o.part)
            .flat_map(|o| &o.consumers)
            .flat_map(|c| &c.foreign_runs)
            .filter(|f| f.run == h.run_id)
            .filter_map(|f| f.min_send_to_arrival_us)
            .min();
        let behind = own.behind_at_most_us.map(|us| us as i64).or(read_elsewhere);
        clocks.push((h.host, behind, own.ahead_at_most_us.map(|(us, _)| us)));
    }
    let mut out = Vec::new();
    if clocks.is_empty() {
        return out;
    }
    let each: Vec<String> = clocks
        .iter()
        .map(|(host, b, a)| {
            format!(
                "{host} {} / {}",
                b.map_or("-".to_string(), ms_signed),
                a.map_or("-".to_string(), ms)
            )
        })
        .collect();
    out.push(Line::info(format!(
        "clocks (least send -> arrival / least arrival -> receive, against the service's arrival stamps; each bounds how far the host's clock is behind / ahead): {}",
        each.join("; ")
    )));
    let mut spread = |name: &str, values: Vec<(&str, i64)>| {
        let (Some(lo), Some(hi)) = (
            values.iter().min_by_key(|v| v.1),
            values.iter().max_by_key(|v| v.1),
        ) else {
            return;
        };
        let apart = (hi.1 - lo.1).unsigned_abs();
        if apart > SKEW_WARNING_US {
            out.push(Line::warning(format!(
                "clocks: the least {name} is {} on {} and {} on {}, {} apart (over {}): their clocks or their paths to the service differ; check each host's offset (`chronyc tracking`) before trusting figures across hosts",
                ms_signed(lo.1),
                lo.0,
                ms_signed(hi.1),
                hi.0,
                ms(apart),
                ms(SKEW_WARNING_US)
            )));
        }
    };
    spread(
        "send -> arrival",
        clocks
            .iter()
            .filter_map(|(h, b, _)| b.map(|us| (*h, us)))
            .collect(),
    );
    spread(
        "arrival -> receive",
        clocks
            .iter()
            .filter_map(|(h, _, a)| a.map(|us| (*h, us as i64)))
            .collect(),
    );
    out
}

/// What a merge says of the lab across hosts: each producing host's acknowledged records
/// against what each host's consumers received of them, then the hosts' clocks.
pub(super) fn fleet(hosts: &[HostPart<'_, KinesisSnapshot>]) -> Vec<Line> {
    let mut out = Vec::new();
    for producer in hosts {
        let Some(pk) = producer.part else { continue };
        if pk.producer.elsewhere.is_some() || pk.producer.acked == 0 {
            continue;
        }
        let acked = pk.producer.acked;
        out.push(Line::info(format!(
            "records of {}'s producer (run {}): {} acknowledged",
            producer.host,
            producer.run_id,
            thousands(acked)
        )));
        for reader in hosts {
            let Some(rk) = reader.part else { continue };
            // Runs on embedded emulators of their own: the producer's records were never
            // in the stream this host read.
            if reader.run_id != producer.run_id && (reader.own_emulator || producer.own_emulator) {
                out.push(Line::info(format!(
                    "  {}: its consumers read an embedded emulator of their own, not this producer's stream: not counted",
                    reader.host
                )));
                continue;
            }
            for c in &rk.consumers {
                let got = if reader.run_id == producer.run_id {
                    Some(c.counts.received)
                } else {
                    c.foreign_runs
                        .iter()
                        .find(|f| f.run == producer.run_id)
                        .map(|f| f.received)
                };
                let got = got.unwrap_or(0);
                let text = if got == acked {
                    format!(
                        "  {} {}: {} received, every one",
                        reader.host,
                        c.name,
                        thousands(got)
                    )
                } else if got < acked {
                    format!(
                        "  {} {}: {} received, {} not (lost, or unread when it ended)",
                        reader.host,
                        c.name,
                        thousands(got),
                        thousands(acked - got)
                    )
                } else {
                    format!(
                        "  {} {}: {} received, {} more than acknowledged (stored though the producer saw the put fail)",
                        reader.host,
                        c.name,
                        thousands(got),
                        thousands(got - acked)
                    )
                };
                out.push(if got < acked {
                    Line::warning(text)
                } else {
                    Line::info(text)
                });
            }
        }
    }
    out.extend(clock_lines(hosts));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labs::kinesis::KinesisLab;
    use crate::labs::kinesis::foreign::ForeignCount;
    use crate::labs::{Fixture, Reported};

    /// A producing host (its consumers elsewhere) and two reading hosts: one whole, one that
    /// read part of the records, with clocks `ahead_us` apart at the readers.
    fn hosts(reader_b_min_us: u64) -> (KinesisSnapshot, KinesisSnapshot, KinesisSnapshot) {
        let (_, sample, _) = KinesisLab::sample();
        let mut producer = sample.clone();
        producer.consumers.clear();
        producer.producer.acked = 100;
        producer.send_to_arrival.count = 0;
        let reader = |received: u64, min_us: u64| {
            let mut k = sample.clone();
            k.producer.acked = 0;
            k.producer.elsewhere = Some("on another host".into());
            k.send_to_arrival.count = 0;
            for c in &mut k.consumers {
                c.foreign_runs = vec![ForeignCount {
                    run: "0000000a".into(),
                    received,
                    duplicates: 0,
                    unchecked: 0,
                    min_send_to_arrival_us: Some(-2_000),
                }];
                c.arrival_to_receive.min_us = min_us;
            }
            k
        };
        (producer, reader(100, 1_000), reader(60, reader_b_min_us))
    }

    fn say(p: &KinesisSnapshot, a: &KinesisSnapshot, b: &KinesisSnapshot) -> Vec<Line> {
        KinesisLab::fleet(&[
            HostPart {
                host: "prod",
                run_id: "0000000a",
                part: Some(p),
                own_emulator: false,
            },
            HostPart {
                host: "ra",
                run_id: "0000000b",
                part: Some(a),
                own_emulator: false,
            },
            HostPart {
                host: "rb",
                run_id: "0000000c",
                part: Some(b),
                own_emulator: false,
            },
        ])
    }

    #[test]
    fn each_producers_records_are_set_beside_every_hosts_consumers() {
        let (p, a, b) = hosts(1_500);
        let lines = say(&p, &a, &b);
        let n = a.consumers.len();
        assert_eq!(
            lines[0],
            Line::info("records of prod's producer (run 0000000a): 100 acknowledged")
        );
        let whole = lines
            .iter()
            .filter(|l| l.text.starts_with("  ra ") && l.text.ends_with("100 received, every one"))
            .count();
        assert_eq!(whole, n);
        let short: Vec<&Line> = lines
            .iter()
            .filter(|l| l.text.starts_with("  rb "))
            .collect();
        assert_eq!(short.len(), n);
        assert!(
            short.iter().all(|l| l.warning
                && l.text
                    .ends_with("60 received, 40 not (lost, or unread when it ended)")),
            "{short:?}"
        );
        // The producer's clock is bounded by what the readers saw of its records.
        let clocks = lines.iter().find(|l| l.text.starts_with("clocks")).unwrap();
        assert!(
            clocks
                .text
                .ends_with("prod -2.0 ms / -; ra - / 1.0 ms; rb - / 1.5 ms"),
            "{}",
            clocks.text
        );
        assert!(
            !lines
                .iter()
                .any(|l| l.text.starts_with("clocks: the least")),
            "{lines:?}"
        );
    }

    #[test]
    fn hosts_more_than_ten_ms_apart_are_warned_of() {
        let (p, a, b) = hosts(11_500);
        let lines = say(&p, &a, &b);
        let warned: Vec<&Line> = lines
            .iter()
            .filter(|l| l.text.starts_with("clocks: the least"))
            .collect();
        assert_eq!(warned.len(), 1, "{lines:?}");
        assert!(warned[0].warning);
        assert!(
            warned[0].text.starts_with("clocks: the least arrival -> receive is 1.0 ms on ra and 11.5 ms on rb, 10.5 ms apart (over 10.0 ms)"),
            "{}",
            warned[0].text
        );
        // 10 ms apart exactly is not over.
        let (p, a, b) = hosts(11_000);
        assert!(
            !say(&p, &a, &b)
                .iter()
                .any(|l| l.text.starts_with("clocks: the least"))
        );
    }

    #[test]
    fn a_host_reports_its_own_bounds() {
        let (_, sample, _) = KinesisLab::sample();
        let line = clock(&sample).line().unwrap();
        assert!(
            line.starts_with("clock: this host's against the service's arrival stamps: at most "),
            "{line}"
        );
        assert!(
            line.contains(" behind (least send -> arrival)")
                && line.contains(" ahead (least arrival -> receive, "),
            "{line}"
        );
    }
}
