//! Reports of a finished run: text for terminals, Markdown for write-ups, JSON (schema in
//! `schemas/run-report.schema.json`) and CSV for scripts. All four render the same [`Report`].
//! For a seed scenario the seed's own figures stand beside ours, each compared cell labelled
//! `calibrated` (the model was fitted to it), `predicted` or `measured` (see [`compare`]).

pub mod compare;
pub mod cost;
pub mod json;
mod kinesis;
mod redis;
mod s3;
pub mod soak;
pub mod table;

use serde::{Deserialize, Serialize};

use crate::labs::kinesis::config::ConsumerKind;
use crate::labs::kinesis::snapshot::ConsumerSnapshot;
use crate::metrics::Summary;
use crate::provenance::Label;
use crate::run::snapshot::Snapshot;
use crate::scenario::{Scenario, Seed};
use crate::units::{ms, ms_f, thousands};
use compare::{Cell, Tally};
use table::Table;

pub const SCHEMA: &str = "latlab-run-report/2";

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Json,
    Csv,
}

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// A headless run that ran its whole duration (or its whole experiment).
    Completed,
    /// A headless run stopped by Ctrl-C before its end.
    StoppedEarly,
    /// A live run in the TUI: it runs until quit, with no set length.
    Quit,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioInfo {
    pub name: String,
    pub description: String,
    pub origin: String,
    /// The length asked for (a headless run); None for a live run, which lasts until quit.
    pub requested_duration_secs: Option<f64>,
}

/// A finished run's report. Its JSON form is [`json::RunReport`], written out field by field, so
/// the public schema never follows the internal snapshot by accident.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub schema: String,
    pub latlab_version: String,
    pub scenario: ScenarioInfo,
    pub ending: Ending,
    pub snapshot: Snapshot,
    pub seed: Option<Seed>,
    /// Every figure compared with the seed's, labelled.
    pub cells: Vec<Cell>,
    pub tally: Tally,
    /// Resources latlab could not clean up, and other things a reader must know.
    pub problems: Vec<String>,
    /// The prices its cost section uses (`--prices`); None: the built-in file of the run's
    /// region. The cost is figured from the snapshot when the report is written.
    pub prices: Option<std::sync::Arc<crate::cost::Prices>>,
}

