//! `latlab emulate`'s flags: bad input gets one clear line naming what is wrong and what is valid.

use crate::common;

use common::latlab_output as latlab;

#[test]
fn print_limits_shows_the_documented_defaults_and_overrides() {
    let (ok, out, _) = latlab(&[
        "emulate",
        "--print-limits",
        "--limit",
        "subscription_duration=30s",
    ]);
    assert!(ok);
    assert!(out.starts_with("[kinesis]\n"));
    assert!(out.contains("get_records_calls_per_sec = 5\n"));
    assert!(out.contains("subscription_duration = \"30s\"\n"));
    assert!(out.contains("iterator_expiry = \"5m\"\n"));
}

#[test]
fn list_profiles_names_every_builtin() {
    let (ok, out, _) = latlab(&["emulate", "--list-profiles"]);
    assert!(ok);
    let names: Vec<&str> = out
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(names, ["zero", "same-region", "seed-tokyo"]);
}

#[test]
fn profiles_show_every_parameters_source() {
    let (ok, out, err) = latlab(&["profile", "show", "seed-tokyo"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("kinesis.efo_push  = min 12 ms, median 67.76 ms, p99 119.1 ms (mean 70 ms)"),
        "{out}"
    );
    assert!(
        out.contains("derived from seed cells: kinesis-round1/arrival_to_receive/Lambda EFO/p99"),
        "{out}"
    );
    assert!(out.contains("source: aws-doc"), "{out}");
    let (ok, out, _) = latlab(&["profile", "show", "same-region"]);
    assert!(ok);
    assert!(
        !out.contains("derived from seed cells") && !out.contains("source: seed"),
        "same-region holds no seed figure: {out}"
    );
    assert!(out.contains("0 derived from seed figures"), "{out}");
    let (ok, verbose, _) = latlab(&["emulate", "--list-profiles", "--verbose"]);
    assert!(ok);
    for name in ["zero:", "same-region:", "seed-tokyo:"] {
        assert!(verbose.contains(name), "{verbose}");
    }
    assert!(
        verbose.contains("source: none - nothing added"),
        "{verbose}"
    );
    let (ok, _, err) = latlab(&["profile", "show", "mars"]);
    assert!(!ok);
    assert!(
        err.contains(
            "unknown latency profile 'mars': valid names are zero, same-region, seed-tokyo"
        ),
        "{err}"
    );
}

#[test]
fn the_docs_show_each_profiles_parameters_as_the_code_holds_them() {
    let docs = include_str!("../../docs/latency-profiles.md");
    for name in ["same-region", "seed-tokyo"] {
        let (ok, table, _) = latlab(&["profile", "show", name, "--markdown"]);
        assert!(ok);
        assert!(
            docs.contains(&table),
            "docs/latency-profiles.md is out of date for {name}: paste `latlab profile show {name} --markdown`:\n{table}"
        );
    }
}

#[test]
fn bad_flags_and_files_are_named() {
    let (ok, _, err) = latlab(&[
        "emulate",
        "--print-limits",
        "--limit",
        "subscription_lenght=30s",
    ]);
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(
            "latlab: error: --limit: unknown field `subscription_lenght`, expected one of"
        ),
        "{err}"
    );

    let (ok, _, err) = latlab(&["emulate", "--print-limits", "--limit", "iterator_expiry"]);
    assert!(!ok);
    assert!(
        err.contains("--limit 'iterator_expiry' must be KEY=VALUE"),
        "{err}"
    );

    let (ok, _, err) = latlab(&["emulate", "--print-limits", "--latency-profile", "mars"]);
    assert!(!ok);
    assert!(
        err.contains(
            "unknown latency profile 'mars': valid names are zero, same-region, seed-tokyo"
        ),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("limits.toml");
    std::fs::write(&path, "[kinesis]\nretention = 24\n").unwrap();
    let (ok, _, err) = latlab(&[
        "emulate",
        "--print-limits",
        "--limits",
        path.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains(&format!("limits file {}", path.display())),
        "{err}"
    );
    assert!(
        err.contains("retention") && err.contains("a duration such as"),
        "{err}"
    );

    let (ok, _, err) = latlab(&[
        "emulate",
        "--print-limits",
        "--limits",
        "/nonexistent/limits.toml",
    ]);
    assert!(!ok);
    assert!(
        err.contains("cannot read limits file /nonexistent/limits.toml"),
        "{err}"
    );

    let profile = dir.path().join("p.toml");
    std::fs::write(
        &profile,
        "name = \"p\"\n[kinesis]\nefo_push = { median_ms = 5 }\n",
    )
    .unwrap();
    let (ok, _, err) = latlab(&[
        "emulate",
        "--print-limits",
        "--latency-profile",
        profile.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains(
            "kinesis.efo_push must be { fixed_ms = N }, { median_ms = N, p99_ms = N } (optionally with min_ms and cap_ms) or { mean_ms = N, p99_ms = N }"
        ),
        "{err}"
    );

    let (ok, _, err) = latlab(&["emulate", "--listen", "not-an-address"]);
    assert!(!ok);
    assert!(
        err.contains("invalid value 'not-an-address' for '--listen <ADDR:PORT>'"),
        "{err}"
    );
}

#[test]
fn a_busy_port_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let (ok, _, err) = latlab(&["emulate", "--listen", &addr]);
    assert!(!ok);
    assert!(err.contains(&format!("cannot listen on {addr}")), "{err}");
}

#[test]
fn listening_where_other_hosts_reach_it_needs_allow_remote_and_warns() {
    let (ok, _, err) = latlab(&["emulate", "--listen", "0.0.0.0:0"]);
    assert!(!ok);
    assert!(
        err.contains("--listen 0.0.0.0:0 is reachable from other hosts")
            && err.contains("add --allow-remote"),
        "{err}"
    );
    // With the flag it warns that it has no authentication, then tries to listen. The address
    // here (TEST-NET-1) is on no interface of this machine, so nothing is bound: tests listen on
    // loopback only.
    let (ok, _, err) = latlab(&["emulate", "--listen", "192.0.2.1:4567", "--allow-remote"]);
    assert!(!ok);
    assert!(
        err.contains("warning: listening on 192.0.2.1:4567 with no authentication"),
        "{err}"
    );
    assert!(err.contains("cannot listen on 192.0.2.1:4567"), "{err}");
}

#[test]
fn emulate_injects_the_faults_it_is_given_and_says_which() {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut child = common::latlab()
        .args([
            "emulate",
            "--listen",
            "127.0.0.1:0",
            "--fault",
            "kinesis.service-unavailable:operation=ListStreams,rate=100%",
            "--fault",
            "s3.slow-down:every=1h",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    for _ in 0..4 {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        lines.push(line);
    }
    let text = lines.concat();
    let addr = text
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .unwrap()
        .to_string();
    assert!(
        text.contains("fault: kinesis.service-unavailable ListStreams on 100% of requests\n"),
        "{text}"
    );
    assert!(
        text.contains("fault: s3.slow-down x10 every 1h\n"),
        "{text}"
    );
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    let body = "{}";
    write!(
        s,
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.1\r\nX-Amz-Target: Kinesis_20131202.ListStreams\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        answer.contains("\"__type\":\"ServiceUnavailable\""),
        "{answer}"
    );
    // Redis faults are the Redis lab's: the emulator refuses them in one line.
    let (ok, _, err) = latlab(&[
        "emulate",
        "--listen",
        "127.0.0.1:0",
        "--fault",
        "redis.debug-sleep:every=10s",
    ]);
    assert!(!ok);
    assert!(
        err.contains(
            "redis.debug-sleep is injected on the Redis lab's servers, not by the emulator"
        ),
        "{err}"
    );
}

/// `emulate --help` named only Kinesis: it names every service the emulator serves, in the
/// top-level listing too.
#[test]
fn the_help_names_every_service_the_emulator_serves() {
    let (ok, help, err) = latlab(&["emulate", "--help"]);
    assert!(ok, "{err}");
    let first = help.lines().next().unwrap();
    assert_eq!(
        first,
        "Run the local cloud on its own: Kinesis, S3, SQS and DynamoDB for any SDK, boto3 or the aws CLI"
    );
    let (ok, top, _) = latlab(&["--help"]);
    assert!(ok);
    assert!(
        top.lines().any(|l| l.trim_start().starts_with("emulate")
            && l.contains("Kinesis, S3, SQS and DynamoDB")),
        "{top}"
    );
}
