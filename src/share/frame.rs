//! `latlab-frame/1`: one event of a shared run's stream (`GET /events`), as JSON. A frame holds
//! what a screen of the run shows, as data, so that every viewer draws it at its own width, tab,
//! zoom and theme:
//!
//! - `run`: the run's head (scenario, backend, host, the replay's cursor, the viewers, whether
//!   the share grants control);
//! - `screen`: each lab's tab as data (`crate::lab_kit::view::LabView`: panes, sparklines, tables
//!   with typed columns and drop ranks), its status line and cost line; the header's parts; the
//!   host's message; the keys. The page (`page.html`) draws it with no code of any lab;
//! - `snapshot` and `points`: the run's snapshot in the report's JSON form and the sparklines'
//!   points, as a recording's frame holds them (`record::frames`), which `latlab attach` draws
//!   with the replay's renderer.
//!
//! A `full` frame (the first a viewer gets, and the one a viewer that fell behind gets) carries
//! every point the share keeps ([`KEPT_SECONDS`]); a `tick` frame carries the seconds that became
//! whole since the tick before. The stream ends with an `end` event. `schemas/frame.schema.json`
//! is the format's schema; a test checks frames against it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::lab_kit::view::{HeaderPart, LabView};
use crate::record::frames::{Part, Points, Pt};

/// The format's name and version, in every frame.
pub const FORMAT: &str = "latlab-frame/1";

/// Seconds of sparkline points a full frame carries (the TUI's widest window).
pub const KEPT_SECONDS: u64 = 600;

/// The run's head.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunHead {
    /// The host's name, as `latlab attach` shows it (`ATTACHED to HOST`).
    pub host: String,
    pub scenario: String,
    pub description: String,
    /// The backend in brief: `emulator (zero)`, `aws us-east-1`.
    pub backend: String,
    /// The host's theme, for a viewer that asks for it (`?theme=host`).
    pub theme: String,
    /// A replay's cursor, when the host replays a recording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayHead>,
    /// Viewers may send keys that change the experiment (`--share-control`).
    pub control: bool,
    /// Viewers connected now.
    pub viewers: usize,
    /// Frames a viewer that fell behind missed, over the run (it got a full frame instead).
    pub dropped: u64,
    /// When the host published the frame (its clock, milliseconds since the Unix epoch): how far
    /// behind a viewer on a machine with the same clock draws.
    #[serde(default)]
    pub at_unix_ms: u64,
}

/// Where a host's replay is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayHead {
    /// When the recording was made: `2026-12-01 00:45 UTC`.
    pub started: String,
    pub at_secs: f64,
    pub last_secs: f64,
    pub playing: bool,
    pub speed: u32,
}

/// A message on the host's status line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Message {
    pub text: String,
    /// An error or a refusal (drawn warm).
    pub bad: bool,
}

/// One lab's tab.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TabScreen {
    /// The lab's key (`kinesis`) and name (`Kinesis`).
    pub lab: &'static str,
    pub name: &'static str,
    pub view: LabView,
    /// The lab's status line when no message is shown.
    pub status: String,
    /// Its cost at list price, as its pane's edge shows it, and in brief for a narrow pane.
    pub cost: Option<String>,
    pub cost_brief: Option<String>,
    /// Its service's faults of the sparklines' window, as seconds ago.
    pub marks: Vec<u64>,
}

/// One line of the keys' help.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KeyRow {
    pub keys: String,
    pub what: String,
    /// The characters a viewer may send for it (`POST /keys`), when it changes the experiment.
    pub send: String,
}

/// A fault the run can have injected (the fault menu's), by name, for a viewer with control.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FaultRow {
    pub name: String,
    pub what: String,
}

/// What a screen of the run shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Screen {
    /// The header's parts in order, with their drop ranks (0 always stays).
    pub header: Vec<HeaderPart>,
    /// The host's message, or the newest fault's line.
    pub message: Option<Message>,
    pub tabs: Vec<TabScreen>,
    pub keys: Vec<KeyRow>,
    /// The faults the fault menu (f) injects in this run.
    pub faults: Vec<FaultRow>,
    /// Seconds each sparkline's values span (their newest is now).
    pub window: u64,
}

/// What the host publishes at a tick.
pub struct Tick {
    pub at_secs: f64,
    pub run: RunHead,
    pub snapshot: crate::report::json::Snapshot,
    pub points: Points,
    pub screen: Screen,
}

/// A frame as `latlab attach` reads it (the screen is the page's; attach draws from the
/// snapshot and the points).
#[derive(Deserialize)]
pub struct Received {
    pub format: String,
    pub id: u64,
    pub kind: String,
    pub at_secs: f64,
    #[serde(default)]
    pub viewer: Option<u64>,
    pub run: RunHead,
    pub snapshot: crate::report::json::Snapshot,
    #[serde(default)]
    pub points: Points,
}

/// The end of the stream, as `latlab attach` reads it.
#[derive(Deserialize)]
pub struct Ended {
    pub id: u64,
    pub text: String,
}

