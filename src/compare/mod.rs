//! Runs side by side (`latlab compare`) and recordings of one scenario from several machines
//! made one (`latlab merge`). Not the seed comparison of `lab_kit/section/compare.rs`, which puts one run
//! beside the seed's published figures.
//!
//! - `input.rs` reads an input: a recording (figures from its interval logs added together), a
//!   merged recording, or a report JSON file (figures only);
//! - `bootstrap.rs` the runs' own noise, from their per-second intervals;
//! - `render.rs` the text, Markdown and JSON forms;
//! - `merge.rs` recordings merged interval by interval;
//! - `hlog.rs` interval logs read (up to their last whole line) and written.

pub mod bootstrap;
pub mod hlog;
pub mod input;
pub mod merge;
pub mod render;

use std::collections::BTreeSet;

use bootstrap::{Sparse, ratio_intervals, seed_of};
pub use input::{Figures, Input, Kind};

/// The figures compared, in table order.
pub const FIGURES: [&str; 5] = ["count", "p50", "p90", "p99", "max"];

/// Why a figure's noise is not known, when it is not.
pub const NO_INTERVALS: &str = "no per-second intervals: compare recordings";

/// Whether B differs from A by more than the runs' own noise.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The interval of B/A excludes 1.
    Larger,
    /// The interval of B/A holds 1.
    Within,
    /// No interval: the reason.
    Unknown(String),
    /// Not a latency figure (the count), or a figure one side lacks.
    None,
}

impl Verdict {
    pub fn text(&self) -> String {
        match self {
            Verdict::Larger => "larger than noise".into(),
            Verdict::Within => "within noise".into(),
            Verdict::Unknown(why) => format!("noise unknown ({why})"),
            Verdict::None => String::new(),
        }
    }

    pub fn id(&self) -> Option<&'static str> {
        match self {
            Verdict::Larger => Some("larger_than_noise"),
            Verdict::Within => Some("within_noise"),
            Verdict::Unknown(_) => Some("noise_unknown"),
            Verdict::None => None,
        }
    }
}

/// One figure of one series: A's, B's, B/A, its interval and the verdict.
#[derive(Clone, Debug)]
pub struct Figure {
    pub name: &'static str,
    pub a: Option<u64>,
    pub b: Option<u64>,
    pub ratio: Option<f64>,
    pub interval: Option<(f64, f64)>,
    pub verdict: Verdict,
}

/// Which inputs hold a series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Presence {
    Both,
    OnlyA,
    OnlyB,
}

/// One series compared.
#[derive(Clone, Debug)]
pub struct Row {
    pub name: String,
    pub figures: Vec<Figure>,
    pub presence: Presence,
}

impl Row {
    /// The lab a series belongs to, from its name's first part.
    pub fn lab(&self) -> &str {
        self.name.split('.').next().unwrap_or_default()
    }

    /// The series' subject: the consumer, `CLASS OP`, or the method.
    pub fn subject(&self) -> String {
        crate::labs::series::SeriesId::parse(&self.name)
            .map_or_else(|| self.name.clone(), |id| id.subject_label())
    }
}

/// Input `b` against input `a` (indices into the inputs).
#[derive(Clone, Debug)]
pub struct Comparison {
    pub a: usize,
    pub b: usize,
    pub rows: Vec<Row>,
    /// Set when the noise of the whole comparison is unknown (an input without intervals).
    pub unknown: Option<String>,
}

/// Each input after the first against the first, refusing inputs of different scenarios unless
/// `any_scenario`.
pub fn compare(inputs: &[Input], any_scenario: bool) -> anyhow::Result<Vec<Comparison>> {
    let first = &inputs[0];
    for other in &inputs[1..] {
        if other.scenario != first.scenario && !any_scenario {
            anyhow::bail!(
                "{} is a run of scenario '{}' and {} of '{}'; add --any-scenario to compare them anyway",
                first.path.display(),
                first.scenario,
                other.path.display(),
                other.scenario
            );
        }
    }
    Ok((1..inputs.len()).map(|b| pair(inputs, 0, b)).collect())
}

