//! Resharding through aws-sdk-kinesis: UpdateShardCount, SplitShard and MergeShards change the
//! shards as the service does; records put before a reshard are read from the parents, then the
//! children, with nothing lost and each key's order kept; closed shards end GetRecords and
//! SubscribeToShard with ChildShards; ListShards lists by ShardFilter.
//! The errors and limits of resharding are in crates/emulator/tests/services/kinesis_reshard_limits.rs.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use aws_sdk_kinesis::primitives::{Blob, DateTime};
use aws_sdk_kinesis::types::{
    ScalingType, Shard, ShardFilter, ShardFilterType, ShardIteratorType,
    SubscribeToShardEventStream,
};
use common::*;
use latlab_emulator::Emulator;
use latlab_emulator::kinesis::store::partition_hash;

const STREAM_ARN: &str = "arn:aws:kinesis:us-east-1:000000000000:stream/s";
const HALF: u128 = 1 << 127;

async fn setup(shards: i32) -> (Emulator, aws_sdk_kinesis::Client) {
    let emu = emulator(&[
        "stream_activation=0s",
        "consumer_activation=0s",
        "reshard_duration=0s",
    ])
    .await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", shards).await;
    (emu, c)
}

async fn scale(c: &aws_sdk_kinesis::Client, target: i32) {
    c.update_shard_count()
        .stream_name("s")
        .target_shard_count(target)
        .scaling_type(ScalingType::UniformScaling)
        .send()
        .await
        .expect("UpdateShardCount");
}

async fn list(c: &aws_sdk_kinesis::Client, filter: Option<ShardFilter>) -> Vec<Shard> {
    c.list_shards()
        .stream_name("s")
        .set_shard_filter(filter)
        .send()
        .await
        .expect("ListShards")
        .shards
        .unwrap_or_default()
}

fn ids(shards: &[Shard]) -> Vec<String> {
    shards
        .iter()
        .map(|s| s.shard_id[8..].trim_start_matches('0').to_string())
        .collect()
}

fn range(s: &Shard) -> (u128, u128) {
    let r = s.hash_key_range.as_ref().unwrap();
    (
        r.starting_hash_key.parse().unwrap(),
        r.ending_hash_key.parse().unwrap(),
    )
}

async fn open_shard_count(c: &aws_sdk_kinesis::Client) -> i32 {
    let d = c
        .describe_stream_summary()
        .stream_name("s")
        .send()
        .await
        .unwrap();
    d.stream_description_summary.unwrap().open_shard_count
}

async fn put(c: &aws_sdk_kinesis::Client, key: &str, data: &str) {
    c.put_record()
        .stream_name("s")
        .partition_key(key)
        .data(Blob::new(data.as_bytes()))
        .send()
        .await
        .expect("put");
}

async fn iterator(c: &aws_sdk_kinesis::Client, shard: &str, kind: ShardIteratorType) -> String {
    c.get_shard_iterator()
        .stream_name("s")
        .shard_id(shard)
        .shard_iterator_type(kind)
        .send()
        .await
        .expect("iterator")
        .shard_iterator
        .unwrap()
}

fn shard(i: u32) -> String {
    format!("shardId-{i:012}")
}

#[tokio::test]
async fn uniform_scaling_doubles_then_halves_with_lineage() {
    let (_emu, c) = setup(1).await;
    let out = c
        .update_shard_count()
        .stream_arn(STREAM_ARN)
        .target_shard_count(2)
        .scaling_type(ScalingType::UniformScaling)
        .send()
        .await
        .unwrap();
    assert_eq!(out.current_shard_count, Some(1));
    assert_eq!(out.target_shard_count, Some(2));
    assert_eq!(out.stream_name.as_deref(), Some("s"));
    assert_eq!(out.stream_arn.as_deref(), Some(STREAM_ARN));
    let shards = list(&c, None).await;
    assert_eq!(ids(&shards), ["", "1", "2"]);
    let end = shards[0].sequence_number_range.as_ref().unwrap();
    assert!(end.ending_sequence_number.is_some(), "the parent is closed");
    for child in &shards[1..] {
        assert_eq!(child.parent_shard_id.as_deref(), Some(shard(0).as_str()));
        assert_eq!(child.adjacent_parent_shard_id, None);
        assert!(
            child
                .sequence_number_range
                .as_ref()
                .unwrap()
                .ending_sequence_number
                .is_none()
        );
    }
    // The children split 0..2^128-1 evenly, at 2^127.
    assert_eq!(range(&shards[1]), (0, HALF - 1));
    assert_eq!(range(&shards[2]), (HALF, u128::MAX));
    assert_eq!(open_shard_count(&c).await, 2);

    scale(&c, 1).await;
    let shards = list(&c, None).await;
    assert_eq!(ids(&shards), ["", "1", "2", "3"]);
    let merged = &shards[3];
    assert_eq!(merged.parent_shard_id.as_deref(), Some(shard(1).as_str()));
    assert_eq!(
        merged.adjacent_parent_shard_id.as_deref(),
        Some(shard(2).as_str())
    );
    assert_eq!(range(merged), (0, u128::MAX));
    assert_eq!(open_shard_count(&c).await, 1);
    // DescribeStream lists the same shards.
    let d = c.describe_stream().stream_name("s").send().await.unwrap();
    let d = d.stream_description.unwrap();
    assert_eq!(ids(&d.shards), ["", "1", "2", "3"]);
    assert_eq!(d.stream_status.as_str(), "ACTIVE");
}

