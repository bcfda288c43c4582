//! `latlab compare` and `latlab merge` as a user runs them, on real recordings made by the built
//! binary: a run against itself, two latency profiles, the Markdown and JSON forms, a merge whose
//! figures are those of the inputs' histograms added, and each bad input's one line.
//!
//! Three short runs of the demo scenario are made once, at the same time, and shared by the tests.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

use common::latlab_output as latlab;

fn ok(args: &[&str]) -> String {
    let (ok, out, err) = latlab(args);
    assert!(ok, "latlab {args:?} failed: {err}");
    out
}

/// Fails, with one line on stderr, which is returned.
fn refused(args: &[&str]) -> String {
    let (ok, out, err) = latlab(args);
    assert!(!ok, "latlab {args:?} should fail; it printed {out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

struct Runs {
    _tmp: tempfile::TempDir,
    /// Two runs with the zero latency profile, made at the same time.
    zero: PathBuf,
    zero2: PathBuf,
    /// One with seed-tokyo.
    tokyo: PathBuf,
}

/// The three recordings, made once (concurrently: a run takes its 6 s and a few of set-up).
fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = |n: &str| tmp.path().join(n);
        let children: Vec<_> = [("zero", "zero"), ("zero2", "zero"), ("tokyo", "seed-tokyo")]
            .iter()
            .map(|(name, profile)| {
                common::latlab()
                    .args(["run", "demo", "--duration", "6s", "--quiet"])
                    .args(["--latency-profile", profile, "--record"])
                    .arg(dir(name))
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Runs {
            zero: dir("zero"),
            zero2: dir("zero2"),
            tokyo: dir("tokyo"),
            _tmp: tmp,
        }
    })
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A comparison's figure: `series` (its subject), `figure` (p50 ...), from the JSON form.
fn figure<'a>(c: &'a serde_json::Value, subject: &str, fig: &str) -> &'a serde_json::Value {
    c["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["subject"] == subject)
        .unwrap_or_else(|| panic!("no series {subject} in {c}"))["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["figure"] == fig)
        .unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// Every interval of a log, read with the crate's own reader.
fn intervals(file: &Path) -> Vec<Histogram<u64>> {
    use base64::Engine;
    let bytes = std::fs::read(file).unwrap();
    let mut d = Deserializer::new();
    IntervalLogIterator::new(&bytes)
        .filter_map(|e| match e.unwrap() {
            LogEntry::Interval(i) => Some(
                d.deserialize(&mut std::io::Cursor::new(
                    base64::engine::general_purpose::STANDARD
                        .decode(i.encoded_histogram())
                        .unwrap(),
                ))
                .unwrap(),
            ),
            _ => None,
        })
        .collect()
}

fn sum(hists: &[Histogram<u64>]) -> Histogram<u64> {
    let mut total = Histogram::new_from(&hists[0]);
    for h in hists {
        total.add(h).unwrap();
    }
    total
}

const FAN_OUT: [&str; 2] = ["Lambda EFO", "SDK subscribe_to_shard"];
const CONSUMERS: [&str; 4] = [
    "Lambda EFO",
    "SDK subscribe_to_shard",
    "get_records",
    "Lambda standard iterator",
];

#[test]
fn a_recording_against_itself_is_within_noise_and_reads_as_its_report() {
    let r = runs();
    let text = ok(&["compare", s(&r.zero), s(&r.zero)]);
    // What is compared: both inputs' scenario, backend and start.
    let info = json(&std::fs::read_to_string(r.zero.join("recording.json")).unwrap());
    assert!(text.starts_with("latlab compare: demo\n"), "{text}");
    assert_eq!(
        text.matches(info["started"].as_str().unwrap()).count(),
        2,
        "{text}"
    );
    assert_eq!(
        text.matches("embedded emulator, latency profile zero")
            .count(),
        2
    );
    let figure_rows: Vec<&str> = text
        .lines()
        .filter(|l| {
            [" p50 ", " p90 ", " p99 ", " max "]
                .iter()
                .any(|f| l.contains(f))
        })
        .collect();
    assert_eq!(figure_rows.len(), 4 * CONSUMERS.len(), "{text}");
    // A run against itself is never larger than its own noise. A consumer that received
    // records in fewer than 5 seconds of a short run (Lambda polling once a second, on a loaded
    // machine) has its noise unknown, which says so; the rest are within noise.
    for row in &figure_rows {
        assert!(
            row.contains(" x1.00 ")
                && (row.ends_with("within noise") || row.contains("noise unknown (")),
            "{row}"
        );
    }
    let within = figure_rows
        .iter()
        .filter(|r| r.ends_with("within noise"))
        .count();
    assert!(within * 2 >= figure_rows.len(), "{text}");
    // The same inputs, the same verdicts and intervals.
    assert_eq!(text, ok(&["compare", s(&r.zero), s(&r.zero)]));

    // The figures are the interval logs added together, and equal the report's.
    let out = json(&ok(&[
        "compare",
        s(&r.zero),
        s(&r.zero),
        "--format",
        "json",
    ]));
    assert_eq!(out["schema"], "latlab-compare/1");
    let report = json(&std::fs::read_to_string(r.zero.join("report.json")).unwrap());
    let c = &out["comparisons"][0];
    for consumer in report["snapshot"]["kinesis"]["consumers"]
        .as_array()
        .unwrap()
    {
        let name = consumer["name"].as_str().unwrap();
        let ours = &consumer["arrival_to_receive"];
        assert!(ours["count"].as_u64().unwrap() > 0, "{name}");
        for (fig, field) in [
            ("count", "count"),
            ("p50", "p50_us"),
            ("p90", "p90_us"),
            ("p99", "p99_us"),
            ("max", "max_us"),
        ] {
            let f = figure(c, name, fig);
            assert_eq!(f["a"], ours[field], "{name} {fig}: {f}");
            assert_eq!(f["b"], ours[field], "{name} {fig}");
            assert_eq!(f["ratio"].as_f64(), Some(1.0), "{name} {fig}");
        }
    }
}

#[test]
fn zero_latency_against_seed_tokyo_is_larger_than_noise_for_fan_out() {
    let r = runs();
    let text = ok(&["compare", s(&r.zero), s(&r.tokyo)]);
    assert!(
        text.contains("embedded emulator, latency profile zero")
            && text.contains("embedded emulator, latency profile seed-tokyo"),
        "{text}"
    );
    let out = json(&ok(&[
        "compare",
        s(&r.zero),
        s(&r.tokyo),
        "--format",
        "json",
    ]));
    let c = &out["comparisons"][0];
    assert_eq!((c["a"].as_str(), c["b"].as_str()), (Some("A"), Some("B")));
    for consumer in FAN_OUT {
        for fig in ["p50", "p90"] {
            let f = figure(c, consumer, fig);
            // Enhanced fan-out's push: about 70 ms under seed-tokyo, about 1 ms under zero.
            assert!(f["ratio"].as_f64().unwrap() > 5.0, "{consumer} {fig}: {f}");
            assert_eq!(f["verdict"], "larger_than_noise", "{consumer} {fig}: {f}");
            let iv = f["interval"].as_array().unwrap();
            assert!(iv[0].as_f64().unwrap() > 1.0, "{consumer} {fig}: {f}");
        }
        // The text says the same on the consumer's p50 row.
        let block: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with(consumer))
            .take(5)
            .collect();
        assert!(block[1].contains(" p50 "), "{block:?}");
        assert!(block[1].ends_with("larger than noise"), "{block:?}");
    }

    // Markdown: the same tables as pipe tables.
    let md = ok(&["compare", s(&r.zero), s(&r.tokyo), "--format", "markdown"]);
    assert!(md.starts_with("## latlab compare: demo\n"), "{md}");
    assert!(md.contains("\n### Kinesis: arrival -> receive"), "{md}");
    assert!(
        md.contains("| consumer | figure | A | B | B/A | 95% interval | verdict |"),
        "{md}"
    );
    assert!(md.contains("| larger than noise |"), "{md}");

    // A report file has figures but no intervals: the noise is not guessed.
    let report = r.tokyo.join("report.json");
    let text = ok(&["compare", s(&r.zero), s(&report)]);
    assert!(
        text.contains(
            "noise unknown (no per-second intervals: compare recordings); B is a report file"
        ),
        "{text}"
    );
    assert!(
        !text
            .lines()
            .any(|l| l.ends_with("larger than noise") || l.ends_with("within noise")),
        "{text}"
    );
    let out = json(&ok(&[
        "compare",
        s(&r.zero),
        s(&report),
        "--format",
        "json",
    ]));
    let f = figure(&out["comparisons"][0], "Lambda EFO", "p50");
    assert_eq!(f["verdict"], "noise_unknown");
    assert!(f["interval"].is_null());
    assert_eq!(out["inputs"][1]["kind"], "report");

    // More than two inputs: each against the first; -o writes the same document.
    let file = r._tmp.path().join("three.txt");
    let (ok3, out3, err) = latlab(&[
        "compare",
        s(&r.zero),
        s(&r.zero2),
        s(&r.tokyo),
        "-o",
        s(&file),
    ]);
    assert!(ok3 && out3.is_empty(), "{err}");
    let three = std::fs::read_to_string(&file).unwrap();
    assert!(
        three.contains("B against A") && three.contains("C against A"),
        "{three}"
    );
    assert!(three.contains("\nC      recording "), "{three}");
}

#[test]
fn a_merge_adds_the_recordings_interval_by_interval() {
    let r = runs();
    let tmp = tempfile::tempdir().unwrap();
    let merged = tmp.path().join("merged");
    let said = ok(&["merge", s(&r.zero), s(&r.zero2), "-o", s(&merged)]);
    assert!(said.starts_with("merged 2 recordings into"), "{said}");
    let info = json(&std::fs::read_to_string(merged.join("recording.json")).unwrap());
    assert_eq!(info["schema"], "latlab-recording/1");
    assert_eq!(info["scenario"], "demo");
    let sources = info["merged_from"].as_array().unwrap();
    assert_eq!(sources.len(), 2);
    for (src, dir) in sources.iter().zip([&r.zero, &r.zero2]) {
        let own = json(&std::fs::read_to_string(dir.join("recording.json")).unwrap());
        assert_eq!(src["started"], own["started"]);
        assert_eq!(src["backend"], own["backend"]);
        assert!(
            src["path"]
                .as_str()
                .unwrap()
                .ends_with(s(dir.file_name().unwrap().as_ref()))
        );
    }
    let out = json(&ok(&[
        "compare",
        s(&r.zero),
        s(&merged),
        "--format",
        "json",
    ]));
    assert_eq!(out["inputs"][1]["kind"], "merged_recording");
    let c = &out["comparisons"][0];
    let reports: Vec<serde_json::Value> = [&r.zero, &r.zero2]
        .iter()
        .map(|d| json(&std::fs::read_to_string(d.join("report.json")).unwrap()))
        .collect();
    for subject in CONSUMERS {
        let slug: String = subject
            .chars()
            .map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '_' })
            .collect();
        let name = format!("kinesis.{slug}.arrival_to_receive.hlog");
        // The inputs' logs and the merged one, read independently with the crate's reader.
        let mut both = intervals(&r.zero.join("hlog").join(&name));
        both.extend(intervals(&r.zero2.join("hlog").join(&name)));
        let merged_log = intervals(&merged.join("hlog").join(&name));
        let (expected, got) = (sum(&both), sum(&merged_log));
        assert!(
            merged_log.len() < both.len(),
            "seconds of both runs were added"
        );
        assert_eq!(got.len(), expected.len());
        // Counts add up to the reports' counts.
        let counted: u64 = reports
            .iter()
            .map(|rep| {
                rep["snapshot"]["kinesis"]["consumers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|c| c["name"] == subject)
                    .unwrap()["arrival_to_receive"]["count"]
                    .as_u64()
                    .unwrap()
            })
            .sum();
        assert_eq!(got.len(), counted, "{subject}");
        assert_eq!(figure(c, subject, "count")["b"].as_u64(), Some(counted));
        for (fig, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)] {
            assert_eq!(got.value_at_quantile(q), expected.value_at_quantile(q));
            assert_eq!(
                figure(c, subject, fig)["b"].as_u64(),
                Some(expected.value_at_quantile(q)),
                "{subject} {fig}"
            );
        }
        assert_eq!(
            figure(c, subject, "max")["b"].as_u64(),
            Some(expected.max())
        );
    }

    // A merge keeps interval logs, not a report: `latlab report` says so.
    let err = refused(&["report", s(&merged)]);
    assert!(
        err.contains("a merge of 2 recordings has their interval logs but no report"),
        "{err}"
    );
    // The target again: not empty, refused, nothing changed.
    let before = std::fs::read_to_string(merged.join("recording.json")).unwrap();
    let err = refused(&["merge", s(&r.zero), s(&r.zero2), "-o", s(&merged)]);
    assert!(
        err.contains(&format!(
            "-o {}: the directory is not empty; name a new or empty one",
            merged.display()
        )),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(merged.join("recording.json")).unwrap(),
        before
    );
    // A target that cannot be made (its parent is a file): refused, nothing left beside it.
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let err = refused(&["merge", s(&r.zero), s(&r.zero2), "-o", s(&file.join("m"))]);
    assert!(err.contains("is not a directory"), "{err}");
    // A report file: not something a merge can add.
    let err = refused(&[
        "merge",
        s(&r.zero),
        s(&r.zero2.join("report.json")),
        "-o",
        s(&tmp.path().join("m2")),
    ]);
    assert!(err.contains("report.json is a report file"), "{err}");
    // Another scenario.
    let other = tmp.path().join("other");
    copy_dir(&r.zero2, &other);
    let text = std::fs::read_to_string(other.join("recording.json"))
        .unwrap()
        .replace("\"scenario\": \"demo\"", "\"scenario\": \"soak\"");
    std::fs::write(other.join("recording.json"), text).unwrap();
    let err = refused(&[
        "merge",
        s(&r.zero),
        s(&other),
        "-o",
        s(&tmp.path().join("m3")),
    ]);
    assert!(
        err.contains(&format!(
            "{} is a run of scenario 'demo' and {} of 'soak'",
            r.zero.display(),
            other.display()
        )),
        "{err}"
    );
    // Nothing written half: only what the test made is there.
    let mut left: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    left.sort();
    assert_eq!(left, ["a-file", "merged", "other"]);
}

