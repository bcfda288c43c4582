//! A recording played back: `latlab replay DIR --headless` prints the tables the live run
//! printed, `latlab report` and `latlab replay` read a recording cut short by a kill up to its
//! last whole second, and each damaged or wrong input is one line naming the file.

use crate::common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::latlab_output as latlab;

/// A short demo run recorded in `dir`; its printed tables (text) are returned.
fn record(dir: &std::path::Path, extra: &[&str]) -> String {
    let mut args = vec![
        "run",
        "demo",
        "--duration",
        "5s",
        "--quiet",
        "--limit",
        "consumer_activation=0s",
        "--record",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let (ok, out, err) = latlab(&args);
    assert!(ok, "{err}");
    out
}

#[test]
fn a_replay_prints_the_tables_the_live_run_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rec");
    // Two pollers on the shard: throttle bursts to record.
    let live = record(
        &dir,
        &[
            "--fault",
            "kinesis.internal-failure:operation=GetRecords,every=2s",
        ],
    );
    let d = dir.to_str().unwrap();
    let (ok, replayed, err) = latlab(&["replay", d, "--headless"]);
    assert!(ok, "{err}");
    assert_eq!(replayed, live, "the replay's tables are the live run's");
    for format in ["markdown", "csv"] {
        let (_, a, _) = latlab(&["report", d, "--format", format]);
        let (_, b, _) = latlab(&["replay", d, "--headless", "--format", format]);
        assert_eq!(a, b, "{format}");
    }
    let (_, json, _) = latlab(&["replay", d, "--headless", "--format", "json"]);
    assert_eq!(
        json,
        std::fs::read_to_string(dir.join("report.json")).unwrap()
    );

    // Earlier moments: the figures of that second, said to be so, counts that add up.
    let (ok, early, err) = latlab(&["replay", d, "--headless", "--at", "3s", "--format", "json"]);
    assert!(ok, "{err}");
    let early: serde_json::Value = serde_json::from_str(&early).unwrap();
    let problems = early["problems"].to_string();
    assert!(problems.contains("replayed at 0:00:0"), "{problems}");
    let end: serde_json::Value = serde_json::from_str(&json).unwrap();
    let acked = |r: &serde_json::Value| r["snapshot"]["kinesis"]["producer"]["acked"].as_u64();
    assert!(acked(&early) < acked(&end), "{early}");
    for c in early["snapshot"]["kinesis"]["consumers"]
        .as_array()
        .unwrap()
    {
        let n = &c["counts"];
        assert_eq!(
            n["received"].as_u64().unwrap()
                + n["lost"].as_u64().unwrap()
                + n["unread"].as_u64().unwrap(),
            n["acknowledged"].as_u64().unwrap(),
            "{c}"
        );
    }

    // The events: each consumer's status, and the faults that fired.
    let events = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
    for want in [
        r#""event":"status","series":"get_records","text":"reading"#,
        r#""event":"fault","kind":"kinesis.internal-failure""#,
    ] {
        assert!(events.contains(want), "{want} in:\n{events}");
    }
    // One frame a second, each about the same size: the recording grows at a steady rate.
    let frames = std::fs::read_to_string(dir.join("frames.jsonl")).unwrap();
    let sizes: Vec<usize> = frames.lines().map(str::len).collect();
    assert!(sizes.len() >= 5, "{sizes:?}");
    let later = &sizes[2..sizes.len() - 1];
    let (lo, hi) = (later.iter().min().unwrap(), later.iter().max().unwrap());
    assert!(*hi < lo + lo / 4, "frames of steady size: {sizes:?}");

    // Before the first frame: the first frame's figures, said to be (they were shown silently).
    let (ok, out, err) = latlab(&["replay", d, "--headless", "--at", "0s"]);
    assert!(ok, "{err}");
    assert!(
        err.contains("--at 0:00:00: the recording's first second is 0:00:0"),
        "{err}"
    );
    assert!(out.contains("replayed at 0:00:0"), "{out}");
    // An early moment has no achieved rate yet: it says so, never 0.0/s.
    let (ok, out, err) = latlab(&["replay", d, "--headless", "--at", "1s"]);
    assert!(ok, "{err}");
    assert!(!out.contains("achieved 0.0/s"), "{out}");

    // Bad moments and speeds.
    let (ok, _, err) = latlab(&["replay", d, "--headless", "--at", "10m"]);
    assert!(
        !ok && err.contains("--at 0:10:00: the recording") && err.contains("runs to"),
        "{err}"
    );
    let (ok, _, err) = latlab(&["replay", d, "--speed", "3"]);
    assert!(
        !ok && err.contains("valid speeds are 1, 2, 5, 10, 30, 60"),
        "{err}"
    );
    let (ok, _, err) = latlab(&["replay", d]);
    assert!(
        !ok && err.contains("a replay needs a terminal") && err.contains("--headless"),
        "{err}"
    );
}