#[tokio::test]
async fn split_and_merge_shards_by_hash_key() {
    let (_emu, c) = setup(1).await;
    c.split_shard()
        .stream_name("s")
        .shard_to_split(shard(0))
        .new_starting_hash_key("1000")
        .send()
        .await
        .unwrap();
    let shards = list(&c, None).await;
    assert_eq!(range(&shards[1]), (0, 999));
    assert_eq!(range(&shards[2]), (1000, u128::MAX));
    // Adjacency is by hash range, in either order.
    c.merge_shards()
        .stream_name("s")
        .shard_to_merge(shard(2))
        .adjacent_shard_to_merge(shard(1))
        .send()
        .await
        .unwrap();
    let shards = list(&c, None).await;
    assert_eq!(
        shards[3].parent_shard_id.as_deref(),
        Some(shard(2).as_str())
    );
    assert_eq!(
        shards[3].adjacent_parent_shard_id.as_deref(),
        Some(shard(1).as_str())
    );
    assert_eq!(range(&shards[3]), (0, u128::MAX));
}

/// Reads a shard from TRIM_HORIZON until its end (a closed shard) or until it has nothing more
/// (an open one); the records as (key, data), and the ChildShards of the last answer.
async fn read_all(
    c: &aws_sdk_kinesis::Client,
    shard_id: &str,
    limit: Option<i32>,
) -> (
    Vec<(String, String)>,
    Vec<aws_sdk_kinesis::types::ChildShard>,
) {
    let mut it = iterator(c, shard_id, ShardIteratorType::TrimHorizon).await;
    let mut out = Vec::new();
    loop {
        let r = c
            .get_records()
            .shard_iterator(&it)
            .set_limit(limit)
            .send()
            .await
            .unwrap();
        let n = r.records.len();
        for rec in &r.records {
            let data = String::from_utf8(rec.data.as_ref().to_vec()).unwrap();
            out.push((rec.partition_key.clone().unwrap_or_default(), data));
        }
        match r.next_shard_iterator {
            None => return (out, r.child_shards.unwrap_or_default()),
            Some(next) if n > 0 => it = next,
            Some(_) => {
                assert!(r.child_shards.is_none_or(|c| c.is_empty()), "an open shard");
                return (out, Vec::new());
            }
        }
    }
}

#[tokio::test]
async fn records_put_before_a_split_are_read_from_the_parent_then_the_children() {
    let (_emu, c) = setup(1).await;
    let keys: Vec<String> = (0..20).map(|k| format!("key-{k}")).collect();
    let mut sent = 0;
    for n in 0..10 {
        for k in &keys {
            put(&c, k, &n.to_string()).await;
            sent += 1;
        }
    }
    scale(&c, 2).await;
    for n in 10..20 {
        for k in &keys {
            put(&c, k, &n.to_string()).await;
            sent += 1;
        }
    }
    // The parent: everything put before the split, then no iterator and its children.
    let (parent, children) = read_all(&c, &shard(0), Some(50)).await;
    assert_eq!(parent.len(), 200);
    let mut child_ids: Vec<_> = children.iter().map(|c| c.shard_id.clone()).collect();
    child_ids.sort();
    assert_eq!(child_ids, [shard(1), shard(2)]);
    for child in &children {
        assert_eq!(child.parent_shards, [shard(0)]);
    }
    // A KCL-like reader: the parent first, then each child; per key the values come in order.
    let mut seen: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (k, v) in &parent {
        seen.entry(k.clone()).or_default().push(v.parse().unwrap());
    }
    let mut total = parent.len();
    for child in &children {
        let (records, _) = read_all(&c, &child.shard_id, None).await;
        let r = child.hash_key_range.as_ref().unwrap();
        let (start, end): (u128, u128) = (
            r.starting_hash_key.parse().unwrap(),
            r.ending_hash_key.parse().unwrap(),
        );
        for (k, v) in &records {
            let h = partition_hash(k);
            assert!(
                start <= h && h <= end,
                "{k} is routed by the MD5 of its key"
            );
            seen.entry(k.clone()).or_default().push(v.parse().unwrap());
        }
        total += records.len();
    }
    assert_eq!(total, sent, "nothing lost, nothing twice");
    for k in &keys {
        assert_eq!(seen[k], (0..20).collect::<Vec<u32>>(), "{k} in order");
    }
}

