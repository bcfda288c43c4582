//! One input of `latlab compare` or `latlab merge`: a recording (its interval logs, and its
//! report when the run ended), a merged recording, or a report JSON file; with every series'
//! figures and what a reader must know of it (a log cut short, a run that did not end).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use hdrhistogram::Histogram;

use super::hlog::{self, Interval};
use crate::record::{SCHEMA, read_report, slug};
use crate::report::Report;

/// What an input is.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A directory made with `--record`.
    Recording,
    /// A directory made by `latlab merge` from this many recordings.
    Merged(usize),
    /// A report JSON file: figures, no per-second intervals.
    Report,
}

impl Kind {
    pub fn name(&self) -> String {
        match self {
            Kind::Recording => "recording".into(),
            Kind::Merged(n) => format!("merge of {n} recordings"),
            Kind::Report => "report".into(),
        }
    }
}

/// A series' figures, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Figures {
    pub count: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
}

impl Figures {
    pub fn of(h: &Histogram<u64>) -> Figures {
        if h.is_empty() {
            return Figures::default();
        }
        Figures {
            count: h.len(),
            p50: h.value_at_quantile(0.5),
            p90: h.value_at_quantile(0.9),
            p99: h.value_at_quantile(0.99),
            max: h.max(),
        }
    }

    fn from_summary(s: &crate::metrics::Summary) -> Figures {
        Figures {
            count: s.count,
            p50: s.p50_us,
            p90: s.p90_us,
            p99: s.p99_us,
            max: s.max_us,
        }
    }
}

/// One series of an input.
#[derive(Clone, Debug)]
pub struct Series {
    /// `kinesis.Lambda EFO.arrival_to_receive`, `s3.STANDARD.PUT.total`, `redis.offset.lag`.
    pub name: String,
    pub figures: Figures,
    /// Its per-second intervals, oldest first (None for a report file).
    pub intervals: Option<Vec<Interval>>,
}

/// An input read whole: any error names the file and what is wrong.
#[derive(Clone, Debug)]
pub struct Input {
    pub path: PathBuf,
    pub kind: Kind,
    pub scenario: String,
    pub backend: String,
    /// When the run started (RFC 3339); a report file does not say.
    pub started: Option<String>,
    /// How long it ran, and where that figure comes from.
    pub ran: Option<(f64, &'static str)>,
    pub faults: Vec<String>,
    /// By the slug of the series' name (its log's file stem).
    pub series: BTreeMap<String, Series>,
    /// What a reader must know: logs cut short, a run that did not end, counts that differ.
    pub notes: Vec<String>,
    /// The scenario's text (a recording's `scenario.toml`).
    pub scenario_text: Option<String>,
}

impl Input {
    pub fn read(path: &Path) -> anyhow::Result<Input> {
        if path.is_dir() {
            read_recording(path)
        } else if path.exists() {
            read_report_file(path)
        } else {
            anyhow::bail!(
                "{}: no such file or directory; name a recording (a directory made with --record) or a report written with --format json",
                path.display()
            )
        }
    }

    pub fn has_intervals(&self) -> bool {
        self.kind != Kind::Report
    }
}

/// The series a report's figures describe, named as a recording names its logs.
pub fn report_series(r: &Report) -> Vec<(String, Figures)> {
    r.snapshot
        .summaries()
        .into_iter()
        .map(|(id, s)| (id.name(), Figures::from_summary(s)))
        .collect()
}

fn read_report_file(path: &Path) -> anyhow::Result<Input> {
    let r = read_report(path)?;
    let series = report_series(&r)
        .into_iter()
        .map(|(name, figures)| {
            (
                slug(&name),
                Series {
                    name,
                    figures,
                    intervals: None,
                },
            )
        })
        .collect();
    Ok(Input {
        path: path.to_path_buf(),
        kind: Kind::Report,
        scenario: r.scenario.name.clone(),
        backend: r.snapshot.backend.label.clone(),
        started: None,
        ran: Some((r.snapshot.elapsed_secs, "its report")),
        faults: r.snapshot.faults.set.clone(),
        series,
        notes: Vec::new(),
        scenario_text: None,
    })
}

/// `recording.json` read and checked: JSON, of this latlab's schema, with the fields it needs.
pub fn read_info(dir: &Path) -> anyhow::Result<serde_json::Value> {
    let file = dir.join("recording.json");
    if !file.exists() {
        anyhow::bail!(
            "{}: not a recording (no recording.json); name a directory made with --record, a merge made by latlab merge, or a report written with --format json",
            dir.display()
        );
    }
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {}", file.display()))?;
    let info: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{} is not whole JSON ({e}): it may have been cut short",
            file.display()
        )
    })?;
    let schema = info["schema"].as_str().unwrap_or_default();
    if schema != SCHEMA {
        anyhow::bail!(
            "{}: its schema is '{schema}'; this latlab reads {SCHEMA}",
            file.display()
        );
    }
    for field in ["scenario", "backend", "started"] {
        if !info[field].is_string() {
            anyhow::bail!(
                "{}: '{field}' is missing or not text; a recording names its scenario, backend and start",
                file.display()
            );
        }
    }
    Ok(info)
}

