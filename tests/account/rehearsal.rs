//! A first real run, rehearsed offline: `latlab --aws` exactly as a user with an account runs it,
//! in a network namespace that looks like AWS. The SDK resolves every endpoint itself (no
//! `--endpoint-url`): the account-based Kinesis endpoints of fan-out, S3's buckets in the host,
//! the directory bucket's session, SQS and STS. A resolver of the test's own (dnsmasq) answers
//! every `*.amazonaws.com` name with 127.0.0.1, where `latlab emulate` serves TLS on port 443 with
//! a certificate of the test's own authority; latlab trusts it through `AWS_CA_BUNDLE`. Beside
//! them stand what a machine has around it: an IMDSv2 endpoint on 169.254.169.254, a container
//! credentials endpoint, a proxy that forwards and one that refuses
//! (`tests/python/rehearsal_servers.py`).
//!
//! The namespace has only its loopback: nothing can leave it. The resolver's log and the
//! emulator's count by host show that every name asked and every request made was AWS's.
//!
//! It needs root and network namespaces (`.ci/run` runs as root), `ip` (iproute2), `dnsmasq`
//! (dnsmasq-base), `openssl`, and python3 with boto3: a missing one fails with a clear message.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

const REGION: &str = "us-east-1";
const STANDARD: &str = "rehearsal-std";
const EXPRESS: &str = "rehearsal--use1-az4--x-s3";

/// Every name the certificate covers: the endpoints the SDK resolves for the labs in us-east-1.
const NAMES: &[&str] = &[
    "kinesis.us-east-1.amazonaws.com",
    "*.control-kinesis.us-east-1.amazonaws.com",
    "*.data-kinesis.us-east-1.amazonaws.com",
    "s3.us-east-1.amazonaws.com",
    "*.s3.us-east-1.amazonaws.com",
    "s3.amazonaws.com",
    "*.s3.amazonaws.com",
    "*.s3express-use1-az4.us-east-1.amazonaws.com",
    "s3express-control.us-east-1.amazonaws.com",
    "sqs.us-east-1.amazonaws.com",
    "sts.us-east-1.amazonaws.com",
    "sts.amazonaws.com",
    "dynamodb.us-east-1.amazonaws.com",
    "*.ddb.us-east-1.amazonaws.com",
    "streams.dynamodb.us-east-1.amazonaws.com",
];

/// One rehearsal's namespace, resolver, emulator and surroundings, removed (with every process
/// in them) when dropped.
struct Rehearsal {
    ns: String,
    dir: tempfile::TempDir,
    children: Vec<Child>,
}

impl Drop for Rehearsal {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        if let Ok(out) = Command::new("ip")
            .args(["netns", "pids", &self.ns])
            .output()
        {
            for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let _ = Command::new("kill").args(["-9", pid]).status();
            }
        }
        let _ = Command::new("ip").args(["netns", "del", &self.ns]).status();
        let _ = std::fs::remove_dir_all(format!("/etc/netns/{}", self.ns));
    }
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().unwrap_or_else(|e| {
        panic!("`ip` (iproute2) makes the rehearsal's network namespace and could not be run: {e}")
    });
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

