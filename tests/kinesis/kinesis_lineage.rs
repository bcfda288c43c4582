//! Resharding live through the real SDK on the embedded emulator: the `x` and `X` keys' commands
//! take one shard to two and back to one while every kind of consumer reads, and each follows the
//! lineage as KCL does (a parent read to its end before its children, a merged child after both
//! parents), so no record is lost and no partition key's records come out of order.

use std::time::{Duration, Instant};

use latlab::labs::kinesis::snapshot::KinesisSnapshot;
use latlab::labs::kinesis::{Command as K, Scale};
use latlab::report::{Ending, Format, Report};
use latlab::run::{Command, Run, TargetOptions};
use latlab::scenario::Scenario;

const SCENARIO: &str = r#"
name = "lineage"
description = "a reshard from 1 to 2 to 1 shards with every consumer kind"
duration = "60s"
latency_profile = "zero"

[emulator]
limits = { stream_activation = "0s", consumer_activation = "0s", reshard_duration = "2s" }

[kinesis]
stream = "lineage"
shards = 1
drain = "10s"

[kinesis.producer]
rate = 50
payload = "128B"

[[kinesis.consumers]]
kind = "efo"
name = "fan-out"

[[kinesis.consumers]]
kind = "lambda-efo"
name = "Lambda EFO"

[[kinesis.consumers]]
kind = "poller"
name = "poller"
interval = "200ms"

[[kinesis.consumers]]
kind = "lambda-standard"
name = "Lambda standard"
"#;

async fn reshard(lab: &Run, scale: Scale) -> Result<String, String> {
    lab.apply(Command::Kinesis(K::Reshard(scale)))
        .await
        .map_err(|e| format!("{e:#}"))
}

/// Waits until the stream is ACTIVE with `open` open shards; returns how long that took.
async fn until_active(lab: &Run, open: usize) -> Duration {
    let t = Instant::now();
    loop {
        let snap = lab.snapshot(false);
        let k = snap.kinesis.as_ref().unwrap();
        if !k.updating && k.shards == open {
            return t.elapsed();
        }
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "the stream did not become ACTIVE with {open} shards: {} shards, updating {}",
            k.shards,
            k.updating
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn shard(n: u32) -> String {
    format!("shardId-{n:012}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reshard_from_one_to_two_to_one_keeps_every_record_and_each_keys_order() {
    let s = Scenario::parse(SCENARIO, "test").unwrap();
    let lab = Run::start(s.clone(), &TargetOptions::default())
        .await
        .unwrap();
    lab.start_live();
    tokio::time::sleep(Duration::from_secs(3)).await;

    let said = reshard(&lab, Scale::Double).await.unwrap();
    assert!(
        said.contains("UpdateShardCount accepted: 1 -> 2 shards"),
        "{said}"
    );
    // While it is UPDATING the service refuses another, and the refusal is the answer shown.
    let refused = reshard(&lab, Scale::Double).await.unwrap_err();
    assert!(refused.contains("ResourceInUseException"), "{refused}");
    let mid = lab.snapshot(false);
    let k = mid.kinesis.as_ref().unwrap();
    assert!(k.updating, "UPDATING while the reshard is under way");
    assert_eq!(k.shards, 1, "the open shards until it takes effect");
    let took = until_active(&lab, 2).await;
    eprintln!("1 -> 2 took effect after {took:?}");
    tokio::time::sleep(Duration::from_secs(4)).await;

    let said = reshard(&lab, Scale::Halve).await.unwrap();
    assert!(
        said.contains("UpdateShardCount accepted: 2 -> 1 shards"),
        "{said}"
    );
    until_active(&lab, 1).await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    // The arrivals of the last 30 seconds, per second, as the sparklines draw them.
    let history = lab.history(30);

    let (snap, problems) = lab.finish().await;
    assert!(problems.is_empty(), "{problems:?}");
    let k = snap.kinesis.as_ref().unwrap();
    assert_eq!(k.shard_story(), "1 -> 2 -> 1");
    let acked = k.producer.acked;
    assert!(acked > 400, "{acked} records acknowledged");
    for c in &k.consumers {
        let n = &c.counts;
        eprintln!(
            "{}: acknowledged {}, received {}, lost {}, unread {}, duplicates {}, out of order {}, throttled attempts {}",
            c.name,
            n.acknowledged,
            n.received,
            n.lost,
            n.unread,
            n.duplicates,
            c.out_of_order,
            c.sdk.counters.throttles
        );
        assert_eq!(n.received + n.lost + n.unread, n.acknowledged, "{}", c.name);
        assert_eq!(
            n.acknowledged, acked,
            "{}: every acknowledged record",
            c.name
        );
        assert_eq!(n.received, acked, "{}: every record received", c.name);
        assert_eq!(n.lost, 0, "{}", c.name);
        assert_eq!(c.out_of_order, 0, "{}: each key's records in order", c.name);
        parents_before_children(k, &c.name);
    }
    // The pause: the last second with no arrivals at all, around each reshard, per consumer.
    let h = history.kinesis.as_ref().unwrap();
    for (c, points) in k.consumers.iter().zip(&h.consumers) {
        let counts: Vec<u32> = points.iter().map(|p| p.count).collect();
        let p99: Vec<u64> = points.iter().map(|p| p.p99_us / 1000).collect();
        eprintln!("{} arrivals per second: {counts:?}", c.name);
        eprintln!("{} arrival -> receive p99 per second, ms: {p99:?}", c.name);
    }

    let text = Report::new(&s, snap.clone(), Ending::Completed, vec![]).render(Format::Text);
    assert!(text.contains("lineage, 1 -> 2 -> 1 shards"), "{text}");
    assert!(text.contains("out of order (per key)"), "{text}");
    assert!(
        text.contains("resharded: 1 -> 2 -> 1 open shards"),
        "{text}"
    );
}

/// Each consumer started each child only after it had finished every parent, and received the
/// child's first record after the parents' last: 0 split into 1 and 2, which merged into 3.
fn parents_before_children(k: &KinesisSnapshot, consumer: &str) {
    let c = k.consumers.iter().find(|c| c.name == consumer).unwrap();
    let read = |n: u32| {
        c.shards
            .iter()
            .find(|r| r.shard == shard(n))
            .unwrap_or_else(|| panic!("{consumer} never read {}: {:?}", shard(n), c.shards))
    };
    for (child, parents) in [(1, &[0][..]), (2, &[0]), (3, &[1, 2])] {
        let ch = read(child);
        let started = ch.started_secs.expect("started");
        for p in parents {
            let pr = read(*p);
            let finished = pr
                .finished_secs
                .unwrap_or_else(|| panic!("{consumer}: {} not finished", shard(*p)));
            assert!(
                started >= finished,
                "{consumer}: {} started at {started} before {} finished at {finished}",
                shard(child),
                shard(*p)
            );
            if let (Some(first), Some(last)) = (ch.first_record_secs, pr.last_record_secs) {
                assert!(
                    first >= last,
                    "{consumer}: a child's record before a parent's"
                );
                eprintln!(
                    "{consumer}: {} last record at {last:.2}s, {} first at {first:.2}s: {:.2}s apart",
                    shard(*p),
                    shard(child),
                    first - last
                );
            }
        }
        assert!(ch.records > 0, "{consumer}: {} had records", shard(child));
    }
    assert!(
        read(3).finished_secs.is_none(),
        "the open shard is never finished"
    );
}