fn msf(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// `x1.03`, or `-`.
fn ratio_text(r: f64) -> String {
    if r.is_finite() {
        format!("x{r:.2}")
    } else {
        "-".into()
    }
}

impl Report {
    pub fn new(
        scenario: &Scenario,
        snapshot: Snapshot,
        ending: Ending,
        problems: Vec<String>,
    ) -> Report {
        let info = ScenarioInfo {
            name: scenario.name.clone(),
            description: scenario.description.clone(),
            origin: scenario.origin.clone(),
            requested_duration_secs: (ending != Ending::Quit)
                .then_some(scenario.duration.as_secs_f64()),
        };
        Report::from_parts(info, scenario.seed.clone(), snapshot, ending, problems)
    }

    /// A report from its parts: the seed's cells are compared from the snapshot (a replayed
    /// recording makes its reports this way).
    pub fn from_parts(
        scenario: ScenarioInfo,
        seed: Option<Seed>,
        snapshot: Snapshot,
        ending: Ending,
        problems: Vec<String>,
    ) -> Report {
        let cells = seed
            .as_ref()
            .map(|seed| compare::cells(&snapshot, seed))
            .unwrap_or_default();
        Report {
            schema: SCHEMA.into(),
            latlab_version: env!("CARGO_PKG_VERSION").into(),
            scenario,
            ending,
            tally: Tally::of(&cells),
            cells,
            snapshot,
            seed,
            problems,
            prices: None,
        }
    }

    /// The same report, priced with `prices` (`--prices FILE`) rather than its region's file.
    pub fn with_prices(mut self, prices: Option<std::sync::Arc<crate::cost::Prices>>) -> Report {
        if prices.is_some() {
            self.prices = prices;
        }
        self
    }

    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => self.document(false),
            Format::Markdown => self.document(true),
            Format::Json => {
                serde_json::to_string_pretty(&json::RunReport::from(self))
                    .expect("a report serializes")
                    + "\n"
            }
            Format::Csv => self.csv(),
        }
    }

    /// Each lab's part, in screen order.
    fn sections(&self) -> Vec<&dyn Section> {
        sections(&self.snapshot)
    }

    /// The compared cell with this id.
    pub fn cell(&self, id: &str) -> Option<&Cell> {
        self.cells.iter().find(|c| c.id == id)
    }

    /// The seed rows of a compared figure: the seed's value, ours over it, and the cell's label.
    fn seed_rows(&self, ids: &[Option<String>]) -> Option<[Vec<String>; 3]> {
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

    fn document(&self, md: bool) -> String {
        let mut out = String::new();
        let s = &self.snapshot;
        let heading = section_heading(md);
        if md {
            out.push_str(&format!(
                "## latlab: {}\n\n{}\n\n",
                self.scenario.name, self.scenario.description
            ));
        } else {
            out.push_str(&format!(
                "latlab: {} - {}\n",
                self.scenario.name, self.scenario.description
            ));
        }
        let d = |secs: f64| {
            crate::units::format_duration(std::time::Duration::from_secs_f64(secs.round()))
        };
        let ran = match &s.kinesis {
            Some(_) => format!(
                "{} of records produced ({} with set-up and drain)",
                d(s.producing_secs),
                d(s.elapsed_secs)
            ),
            None => d(s.elapsed_secs),
        };
        let ran = match (self.ending, self.scenario.requested_duration_secs) {
            (Ending::StoppedEarly, Some(asked)) => {
                format!("{ran} (stopped early; {} requested)", d(asked))
            }
            (Ending::Quit, _) => format!("{ran} (live, until quit)"),
            _ => ran,
        };
        let mut facts = vec![
            (
                "backend",
                match s.backend.kind.as_str() {
                    "emulator" => format!(
                        "{} (modelled latency, real SDK clients over HTTP)",
                        s.backend.label
                    ),
                    "fixture" => s.backend.label.clone(),
                    _ => format!("{} (measured)", s.backend.label),
                },
            ),
            ("ran", ran),
        ];
        if let Some(k) = &s.kinesis {
            let p = &k.producer;
            facts.push((
                "stream",
                format!(
                    "{}, {}; producer asked {} records/s, achieved {:.1}/s ({}), {} payloads",
                    k.stream,
                    k.shards_text(),
                    rate_text(p.asked_rate),
                    p.achieved_rate,
                    p.mode,
                    crate::units::format_bytes(p.payload_bytes)
                ),
            ));
            facts.push(("SDK", k.retry.clone()));
        }
        if let Some(seed) = self.seed.as_ref().and_then(|s| s.kinesis.as_ref()) {
            facts.push(("seed", seed.source.clone()));
        }
        let model = &s.backend.model;
        if !model.is_empty() {
            let derived = model
                .iter()
                .filter(|p| !p.provenance.seed_cells.is_empty())
                .count();
            let detail = match &s.backend.latency_profile {
                Some(p) => format!("`latlab profile show {p}` lists each with its source"),
                None => model
                    .iter()
                    .map(|p| format!("{} {} ({})", p.name, p.value, p.provenance.source.name()))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            facts.push((
                "model",
                format!(
                    "{} parameters, {derived} derived from seed figures: {detail}",
                    model.len(),
                ),
            ));
        }
        if !self.cells.is_empty() {
            facts.push(("compared", self.tally.line()));
        }
        if let Some(line) = process_line(&s.process) {
            facts.push(("process", line));
        }
        for (k, v) in facts {
            if md {
                out.push_str(&format!("- **{k}**: {v}\n"));
            } else {
                out.push_str(&format!("{k:<8} {v}\n"));
            }
        }
        for section in self.sections() {
            section.write(self, &mut out, md);
        }
        self.write_faults(&mut out, md);
        cost::write(self, &mut out, md);
        let calibrated: Vec<&Cell> = self
            .cells
            .iter()
            .filter(|c| c.label == Label::Calibrated)
            .collect();
        if !calibrated.is_empty() {
            heading(&mut out, "Calibrated cells: what the model was fitted to");
            let mut t = Table::new(&["cell", "derived into"]);
            for c in calibrated {
                t.row(vec![c.id.clone(), c.calibrated_by.join(", ")]);
            }
            out.push_str(&if md { t.markdown() } else { t.text() });
        }
        if !self.problems.is_empty() {
            heading(&mut out, "Problems");
            for p in &self.problems {
                out.push_str(&format!("- {p}\n"));
            }
        }
        out
    }

    /// The faults set, counts per kind, and the timeline of the newest ones.
    fn write_faults(&self, out: &mut String, md: bool) {
        let f = &self.snapshot.faults;
        if f.set.is_empty() && f.counts.is_empty() {
            return;
        }
        let heading = section_heading(md);
        heading(
            out,
            &format!(
                "Faults: {} injected, {} recovered",
                thousands(f.fired()),
                thousands(f.recovered())
            ),
        );
        for set in &f.set {
            out.push_str(&format!("- set: {set}\n"));
        }
        if !f.counts.is_empty() {
            let mut t = Table::new(&["fault", "injected", "recovered", "not injected"]);
            for (kind, c) in &f.counts {
                t.row(vec![
                    kind.name().into(),
                    thousands(c.fired),
                    thousands(c.recovered),
                    thousands(c.failed),
                ]);
            }
            out.push_str(&if md { t.markdown() } else { t.text() });
        }
        if f.events.is_empty() {
            return;
        }
        let shown = f.events.len().min(TIMELINE_ROWS);
        heading(
            out,
            &if shown < f.events.len() {
                format!("Fault timeline (the last {shown} of {})", f.events.len())
            } else {
                "Fault timeline".to_string()
            },
        );
        let mut t = Table::new(&["at", "fault", "hit", "recovered after"]).labels(3);
        for e in &f.events[f.events.len() - shown..] {
            t.row(vec![
                crate::units::clock(e.at_secs),
                e.kind.name().into(),
                e.target.clone(),
                match (&e.failed, e.recovered_secs) {
                    (Some(why), _) => format!("not injected: {why}"),
                    (None, Some(s)) => crate::units::ms_f(s * 1000.0),
                    (None, None) => "not yet".into(),
                },
            ]);
        }
        out.push_str(&if md { t.markdown() } else { t.text() });
    }

    /// Long form, one figure a row, for every lab: `lab,subject,metric,value`, then one row per
    /// compared cell (lab `compared`, the cell's id as subject) with the seed's figure (a range
    /// has `seed_high`) and the cell's label. Spreadsheets and data frames pivot it as they need.
    fn csv(&self) -> String {
        let mut csv = CsvRows::default();
        for section in self.sections() {
            section.csv(&mut csv);
        }
        for (kind, c) in &self.snapshot.faults.counts {
            for (metric, v) in [
                ("injected", c.fired),
                ("recovered", c.recovered),
                ("not_injected", c.failed),
            ] {
                csv.add("faults", kind.name(), metric, v as f64);
            }
        }
        let field = |s: &str| {
            if s.contains([',', '"', '\n']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        let num = |v: f64| {
            if v.fract() == 0.0 && v.abs() < 1e15 {
                format!("{v:.0}")
            } else {
                format!("{v:.3}")
            }
        };
        let head = format!(
            "{},{}",
            field(&self.scenario.name),
            field(&self.snapshot.backend.label)
        );
        let mut out =
            String::from("scenario,backend,lab,subject,metric,value,seed,seed_high,cell\n");
        for (lab, subject, metric, value) in csv.rows {
            out.push_str(&format!(
                "{head},{lab},{},{metric},{},,,\n",
                field(&subject),
                num(value)
            ));
        }
        for c in &self.cells {
            out.push_str(&format!(
                "{head},compared,{},ours,{},{},{},{}\n",
                field(&c.id),
                num(c.ours),
                num(c.seed_low),
                if c.is_range() {
                    num(c.seed_high)
                } else {
                    String::new()
                },
                c.label.name()
            ));
        }
        out
    }
}

/// latlab's own process: resident memory, descriptors and tasks at the start, at ten minutes
/// (when the run got there) and at the end.
fn process_line(p: &crate::run::process::ProcessSnapshot) -> Option<String> {
    let mb = |b: Option<u64>| b.map_or("?".into(), |b| format!("{:.1} MB", b as f64 / 1e6));
    let n = |v: Option<u64>| v.map_or("?".into(), thousands);
    p.last.rss_bytes?;
    let mut points = vec![("start", p.start)];
    points.extend(p.at_10_min.map(|s| ("10 min", s)));
    points.push(("end", p.last));
    let list = |f: &dyn Fn(&crate::run::process::ProcessSample) -> String| {
        points
            .iter()
            .map(|(at, s)| format!("{} {at}", f(s)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut line = format!(
        "RSS {} (peak {}); open fds {}; tokio tasks {}",
        list(&|s| mb(s.rss_bytes)),
        mb(p.peak_rss_bytes),
        list(&|s| n(s.open_fds)),
        list(&|s| thousands(s.tasks)),
    );
    if let Some(g) = p.rss_growth_after_10_min() {
        line.push_str(&format!("; RSS growth after 10 min {g:+.1}%"));
    }
    Some(line)
}

/// Fault timeline rows a text or Markdown report shows (the JSON has every one kept).
const TIMELINE_ROWS: usize = 50;

/// A lab's part of a report: its sections of the text and Markdown documents, and its rows of
/// the CSV, and its cells compared with the seed ([`compare`] labels them).
pub trait Section {
    /// Its figures beside the seed's, each cell labelled.
    fn compare(&self, snapshot: &Snapshot, seed: &Seed, cmp: &mut compare::Comparer);
    fn write(&self, report: &Report, out: &mut String, md: bool);
    fn csv(&self, rows: &mut CsvRows);
}

macro_rules! sections {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        /// Each lab's part of a run, in screen order (from the registry: a lab's snapshot type
        /// implements `Section`).
        fn sections(s: &Snapshot) -> Vec<&dyn Section> {
            let mut out: Vec<&dyn Section> = Vec::new();
            $(if let Some(x) = s.$module.as_ref() {
                out.push(x);
            })*
            out
        }
    };
}
crate::labs::for_each_lab!(sections);

/// The CSV's long-form rows: lab, subject, metric, value.
#[derive(Default)]
pub struct CsvRows {
    rows: Vec<(String, String, String, f64)>,
}

impl CsvRows {
    pub fn add(&mut self, lab: &str, subject: &str, metric: &str, value: f64) {
        self.rows
            .push((lab.into(), subject.into(), metric.into(), value));
    }

    /// A latency summary as rows: `SERIES_count`, `SERIES_p50_ms` ... `SERIES_mean_ms`.
    pub fn summary(&mut self, lab: &str, subject: &str, series: &str, s: &Summary) {
        self.add(lab, subject, &format!("{series}_count"), s.count as f64);
        for (stat, us) in [
            ("p50", s.p50_us),
            ("p90", s.p90_us),
            ("p99", s.p99_us),
            ("p999", s.p999_us),
            ("max", s.max_us),
        ] {
            self.add(lab, subject, &format!("{series}_{stat}_ms"), msf(us));
        }
        self.add(
            lab,
            subject,
            &format!("{series}_mean_ms"),
            s.mean_us / 1000.0,
        );
    }
}

/// `5`, `0.5`, `8,000`: a rate as asked.
fn rate_text(r: f64) -> String {
    if r.fract() == 0.0 && r >= 0.0 {
        thousands(r as u64)
    } else {
        format!("{r}")
    }
}

/// A section heading in text or Markdown.
fn section_heading(md: bool) -> impl Fn(&mut String, &str) {
    move |out: &mut String, text: &str| {
        if md {
            out.push_str(&format!("\n### {text}\n\n"));
        } else {
            out.push_str(&format!("\n{text}\n"));
        }
    }
}

pub use crate::labs::kinesis::snapshot::batch_line;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_run_says_it_ran_until_quit_never_that_it_stopped_early() {
        let scenario = Scenario::resolve("demo").unwrap();
        let mut snap = crate::tui::fixture::lab_view(crate::labs::LabKind::ALL[0]).snapshot;
        snap.elapsed_secs = 231.0;
        snap.producing_secs = 229.0;
        let live = Report::new(&scenario, snap.clone(), Ending::Quit, vec![]).render(Format::Text);
        assert!(live.contains("(live, until quit)"), "{live}");
        assert!(
            !live.contains("stopped early") && !live.contains("requested"),
            "{live}"
        );
        let stopped =
            Report::new(&scenario, snap, Ending::StoppedEarly, vec![]).render(Format::Text);
        assert!(
            stopped.contains("(stopped early; 2m requested)"),
            "{stopped}"
        );
    }
}
