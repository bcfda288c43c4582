//! A delay a client sees only as "there yet or not" (a record readable after its write): each
//! probe makes the event and looks once at a chosen time after it, and the fraction seen by
//! delay gives the delay's distribution at any resolution, within a read budget a faster poll
//! would break (Kinesis's shard limit, a streams shard's readers). The schedule is shared; each
//! lab's probe says how one probe is made ([`StatusProbe`]).

use std::future::Future;

use super::Probe;
use super::fit::{self, Shape};

/// What one look found: whether it saw its own event (None: the probe says nothing: its event
/// failed, its look was refused), and the probes it settled, its own and earlier ones, each as
/// (its index, x: the ms from its event to its look as the service saw them, whether that look
/// saw it). A probe whose x needs its event read back (the record's arrival) and whose look
/// missed it is settled by a later look of the same place, or by [`StatusProbe::settle`].
#[derive(Debug, Default)]
pub struct Look {
    pub seen: Option<bool>,
    pub settled: Vec<(usize, f64, bool)>,
}

/// One probe of a delay seen only as "there yet or not".
pub trait StatusProbe {
    /// Makes the `i`th event and looks `delay` ms after it.
    fn probe(
        &mut self,
        p: &Probe,
        delay: f64,
        i: usize,
    ) -> impl Future<Output = anyhow::Result<Look>> + Send;

    /// Settles the probes still open (reads on until each one's event is read back); those it
    /// cannot say nothing.
    fn settle(
        &mut self,
        _p: &Probe,
    ) -> impl Future<Output = anyhow::Result<Vec<(usize, f64, bool)>>> + Send {
        async { Ok(Vec::new()) }
    }

    /// How far a probe's true x may lie from the x it gives, as equally likely points (a look
    /// placed by a leg's median has the leg's spread about it); empty when x is exact.
    fn blur(&self) -> Vec<f64> {
        Vec::new()
    }
}

/// The probes settled so far, and each one's x less the delay it asked for.
#[derive(Default)]
struct Seen {
    data: Vec<(f64, bool)>,
    base: Vec<f64>,
    asked: Vec<f64>,
}

impl Seen {
    fn keep(&mut self, settled: Vec<(usize, f64, bool)>) {
        for (k, x, seen) in settled {
            self.data.push((x, seen));
            if let Some(d) = self.asked.get(k) {
                self.base.push(x - d);
            }
        }
    }

    /// Asks the `i`th probe for `delay` (indices are given in order, from 0).
    async fn probe<S: StatusProbe>(
        &mut self,
        p: &Probe,
        s: &mut S,
        delay: f64,
        i: usize,
    ) -> anyhow::Result<Option<bool>> {
        debug_assert_eq!(self.asked.len(), i);
        self.asked.push(delay);
        let look = s.probe(p, delay, i).await?;
        self.keep(look.settled);
        Ok(look.seen)
    }
}

/// Delays (ms after the event) of the first probes, twice each, until two in a row are always
/// seen: they learn the span the rest are spread over.
const GRID: [f64; 12] = [
    0.0, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 640.0, 1280.0, 2560.0, 5120.0,
];