fn pair(inputs: &[Input], ia: usize, ib: usize) -> Comparison {
    let (a, b) = (&inputs[ia], &inputs[ib]);
    let unknown = (!a.has_intervals() || !b.has_intervals()).then(|| NO_INTERVALS.to_string());
    let keys: BTreeSet<&String> = a.series.keys().chain(b.series.keys()).collect();
    let mut rows: Vec<Row> = keys
        .into_iter()
        .map(|key| {
            let (sa, sb) = (a.series.get(key), b.series.get(key));
            let presence = match (sa, sb) {
                (Some(_), Some(_)) => Presence::Both,
                (Some(_), None) => Presence::OnlyA,
                _ => Presence::OnlyB,
            };
            let name = sa.or(sb).map(|s| s.name.clone()).unwrap_or_default();
            let fa = sa.map(|s| s.figures);
            let fb = sb.map(|s| s.figures);
            // The noise of p50, p90, p99 and max, when both runs have enough intervals.
            let noise: Result<[(f64, f64); 4], String> = match (sa, sb) {
                _ if unknown.is_some() => Err(NO_INTERVALS.into()),
                (Some(sa), Some(sb)) => {
                    let (ia, ib) = (sa.intervals.as_deref(), sb.intervals.as_deref());
                    let (ia, ib) = (ia.unwrap_or_default(), ib.unwrap_or_default());
                    let sparse = |i: &[hlog::Interval]| {
                        Sparse::new(&i.iter().map(|i| &i.hist).collect::<Vec<_>>())
                    };
                    ratio_intervals(&sparse(ia), &sparse(ib), seed_of(key)).ok_or_else(|| {
                        format!(
                            "{} and {} per-second intervals; {} each needed",
                            ia.len(),
                            ib.len(),
                            bootstrap::MIN_INTERVALS
                        )
                    })
                }
                _ => Err(String::new()),
            };
            let figures = FIGURES
                .iter()
                .enumerate()
                .map(|(k, &fig)| {
                    let get =
                        |f: Option<Figures>| f.map(|f| [f.count, f.p50, f.p90, f.p99, f.max][k]);
                    let (va, vb) = (get(fa), get(fb));
                    let counted =
                        fa.is_some_and(|f| f.count > 0) && fb.is_some_and(|f| f.count > 0);
                    let ratio = match (va, vb) {
                        (Some(x), Some(y)) if counted && x > 0 => Some(y as f64 / x as f64),
                        _ => None,
                    };
                    let (interval, verdict) = match (&noise, k) {
                        (_, 0) => (None, Verdict::None),
                        _ if ratio.is_none() => (None, Verdict::None),
                        (Ok(iv), k) => {
                            let (lo, hi) = iv[k - 1];
                            let v = if lo > 1.0 || hi < 1.0 {
                                Verdict::Larger
                            } else {
                                Verdict::Within
                            };
                            (Some((lo, hi)), v)
                        }
                        (Err(why), _) => (None, Verdict::Unknown(why.clone())),
                    };
                    Figure {
                        name: fig,
                        a: va,
                        b: vb,
                        ratio,
                        interval,
                        verdict,
                    }
                })
                .collect();
            Row {
                name,
                figures,
                presence,
            }
        })
        .collect();
    rows.sort_by_key(|r| lab_order(r.lab()));
    Comparison {
        a: ia,
        b: ib,
        rows,
        unknown,
    }
}

/// Labs in screen order (the registry's); anything else after them.
pub fn lab_order(lab: &str) -> usize {
    crate::labs::LabKind::ALL
        .iter()
        .position(|l| l.key() == lab)
        .unwrap_or(crate::labs::LabKind::ALL.len())
}

