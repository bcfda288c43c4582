//! The KCL consumer kind end to end on the embedded emulator: its idle time paces its reads (no
//! throttling for five readers at the library's defaults), the `k` key adds readers until the
//! shard refuses them, every record adds up, and its settings are checked where they are read.

use std::time::Duration;

use latlab::labs::kinesis;
use latlab::labs::kinesis::config::ConsumerKind;
use latlab::run::{Command, Run, TargetOptions};
use latlab::scenario::Scenario;

fn scenario(body: &str) -> anyhow::Result<Scenario> {
    let text = format!(
        "name = \"kcl\"\ndescription = \"kcl\"\nduration = \"10s\"\nlatency_profile = \"zero\"\n\
         [emulator]\nlimits = {{ stream_activation = \"0s\", consumer_activation = \"0s\" }}\n\
         [kinesis]\nstream = \"kcl\"\n[kinesis.producer]\nrate = 20\npayload = \"128B\"\n{body}"
    );
    Scenario::parse(&text, "kcl")
}

fn calls(c: &latlab::labs::kinesis::snapshot::ConsumerSnapshot) -> u64 {
    c.sdk
        .counters
        .operations
        .get("GetRecords")
        .map_or(0, |o| o.calls)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_kcl_consumers_wait_out_their_idle_time_and_leave_the_shard_unthrottled() {
    let s = scenario(
        "[[kinesis.consumers]]\nkind = \"efo\"\nname = \"fan-out\"\n\
         [[kinesis.consumers]]\nkind = \"kcl\"\nname = \"kcl\"\ncount = 5\nidle_time = \"1s\"\n",
    )
    .unwrap();
    let lab = Run::start(s, &TargetOptions::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(8)).await;
    let (snap, problems) = lab.finish().await;
    assert!(problems.is_empty(), "{problems:?}");
    let k = snap.kinesis.unwrap();
    let kcl: Vec<_> = k
        .consumers
        .iter()
        .filter(|c| c.kind == ConsumerKind::Kcl)
        .collect();
    assert_eq!(kcl.len(), 5);
    for c in &kcl {
        assert_eq!(c.name[..4].to_string(), "kcl ");
        assert!(
            c.detail
                .starts_with("KCL 2.x: idle 1s after each call returns, 10,000 records a call"),
            "{}",
            c.detail
        );
        // One call every idle time plus the call's own time: 8 to 9 calls in 8 s (and the drain's).
        let n = calls(c);
        assert!(
            (6..=14).contains(&n),
            "{}: {n} GetRecords calls in about 8 s",
            c.name
        );
        assert_eq!(
            c.sdk.counters.throttles, 0,
            "{}: five readers a second of idle stay under 5 calls/s",
            c.name
        );
        assert_eq!(c.counts.received, k.producer.acked, "{}", c.name);
        // A record waits for the next read: half the idle time on average.
        let p50 = c.arrival_to_receive.p50_us as f64 / 1000.0;
        assert!((250.0..=900.0).contains(&p50), "{}: p50 {p50} ms", c.name);
    }
    let fan_out = &k.consumers[0];
    assert!(
        fan_out.arrival_to_receive.p50_us < 100_000,
        "fan-out p50 {} us",
        fan_out.arrival_to_receive.p50_us
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kcl_consumers_added_live_take_the_shard_past_its_read_limit_and_every_record_adds_up() {
    let s = scenario(
        "[[kinesis.consumers]]\nkind = \"kcl\"\nname = \"kcl\"\ncount = 3\nidle_time = \"1s\"\n",
    )
    .unwrap();
    let lab = Run::start(s, &TargetOptions::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let quiet = lab.snapshot(false);
    let throttles = |s: &latlab::snapshot::Snapshot| -> u64 {
        s.kinesis
            .as_ref()
            .unwrap()
            .consumers
            .iter()
            .map(|c| c.sdk.counters.throttles)
            .sum()
    };
    assert_eq!(throttles(&quiet), 0, "three readers, a second of idle each");
    for n in 4..=9 {
        assert_eq!(
            lab.apply(Command::Kinesis(kinesis::Command::AddKcl))
                .await
                .unwrap(),
            format!("added KCL consumer kcl {n}")
        );
    }
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(
        lab.apply(Command::Kinesis(kinesis::Command::RemoveKcl))
            .await
            .unwrap(),
        "removed KCL consumer kcl 9"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (snap, _) = lab.finish().await;
    assert!(
        throttles(&snap) > 0,
        "nine readers ask about 9 calls/s of a shard's 5"
    );
    let k = snap.kinesis.unwrap();
    assert_eq!(k.consumers.len(), 9);
    assert!(k.consumers[8].stopped_at_secs.is_some());
    for c in &k.consumers {
        let n = &c.counts;
        assert_eq!(
            n.received + n.lost + n.unread,
            n.acknowledged,
            "{}: {n:?}",
            c.name
        );
        assert_eq!(n.lost, 0, "{}", c.name);
    }
}

#[test]
fn kcl_settings_are_checked_and_kcl3s_floor_applies() {
    let err = |body: &str| scenario(body).unwrap_err().to_string();
    assert!(
        err("[[kinesis.consumers]]\nkind = \"poller\"\nidle_time = \"1s\"\n")
            .contains("idle_time does not apply to kind = \"poller\"; it applies to kcl"),
    );
    let e = err("[[kinesis.consumers]]\nkind = \"kcl\"\nkcl = \"4.x\"\n");
    assert!(
        e.contains("4.x") && e.contains("1.x") && e.contains("3.x"),
        "{e}"
    );
    assert!(
        err("[[kinesis.consumers]]\nkind = \"kcl\"\nidle_time = \"0s\"\n")
            .contains("idle_time must be more than 0 and at most 60s, got 0ms")
    );
    assert!(
        err("[[kinesis.consumers]]\nkind = \"efo\"\ncount = 2\n")
            .contains("count does not apply to kind = \"efo\"; it applies to poller and kcl")
    );
    let k = |body: &str| {
        let s = scenario(body).unwrap();
        let k = s.kinesis.unwrap();
        k.consumers[0].clone()
    };
    // KCL 3.x raises an idle time under 200 ms to 200 ms, as the library does.
    let v3 = k("[[kinesis.consumers]]\nkind = \"kcl\"\nkcl = \"3.x\"\nidle_time = \"50ms\"\n");
    assert_eq!(v3.interval, Duration::from_millis(200));
    let v2 = k("[[kinesis.consumers]]\nkind = \"kcl\"\nidle_time = \"50ms\"\n");
    assert_eq!(v2.interval, Duration::from_millis(50));
    let v1 = k("[[kinesis.consumers]]\nkind = \"kcl\"\nkcl = \"1.x\"\n");
    assert_eq!(v1.interval, Duration::from_secs(1));
    let v2 = k("[[kinesis.consumers]]\nkind = \"kcl\"\n");
    assert_eq!(
        (v2.interval, v2.limit),
        (Duration::from_millis(1500), 10_000)
    );
}
