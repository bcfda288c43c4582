//! Helpers shared by the integration tests: the latlab binary with the tester's own defaults kept
//! out, an emulator on an ephemeral port, SDK clients for it, a raw HTTP client for requests no
//! SDK would send, and what a Redis server is asked (MONITOR).
#![allow(dead_code)]

pub mod host;

/// An emulator in the test's process and the real SDK clients for it: the emulator's own tests'
/// helpers, one file for both.
#[path = "../../crates/emulator/tests/services/common.rs"]
pub mod emulated;
#[allow(unused_imports)]
pub use emulated::*;

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
        .find(|w| w.starts_with("http://") || w.starts_with("https://"))
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
