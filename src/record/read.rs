//! Reading a recording back: its report (`latlab report`) and its frames, second by second
//! (`latlab replay`). A recording cut short by a kill or a crash is read up to its last whole
//! line, and says so; anything else that is wrong is one line naming the file.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

use super::SCHEMA;
use super::frames::{End, Frame, Part, Points, point};
use crate::metrics::Point;
use crate::report::{Ending, Report, ScenarioInfo};
use latlab_core::units::clock;

/// Where a frame is in `frames.jsonl`, and what a replay needs of it without reading it all.
struct FrameAt {
    offset: u64,
    len: usize,
    at_secs: f64,
    /// Each lab's last whole second (carried from the frame before when a frame has none).
    upto: BTreeMap<String, u64>,
}

/// An event of the recording, as a replay shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedEvent {
    pub at_secs: f64,
    /// `fault`, `command`, `confirmed`, `refused`, `throttle-burst`, `throttle-burst-end`,
    /// `status`, `error`.
    pub event: String,
    pub text: String,
}

/// A recording opened for replay.
pub struct Recording {
    pub dir: PathBuf,
    pub scenario: String,
    pub description: String,
    pub origin: String,
    pub backend: String,
    /// When the run started (RFC 3339, UTC).
    pub started: String,
    seed: Option<crate::scenario::Seed>,
    frames: Vec<FrameAt>,
    sparks: Sparks,
    pub events: Vec<RecordedEvent>,
    /// Why the recording ends before its run did, when it does: one line.
    pub cut: Option<String>,
    end: Option<End>,
    /// The model in effect (its first frame holds it).
    model: Vec<latlab_core::provenance::Param>,
}

