//! Faults, as a user meets them: each kind injected into the emulator through the real SDK (or on
//! the real redis-server pair), with what a client sees, the recovery, and the record accounting
//! (received + lost + unread = acknowledged, duplicates and re-sends counted, nothing lost).

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use latlab_core::faults::Kind;
use serde_json::Value;

use common::latlab;

/// Runs `latlab run FILE --format json` and returns the report; fails (never hangs) after
/// `limit`.
fn run_json(scenario: &str, limit: Duration) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("scenario.toml");
    std::fs::write(&file, scenario).unwrap();
    let out = dir.path().join("report.json");
    let mut child = latlab()
        .args(["run", "-q", "--format", "json", "-o"])
        .arg(&out)
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            assert!(status.success(), "latlab run failed: {err}");
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("latlab run did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

/// (fired, recovered, not injected) of a kind in a report.
fn counts(report: &Value, kind: &str) -> (u64, u64, u64) {
    report["snapshot"]["faults"]["counts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == kind)
        .map_or((0, 0, 0), |c| {
            (
                c["fired"].as_u64().unwrap(),
                c["recovered"].as_u64().unwrap(),
                c["failed"].as_u64().unwrap(),
            )
        })
}

fn assert_each_fired_and_recovered(report: &Value, kinds: &[&str]) {
    for kind in kinds {
        let (fired, recovered, failed) = counts(report, kind);
        assert!(
            fired >= 1 && recovered >= 1 && failed == 0,
            "{kind}: fired {fired}, recovered {recovered}, not injected {failed}; timeline: {:#}",
            report["snapshot"]["faults"]["events"]
        );
    }
}

use common::assert_every_record_counted;

const KINESIS: &str = r#"
name = "kinesis-faults"
description = "every Kinesis fault kind"
duration = "16s"
latency_profile = "zero"

[kinesis]
stream = "latlab-faults"
shards = 2
retry = { max_attempts = 4, initial_backoff = "100ms", max_backoff = "1s" }

[kinesis.producer]
rate = 20
payload = "256B"

[[kinesis.consumers]]
kind = "efo"
name = "fan-out"

[[kinesis.consumers]]
kind = "lambda-efo"
name = "Lambda EFO"

[[kinesis.consumers]]
kind = "poller"
name = "poller"
interval = "200ms"

[[kinesis.consumers]]
kind = "lambda-standard"
name = "Lambda standard"

[[faults]]
kind = "kinesis.reset-before"
operation = "PutRecord"
every = "4s"
first = "1s"

[[faults]]
kind = "kinesis.reset-after"
operation = "PutRecord"
every = "4s"
first = "1500ms"

[[faults]]
kind = "kinesis.internal-failure"
operation = "GetRecords"
every = "4s"
first = "2s"

[[faults]]
kind = "kinesis.service-unavailable"
every = "4s"
first = "2500ms"

[[faults]]
kind = "kinesis.stream-cut"
every = "4s"
first = "3s"

[[faults]]
kind = "kinesis.stream-end"
every = "4s"
first = "3500ms"

[[faults]]
kind = "kinesis.stall"
operation = "GetRecords"
for = "1s"
every = "4s"
first = "2200ms"

[[faults]]
kind = "kinesis.spike"
for = "1s"
delay = "200ms"
every = "4s"
first = "1200ms"

[[faults]]
kind = "kinesis.expire-iterators"
every = "4s"
first = "3200ms"
"#;

#[test]
fn kinesis_faults_each_recover_and_every_record_is_counted() {
    let report = run_json(KINESIS, Duration::from_secs(180));
    assert_each_fired_and_recovered(
        &report,
        &[
            "kinesis.reset-before",
            "kinesis.reset-after",
            "kinesis.internal-failure",
            "kinesis.service-unavailable",
            "kinesis.stream-cut",
            "kinesis.stream-end",
            "kinesis.stall",
            "kinesis.spike",
            "kinesis.expire-iterators",
        ],
    );
    assert_every_record_counted(&report, 20 * 16);
    let k = &report["snapshot"]["kinesis"];
    // A put reset after it was stored is stored again by the SDK's retry: the producer's re-sends
    // are counted, and every consumer counts the second copy as a duplicate.
    let (reset_after, _, _) = counts(&report, "kinesis.reset-after");
    let (reset_before, _, _) = counts(&report, "kinesis.reset-before");
    let retries = k["producer"]["sdk"]["retries"].as_u64().unwrap();
    assert!(
        retries >= reset_after + reset_before,
        "the producer's SDK re-sent {retries} times after {reset_after} + {reset_before} resets"
    );
    for c in k["consumers"].as_array().unwrap() {
        let dups = c["counts"]["duplicates"].as_u64().unwrap();
        assert!(
            dups >= 1 && dups <= reset_after,
            "{}: {dups} duplicates after {reset_after} puts stored twice",
            c["name"]
        );
    }
    // The fan-out consumers subscribed again after each cut or early end. A firing ends the one
    // event stream whose next frame comes first, whichever consumer's it is (in one CI run every
    // hit went to the other consumer, and "Lambda EFO" kept its first 2 subscriptions), so the
    // re-subscriptions are counted together: a fault recovers when the consumer and shard it hit
    // subscribe again, so there are at least as many as recovered firings.
    let shards = 2;
    let recovered =
        counts(&report, "kinesis.stream-cut").1 + counts(&report, "kinesis.stream-end").1;
    let mut again = 0;
    for c in k["consumers"].as_array().unwrap() {
        if c["kind"] == "efo" || c["kind"] == "lambda-efo" {
            let subs = c["events"]["subscriptions"].as_u64().unwrap_or(0);
            assert!(subs >= shards, "{}: {subs} subscriptions", c["name"]);
            again += subs - shards;
        }
    }
    assert!(
        again >= recovered && recovered >= 2,
        "{again} re-subscriptions after {recovered} recovered cuts and early ends"
    );
}

const S3: &str = r#"
name = "s3-faults"
description = "every S3 fault kind"
duration = "12s"
latency_profile = "zero"

[s3]
class = "express"
payload = "256KB"
# Four loops, not one. Each 4 s arms up to four hits a GET can take (internal-error, two
# slow-downs, the GET body reset), and a GET fault recovers on the next GET answered. In one CI
# run a single PUT-then-GET loop fell in step with that schedule: each GET took an armed hit and
# waited out the SDK's back-off (up to 2 s) twice more, then a PUT was reset and re-sent; the cycle
# lasted about the 4 s period, so the next hits were armed when the next GET came. Every GET from
# 2 s to 10.4 s was faulted (the GET body reset armed at 2 s waited until 10.4 s) and no GET fault
# recovered. Three runs here recovered 9 of 9, 4 of 5 and 4 of 7 GET faults with one loop, and all
# (7, 8, 5) with four: a period's hits are spent within a few requests, and the GETs after them
# are answered.
concurrency = 4

[[faults]]
kind = "s3.internal-error"
every = "4s"
first = "1s"

[[faults]]
kind = "s3.slow-down"
count = 2
every = "4s"
first = "1500ms"

[[faults]]
kind = "s3.body-reset"
operation = "GetObject"
every = "4s"
first = "2s"

[[faults]]
kind = "s3.body-reset"
operation = "PutObject"
every = "4s"
first = "2500ms"

[[faults]]
kind = "s3.first-byte-stall"
for = "500ms"
every = "4s"
first = "3s"
"#;

#[test]
fn s3_faults_each_recover_and_errors_are_counted_by_class_and_operation() {
    let report = run_json(S3, Duration::from_secs(120));
    assert_each_fired_and_recovered(
        &report,
        &[
            "s3.internal-error",
            "s3.slow-down",
            "s3.body-reset",
            "s3.first-byte-stall",
        ],
    );
    let ops = report["snapshot"]["s3"]["ops"].as_array().unwrap();
    let get = ops
        .iter()
        .find(|o| o["op"] == "GET" && o["class"] == "ExpressOneZone")
        .expect("Express GETs");
    // A download cut halfway escapes the SDK (it had answered already): an error of GET.
    assert!(get["errors"].as_u64().unwrap() >= 1, "{get}");
    // An upload reset halfway is re-sent by the SDK: the PUTs went on.
    let put = ops
        .iter()
        .find(|o| o["op"] == "PUT" && o["class"] == "ExpressOneZone")
        .expect("Express PUTs");
    assert!(put["requests"].as_u64().unwrap() > 10, "{put}");
    // The SDK's retries are counted.
    assert!(report["snapshot"]["s3"]["sdk"]["retries"].as_u64().unwrap() >= 1);
}

const REDIS: &str = r#"
name = "redis-faults"
description = "every Redis fault kind"
duration = "24s"

[redis]
value = "1KB"

[[faults]]
kind = "redis.replica-restart"
every = "10s"
first = "1s"

[[faults]]
kind = "redis.client-pause"
for = "1s"
every = "10s"
first = "3500ms"

[[faults]]
kind = "redis.link-partition"
for = "2s"
every = "10s"
first = "6s"

[[faults]]
kind = "redis.debug-sleep"
for = "1s"
every = "10s"
first = "8500ms"
"#;

#[test]
fn redis_faults_on_the_real_servers_each_recover_and_no_try_hangs() {
    common::require_redis_server();
    let report = run_json(REDIS, Duration::from_secs(180));
    assert_each_fired_and_recovered(
        &report,
        &[
            "redis.replica-restart",
            "redis.client-pause",
            "redis.link-partition",
            "redis.debug-sleep",
        ],
    );
    let methods = report["snapshot"]["redis"]["methods"].as_array().unwrap();
    assert_eq!(methods.len(), 3);
    for m in methods {
        // Each try ended with a lag or an error: the lab went on measuring through every fault.
        let tries = m["tries"].as_u64().unwrap();
        assert!(tries >= 20, "{m}");
    }
    // A 2 s partition of the link shows in the seed's method (it polls the replica until the key
    // arrives).
    let worst = methods
        .iter()
        .map(|m| m["lag"]["max_us"].as_u64().unwrap())
        .max()
        .unwrap();
    assert!(worst >= 1_000_000, "the worst lag was {worst} us");
}

#[test]
fn bad_faults_are_refused_with_what_is_valid() {
    let out = latlab()
        .args(["run", "demo", "--fault", "kinesis.boom:every=1s"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("'kinesis.boom' is not a fault kind; valid: kinesis.reset-before"),
        "{err}"
    );
    let out = latlab()
        .args(["run", "s3-demo", "--fault", "redis.debug-sleep:every=5s"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("scenario s3-demo has no Redis lab"), "{err}");
    let out = latlab()
        .args([
            "run",
            "demo",
            "--endpoint-url",
            "http://127.0.0.1:9",
            "--fault",
            "kinesis.stall:every=5s",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("with --endpoint-url or --aws only Redis faults apply"),
        "{err}"
    );
    let out = latlab().arg("faults").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for k in Kind::all() {
        assert!(
            text.contains(k.name()),
            "{} missing from:\n{text}",
            k.name()
        );
    }
    assert!(text.contains("every=DURATION"), "{text}");
}