/// The delay's shape from `per_pass` probes in each of two passes after the grid: the median
/// from a maximum-likelihood fit of the profile's shifted log-normal (with the probes' blur),
/// the 1st and 99th percentiles from the monotone step (as far as the probes reach); and the
/// probes it rests on.
pub async fn current_status_delay<S: StatusProbe>(
    p: &Probe,
    s: &mut S,
    per_pass: usize,
) -> anyhow::Result<Option<(Shape, usize)>> {
    let mut seen = Seen::default();
    let mut i = 0;
    // The grid: twice each delay, until two delays in a row were always seen.
    let mut seen_in_a_row = 0;
    for d in GRID {
        let mut all = true;
        for _ in 0..2 {
            if let Some(saw) = seen.probe(p, s, d, i).await? {
                all &= saw;
            }
            i += 1;
        }
        seen_in_a_row = if all { seen_in_a_row + 1 } else { 0 };
        if seen_in_a_row == 2 {
            break;
        }
    }
    seen.keep(s.settle(p).await?);
    if seen.data.is_empty() {
        return Ok(None);
    }
    // Where a look lands against the delay it was asked for: x - delay, the same for every
    // probe but for noise. It is negative when the event happens only some time after the
    // probe starts it (a record arrives a put's request leg and commit after the put is sent),
    // so the looks are placed by x, and each asks for the delay that lands it there.
    let lead = fit::quantile(&fit::sorted(seen.base.clone()), 0.5);
    // The span: from the earliest x a look can have after the event (0, or later when the
    // look cannot come sooner) to 1.5 times the least x after which every probe saw it
    // (20 ms at least).
    let floor = lead.max(0.0);
    let mut sorted = seen.data.clone();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let always = sorted
        .iter()
        .rposition(|(_, seen)| !seen)
        .map_or(floor, |k| sorted.get(k + 1).map_or(sorted[k].0, |x| x.0));
    let span = (1.5 * (always - floor)).clamp(20.0, 8000.0);
    // Two passes: the first spread evenly over the span, the second over the half of it centred
    // on the first pass's median, where a probe says most about it.
    let n = per_pass.max(1);
    for pass in 0..2 {
        let (from, width) = if pass == 0 {
            (floor, span)
        } else {
            seen.keep(s.settle(p).await?);
            let m = fit::current_status(seen.data.clone(), &[0.5])[0].unwrap_or(floor + span / 2.0);
            ((m - span / 4.0).max(floor), span / 2.0)
        };
        for k in 0..n {
            // Evenly over the range, in an order that mixes short and long.
            let x = from + width * ((k * 7919) % n) as f64 / n as f64;
            seen.probe(p, s, (x - lead).max(0.0), i).await?;
            i += 1;
        }
    }
    seen.keep(s.settle(p).await?);
    let data = seen.data;
    let qs = fit::current_status(data.clone(), &[0.01, 0.5, 0.99]);
    let median = fit::shifted_lognormal(&data, &s.blur())
        .map(|(_, median, _)| median)
        .or(qs[1]);
    Ok(median.map(|median| {
        (
            Shape::from_quantiles(
                qs[0].unwrap_or(0.0).max(0.0),
                median,
                qs[2].unwrap_or(floor + span),
            ),
            data.len(),
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A delay of floor 15 ms, median 45 and p99 100, each look landing `lead` ms from the delay
    /// asked for (a put's leg and commit before its record arrives make it negative), the x of
    /// every look kept; draws from fixed normals.
    struct Skewed {
        lead: f64,
        z: Vec<f64>,
        looks: Vec<f64>,
    }

    impl StatusProbe for Skewed {
        async fn probe(&mut self, _: &Probe, delay: f64, i: usize) -> anyhow::Result<Look> {
            let delay_drawn = Shape::from_quantiles(15.0, 45.0, 100.0).at(self.z[i]);
            let x = delay + self.lead;
            self.looks.push(x);
            let seen = delay_drawn <= x;
            Ok(Look {
                seen: Some(seen),
                settled: vec![(i, x, seen)],
            })
        }
    }

    /// [`Skewed`], but a look that misses its event learns its x only four probes later (the
    /// next look of its shard, as Kinesis's four shards take turns) or when the schedule settles.
    struct Late {
        skewed: Skewed,
        open: Vec<(usize, f64)>,
    }

    impl StatusProbe for Late {
        async fn probe(&mut self, p: &Probe, delay: f64, i: usize) -> anyhow::Result<Look> {
            let mut look = self.skewed.probe(p, delay, i).await?;
            let (k, x, seen) = look.settled.pop().unwrap();
            let mut settled: Vec<(usize, f64, bool)> = self
                .open
                .iter()
                .filter(|(j, _)| j % 4 == i % 4)
                .map(|&(j, x)| (j, x, false))
                .collect();
            self.open.retain(|(j, _)| j % 4 != i % 4);
            if seen {
                settled.push((k, x, true));
            } else {
                self.open.push((k, x));
            }
            look.settled = settled;
            Ok(look)
        }

        async fn settle(&mut self, _: &Probe) -> anyhow::Result<Vec<(usize, f64, bool)>> {
            Ok(self.open.drain(..).map(|(j, x)| (j, x, false)).collect())
        }
    }

    /// A probe on an address nothing answers: the tests' probes make no call.
    async fn probe_for_tests() -> Probe {
        let clients = crate::aws::Clients::connect(
            &crate::aws::Target::Emulator {
                url: "http://127.0.0.1:9".into(),
            },
            std::time::Instant::now(),
        )
        .await
        .unwrap();
        Probe {
            clients,
            run_id: "test".into(),
            samples: 100,
            embedded: true,
            profile: None,
            cancel: tokio_util::sync::CancellationToken::new(),
            say: std::sync::Arc::new(|_| {}),
        }
    }

    fn skewed(lead: f64) -> Skewed {
        Skewed {
            lead,
            z: fit::normals(400),
            looks: Vec::new(),
        }
    }

    #[tokio::test]
    async fn a_probe_settled_late_counts_as_one_settled_at_once() {
        let p = probe_for_tests().await;
        let at_once = current_status_delay(&p, &mut skewed(-30.0), 100)
            .await
            .unwrap();
        let mut late = Late {
            skewed: skewed(-30.0),
            open: Vec::new(),
        };
        let later = current_status_delay(&p, &mut late, 100).await.unwrap();
        eprintln!("at once {at_once:?}; late {later:?}");
        let ((a, n), (b, m)) = (at_once.unwrap(), later.unwrap());
        // Every probe counted, the same looks made, the same figure found.
        assert_eq!(n, m);
        assert_eq!(a, b);
    }

    #[tokio::test]
    async fn the_second_pass_looks_around_the_median_whatever_the_lead() {
        let p = probe_for_tests().await;
        for lead in [-30.0, 0.0, 5.0] {
            let mut s = skewed(lead);
            let (shape, n) = current_status_delay(&p, &mut s, 100)
                .await
                .unwrap()
                .unwrap();
            // The second pass is the last 100 looks: centred on the median (45 ms), none
            // before the event.
            let second = fit::sorted(s.looks[s.looks.len() - 100..].to_vec());
            let centre = fit::quantile(&second, 0.5);
            eprintln!(
                "lead {lead:+}: {n} probes, second pass centred at {centre:.1} ms, median found {:.2} ms",
                shape.median
            );
            assert!((centre - 45.0).abs() < 8.0, "lead {lead}: centre {centre}");
            assert!(second[0] >= 0.0, "lead {lead}: {second:?}");
            assert!(
                (shape.median / 45.0 - 1.0).abs() < 0.1,
                "lead {lead}: {shape:?}"
            );
        }
    }
}
