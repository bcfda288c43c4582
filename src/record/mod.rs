//! A recording of a run (`--record DIR`): what it ran and what it measured, kept as it happens so
//! that a run cut short stays readable up to its last whole second.
//!
//! - `scenario.toml`: the scenario's text as it was loaded;
//! - `recording.json`: the recording's schema, latlab's version, the scenario, the backend, the
//!   faults set, when it started, and the host, run id and role it ran with;
//! - `hlog/SERIES.hlog`: one HdrHistogram interval log per series (a Kinesis consumer's arrival ->
//!   receive, an S3 class and operation's total time, a Redis method's lag), one interval per
//!   second, tagged with the series, values in microseconds: the standard format that the
//!   HdrHistogram tools of every language read;
//! - `frames.jsonl`: what the screen showed, a line a second (see [`frames`]): what `latlab
//!   replay` draws;
//! - `events.jsonl`: every fault that fired, throttle burst, status change and error (see
//!   [`events`]), and (in the TUI) every key's command and the lab's answer, a JSON object a line,
//!   with its time;
//! - `report.json`: the run's report, written when it ends;
//! - `prices.toml`: the price file the run was given with `--prices`, so that its report prices
//!   the run as it was priced live (without it, the built-in file of the run's region).
//!
//! Every file grows by about the same number of bytes each second, however long the run.

pub mod events;
pub mod frames;
pub mod read;

pub use read::{Recording, read_report};

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};

use crate::run::Run;

/// The recording format's name and version, in `recording.json`.
pub const SCHEMA: &str = "latlab-recording/1";

/// Intervals a series' writer may fall behind before new ones are counted as dropped.
const QUEUE: usize = 64;

/// One series' log: its writer thread and what it was last sent.
struct SeriesLog {
    tx: SyncSender<(Histogram<u64>, Duration)>,
    thread: std::thread::JoinHandle<anyhow::Result<()>>,
    /// The series' whole histogram at the last tick (its next interval is what came since).
    last: Option<Histogram<u64>>,
}

/// A recording being written.
pub struct Recorder {
    dir: PathBuf,
    started: SystemTime,
    start: Instant,
    logs: BTreeMap<String, SeriesLog>,
    events: std::fs::File,
    frames: std::fs::File,
    framer: frames::Framer,
    watch: events::Watch,
    /// The last frame's time: the run's end is shown at that second (nothing is measured after
    /// the last tick, which comes once the consumers have drained).
    last_at: Option<f64>,
    /// Fault events already written (by id).
    fault_seen: u64,
    /// Intervals a writer could not take in time (shown at the end, never hidden).
    pub dropped: u64,
}

/// A series' name as a file name and an interval-log tag: no spaces, commas or slashes.
pub fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The copy of the run's `--prices` file in a recording.
pub const PRICES_FILE: &str = "prices.toml";

/// The prices a recording was priced with live: its `prices.toml`, when the run was given
/// `--prices` (none for a report file or a recording priced with the built-in files).
pub fn recorded_prices(
    path: &Path,
) -> anyhow::Result<Option<std::sync::Arc<crate::lab_kit::cost::Prices>>> {
    let file = path.join(PRICES_FILE);
    if !path.is_dir() || !file.exists() {
        return Ok(None);
    }
    Ok(Some(std::sync::Arc::new(
        crate::lab_kit::cost::Prices::load(&file)?,
    )))
}

impl Recorder {
    /// Makes the recording's directory, before anything runs: it must be new or empty.
    pub fn prepare(dir: &Path) -> anyhow::Result<()> {
        if dir.exists()
            && std::fs::read_dir(dir)
                .with_context(|| format!("--record {}: cannot read the directory", dir.display()))?
                .next()
                .is_some()
        {
            anyhow::bail!(
                "--record {}: the directory is not empty; name a new or empty one",
                dir.display()
            );
        }
        std::fs::create_dir_all(dir.join("hlog"))
            .with_context(|| format!("--record {}: cannot create the directory", dir.display()))
    }

