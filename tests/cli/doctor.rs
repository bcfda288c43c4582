//! `latlab doctor` as a user runs it: the real binary against the embedded emulator, an
//! unreachable port, a PATH without redis-server, an endpoint that lacks SubscribeToShard
//! (`latlab emulate --lacking`) and a log file that cannot be written. Standard output is a pipe
//! here, so the terminal line always says it is not a terminal.

use crate::common;

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// What doctor printed and whether it exited 0.
struct Doctor {
    ok: bool,
    out: String,
    err: String,
}

impl Doctor {
    /// The line of check `name` (its mark, then the name in the second column).
    fn line(&self, name: &str) -> &str {
        self.out
            .lines()
            .find(|l| {
                l.get(6..)
                    .is_some_and(|rest| rest.starts_with(&format!("{name} ")))
            })
            .unwrap_or_else(|| panic!("no `{name}` line in:\n{}\n{}", self.out, self.err))
    }

    fn has(&self, line: &str) -> bool {
        self.out.lines().any(|l| l == line)
    }
}

/// A command with no endpoint, profile or credentials from this machine's environment: AWS's
/// files point into `home`, and the keys and region are test values.
fn doctor(home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_latlab"));
    c.arg("doctor")
        .args(args)
        .env_remove("LATLAB_ENDPOINT_URL")
        .env_remove("AWS_ENDPOINT_URL")
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_DEFAULT_REGION")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("AWS_CONFIG_FILE", home.join("aws-config"))
        .env("AWS_SHARED_CREDENTIALS_FILE", home.join("aws-credentials"))
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_ACCESS_KEY_ID", "AKIDLATLABTEST9876")
        .env("AWS_SECRET_ACCESS_KEY", "latlab-test-secret")
        .env("AWS_REGION", "us-east-1");
    c
}

