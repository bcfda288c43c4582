//! What a run costs, as a user meets it: the report's cost section from a headless run, the
//! figures a price file of one's own gives, and a bad price file's one line.

use crate::common;

use common::latlab;

fn builtin_us_east_1() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/prices/us-east-1.toml"
    ))
    .unwrap()
}

/// The hourly figure of one of a lab's charges in a report's JSON.
fn item(report: &serde_json::Value, lab: &str, what: &str) -> f64 {
    report["cost"]["labs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["lab"] == lab)
        .and_then(|l| {
            l["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["what"] == what)
        })
        .and_then(|i| i["hourly_usd"].as_f64())
        .unwrap_or_else(|| panic!("no {lab} {what} in {}", report["cost"]))
}

#[test]
fn a_run_prices_its_configuration_with_the_file_given_and_its_report_with_its_region() {
    let dir = tempfile::tempdir().unwrap();
    // Shard-hours at $1 and a later date: the figures and the label follow the file.
    let mine = dir.path().join("mine.toml");
    std::fs::write(
        &mine,
        builtin_us_east_1()
            .replace("\nshard_hour = 0.015", "\nshard_hour = 1.0")
            .replace("taken = \"2026-12-01\"", "taken = \"2030-01-01\""),
    )
    .unwrap();
    let out = dir.path().join("report.json");
    let rec = dir.path().join("rec");
    let status = latlab()
        .args(["run", "demo", "--duration", "3s", "--format", "json", "-q"])
        .arg("--prices")
        .arg(&mine)
        .arg("-o")
        .arg(&out)
        .arg("--record")
        .arg(&rec)
        .status()
        .unwrap();
    assert!(status.success());
    // The recording keeps the run's prices: its report and replay price it as it ran.
    for args in [&["report"][..], &["replay", "--headless"]] {
        let again = latlab()
            .args(args)
            .arg(&rec)
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert!(again.status.success(), "{args:?}");
        let v: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
        assert_eq!(
            v["cost"]["label"], "list price, us-east-1, 2030-01-01",
            "{args:?}"
        );
        assert_eq!(item(&v, "Kinesis", "shard-hours"), 1.0, "{args:?}");
    }
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let cost = &run["cost"];
    assert_eq!(cost["region"], "us-east-1");
    assert_eq!(cost["taken"], "2030-01-01");
    assert_eq!(cost["label"], "list price, us-east-1, 2030-01-01");
    assert_eq!(cost["prices"], mine.display().to_string());
    // The demo stream has 1 shard: 1 × $1.00.
    assert_eq!(item(&run, "Kinesis", "shard-hours"), 1.0);
    // 2 fan-out consumers (the SDK's and Lambda's) × 1 shard × $0.015.
    assert!((item(&run, "Kinesis", "enhanced fan-out consumer-shard-hours") - 0.03).abs() < 1e-12);
    // The same report printed again without --prices: the built-in file of its region.
    let again = latlab()
        .args(["report", "--format", "json"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(again.status.success());
    let builtin: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(
        builtin["cost"]["label"],
        "list price, us-east-1, 2026-12-01"
    );
    assert_eq!(builtin["cost"]["prices"], "built-in");
    assert!((item(&builtin, "Kinesis", "shard-hours") - 0.015).abs() < 1e-12);
    // And as text, each figure says what it is.
    let text = latlab().arg("report").arg(&out).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("What it costs: list price, us-east-1, 2026-12-01"),
        "{text}"
    );
    assert!(
        text.contains("Kinesis consumers: latency and cost"),
        "{text}"
    );
}

#[test]
fn a_bad_price_file_stops_the_run_before_it_starts_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        builtin_us_east_1().replace("get_per_1000 = 0.0004", "get_per_1000 = \"free\""),
    )
    .unwrap();
    let out = latlab()
        .args(["run", "demo", "--duration", "1s", "-q", "--prices"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let line = builtin_us_east_1()
        .lines()
        .position(|l| l.starts_with("get_per_1000 = 0.0004"))
        .unwrap()
        + 1;
    assert!(
        err.starts_with(&format!(
            "latlab: error: prices file {}: line {line}, column ",
            bad.display()
        )),
        "{err}"
    );
    assert!(err.contains("(s3.standard.get_per_1000)"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty());
}

/// `latlab prices`: the built-in files, every price of one with whether AWS's own text states it
/// and where it comes from, a price file of one's own, and a region latlab has no file for.
#[test]
fn prices_are_listed_with_what_verifies_each() {
    let (ok, out, err) = common::latlab_output(&["prices"]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with("us-east-1        taken 2026-12-01  5 of 23 prices verified in AWS's own text\nap-northeast-1   taken 2026-12-01  0 of 15 prices verified"),
        "{out}"
    );
    let (ok, out, _) = common::latlab_output(&["prices", "ap-northeast-1"]);
    assert!(ok);
    assert!(
        out.contains(
            "kinesis.shard_hour                        $0.0195  unverified  per shard-hour"
        ),
        "{out}"
    );
    assert!(
        out.contains("To price with figures you have checked"),
        "{out}"
    );
    // A file of one's own, with a price moved out of its unverified table, says so.
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("mine.toml");
    std::fs::write(
        &mine,
        // Checked: its entry leaves the kinesis `unverified` table.
        builtin_us_east_1().replace(
            "\nshard_hour = \"infracost",
            "\n# checked: shard_hour = \"infracost",
        ),
    )
    .unwrap();
    let (ok, out, err) = common::latlab_output(&["prices", mine.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("6 of 23 verified"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("kinesis.shard_hour ") && l.contains(" verified ")),
        "{out}"
    );
    let (ok, _, err) = common::latlab_output(&["prices", "eu-west-9"]);
    assert!(!ok);
    assert_eq!(
        err,
        "latlab: error: no built-in price file for 'eu-west-9': latlab has us-east-1, ap-northeast-1; or name a price file\n"
    );
}
