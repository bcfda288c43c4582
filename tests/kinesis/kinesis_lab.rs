//! The Kinesis lab end to end on the embedded emulator: measured figures against injected ground
//! truth, record accounting, throttling on pollers and none on fan-out, and the report formats.

use crate::common;

use std::time::Duration;

use latlab::labs::kinesis;
use latlab::labs::kinesis::config::ConsumerKind;
use latlab::report::{Ending, Format, Report};
use latlab::run::{Command, Run, TargetOptions};
use latlab::scenario::Scenario;
use latlab_emulator::kinesis::stats::Api;

fn scenario(body: &str) -> Scenario {
    let text = format!(
        "name = \"test\"\ndescription = \"test\"\nduration = \"10s\"\nlatency_profile = \"zero\"\n\
         [emulator]\nlimits = {{ stream_activation = \"0s\", consumer_activation = \"0s\" }}\n{body}"
    );
    Scenario::parse(&text, "test").unwrap()
}

async fn run_for(s: &Scenario, opts: &TargetOptions, d: Duration) -> latlab::snapshot::Snapshot {
    let lab = Run::start(s.clone(), opts).await.expect("the lab starts");
    tokio::time::sleep(d).await;
    let (snap, problems) = lab.finish().await;
    assert!(problems.is_empty(), "{problems:?}");
    snap
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_fan_out_delay_is_measured_as_itself() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("fixed.toml");
    std::fs::write(
        &profile,
        "name = \"fixed-50ms\"\n[kinesis]\nefo_push = { fixed_ms = 50 }\nread_visibility = { fixed_ms = 0 }\n",
    )
    .unwrap();
    let s = scenario(
        "[kinesis]\nstream = \"truth\"\n[kinesis.producer]\nrate = 20\npayload = \"128B\"\n\
         [[kinesis.consumers]]\nkind = \"efo\"\nname = \"efo\"\n\
         [[kinesis.consumers]]\nkind = \"lambda-efo\"\nname = \"lambda-efo\"\n\
         [[kinesis.consumers]]\nkind = \"poller\"\nname = \"poller\"\ninterval = \"250ms\"\n",
    );
    let opts = TargetOptions {
        latency_profile: Some(profile.display().to_string()),
        ..Default::default()
    };
    let snap = run_for(&s, &opts, Duration::from_secs(8)).await;
    let k = snap.kinesis.as_ref().unwrap();
    assert!(
        k.producer.acked >= 120,
        "{} records acknowledged",
        k.producer.acked
    );
    for c in &k.consumers {
        assert_eq!(
            c.counts.received, k.producer.acked,
            "{}: every record received",
            c.name
        );
        assert_eq!(
            (c.counts.lost, c.counts.duplicates, c.counts.late),
            (0, 0, 0),
            "{}",
            c.name
        );
        assert_eq!(c.arrival_to_receive.count, k.producer.acked);
        let p50 = c.arrival_to_receive.p50_us as f64 / 1000.0;
        match c.kind {
            ConsumerKind::Efo | ConsumerKind::LambdaEfo => {
                // The injected delay, plus the push's own time on a timer and the scheduler:
                // within 1 ms of it on an otherwise idle machine (this test's bound before),
                // 51.6 ms seen with both cores busy with other work. Never under it (below).
                assert!(
                    (49.0..=55.0).contains(&p50),
                    "{}: p50 {p50} ms, injected 50 ms",
                    c.name
                );
                assert!(
                    c.arrival_to_receive.min_us >= 50_000,
                    "{}: never before the injected delay",
                    c.name
                );
            }
            _ => assert!(
                p50 < 250.0,
                "{}: a 250 ms poller (within the shard's 5 calls/s) with no propagation delay: p50 {p50}",
                c.name
            ),
        }
    }
    assert_eq!(
        snap.backend.latency_profile.as_deref(),
        Some(profile.display().to_string().as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_pollers_are_throttled_while_fan_out_is_not() {
    let mut s = Scenario::resolve("seed-kinesis-round2").unwrap();
    s.emulator_limits
        .push("kinesis.consumer_activation=0s".into());
    let lab = Run::start(s.clone(), &TargetOptions::default())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(25)).await;
    // The emulator counted the same story from its side.
    let stats = lab.emulator().unwrap().kinesis().stats.snapshot();
    assert!(stats.total(Api::GetRecords).throttled > 0);
    assert_eq!(stats.total(Api::SubscribeToShard).throttled, 0);
    let (snap, _) = lab.finish().await;
    let k = snap.kinesis.as_ref().unwrap();
    assert_eq!(
        snap.backend.label,
        "embedded emulator, latency profile seed-tokyo"
    );
    let mut poller_throttles = 0;
    for c in &k.consumers {
        let t = c.sdk.counters.throttles;
        match c.kind {
            ConsumerKind::Poller => {
                assert!(
                    t > 0,
                    "{}: three pollers and Lambda overrun 5 calls/s",
                    c.name
                );
                assert!(c.sdk.counters.retries > 0, "{}: the SDK retried", c.name);
                assert!(
                    c.sdk.retry_wait.count > 0 && c.sdk.retry_wait.max_us > 0,
                    "{}: back-off was waited",
                    c.name
                );
                poller_throttles += t;
            }
            ConsumerKind::Efo | ConsumerKind::LambdaEfo => {
                assert_eq!(t, 0, "{}: fan-out has dedicated throughput", c.name);
                assert_eq!(c.sdk.counters.escaped_total(), 0, "{}", c.name);
            }
            ConsumerKind::LambdaStandard | ConsumerKind::Kcl => {}
        }
        assert_eq!(c.counts.lost, 0, "{}: nothing lost", c.name);
        assert_eq!(
            c.counts.received + c.counts.unread,
            k.producer.acked,
            "{}: every record received or still unread",
            c.name
        );
    }
    assert!(
        poller_throttles >= 20,
        "{poller_throttles} throttles in 25 s"
    );
    let report = Report::new(&s, snap.clone(), Ending::Completed, vec![]);
    let text = report.render(Format::Text);
    assert!(text.contains("get_records 3"), "{text}");
    assert!(
        text.contains("seed escaped"),
        "round 2's seed figures include escaped throttles"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_add_and_remove_pollers_without_losing_data() {
    let s = scenario(
        "[kinesis]\nstream = \"keys\"\n[kinesis.producer]\nrate = 20\npayload = \"128B\"\n\
         [[kinesis.consumers]]\nkind = \"efo\"\nname = \"efo\"\n\
         [[kinesis.consumers]]\nkind = \"poller\"\nname = \"get_records\"\ninterval = \"200ms\"\n",
    );
    let lab = Run::start(s, &TargetOptions::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        lab.apply(Command::Kinesis(kinesis::Command::AddPoller))
            .await
            .unwrap(),
        "added poller get_records 2"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = lab.snapshot(false);
    let efo_before = before.kinesis.as_ref().unwrap().consumers[0]
        .counts
        .received;
    assert_eq!(
        lab.apply(Command::Kinesis(kinesis::Command::RemovePoller))
            .await
            .unwrap(),
        "removed poller get_records 2"
    );
    assert_eq!(
        lab.apply(Command::Kinesis(kinesis::Command::PayloadUp))
            .await
            .unwrap(),
        "payload size 256 B"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (snap, _) = lab.finish().await;
    let k = snap.kinesis.unwrap();
    let names: Vec<&str> = k.consumers.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["efo", "get_records", "get_records 2"]);
    let efo = &k.consumers[0];
    assert!(
        efo.counts.received > efo_before,
        "the other consumers kept measuring"
    );
    assert_eq!(efo.counts.received, k.producer.acked);
    let second = &k.consumers[2];
    assert!(second.stopped_at_secs.is_some());
    assert!(
        second.counts.received > 0,
        "the removed poller's figures stay"
    );
    assert_eq!(
        second.counts.lost, 0,
        "records sent after it stopped are not held against it"
    );
    let n = &second.counts;
    assert_eq!(
        n.received + n.lost + n.unread,
        n.acknowledged,
        "the removed poller's records add up: {n:?}"
    );
    assert!(n.acknowledged < efo.counts.acknowledged);
    assert_eq!(k.producer.payload_bytes, 256);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_render_in_every_format() {
    let s = scenario(
        "[kinesis]\nstream = \"fmt\"\n[kinesis.producer]\nrate = 10\npayload = \"128B\"\n\
         [[kinesis.consumers]]\nkind = \"lambda-standard\"\nname = \"lambda, standard\"\n\
         [[kinesis.consumers]]\nkind = \"efo\"\nname = \"efo\"\n",
    );
    let snap = run_for(&s, &TargetOptions::default(), Duration::from_secs(3)).await;
    let snap_acked = snap.kinesis.as_ref().unwrap().producer.acked;
    let report = Report::new(&s, snap, Ending::Completed, vec![]);
    let text = report.render(Format::Text);
    assert!(
        text.starts_with("latlab: test - test\nbackend  embedded emulator, latency profile zero"),
        "{text}"
    );
    assert!(text.contains("Kinesis: arrival -> receive"));
    assert!(
        text.contains("lambda, standard:"),
        "Lambda batch sizes are listed"
    );
    let md = report.render(Format::Markdown);
    assert!(
        md.contains("| consumer | p50 | p90 | p99 | p99.9 | max | records |\n|---|---:|"),
        "{md}"
    );
    let csv = report.render(Format::Csv);
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert_eq!(
        header,
        "scenario,backend,lab,subject,metric,value,seed,seed_high,cell"
    );
    let rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
    assert!(
        rows.iter().all(|r| r.len() == 9),
        "every row has every field"
    );
    let p50 = rows
        .iter()
        .find(|r| r[3] == "lambda, standard" && r[4] == "arrival_to_receive_p50_ms")
        .expect("a name with a comma is quoted and kept whole");
    assert_eq!(p50[2], "kinesis");
    assert!(p50[5].parse::<f64>().unwrap() > 0.0);
    let received = rows
        .iter()
        .find(|r| r[3] == "efo" && r[4] == "received")
        .unwrap();
    assert_eq!(
        received[5].parse::<u64>().unwrap(),
        snap_acked,
        "the counts are in the CSV"
    );
    let json: serde_json::Value = serde_json::from_str(&report.render(Format::Json)).unwrap();
    assert_eq!(json["schema"], "latlab-run-report/2");
    common::assert_follows_report_schema(&json);
    // The schema is strict: a missing or unknown field fails it.
    let validator = common::report_schema();
    let mut broken = json.clone();
    broken["snapshot"]["kinesis"]["consumers"][0]
        .as_object_mut()
        .unwrap()
        .remove("counts");
    assert!(!validator.is_valid(&broken));
    let mut extra = json.clone();
    extra["snapshot"]["surprise"] = 1.into();
    assert!(!validator.is_valid(&extra));
}

/// The fields of a CSV line, quotes honoured.
fn csv_fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_record_is_accounted_for_when_pollers_overrun_the_read_budget() {
    // 400 KB records at 2.5/s fill the shard's 1 MB/s of writes; four pollers each want all of
    // them, 4 MB/s against the shard's 2 MB/s of reads: they fall behind, and when the short drain
    // ends some records are still in the stream ahead of them. Those must show as unread.
    //
    // With three pollers (3 MB/s) this failed twice in 2026-12 runs with every record read: the
    // read budget lets a full bucket (2 MB) through at the start and one call drive it up to
    // 10 MB into debt at the end, so the shard can hand out about 2 MB/s x 22 s + 12 MB = 56 MB,
    // against 3 x 50 x 400 KB = 60 MB wanted: a margin of two seconds of reading, which something
    // in those runs closed (what, was not measured). Four want 80 MB.
    let s = scenario(
        "[kinesis]\nstream = \"overrun\"\ndrain = \"2s\"\n[kinesis.producer]\nrate = 2.5\npayload = \"400KB\"\n\
         [[kinesis.consumers]]\nkind = \"efo\"\nname = \"efo\"\n\
         [[kinesis.consumers]]\nkind = \"poller\"\nname = \"p\"\ncount = 4\ninterval = \"250ms\"\n",
    );
    let snap = run_for(&s, &TargetOptions::default(), Duration::from_secs(20)).await;
    let k = snap.kinesis.as_ref().unwrap();
    let acked = k.producer.acked;
    assert!(acked >= 40, "{acked} records acknowledged");
    let mut unread = 0;
    for c in &k.consumers {
        let n = &c.counts;
        assert_eq!(n.acknowledged, acked, "{}: {n:?}", c.name);
        assert_eq!(
            n.received + n.lost + n.unread,
            n.acknowledged,
            "{}: received + lost + unread = acknowledged: {n:?}",
            c.name
        );
        assert_eq!(n.lost, 0, "{}: nothing is passed over: {n:?}", c.name);
        if c.kind == ConsumerKind::Poller {
            unread += n.unread;
        }
    }
    assert!(
        unread > 0,
        "the overrun left records unread: {:?}",
        k.consumers.iter().map(|c| c.counts).collect::<Vec<_>>()
    );
    let text = Report::new(&s, snap.clone(), Ending::Completed, vec![]).render(Format::Text);
    assert!(
        text.contains("received + lost + unread = acknowledged") && text.contains("unread"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_the_producer_cannot_reach_is_shown_with_why() {
    // 3,000 records/s into one shard (1,000 records/s) with at most 2 puts in flight: the
    // producer falls far short, and says why.
    let s = scenario(
        "[kinesis]\nstream = \"short\"\n[kinesis.producer]\nrate = 3000\npayload = \"128B\"\nmax_in_flight = 2\n\
         [[kinesis.consumers]]\nkind = \"efo\"\nname = \"efo\"\n",
    );
    let snap = run_for(&s, &TargetOptions::default(), Duration::from_secs(4)).await;
    let p = &snap.kinesis.as_ref().unwrap().producer;
    assert_eq!(p.asked_rate, 3000.0);
    assert!(
        p.achieved_rate < 2400.0 && p.achieved_rate > 0.0,
        "achieved {:.0}/s",
        p.achieved_rate
    );
    let why = p.shortfall();
    assert!(
        why.as_ref().is_some_and(|w| w
            .causes
            .iter()
            .any(|c| c.starts_with("in-flight cap (2) full"))),
        "{why:?} (in flight full {:.2})",
        p.in_flight_full
    );
    let text = Report::new(&s, snap.clone(), Ending::Completed, vec![]).render(Format::Text);
    assert!(
        text.contains("producer asked 3,000 records/s, achieved"),
        "the header says asked and achieved: {text}"
    );
    assert!(text.contains("/s short: in-flight cap (2) full"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn put_records_batches_reach_a_rate_single_puts_cannot() {
    // The same asked rate and in-flight cap, batched: 1,000 records/s over 4 shards in batches.
    let s = scenario(
        "[kinesis]\nstream = \"batched\"\nshards = 4\n[kinesis.producer]\nrate = 3000\npayload = \"128B\"\nmax_in_flight = 2\n\
         mode = \"put-records\"\nlinger = \"20ms\"\nbatch = 500\n\
         [[kinesis.consumers]]\nkind = \"efo\"\nname = \"efo\"\n",
    );
    let snap = run_for(&s, &TargetOptions::default(), Duration::from_secs(4)).await;
    let k = snap.kinesis.as_ref().unwrap();
    let p = &k.producer;
    assert!(
        p.mode.starts_with("PutRecords batches of up to 500"),
        "{}",
        p.mode
    );
    assert!(
        p.achieved_rate > 2700.0,
        "achieved {:.0}/s of 3,000 in batches: {:?}",
        p.achieved_rate,
        p.shortfall()
    );
    let c = &k.consumers[0].counts;
    assert_eq!(c.acknowledged, p.acked);
    assert_eq!(c.received + c.unread + c.lost, c.acknowledged, "{c:?}");
    assert_eq!(c.lost, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cells_are_calibrated_only_where_the_profile_was_fitted() {
    // A short round 1 with its poller and Lambda; the labels depend on the profile only.
    let mut s = Scenario::resolve("seed-kinesis-round1").unwrap();
    s.emulator_limits
        .push("kinesis.consumer_activation=0s".into());
    for (profile, efo_p99, lambda_p50, send_p50) in [
        ("seed-tokyo", "calibrated", "calibrated", "calibrated"),
        ("same-region", "predicted", "predicted", "predicted"),
    ] {
        let opts = TargetOptions {
            latency_profile: Some(profile.into()),
            ..Default::default()
        };
        let snap = run_for(&s, &opts, Duration::from_secs(4)).await;
        let model = &snap.backend.model;
        assert!(model.iter().any(|p| p.name == "kinesis.efo_push"));
        if profile == "same-region" {
            let from_seed: Vec<&str> = model
                .iter()
                .filter(|p| p.name.starts_with("kinesis.") || p.name.starts_with("s3."))
                .filter(|p| !p.provenance.seed_cells.is_empty())
                .map(|p| p.name.as_str())
                .collect();
            assert!(
                from_seed.is_empty(),
                "same-region holds no seed-derived parameter: {from_seed:?}"
            );
        }
        let report = Report::new(&s, snap, Ending::Completed, vec![]);
        let label = |id: &str| {
            report
                .cell(&format!("kinesis-round1/{id}"))
                .unwrap_or_else(|| panic!("no cell {id}"))
                .label
                .name()
        };
        assert_eq!(
            label("arrival_to_receive/Lambda EFO/p99"),
            efo_p99,
            "{profile}"
        );
        assert_eq!(
            label("arrival_to_receive/Lambda standard iterator/p50"),
            lambda_p50,
            "{profile}"
        );
        assert_eq!(label("send_to_arrival/all/p50"), send_p50, "{profile}");
        // Never fitted on either profile: the poller's and the SDK consumer's figures.
        assert_eq!(
            label("arrival_to_receive/SDK get_records (200 ms)/p50"),
            "predicted"
        );
        assert_eq!(
            label("arrival_to_receive/SDK subscribe_to_shard/p99"),
            "predicted"
        );
        // The read-rate window was chosen on round 1's throttle count, whatever the profile.
        assert_eq!(label("read_throttles_per_minute/shard/value"), "calibrated");
        let text = report.render(Format::Text);
        let compared = text
            .lines()
            .find(|l| l.starts_with("compared "))
            .unwrap_or_else(|| panic!("{text}"));
        let t = &report.tally;
        assert!(
            compared.contains(&format!(
                "{} cells predicted, {} within ±25%",
                t.predicted, t.predicted_within
            )) && compared.contains(&format!("{} calibrated", t.calibrated)),
            "{compared}"
        );
        assert!(
            text.contains("  cell "),
            "a cell row under each seed row: {text}"
        );
        let csv = report.render(Format::Csv);
        assert!(
            csv.lines().any(|l| l
                .contains(",compared,kinesis-round1/arrival_to_receive/Lambda EFO/p99,ours,")
                && l.ends_with(&format!(",119.100,,{efo_p99}"))),
            "{csv}"
        );
    }
}
