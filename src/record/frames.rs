//! `frames.jsonl`: what the screen showed, a line a second. Each frame holds the run's snapshot
//! at that second (in the report's JSON form) and the sparkline points of the seconds that became
//! whole since the frame before, so a replay draws the same panes, tables and status line without
//! the lab. A frame's size does not grow with the run: the faults it carries are those of the last
//! ten minutes (at most [`FAULTS_KEPT`]), and each second's points are written once.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::labs::LabKind;
use crate::labs::series::SeriesId;
use crate::metrics::Point;
use crate::report::{Ending, ScenarioInfo, json};
use crate::run::Run;
use crate::run::snapshot::Snapshot;

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
    /// Kinesis: arrival -> receive per consumer, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kinesis: BTreeMap<String, Vec<Pt>>,
    /// GetRecords attempts per second per shard: `[second, rate]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_rate: Vec<(u64, f64)>,
    /// S3: the total time per class and operation, by `s3_key`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub s3: BTreeMap<String, Vec<Pt>>,
    /// Redis: the lag per method, by its key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub redis: BTreeMap<String, Vec<Pt>>,
    /// Each lab's last whole second at this frame (`kinesis`, `s3`, `redis`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub upto: BTreeMap<String, u64>,
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

/// An S3 series' key in [`Points::s3`]: `EXPRESS_ONEZONE PUT`.
pub fn s3_key(class: crate::services::s3::Class, op: &str) -> String {
    format!("{} {op}", class.storage_class())
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
    read_rate_written: Option<u64>,
    /// The model is written in the first frame only (it does not change while a run lasts);
    /// the reader gives it to every frame.
    model_written: bool,
}

impl Framer {
    /// The frame of this second: `snapshot` (taken just now) and the points that became whole.
    pub fn frame(&mut self, lab: &Run, at_secs: f64, snapshot: &Snapshot) -> Frame {
        let history = lab.history(LOOKBACK);
        let mut points = Points::default();
        if let (Some(k), Some(h)) = (&snapshot.kinesis, &history.kinesis)
            && k.consumers.len() == h.consumers.len()
        {
            // A consumer added between the snapshot and the history waits for the next tick.
            for (c, series) in k.consumers.iter().zip(&h.consumers) {
                let id = SeriesId::new(LabKind::Kinesis, &[&c.name], "arrival_to_receive");
                let new = self.whole(&id.name(), series);
                if !new.is_empty() {
                    points.kinesis.insert(c.name.clone(), new);
                }
            }
            // The read rate's values end at the last whole second.
            if let Some(now) = h.consumers.first().and_then(|s| s.last()).map(|p| p.second) {
                let upto = now.saturating_sub(1);
                points.upto.insert("kinesis".into(), upto);
                let first = (upto + 1).saturating_sub(h.read_rate.len() as u64);
                for (i, v) in h.read_rate.iter().enumerate() {
                    let second = first + i as u64;
                    if self.read_rate_written.is_none_or(|w| second > w) {
                        points.read_rate.push((second, *v));
                        self.read_rate_written = Some(second);
                    }
                }
            }
        }
        for (class, op, series) in history.s3.iter().flatten() {
            let key = s3_key(*class, op);
            if let Some(p) = series.last() {
                points.upto.insert("s3".into(), p.second.saturating_sub(1));
            }
            let id = SeriesId::new(LabKind::S3, &[class.storage_class(), op], "total");
            let new = self.whole(&id.name(), series);
            if !new.is_empty() {
                points.s3.insert(key, new);
            }
        }
        for (method, series) in history.redis.iter().flatten() {
            if let Some(p) = series.last() {
                points
                    .upto
                    .insert("redis".into(), p.second.saturating_sub(1));
            }
            let id = SeriesId::new(LabKind::Redis, &[method.key()], "lag");
            let new = self.whole(&id.name(), series);
            if !new.is_empty() {
                points.redis.insert(method.key().to_string(), new);
            }
        }
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
