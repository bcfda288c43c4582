//! The Kinesis lab's live knobs through the real SDK on the embedded emulator, as the TUI's keys
//! apply them: the producer's rate reached, its put mode switched, a fan-out consumer added and
//! removed without a record lost, the pollers' interval, and the SDK's adaptive retry mode turning
//! the shard's throttles into client-side waits.

use std::time::Duration;

use latlab::labs::kinesis::Command as K;
use latlab::run::{Command, Run, TargetOptions};
use latlab::scenario::Scenario;
use latlab::snapshot::Snapshot;

fn scenario(body: &str) -> Scenario {
    let text = format!(
        "name = \"knobs\"\ndescription = \"knobs\"\nduration = \"60s\"\nlatency_profile = \"zero\"\n\
         [emulator]\nlimits = {{ stream_activation = \"0s\", consumer_activation = \"0s\" }}\n{body}"
    );
    Scenario::parse(&text, "test").unwrap()
}

async fn apply(lab: &Run, cmd: K) -> Result<String, String> {
    lab.apply(Command::Kinesis(cmd))
        .await
        .map_err(|e| format!("{e:#}"))
}

fn identity_holds(snap: &Snapshot) {
    let k = snap.kinesis.as_ref().unwrap();
    for c in &k.consumers {
        let n = &c.counts;
        assert_eq!(
            n.received + n.lost + n.unread,
            n.acknowledged,
            "{}: {n:?}",
            c.name
        );
        assert_eq!(n.lost, 0, "{}: {n:?}", c.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_and_mode_keys_change_what_the_producer_sends() {
    let s = scenario(
        "[kinesis]\nstream = \"rate\"\n[kinesis.producer]\nrate = 5\npayload = \"128B\"\n\
         [[kinesis.consumers]]\nkind = \"efo\"\nname = \"efo\"\n",
    );
    let lab = Run::start(s, &TargetOptions::default()).await.unwrap();
    lab.start_live();
    tokio::time::sleep(Duration::from_secs(3)).await;
    for _ in 0..3 {
        apply(&lab, K::RateUp).await.unwrap();
    }
    // 5 -> 10 -> 20 -> 50 records/s.
    let confirmed = apply(&lab, K::ProducerMode).await.unwrap();
    assert!(confirmed.contains("PutRecords batches"), "{confirmed}");
    tokio::time::sleep(Duration::from_secs(12)).await;
    let snap = lab.snapshot(false);
    let p = &snap.kinesis.as_ref().unwrap().producer;
    assert_eq!(p.asked_rate, 50.0);
    assert!(p.mode.contains("PutRecords"), "{}", p.mode);
    assert!(
        (45.0..=55.0).contains(&p.achieved_rate),
        "achieved {} of 50 asked over the last 10 s",
        p.achieved_rate
    );
    let calls = p
        .sdk
        .counters
        .operations
        .get("PutRecords")
        .map_or(0, |o| o.calls);
    assert!(calls > 0, "{:?}", p.sdk.counters.operations);
    let (snap, problems) = lab.finish().await;
    assert!(problems.is_empty(), "{problems:?}");
    identity_holds(&snap);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fan_out_consumer_added_and_removed_loses_nothing() {
    let s = scenario(
        "[kinesis]\nstream = \"fanout\"\n[kinesis.producer]\nrate = 20\npayload = \"128B\"\n\
         [[kinesis.consumers]]\nkind = \"efo\"\nname = \"efo\"\n",
    );
    let lab = Run::start(s, &TargetOptions::default()).await.unwrap();
    lab.start_live();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let added = apply(&lab, K::AddFanOut).await.unwrap();
    assert!(
        added.contains("added fan-out consumer fan-out 2 (subscribed)"),
        "{added}"
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    let removed = apply(&lab, K::RemoveFanOut).await.unwrap();
    assert_eq!(removed, "removed fan-out consumer fan-out 2 (deregistered)");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (snap, problems) = lab.finish().await;
    assert!(
        problems.is_empty(),
        "the removed consumer was deregistered once: {problems:?}"
    );
    identity_holds(&snap);
    let k = snap.kinesis.as_ref().unwrap();
    let added = k.consumers.iter().find(|c| c.name == "fan-out 2").unwrap();
    assert!(added.counts.received >= 40, "{:?}", added.counts);
    assert!(added.stopped_at_secs.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_consumer_cap_answers_as_the_service_does() {
    let s = scenario(
        "[kinesis]\nstream = \"cap\"\n[kinesis.producer]\nrate = 1\npayload = \"128B\"\n\
         [[kinesis.consumers]]\nkind = \"efo\"\nname = \"efo\"\n",
    );
    let lab = Run::start(s, &TargetOptions::default()).await.unwrap();
    lab.start_live();
    for _ in 0..19 {
        apply(&lab, K::AddFanOut).await.unwrap();
    }
    let refused = apply(&lab, K::AddFanOut).await.unwrap_err();
    assert!(
        refused.contains("fan-out 21") && refused.contains("LimitExceededException"),
        "{refused}"
    );
    let (_, problems) = lab.finish().await;
    assert!(problems.is_empty(), "{problems:?}");
}

/// Three pollers every 100 ms overrun the shard's 5 GetRecords calls/s. In the SDK's standard
/// mode the shard throttles them; after `a` switches them to adaptive mode, the SDK's client-side
/// rate limiter holds calls back and the shard throttles fewer of the calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adaptive_mode_turns_throttles_into_client_side_waits() {
    let s = scenario(
        "[kinesis]\nstream = \"adaptive\"\nretry = { max_attempts = 4, initial_backoff = \"100ms\", max_backoff = \"2s\" }\n\
         [kinesis.producer]\nrate = 5\npayload = \"128B\"\n\
         [[kinesis.consumers]]\nkind = \"poller\"\nname = \"poller\"\ncount = 3\ninterval = \"100ms\"\n",
    );
    let lab = Run::start(s, &TargetOptions::default()).await.unwrap();
    lab.start_live();
    let window = Duration::from_secs(12);
    tokio::time::sleep(window).await;
    let totals = |snap: &Snapshot| {
        let k = snap.kinesis.as_ref().unwrap();
        k.consumers.iter().fold((0u64, 0u64, 0u64), |(t, w, a), c| {
            (
                t + c.sdk.counters.throttles,
                w + c.sdk.counters.client_waits,
                a + c.sdk.counters.attempts,
            )
        })
    };
    let (std_throttles, std_waits, std_attempts) = totals(&lab.snapshot(false));
    assert!(std_throttles > 0, "standard mode is throttled");
    assert_eq!(std_waits, 0, "standard mode never holds a first attempt");
    let said = apply(&lab, K::RetryMode).await.unwrap();
    assert!(
        said.contains("3 poller(s) now retry in the SDK's adaptive mode"),
        "{said}"
    );
    tokio::time::sleep(window).await;
    let snap = lab.snapshot(false);
    let (all_throttles, waits, all_attempts) = totals(&snap);
    let (ad_throttles, ad_attempts) = (all_throttles - std_throttles, all_attempts - std_attempts);
    eprintln!(
        "standard: {std_throttles} of {std_attempts} attempts throttled; adaptive: {ad_throttles} of {ad_attempts} throttled, {waits} first attempts held back"
    );
    assert!(waits > 0, "adaptive mode holds calls back: {waits}");
    let share = |t: u64, a: u64| t as f64 / a.max(1) as f64;
    assert!(
        share(ad_throttles, ad_attempts) < share(std_throttles, std_attempts),
        "throttled share: standard {std_throttles}/{std_attempts}, adaptive {ad_throttles}/{ad_attempts}"
    );
    let detail = &snap.kinesis.as_ref().unwrap().consumers[0].detail;
    assert!(detail.contains("adaptive"), "{detail}");
    let interval = apply(&lab, K::PollerInterval).await.unwrap();
    assert_eq!(interval, "pollers call GetRecords every 200ms");
    let (snap, problems) = lab.finish().await;
    assert!(problems.is_empty(), "{problems:?}");
    identity_holds(&snap);
}