#[test]
fn bad_inputs_each_get_one_line_and_a_cut_recording_is_read_up_to_its_cut() {
    let r = runs();
    let tmp = tempfile::tempdir().unwrap();
    // Not a recording.
    let err = refused(&["compare", s(tmp.path()), s(&r.zero)]);
    assert!(
        err.contains(&format!("{}: not a recording", tmp.path().display())),
        "{err}"
    );
    let text_file = tmp.path().join("notes.txt");
    std::fs::write(&text_file, "not json").unwrap();
    let err = refused(&["compare", s(&r.zero), s(&text_file)]);
    assert!(
        err.contains("notes.txt is not a whole JSON report"),
        "{err}"
    );
    let err = refused(&["compare", s(&r.zero), s(&tmp.path().join("nothing"))]);
    assert!(err.contains("nothing: no such file or directory"), "{err}");

    // A newer schema.
    let newer = tmp.path().join("newer");
    copy_dir(&r.zero, &newer);
    let info = std::fs::read_to_string(newer.join("recording.json"))
        .unwrap()
        .replace("latlab-recording/1", "latlab-recording/2");
    std::fs::write(newer.join("recording.json"), info).unwrap();
    let err = refused(&["compare", s(&newer), s(&r.zero)]);
    assert!(
        err.contains("recording.json: its schema is 'latlab-recording/2'; this latlab reads latlab-recording/1"),
        "{err}"
    );

    // Another scenario: refused naming both, unless --any-scenario.
    let other = tmp.path().join("other");
    copy_dir(&r.zero2, &other);
    let info = std::fs::read_to_string(other.join("recording.json"))
        .unwrap()
        .replace("\"scenario\": \"demo\"", "\"scenario\": \"demo-adaptive\"");
    std::fs::write(other.join("recording.json"), info).unwrap();
    let err = refused(&["compare", s(&r.zero), s(&other)]);
    assert!(
        err.contains(&format!(
            "{} is a run of scenario 'demo' and {} of 'demo-adaptive'; add --any-scenario to compare them anyway",
            r.zero.display(),
            other.display()
        )),
        "{err}"
    );
    let text = ok(&["compare", s(&r.zero), s(&other), "--any-scenario"]);
    assert!(
        text.starts_with("latlab compare: demo vs demo-adaptive\n"),
        "{text}"
    );

    // Cut short as a kill leaves it: no report, a log ending mid-line. It is read up to its last
    // whole interval, and the output says what was cut.
    let cut = tmp.path().join("cut");
    copy_dir(&r.zero, &cut);
    std::fs::remove_file(cut.join("report.json")).unwrap();
    let log = cut.join("hlog/kinesis.Lambda_EFO.arrival_to_receive.hlog");
    let bytes = std::fs::read(&log).unwrap();
    let last_line = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    std::fs::write(&log, &bytes[..last_line + 25]).unwrap();
    let whole = intervals(
        &r.zero
            .join("hlog/kinesis.Lambda_EFO.arrival_to_receive.hlog"),
    );
    let kept = sum(&whole[..whole.len() - 1]);
    let text = ok(&["compare", s(&r.zero), s(&cut)]);
    assert!(
        text.contains(&format!(
            "hlog/kinesis.Lambda_EFO.arrival_to_receive.hlog ends in a cut line (25 bytes after its last whole interval, not counted); read its {} whole intervals",
            whole.len() - 1
        )),
        "{text}"
    );
    assert!(
        text.contains("the run did not end (no report.json)"),
        "{text}"
    );
    let out = json(&ok(&["compare", s(&r.zero), s(&cut), "--format", "json"]));
    let f = figure(&out["comparisons"][0], "Lambda EFO", "count");
    assert_eq!(f["b"].as_u64(), Some(kept.len()));
    assert_eq!(
        figure(&out["comparisons"][0], "Lambda EFO", "p50")["b"].as_u64(),
        Some(kept.value_at_quantile(0.5))
    );
    assert_eq!(out["inputs"][1]["ran_from"], "its intervals' span");

    // A series only one input has is listed as such.
    std::fs::remove_file(cut.join("hlog/kinesis.get_records.arrival_to_receive.hlog")).unwrap();
    let text = ok(&["compare", s(&r.zero), s(&cut)]);
    let row = text
        .lines()
        .find(|l| l.starts_with("get_records"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.ends_with("only in A"), "{row}");
}