    /// Keeps the price file a run was given (`--prices`) in its recording, as `prices.toml`.
    pub fn keep_prices(dir: &Path, prices: Option<&Path>) -> anyhow::Result<()> {
        if let Some(p) = prices {
            std::fs::copy(p, dir.join(PRICES_FILE)).with_context(|| {
                format!(
                    "--record {}: cannot keep a copy of --prices {}",
                    dir.display(),
                    p.display()
                )
            })?;
        }
        Ok(())
    }

    /// Starts the recording in `dir` (made by [`Recorder::prepare`]) and writes what the run is.
    pub fn create(
        dir: &Path,
        run: &Run,
        scenario_text: &str,
        host: &str,
    ) -> anyhow::Result<Recorder> {
        let write = |name: &str, text: &str| {
            std::fs::write(dir.join(name), text)
                .with_context(|| format!("--record {}: cannot write {name}", dir.display()))
        };
        write("scenario.toml", scenario_text)?;
        // Intervals are timed from the run's start, so the log's base time is that moment.
        let started = SystemTime::now() - run.ctx.start.elapsed();
        let started_ms = started
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as i64;
        let info = serde_json::json!({
            "schema": SCHEMA,
            "latlab_version": env!("CARGO_PKG_VERSION"),
            "scenario": run.scenario.name,
            "description": run.scenario.description,
            "origin": run.scenario.origin,
            "seed": run.scenario.seed,
            "backend": run.backend().label,
            "faults": run.faults_set,
            "started": latlab_core::clock::rfc3339_ms(started_ms),
            "host": host,
            "run_id": run.ctx.run_id,
            "role": run.ctx.role().name(),
        });
        write(
            "recording.json",
            &(serde_json::to_string_pretty(&info).expect("JSON") + "\n"),
        )?;
        let events = std::fs::File::create(dir.join("events.jsonl"))
            .with_context(|| format!("--record {}: cannot write events.jsonl", dir.display()))?;
        let frames = std::fs::File::create(dir.join("frames.jsonl"))
            .with_context(|| format!("--record {}: cannot write frames.jsonl", dir.display()))?;
        Ok(Recorder {
            dir: dir.to_path_buf(),
            started,
            start: run.ctx.start,
            logs: BTreeMap::new(),
            events,
            frames,
            framer: frames::Framer::default(),
            watch: events::Watch::default(),
            last_at: None,
            fault_seen: 0,
            dropped: 0,
        })
    }

