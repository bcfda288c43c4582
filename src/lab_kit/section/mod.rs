//! What a lab's part of a report is written with, below the labs so that each lab writes its
//! own (`labs/X/report.rs`, through `Reported::write`, `Reported::compare`, `Reported::csv` and
//! `Reported::seed_ids`): text and Markdown tables (`table.rs`), its figures beside the seed's with
//! each cell labelled `calibrated`, `predicted` or `measured` (`compare.rs`), the CSV's rows, and
//! what a section may know of the run ([`Run`], [`Cx`]). `crate::report` puts the labs' parts
//! together into a report.

pub mod compare;
pub mod table;

use crate::metrics::Summary;
use compare::Cell;
use latlab_core::provenance::Param;
use latlab_core::units::{ms_f, thousands};

/// What a lab's section may know of the run besides its own snapshot.
#[derive(Clone, Copy, Debug)]
pub struct Run<'a> {
    /// Taken after the run ended and the consumers drained: lost counts are final.
    pub complete: bool,
    pub elapsed_secs: f64,
    /// The model in effect (the backend's), every parameter with its source.
    pub model: &'a [Param],
    /// It measured the embedded emulator, whose clock is the host's own.
    pub embedded: bool,
}

/// What a lab's section is written from besides its snapshot: the run, the seed's figures for
/// the lab (`S`: its `Lab::Seed`) and every compared cell.
pub struct Cx<'a, S> {
    pub run: Run<'a>,
    pub seed: Option<&'a S>,
    pub cells: &'a [Cell],
}

impl<S> Cx<'_, S> {
    /// The compared cell `id`, if the run compared it.
    pub fn cell(&self, id: &str) -> Option<&Cell> {
        self.cells.iter().find(|c| c.id == id)
    }

    /// The seed rows of a compared figure: the seed's value, ours over it, and the cell's label.
    pub fn seed_rows(&self, ids: &[Option<String>]) -> Option<[Vec<String>; 3]> {
        let cells: Vec<Option<&Cell>> = ids
            .iter()
            .map(|id| id.as_deref().and_then(|id| self.cell(id)))
            .collect();
        if cells.iter().all(Option::is_none) {
            return None;
        }
        let each = |f: &dyn Fn(&Cell) -> String| -> Vec<String> {
            cells.iter().map(|c| c.map(f).unwrap_or_default()).collect()
        };
        Some([
            each(&|c| ms_f(c.seed_low)),
            each(&|c| ratio_text(c.ratio)),
            each(&|c| c.label.name().to_string()),
        ])
    }
}

/// Microseconds as fractional milliseconds.
pub fn msf(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// `x1.03`, or `-`.
pub fn ratio_text(r: f64) -> String {
    if r.is_finite() {
        format!("x{r:.2}")
    } else {
        "-".into()
    }
}

/// `5`, `0.5`, `8,000`: a rate as asked.
pub fn rate_text(r: f64) -> String {
    if r.fract() == 0.0 && r >= 0.0 {
        thousands(r as u64)
    } else {
        format!("{r}")
    }
}

/// A section heading in text or Markdown.
pub fn section_heading(md: bool) -> impl Fn(&mut String, &str) {
    move |out: &mut String, text: &str| {
        if md {
            out.push_str(&format!("\n### {text}\n\n"));
        } else {
            out.push_str(&format!("\n{text}\n"));
        }
    }
}

/// The CSV's long-form rows: lab, subject, metric, value (None: no value, an empty field).
#[derive(Default)]
pub struct CsvRows {
    pub rows: Vec<(String, String, String, Option<f64>)>,
}

impl CsvRows {
    pub fn add(&mut self, lab: &str, subject: &str, metric: &str, value: f64) {
        self.rows
            .push((lab.into(), subject.into(), metric.into(), Some(value)));
    }

    /// A latency summary as rows: `SERIES_count`, `SERIES_p50_ms` ... `SERIES_mean_ms`; a
    /// series with no samples has its count (0) and empty latencies, never a latency of zero.
    pub fn summary(&mut self, lab: &str, subject: &str, series: &str, s: &Summary) {
        self.add(lab, subject, &format!("{series}_count"), s.count as f64);
        for (stat, value) in [
            ("p50", msf(s.p50_us)),
            ("p90", msf(s.p90_us)),
            ("p99", msf(s.p99_us)),
            ("p999", msf(s.p999_us)),
            ("max", msf(s.max_us)),
            ("mean", s.mean_us / 1000.0),
        ] {
            self.rows.push((
                lab.into(),
                subject.into(),
                format!("{series}_{stat}_ms"),
                (s.count > 0).then_some(value),
            ));
        }
    }
}