/// The label of the input at `i`: A, B, C, ...
pub fn label(i: usize) -> String {
    if i < 26 {
        char::from(b'A' + i as u8).to_string()
    } else {
        format!("#{}", i + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::Histogram;

    /// A recording-like input: per series, `n` one-second intervals of `per` values near `us`.
    fn input(series: &[(&str, usize, u64)]) -> Input {
        let mut map = std::collections::BTreeMap::new();
        for &(name, n, us) in series {
            let intervals: Vec<hlog::Interval> = (0..n)
                .map(|s| {
                    let mut hist = Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap();
                    for k in 0..20 {
                        hist.record(us + (k * 37 + s as u64 * 11) % (us / 4).max(1))
                            .unwrap();
                    }
                    hlog::Interval {
                        start_ms: 1_700_000_000_000 + 1000 * s as i64,
                        hist,
                    }
                })
                .collect();
            let mut sum = intervals[0].hist.clone();
            for i in &intervals[1..] {
                sum.add(&i.hist).unwrap();
            }
            map.insert(
                crate::record::slug(name),
                input::Series {
                    name: name.into(),
                    figures: Figures::of(&sum),
                    intervals: Some(intervals),
                },
            );
        }
        Input {
            path: "rec".into(),
            kind: Kind::Recording,
            scenario: "s3-redis".into(),
            backend: "test".into(),
            started: None,
            ran: None,
            faults: vec![],
            series: map,
            notes: vec![],
            scenario_text: None,
        }
    }

    #[test]
    fn s3_and_redis_series_are_named_ordered_and_judged() {
        let a = input(&[
            ("redis.offset.lag", 10, 2_000),
            ("s3.EXPRESS_ONEZONE.PUT.total", 10, 5_000),
            ("s3.STANDARD.GET.total", 3, 20_000),
        ]);
        let b = input(&[
            ("redis.offset.lag", 10, 2_000),
            ("s3.EXPRESS_ONEZONE.PUT.total", 10, 50_000),
            ("s3.STANDARD.GET.total", 10, 20_000),
            ("s3.STANDARD.PUT.total", 10, 20_000),
        ]);
        let c = compare(&[a, b], false).unwrap().remove(0);
        let subjects: Vec<(String, String)> = c
            .rows
            .iter()
            .map(|r| (r.lab().to_string(), r.subject()))
            .collect();
        assert_eq!(
            subjects,
            [
                ("s3".into(), "EXPRESS_ONEZONE PUT".into()),
                ("s3".into(), "STANDARD GET".into()),
                ("s3".into(), "STANDARD PUT".into()),
                ("redis".into(), "offset".into()),
            ]
        );
        let p50 = |row: usize| &c.rows[row].figures[1];
        assert_eq!(p50(0).verdict, Verdict::Larger);
        assert!(p50(0).ratio.unwrap() > 5.0);
        assert_eq!(
            p50(1).verdict,
            Verdict::Unknown("3 and 10 per-second intervals; 5 each needed".into())
        );
        assert_eq!(c.rows[2].presence, Presence::OnlyB);
        assert_eq!(p50(2).verdict, Verdict::None);
        assert_eq!(p50(3).verdict, Verdict::Within);
        assert_eq!(p50(3).ratio, Some(1.0));
        // The count is a figure, never judged against the noise.
        assert!(c.rows.iter().all(|r| r.figures[0].verdict == Verdict::None));
    }

    /// Every lab's series are titled by its lab (`Facts::compared`) and come in the registry's
    /// order: SQS's after Redis's, under its own title, not "Other series".
    #[test]
    fn sqs_series_are_titled_by_their_lab() {
        let series = [
            ("sqs.long-poll.send_to_receive", 10, 20_000),
            ("redis.offset.lag", 10, 2_000),
        ];
        let (a, b) = (input(&series), input(&series));
        let c = compare(&[a.clone(), b.clone()], false).unwrap();
        let labs: Vec<&str> = c[0].rows.iter().map(|r| r.lab()).collect();
        assert_eq!(labs, ["redis", "sqs"]);
        let text = render::document(&[a, b], &c, false);
        assert!(text.contains("SQS: send -> receive"), "{text}");
        assert!(!text.contains("Other series"), "{text}");
    }
}
