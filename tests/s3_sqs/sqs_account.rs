//! The SQS lab as a user runs it: a headless run's report (every message counted, the schema
//! followed), and on another endpoint (`latlab emulate`, standing for an account) the plan that
//! lists its queues and calls, the queues a run creates named and tagged with its id, and
//! `latlab cleanup` finding what a killed run left, leaving a look-alike alone, deleting the rest.

use crate::common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Kill, emulate, latlab, with_credentials};

const SCENARIO: &str = r#"
name = "sqs-acct"
description = "the SQS lab on an endpoint standing for an account"
duration = "10s"

[sqs]
rate = 20
payload = "256B"
groups = 2

[[sqs.consumers]]
name = "long"
kind = "long-poll"
wait = "20s"

[[sqs.consumers]]
name = "short"
kind = "short-poll"
interval = "100ms"

[[sqs.consumers]]
name = "fifo"
kind = "fifo"
wait = "20s"

[[sqs.consumers]]
name = "lambda"
kind = "lambda"
pollers = 3
batch_size = 10
"#;

fn scenario_file() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sqs-acct.toml");
    std::fs::write(&path, SCENARIO).unwrap();
    let p = path.display().to_string();
    (dir, p)
}

fn on(url: &str, args: &[&str]) -> (bool, String, String) {
    common::output(
        with_credentials(&mut latlab())
            .args(args)
            .args(["--endpoint-url", url]),
    )
}