fn run(mut c: Command) -> Doctor {
    let out = c.stdin(Stdio::null()).output().expect("latlab runs");
    Doctor {
        ok: out.status.success(),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `N of N answer` in a line: every operation answered.
fn all_answer(line: &str) -> bool {
    let Some((before, _)) = line.split_once(" answer") else {
        return false;
    };
    let mut words = before.rsplit(' ');
    let (total, of, answered) = (words.next(), words.next(), words.next());
    of == Some("of") && total.is_some() && answered == total
}

#[test]
fn against_the_embedded_emulator_every_lab_can_run() {
    common::require_redis_server();
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("latlab.log");
    let d = run(doctor(home.path(), &["--log", log.to_str().unwrap()]));
    assert!(d.ok, "exit status not 0:\n{}\n{}", d.out, d.err);
    let redis = d.line("redis-server");
    assert!(redis.starts_with("ok "), "{redis}");
    assert!(redis.contains("redis-server, version "), "{redis}");
    let endpoint = d.line("endpoint");
    assert!(
        endpoint.starts_with("ok ") && endpoint.contains("embedded emulator on 127.0.0.1:"),
        "{endpoint}"
    );
    for name in ["kinesis ops", "s3 ops"] {
        let l = d.line(name);
        assert!(l.starts_with("ok ") && all_answer(l), "{l}");
    }
    assert!(d.line("credentials").contains("not needed"), "{}", d.out);
    let config = d.line("config");
    assert!(
        config.starts_with("ok ")
            && config.contains("none at ")
            && config.contains("latlab config example"),
        "{config}"
    );
    let log_line = d.line("log");
    assert!(
        log_line.starts_with("ok ") && log_line.contains(log.to_str().unwrap()),
        "{log_line}"
    );
    let terminal = d.line("terminal");
    assert!(
        terminal.starts_with("warn ") && terminal.contains("not a terminal"),
        "{terminal}"
    );
    for lab in ["kinesis lab", "s3 lab", "redis lab"] {
        assert!(d.has(&format!("{lab}: can run")), "{lab}:\n{}", d.out);
    }
    // The log file was opened for appending, not truncated nor left out.
    assert!(log.exists());
}

#[test]
fn an_unreachable_port_fails_the_kinesis_and_s3_labs() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("latlab.log");
    let d = run(doctor(
        home.path(),
        &["--endpoint-url", &url, "--log", log.to_str().unwrap()],
    ));
    assert!(!d.ok, "exit status 0:\n{}", d.out);
    let endpoint = d.line("endpoint");
    assert!(endpoint.starts_with("FAIL "), "{endpoint}");
    assert!(endpoint.contains(&url), "{endpoint}");
    assert!(endpoint.contains("Fix: "), "{endpoint}");
    // The test's credentials and region were found, and only the key's end is shown.
    assert!(d.line("region").starts_with("ok "), "{}", d.out);
    let creds = d.line("credentials");
    assert!(
        creds.starts_with("ok ") && creds.contains("...9876"),
        "{creds}"
    );
    assert!(!d.out.contains("latlab-test-secret"), "{}", d.out);
    assert!(d.has("kinesis lab: cannot run (endpoint)"), "{}", d.out);
    assert!(d.has("s3 lab: cannot run (endpoint)"), "{}", d.out);
}

#[test]
fn without_redis_server_on_path_the_redis_lab_cannot_run() {
    let home = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let log = home.path().join("latlab.log");
    let mut c = doctor(home.path(), &["--log", log.to_str().unwrap()]);
    c.env("PATH", empty.path());
    let d = run(c);
    assert!(!d.ok, "exit status 0:\n{}", d.out);
    let redis = d.line("redis-server");
    assert!(redis.starts_with("FAIL "), "{redis}");
    assert!(redis.contains("not on PATH"), "{redis}");
    assert!(
        redis.contains("Fix: sudo apt-get install -y redis-server"),
        "{redis}"
    );
    assert!(d.has("redis lab: cannot run (redis-server)"), "{}", d.out);
    assert!(d.has("kinesis lab: can run"), "{}", d.out);
    assert!(d.has("s3 lab: can run"), "{}", d.out);
}

/// A child process killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn an_endpoint_lacking_subscribe_to_shard_is_named() {
    let mut child = Killed(
        Command::new(env!("CARGO_BIN_EXE_latlab"))
            .args([
                "emulate",
                "--lacking",
                "SubscribeToShard",
                "--listen",
                "127.0.0.1:0",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("latlab emulate starts"),
    );
    // Its banner names the port it bound: read it on a thread, waiting a bounded time.
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let banner = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("latlab emulate printed no banner within 60 s");
    let url = banner
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no URL in the banner: {banner:?}"))
        .to_string();
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("latlab.log");
    let d = run(doctor(
        home.path(),
        &["--endpoint-url", &url, "--log", log.to_str().unwrap()],
    ));
    assert!(d.line("endpoint").starts_with("ok "), "{}", d.out);
    let ops = d.line("kinesis ops");
    assert!(
        ops.contains("SubscribeToShard does not answer (HTTP 500"),
        "{ops}"
    );
    // Fan-out consumers stop and the others run: a warning, not a lab that cannot run.
    assert!(ops.starts_with("warn "), "{ops}");
    assert!(!ops.contains("RegisterStreamConsumer"), "{ops}");
    assert!(
        d.has("kinesis lab: can run, with limits (kinesis ops)"),
        "{}",
        d.out
    );
    // On another endpoint latlab creates no buckets: the S3 lab needs them named.
    assert!(d.line("s3 buckets").starts_with("FAIL "), "{}", d.out);
}

#[test]
fn a_log_that_cannot_be_written_fails_the_live_lab() {
    let home = tempfile::tempdir().unwrap();
    // Under a file no directory can be made, whatever the user's permissions.
    let file = home.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let log = file.join("latlab.log");
    let d = run(doctor(home.path(), &["--log", log.to_str().unwrap()]));
    assert!(!d.ok, "exit status 0:\n{}", d.out);
    let line = d.line("log");
    assert!(line.starts_with("FAIL "), "{line}");
    assert!(line.contains(log.to_str().unwrap()), "{line}");
    assert!(line.contains("Fix: "), "{line}");
    assert!(d.has("live lab (TUI): cannot run (log)"), "{}", d.out);
    assert!(!log.exists());
}

/// A Redis pair of one's own (`--redis-primary`, `--redis-replica`): latlab's own real
/// redis-server pair stands in for it. Both answer with their roles; the primary named as the
/// replica is refused, naming its role; and a port with no server is named.
#[test]
fn a_given_redis_pair_is_checked_with_its_roles() {
    common::require_redis_server();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let link = || latlab::labs::redis::local::LinkProfile::resolve("loopback").unwrap();
    let pair = rt
        .block_on(latlab::labs::redis::local::LocalRedis::start(
            link(),
            link(),
        ))
        .expect("latlab's redis-server pair starts");
    let (primary, replica) = (pair.primary_url(), pair.replica_url());
    let home = tempfile::tempdir().unwrap();
    let given = |p: &str, r: &str| {
        run(doctor(
            home.path(),
            &["--redis-primary", p, "--redis-replica", r],
        ))
    };

    let d = given(&primary, &replica);
    assert!(d.ok, "{}\n{}", d.out, d.err);
    assert!(d.line("redis primary").starts_with("ok "), "{}", d.out);
    assert!(d.line("redis primary").contains("a primary"), "{}", d.out);
    let r = d.line("redis replica");
    assert!(
        r.starts_with("ok ") && r.contains("a replica of") && r.contains("link up"),
        "{r}"
    );
    // The pair is given: redis-server on this machine is not needed, so not checked.
    assert!(!d.out.contains("redis-server "), "{}", d.out);
    assert!(d.has("redis lab: can run"), "{}", d.out);

    let d = given(&primary, &primary);
    assert!(!d.ok, "{}", d.out);
    let r = d.line("redis replica");
    assert!(
        r.starts_with("FAIL ") && r.contains("not a replica (role:master)"),
        "{r}"
    );
    assert!(d.has("redis lab: cannot run (redis replica)"), "{}", d.out);

    let gone = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = gone.local_addr().unwrap().port();
    drop(gone);
    let d = given(&primary, &format!("redis://127.0.0.1:{port}"));
    assert!(!d.ok, "{}", d.out);
    let r = d.line("redis replica");
    assert!(
        r.starts_with("FAIL ") && r.contains(&format!("127.0.0.1:{port}")),
        "{r}"
    );
    drop(pair);
}

/// `--aws` with no credentials anywhere (no keys in the environment, no AWS files, instance
/// metadata off): the credentials line fails with its fix, and nothing is called on AWS.
#[test]
fn real_aws_without_credentials_says_so_and_calls_nothing() {
    let home = tempfile::tempdir().unwrap();
    let mut c = doctor(home.path(), &["--aws"]);
    c.env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
        .env_remove("AWS_CONTAINER_CREDENTIALS_FULL_URI")
        .env_remove("AWS_WEB_IDENTITY_TOKEN_FILE");
    let d = run(c);
    assert!(!d.ok, "{}", d.out);
    assert!(d.line("region").starts_with("ok "), "{}", d.out);
    let creds = d.line("credentials");
    assert!(creds.starts_with("FAIL "), "{creds}");
    assert!(creds.contains("Fix: "), "{creds}");
    assert!(
        !d.out.contains("kinesis ops") && !d.out.contains("s3 ops"),
        "no operation is probed without credentials: {}",
        d.out
    );
    assert!(d.has("kinesis lab: cannot run (credentials)"), "{}", d.out);
    assert!(d.has("s3 lab: cannot run (credentials)"), "{}", d.out);
}

/// The config file's endpoint is the one doctor probes, and its line names the file.
#[test]
fn the_config_files_endpoint_is_the_one_probed() {
    let home = tempfile::tempdir().unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dir = home.path().join("config").join("latlab");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!("endpoint_url = \"http://127.0.0.1:{port}\"\n"),
    )
    .unwrap();
    let d = run(doctor(home.path(), &[]));
    assert!(!d.ok, "{}", d.out);
    let config = d.line("config");
    assert!(
        config.starts_with("ok ") && config.contains("config.toml read, 1 key set"),
        "{config}"
    );
    let endpoint = d.line("endpoint");
    assert!(
        endpoint.starts_with("FAIL ") && endpoint.contains(&format!("http://127.0.0.1:{port}")),
        "{endpoint}"
    );
}
