//! Wire compatibility beyond our own SDK: boto3 against `latlab emulate`, the real binary.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// Kills the emulator when the test ends, passing or failing.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn boto3_puts_gets_and_subscribes() {
    common::require_boto3();
    let mut child = common::latlab()
        .args([
            "emulate",
            "--listen",
            "127.0.0.1:0",
            "--limit",
            "stream_activation=0s",
            "--limit",
            "consumer_activation=0s",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("latlab emulate starts");
    let stdout = child.stdout.take().unwrap();
    let _guard = Kill(child);
    let mut reader = BufReader::new(stdout);
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    // Keep reading so the emulator never writes into a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("the emulator prints its URL first, got {first:?}"))
        .to_string();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/boto3_kinesis.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(&url)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "boto3 checks failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/boto3_sqs.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(&url)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "boto3 SQS checks failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("ok: boto3 sends the JSON protocol (x-amz-target AmazonSQS.CreateQueue)")
    );
    assert!(stdout.contains("ok: a long poll answers when the message arrives"));
    assert!(
        stdout.contains("ok: group g0 is held while its message is in flight; g1 comes in order")
    );
    assert!(stdout.ends_with("boto3: all checks passed\n"));
}
