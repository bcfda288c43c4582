//! Running on a real account safely, shown against `latlab emulate` (another endpoint, as an
//! account is): the plan creates nothing and calls only reads; what a run creates is tagged and
//! named by its run id; a run killed with SIGKILL leaves resources that `latlab cleanup` finds
//! and deletes, and a stream merely named like latlab's is left alone; losing the endpoint
//! mid-cleanup leaves what was not deleted listed for a second run; the IAM policy covers every
//! operation a run calls; the cost cap stops a run and says why; a run on AWS with no terminal
//! and no --yes is refused before it creates anything.

use crate::common;

use common::Kill;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{latlab, output, with_credentials};

const STANDARD: &str = "acct-standard";
const EXPRESS: &str = "acct--use1-az4--x-s3";

/// Kinesis (a fan-out consumer and a poller) and S3 (Standard), for the runs these tests make.
const SCENARIO: &str = r#"
name = "acct"
description = "Kinesis and S3 on another endpoint, for the account tests"
duration = "30s"
latency_profile = "zero"

[kinesis]
stream = "latlab-acct"
shards = 1

[kinesis.producer]
rate = 20
payload = "128B"

[[kinesis.consumers]]
kind = "efo"
name = "fan-out"

[[kinesis.consumers]]
kind = "poller"
name = "poller"
interval = "200ms"

[s3]
class = "standard"
payload = "1KB"
concurrency = 1
"#;

use common::emulate;

fn scenario_file() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("acct.toml");
    std::fs::write(&path, SCENARIO).unwrap();
    let p = path.display().to_string();
    (dir, p)
}