    /// One second: each series' interval since the last tick goes to its log, and the faults that
    /// fired since to the events.
    pub fn tick(&mut self, run: &Run) -> anyhow::Result<()> {
        let at = self.start.elapsed();
        for (name, whole) in run.histograms() {
            if !self.logs.contains_key(&name) {
                let log = self.open(&name)?;
                self.logs.insert(name.clone(), log);
            }
            let log = self.logs.get_mut(&name).expect("opened above");
            // What came since the last tick; after a reset (fewer values than before), all of it.
            let interval = match &log.last {
                Some(last) if last.len() <= whole.len() => {
                    let mut i = whole.clone();
                    i.subtract(last).ok();
                    i
                }
                _ => whole.clone(),
            };
            log.last = Some(whole);
            if interval.is_empty() {
                continue;
            }
            let start = at.saturating_sub(Duration::from_secs(1));
            match log.tx.try_send((interval, start)) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => self.dropped += 1,
                Err(TrySendError::Disconnected(_)) => {
                    anyhow::bail!(
                        "--record {}: the log of {name} stopped being written",
                        self.dir.display()
                    )
                }
            }
        }
        let seen = self.fault_seen;
        for e in run.ctx.fault_log.events().iter().filter(|e| e.id > seen) {
            let line = serde_json::json!({
                "at_secs": e.at.saturating_duration_since(self.start).as_secs_f64(),
                "event": "fault",
                "kind": e.kind.name(),
                "target": e.target,
            });
            writeln!(self.events, "{line}").with_context(|| {
                format!("--record {}: cannot write events.jsonl", self.dir.display())
            })?;
            self.fault_seen = e.id;
        }
        let at_secs = at.as_secs_f64();
        let snapshot = run.snapshot(false);
        for e in self.watch.events(at_secs, &snapshot) {
            writeln!(self.events, "{e}").with_context(|| {
                format!("--record {}: cannot write events.jsonl", self.dir.display())
            })?;
        }
        let frame = self.framer.frame(run, at_secs, &snapshot);
        self.last_at = Some(at_secs);
        self.write_frame(&frame)
    }

    /// One line of `frames.jsonl`, written whole.
    fn write_frame(&mut self, frame: &frames::Frame) -> anyhow::Result<()> {
        let mut line = serde_json::to_string(frame).expect("a frame serializes");
        line.push('\n');
        self.frames
            .write_all(line.as_bytes())
            .with_context(|| format!("--record {}: cannot write frames.jsonl", self.dir.display()))
    }

    /// An event of the run: a key's command, what the lab answered to it.
    pub fn note(&mut self, event: &str, text: &str) {
        let line = serde_json::json!({
            "at_secs": self.start.elapsed().as_secs_f64(),
            "event": event,
            "text": text,
        });
        if writeln!(self.events, "{line}").is_err() {
            tracing::warn!("recording: cannot write events.jsonl");
        }
    }

    /// Starts the writer of one series' log.
    fn open(&self, name: &str) -> anyhow::Result<SeriesLog> {
        let tag = slug(name);
        let path = self.dir.join("hlog").join(format!("{tag}.hlog"));
        let mut file = std::fs::File::create(&path)
            .with_context(|| format!("--record: cannot write {}", path.display()))?;
        let (tx, rx) = sync_channel::<(Histogram<u64>, Duration)>(QUEUE);
        let started = self.started;
        let series = name.to_string();
        let thread = std::thread::Builder::new()
            .name(format!("record {tag}"))
            .spawn(move || -> anyhow::Result<()> {
                let mut serializer = V2DeflateSerializer::new();
                // Unbuffered: every interval is in the file as soon as it is written.
                let mut log = IntervalLogWriterBuilder::new()
                    .add_comment(&format!("latlab: {series}, values in microseconds"))
                    .with_start_time(started)
                    .with_base_time(started)
                    .with_max_value_divisor(1000.0)
                    .begin_log_with(&mut file, &mut serializer)?;
                let tag = Tag::new(&tag).expect("a slug has no disallowed character");
                for (h, at) in rx {
                    log.write_histogram(&h, at, Duration::from_secs(1), Some(tag))
                        .map_err(|e| anyhow::anyhow!("{e}"))?;
                }
                Ok(())
            })?;
        Ok(SeriesLog {
            tx,
            thread,
            last: None,
        })
    }

    /// Ends the recording after the run ended (the lab is gone): the logs, the last frame (the
    /// report's figures and how the run ended) and the report.
    pub fn finish_logs(mut self, report: &crate::report::Report) -> anyhow::Result<PathBuf> {
        let mut last = report.snapshot.clone();
        frames::trim_faults(&mut last);
        let frame = frames::Frame {
            at_secs: self
                .last_at
                .unwrap_or_else(|| self.start.elapsed().as_secs_f64()),
            snapshot: crate::report::json::Snapshot::from(&last),
            points: frames::Points::default(),
            end: Some(frames::End {
                scenario: report.scenario.clone(),
                ending: report.ending,
                seed: report.seed.clone(),
                problems: report.problems.clone(),
            }),
        };
        self.write_frame(&frame)?;
        let report_json = report.render(crate::report::Format::Json);
        for (name, log) in std::mem::take(&mut self.logs) {
            drop(log.tx);
            log.thread
                .join()
                .map_err(|_| anyhow::anyhow!("the log of {name} failed"))?
                .with_context(|| format!("--record {}: writing {name}", self.dir.display()))?;
        }
        // Whole or not at all: a kill while writing leaves no half report.
        let part = self.dir.join("report.json.part");
        std::fs::write(&part, report_json)
            .and_then(|()| std::fs::rename(&part, self.dir.join("report.json")))
            .with_context(|| {
                format!("--record {}: cannot write report.json", self.dir.display())
            })?;
        Ok(self.dir)
    }
}

impl Run {
    /// Every series' whole histogram now (microseconds), by name: a Kinesis consumer's arrival ->
    /// receive, an S3 class and operation's total time, a Redis method's lag.
    pub fn histograms(&self) -> Vec<(String, hdrhistogram::Histogram<u64>)> {
        self.series()
            .into_iter()
            .map(|s| (s.id.name(), s.histogram))
            .collect()
    }
}
