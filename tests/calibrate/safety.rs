//! What a calibration leaves on its target: nothing after Ctrl-C, nothing when `--max-cost`
//! refuses it, as `latlab cleanup` (which finds a run's resources by their tags) sees it.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{emulate, latlab, output, with_credentials};

fn leftovers(url: &str) -> String {
    let (ok, out, err) =
        output(with_credentials(&mut latlab()).args(["cleanup", "--endpoint-url", url]));
    assert!(ok, "{out}\n{err}");
    format!("{out}{err}")
}

#[test]
fn ctrl_c_during_a_calibration_deletes_what_it_created() {
    let _alone = crate::alone();
    let (_emulator, url) = emulate(&[]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("measured.toml");
    let mut child = with_credentials(&mut latlab())
        .args(["calibrate", "--endpoint-url", &url, "--samples", "400"])
        .args([
            "--services",
            "kinesis,sqs",
            "--output",
            file.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    // The stream exists: interrupt while the probe runs.
    while !seen.contains("created stream") && Instant::now() < deadline {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        seen.push_str(&line);
    }
    assert!(seen.contains("created stream latlab-calibrate-"), "{seen}");
    std::thread::sleep(Duration::from_secs(2));
    let pid = child.id().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "an interrupted calibration fails: {seen}{rest}"
    );
    assert!(
        rest.contains("interrupted: deleting what calibrate created"),
        "{rest}"
    );
    assert!(rest.contains("deleted stream latlab-calibrate-"), "{rest}");
    assert!(rest.contains("no profile written"), "{rest}");
    assert!(
        !file.exists(),
        "no profile is written from an interrupted calibration"
    );
    // It never reached SQS, and the stream is gone: nothing for cleanup to find.
    assert!(!rest.contains("created queue"), "{rest}");
    let left = leftovers(&url);
    assert!(left.contains("nothing latlab left to delete"), "{left}");
}

#[test]
fn a_calibration_over_max_cost_creates_nothing() {
    let _alone = crate::alone();
    let (_emulator, url) = emulate(&[]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("measured.toml");
    let (ok, _, err) = output(
        with_credentials(&mut latlab())
            .args([
                "calibrate",
                "--endpoint-url",
                &url,
                "--services",
                "kinesis,sqs,dynamodb",
            ])
            .args(["--max-cost", "0.001", "--output", file.to_str().unwrap()]),
    );
    assert!(!ok);
    // The plan came first, priced; then the refusal.
    assert!(err.contains("calibrate creates on "), "{err}");
    assert!(err.contains("Kinesis stream latlab-calibrate-"), "{err}");
    assert!(err.contains("total at list price: $0.01"), "{err}");
    assert!(
        err.contains("is over --max-cost $0.0010: nothing was created"),
        "{err}"
    );
    assert!(!err.contains("created stream"), "{err}");
    assert!(!file.exists());
    let left = leftovers(&url);
    assert!(left.contains("nothing latlab left to delete"), "{left}");
}

#[test]
fn bad_calibrate_flags_are_named() {
    // Run in a directory of the test's own: a flag that stopped being refused would otherwise
    // write its profile into the checkout.
    let dir = tempfile::tempdir().unwrap();
    let bad = |args: &[&str]| {
        let (ok, _, err) = output(latlab().current_dir(dir.path()).arg("calibrate").args(args));
        assert!(!ok);
        err
    };
    let e = bad(&["--services", "kinesis,echo", "--output", "x.toml"]);
    assert!(
        e.contains("--services: 'echo' is not a service calibrate probes; valid: kinesis, s3, redis, sqs, dynamodb"),
        "{e}"
    );
    let e = bad(&["--samples", "5", "--output", "x.toml"]);
    assert!(
        e.contains("--samples must be between 20 and 2000, got 5"),
        "{e}"
    );
    let e = bad(&["--output", "x.json"]);
    assert!(e.contains("--output x.json must be a .toml file"), "{e}");
}