#[tokio::test]
async fn a_closed_shard_answers_child_shards_once_read_to_its_end() {
    let (_emu, c) = setup(1).await;
    for n in 0..3 {
        put(&c, "k", &n.to_string()).await;
    }
    let it = iterator(&c, &shard(0), ShardIteratorType::TrimHorizon).await;
    scale(&c, 2).await;
    // Two of three records: the shard is not read to its end yet.
    let first = c
        .get_records()
        .shard_iterator(&it)
        .limit(2)
        .send()
        .await
        .unwrap();
    assert_eq!(first.records.len(), 2);
    assert!(first.child_shards.as_ref().is_none_or(|c| c.is_empty()));
    let next = first.next_shard_iterator.expect("more to read");
    // The last record comes with the end: no next iterator, and the children.
    let last = c.get_records().shard_iterator(&next).send().await.unwrap();
    assert_eq!(last.records.len(), 1);
    assert_eq!(last.next_shard_iterator, None);
    let children = last.child_shards.unwrap();
    assert_eq!(children.len(), 2);
    assert_eq!(children[0].shard_id, shard(1));
    assert_eq!(children[0].parent_shards, [shard(0)]);
    let r = children[1].hash_key_range.as_ref().unwrap();
    assert_eq!(r.starting_hash_key, HALF.to_string());
    // LATEST on a closed shard is its end at once.
    let latest = iterator(&c, &shard(0), ShardIteratorType::Latest).await;
    let r = c
        .get_records()
        .shard_iterator(&latest)
        .send()
        .await
        .unwrap();
    assert!(r.records.is_empty() && r.next_shard_iterator.is_none());
    assert_eq!(r.child_shards.unwrap().len(), 2);
}

#[tokio::test]
async fn subscribe_to_shard_ends_a_closed_shard_with_child_shards() {
    let (_emu, c) = setup(2).await;
    let consumer = register_active(&c, STREAM_ARN, "efo").await;
    let mut sub = c
        .subscribe_to_shard()
        .consumer_arn(&consumer)
        .shard_id(shard(0))
        .starting_position(starting(ShardIteratorType::TrimHorizon, None))
        .send()
        .await
        .unwrap();
    // Keys of shard 0 (hash below 2^127), put while the subscription is live; then a merge
    // closes shard 0 and shard 1 under it.
    let keys: Vec<String> = (0..200)
        .map(|i| format!("k{i}"))
        .filter(|k| partition_hash(k) < HALF)
        .take(5)
        .collect();
    for k in &keys {
        put(&c, k, "x").await;
    }
    scale(&c, 1).await;
    let mut records = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let last = loop {
        let ev = tokio::time::timeout_at(deadline, sub.event_stream.recv()).await;
        match ev.expect("an event before the deadline").expect("no error") {
            Some(SubscribeToShardEventStream::SubscribeToShardEvent(ev)) => {
                records += ev.records.len();
                if ev.child_shards.as_ref().is_some_and(|c| !c.is_empty()) {
                    break ev;
                }
            }
            Some(other) => panic!("unexpected {other:?}"),
            None => panic!("the stream ended without ChildShards"),
        }
    };
    assert_eq!(records, keys.len());
    // The wire's null ContinuationSequenceNumber reads as empty in the SDK.
    assert_eq!(last.continuation_sequence_number, "");
    assert!(last.records.is_empty());
    let child = &last.child_shards.unwrap()[0];
    assert_eq!(child.shard_id, shard(2));
    assert_eq!(child.parent_shards, [shard(0), shard(1)]);
    // Then the stream ends cleanly.
    let end = tokio::time::timeout(Duration::from_secs(5), sub.event_stream.recv()).await;
    assert!(matches!(end, Ok(Ok(None))), "{end:?}");
}