/// What `recording.json` says.
#[derive(Deserialize)]
struct Info {
    schema: String,
    scenario: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    origin: String,
    #[serde(default)]
    seed: Option<crate::scenario::Seed>,
    backend: String,
    started: String,
    /// A merge of several recordings (`latlab merge`): interval logs only.
    #[serde(default)]
    merged_from: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Head {
    at_secs: f64,
    #[serde(default)]
    points: Points,
    #[serde(default)]
    end: Option<End>,
}

impl Recording {
    pub fn open(dir: &Path) -> anyhow::Result<Recording> {
        let info_path = dir.join("recording.json");
        if !info_path.exists() {
            anyhow::bail!(
                "{}: not a recording (no recording.json); name a directory made with --record",
                dir.display()
            );
        }
        let text = std::fs::read_to_string(&info_path)
            .with_context(|| format!("cannot read {}", info_path.display()))?;
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{} is not whole JSON ({e}): the recording is damaged",
                info_path.display()
            )
        })?;
        let schema = value["schema"].as_str().unwrap_or_default();
        if schema != SCHEMA {
            anyhow::bail!(
                "{}: its schema is '{schema}'; this latlab reads {SCHEMA}",
                info_path.display()
            );
        }
        let info: Info = serde_json::from_value(value)
            .map_err(|e| anyhow::anyhow!("{}: {e}", info_path.display()))?;
        debug_assert_eq!(info.schema, SCHEMA);
        if info.merged_from.is_some() {
            anyhow::bail!(
                "{}: a merged recording holds interval logs only, no frames to replay; `latlab compare` reads it",
                dir.display()
            );
        }
        let frames_path = dir.join("frames.jsonl");
        let bytes = std::fs::read(&frames_path).map_err(|e| {
            anyhow::anyhow!(
                "{}: cannot read it ({e}); a recording made before replay existed has none, and `latlab report {}` prints its report",
                frames_path.display(),
                dir.display()
            )
        })?;
        let mut rec = Recording {
            dir: dir.to_path_buf(),
            scenario: info.scenario,
            description: info.description,
            origin: info.origin,
            backend: info.backend,
            started: info.started,
            seed: info.seed,
            frames: Vec::new(),
            sparks: Sparks::default(),
            events: Vec::new(),
            cut: None,
            end: None,
            model: Vec::new(),
        };
        let mut offset = 0usize;
        let mut upto = BTreeMap::new();
        let mut cut_bytes = 0usize;
        for (n, line) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
            let start = offset;
            offset += line.len();
            let head = match line.strip_suffix(b"\n") {
                Some(body) => serde_json::from_slice::<Head>(body).map_err(|e| {
                    anyhow::anyhow!("{} line {}: {e}", frames_path.display(), n + 1)
                })?,
                // The last line, cut short while it was written.
                None => {
                    cut_bytes = line.len();
                    break;
                }
            };
            rec.sparks.add(&head.points);
            upto.extend(head.points.upto.clone());
            rec.frames.push(FrameAt {
                offset: start as u64,
                len: line.len() - 1,
                at_secs: head.at_secs,
                upto: upto.clone(),
            });
            if head.end.is_some() {
                rec.end = head.end;
            }
        }
        let Some(last) = rec.frames.last() else {
            anyhow::bail!(
                "{}: no whole second was recorded (the run stopped in its first second)",
                frames_path.display()
            );
        };
        if rec.end.is_none() {
            rec.cut = Some(format!(
                "the recording stops at {} (its last whole second): the run did not end{}",
                clock(last.at_secs),
                if cut_bytes > 0 {
                    format!(" (the {cut_bytes} bytes of a frame it was writing are left out)")
                } else {
                    String::new()
                }
            ));
        }
        rec.model = rec.frame_as_written(0)?.snapshot.backend.model;
        rec.events = read_events(&dir.join("events.jsonl"))?;
        Ok(rec)
    }

    /// How many frames (seconds) it holds.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Frame `i`'s time, seconds from the run's start.
    pub fn at_secs(&self, i: usize) -> f64 {
        self.frames[i.min(self.frames.len() - 1)].at_secs
    }

    /// The frame at or before `secs` of the run.
    pub fn frame_at(&self, secs: f64) -> usize {
        self.frames
            .partition_point(|f| f.at_secs <= secs)
            .saturating_sub(1)
    }

    /// Frame `i`'s snapshot, read from the file.
    pub fn snapshot(&self, i: usize) -> anyhow::Result<crate::snapshot::Snapshot> {
        Ok(self.frame(i)?.snapshot.into())
    }

    /// Frame `i`, with the model the first frame holds (frames after it leave it out).
    fn frame(&self, i: usize) -> anyhow::Result<Frame> {
        let mut frame = self.frame_as_written(i)?;
        if frame.snapshot.backend.model.is_empty() {
            frame.snapshot.backend.model = self.model.clone();
        }
        Ok(frame)
    }

    fn frame_as_written(&self, i: usize) -> anyhow::Result<Frame> {
        let f = &self.frames[i.min(self.frames.len() - 1)];
        let path = self.dir.join("frames.jsonl");
        let mut file = std::fs::File::open(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut buf = vec![0; f.len];
        file.seek(SeekFrom::Start(f.offset))
            .and_then(|_| file.read_exact(&mut buf))
            .with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_slice(&buf).with_context(|| format!("{}: a frame", path.display()))
    }

    /// A lab's last whole second at frame `i`.
    pub fn upto(&self, i: usize, lab: &str) -> Option<u64> {
        self.frames[i.min(self.frames.len() - 1)]
            .upto
            .get(lab)
            .copied()
    }

    /// Its sparkline points.
    pub fn sparks(&self) -> &Sparks {
        &self.sparks
    }

    /// The report as it stood at frame `i`: the run's own report at its last frame; otherwise
    /// the figures of that second, saying so.
    pub fn report(&self, i: usize) -> anyhow::Result<Report> {
        let i = i.min(self.frames.len() - 1);
        let frame = self.frame(i)?;
        let snapshot = frame.snapshot.into();
        if let Some(end) = frame.end {
            return Ok(Report::from_parts(
                end.scenario,
                end.seed,
                snapshot,
                end.ending,
                end.problems,
            ));
        }
        let problem = if i + 1 == self.frames.len()
            && let Some(cut) = &self.cut
        {
            cut.clone()
        } else {
            format!(
                "replayed at {} of a recording that runs to {}: the figures of that second",
                clock(self.frames[i].at_secs),
                clock(self.frames[self.frames.len() - 1].at_secs)
            )
        };
        Ok(Report::from_parts(
            ScenarioInfo {
                name: self.scenario.clone(),
                description: self.description.clone(),
                origin: self.origin.clone(),
                requested_duration_secs: None,
            },
            self.seed.clone(),
            snapshot,
            Ending::StoppedEarly,
            vec![problem],
        ))
    }
}

