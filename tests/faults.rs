//! Faults, as a user meets them: each kind injected into the emulator through the real SDK (or on
//! the real redis-server pair), with what a client sees, the recovery, and the record accounting
//! (received + lost + unread = acknowledged, duplicates and re-sends counted, nothing lost).

mod common;

use std::process::Stdio;
use std::time::Duration;

use latlab::faults::{FaultSpec, Kind};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

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
    // The fan-out consumers subscribed again after each cut or early end.
    for c in k["consumers"].as_array().unwrap() {
        if c["kind"] == "efo" || c["kind"] == "lambda-efo" {
            let subs = c["events"]["subscriptions"].as_u64().unwrap_or(0);
            assert!(subs >= 3, "{}: {subs} subscriptions", c["name"]);
        }
    }
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
    for k in Kind::ALL {
        assert!(
            text.contains(k.name()),
            "{} missing from:\n{text}",
            k.name()
        );
    }
    assert!(text.contains("every=DURATION"), "{text}");
}

/// De-chunks an HTTP/1.1 answer's body: the bytes, and whether its last chunk came.
fn dechunk(raw: &[u8]) -> Option<(Vec<u8>, bool)> {
    let at = raw.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let mut body = &raw[at..];
    let mut out = Vec::new();
    while let Some(eol) = body.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(std::str::from_utf8(&body[..eol]).ok()?, 16).ok()?;
        if size == 0 {
            return Some((out, true));
        }
        let data = &body[eol + 2..];
        let take = size.min(data.len());
        out.extend_from_slice(&data[..take]);
        if take < size {
            break;
        }
        body = &data[(size + 2).min(data.len())..];
    }
    Some((out, false))
}

/// Reads a raw chunked event stream until the server lets go of it or ends the body; returns
/// the event-stream bytes.
async fn read_event_stream(s: &mut tokio::net::TcpStream) -> Vec<u8> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => raw.extend_from_slice(&buf[..n]),
            Err(_) => panic!("the stream was neither cut nor ended within 10 s"),
        }
        if dechunk(&raw).is_some_and(|(_, ended)| ended) {
            break;
        }
    }
    dechunk(&raw).map(|(b, _)| b).unwrap_or_default()
}

/// Splits event-stream bytes into whole frames (by each prelude's total length); returns the
/// frames and the bytes of a last, incomplete one.
fn frames(mut bytes: &[u8]) -> (usize, usize) {
    let mut whole = 0;
    while bytes.len() >= 4 {
        let len = u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
        if bytes.len() < len {
            return (whole, bytes.len());
        }
        whole += 1;
        bytes = &bytes[len..];
    }
    (whole, bytes.len())
}