/// Waits (bounded) until `file` holds `what`.
fn wait_for(file: &Path, what: &str, within: Duration) -> String {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        if text.contains(what) {
            return text;
        }
        assert!(
            start.elapsed() < within,
            "{} did not say '{what}' within {within:?}: {text}",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Rehearsal {
    fn new(tag: &str) -> Rehearsal {
        common::require_boto3();
        if Command::new("dnsmasq").arg("--version").output().is_err() {
            panic!(
                "the rehearsal's resolver is dnsmasq, which could not be run: install dnsmasq-base (.ci/run does)"
            );
        }
        let ns = format!("ll{}{tag}", std::process::id());
        match Command::new("ip").args(["netns", "add", &ns]).output() {
            Err(e) => panic!(
                "the rehearsal makes a network namespace with `ip netns` (iproute2), which could not be run: {e}"
            ),
            Ok(out) if !out.status.success() => panic!(
                "the rehearsal makes a network namespace and runs where that is allowed (as root, as .ci/run runs it); `ip netns add` said: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Ok(_) => {}
        }
        let mut r = Rehearsal {
            ns: ns.clone(),
            dir: tempfile::tempdir().unwrap(),
            children: Vec::new(),
        };
        ip(&["-n", &ns, "link", "set", "lo", "up"]);
        // Instance metadata's address, inside the namespace only.
        ip(&["-n", &ns, "addr", "add", "169.254.169.254/32", "dev", "lo"]);
        // `ip netns exec` puts /etc/netns/NAME/resolv.conf over /etc/resolv.conf: the
        // namespace's resolver is the test's dnsmasq.
        let etc = PathBuf::from(format!("/etc/netns/{ns}"));
        std::fs::create_dir_all(&etc).unwrap();
        std::fs::write(etc.join("resolv.conf"), "nameserver 127.0.0.1\n").unwrap();
        let d = r.dir.path().to_path_buf();
        common::test_ca(&d, NAMES);
        std::fs::create_dir_all(d.join("home")).unwrap();
        let mut dns = r.in_ns("dnsmasq");
        dns.args([
            "--keep-in-foreground",
            "--no-resolv",
            "--no-hosts",
            "--listen-address=127.0.0.1",
            "--bind-interfaces",
            "--address=/amazonaws.com/127.0.0.1",
            "--log-queries",
            "--user=root",
        ]);
        dns.arg(format!("--log-facility={}", d.join("dns.log").display()))
            .arg(format!("--pid-file={}", d.join("dns.pid").display()));
        let child = dns
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        r.children.push(child);
        wait_for(&d.join("dns.log"), "started", Duration::from_secs(10));
        let cert = d.join("server.pem").display().to_string();
        let key = d.join("server.key").display().to_string();
        let child = r
            .in_ns(env!("CARGO_BIN_EXE_latlab"))
            .args([
                "emulate",
                "--listen",
                "127.0.0.1:443",
                "--tls-cert",
                &cert,
                "--tls-key",
                &key,
                "--limit",
                "stream_activation=0s",
                "--limit",
                "consumer_activation=0s",
            ])
            .stdout(std::fs::File::create(d.join("emulator.out")).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        r.children.push(child);
        wait_for(
            &d.join("emulator.out"),
            "listening on https://127.0.0.1:443",
            Duration::from_secs(10),
        );
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/rehearsal_servers.py");
        let child = r
            .in_ns("python3")
            .arg(script)
            .arg(d.join("servers.log"))
            .stdout(std::fs::File::create(d.join("servers.out")).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        r.children.push(child);
        wait_for(&d.join("servers.out"), "ready", Duration::from_secs(10));
        r
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    /// `program` inside the namespace with an empty environment but `PATH` and a `HOME` of the
    /// test's own: nothing of the tester's AWS set-up (profiles, keys, endpoints) reaches it.
    fn in_ns(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns, "env", "-i"])
            .arg(format!(
                "PATH={}",
                std::env::var("PATH").unwrap_or_default()
            ))
            .arg(format!("HOME={}", self.path("home")))
            .arg(program);
        c
    }

    /// `latlab ARGS` inside the namespace, with `env` (`KEY=VALUE`) set.
    fn latlab(&self, env: &[String], args: &[&str]) -> (bool, String, String) {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns, "env", "-i"])
            .arg(format!(
                "PATH={}",
                std::env::var("PATH").unwrap_or_default()
            ))
            .arg(format!("HOME={}", self.path("home")))
            .args(env)
            .arg(env!("CARGO_BIN_EXE_latlab"))
            .args(args)
            .stdin(Stdio::null());
        common::output(&mut c)
    }

    /// Keys in the environment, the region and the test's authority: a user's first run.
    fn user(&self) -> Vec<String> {
        vec![
            "AWS_ACCESS_KEY_ID=AKIDREHEARSAL".into(),
            "AWS_SECRET_ACCESS_KEY=rehearsal-secret".into(),
            format!("AWS_REGION={REGION}"),
            format!("AWS_CA_BUNDLE={}", self.path("ca.pem")),
        ]
    }

    /// `latlab cleanup --aws` finds nothing of latlab's on the account.
    fn nothing_left(&self, user: &[String]) {
        let (ok, clean, err) = self.latlab(
            user,
            &[
                "cleanup",
                "--aws",
                "--s3-bucket",
                STANDARD,
                "--s3-express-bucket",
                EXPRESS,
            ],
        );
        assert!(ok, "{err}");
        assert!(
            clean.contains("nothing latlab left to delete"),
            "{clean}{err}"
        );
    }

    /// Every name the resolver was asked and every host a request was sent to is AWS's (printed);
    /// the requests by host.
    fn only_aws(&self) -> Vec<(String, u64)> {
        let names = self.names_asked();
        let by_host = hosts(&self.stats());
        println!("names the resolver was asked: {names:?}");
        println!("requests by host: {by_host:?}");
        assert!(
            names.iter().all(|n| n.ends_with(".amazonaws.com")),
            "{names:?}"
        );
        assert!(
            by_host.iter().all(|(h, _)| h.ends_with(".amazonaws.com")),
            "{by_host:?}"
        );
        by_host
    }

    /// Every name the resolver was asked, once each.
    fn names_asked(&self) -> Vec<String> {
        let log = std::fs::read_to_string(self.path("dns.log")).unwrap_or_default();
        let mut names: Vec<String> = log
            .lines()
            .filter_map(|l| l.split("query[").nth(1))
            .filter_map(|q| q.split_whitespace().nth(1))
            .map(str::to_string)
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The emulator's stats document, read inside the namespace.
    fn stats(&self) -> serde_json::Value {
        let code = format!(
            "import json, ssl, urllib.request\n\
             ctx = ssl.create_default_context(cafile='{}')\n\
             ctx.check_hostname = False\n\
             print(urllib.request.urlopen('https://127.0.0.1/_latlab/stats', context=ctx).read().decode())",
            self.path("ca.pem")
        );
        let out = self.in_ns("python3").args(["-c", &code]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// The lines of the surroundings' log (`imds GET ...`, `proxy CONNECT ...`).
    fn servers_log(&self) -> Vec<String> {
        std::fs::read_to_string(self.path("servers.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Makes the two buckets with boto3, through the default endpoints, as a user makes them
    /// once before measuring.
    fn make_buckets(&self) {
        let code = format!(
            "import boto3\n\
             s3 = boto3.client('s3', region_name='{REGION}')\n\
             s3.create_bucket(Bucket='{STANDARD}')\n\
             s3.create_bucket(Bucket='{EXPRESS}', CreateBucketConfiguration={{'Location': {{'Type': 'AvailabilityZone', 'Name': 'use1-az4'}}, 'Bucket': {{'DataRedundancy': 'SingleAvailabilityZone', 'Type': 'Directory'}}}})\n\
             print(sorted(b['Name'] for b in s3.list_buckets()['Buckets']))"
        );
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns, "env", "-i"])
            .arg(format!(
                "PATH={}",
                std::env::var("PATH").unwrap_or_default()
            ))
            .arg(format!("HOME={}", self.path("home")))
            .args(self.user())
            .args(["python3", "-c", &code]);
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "making the buckets with boto3: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The one line a failed run's error is: the last on standard error, and the only one that says
/// `error` (a line before it may be the plan's cost, printed as a run starts).
fn one_error_line(err: &str) -> String {
    let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].starts_with("latlab: error: "), "{err}");
    assert_eq!(err.trim_end().lines().last(), Some(errors[0]), "{err}");
    println!("{}", errors[0]);
    errors[0].to_string()
}

/// The hosts the emulator was sent requests on, with their counts.
fn hosts(stats: &serde_json::Value) -> Vec<(String, u64)> {
    stats["hosts"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(h, n)| (h.clone(), n.as_u64().unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_lab_runs_through_the_default_endpoints_and_nothing_leaves_the_namespace() {
    let r = Rehearsal::new("rh");
    let user = r.user();

    // No terminal to confirm on and no --yes: nothing starts, and the plan says why.
    let (ok, _, err) = r.latlab(&user, &["run", "demo", "--aws", "--duration", "3s"]);
    assert!(!ok);
    assert!(err.contains("pass --yes to go on"), "{err}");

    // Each lab that measures an AWS service: its plan creates nothing and reads only; its run,
    // under a cap it stays within, measures through the SDK's own endpoints and uploads its
    // recording to S3 by the SDK's default addressing.
    r.make_buckets();
    let buckets = ["--s3-bucket", STANDARD, "--s3-express-bucket", EXPRESS];
    let mut reports = Vec::new();
    for scenario in ["demo", "s3-demo", "sqs-demo", "dynamodb-cdc"] {
        let mut plan_args = vec!["plan", scenario, "--aws"];
        plan_args.extend(buckets);
        let (ok, plan, err) = r.latlab(&user, &plan_args);
        assert!(ok, "{scenario}: {err}");
        assert!(
            plan.contains(&format!(
                "plan: {scenario} on AWS {REGION} (your account, billed)"
            )),
            "{plan}"
        );
        assert!(plan.contains("nothing has been created"), "{plan}");
        let to = format!("s3://{STANDARD}/recordings/{scenario}");
        let mut run_args = vec![
            "run",
            scenario,
            "--aws",
            "--yes",
            "--duration",
            "3s",
            "--max-cost",
            "1",
            "--record-to",
            &to,
        ];
        run_args.extend(buckets);
        let (ok, report, err) = r.latlab(&user, &run_args);
        assert!(ok, "{scenario}: {err}");
        assert!(
            report.contains(&format!("backend  AWS {REGION} (measured)")),
            "{scenario}: {report}"
        );
        assert!(
            err.contains(&format!("uploaded the recording to {to}/")),
            "{scenario}: {err}"
        );
        reports.push((scenario, report));
    }

    // Kinesis: every consumer kind, fan-out through the account's own endpoints, and every
    // record accounted for (received + lost + unread = acknowledged, none lost).
    let demo = &reports[0].1;
    let accounted: Vec<&str> = demo
        .split("every record accounted for")
        .nth(1)
        .unwrap_or("")
        .lines()
        .skip(3)
        .take(4)
        .collect();
    println!(
        "Kinesis, every record accounted for:\n{}",
        accounted.join("\n")
    );
    for consumer in [
        "Lambda EFO",
        "SDK subscribe_to_shard",
        "get_records",
        "Lambda standard iterator",
    ] {
        let row = accounted
            .iter()
            .find(|l| l.starts_with(consumer))
            .unwrap_or_else(|| panic!("{consumer}: {demo}"));
        let n: Vec<u64> = row[consumer.len()..]
            .split_whitespace()
            .take(4)
            .map(|v| v.parse().unwrap())
            .collect();
        assert!(n[0] > 0 && n[1] + n[2] + n[3] == n[0] && n[2] == 0, "{row}");
    }
    // S3: a Standard bucket and a directory bucket, each addressed in the host.
    let s3 = &reports[1].1;
    assert!(s3.contains("EXPRESS_ONEZONE  PUT"), "{s3}");
    // SQS: every message counted.
    let sqs = &reports[2].1;
    let counted: Vec<&str> = sqs
        .lines()
        .filter(|l| l.contains("every message counted"))
        .collect();
    println!("SQS: {counted:?}");
    assert!(!counted.is_empty(), "{sqs}");
    // DynamoDB: the table's changes through the stream (two readers) and the Kinesis destination,
    // every change counted (received + lost + unread = written, none lost).
    let ddb = &reports[3].1;
    let counted: Vec<&str> = ddb
        .split("every change counted")
        .nth(1)
        .unwrap_or("")
        .lines()
        .skip(3)
        .take(3)
        .collect();
    println!("DynamoDB, every change counted:\n{}", counted.join("\n"));
    for consumer in ["streams-poller", "lambda", "fan-out"] {
        let row = counted
            .iter()
            .find(|l| l.starts_with(consumer))
            .unwrap_or_else(|| panic!("{consumer}: {ddb}"));
        let n: Vec<u64> = row[consumer.len()..]
            .split_whitespace()
            .take(4)
            .map(|v| v.replace(',', "").parse().unwrap())
            .collect();
        assert!(n[0] > 0 && n[1] + n[2] + n[3] == n[0] && n[2] == 0, "{row}");
    }

    // A cap that a few seconds pass: the run stops itself there.
    let (ok, capped, err) = r.latlab(
        &user,
        &[
            "run",
            "demo",
            "--aws",
            "--yes",
            "--duration",
            "30s",
            "--max-cost",
            "0.00001",
        ],
    );
    assert!(ok, "{err}");
    assert!(capped.contains("stopped at the cost cap"), "{capped}");

    // Nothing left behind, and the doctor's view of the account.
    r.nothing_left(&user);
    let (_, doctor, _) = r.latlab(
        &user,
        &[
            "doctor",
            "--aws",
            "--s3-bucket",
            STANDARD,
            "--s3-express-bucket",
            EXPRESS,
        ],
    );
    println!("{doctor}");
    for line in [
        format!("AWS_CA_BUNDLE={}", r.path("ca.pem")),
        "from EnvironmentVariable".to_string(),
        "(account 000000000000), from STS GetCallerIdentity".to_string(),
        "kinesis lab: can run".to_string(),
        "s3 lab: can run".to_string(),
        "sqs lab: can run".to_string(),
    ] {
        assert!(doctor.contains(&line), "{line}\n{doctor}");
    }

    // What the SDK chose, by name, and nothing else: every name the resolver was asked and every
    // host a request was sent to is AWS's.
    let by_host = r.only_aws();
    println!("requests by HTTP version: {}", r.stats()["http_versions"]);
    for expected in [
        "kinesis.us-east-1.amazonaws.com".to_string(),
        "000000000000.control-kinesis.us-east-1.amazonaws.com".to_string(),
        "000000000000.data-kinesis.us-east-1.amazonaws.com".to_string(),
        format!("{STANDARD}.s3.us-east-1.amazonaws.com"),
        "sqs.us-east-1.amazonaws.com".to_string(),
        "sts.us-east-1.amazonaws.com".to_string(),
        "streams.dynamodb.us-east-1.amazonaws.com".to_string(),
    ] {
        assert!(
            by_host.iter().any(|(h, _)| *h == expected),
            "{expected}: {by_host:?}"
        );
    }
    assert!(
        by_host.iter().any(|(h, _)| h.starts_with(EXPRESS)),
        "the directory bucket's host: {by_host:?}"
    );
    // DynamoDB's regional endpoint, or its account-based one when the credentials carry the
    // account (the SDK's default `preferred` mode).
    assert!(
        by_host
            .iter()
            .any(|(h, _)| *h == "dynamodb.us-east-1.amazonaws.com"
                || *h == "000000000000.ddb.us-east-1.amazonaws.com"),
        "DynamoDB's host: {by_host:?}"
    );
}

/// `latlab calibrate --aws` as a user runs it: the plan and its price first, no start without a
/// terminal or `--yes`, then every service with a probe through the SDK's default endpoints,
/// Redis left out (no pair named) and said so, a profile whose every parameter was measured on
/// AWS, and nothing left behind.
#[test]
fn calibrate_on_aws_goes_through_the_default_endpoints_and_leaves_nothing() {
    let r = Rehearsal::new("cal");
    let user = r.user();
    r.make_buckets();
    let file = r.path("account.toml");
    let mut args = vec![
        "calibrate",
        "--aws",
        "--samples",
        "20",
        "--s3-bucket",
        STANDARD,
        "--s3-express-bucket",
        EXPRESS,
        "--output",
        &file,
    ];
    let (ok, _, err) = r.latlab(&user, &args);
    assert!(!ok);
    assert!(
        err.contains(&format!(
            "calibrate creates on AWS ({REGION}), and deletes at the end:"
        )),
        "{err}"
    );
    assert!(err.contains("total at list price: $"), "{err}");
    assert!(err.contains("pass --yes to go on"), "{err}");
    assert!(!Path::new(&file).exists());

    args.push("--yes");
    let (ok, out, err) = r.latlab(&user, &args);
    assert!(ok, "{out}\n{err}");
    println!("{out}");
    assert!(
        err.contains("not calibrating redis: calibrating Redis on another endpoint or AWS measures a pair you name"),
        "{err}"
    );
    for made in [
        "created stream",
        "deleted stream",
        "created queue",
        "deleted queue",
    ] {
        assert!(err.contains(made), "{made}: {err}");
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let profile = latlab_emulator::profile::LatencyProfile::from_toml(&text)
        .unwrap_or_else(|e| panic!("{e:#}\n{text}"));
    let measured: Vec<String> = profile
        .params()
        .into_iter()
        .filter(|p| p.provenance.note.contains("latlab calibrate"))
        .map(|p| {
            assert_eq!(p.provenance.source.name(), "measurement", "{}", p.name);
            assert!(
                p.provenance
                    .note
                    .contains(&format!("measured on AWS ({REGION}) on ")),
                "{}: {}",
                p.name,
                p.provenance.note
            );
            p.name
        })
        .collect();
    for service in [
        "kinesis.",
        "s3.standard.",
        "s3.express.",
        "sqs.",
        "dynamodb.",
    ] {
        assert!(
            measured.iter().any(|n| n.starts_with(service)),
            "{service}: {measured:?}"
        );
    }
    assert!(
        !measured.iter().any(|n| n.starts_with("links.")),
        "{measured:?}"
    );

    // Nothing left behind, through the SDK's own endpoints only.
    r.nothing_left(&user);
    let by_host = r.only_aws();
    assert!(
        by_host
            .iter()
            .any(|(h, _)| *h == "000000000000.data-kinesis.us-east-1.amazonaws.com"),
        "the fan-out probe's host: {by_host:?}"
    );
}

#[test]
fn the_credential_chain_as_users_have_it_and_each_failure_in_one_line() {
    let r = Rehearsal::new("rc");
    let ca = format!("AWS_CA_BUNDLE={}", r.path("ca.pem"));
    let region = format!("AWS_REGION={REGION}");
    let config = r.path("aws-config");
    let process = r.path("credentials.sh");
    let expired = r.path("expired.sh");
    std::fs::write(
        &process,
        "#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\": \"AKIDPROCESS\", \"SecretAccessKey\": \"s\", \"SessionToken\": \"t\", \"Expiration\": \"2099-01-01T00:00:00Z\"}'\n",
    )
    .unwrap();
    std::fs::write(
        &expired,
        "#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\": \"AKIDEXPIRED\", \"SecretAccessKey\": \"s\", \"SessionToken\": \"t\", \"Expiration\": \"2020-01-01T00:00:00Z\"}'\n",
    )
    .unwrap();
    for f in [&process, &expired] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(
        &config,
        format!(
            "[profile base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = base-secret\n\n\
             [profile ops]\nrole_arn = arn:aws:iam::000000000000:role/latlab-rehearsal\nsource_profile = base\nregion = {REGION}\n\n\
             [profile proc]\ncredential_process = {process}\nregion = {REGION}\n\n\
             [profile expired]\ncredential_process = {expired}\nregion = {REGION}\n"
        ),
    )
    .unwrap();
    let profile = |name: &str| {
        vec![
            ca.clone(),
            format!("AWS_CONFIG_FILE={config}"),
            format!("AWS_PROFILE={name}"),
            "AWS_EC2_METADATA_DISABLED=true".to_string(),
        ]
    };
    let cases: Vec<(&str, Vec<String>, &str, &str)> = vec![
        (
            "environment",
            r.user(),
            "from EnvironmentVariable",
            "arn:aws:iam::000000000000:user/latlab",
        ),
        (
            "a profile's role_arn and source_profile (STS AssumeRole)",
            profile("ops"),
            "from AssumeRoleProvider",
            "arn:aws:sts::000000000000:assumed-role/latlab-rehearsal/",
        ),
        (
            "a profile's credential_process",
            profile("proc"),
            "...CESS from CredentialProcess",
            "arn:aws:iam::000000000000:user/latlab",
        ),
        (
            "instance metadata (IMDSv2)",
            vec![ca.clone(), region.clone()],
            "from IMDSv2",
            "arn:aws:iam::000000000000:user/latlab",
        ),
        (
            "container credentials",
            vec![
                ca.clone(),
                region.clone(),
                "AWS_CONTAINER_CREDENTIALS_FULL_URI=http://127.0.0.1:8080/creds".into(),
                "AWS_CONTAINER_AUTHORIZATION_TOKEN=rehearsal-token".into(),
                "AWS_EC2_METADATA_DISABLED=true".into(),
            ],
            "from EcsContainer",
            "arn:aws:iam::000000000000:user/latlab",
        ),
    ];
    for (how, env, provider, identity) in &cases {
        let (_, doctor, err) = r.latlab(env, &["doctor", "--aws"]);
        let found: Vec<&str> = doctor
            .lines()
            .filter(|l| l.contains("credentials") || l.contains("identity"))
            .collect();
        println!("{how}:\n  {}", found.join("\n  "));
        assert!(doctor.contains(provider), "{how}: {doctor}{err}");
        assert!(doctor.contains(identity), "{how}: {doctor}{err}");
        assert!(doctor.contains("sqs lab: can run"), "{how}: {doctor}");
    }
    // A run on the assumed role, not only a probe.
    let (ok, sqs, err) = r.latlab(
        &profile("ops"),
        &["run", "sqs-demo", "--aws", "--yes", "--duration", "2s"],
    );
    assert!(ok, "{err}");
    assert!(sqs.contains("(measured)"), "{sqs}");
    let imds = r.servers_log();
    assert!(
        imds.iter().any(|l| l == "imds PUT /latest/api/token"),
        "{imds:?}"
    );
    assert!(
        imds.iter()
            .filter(|l| l.starts_with("imds GET"))
            .all(|l| l.ends_with("token=yes")),
        "IMDSv2 only: {imds:?}"
    );

    // Each failure is one line.
    let one_line = |env: &[String], says: &[&str]| {
        let (ok, _, err) = r.latlab(
            env,
            &["run", "sqs-demo", "--aws", "--yes", "--duration", "2s"],
        );
        assert!(!ok);
        let failure = one_error_line(&err);
        for s in says {
            assert!(failure.contains(s), "{s}: {err}");
        }
    };
    one_line(
        &profile("expired"),
        &["from CredentialProcess expired at 2020-01-01T00:00:00"],
    );
    one_line(
        &[
            "AWS_ACCESS_KEY_ID=a".into(),
            "AWS_SECRET_ACCESS_KEY=b".into(),
            "AWS_EC2_METADATA_DISABLED=true".into(),
            ca.clone(),
        ],
        &["no AWS region"],
    );
}

#[test]
fn trust_and_proxies_as_users_have_them() {
    let r = Rehearsal::new("rp");
    let keys = [
        "AWS_ACCESS_KEY_ID=AKIDPROXIED".to_string(),
        "AWS_SECRET_ACCESS_KEY=s".to_string(),
        format!("AWS_REGION={REGION}"),
    ];
    let with = |extra: &[String]| -> Vec<String> {
        keys.iter().cloned().chain(extra.iter().cloned()).collect()
    };
    let ca = format!("AWS_CA_BUNDLE={}", r.path("ca.pem"));
    let run = |env: &[String]| {
        r.latlab(
            env,
            &["run", "sqs-demo", "--aws", "--yes", "--duration", "2s"],
        )
    };

    // The platform's authorities alone do not know the test's: one line naming AWS_CA_BUNDLE.
    let (ok, _, err) = run(&with(&[]));
    assert!(!ok);
    let failure = one_error_line(&err);
    assert!(
        failure.contains("invalid peer certificate") && failure.contains("AWS_CA_BUNDLE"),
        "{err}"
    );

    // Through a proxy: every connection is a CONNECT to an AWS host.
    let proxy = "HTTPS_PROXY=http://127.0.0.1:3128".to_string();
    let (ok, _, err) = run(&with(&[ca.clone(), proxy.clone()]));
    assert!(ok, "{err}");
    let through: Vec<String> = r
        .servers_log()
        .into_iter()
        .filter(|l| l.starts_with("proxy CONNECT"))
        .collect();
    println!("through the proxy: {through:?}");
    assert!(
        through.iter().all(|l| l.ends_with(".amazonaws.com:443")),
        "{through:?}"
    );
    assert!(
        through
            .iter()
            .any(|l| l == "proxy CONNECT sqs.us-east-1.amazonaws.com:443"),
        "{through:?}"
    );

    // NO_PROXY names AWS's hosts: the proxy sees nothing more.
    let before = r.servers_log().len();
    let (ok, _, err) = run(&with(&[
        ca.clone(),
        proxy,
        "NO_PROXY=.amazonaws.com".into(),
    ]));
    assert!(ok, "{err}");
    assert_eq!(r.servers_log().len(), before, "{:?}", r.servers_log());

    // A proxy that refuses: one line naming it, without its password.
    let (ok, _, err) = run(&with(&[
        ca,
        "HTTPS_PROXY=http://user:hunter2@127.0.0.1:3129".into(),
    ]));
    assert!(!ok);
    let failure = one_error_line(&err);
    assert!(
        failure.contains("HTTPS_PROXY=http://user@127.0.0.1:3129 did not open a tunnel"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
}

/// The rehearsal a user runs themselves before a first real run (`scripts/rehearse`, one
/// command): as root it makes its own namespaces with `unshare`, its own resolver and authority,
/// and runs the doctor and every AWS lab's demo through `--aws` with the user's environment.
#[test]
fn the_users_own_rehearsal_passes_in_one_command() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/rehearse");
    let out = Command::new(&script)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", std::env::temp_dir())
        .env("LATLAB", env!("CARGO_BIN_EXE_latlab"))
        .env("LATLAB_REHEARSAL_DURATION", "2s")
        .env("AWS_ACCESS_KEY_ID", "AKIDREHEARSAL")
        .env("AWS_SECRET_ACCESS_KEY", "rehearsal-secret")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("==") || l.contains("answered") || l.starts_with("rehearsal"))
        .collect();
    println!("{}", summary.join("\n"));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("rehearsal passed: latlab --aws reached every lab's endpoints by name"),
        "{stdout}"
    );
    assert_eq!(
        stdout.matches("backend  AWS us-east-1 (measured)").count(),
        4,
        "{stdout}"
    );
    assert!(
        stdout.contains("000000000000.control-kinesis.us-east-1.amazonaws.com answered"),
        "{stdout}"
    );
    let resolved = stdout
        .split("== what the SDK resolved")
        .nth(1)
        .unwrap_or("");
    assert!(
        !resolved.lines().any(|l| l.trim_end().ends_with(" refused")),
        "{resolved}"
    );
}