#[test]
fn a_recording_cut_short_by_a_kill_is_read_to_its_last_whole_second() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rec");
    let mut child = common::latlab()
        .args(["run", "demo", "--duration", "60s", "--quiet", "--record"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while std::fs::read_to_string(dir.join("frames.jsonl")).map_or(0, |f| f.lines().count()) < 4 {
        assert!(t.elapsed() < Duration::from_secs(60), "no frames written");
        std::thread::sleep(Duration::from_millis(200));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!dir.join("report.json").exists());
    // As if the kill came while a frame was being written.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("frames.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut f, br#"{"at_secs":9.0,"snapshot":{"scen"#).unwrap();
    drop(f);
    let d = dir.to_str().unwrap();
    let (ok, text, err) = latlab(&["report", d]);
    assert!(ok, "{err}");
    assert!(
        text.contains("the recording stops at 0:00:0")
            && text.contains("the run did not end")
            && text.contains("bytes of a frame it was writing are left out"),
        "{text}"
    );
    assert!(text.contains("every record accounted for"), "{text}");
    let (ok, replayed, err) = latlab(&["replay", d, "--headless"]);
    assert!(ok, "{err}");
    assert_eq!(replayed, text);
}

#[test]
fn a_damaged_or_foreign_recording_is_one_line_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rec");
    record(&dir, &[]);
    let d = dir.to_str().unwrap();

    // Not a recording.
    let (ok, _, err) = latlab(&["replay", tmp.path().to_str().unwrap()]);
    assert!(
        !ok && err.contains("not a recording (no recording.json)"),
        "{err}"
    );

    // A damaged frame in the middle: named by its line.
    let frames = std::fs::read_to_string(dir.join("frames.jsonl")).unwrap();
    let mut lines: Vec<&str> = frames.lines().collect();
    lines[1] = "{not json";
    std::fs::write(dir.join("frames.jsonl"), lines.join("\n") + "\n").unwrap();
    let (ok, _, err) = latlab(&["replay", d, "--headless"]);
    assert!(!ok && err.contains("frames.jsonl line 2:"), "{err}");
    std::fs::write(dir.join("frames.jsonl"), &frames).unwrap();

    // From a newer latlab.
    let info = std::fs::read_to_string(dir.join("recording.json")).unwrap();
    std::fs::write(
        dir.join("recording.json"),
        info.replace("latlab-recording/1", "latlab-recording/9"),
    )
    .unwrap();
    let (ok, _, err) = latlab(&["replay", d, "--headless"]);
    assert!(
        !ok && err.contains("recording.json: its schema is 'latlab-recording/9'; this latlab reads latlab-recording/1"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    // Made before replay existed: no frames.
    std::fs::write(dir.join("recording.json"), &info).unwrap();
    std::fs::remove_file(dir.join("frames.jsonl")).unwrap();
    let (ok, _, err) = latlab(&["replay", d, "--headless"]);
    assert!(
        !ok && err.contains("frames.jsonl: cannot read it") && err.contains("latlab report"),
        "{err}"
    );
    let (ok, _, err) = latlab(&["report", d]);
    assert!(ok, "its report still prints: {err}");
}

/// A recording made by latlab before the labs became one registry and one interface (commit
/// e1ba53f; tests/fixtures/recording-e1ba53f/README.md): today's `latlab report` and
/// `latlab replay` read it, and print and draw exactly what that commit's binary did.
#[test]
fn a_recording_made_before_the_redesign_reads_as_it_did() {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recording-e1ba53f");
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("recording");
    std::fs::create_dir_all(rec.join("hlog")).unwrap();
    for dir in ["", "hlog"] {
        for entry in std::fs::read_dir(fixture.join("recording").join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                std::fs::copy(&path, rec.join(dir).join(path.file_name().unwrap())).unwrap();
            }
        }
    }
    let d = rec.to_str().unwrap();
    let expected =
        |name: &str| std::fs::read_to_string(fixture.join("expected").join(name)).unwrap();
    let svg = tmp.path().join("overview.svg");
    let runs: [(&str, Vec<&str>); 3] = [
        ("report.txt", vec!["report", d]),
        (
            "report.json",
            vec!["replay", d, "--headless", "--format", "json"],
        ),
        ("at-3s.txt", vec!["replay", d, "--headless", "--at", "3s"]),
    ];
    for (name, args) in runs {
        let (ok, out, err) = latlab(&args);
        assert!(ok, "{args:?}: {err}");
        assert!(
            out == expected(name),
            "{args:?} prints other than {name}:\n{out}"
        );
    }
    let (ok, _, err) = latlab(&[
        "replay",
        d,
        "--screenshot",
        svg.to_str().unwrap(),
        "--at",
        "4s",
        "--size",
        "200x60",
        "--theme",
        "dark",
    ]);
    assert!(ok, "{err}");
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(
        drawn == expected("overview-4s.svg"),
        "the overview at 4 s is drawn otherwise than before"
    );
}

/// The same old recording's sparklines read back through the labs (`Lab::history_of_frames`):
/// every point the frames hold comes back under its series, the shard's GetRecords rate
/// included, as the file has them.
#[test]
fn an_old_recordings_sparklines_come_back_as_its_frames_hold_them() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/recording-e1ba53f/recording");
    // The file read independently: each second's GetRecords rate, and each Kinesis consumer's
    // records counted over its points.
    let mut rates = std::collections::BTreeMap::new();
    let mut counts = std::collections::BTreeMap::<String, u64>::new();
    let mut upto = 0;
    for line in std::fs::read_to_string(dir.join("frames.jsonl"))
        .unwrap()
        .lines()
    {
        let frame: serde_json::Value = serde_json::from_str(line).unwrap();
        let points = &frame["points"];
        for pair in points["read_rate"].as_array().into_iter().flatten() {
            rates.insert(pair[0].as_u64().unwrap(), pair[1].as_f64().unwrap());
        }
        for (name, pts) in points["kinesis"].as_object().into_iter().flatten() {
            let n: u64 = pts
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p[1].as_u64().unwrap())
                .sum();
            *counts.entry(name.clone()).or_default() += n;
        }
        upto = points["upto"]["kinesis"].as_u64().unwrap_or(upto);
    }
    let rec = latlab::record::Recording::open(&dir).unwrap();
    let moment = latlab::tui::moment::Moment::of_recording(&rec, rec.len() - 1, 60).unwrap();
    let k = moment.history.kinesis.expect("the Kinesis lab's history");
    let expected: Vec<f64> = (0..=upto)
        .map(|s| rates.get(&s).copied().unwrap_or(0.0))
        .collect();
    assert_eq!(k.read_rate, expected);
    assert!(k.read_rate.iter().any(|r| *r > 0.0), "{:?}", k.read_rate);
    let snapshot = moment.snapshot.kinesis.unwrap();
    for (c, points) in snapshot.consumers.iter().zip(&k.consumers) {
        let got: u64 = points.iter().map(|p| u64::from(p.count)).sum();
        assert_eq!(got, counts[&c.name], "{}", c.name);
        assert!(got > 0, "{}", c.name);
    }
    assert_eq!(k.consumers.len(), counts.len());
    assert_eq!(moment.history.s3.map(|s| s.len()), Some(2));
    assert_eq!(moment.history.redis.map(|r| r.len()), Some(3));
}
