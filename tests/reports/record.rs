//! `latlab run --record DIR` as a user keeps a run: the scenario, one HdrHistogram interval log
//! per series that the crate's own reader decodes to the report's counts, the faults that fired,
//! and the report; and the directories it refuses.

use crate::common;

use std::process::Command;

use hdrhistogram::serialization::Deserializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

use common::latlab_output as latlab;

#[test]
fn a_recorded_run_keeps_every_value_in_its_interval_logs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rec");
    let (ok, _, err) = latlab(&[
        "run",
        "demo",
        "--duration",
        "4s",
        "--quiet",
        "--latency-profile",
        "zero",
        "--limit",
        "consumer_activation=0s",
        "--fault",
        "kinesis.stall:operation=GetRecords,every=1s,for=300ms",
        "--record",
        dir.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let scenario = std::fs::read_to_string(dir.join("scenario.toml")).unwrap();
    assert!(scenario.contains("name = \"demo\""), "{scenario}");
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("recording.json")).unwrap())
            .unwrap();
    assert_eq!(info["schema"], "latlab-recording/1");
    assert_eq!(info["scenario"], "demo");
    // Each consumer's log decodes, interval by interval, to the values its report counted.
    let consumers = report["snapshot"]["kinesis"]["consumers"]
        .as_array()
        .unwrap();
    assert_eq!(consumers.len(), 4);
    for c in consumers {
        let name = c["name"].as_str().unwrap();
        let slug: String = name
            .chars()
            .map(|ch| {
                if ch.is_ascii_alphanumeric() || "-_.".contains(ch) {
                    ch
                } else {
                    '_'
                }
            })
            .collect();
        let file = dir
            .join("hlog")
            .join(format!("kinesis.{slug}.arrival_to_receive.hlog"));
        let text = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut total = 0u64;
        let mut intervals = 0;
        let mut d = Deserializer::new();
        for entry in IntervalLogIterator::new(&text) {
            if let LogEntry::Interval(i) = entry.unwrap() {
                assert_eq!(
                    i.tag().map(|t| t.as_str().to_string()),
                    Some(format!("kinesis.{slug}.arrival_to_receive"))
                );
                assert_eq!(i.duration().as_secs(), 1);
                let bytes = base64_decode(i.encoded_histogram());
                let h: hdrhistogram::Histogram<u64> =
                    d.deserialize(&mut std::io::Cursor::new(bytes)).unwrap();
                total += h.len();
                intervals += 1;
            }
        }
        let counted = c["arrival_to_receive"]["count"].as_u64().unwrap();
        assert!(counted > 0, "{name}");
        assert_eq!(total, counted, "{name}: {intervals} intervals");
    }
    // The ecosystem's own reader (Python's hdrh, from PyPI) sees the same figures, to the
    // histogram's precision.
    let py = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/hdrh_read.py"
        ))
        .arg(&dir)
        .output()
        .expect("python3 is required for this test");
    assert!(
        py.status.success(),
        "the Python hdrhistogram package is required (python3 -m pip install hdrhistogram; scripts/test does this): {}",
        String::from_utf8_lossy(&py.stderr)
    );
    let seen: serde_json::Value = serde_json::from_slice(&py.stdout).unwrap();
    for c in consumers {
        let slug: String = c["name"]
            .as_str()
            .unwrap()
            .chars()
            .map(|ch| {
                if ch.is_ascii_alphanumeric() || "-_.".contains(ch) {
                    ch
                } else {
                    '_'
                }
            })
            .collect();
        let py = &seen[format!("kinesis.{slug}.arrival_to_receive")];
        let ours = &c["arrival_to_receive"];
        assert_eq!(py["count"], ours["count"], "{slug}: {py} vs {ours}");
        for (p, q) in [
            ("p50", "p50_us"),
            ("p90", "p90_us"),
            ("p99", "p99_us"),
            ("max", "max_us"),
        ] {
            let (a, b) = (py[p].as_f64().unwrap(), ours[q].as_f64().unwrap());
            // Three significant digits: two readings of one bucket differ by at most 0.1%.
            assert!(
                (a - b).abs() <= b * 0.001 + 1.0,
                "{slug} {p}: Python's hdrh says {a}, latlab {b}"
            );
        }
    }

    // One event line per fault that fired.
    let events = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
    let fired: u64 = report["snapshot"]["faults"]["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["fired"].as_u64().unwrap())
        .sum();
    assert!(fired >= 2);
    let faults: Vec<&str> = events
        .lines()
        .filter(|l| l.contains(r#""event":"fault""#))
        .collect();
    assert_eq!(faults.len() as u64, fired, "{events}");
    for line in faults {
        let e: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(e["kind"], "kinesis.stall");
        assert!(e["at_secs"].as_f64().unwrap() > 0.0);
    }

    // The same directory again: refused, nothing overwritten.
    let (ok, _, err) = latlab(&[
        "run",
        "demo",
        "--duration",
        "1s",
        "--record",
        dir.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("the directory is not empty; name a new or empty one"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("scenario.toml")).unwrap(),
        scenario
    );
    // A directory that cannot be made.
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let below = file.join("rec");
    let (ok, _, err) = latlab(&[
        "run",
        "demo",
        "--duration",
        "1s",
        "--record",
        below.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cannot create the directory"), "{err}");
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

#[test]
fn a_recording_prints_the_tables_its_run_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rec");
    let live = tmp.path().join("live.txt");
    let (ok, _, err) = latlab(&[
        "run",
        "demo",
        "--duration",
        "3s",
        "--quiet",
        "--latency-profile",
        "zero",
        "--record",
        dir.to_str().unwrap(),
        "-o",
        live.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let (ok, replayed, err) = latlab(&["report", dir.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(replayed, std::fs::read_to_string(&live).unwrap());
    for format in ["markdown", "csv", "json"] {
        let (ok, out, err) = latlab(&["report", dir.to_str().unwrap(), "--format", format]);
        assert!(ok && !out.is_empty(), "{format}: {err}");
    }
    // What it says of what it cannot read, in one line each.
    std::fs::write(
        dir.join("cut.json"),
        &std::fs::read_to_string(dir.join("report.json")).unwrap()[..200],
    )
    .unwrap();
    let (ok, _, err) = latlab(&["report", dir.join("cut.json").to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("is not a whole JSON report") && err.contains("cut short"),
        "{err}"
    );
    let newer = std::fs::read_to_string(dir.join("report.json"))
        .unwrap()
        .replace("latlab-run-report/2", "latlab-run-report/9");
    std::fs::write(dir.join("newer.json"), newer).unwrap();
    let (ok, _, err) = latlab(&["report", dir.join("newer.json").to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("its schema is 'latlab-run-report/9'; this latlab reads latlab-run-report/2"),
        "{err}"
    );
    // Without report.json, the last frame (written as the run ended) gives the same tables.
    std::fs::remove_file(dir.join("report.json")).unwrap();
    let (ok, from_frames, err) = latlab(&["report", dir.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(from_frames, std::fs::read_to_string(&live).unwrap());
    let (ok, _, err) = latlab(&["report", tmp.path().to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("not a recording"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
