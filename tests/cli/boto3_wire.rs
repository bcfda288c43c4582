//! Wire compatibility beyond our own SDK: boto3 against `latlab emulate`, the real binary.

use crate::common;

use std::process::Command;

#[test]
fn boto3_puts_gets_and_subscribes() {
    common::require_boto3();
    let (_guard, url) = common::emulate(&[]);
    let stdout = boto3("boto3_kinesis.py", &url);
    assert!(stdout.contains("ok: subscribe_to_shard pushes the records"));
    assert!(stdout.contains("ok: rapid get_records raise ProvisionedThroughputExceededException"));
    assert!(stdout.ends_with("boto3: all checks passed\n"));
}

/// The emulator's SQS through boto3 (the JSON protocol botocore speaks): every operation latlab
/// makes and the quotas, those measured in minutes on the service shortened with `--limit`.
#[test]
fn boto3_queues_sends_receives_and_meets_sqs_quotas() {
    common::require_boto3();
    let (_guard, url) = common::emulate(&[
        "--limit",
        "sqs.dedup_interval=2s",
        "--limit",
        "sqs.min_retention=1s",
        "--limit",
        "sqs.purge_interval=1s",
        "--limit",
        "sqs.deleted_queue_name_hold=1s",
        "--limit",
        "sqs.fifo_calls_per_sec=20",
        "--limit",
        "sqs.max_in_flight_standard=20",
    ]);
    let stdout = boto3("boto3_sqs.py", &url);
    assert!(
        stdout.contains("ok: boto3 sends the JSON protocol (x-amz-target AmazonSQS.CreateQueue)")
    );
    assert!(stdout.contains("ok: a long poll answers when the message arrives"));
    assert!(
        stdout.contains("ok: group g0 is held while its message is in flight; g1 comes in order")
    );
    assert!(stdout.ends_with("boto3: all checks passed\n"));
}

/// The emulator's DynamoDB through boto3: tables, items, conditions, Query, batches, and a
/// throttle's `ThrottlingReasons` as botocore parses them.
#[test]
fn boto3_tables_items_and_throttling_reasons() {
    common::require_boto3();
    let (_guard, url) = common::emulate(&[]);
    let stdout = boto3("boto3_dynamodb.py", &url);
    assert!(stdout.contains("ok: a 2 KB item costs 2 write units"));
    assert!(
        stdout.contains(
            "ok: ThrottlingReasons: [{'reason': 'TableWriteProvisionedThroughputExceeded'"
        )
    );
    assert!(stdout.ends_with("boto3: all checks passed\n"));
}

/// Runs `tests/python/SCRIPT` against the endpoint at `url`; its output, once every check passed.
fn boto3(script: &str, url: &str) -> String {
    let path = format!("{}/tests/python/{script}", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3").arg(path).arg(url).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("{stdout}");
    assert!(
        out.status.success(),
        "{script}: boto3 checks failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}
