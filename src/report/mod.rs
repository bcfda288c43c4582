//! Reports of a finished run: text for terminals, Markdown for write-ups, JSON (schema in
//! `schemas/run-report.schema.json`) and CSV for scripts. All four render the same [`Report`].
//! For a seed scenario the seed's own figures stand beside ours, each compared cell labelled
//! `calibrated` (the model was fitted to it), `predicted` or `measured` (see [`compare`]).

pub mod cost;
pub mod json;
#[cfg(test)]
mod seed_cell_tests;
pub mod soak;

pub use crate::lab_kit::section::{compare, table};

use serde::{Deserialize, Serialize};

use crate::lab_kit::section::{CsvRows, section_heading};
use crate::scenario::{Scenario, Seed};
use crate::snapshot::Snapshot;
use compare::{Cell, Tally};
use latlab_core::provenance::Label;
use latlab_core::units::thousands;
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
    pub prices: Option<std::sync::Arc<crate::lab_kit::cost::Prices>>,
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
            .map(|seed| cells(&snapshot, seed))
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
    pub fn with_prices(
        mut self,
        prices: Option<std::sync::Arc<crate::lab_kit::cost::Prices>>,
    ) -> Report {
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

    /// The compared cell with this id.
    pub fn cell(&self, id: &str) -> Option<&Cell> {
        self.cells.iter().find(|c| c.id == id)
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
        let d = |secs: f64| latlab_core::units::format_secs(secs);
        let producing = s.labs().iter().any(|l| l.measures_from_start());
        let ran = if producing {
            format!(
                "{} of records produced ({} with set-up and drain)",
                d(s.producing_secs),
                d(s.elapsed_secs)
            )
        } else {
            d(s.elapsed_secs)
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
        facts.extend(self.lab_facts());
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
                    "{}, {derived} derived from seed figures: {detail}",
                    latlab_core::units::plural(model.len() as u64, "parameter", "parameters"),
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
        self.write_labs(&mut out, md);
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
                latlab_core::units::clock(e.at_secs),
                e.kind.name().into(),
                e.target.clone(),
                match (&e.failed, e.recovered_secs) {
                    (Some(why), _) => format!("not injected: {why}"),
                    (None, Some(s)) => latlab_core::units::ms_f(s * 1000.0),
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
        self.csv_labs(&mut csv);
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
                value.map_or(String::new(), num)
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
fn process_line(p: &crate::snapshot::process::ProcessSnapshot) -> Option<String> {
    let mb = |b: Option<u64>| b.map_or("?".into(), |b| format!("{:.1} MB", b as f64 / 1e6));
    let n = |v: Option<u64>| v.map_or("?".into(), thousands);
    p.last.rss_bytes?;
    let mut points = vec![("start", p.start)];
    points.extend(p.at_10_min.map(|s| ("10 min", s)));
    points.push(("end", p.last));
    let list = |f: &dyn Fn(&crate::snapshot::process::ProcessSample) -> String| {
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

/// What a lab's section may know of the run.
fn run_of(snapshot: &Snapshot) -> crate::lab_kit::section::Run<'_> {
    crate::lab_kit::section::Run {
        complete: snapshot.complete,
        elapsed_secs: snapshot.elapsed_secs,
        model: &snapshot.backend.model,
        embedded: snapshot.backend.kind == "emulator",
    }
}

macro_rules! sections {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        impl Report {
            /// Each lab's sections of the text or Markdown document, in screen order
            /// (`Reported::write`).
            fn write_labs(&self, out: &mut String, md: bool) {
                $(if let Some(s) = self.snapshot.$module.as_ref() {
                    let cx = crate::lab_kit::section::Cx {
                        run: run_of(&self.snapshot),
                        seed: self.seed.as_ref().and_then(|seed| seed.$module.as_ref()),
                        cells: &self.cells,
                    };
                    <crate::labs::$module::$ty as crate::labs::Reported>::write(s, &cx, out, md);
                })*
            }

            /// Each lab's lines of the opening facts (`Lab::facts`).
            fn lab_facts(&self) -> Vec<(&'static str, String)> {
                let mut out = Vec::new();
                $(if let Some(s) = self.snapshot.$module.as_ref() {
                    let seed = self.seed.as_ref().and_then(|seed| seed.$module.as_ref());
                    out.extend(<crate::labs::$module::$ty as crate::labs::Reported>::facts(s, seed));
                })*
                out
            }

            /// Each lab's rows of the CSV (`Reported::csv`).
            fn csv_labs(&self, rows: &mut CsvRows) {
                $(if let Some(s) = self.snapshot.$module.as_ref() {
                    <crate::labs::$module::$ty as crate::labs::Reported>::csv(s, rows);
                })*
            }
        }

        /// Every cell id a seed can be compared on, whatever a run measured (`Reported::seed_ids`).
        pub fn seed_cell_ids(seed: &Seed) -> Vec<String> {
            let mut ids = Vec::new();
            $(if let Some(s) = &seed.$module {
                <crate::labs::$module::$ty as crate::labs::Reported>::seed_ids(s, &mut ids);
            })*
            ids
        }

        /// Every compared cell of a run: each lab's figures beside the seed's (`Reported::compare`).
        pub fn cells(snapshot: &Snapshot, seed: &Seed) -> Vec<Cell> {
            let model =
                (snapshot.backend.kind == "emulator").then_some(snapshot.backend.model.as_slice());
            let mut cmp = compare::Comparer::new(model);
            let run = run_of(snapshot);
            $(if let (Some(s), Some(seed)) = (snapshot.$module.as_ref(), seed.$module.as_ref()) {
                <crate::labs::$module::$ty as crate::labs::Reported>::compare(s, seed, &run, &mut cmp);
            })*
            cmp.cells
        }
    };
}
crate::labs::for_each_lab!(sections);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_run_says_it_ran_until_quit_never_that_it_stopped_early() {
        let scenario = Scenario::resolve("demo").unwrap();
        let mut snap = crate::tui::fixture::lab_moment(crate::labs::LabKind::ALL[0]).snapshot;
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
