//! Helpers shared by the integration tests: the latlab binary with the tester's own defaults kept
//! out, an emulator on an ephemeral port, SDK clients for it, a raw HTTP client for requests no
//! SDK would send, and what a Redis server is asked (MONITOR).
#![allow(dead_code)]

pub mod host;

/// The latlab binary, run as a user runs it but without the tester's own defaults: no config
/// file (XDG_CONFIG_HOME names a directory that holds none) and no LATLAB_* variable that sets an
/// option, so a developer's ~/.config/latlab/config.toml or LATLAB_ENDPOINT_URL cannot change
/// what a test measures.
pub fn latlab() -> std::process::Command {
    without_defaults(std::process::Command::new(env!("CARGO_BIN_EXE_latlab")))
}

/// [`latlab`] inside the network namespace `ns` (`ip netns exec NS latlab ...`).
pub fn latlab_in(ns: &str) -> std::process::Command {
    let mut c = std::process::Command::new("ip");
    c.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_latlab")]);
    without_defaults(c)
}

fn without_defaults(mut c: std::process::Command) -> std::process::Command {
    c.env(
        "XDG_CONFIG_HOME",
        std::env::temp_dir().join("latlab-tests-no-config"),
    );
    for key in latlab::config::keys() {
        if let Some(env) = key.env.filter(|e| e.starts_with("LATLAB_")) {
            c.env_remove(env);
        }
    }
    c.env_remove(latlab::config::CONFIG_ENV);
    c
}

/// `latlab ARGS`: whether it succeeded, its standard output and its standard error.
pub fn latlab_output(args: &[&str]) -> (bool, String, String) {
    output(latlab().args(args))
}