/// Sparkline points as frames carry them, by series and second: a recording's, and a shared
/// run's as `latlab attach` receives them.
#[derive(Default)]
pub struct Sparks {
    /// Points per series (`kinesis NAME`, `s3 CLASS OP`, `redis METHOD`), by second.
    series: BTreeMap<String, BTreeMap<u64, Point>>,
    /// Each lab's gauge (`read_rate`), by its key, by second.
    gauges: BTreeMap<String, BTreeMap<u64, f64>>,
}

impl Sparks {
    pub fn add(&mut self, p: &Points) {
        for (key, part) in &p.parts {
            match part {
                Part::Series(map) => {
                    for (name, pts) in map {
                        let series = self.series.entry(format!("{key} {name}")).or_default();
                        for x in pts {
                            series.insert(x[0], point(x));
                        }
                    }
                }
                Part::Gauge(values) => self
                    .gauges
                    .entry(key.clone())
                    .or_default()
                    .extend(values.iter().copied()),
            }
        }
    }

    /// A series' `window` points ending at second `upto`, oldest first; seconds without a point
    /// are zero points, as on the live screen.
    pub fn points(&self, series: &str, upto: u64, window: u64) -> Vec<Point> {
        let start = (upto + 1).saturating_sub(window);
        let known = self.series.get(series);
        (start..=upto)
            .map(|second| {
                known
                    .and_then(|s| s.get(&second).cloned())
                    .unwrap_or(Point {
                        second,
                        ..Point::default()
                    })
            })
            .collect()
    }

    /// A lab's gauge (`read_rate`), `window` seconds ending at `upto`; a second without a value
    /// is 0.
    pub fn gauge(&self, key: &str, upto: u64, window: u64) -> Vec<f64> {
        let start = (upto + 1).saturating_sub(window);
        let known = self.gauges.get(key);
        (start..=upto)
            .map(|s| known.and_then(|g| g.get(&s)).copied().unwrap_or(0.0))
            .collect()
    }

    /// Lets go of every second before `first` (a live stream keeps a window, not the run).
    pub fn keep_from(&mut self, first: u64) {
        for s in self.series.values_mut() {
            *s = s.split_off(&first);
        }
        for g in self.gauges.values_mut() {
            *g = g.split_off(&first);
        }
    }
}

fn read_events(path: &Path) -> anyhow::Result<Vec<RecordedEvent>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut out = Vec::new();
    // A last line without its newline was cut short: left out.
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let Some(line) = line.strip_suffix('\n') else {
            break;
        };
        let v: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| anyhow::anyhow!("{} line {}: {e}", path.display(), n + 1))?;
        let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
        let event = s("event");
        let text = match event.as_str() {
            "fault" => format!("fault {}: {}", s("kind"), s("target")),
            "status" | "error" => format!("{}: {}", s("series"), s("text")),
            "command" => format!("key: {}", s("text")),
            _ => s("text"),
        };
        out.push(RecordedEvent {
            at_secs: v["at_secs"].as_f64().unwrap_or(0.0),
            event,
            text,
        });
    }
    // Faults are written at the second's tick, after keys of that second: in time order here.
    out.sort_by(|a, b| a.at_secs.total_cmp(&b.at_secs));
    Ok(out)
}

/// The report of a recording or a report file, with one line saying what is wrong when it cannot
/// be read. A recording whose run did not end gives the figures of its last whole second, saying
/// so.
pub fn read_report(path: &Path) -> anyhow::Result<Report> {
    let file = if path.is_dir() {
        let f = path.join("report.json");
        if !f.exists() {
            if path.join("recording.json").exists() {
                let rec = Recording::open(path)?;
                return rec.report(rec.len() - 1);
            }
            anyhow::bail!(
                "{}: not a recording (no recording.json or report.json); name a directory made with --record or a report written with --format json",
                path.display()
            );
        }
        f
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {}", file.display()))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{} is not a whole JSON report ({e}): it may have been cut short",
            file.display()
        )
    })?;
    let schema = value["schema"].as_str().unwrap_or_default();
    if schema != crate::report::SCHEMA {
        anyhow::bail!(
            "{}: its schema is '{schema}'; this latlab reads {}",
            file.display(),
            crate::report::SCHEMA
        );
    }
    let report: crate::report::json::RunReport = serde_json::from_value(value)
        .map_err(|e| anyhow::anyhow!("{} is not a latlab report: {e}", file.display()))?;
    Ok(Report::from(report))
}
