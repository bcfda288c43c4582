//! Many hosts as one host's user meets them, on loopback: what `--record-to` does when the upload
//! fails, and the clear refusals of roles, S3 URLs and host names that cannot work. The hosts
//! themselves, on real network namespaces, are `tests/fleet/fleet_netns.rs`.

use crate::common;

use common::{latlab, latlab_output, with_credentials};

fn run_err(args: &[&str]) -> String {
    let (ok, _, err) = latlab_output(args);
    assert!(!ok, "latlab {} should fail", args.join(" "));
    err
}

/// An upload that fails (the bucket does not exist) keeps the recording, says where it is and
/// what the endpoint answered, and the run exits 1 after printing its report.
#[test]
fn a_failed_upload_keeps_the_recording_and_says_where() {
    let (_guard, url) = common::emulate(&[]);
    let mut c = latlab();
    with_credentials(&mut c);
    let out = c
        .args([
            "run",
            "demo",
            "--duration",
            "3s",
            "--quiet",
            "--endpoint-url",
            &url,
        ])
        .args([
            "--record-to",
            "s3://no-such-bucket/fleet/",
            "--host-name",
            "lone",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stdout.contains("Kinesis"),
        "the report is printed: {stdout}"
    );
    // Another endpoint's arrival stamps are its clock, not this host's: the report bounds it.
    assert!(
        stdout.contains("clock: this host's against the service's arrival stamps: at most "),
        "{stdout}"
    );
    let line = stderr
        .lines()
        .find(|l| l.starts_with("the upload to s3://no-such-bucket/fleet/lone-"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(line.contains("NoSuchBucket"), "{line}");
    let kept = line
        .split("; the recording is kept in ")
        .nth(1)
        .unwrap_or_else(|| panic!("{line}"));
    let dir = std::path::Path::new(kept.trim());
    assert!(dir.join("report.json").is_file(), "{}", dir.display());
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("recording.json")).unwrap())
            .unwrap();
    assert_eq!(info["host"], "lone");
    assert_eq!(info["role"], "both");
    assert!(
        dir.ends_with(format!("latlab-lone-{}", info["run_id"].as_str().unwrap())),
        "{}",
        dir.display()
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn roles_urls_and_host_names_that_cannot_work_are_refused_in_one_line() {
    let err = run_err(&["run", "demo", "--no-producer", "--duration", "2s"]);
    assert!(
        err.contains("--no-producer: the embedded emulator lives and dies with this run")
            && err.contains("--endpoint-url URL"),
        "{err}"
    );
    let err = run_err(&[
        "run",
        "s3-demo",
        "--producer-only",
        "--endpoint-url",
        "http://127.0.0.1:9",
    ]);
    assert!(
        err.contains("--producer-only: the S3 lab does not split into a producer and consumers (the Kinesis lab does)"),
        "{err}"
    );
    let err = run_err(&["run", "demo", "--no-producer", "--producer-only"]);
    assert!(err.contains("cannot be used with"), "{err}");
    let err = run_err(&[
        "run",
        "demo",
        "--record-to",
        "http://bucket/x",
        "--duration",
        "2s",
    ]);
    assert!(
        err.contains("--record-to") && err.contains("not an S3 URL"),
        "{err}"
    );
    let err = run_err(&[
        "run",
        "demo",
        "--record-to",
        "s3://Bucket/x",
        "--duration",
        "2s",
    ]);
    assert!(err.contains("'Bucket' is not a bucket name"), "{err}");
    let err = run_err(&[
        "run",
        "demo",
        "--record-to",
        "s3://runs/x/",
        "--duration",
        "2s",
    ]);
    assert!(
        err.contains("--record-to s3://runs/x/")
            && err.contains("needs the endpoint that holds the bucket"),
        "{err}"
    );
    let err = run_err(&["run", "demo", "--host-name", "a b", "--duration", "2s"]);
    assert!(err.contains("--host-name 'a b'"), "{err}");
    let err = run_err(&["merge", "s3://runs/x/", "-o", "/tmp/never-made-by-latlab"]);
    assert!(
        err.contains("s3:// needs the endpoint that holds the bucket"),
        "{err}"
    );
}

/// With a shared endpoint but no shared stream, a reading host has nothing to read.
#[test]
fn a_role_needs_the_stream_the_hosts_share() {
    let (_guard, url) = common::emulate(&[]);
    let mut c = latlab();
    with_credentials(&mut c);
    let out = c
        .args([
            "run",
            "demo",
            "--no-producer",
            "--duration",
            "2s",
            "--quiet",
        ])
        .args(["--endpoint-url", &url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("--no-producer: the hosts share one stream; name it with --stream NAME"),
        "{err}"
    );
}

/// A scenario's `role` is read, and a wrong one names the valid ones; an empty prefix holds no
/// recording to merge.
#[test]
fn the_scenario_key_and_an_empty_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("reader.toml");
    let demo = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/labs/kinesis/scenarios/demo.toml"
    ))
    .unwrap();
    std::fs::write(
        &file,
        demo.replace("duration = \"2m\"", "duration = \"2m\"\nrole = \"reader\""),
    )
    .unwrap();
    let err = run_err(&["run", "--scenario", file.to_str().unwrap()]);
    assert!(
        err.contains("unknown variant `reader`") && err.contains("`consumers`"),
        "{err}"
    );
    std::fs::write(
        &file,
        demo.replace(
            "duration = \"2m\"",
            "duration = \"2m\"\nrole = \"consumers\"",
        ),
    )
    .unwrap();
    let err = run_err(&["run", "--scenario", file.to_str().unwrap()]);
    assert!(
        err.contains("the scenario's role = \"consumers\": the embedded emulator"),
        "{err}"
    );
    let (_guard, url) = common::emulate(&[]);
    common::make_stream_and_bucket(&url, "unused", "empty-runs");
    let mut c = latlab();
    with_credentials(&mut c);
    let out = c
        .args(["merge", "s3://empty-runs/fleet/", "-o"])
        .arg(dir.path().join("m"))
        .args(["--endpoint-url", &url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("s3://empty-runs/fleet/ holds no recording (0 objects"),
        "{err}"
    );
}

/// A run that cannot start (its endpoint refuses) leaves no empty temporary recording behind.
#[test]
fn a_run_that_cannot_start_leaves_no_temporary_recording() {
    let mut c = latlab();
    with_credentials(&mut c);
    let out = c
        .args(["run", "demo", "--duration", "2s", "--quiet"])
        .args([
            "--endpoint-url",
            "http://127.0.0.1:9",
            "--record-to",
            "s3://runs/x/",
        ])
        .args(["--host-name", "never-started"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let left: Vec<String> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("latlab-never-started-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Two local runs on one machine, merged: both hosts were named `vm`, so every line could be
/// either. Each recording is named apart (host/run id), the runs' different latency profiles
/// are warned of, and the consumers of one run's own embedded emulator are not counted as
/// having lost the other run's records (they could never read them).
#[test]
fn two_local_runs_merged_are_named_apart_and_their_profiles_compared() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    for (rec, profile) in [("a", "seed-tokyo"), ("b", "zero")] {
        let (ok, _, err) = latlab_output(&[
            "run",
            "demo",
            "--duration",
            "3s",
            "--quiet",
            "--host-name",
            "vm",
            "--latency-profile",
            profile,
            "--record",
            &d(rec),
        ]);
        assert!(ok, "{err}");
    }
    let (ok, out, err) = latlab_output(&["merge", &d("a"), &d("b"), "-o", &d("m")]);
    assert!(ok, "{err}");
    let run_id = |rec: &str| {
        let info: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(rec).join("recording.json")).unwrap(),
        )
        .unwrap();
        info["run_id"].as_str().unwrap().to_string()
    };
    let (a, b) = (format!("vm/{}", run_id("a")), format!("vm/{}", run_id("b")));
    assert!(out.contains(&format!("hosts: {a}, {b}\n")), "{out}");
    assert!(
        out.contains(&format!(
            "warning: the recordings were measured with different latency profiles (seed-tokyo on {a}, zero on {b})"
        )),
        "{out}"
    );
    assert!(out.contains(&format!("records of {a}'s producer")), "{out}");
    assert!(
        out.contains(&format!(
            "  {b}: its consumers read an embedded emulator of their own, not this producer's stream: not counted"
        )),
        "{out}"
    );
    // No host is named alone, and no consumer is said to have lost what it could not read.
    assert!(!out.contains("vm Lambda"), "{out}");
    assert!(!out.contains("lost, or unread"), "{out}");
}