fn filter(kind: ShardFilterType, shard_id: Option<String>, at: Option<f64>) -> Option<ShardFilter> {
    let f = ShardFilter::builder()
        .r#type(kind)
        .set_shard_id(shard_id)
        .set_timestamp(at.map(DateTime::from_secs_f64))
        .build()
        .unwrap();
    Some(f)
}

#[tokio::test]
async fn list_shards_filters_by_type() {
    let (emu, c) = setup(1).await;
    emu.freeze_clock();
    let created = c
        .describe_stream_summary()
        .stream_name("s")
        .send()
        .await
        .unwrap();
    let t0 = created
        .stream_description_summary
        .unwrap()
        .stream_creation_timestamp
        .as_secs_f64();
    // Shard 0 closes at t0+10 (children 1 and 2), they close at t0+20 (child 3).
    emu.advance_clock(Duration::from_secs(10));
    scale(&c, 2).await;
    assert_eq!(list(&c, None).await.len(), 3);
    emu.advance_clock(Duration::from_secs(10));
    scale(&c, 1).await;
    assert_eq!(list(&c, None).await.len(), 4);
    emu.advance_clock(Duration::from_secs(10));

    /// A filter's type, ShardId and Timestamp, and the shards it lists.
    type Case = (
        ShardFilterType,
        Option<String>,
        Option<f64>,
        Vec<&'static str>,
    );
    let cases: Vec<Case> = vec![
        (
            ShardFilterType::FromTrimHorizon,
            None,
            None,
            vec!["", "1", "2", "3"],
        ),
        (ShardFilterType::AtLatest, None, None, vec!["3"]),
        (
            ShardFilterType::AfterShardId,
            Some(shard(1)),
            None,
            vec!["2", "3"],
        ),
        (ShardFilterType::AtTrimHorizon, None, None, vec![""]),
        (ShardFilterType::AtTimestamp, None, Some(t0 + 5.0), vec![""]),
        (
            ShardFilterType::AtTimestamp,
            None,
            Some(t0 + 15.0),
            vec!["1", "2"],
        ),
        (
            ShardFilterType::AtTimestamp,
            None,
            Some(t0 - 100.0),
            vec![""],
        ),
        (
            ShardFilterType::FromTimestamp,
            None,
            Some(t0 + 15.0),
            vec!["1", "2", "3"],
        ),
        (
            ShardFilterType::FromTimestamp,
            None,
            Some(t0 + 25.0),
            vec!["3"],
        ),
        // Before the trim horizon: corrected to it.
        (
            ShardFilterType::FromTimestamp,
            None,
            Some(t0 - 1e6),
            vec!["", "1", "2", "3"],
        ),
    ];
    for (kind, id, at, want) in cases {
        let got = ids(&list(&c, filter(kind.clone(), id, at)).await);
        assert_eq!(got, want, "{kind:?} {at:?}");
    }
    // A filter that needs a member it lacks.
    for kind in [ShardFilterType::AfterShardId, ShardFilterType::AtTimestamp] {
        let e = c
            .list_shards()
            .stream_name("s")
            .set_shard_filter(filter(kind.clone(), None, None))
            .send()
            .await
            .unwrap_err();
        assert_error(
            &e,
            "InvalidArgumentException",
            "is required for ShardFilter.Type",
        );
    }
    // Pages carry the filter.
    let first = c
        .list_shards()
        .stream_name("s")
        .max_results(1)
        .set_shard_filter(filter(
            ShardFilterType::FromTimestamp,
            None,
            Some(t0 + 15.0),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(ids(first.shards()), ["1"]);
    let mut token = first.next_token;
    let mut rest = Vec::new();
    while let Some(t) = token {
        let page = c
            .list_shards()
            .next_token(t)
            .max_results(1)
            .send()
            .await
            .unwrap();
        rest.extend(ids(page.shards()));
        token = page.next_token;
    }
    assert_eq!(rest, ["2", "3"]);
    // Past retention the closed shards have expired and are no longer listed.
    emu.advance_clock(Duration::from_secs(24 * 3600));
    assert_eq!(ids(&list(&c, None).await), ["3"]);
    assert_eq!(
        ids(&list(&c, filter(ShardFilterType::AtTrimHorizon, None, None)).await),
        ["3"]
    );
}