/// A command run to its end with nothing on its standard input: whether it succeeded, its
/// standard output and its standard error.
pub fn output(c: &mut std::process::Command) -> (bool, String, String) {
    let out = c
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the command runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// schemas/run-report.schema.json, ready to validate reports.
pub fn report_schema() -> jsonschema::Validator {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schemas/run-report.schema.json")).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// Fails, listing each violation with where it is, when a JSON run report does not follow
/// schemas/run-report.schema.json.
pub fn assert_follows_report_schema(report: &serde_json::Value) {
    let errors: Vec<String> = report_schema()
        .iter_errors(report)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the JSON report follows its schema: {errors:?}"
    );
}

/// Every Kinesis consumer of a JSON report accounts for every acknowledged record (received +
/// lost + unread = acknowledged), loses none and leaves none unread.
pub fn assert_every_record_counted(report: &serde_json::Value, acknowledged: u64) {
    let k = &report["snapshot"]["kinesis"];
    assert_eq!(k["producer"]["acked"].as_u64().unwrap(), acknowledged);
    for c in k["consumers"].as_array().unwrap() {
        let n = &c["counts"];
        let get = |f: &str| n[f].as_u64().unwrap();
        assert_eq!(
            get("received") + get("lost") + get("unread"),
            get("acknowledged"),
            "{}: {n}",
            c["name"]
        );
        assert_eq!(get("acknowledged"), acknowledged, "{}: {n}", c["name"]);
        assert_eq!(get("lost"), 0, "{}: {n}", c["name"]);
        assert_eq!(get("unread"), 0, "{}: {n}", c["name"]);
    }
}

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_smithy_types::retry::RetryConfig;
use latlab::emulator::limits::Limits;
use latlab::emulator::profile::LatencyProfile;
use latlab::emulator::{Emulator, EmulatorConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An emulator on 127.0.0.1 with the `zero` profile and the given `--limit` overrides.
pub async fn emulator(limits: &[&str]) -> Emulator {
    emulator_with(limits, LatencyProfile::zero()).await
}

pub async fn emulator_with(limits: &[&str], profile: LatencyProfile) -> Emulator {
    let overrides: Vec<String> = limits.iter().map(|s| s.to_string()).collect();
    let config = EmulatorConfig {
        limits: Limits::load(None, &overrides).expect("valid limits"),
        profile,
        ..EmulatorConfig::default()
    };
    Emulator::start(config).await.expect("emulator starts")
}

/// A client that makes exactly one HTTP request per call (no SDK retries).
pub fn client_no_retry(emu: &Emulator) -> aws_sdk_kinesis::Client {
    latlab::aws::emulator_kinesis_client(&emu.endpoint_url(), RetryConfig::disabled())
}

/// A client with the SDK's standard retries.
pub fn client(emu: &Emulator) -> aws_sdk_kinesis::Client {
    latlab::aws::emulator_kinesis_client(&emu.endpoint_url(), RetryConfig::standard())
}

/// Creates a stream and waits until it is ACTIVE.
pub async fn create_stream(c: &aws_sdk_kinesis::Client, name: &str, shards: i32) {
    c.create_stream()
        .stream_name(name)
        .shard_count(shards)
        .send()
        .await
        .expect("create");
    for _ in 0..200 {
        let d = c
            .describe_stream_summary()
            .stream_name(name)
            .send()
            .await
            .expect("describe");
        if d.stream_description_summary()
            .unwrap()
            .stream_status()
            .as_str()
            == "ACTIVE"
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("stream {name} never became ACTIVE");
}

/// The error code of an SDK error (`ProvideErrorMetadata::code`).
pub fn code<E, R>(e: &aws_sdk_kinesis::error::SdkError<E, R>) -> String
where
    E: aws_sdk_kinesis::error::ProvideErrorMetadata,
{
    use aws_sdk_kinesis::error::ProvideErrorMetadata;
    e.code().unwrap_or("<no code>").to_string()
}

pub fn message<E, R>(e: &aws_sdk_kinesis::error::SdkError<E, R>) -> String
where
    E: aws_sdk_kinesis::error::ProvideErrorMetadata,
{
    use aws_sdk_kinesis::error::ProvideErrorMetadata;
    e.message().unwrap_or("<no message>").to_string()
}

/// Sends one raw HTTP/1.1 request and returns (status, body).
pub async fn raw(
    emu: &Emulator,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(emu.addr()).await.unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8_lossy(&out).to_string();
    let status = text[9..12].parse().unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// A raw Kinesis call: POST / with the target header.
pub async fn raw_kinesis(emu: &Emulator, target: &str, body: &str) -> (u16, serde_json::Value) {
    let (status, body) = raw(
        emu,
        "POST",
        "/",
        &[
            ("Content-Type", "application/x-amz-json-1.1"),
            ("X-Amz-Target", target),
        ],
        body.as_bytes(),
    )
    .await;
    (
        status,
        serde_json::from_str(&body).unwrap_or(serde_json::Value::String(body)),
    )
}

/// Registers an enhanced fan-out consumer and waits until it is ACTIVE; returns its ARN.
pub async fn register_active(c: &aws_sdk_kinesis::Client, stream_arn: &str, name: &str) -> String {
    let arn = c
        .register_stream_consumer()
        .stream_arn(stream_arn)
        .consumer_name(name)
        .send()
        .await
        .unwrap()
        .consumer
        .unwrap()
        .consumer_arn;
    for _ in 0..200 {
        let d = c
            .describe_stream_consumer()
            .consumer_arn(&arn)
            .send()
            .await
            .unwrap();
        if d.consumer_description().unwrap().consumer_status().as_str() == "ACTIVE" {
            return arn;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("consumer never became ACTIVE");
}

/// A SubscribeToShard starting position.
pub fn starting(
    kind: aws_sdk_kinesis::types::ShardIteratorType,
    seq: Option<String>,
) -> aws_sdk_kinesis::types::StartingPosition {
    aws_sdk_kinesis::types::StartingPosition::builder()
        .r#type(kind)
        .set_sequence_number(seq)
        .build()
        .unwrap()
}

/// Asserts an SDK error's code, and that its message says `says`.
pub fn assert_error<E, R>(e: &aws_sdk_kinesis::error::SdkError<E, R>, want: &str, says: &str)
where
    E: aws_sdk_kinesis::error::ProvideErrorMetadata,
{
    assert_eq!(code(e), want, "{}", message(e));
    assert!(message(e).contains(says), "{want}: {}", message(e));
}

/// Fails (never skips) when redis-server is missing: CI installs it.
pub fn require_redis_server() {
    assert!(
        latlab::labs::redis::local::redis_server_binary().is_ok(),
        "redis-server is required for the Redis tests: install it (sudo apt-get install -y redis-server; scripts/test and .ci/run do)"
    );
}

/// The command and the keys it names, from one MONITOR line (`TIME [DB ADDR] "CMD" "ARG" ...`),
/// for the commands that name keys the lab writes or reads.
pub fn keys_named(line: &str) -> Option<(String, Vec<String>)> {
    let (_, rest) = line.split_once("] \"")?;
    let mut parts = rest.strip_suffix('"')?.split("\" \"");
    let cmd = parts.next()?.to_ascii_uppercase();
    let args = parts.map(String::from);
    let keys = match cmd.as_str() {
        "SET" | "GET" => args.take(1).collect(),
        "EXISTS" | "DEL" | "UNLINK" => args.collect(),
        _ => return None,
    };
    Some((cmd, keys))
}

/// Every line MONITOR shows on the server at `url` until the task is aborted.
pub async fn monitor(url: &str) -> (Arc<Mutex<Vec<String>>>, tokio::task::JoinHandle<()>) {
    use futures_util::StreamExt;
    let mon = redis::Client::open(url)
        .unwrap()
        .get_async_monitor()
        .await
        .unwrap();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let seen = lines.clone();
    let task = tokio::spawn(async move {
        let mut stream = mon.into_on_message::<String>();
        while let Some(l) = stream.next().await {
            seen.lock().unwrap().push(l);
        }
    });
    (lines, task)
}

/// The property tests' settings: 512 cases each in CI; `LATLAB_PROPTEST_CASES=100000` for a long
/// run. No failure files: a failure is printed with its minimal input.
pub fn proptest_config() -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases: std::env::var("LATLAB_PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(512),
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}

/// A child process that is killed (and reaped) when the test lets go of it, pass or fail.
pub struct Kill(pub std::process::Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `latlab emulate` on an ephemeral port, as another endpoint (streams and consumers active at
/// once), with `extra` flags; its URL.
pub fn emulate(extra: &[&str]) -> (Kill, String) {
    use std::io::BufRead;
    let mut child = latlab()
        .args([
            "emulate",
            "--listen",
            "127.0.0.1:0",
            "--limit",
            "stream_activation=0s",
            "--limit",
            "consumer_activation=0s",
        ])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_string();
    (Kill(child), url)
}

/// `latlab` as a user with an account runs it against another endpoint: static credentials and
/// a region in the environment, no endpoint or profile of the tester's, no instance metadata.
pub fn with_credentials(c: &mut std::process::Command) -> &mut std::process::Command {
    c.env("AWS_ACCESS_KEY_ID", "AKIDTEST")
        .env("AWS_SECRET_ACCESS_KEY", "secret")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env_remove("AWS_ENDPOINT_URL")
        .env_remove("AWS_PROFILE")
}

/// An aws-sdk-sqs client for the endpoint at `url`, with the SDK's retries off so that every
/// answer is seen as the endpoint gave it.
pub fn sqs_client(url: &str) -> aws_sdk_sqs::Client {
    let config = aws_sdk_sqs::Config::builder()
        .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
        .region(aws_sdk_sqs::config::Region::new("us-east-1"))
        .credentials_provider(latlab::aws::emulator_credentials())
        .endpoint_url(url)
        .retry_config(aws_sdk_sqs::config::retry::RetryConfig::disabled())
        .http_client(latlab::aws::https_client())
        .build();
    aws_sdk_sqs::Client::from_conf(config)
}

/// Fails with what to install when python3 or boto3 (the second, independent client) is missing.
pub fn require_boto3() {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import boto3"])
        .output();
    match probe {
        Err(e) => panic!("python3 is required for the boto3 wire tests and could not be run: {e}"),
        Ok(out) if !out.status.success() => panic!(
            "boto3 is required for the boto3 wire tests: install it with `python3 -m pip install boto3` \
             (scripts/test does this). python3 said: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Ok(_) => {}
    }
}

/// Makes a one-shard stream and a bucket at the endpoint at `url` (`tests/python/fleet.py
/// setup`, boto3), as a user of several hosts makes them once for all.
pub fn make_stream_and_bucket(url: &str, stream: &str, bucket: &str) {
    require_boto3();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/fleet.py");
    let made = std::process::Command::new("python3")
        .args([script, "setup", url, stream, bucket])
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "fleet.py setup: {}",
        String::from_utf8_lossy(&made.stderr)
    );
}

/// A tool of Debian's `prometheus` package (`prometheus`, `promtool`); missing, the test fails
/// saying how to install it.
pub fn prometheus_tool(name: &str) -> std::process::Command {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()));
    assert!(
        found,
        "{name} is missing: install Debian's prometheus package (apt-get install prometheus; scripts/test does it as root)"
    );
    std::process::Command::new(name)
}