fn read_recording(dir: &Path) -> anyhow::Result<Input> {
    let info = read_info(dir)?;
    let text = |f: &str| info[f].as_str().unwrap_or_default().to_string();
    let merged = info["merged_from"].as_array().map(Vec::len);
    let (logs, mut notes) = hlog::read_dir(dir)?;
    let report_file = dir.join("report.json");
    let report = if report_file.exists() {
        match read_report(dir) {
            Ok(r) => Some(r),
            Err(e) => {
                notes.push(format!(
                    "its report cannot be read ({e:#}); the figures are its interval logs'"
                ));
                None
            }
        }
    } else {
        if merged.is_none() {
            notes.push(
                "the run did not end (no report.json): its figures are its intervals up to its last whole second"
                    .into(),
            );
        }
        None
    };
    // What the merged recordings' readers were told, told again.
    for src in info["merged_from"].as_array().into_iter().flatten() {
        for note in src["notes"].as_array().into_iter().flatten() {
            notes.push(format!(
                "from {}: {}",
                src["path"].as_str().unwrap_or("?"),
                note.as_str().unwrap_or_default()
            ));
        }
    }
    let mut series = BTreeMap::new();
    for (stem, log) in logs {
        let mut sum: Option<Histogram<u64>> = None;
        for i in &log.intervals {
            match &mut sum {
                None => {
                    let mut h = i.hist.clone();
                    h.auto(true);
                    sum = Some(h)
                }
                Some(s) => s.add(&i.hist).map_err(|e| {
                    anyhow::anyhow!(
                        "{}: its intervals cannot be added ({e:?})",
                        dir.join("hlog").join(format!("{stem}.hlog")).display()
                    )
                })?,
            }
        }
        let figures = sum.as_ref().map(Figures::of).unwrap_or_default();
        series.insert(
            stem,
            Series {
                name: log.name,
                figures,
                intervals: Some(log.intervals),
            },
        );
    }
    if let Some(r) = &report {
        for (name, f) in report_series(r) {
            match series.get(&slug(&name)) {
                Some(s) if s.figures.count != f.count => notes.push(format!(
                    "{name}: its interval logs hold {} values, its report counted {} (figures reset mid-run, or intervals the recorder could not write in time); the figures here are the logs'",
                    s.figures.count, f.count
                )),
                None if f.count > 0 => notes.push(format!(
                    "{name}: its report counted {} values but it has no interval log",
                    f.count
                )),
                _ => {}
            }
        }
    }
    let ran = match &report {
        Some(r) => Some((r.snapshot.elapsed_secs, "its report")),
        None => span_secs(series.values()).map(|s| (s, "its intervals' span")),
    };
    let faults = info["faults"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    Ok(Input {
        path: dir.to_path_buf(),
        kind: merged.map_or(Kind::Recording, Kind::Merged),
        scenario: text("scenario"),
        backend: text("backend"),
        started: Some(text("started")),
        ran,
        faults,
        series,
        notes,
        scenario_text: std::fs::read_to_string(dir.join("scenario.toml")).ok(),
    })
}

/// Seconds from the first interval's start to the last one's end, over every series.
fn span_secs<'a>(series: impl Iterator<Item = &'a Series>) -> Option<f64> {
    let starts: Vec<i64> = series
        .flat_map(|s| s.intervals.iter().flatten().map(|i| i.start_ms))
        .collect();
    let (lo, hi) = (starts.iter().min()?, starts.iter().max()?);
    Some((hi + 1000 - lo) as f64 / 1000.0)
}