/// Every queue on the endpoint, by name, with its tags.
async fn queues(
    c: &aws_sdk_sqs::Client,
) -> Vec<(String, std::collections::HashMap<String, String>)> {
    let urls = c
        .list_queues()
        .send()
        .await
        .unwrap()
        .queue_urls
        .unwrap_or_default();
    let mut out = Vec::new();
    for u in urls {
        let tags = c
            .list_queue_tags()
            .queue_url(&u)
            .send()
            .await
            .unwrap()
            .tags
            .unwrap_or_default();
        out.push((u.rsplit('/').next().unwrap().to_string(), tags));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn a_headless_run_counts_every_message_and_follows_the_schema() {
    let (_dir, scenario) = scenario_file();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let out = latlab()
        .args([
            "run",
            &scenario,
            "-q",
            "--duration",
            "6s",
            "--format",
            "json",
            "-o",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    common::assert_follows_report_schema(&report);
    let s = &report["snapshot"]["sqs"];
    let n = |v: &serde_json::Value| v.as_u64().unwrap();
    let consumers = s["consumers"].as_array().unwrap();
    assert_eq!(consumers.len(), 4);
    for c in consumers {
        assert_eq!(
            n(&c["received"]) + n(&c["lost"]) + n(&c["in_flight"]) + n(&c["unread"]),
            n(&c["sent"]),
            "{}: {c}",
            c["name"]
        );
        // 20/s for 6 s; the drain reads the rest.
        assert!(n(&c["sent"]) >= 100, "{c}");
        assert_eq!(n(&c["received"]), n(&c["sent"]), "{}: all read", c["name"]);
        assert!(n(&c["send_to_receive"]["count"]) > 0);
    }
    assert_eq!(
        n(&s["producer"]["acknowledged"]),
        consumers.iter().map(|c| n(&c["sent"])).sum::<u64>(),
        "every acknowledged send is one consumer's"
    );
    // The model it measured against: short polling's sample and Lambda's wait are assumptions,
    // and say so.
    let model = report["snapshot"]["backend"]["model"].as_array().unwrap();
    for name in [
        "emulator.sqs.short_poll_servers",
        "emulator.sqs.short_poll_sampled",
        "sqs.lambda_wait",
    ] {
        let p = model
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{name} in the model: {model:?}"));
        assert_eq!(p["provenance"]["source"], "assumption", "{p}");
    }
    // The cost section prices it, and the trade-off table has a row per consumer.
    let cost = &report["cost"];
    assert!(
        cost["labs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["lab"] == "SQS" && l["hourly_usd"].as_f64().unwrap() > 0.0),
        "{cost}"
    );
    assert_eq!(cost["sqs_consumers"].as_array().unwrap().len(), 4);
    // The text report's tables, from the same JSON.
    let out = latlab().args(["report"]).arg(&json).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "SQS: send -> receive per consumer",
        "SQS: every message counted (received + lost + in flight + unread = sent)",
        "SQS: what the queue did to each consumer",
        "SQS consumers: latency and cost",
    ] {
        assert!(text.contains(line), "{line}:\n{text}");
    }
}

#[test]
fn a_plan_lists_the_queues_and_a_killed_runs_queues_are_found_and_deleted() {
    let (_emu, url) = emulate(&[]);
    let (_dir, scenario) = scenario_file();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let c = common::sqs_client(&url);

    // The plan names each queue, its tags and its calls, and creates nothing.
    let (ok, plan, err) = on(&url, &["plan", "--scenario", &scenario]);
    assert!(ok, "{err}");
    for line in [
        "FIFO queue",
        "-fifo.fifo",
        "latlab:run-id",
        "CreateQueue",
        "sqs:SendMessage",
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:DeleteQueue",
    ] {
        assert!(plan.contains(line), "{line}:\n{plan}");
    }
    assert!(rt.block_on(queues(&c)).is_empty(), "a plan creates nothing");
    let (ok, policy, err) = on(&url, &["iam-policy", &scenario]);
    assert!(ok, "{err}");
    for action in [
        "sqs:CreateQueue",
        "sqs:SendMessage",
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:DeleteQueue",
        "sqs:ListQueues",
        "sqs:ListQueueTags",
    ] {
        assert!(policy.contains(action), "{action}:\n{policy}");
    }

    // Look-alikes: named like latlab's, one even as a run's queue, without its tag.
    rt.block_on(c.create_queue().queue_name("latlab-decoy").send())
        .unwrap();
    rt.block_on(
        c.create_queue()
            .queue_name("latlab-0a1b2c3d-long-poll")
            .send(),
    )
    .unwrap();
    let mut run = Kill(
        with_credentials(&mut latlab())
            .args(["run", &scenario, "--duration", "5m", "--quiet", "--yes"])
            .args(["--endpoint-url", &url])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let ours = loop {
        let qs = rt.block_on(queues(&c));
        let ours: Vec<_> = qs
            .into_iter()
            .filter(|(_, t)| t.contains_key("latlab:run-id"))
            .collect();
        if ours.len() == 4 {
            break ours;
        }
        assert!(Instant::now() < deadline, "the run's four queues: {ours:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let run_id = ours[0].1["latlab:run-id"].clone();
    for (name, tags) in &ours {
        assert!(
            name.starts_with(&format!("latlab-{run_id}-")),
            "{name} names the run"
        );
        assert_eq!(tags["latlab:run-id"], run_id);
        assert_eq!(tags["latlab:version"], env!("CARGO_PKG_VERSION"));
    }
    assert!(ours.iter().any(|(n, _)| n.ends_with(".fifo")));

    // SIGKILL: nothing cleans up.
    run.0.kill().unwrap();
    run.0.wait().unwrap();
    let (ok, text, err) = on(&url, &["cleanup"]);
    assert!(ok, "{err}");
    for (name, _) in &ours {
        assert!(text.contains(name.as_str()), "{name}:\n{text}");
    }
    assert!(
        text.contains("latlab-decoy") && text.contains("not latlab's, left alone"),
        "{text}"
    );
    assert!(
        text.contains("queue latlab-0a1b2c3d-long-poll is named like latlab's but has no"),
        "{text}"
    );
    assert_eq!(rt.block_on(queues(&c)).len(), 6, "listing deletes nothing");
    let (ok, text, err) = on(&url, &["cleanup", "--yes"]);
    assert!(ok, "{text}{err}");
    let left = rt.block_on(queues(&c));
    let mut left: Vec<&str> = left.iter().map(|(n, _)| n.as_str()).collect();
    left.sort();
    assert_eq!(
        left,
        ["latlab-0a1b2c3d-long-poll", "latlab-decoy"],
        "{text}"
    );
    // Idempotent: nothing more to find.
    let (ok, text, err) = on(&url, &["cleanup", "--yes"]);
    assert!(ok, "{text}{err}");
    assert!(!text.contains(&run_id), "{text}");
}

/// Queue or stream: the same rate into SQS and Kinesis, and one table setting every consumer
/// side by side by send -> receive and by cost per million messages.
#[test]
fn queue_or_stream_sets_every_consumer_side_by_side() {
    let out = latlab()
        .args(["run", "queue-or-stream", "-q", "--duration", "5s"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| {
            !l.starts_with(
                "Kinesis and SQS: every consumer by latency and cost per million messages",
            )
        })
        .skip(3)
        .take_while(|l| !l.starts_with("- "))
        .collect();
    let names: Vec<&str> = table
        .iter()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .nth(1)
                .unwrap_or("")
        })
        .collect();
    assert_eq!(
        names,
        [
            "Kinesis EFO",
            "Kinesis GetRecords",
            "long-poll",
            "short-poll"
        ],
        "{text}"
    );
    for row in &table {
        let usd = row.split_whitespace().last().unwrap();
        let v: f64 = usd.trim_start_matches('$').parse().unwrap_or(f64::NAN);
        // A million messages cost cents to a few dollars here, never thousands.
        assert!(v > 0.0 && v < 10.0, "{row}\n{text}");
    }
}