/// Every point of the last [`KEPT_SECONDS`] (for full frames), by part and series.
#[derive(Default)]
pub struct Kept {
    series: BTreeMap<(String, String), BTreeMap<u64, Pt>>,
    gauges: BTreeMap<String, BTreeMap<u64, f64>>,
    upto: BTreeMap<String, u64>,
}

impl Kept {
    /// Adds a tick's points and lets go of what is older than the window.
    pub fn add(&mut self, p: &Points) {
        for (key, part) in &p.parts {
            match part {
                Part::Series(map) => {
                    for (name, pts) in map {
                        let s = self.series.entry((key.clone(), name.clone())).or_default();
                        for x in pts {
                            s.insert(x[0], *x);
                        }
                        trim(s);
                    }
                }
                Part::Gauge(values) => {
                    let g = self.gauges.entry(key.clone()).or_default();
                    g.extend(values.iter().copied());
                    trim(g);
                }
            }
        }
        self.upto.extend(p.upto.clone());
    }

    /// All of it, as one frame's points.
    pub fn points(&self) -> Points {
        let mut parts: BTreeMap<String, Part> = BTreeMap::new();
        for ((key, name), pts) in &self.series {
            let entry = parts
                .entry(key.clone())
                .or_insert_with(|| Part::Series(BTreeMap::new()));
            if let Part::Series(map) = entry {
                map.insert(name.clone(), pts.values().copied().collect());
            }
        }
        for (key, values) in &self.gauges {
            parts.insert(
                key.clone(),
                Part::Gauge(values.iter().map(|(s, v)| (*s, *v)).collect()),
            );
        }
        Points {
            parts,
            upto: self.upto.clone(),
        }
    }
}

/// Keeps the newest [`KEPT_SECONDS`] seconds of a series.
fn trim<V>(s: &mut BTreeMap<u64, V>) {
    let Some(last) = s.keys().next_back().copied() else {
        return;
    };
    let first = last.saturating_sub(KEPT_SECONDS - 1);
    while let Some(k) = s.keys().next().copied() {
        if k >= first {
            break;
        }
        s.remove(&k);
    }
}

/// A frame's JSON from its parts, each already JSON: the parts the ticks share are written once.
#[allow(clippy::too_many_arguments)]
pub fn envelope(
    id: u64,
    kind: &str,
    at_secs: f64,
    viewer: Option<u64>,
    run: &str,
    snapshot: &str,
    points: &str,
    screen: &str,
) -> String {
    let at = serde_json::to_string(&at_secs).unwrap_or_else(|_| "0".into());
    let viewer = viewer.map_or_else(String::new, |v| format!(",\"viewer\":{v}"));
    format!(
        "{{\"format\":\"{FORMAT}\",\"id\":{id},\"kind\":\"{kind}\",\"at_secs\":{at}{viewer},\"run\":{run},\"snapshot\":{snapshot},\"points\":{points},\"screen\":{screen}}}"
    )
}

/// The stream's last event's JSON.
pub fn end(id: u64, at_secs: f64, text: &str) -> String {
    serde_json::json!({
        "format": FORMAT,
        "id": id,
        "kind": "end",
        "at_secs": at_secs,
        "text": text,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(key: &str, name: &str, seconds: std::ops::RangeInclusive<u64>) -> Points {
        let mut map = BTreeMap::new();
        map.insert(
            name.to_string(),
            seconds.clone().map(|s| [s, 1, 10, 20, 30]).collect(),
        );
        let mut p = Points::default();
        p.parts.insert(key.into(), Part::Series(map));
        p.upto.insert(key.into(), *seconds.end());
        p
    }

    #[test]
    fn kept_points_are_the_last_ten_minutes_of_each_series() {
        let mut kept = Kept::default();
        kept.add(&points("kinesis", "EFO", 0..=9));
        kept.add(&points("kinesis", "EFO", 10..=700));
        let all = kept.points();
        let Some(Part::Series(map)) = all.parts.get("kinesis") else {
            panic!("no kinesis part: {:?}", all.parts.keys());
        };
        let pts = &map["EFO"];
        assert_eq!(pts.len(), KEPT_SECONDS as usize);
        assert_eq!(pts.first().unwrap()[0], 101);
        assert_eq!(pts.last().unwrap()[0], 700);
        assert_eq!(all.upto["kinesis"], 700);
    }

    #[test]
    fn an_envelope_is_one_json_object_with_its_parts() {
        let text = envelope(7, "tick", 1.5, Some(3), "{}", "{\"a\":1}", "{}", "{}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["format"], FORMAT);
        assert_eq!(v["id"], 7);
        assert_eq!(v["kind"], "tick");
        assert_eq!(v["at_secs"], 1.5);
        assert_eq!(v["viewer"], 3);
        assert_eq!(v["snapshot"]["a"], 1);
        assert!(!text.contains('\n'));
    }
}