/// `latlab ARGS` against the endpoint `url`, with the buckets.
fn on(url: &str, args: &[&str]) -> (bool, String, String) {
    output(with_credentials(&mut latlab()).args(args).args([
        "--endpoint-url",
        url,
        "--s3-bucket",
        STANDARD,
        "--s3-express-bucket",
        EXPRESS,
    ]))
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn clients(url: &str) -> (aws_sdk_kinesis::Client, aws_sdk_s3::Client) {
    let retry = aws_smithy_types::retry::RetryConfig::standard();
    (
        latlab::aws::emulator_kinesis_client(url, retry.clone()),
        latlab::aws::emulator_s3_client(url, retry),
    )
}

/// Everything on the endpoint: each stream with its tags and consumers, each bucket's keys.
/// A stream: its name, tags and consumers.
type Stream = (String, Vec<(String, String)>, Vec<String>);

#[derive(Debug, PartialEq)]
struct Inventory {
    streams: Vec<Stream>,
    objects: Vec<String>,
}

async fn inventory(k: &aws_sdk_kinesis::Client, s3: &aws_sdk_s3::Client) -> Inventory {
    let names = k
        .list_streams()
        .send()
        .await
        .unwrap()
        .stream_names()
        .to_vec();
    let mut streams = Vec::new();
    for n in names {
        let tags = k
            .list_tags_for_stream()
            .stream_name(&n)
            .send()
            .await
            .unwrap()
            .tags()
            .iter()
            .map(|t| (t.key().to_string(), t.value().unwrap_or("").to_string()))
            .collect();
        let arn = k
            .describe_stream_summary()
            .stream_name(&n)
            .send()
            .await
            .unwrap()
            .stream_description_summary()
            .unwrap()
            .stream_arn()
            .to_string();
        let consumers = k
            .list_stream_consumers()
            .stream_arn(arn)
            .send()
            .await
            .unwrap()
            .consumers()
            .iter()
            .map(|c| c.consumer_name().to_string())
            .collect();
        streams.push((n, tags, consumers));
    }
    let mut objects = Vec::new();
    for b in [STANDARD, EXPRESS] {
        let page = s3.list_objects_v2().bucket(b).send().await.unwrap();
        objects.extend(
            page.contents()
                .iter()
                .map(|o| format!("{b}/{}", o.key().unwrap_or(""))),
        );
    }
    objects.sort();
    Inventory { streams, objects }
}

/// The emulator's stats document (`GET /_latlab/stats`).
fn stats(url: &str) -> serde_json::Value {
    let addr = url.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "GET /_latlab/stats HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    serde_json::from_str(text.split_once("\r\n\r\n").unwrap().1).unwrap()
}

/// Every operation the endpoint was asked for, with how many times: Kinesis's by name, S3's
/// by class and name.
fn operations(url: &str) -> std::collections::BTreeMap<String, u64> {
    let doc = stats(url);
    let mut ops = std::collections::BTreeMap::new();
    for (op, n) in doc["operations"].as_object().unwrap() {
        ops.insert(format!("kinesis {op}"), n.as_u64().unwrap());
    }
    for entry in doc["s3"]["operations"].as_array().unwrap() {
        let (class, op, counts) = (&entry[0], &entry[1], &entry[2]);
        let n = counts["requests"].as_u64().unwrap() + counts["errors"].as_u64().unwrap_or(0);
        ops.insert(
            format!("s3 {} {}", class.as_str().unwrap(), op.as_str().unwrap()),
            n,
        );
    }
    ops
}

/// The buckets the S3 lab is given, an object of someone else's in each, and a stream someone
/// else made with a name like latlab's.
async fn set_up(k: &aws_sdk_kinesis::Client, s3: &aws_sdk_s3::Client) {
    for b in [STANDARD, EXPRESS] {
        s3.create_bucket().bucket(b).send().await.unwrap();
        s3.put_object()
            .bucket(b)
            .key("keep/me")
            .body(b"not latlab's".to_vec().into())
            .send()
            .await
            .unwrap();
    }
    k.create_stream()
        .stream_name("latlab-acct-latlab-decoy")
        .shard_count(1)
        .send()
        .await
        .unwrap();
}

#[test]
fn a_plan_creates_nothing_and_calls_only_reads() {
    let (_emu, url) = emulate(&[]);
    let (_dir, scenario) = scenario_file();
    let rt = rt();
    let (k, s3) = clients(&url);
    rt.block_on(set_up(&k, &s3));
    let before = rt.block_on(inventory(&k, &s3));
    let ops_before = operations(&url);

    let (ok, text, err) = on(&url, &["plan", "--scenario", &scenario]);
    assert!(ok, "{err}");
    assert!(text.contains("nothing has been created"), "{text}");
    // What it would create, named by the run id it would carry, and the stream's tags.
    let run_id = text
        .lines()
        .next()
        .and_then(|l| l.split("(run id ").nth(1))
        .map(|s| s.trim_end_matches(')').to_string())
        .unwrap();
    assert!(
        text.contains(&format!("stream latlab-acct-latlab-{run_id}: 1 shard")),
        "{text}"
    );
    assert!(text.contains(&format!("fan-out-latlab-{run_id}")), "{text}");
    assert!(text.contains(&format!("latlab:run-id={run_id}")), "{text}");
    assert!(text.contains("found: not there yet"), "{text}");
    // What it uses: the buckets, found by HeadBucket.
    assert!(
        text.contains(&format!("bucket (S3 Standard) {STANDARD}: given")),
        "{text}"
    );
    assert!(
        text.contains(&format!("{STANDARD}/latlab/{run_id}/")),
        "{text}"
    );
    assert!(text.contains("found: there"), "{text}");
    // Its calls with their IAM actions, and the cost with each price's provenance.
    for line in [
        "PutRecord                  kinesis:PutRecord",
        "SubscribeToShard           kinesis:SubscribeToShard",
        "PutObject                  s3:PutObject",
        "CreateSession              s3express:CreateSession",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    assert!(text.contains("cost: $"), "{text}");
    assert!(text.contains("for the scenario's 30s"), "{text}");
    assert!(
        text.contains("kinesis.shard_hour                         0.015        unverified:"),
        "{text}"
    );

    // As data, and as `run --dry-run`.
    let (ok, json, err) = on(&url, &["plan", "--scenario", &scenario, "--format", "json"]);
    assert!(ok, "{err}");
    let plan: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(plan["format"], "latlab-plan/1");
    assert_eq!(plan["billed"], false);
    assert!(plan["cost"]["hourly_usd"].as_f64().unwrap() > 0.0);
    assert!(plan["cost"]["total_usd"].as_f64().unwrap() > 0.0);
    for p in plan["cost"]["prices"].as_array().unwrap() {
        assert!(!p["source"].as_str().unwrap().is_empty(), "{p}");
    }
    assert!(
        plan["actions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "kinesis:CreateStream")
    );
    let (ok, dry, err) = on(&url, &["run", "--scenario", &scenario, "--dry-run"]);
    assert!(ok, "{err}");
    assert!(dry.starts_with("plan: acct on endpoint"), "{dry}");

    // Nothing changed on the endpoint, and every call the plans made was a read.
    assert_eq!(rt.block_on(inventory(&k, &s3)), before);
    let ops_after = operations(&url);
    let mut called: Vec<String> = ops_after
        .iter()
        .filter(|(op, n)| ops_before.get(*op) != Some(n))
        .map(|(op, _)| op.clone())
        .collect();
    // The inventory's own calls are reads too; what matters is that nothing else was called.
    called.retain(|op| {
        !matches!(
            op.as_str(),
            "kinesis ListStreams"
                | "kinesis ListTagsForStream"
                | "kinesis ListStreamConsumers"
                | "s3 Standard ListObjectsV2"
                | "s3 ExpressOneZone ListObjectsV2"
        )
    });
    let reads = [
        "kinesis DescribeStreamSummary",
        "s3 Standard HeadBucket",
        "s3 ExpressOneZone HeadBucket",
        "s3 ExpressOneZone CreateSession",
    ];
    for op in &called {
        assert!(
            reads.contains(&op.as_str()),
            "the plan called {op}: {called:?}"
        );
    }
    assert!(
        called.iter().any(|o| o == "kinesis DescribeStreamSummary"),
        "{called:?}"
    );

    // A stream given that is not there: the plan says the run would stop.
    let (ok, text, _) = on(&url, &["plan", "--scenario", &scenario, "--stream", "nope"]);
    assert!(!ok);
    assert!(
        text.contains("cannot run: the stream nope given with --stream is not there"),
        "{text}"
    );
}

/// Waits (at most 90 s) until `done` holds of the endpoint's inventory.
fn wait_for(
    rt: &tokio::runtime::Runtime,
    k: &aws_sdk_kinesis::Client,
    s3: &aws_sdk_s3::Client,
    what: &str,
    done: impl Fn(&Inventory) -> bool,
) -> Inventory {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let inv = rt.block_on(inventory(k, s3));
        if done(&inv) {
            return inv;
        }
        assert!(Instant::now() < deadline, "{what}: {inv:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn what_a_killed_run_left_is_tagged_found_and_deleted_and_nothing_else_is_touched() {
    let (_emu, url) = emulate(&[]);
    let (_dir, scenario) = scenario_file();
    let rt = rt();
    let (k, s3) = clients(&url);
    rt.block_on(set_up(&k, &s3));
    let mut run = Kill(
        with_credentials(&mut latlab())
            .args([
                "run",
                "--scenario",
                &scenario,
                "--duration",
                "5m",
                "--quiet",
            ])
            .args([
                "--endpoint-url",
                &url,
                "--s3-bucket",
                STANDARD,
                "--s3-express-bucket",
                EXPRESS,
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let ours = |inv: &Inventory| {
        inv.streams
            .iter()
            .find(|(n, _, _)| n.starts_with("latlab-acct-latlab-") && !n.ends_with("decoy"))
            .cloned()
    };
    let inv = wait_for(
        &rt,
        &k,
        &s3,
        "the run's stream, consumer and objects",
        |inv| {
            ours(inv).is_some_and(|(_, _, c)| c.len() == 1)
                && inv
                    .objects
                    .iter()
                    .any(|o| o.starts_with(&format!("{STANDARD}/latlab/")))
        },
    );
    let (stream, tags, consumers) = ours(&inv).unwrap();
    let run_id = stream.trim_start_matches("latlab-acct-latlab-").to_string();
    // Tagged: the run id, when, and which latlab.
    let tag = |key: &str| tags.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    assert_eq!(
        tag("latlab:run-id").as_deref(),
        Some(run_id.as_str()),
        "{tags:?}"
    );
    assert_eq!(
        tag("latlab:version").as_deref(),
        Some(env!("CARGO_PKG_VERSION"))
    );
    let created = humantime::parse_rfc3339(&tag("latlab:created").unwrap()).unwrap();
    assert!(created.elapsed().unwrap() < Duration::from_secs(120));
    // Consumers and objects carry the run id in their names.
    assert_eq!(consumers, vec![format!("fan-out-latlab-{run_id}")]);
    assert!(
        inv.objects
            .iter()
            .filter(|o| !o.ends_with("keep/me"))
            .all(|o| o.contains(&format!("/latlab/{run_id}/"))),
        "{:?}",
        inv.objects
    );

    // SIGKILL: the run cleans nothing up.
    run.0.kill().unwrap();
    run.0.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let left = rt.block_on(inventory(&k, &s3));
    assert!(ours(&left).is_some());

    // Listed, not deleted, without --yes; the look-alike is left alone.
    let (ok, text, err) = on(&url, &["cleanup"]);
    assert!(ok, "{err}");
    assert!(text.contains(&format!("run {run_id} (created ")), "{text}");
    assert!(
        text.contains(&format!(
            "Kinesis stream {stream}: with 1 consumer (fan-out-latlab-{run_id}), deleted with it"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("S3 objects {STANDARD}/latlab/{run_id}/: ")),
        "{text}"
    );
    assert!(
        text.contains("left alone: Kinesis stream latlab-acct-latlab-decoy: named like latlab's but without the latlab:run-id tag: not latlab's, left alone"),
        "{text}"
    );
    assert!(text.contains("nothing deleted: pass --yes"), "{text}");
    assert_eq!(rt.block_on(inventory(&k, &s3)), left);

    // A run id that is not one, and one that matches nothing: one line naming what is valid.
    let (ok, _, err) = on(&url, &["cleanup", "--run", "XYZ"]);
    assert!(!ok);
    assert!(
        err.contains("--run 'XYZ' is not a run id: a run id is 8 lowercase hex digits"),
        "{err}"
    );
    let (ok, _, err) = on(&url, &["cleanup", "--run", "deadbeef"]);
    assert!(!ok);
    assert!(
        err.contains(&format!(
            "--run deadbeef matches nothing latlab left on endpoint {url}"
        )) && err.contains(&format!("runs that left resources: {run_id}")),
        "{err}"
    );
    // Younger than --older-than: kept.
    let (ok, text, _) = on(&url, &["cleanup", "--older-than", "1h", "--yes"]);
    assert!(ok);
    assert!(text.contains("nothing latlab left to delete"), "{text}");
    assert_eq!(rt.block_on(inventory(&k, &s3)), left);

    // --yes deletes the run's stream (its consumer with it) and objects, and nothing else.
    let (ok, text, err) = on(&url, &["cleanup", "--run", &run_id, "--yes"]);
    assert!(ok, "{text}{err}");
    assert!(
        text.contains(&format!("deleted Kinesis stream {stream}")),
        "{text}"
    );
    let after = rt.block_on(inventory(&k, &s3));
    let names: Vec<&str> = after.streams.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, ["latlab-acct-latlab-decoy"]);
    assert_eq!(
        after.objects,
        [format!("{EXPRESS}/keep/me"), format!("{STANDARD}/keep/me")]
    );
    // Again: nothing left, and that is not an error.
    let (ok, text, err) = on(&url, &["cleanup", "--yes"]);
    assert!(ok, "{err}");
    assert!(text.contains("nothing latlab left to delete"), "{text}");
}

/// A TCP proxy in front of the endpoint that the test can cut: every connection and the
/// listener go.
struct Proxy {
    addr: String,
    cut: std::sync::Arc<tokio::sync::Notify>,
    _rt: tokio::runtime::Runtime,
}

fn proxy(to: &str) -> Proxy {
    let rt = rt();
    let to = to.trim_start_matches("http://").to_string();
    let cut = std::sync::Arc::new(tokio::sync::Notify::new());
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let c = cut.clone();
    rt.spawn(async move {
        let mut conns = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                _ = c.notified() => break,
                a = listener.accept() => {
                    let Ok((mut inbound, _)) = a else { break };
                    let to = to.clone();
                    conns.spawn(async move {
                        if let Ok(mut out) = tokio::net::TcpStream::connect(&to).await {
                            let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
                        }
                    });
                }
            }
        }
        // Cut: the listener closes (new connections are refused) and open ones drop.
        drop(listener);
        conns.abort_all();
    });
    Proxy {
        addr: format!("http://{addr}"),
        cut,
        _rt: rt,
    }
}

#[test]
fn losing_the_endpoint_mid_cleanup_leaves_the_rest_listed_for_a_second_run() {
    // Every DeleteStream is slowed, so the endpoint goes while deletions are still to come.
    let (_emu, url) = emulate(&[
        "--fault",
        "kinesis.spike:operation=DeleteStream,first=0s,every=2h,for=1h,delay=300ms",
    ]);
    let rt = rt();
    let (k, _) = clients(&url);
    let runs = ["0000000a", "0000000b", "0000000c", "0000000d"];
    rt.block_on(async {
        for run in runs {
            k.create_stream()
                .stream_name(format!("left-latlab-{run}"))
                .shard_count(1)
                .tags("latlab:run-id", run)
                .tags("latlab:created", "2026-01-01T00:00:00Z")
                .send()
                .await
                .unwrap();
        }
    });
    let p = proxy(&url);
    let mut child = with_credentials(&mut latlab())
        .args(["cleanup", "--yes", "--endpoint-url", &p.addr])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut text = String::new();
    let mut cut = false;
    for line in lines.by_ref() {
        let line = line.unwrap();
        text.push_str(&line);
        text.push('\n');
        if !cut && line.starts_with("deleted Kinesis stream") {
            p.cut.notify_one();
            cut = true;
        }
    }
    let status = child.wait().unwrap();
    assert!(cut, "{text}");
    assert!(!status.success(), "{text}");
    let deleted = text
        .lines()
        .filter(|l| l.starts_with("deleted Kinesis stream"))
        .count();
    let failed: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("could not delete Kinesis stream"))
        .collect();
    assert!(!failed.is_empty(), "{text}");
    assert_eq!(deleted + failed.len(), runs.len(), "{text}");
    assert!(
        text.contains(&format!(
            "{} of {} not deleted, still there: run `latlab cleanup --yes` again to finish",
            failed.len(),
            runs.len()
        )),
        "{text}"
    );
    // The endpoint is back (here: reached without the proxy): a second run finishes the job.
    let (ok, again, err) =
        output(with_credentials(&mut latlab()).args(["cleanup", "--yes", "--endpoint-url", &url]));
    assert!(ok, "{again}{err}");
    let second = again
        .lines()
        .filter(|l| l.starts_with("deleted Kinesis stream"))
        .count();
    assert_eq!(second, failed.len(), "{again}");
    let left = rt.block_on(async {
        k.list_streams()
            .send()
            .await
            .unwrap()
            .stream_names()
            .to_vec()
    });
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn the_policy_covers_every_operation_a_run_and_its_cleanup_call() {
    let (_emu, url) = emulate(&[]);
    let (_dir, scenario) = scenario_file();
    let rt = rt();
    let (k, s3) = clients(&url);
    rt.block_on(set_up(&k, &s3));
    let before = operations(&url);
    let (ok, _, err) = on(
        &url,
        &[
            "run",
            "--scenario",
            &scenario,
            "--duration",
            "4s",
            "--quiet",
        ],
    );
    assert!(ok, "{err}");
    let (ok, _, err) = on(&url, &["cleanup", "--yes"]);
    assert!(ok, "{err}");
    let called: Vec<String> = operations(&url)
        .into_iter()
        .filter(|(op, n)| before.get(op) != Some(n))
        .map(|(op, _)| op)
        .collect();
    assert!(
        called.iter().any(|o| o == "kinesis SubscribeToShard"),
        "{called:?}"
    );
    assert!(
        called.iter().any(|o| o == "s3 Standard PutObject"),
        "{called:?}"
    );

    let (ok, json, err) = on(&url, &["plan", "--scenario", &scenario, "--format", "json"]);
    assert!(ok, "{err}");
    let plan: serde_json::Value = serde_json::from_str(&json).unwrap();
    let planned = |lab: &str| -> Vec<String> {
        plan["labs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["lab"] == lab)
            .flat_map(|l| l["calls"].as_array().unwrap().iter())
            .map(|c| c["operation"].as_str().unwrap().to_string())
            .collect()
    };
    let (kinesis, s3_calls) = (planned("Kinesis"), planned("S3"));
    for op in &called {
        let mut words = op.split(' ');
        let (service, name) = (words.next().unwrap(), words.next_back().unwrap());
        let list = if service == "kinesis" {
            &kinesis
        } else {
            &s3_calls
        };
        assert!(
            list.iter().any(|p| p == name),
            "{op} was called but is not in the plan: {list:?}"
        );
    }
    // Every planned action is in the policy, scoped to latlab's names.
    let (ok, policy, err) = output(with_credentials(&mut latlab()).args([
        "iam-policy",
        "--scenario",
        &scenario,
        "--region",
        "us-east-1",
        "--s3-bucket",
        STANDARD,
        "--s3-express-bucket",
        EXPRESS,
    ]));
    assert!(ok, "{err}");
    assert!(
        policy.starts_with("{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": ["),
        "{policy}"
    );
    let doc: serde_json::Value = serde_json::from_str(&policy).unwrap();
    let mut allowed = Vec::new();
    for st in doc["Statement"].as_array().unwrap() {
        assert_eq!(st["Effect"], "Allow");
        let resources: Vec<String> = match &st["Resource"] {
            serde_json::Value::String(s) => vec![s.clone()],
            v => v
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap().to_string())
                .collect(),
        };
        for a in st["Action"].as_array().unwrap() {
            let a = a.as_str().unwrap().to_string();
            // Only listing every stream needs every resource.
            if resources.iter().any(|r| r == "*") {
                assert_eq!(a, "kinesis:ListStreams", "{policy}");
            }
            for r in &resources {
                assert!(
                    r == "*"
                        || r.contains("stream/latlab-acct-latlab-*")
                        || r.contains(STANDARD)
                        || r.contains(EXPRESS),
                    "{r} is not scoped to latlab's names"
                );
            }
            allowed.push(a);
        }
    }
    for a in plan["actions"].as_array().unwrap() {
        assert!(
            allowed.iter().any(|x| x == a.as_str().unwrap()),
            "{a} not in {policy}"
        );
    }
    assert!(allowed.iter().any(|a| a == "s3express:CreateSession"));
}

#[test]
fn the_cost_cap_stops_a_run_cleans_up_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    let (ok, json, err) = common::latlab_output(&[
        "run",
        "demo",
        "--duration",
        "5m",
        "--quiet",
        "--format",
        "json",
        "--max-cost",
        "0.0002",
        "--record",
        rec.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("stopped at the cost cap"), "{err}");
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["ending"].as_str(), Some("stopped-early"));
    let why = report["problems"][0].as_str().unwrap();
    assert!(why.starts_with("stopped at the cost cap: $"), "{why}");
    // What it had accrued when it stopped is under the cap.
    let accrued: f64 = why
        .trim_start_matches("stopped at the cost cap: $")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(accrued > 0.0 && accrued <= 0.0002, "{why}");
    let events = std::fs::read_to_string(rec.join("events.jsonl")).unwrap();
    assert!(
        events
            .lines()
            .any(|l| l.contains("\"event\":\"cost-cap\"") && l.contains("stopped at the cost cap")),
        "{events}"
    );
    // Not a positive amount: one line saying what is.
    for bad in ["0", "-1", "abc"] {
        let (ok, _, err) = common::latlab_output(&["run", "demo", &format!("--max-cost={bad}")]);
        assert!(!ok);
        assert!(
            err.contains("write a positive amount of US dollars"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn a_run_on_aws_with_no_terminal_and_no_yes_is_refused_and_creates_nothing() {
    // The stand-in account: AWS's own SDK settings aimed at `latlab emulate`.
    let (_emu, url) = emulate(&[]);
    let rt = rt();
    let (k, _) = clients(&url);
    let (ok, out, err) = output(
        with_credentials(&mut latlab())
            .env("AWS_ENDPOINT_URL", &url)
            .args(["run", "demo", "--aws", "--duration", "3s", "--quiet"]),
    );
    assert!(!ok, "{out}");
    assert!(
        err.contains("plan: demo on AWS us-east-1 (your account, billed)"),
        "{err}"
    );
    assert!(err.contains("(billed)"), "{err}");
    assert!(
        err.contains("there is no terminal to ask on, so it does not start: pass --yes to go on"),
        "{err}"
    );
    let streams = rt.block_on(async {
        k.list_streams()
            .send()
            .await
            .unwrap()
            .stream_names()
            .to_vec()
    });
    assert!(streams.is_empty(), "{streams:?}");
    // With --yes it runs, on the run id its plan named, and cleans up after itself.
    let (ok, out, err) = output(
        with_credentials(&mut latlab())
            .env("AWS_ENDPOINT_URL", &url)
            .args([
                "run",
                "demo",
                "--aws",
                "--duration",
                "3s",
                "--quiet",
                "--yes",
            ]),
    );
    assert!(ok, "{err}");
    assert!(err.contains("(--yes: going on)"), "{err}");
    assert!(out.contains("stream   latlab-demo-latlab-"), "{out}");
    let streams = rt.block_on(async {
        k.list_streams()
            .send()
            .await
            .unwrap()
            .stream_names()
            .to_vec()
    });
    assert!(streams.is_empty(), "{streams:?}");
}
