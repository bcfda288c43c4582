//! The S3 lab: the seed's matrix (quick) on the embedded emulator, the live loop switching class
//! and payload while it runs, and the S3 pane on screen.

use crate::common;

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent};
use latlab::labs::{Hurry, LabKind, Live, s3};
use latlab::run::{Command, Run, TargetOptions};
use latlab::scenario::Scenario;
use latlab::theme::Theme;
use latlab::tui::app::{Action, App, Tab};
use latlab::tui::moment::Moment;
use latlab::tui::screenshot::render;
use latlab_core::services::s3::Class;

#[test]
fn a_quick_seed_s3_run_has_express_beat_standard_on_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s3.json");
    let status = common::latlab()
        .args([
            "run",
            "seed-s3",
            "--quick",
            "--quiet",
            "--format",
            "json",
            "--output",
            out.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    common::assert_follows_report_schema(&report);
    let rows = report["snapshot"]["s3"]["matrix"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "three sets");
    for r in rows {
        for dir in ["upload", "download"] {
            let (e, s) = (
                r[format!("{dir}_express_s")].as_f64().unwrap(),
                r[format!("{dir}_standard_s")].as_f64().unwrap(),
            );
            assert!(e > 0.0 && s > e, "Express beats Standard: {r}");
        }
    }
    // The quick sets are scaled down: none is set beside the seed's full ones.
    assert_eq!(
        report["cells"].as_array().unwrap().len(),
        0,
        "{}",
        report["cells"]
    );
    let parsed: latlab::report::Report =
        serde_json::from_value::<latlab::report::json::RunReport>(report.clone())
            .unwrap()
            .into();
    let text = parsed.render(latlab::report::Format::Text);
    assert!(
        text.contains("S3: upload, seconds per whole set") && text.contains("100 x 100 KB"),
        "{text}"
    );
    assert!(
        text.contains("No seed figure for 1 x 100 MB, 10 x 10 MB, 100 x 100 KB: the seed ran 1 x 1 GB, 100 x 10 MB, 10,000 x 100 KB"),
        "{text}"
    );
    let md = parsed.render(latlab::report::Format::Markdown);
    assert!(
        md.contains("| set | class | ours | seed | ours / seed | cell |"),
        "{md}"
    );
    let csv = parsed.render(latlab::report::Format::Csv);
    assert!(
        csv.lines()
            .any(|l| l.contains(",s3,100 x 100 KB,download_express_s,")),
        "{csv}"
    );
    // The SDK's calls are counted under their operations' names.
    let ops = report["snapshot"]["s3"]["sdk"]["operations"]
        .as_object()
        .unwrap();
    assert!(
        ops.contains_key("PutObject") && ops.contains_key("GetObject") && !ops.contains_key(""),
        "{ops:?}"
    );
    let s3 = &report["snapshot"]["s3"];
    assert!(
        s3["create_sessions"].as_u64().unwrap() >= 1,
        "the Express flow used CreateSession"
    );
    assert!(
        s3["ops"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["errors"] == 0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_loop_switches_class_and_payload_while_it_runs() {
    let scenario = Scenario::resolve("s3-demo").unwrap();
    let opts = TargetOptions {
        latency_profile: Some("same-region".into()),
        ..Default::default()
    };
    let lab = Run::start(scenario, &opts).await.unwrap();
    lab.start_live();
    let mut app = App::new(Theme::dark());
    tokio::time::sleep(Duration::from_secs(2)).await;
    let moment = Moment::of(&lab, 60);
    app.sync_labs(&moment.snapshot.labs());
    assert_eq!(
        app.tab,
        Tab::Lab(LabKind::S3),
        "a scenario with only S3 opens on the S3 tab"
    );
    let s3 = moment.snapshot.s3.as_ref().unwrap();
    assert_eq!(s3.class, Class::ExpressOneZone);
    let express_puts = s3
        .ops
        .iter()
        .find(|o| o.class == Class::ExpressOneZone && o.op == "PUT")
        .unwrap()
        .requests;
    assert!(express_puts > 5);

    let action = app.key(KeyEvent::from(KeyCode::Char('s')), || Moment::of(&lab, 60));
    assert_eq!(action, Action::Lab(Command::S3(s3::Command::ToggleClass)));
    assert_eq!(
        lab.apply(Command::S3(s3::Command::ToggleClass))
            .await
            .unwrap(),
        "S3 storage class STANDARD"
    );
    app.say("S3 storage class STANDARD", false);
    let action = app.key(KeyEvent::from(KeyCode::Char(']')), || Moment::of(&lab, 60));
    assert_eq!(action, Action::Lab(Command::S3(s3::Command::PayloadUp)));
    assert_eq!(
        lab.apply(Command::S3(s3::Command::PayloadUp))
            .await
            .unwrap(),
        "S3 payload size 1 MB"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let moment = Moment::of(&lab, 60);
    let s3 = moment.snapshot.s3.as_ref().unwrap();
    assert_eq!((s3.class, s3.payload_bytes), (Class::Standard, 1_000_000));
    let standard = s3
        .ops
        .iter()
        .find(|o| o.class == Class::Standard && o.op == "GET")
        .expect("GETs on Standard now");
    assert!(standard.requests > 0 && standard.bytes >= 1_000_000);
    let screen = render(&app, &moment, (120, 40));
    let text: String = (0..40u16)
        .map(|y| {
            (0..120u16)
                .map(|x| screen[(x, y)].symbol().to_string())
                .collect::<String>()
                + "\n"
        })
        .collect();
    assert!(text.contains("writing to STANDARD"), "{text}");
    assert!(
        text.contains("▶ STANDARD"),
        "the active class is marked: {text}"
    );
    assert!(text.contains("payload 1 MB"), "{text}");
    let (snap, problems) = lab.finish().await;
    assert!(problems.is_empty(), "{problems:?}");
    assert!(snap.s3.unwrap().ops.iter().all(|o| o.errors == 0));
}

/// Every object's key in a bucket.
async fn keys(c: &aws_sdk_s3::Client, bucket: &str) -> Vec<String> {
    let page = c.list_objects_v2().bucket(bucket).send().await.unwrap();
    assert!(page.next_continuation_token().is_none(), "one page is all");
    page.contents()
        .iter()
        .filter_map(|o| o.key().map(String::from))
        .collect()
}

/// What the runs' clean-up must leave: an object of another latlab run under `latlab/`, and one
/// outside it.
const NOT_OURS: [&str; 2] = ["latlab/someone-else/keep", "data/keep"];

/// Every object in the bucket is one of `NOT_OURS` or under one of `runs`' prefixes; returns how
/// many each run has.
async fn owners(c: &aws_sdk_s3::Client, bucket: &str, runs: &[&str]) -> Vec<usize> {
    let all = keys(c, bucket).await;
    for n in NOT_OURS {
        assert!(
            all.iter().any(|k| k == n),
            "{n} is gone from {bucket}: {all:?}"
        );
    }
    let mut counts = vec![0; runs.len()];
    for k in all.iter().filter(|k| !NOT_OURS.contains(&k.as_str())) {
        let i = runs
            .iter()
            .position(|r| k.starts_with(&format!("latlab/{r}/")))
            .unwrap_or_else(|| panic!("{k} is under no run's prefix ({runs:?})"));
        counts[i] += 1;
    }
    counts
}

fn gets(lab: &s3::S3Lab) -> (u64, u64) {
    lab.snapshot(false)
        .ops
        .iter()
        .filter(|o| o.op == "GET")
        .fold((0, 0), |(n, e), o| (n + o.requests, e + o.errors))
}

async fn wait_for_gets(lab: &s3::S3Lab, at_least: u64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while gets(lab).0 < at_least {
        assert!(std::time::Instant::now() < deadline, "{:?}", gets(lab));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_sharing_buckets_write_under_their_own_prefix_and_delete_only_theirs() {
    // One endpoint and one pair of buckets, as several hosts measuring one real pair share them.
    let emu = latlab_emulator::Emulator::start(Default::default())
        .await
        .unwrap();
    let c = latlab::aws::emulator_s3_client(
        &emu.endpoint_url(),
        aws_smithy_types::retry::RetryConfig::disabled(),
    );
    let given = s3::Buckets {
        standard: "shared-standard".into(),
        express: "shared--use1-az4--x-s3".into(),
    };
    for b in [&given.standard, &given.express] {
        c.create_bucket().bucket(b).send().await.unwrap();
        for k in NOT_OURS {
            c.put_object().bucket(b).key(k).send().await.unwrap();
        }
    }
    let mut scenario = Scenario::resolve("s3-demo").unwrap().s3.unwrap();
    let start = |run_id: &'static str, scenario: s3::config::S3Scenario| {
        let (c, given) = (c.clone(), given.clone());
        async move {
            s3::S3Lab::open(
                c,
                &scenario,
                run_id,
                Some(given),
                Default::default(),
                std::time::Instant::now(),
            )
            .await
            .unwrap()
        }
    };
    let a = start("aaaa0001", scenario.clone()).await;
    let b = start("bbbb0002", scenario.clone()).await;
    a.start_live();
    b.start_live();
    wait_for_gets(&a, 5).await;
    wait_for_gets(&b, 5).await;
    let runs = ["aaaa0001", "bbbb0002"];
    let live = owners(&c, &given.express, &runs).await;
    assert!(live[0] > 0 && live[1] > 0, "each run's objects: {live:?}");
    assert!(
        keys(&c, &given.express)
            .await
            .iter()
            .any(|k| k.starts_with("latlab/bbbb0002/live/")),
        "the live loop's keys are latlab/RUN_ID/live/..."
    );

    // The first run ends: its objects go, the second's stay while it goes on reading them.
    a.stop(&Hurry::new()).await;
    assert_eq!(a.cleanup().await, Vec::<String>::new());
    for bucket in [&given.standard, &given.express] {
        assert_eq!(owners(&c, bucket, &runs).await[0], 0, "{bucket}");
    }
    assert!(owners(&c, &given.express, &runs).await[1] > 0);
    let (before, _) = gets(&b);
    wait_for_gets(&b, before + 10).await;

    // A third run's matrix (upload, download, delete, per class) beside the live loop.
    scenario.matrix = vec![s3::Case {
        objects: 3,
        size: 1000,
    }];
    scenario.repetitions = 1;
    let m = start("cccc0003", scenario).await;
    m.run_matrix(false, &|_| {}).await.unwrap();
    let rows = m.matrix.lock().clone().unwrap();
    assert!(rows[0].upload_express_s > 0.0 && rows[0].download_standard_s > 0.0);
    let runs = ["aaaa0001", "bbbb0002", "cccc0003"];
    for bucket in [&given.standard, &given.express] {
        assert_eq!(owners(&c, bucket, &runs).await[2], 0, "{bucket}");
    }
    assert_eq!(m.cleanup().await, Vec::<String>::new());
    let (before, errors) = gets(&b);
    wait_for_gets(&b, before + 10).await;
    assert_eq!(errors, 0, "no GET of the second run failed");
    assert_eq!(gets(&b).1, 0);

    b.stop(&Hurry::new()).await;
    assert_eq!(b.cleanup().await, Vec::<String>::new());
    for bucket in [&given.standard, &given.express] {
        assert_eq!(owners(&c, bucket, &runs).await, [0, 0, 0], "{bucket}");
        assert_eq!(keys(&c, bucket).await.len(), NOT_OURS.len());
    }
}
