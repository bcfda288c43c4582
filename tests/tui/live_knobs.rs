//! The run's other live knobs, applied as the TUI's keys apply them: the embedded emulator's
//! latency profile (visible in the measured latency, and named in the report), S3's requests in
//! flight, and the Redis replication link's profile.

use std::time::Duration;

use latlab::labs::{redis, s3, sqs};
use latlab::run::{Command, Run, TargetOptions};
use latlab::scenario::Scenario;

fn scenario(body: &str) -> Scenario {
    let text = format!(
        "name = \"knobs\"\ndescription = \"knobs\"\nduration = \"60s\"\nlatency_profile = \"zero\"\n\
         [emulator]\nlimits = {{ stream_activation = \"0s\", consumer_activation = \"0s\" }}\n{body}"
    );
    Scenario::parse(&text, "test").unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_switch_shows_in_the_measured_latency_and_the_report() {
    let s = scenario(
        "[kinesis]\nstream = \"profile\"\n[kinesis.producer]\nrate = 20\npayload = \"128B\"\n\
         [[kinesis.consumers]]\nkind = \"efo\"\nname = \"efo\"\n",
    );
    let lab = Run::start(s, &TargetOptions::default()).await.unwrap();
    lab.start_live();
    tokio::time::sleep(Duration::from_secs(4)).await;
    let p50 = |lab: &Run| {
        lab.snapshot(false).kinesis.unwrap().consumers[0]
            .arrival_to_receive
            .p50_us
    };
    let zero = p50(&lab);
    // zero -> same-region -> seed-tokyo.
    lab.apply(Command::Profile).await.unwrap();
    let said = lab.apply(Command::Profile).await.unwrap();
    assert!(
        said.starts_with("latency profile seed-tokyo (was same-region)"),
        "{said}"
    );
    assert_eq!(
        lab.backend().label,
        "embedded emulator, latency profile seed-tokyo"
    );
    lab.apply(Command::Reset).await.unwrap();
    tokio::time::sleep(Duration::from_secs(4)).await;
    let tokyo = p50(&lab);
    eprintln!("fan-out arrival -> receive p50: zero {zero} us, seed-tokyo {tokyo} us");
    assert!(zero < 10_000, "zero: {zero} us");
    assert!(tokyo > 30_000, "seed-tokyo: {tokyo} us");
    let (snap, problems) = lab.finish().await;
    assert_eq!(snap.backend.latency_profile.as_deref(), Some("seed-tokyo"));
    assert!(
        problems
            .iter()
            .any(|p| p.contains("zero -> same-region at 0:00:0")
                && p.contains("same-region -> seed-tokyo")
                && p.contains("figures mix the profiles")),
        "{problems:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_s3_requests_in_flight_raise_the_request_rate() {
    let s = scenario("[s3]\nclass = \"standard\"\npayload = \"1KB\"\nconcurrency = 1\n");
    let opts = TargetOptions {
        latency_profile: Some("seed-tokyo".into()),
        ..Default::default()
    };
    let lab = Run::start(s, &opts).await.unwrap();
    lab.start_live();
    let rate = |lab: &Run| {
        let s3 = lab.snapshot(false).s3.unwrap();
        (
            s3.concurrency,
            s3.ops
                .iter()
                .filter(|o| o.op == "PUT")
                .map(|o| o.per_sec)
                .sum::<f64>(),
        )
    };
    tokio::time::sleep(Duration::from_secs(6)).await;
    let (one, at_one) = rate(&lab);
    assert_eq!(one, 1);
    let said = lab
        .apply(Command::S3(s3::Command::Concurrency))
        .await
        .unwrap();
    assert_eq!(said, "S3: 4 PUT-then-GET loop(s) in flight at once");
    lab.apply(Command::Reset).await.unwrap();
    tokio::time::sleep(Duration::from_secs(6)).await;
    let (four, at_four) = rate(&lab);
    eprintln!("S3 Standard PUT/s: {at_one:.1} with 1 in flight, {at_four:.1} with 4");
    assert_eq!(four, 4);
    assert!(at_four > at_one * 1.5, "{at_one} -> {at_four}");
    let (_, problems) = lab.finish().await;
    assert!(problems.is_empty(), "{problems:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replication_link_profile_changes_live() {
    common::require_redis_server();
    let s = scenario("[redis]\nlink = \"loopback\"\nvalue = \"1KB\"\n");
    let lab = Run::start(s, &TargetOptions::default()).await.unwrap();
    lab.start_live();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let said = lab
        .apply(Command::Redis(redis::Command::LinkNext))
        .await
        .unwrap();
    assert!(said.starts_with("replication link same-az"), "{said}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let r = lab.snapshot(false).redis.unwrap();
    assert_eq!(r.link.as_ref().unwrap().link, "same-az");
    assert!(r.methods.iter().all(|m| m.tries > 0), "{:?}", r.methods);
    let (_, problems) = lab.finish().await;
    assert!(problems.is_empty(), "{problems:?}");
}

/// A profile with links, switched to while a run with Redis goes on, delays the replication link
/// from then on (the persistent connection's lag follows it) and the model says so; switching
/// back takes the delay away. The clients' loopback link cannot change under open connections,
/// and the line says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_switch_reshapes_the_redis_links_it_names() {
    common::require_redis_server();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("links.toml");
    std::fs::write(
        &file,
        "name = \"links\"\n[links]\nredis-replication = { fixed_ms = 20 }\nredis-client = { fixed_ms = 1 }\n",
    )
    .unwrap();
    // Beside a lab of the emulator's (a Redis-only run has no emulator whose profile to switch).
    let s = scenario(
        "[redis]\nlink = \"loopback\"\nvalue = \"1KB\"\n[sqs]\nrate = 5\n[[sqs.consumers]]\nkind = \"long-poll\"\nname = \"long\"\n",
    );
    let lab = Run::start(s, &TargetOptions::default()).await.unwrap();
    lab.start_live();
    let lag_p50_ms = |lab: &Run| {
        let r = lab.snapshot(false).redis.unwrap();
        let m = r
            .methods
            .iter()
            .find(|m| m.method == redis::Method::Persistent)
            .unwrap();
        (m.lag.p50_us as f64 / 1000.0, m.tries)
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (before, _) = lag_p50_ms(&lab);
    let said = lab.switch_profile(file.to_str().unwrap()).unwrap();
    assert!(
        said.contains(
            "Redis replication link loopback delayed as profile links: 20 ms one way, unlimited"
        ) && said.contains("the clients' link stays loopback until the next run"),
        "{said}"
    );
    let model = lab.backend().model;
    let link = model.iter().find(|p| p.name == "redis.link").unwrap();
    assert!(
        link.value.starts_with("loopback delayed as profile links"),
        "{link:?}"
    );
    lab.apply(Command::Reset).await.unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (delayed, tries) = lag_p50_ms(&lab);
    let said = lab.switch_profile("zero").unwrap();
    assert!(
        said.contains("Redis replication link loopback: 0 ms one way, unlimited"),
        "{said}"
    );
    assert_eq!(
        lab.snapshot(false).redis.unwrap().link.unwrap().link,
        "loopback"
    );
    eprintln!(
        "persistent lag p50: {before:.2} ms on loopback, {delayed:.2} ms with the profile's 20 ms link ({tries} tries)"
    );
    assert!(tries > 0 && before < 5.0, "{before} ms");
    assert!(delayed >= 20.0, "{delayed} ms");
    let (_, problems) = lab.finish().await;
    assert!(
        problems
            .iter()
            .any(|p| p.contains("zero -> ") && p.contains("figures mix the profiles")),
        "{problems:?}"
    );
}

use crate::common;

/// `>` in sqs-demo answered "this scenario has no Kinesis lab": the SQS producer's rate is a
/// live knob of its own, and what it sends follows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sqs_producers_rate_changes_live() {
    let s =
        scenario("[sqs]\nrate = 10\n[[sqs.consumers]]\nkind = \"long-poll\"\nname = \"long\"\n");
    let lab = Run::start(s, &TargetOptions::default()).await.unwrap();
    lab.start_live();
    let produced = |lab: &Run| lab.snapshot(false).sqs.unwrap().producer.produced;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let a = produced(&lab);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let at_ten = produced(&lab) - a;
    let mut said = String::new();
    for _ in 0..3 {
        said = lab.apply(Command::Sqs(sqs::Command::RateUp)).await.unwrap();
    }
    assert_eq!(said, "SQS producer: 100 messages/s");
    assert_eq!(lab.snapshot(false).sqs.unwrap().rate, 100);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let b = produced(&lab);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let at_hundred = produced(&lab) - b;
    eprintln!("SQS messages sent in 3 s: {at_ten} at 10/s, {at_hundred} at 100/s");
    assert!(at_hundred > at_ten * 5, "{at_ten} -> {at_hundred}");
    let said = lab
        .apply(Command::Sqs(sqs::Command::RateDown))
        .await
        .unwrap();
    assert_eq!(said, "SQS producer: 50 messages/s");
    let (_, problems) = lab.finish().await;
    assert!(problems.is_empty(), "{problems:?}");
}
