//! `frames.jsonl`: what the screen showed, a line a second. Each frame holds the run's snapshot
//! at that second (in the report's JSON form) and the sparkline points of the seconds that became
//! whole since the frame before, so a replay draws the same panes, tables and status line without
//! the lab. A frame's size does not grow with the run: the faults it carries are those of the last
//! ten minutes (at most [`FAULTS_KEPT`]), and each second's points are written once.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::labs::LabKind;
use crate::labs::series::FrameSeries;
use crate::metrics::Point;
use crate::report::{Ending, ScenarioInfo, json};
use crate::run::{History, Run};
use crate::snapshot::Snapshot;

/// Faults a frame carries: those of the last [`FAULTS_WINDOW_SECS`], the newest
/// [`FAULTS_KEPT`] of them (the sparklines' widest window is ten minutes).
pub const FAULTS_KEPT: usize = 100;
pub const FAULTS_WINDOW_SECS: f64 = 600.0;

/// Seconds of history looked back at each tick: a tick that comes late still finds every
/// second it has not written.
const LOOKBACK: usize = 10;

/// One point of a sparkline, compactly: `[second, count, p50_us, p99_us, max_us]`.
pub type Pt = [u64; 5];

pub fn pt(p: &Point) -> Pt {
    [p.second, u64::from(p.count), p.p50_us, p.p99_us, p.max_us]
}

pub fn point(p: &Pt) -> Point {
    Point {
        second: p[0],
        count: u32::try_from(p[1]).unwrap_or(u32::MAX),
        p50_us: p[2],
        p99_us: p[3],
        max_us: p[4],
    }
}

/// The seconds that became whole since the frame before, per series.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Points {
    /// Each lab's series under the lab's key (`kinesis`: arrival -> receive by consumer name;
    /// `s3`: the total time by `CLASS OP`; `redis`: the lag by method), and a lab's gauge under
    /// its own key (`read_rate`: GetRecords attempts per second per shard, `[second, rate]`s).
    #[serde(flatten)]
    pub parts: BTreeMap<String, Part>,
    /// Each lab's last whole second at this frame (`kinesis`, `s3`, `redis`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub upto: BTreeMap<String, u64>,
}

/// One lab's part of a frame's points: its latency series by key, or its gauge.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Part {
    Series(BTreeMap<String, Vec<Pt>>),
    Gauge(Vec<(u64, f64)>),
}

/// How the run ended, on its last frame.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct End {
    pub scenario: ScenarioInfo,
    pub ending: Ending,
    pub seed: Option<crate::scenario::Seed>,
    pub problems: Vec<String>,
}

/// One line of `frames.jsonl`.
#[derive(Serialize, Deserialize)]
pub struct Frame {
    pub at_secs: f64,
    pub snapshot: json::Snapshot,
    #[serde(default)]
    pub points: Points,
    /// Only on the last frame of a run that ended (not one cut short).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<End>,
}

/// The newest faults of the last ten minutes of `s`, so that a frame's size stays bounded.
pub fn trim_faults(s: &mut Snapshot) {
    let now = s.elapsed_secs;
    let events = &mut s.faults.events;
    events.retain(|e| e.at_secs >= now - FAULTS_WINDOW_SECS);
    if events.len() > FAULTS_KEPT {
        events.drain(..events.len() - FAULTS_KEPT);
    }
}

/// What the frames have written so far: each series' last whole second.
#[derive(Default)]
pub struct Framer {
    written: BTreeMap<String, u64>,
    /// Each gauge's last second written, by its key.
    gauges_written: BTreeMap<String, u64>,
    /// The model is written in the first frame only (it does not change while a run lasts);
    /// the reader gives it to every frame.
    model_written: bool,
}

impl Framer {
    /// The frame of this second: `snapshot` (taken just now) and the points that became whole.
    pub fn frame(&mut self, run: &Run, at_secs: f64, snapshot: &Snapshot) -> Frame {
        let points = self.points(run, snapshot);
        let mut trimmed = snapshot.clone();
        trim_faults(&mut trimmed);
        if self.model_written {
            trimmed.backend.model.clear();
        }
        self.model_written = true;
        Frame {
            at_secs,
            snapshot: json::Snapshot::from(&trimmed),
            points,
            end: None,
        }
    }

    /// The points of each series that became whole since the last call: what a frame of this
    /// second carries (a shared run's frames too, `share`).
    pub fn points(&mut self, run: &Run, snapshot: &Snapshot) -> Points {
        self.points_of(snapshot, &run.history(LOOKBACK))
    }

    /// The points of `history` not yet written (all of them, from a new framer: a replay's
    /// shared frames are each written from the recording at the cursor).
    pub fn points_of(&mut self, snapshot: &Snapshot, history: &History) -> Points {
        let mut points = Points::default();
        self.labs(snapshot, history, &mut points);
        points
    }

    /// A lab's series and gauge: the seconds of each that became whole since the last frame.
    fn write(&mut self, lab: LabKind, gauge: Option<&str>, f: FrameSeries, points: &mut Points) {
        let mut series = BTreeMap::new();
        for (id, key, pts) in f.series {
            let new = self.whole(&id.name(), pts);
            if !new.is_empty() {
                series.insert(key, new);
            }
        }
        if !series.is_empty() {
            points.parts.insert(lab.key().into(), Part::Series(series));
        }
        let Some(upto) = f.upto else { return };
        points.upto.insert(lab.key().into(), upto);
        let Some(key) = gauge else { return };
        // The gauge's values end at the last whole second.
        let first = (upto + 1).saturating_sub(f.gauge.len() as u64);
        let done = self.gauges_written.get(key).copied();
        let new: Vec<(u64, f64)> = (first..)
            .zip(f.gauge.iter().copied())
            .filter(|(second, _)| done.is_none_or(|w| *second > w))
            .collect();
        if let Some((last, _)) = new.last() {
            self.gauges_written.insert(key.to_string(), *last);
            points.parts.insert(key.to_string(), Part::Gauge(new));
        }
    }

    /// The points of `series` that are whole (all but its last, the second under way) and not
    /// yet written.
    fn whole(&mut self, key: &str, series: &[Point]) -> Vec<Pt> {
        let Some((_, whole)) = series.split_last() else {
            return Vec::new();
        };
        let done = self.written.get(key).copied();
        let new: Vec<Pt> = whole
            .iter()
            .filter(|p| done.is_none_or(|d| p.second > d))
            .map(pt)
            .collect();
        if let Some(last) = new.last() {
            self.written.insert(key.to_string(), last[0]);
        }
        new
    }
}

macro_rules! framer {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        impl Framer {
            /// Each lab's points of this tick (from the registry).
            fn labs(&mut self, snapshot: &Snapshot, history: &History, points: &mut Points) {
                $(if let (Some(s), Some(h)) = (&snapshot.$module, &history.$module)
                    && let Some(f) = <crate::labs::$module::$ty as crate::labs::Measured>::frame_series(s, h)
                {
                    let gauge = <crate::labs::$module::$ty as crate::labs::Lab>::FACTS.gauge;
                    self.write(LabKind::$kind, gauge, f, points);
                })*
            }
        }
    };
}
crate::labs::for_each_lab!(framer);