/// Subscribes with a raw request; returns the connection once the headers are answered.
async fn subscribe_raw(
    emu: &latlab::emulator::Emulator,
    consumer_arn: &str,
) -> tokio::net::TcpStream {
    let body = format!(
        r#"{{"ConsumerARN":"{consumer_arn}","ShardId":"shardId-000000000000","StartingPosition":{{"Type":"LATEST"}}}}"#
    );
    let mut s = tokio::net::TcpStream::connect(emu.addr()).await.unwrap();
    s.write_all(
        format!(
            "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-amz-json-1.1\r\nX-Amz-Target: Kinesis_20131202.SubscribeToShard\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    s
}

#[tokio::test]
async fn a_cut_event_stream_ends_mid_frame_and_an_ended_one_on_a_frame_boundary() {
    let emu = common::emulator(&[]).await;
    let c = common::client(&emu);
    common::create_stream(&c, "cut", 1).await;
    let stream_arn = c
        .describe_stream_summary()
        .stream_name("cut")
        .send()
        .await
        .unwrap()
        .stream_description_summary()
        .unwrap()
        .stream_arn()
        .to_string();
    for (kind, consumer) in [
        (Kind::KinesisStreamCut, "cutter"),
        (Kind::KinesisStreamEnd, "ender"),
    ] {
        let arn = common::register_active(&c, &stream_arn, consumer).await;
        let mut s = subscribe_raw(&emu, &arn).await;
        // The fault fires now: the stream's next frame after the initial response gets it.
        let mut spec = FaultSpec::now(kind);
        spec.consumer = Some(consumer.into());
        emu.faults().add(spec).unwrap();
        c.put_record()
            .stream_name("cut")
            .partition_key("k")
            .data(aws_smithy_types::Blob::new(vec![7u8; 2000]))
            .send()
            .await
            .unwrap();
        let bytes = read_event_stream(&mut s).await;
        let (whole, partial) = frames(&bytes);
        match kind {
            Kind::KinesisStreamCut => {
                assert_eq!(whole, 1, "only the initial response is whole");
                assert!(partial > 0, "the cut leaves part of a frame");
            }
            _ => {
                assert_eq!(whole, 1, "the initial response, then the end");
                assert_eq!(partial, 0, "an early end is on a frame boundary");
            }
        }
        let events = emu.faults().log.events();
        let e = events.last().unwrap();
        assert_eq!(e.kind, kind);
        assert!(e.target.contains(consumer), "{}", e.target);
    }
}

#[tokio::test]
async fn a_put_reset_after_it_was_stored_is_stored_and_its_client_sees_a_broken_connection() {
    let emu = common::emulator(&[]).await;
    let c = common::client_no_retry(&emu);
    common::create_stream(&c, "reset", 1).await;
    let mut spec = FaultSpec::now(Kind::KinesisResetAfter);
    spec.operation = Some("PutRecord".into());
    emu.faults().add(spec).unwrap();
    let err = c
        .put_record()
        .stream_name("reset")
        .partition_key("k")
        .data(aws_smithy_types::Blob::new(b"x".to_vec()))
        .send()
        .await
        .expect_err("the answer never came");
    let line = latlab::aws::error_line(&err);
    assert!(!line.is_empty());
    // The record was stored all the same.
    let it = c
        .get_shard_iterator()
        .stream_name("reset")
        .shard_id("shardId-000000000000")
        .shard_iterator_type(aws_sdk_kinesis::types::ShardIteratorType::TrimHorizon)
        .send()
        .await
        .unwrap();
    let got = c
        .get_records()
        .shard_iterator(it.shard_iterator().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(got.records().len(), 1);
    // Expired iterators: every iterator handed out before the fault answers
    // ExpiredIteratorException; a new one reads.
    emu.faults()
        .add(FaultSpec::now(Kind::KinesisExpireIterators))
        .unwrap();
    let e = c
        .get_records()
        .shard_iterator(got.next_shard_iterator().unwrap())
        .send()
        .await
        .expect_err("expired");
    assert_eq!(common::code(&e), "ExpiredIteratorException");
    let it = c
        .get_shard_iterator()
        .stream_name("reset")
        .shard_id("shardId-000000000000")
        .shard_iterator_type(aws_sdk_kinesis::types::ShardIteratorType::TrimHorizon)
        .send()
        .await
        .unwrap();
    let again = c
        .get_records()
        .shard_iterator(it.shard_iterator().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(again.records().len(), 1);
    let counts = emu.faults().log.counts();
    assert_eq!(counts[&Kind::KinesisResetAfter].fired, 1);
    assert_eq!(counts[&Kind::KinesisExpireIterators].recovered, 1);
}

#[tokio::test]
async fn errors_are_the_services_own_and_a_rate_hits_about_its_share() {
    let emu = common::emulator(&[]).await;
    let c = common::client_no_retry(&emu);
    common::create_stream(&c, "errs", 1).await;
    for (kind, code) in [
        (Kind::KinesisInternalFailure, "InternalFailure"),
        (Kind::KinesisServiceUnavailable, "ServiceUnavailable"),
    ] {
        emu.faults().add(FaultSpec::now(kind)).unwrap();
        let e = c
            .describe_stream_summary()
            .stream_name("errs")
            .send()
            .await
            .expect_err("the fault answers");
        assert_eq!(common::code(&e), code);
    }
    emu.faults()
        .add(FaultSpec::parse("kinesis.internal-failure:operation=ListShards,rate=25%").unwrap())
        .unwrap();
    let mut failed = 0;
    for _ in 0..400 {
        if c.list_shards().stream_name("errs").send().await.is_err() {
            failed += 1;
        }
    }
    // 25% of 400: 100, with a binomial spread of about 9; 40 to 160 is more than six of them.
    assert!((40..=160).contains(&failed), "{failed} of 400 failed");
}

/// SQS's fault kinds through aws-sdk-sqs (no retries, so each answer is seen as it is): a reset
/// sends nothing back and changes nothing, a 500 is InternalFailure, a receive stall holds a
/// ReceiveMessage's answer back and leaves every other call alone; each is logged and recovers.
#[tokio::test]
async fn sqs_faults_reset_fail_and_stall_a_receive() {
    let emu = common::emulator(&[]).await;
    let c = common::sqs_client(&emu.endpoint_url());
    let url = c
        .create_queue()
        .queue_name("faults")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();

    emu.faults().add(FaultSpec::now(Kind::SqsReset)).unwrap();
    let e = c
        .send_message()
        .queue_url(&url)
        .message_body("reset")
        .send()
        .await
        .expect_err("the reset answers nothing");
    assert!(
        matches!(e, aws_sdk_sqs::error::SdkError::DispatchFailure(_)),
        "a reset is a broken connection to the SDK: {e:?}"
    );
    emu.faults()
        .add(FaultSpec::now(Kind::SqsInternalError))
        .unwrap();
    let e = c
        .send_message()
        .queue_url(&url)
        .message_body("500")
        .send()
        .await
        .expect_err("the fault answers");
    assert_eq!(
        aws_sdk_sqs::error::ProvideErrorMetadata::code(&e),
        Some("InternalFailure")
    );
    let attrs = c
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages)
        .send()
        .await
        .unwrap();
    assert_eq!(
        attrs.attributes().unwrap()
            [&aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages],
        "0",
        "neither failed send stored a message"
    );

    c.send_message()
        .queue_url(&url)
        .message_body("held")
        .send()
        .await
        .unwrap();
    let mut stall = FaultSpec::now(Kind::SqsReceiveStall);
    stall.duration = Duration::from_millis(1500);
    emu.faults().add(stall).unwrap();
    // A send is no receive: the stall waits for ReceiveMessage.
    let t = std::time::Instant::now();
    c.send_message()
        .queue_url(&url)
        .message_body("second")
        .send()
        .await
        .unwrap();
    assert!(
        t.elapsed() < Duration::from_millis(1000),
        "{:?}",
        t.elapsed()
    );
    let t = std::time::Instant::now();
    let got = c
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .wait_time_seconds(1)
        .send()
        .await
        .unwrap();
    let held = t.elapsed();
    assert!(held >= Duration::from_millis(1500), "held {held:?}");
    assert_eq!(
        got.messages().len(),
        2,
        "the held answer still carries them"
    );
    let counts = emu.faults().log.counts();
    for kind in [
        Kind::SqsReset,
        Kind::SqsInternalError,
        Kind::SqsReceiveStall,
    ] {
        assert_eq!(counts[&kind].fired, 1, "{kind}");
    }
    // A later correct answer is each one's recovery.
    c.get_queue_url().queue_name("faults").send().await.unwrap();
    let counts = emu.faults().log.counts();
    for kind in [
        Kind::SqsReset,
        Kind::SqsInternalError,
        Kind::SqsReceiveStall,
    ] {
        assert_eq!(counts[&kind].recovered, 1, "{kind} recovers");
    }
}
