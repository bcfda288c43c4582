//! An independent endpoint as a stand-in account: moto's server (PyPI `moto[server]`), which
//! latlab's authors did not write. plan, run (GetRecords pollers and S3 Standard, the parts moto
//! has) and cleanup go end to end against it; what moto lacks (SubscribeToShard, directory
//! buckets) degrades with one line per consumer, and a run killed with SIGKILL is cleaned up.

use crate::common;

use common::Kill;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{latlab, with_credentials};

const SCENARIO: &str = r#"
name = "moto"
description = "GetRecords pollers and S3 Standard on moto"
duration = "30s"
latency_profile = "zero"

[kinesis]
stream = "latlab-moto"
shards = 1

[kinesis.producer]
rate = 10
payload = "128B"

[[kinesis.consumers]]
kind = "poller"
name = "poller"
interval = "200ms"

[[kinesis.consumers]]
kind = "efo"
name = "fan-out"

[s3]
class = "standard"
payload = "1KB"
concurrency = 1
"#;

const BUCKET: &str = "moto-standard";

/// moto's server on a free port, ready.
fn moto() -> (Kill, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("moto_server")
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("moto_server cannot start ({e}): install it with `python3 -m pip install 'moto[server]'` (scripts/test does)")
        });
    let child = Kill(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "moto_server did not listen within 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (child, format!("http://127.0.0.1:{port}"))
}

fn on(url: &str, args: &[&str]) -> (bool, String, String) {
    common::output(with_credentials(&mut latlab()).args(args).args([
        "--endpoint-url",
        url,
        "--s3-bucket",
        BUCKET,
    ]))
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The endpoint's streams and the bucket's keys.
async fn inventory(
    k: &aws_sdk_kinesis::Client,
    s3: &aws_sdk_s3::Client,
) -> (Vec<String>, Vec<String>) {
    let streams = k
        .list_streams()
        .send()
        .await
        .unwrap()
        .stream_names()
        .to_vec();
    let objects = s3
        .list_objects_v2()
        .bucket(BUCKET)
        .send()
        .await
        .unwrap()
        .contents()
        .iter()
        .filter_map(|o| o.key().map(str::to_string))
        .collect();
    (streams, objects)
}

#[test]
fn plan_run_and_cleanup_go_end_to_end_on_moto() {
    let (_moto, url) = moto();
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("moto.toml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let scenario = scenario.to_str().unwrap();
    let rt = rt();
    let retry = aws_smithy_types::retry::RetryConfig::standard();
    let k = latlab::aws::emulator_kinesis_client(&url, retry.clone());
    let s3 = latlab::aws::emulator_s3_client(&url, retry);
    rt.block_on(async {
        s3.create_bucket().bucket(BUCKET).send().await.unwrap();
        s3.put_object()
            .bucket(BUCKET)
            .key("keep/me")
            .body(b"not latlab's".to_vec().into())
            .send()
            .await
            .unwrap();
    });
    let before = rt.block_on(inventory(&k, &s3));

    // The plan: reads only, the bucket found, what is not measured said.
    let (ok, plan, err) = on(&url, &["plan", "--scenario", scenario]);
    assert!(ok, "{plan}{err}");
    assert!(plan.contains("found: not there yet"), "{plan}");
    assert!(plan.contains("found: there"), "{plan}");
    assert!(
        plan.contains("note: S3 Express One Zone not measured: no --s3-express-bucket named"),
        "{plan}"
    );
    assert_eq!(rt.block_on(inventory(&k, &s3)), before);

    // The run: the poller and S3 Standard measured; fan-out, which moto cannot serve, one line.
    let (ok, report, err) = on(
        &url,
        &[
            "run",
            "--scenario",
            scenario,
            "--duration",
            "5s",
            "--quiet",
            "--format",
            "json",
        ],
    );
    assert!(ok, "{err}");
    let r: serde_json::Value = serde_json::from_str(&report).unwrap();
    let consumers = r["snapshot"]["kinesis"]["consumers"].as_array().unwrap();
    let consumer = |name: &str| consumers.iter().find(|c| c["name"] == name).unwrap();
    let acknowledged = r["snapshot"]["kinesis"]["producer"]["acked"]
        .as_u64()
        .unwrap();
    assert!(acknowledged >= 40, "{report}");
    let counts = &consumer("poller")["counts"];
    assert_eq!(
        counts["acknowledged"].as_u64(),
        Some(acknowledged),
        "{counts}"
    );
    assert_eq!(counts["received"].as_u64(), Some(acknowledged), "{counts}");
    let status = consumer("fan-out")["status"].as_str().unwrap();
    assert!(
        status.starts_with("not supported by this endpoint: SubscribeToShard answered")
            || status
                .starts_with("not supported by this endpoint: RegisterStreamConsumer answered"),
        "{status}"
    );
    let ops = r["snapshot"]["s3"]["ops"].as_array().unwrap();
    assert!(
        ops.iter().any(|o| o["class"] == "Standard"
            && o["op"] == "PUT"
            && o["requests"].as_u64().unwrap() > 10),
        "{report}"
    );
    assert!(
        r["snapshot"]["s3"]["express_unsupported"]
            .as_str()
            .unwrap()
            .contains("no --s3-express-bucket named")
    );
    // The run cleaned up after itself.
    assert_eq!(rt.block_on(inventory(&k, &s3)), before);

    // A run killed with SIGKILL leaves its stream and objects; cleanup finds and deletes them.
    let mut run = Kill(
        with_credentials(&mut latlab())
            .args(["run", "--scenario", scenario, "--duration", "5m", "--quiet"])
            .args(["--endpoint-url", &url, "--s3-bucket", BUCKET])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (streams, objects) = rt.block_on(inventory(&k, &s3));
        if streams.iter().any(|s| s.starts_with("latlab-moto-latlab-"))
            && objects.iter().any(|o| o.starts_with("latlab/"))
        {
            break;
        }
        assert!(Instant::now() < deadline, "{streams:?} {objects:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    run.0.kill().unwrap();
    run.0.wait().unwrap();
    let (ok, text, err) = on(&url, &["cleanup"]);
    assert!(ok, "{err}");
    assert!(
        text.contains("Kinesis stream latlab-moto-latlab-"),
        "{text}"
    );
    assert!(
        text.contains(&format!("S3 objects {BUCKET}/latlab/")),
        "{text}"
    );
    let (ok, text, err) = on(&url, &["cleanup", "--yes"]);
    assert!(ok, "{text}{err}");
    assert!(
        text.contains("deleted Kinesis stream latlab-moto-latlab-"),
        "{text}"
    );
    assert_eq!(rt.block_on(inventory(&k, &s3)), before);
    let (ok, text, _) = on(&url, &["cleanup", "--yes"]);
    assert!(ok);
    assert!(text.contains("nothing latlab left to delete"), "{text}");
}
