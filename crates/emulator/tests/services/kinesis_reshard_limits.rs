//! Resharding's errors and limits through aws-sdk-kinesis: malformed and impossible requests, the
//! stream UPDATING for `reshard_duration` (30 s by default) with reads and writes going on,
//! UpdateShardCount's factor of two, its ten scalings per rolling 24 hours and 10 calls per second,
//! SplitShard's 5 calls per second, and the per-shard limits on child shards.

use crate::common;

use std::time::Duration;

use aws_sdk_kinesis::primitives::Blob;
use aws_sdk_kinesis::types::{PutRecordsRequestEntry, ScalingType, ShardIteratorType};
use common::*;
use latlab_emulator::Emulator;
use latlab_emulator::kinesis::store::partition_hash;

const HALF: u128 = 1 << 127;

async fn setup(shards: i32, extra: &[&str]) -> (Emulator, aws_sdk_kinesis::Client) {
    let mut limits = vec!["stream_activation=0s", "reshard_duration=0s"];
    limits.extend_from_slice(extra);
    let emu = emulator(&limits).await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", shards).await;
    (emu, c)
}

fn shard(i: u32) -> String {
    format!("shardId-{i:012}")
}

async fn scale(c: &aws_sdk_kinesis::Client, target: i32) -> Result<(), (String, String)> {
    c.update_shard_count()
        .stream_name("s")
        .target_shard_count(target)
        .scaling_type(ScalingType::UniformScaling)
        .send()
        .await
        .map(|_| ())
        .map_err(|e| (code(&e), message(&e)))
}

async fn split(c: &aws_sdk_kinesis::Client, id: &str, key: &str) -> Result<(), (String, String)> {
    c.split_shard()
        .stream_name("s")
        .shard_to_split(id)
        .new_starting_hash_key(key)
        .send()
        .await
        .map(|_| ())
        .map_err(|e| (code(&e), message(&e)))
}

async fn merge(c: &aws_sdk_kinesis::Client, a: &str, b: &str) -> Result<(), (String, String)> {
    c.merge_shards()
        .stream_name("s")
        .shard_to_merge(a)
        .adjacent_shard_to_merge(b)
        .send()
        .await
        .map(|_| ())
        .map_err(|e| (code(&e), message(&e)))
}

fn assert_refused(r: Result<(), (String, String)>, want: &str, says: &str) {
    let (code, message) = r.expect_err(want);
    assert_eq!(code, want, "{message}");
    assert!(message.contains(says), "{want}: {message}");
}

async fn status(c: &aws_sdk_kinesis::Client) -> (String, i32) {
    let d = c
        .describe_stream_summary()
        .stream_name("s")
        .send()
        .await
        .unwrap();
    let d = d.stream_description_summary.unwrap();
    (d.stream_status.as_str().to_string(), d.open_shard_count)
}

#[tokio::test]
async fn malformed_and_impossible_reshards_get_the_services_errors() {
    // More calls than the per-second rates allow: those have their own test.
    let fast = [
        "split_merge_calls_per_sec=1000",
        "update_shard_count_calls_per_sec=1000",
    ];
    let (_emu, c) = setup(3, &fast).await;
    // UpdateShardCount: a target below 1, a scaling type that does not exist, an unknown stream.
    assert_refused(
        scale(&c, 0).await,
        "ValidationException",
        "targetShardCount",
    );
    let e = c
        .update_shard_count()
        .stream_name("s")
        .target_shard_count(2)
        .scaling_type(ScalingType::from("HALF_SCALING"))
        .send()
        .await
        .unwrap_err();
    assert_error(&e, "ValidationException", "[UNIFORM_SCALING]");
    let e = c
        .update_shard_count()
        .stream_name("nope")
        .target_shard_count(2)
        .scaling_type(ScalingType::UniformScaling)
        .send()
        .await
        .unwrap_err();
    assert_error(&e, "ResourceNotFoundException", "nope");
    // More than double, less than half.
    assert_refused(
        scale(&c, 7).await,
        "LimitExceededException",
        "from 3 open shards to 7",
    );
    assert_refused(
        scale(&c, 1).await,
        "LimitExceededException",
        "from 3 open shards to 1",
    );
    // SplitShard: an unknown shard, a malformed key, a key outside the shard's range.
    assert_refused(
        split(&c, &shard(9), "1").await,
        "ResourceNotFoundException",
        "shardId-000000000009",
    );
    assert_refused(
        split(&c, &shard(0), "01").await,
        "ValidationException",
        "newStartingHashKey",
    );
    assert_refused(
        split(&c, &shard(0), "12x").await,
        "ValidationException",
        "newStartingHashKey",
    );
    assert_refused(
        split(&c, "bad id!", "12").await,
        "ValidationException",
        "shardToSplit",
    );
    assert_refused(
        split(&c, &shard(0), "1").await,
        "InvalidArgumentException",
        "is not both greater than one plus the shard's StartingHashKey 0",
    );
    assert_refused(
        split(&c, &shard(1), &(u128::MAX).to_string()).await,
        "InvalidArgumentException",
        "less than the shard's EndingHashKey",
    );
    let past = "999999999999999999999999999999999999999";
    assert_refused(
        split(&c, &shard(2), past).await,
        "InvalidArgumentException",
        past,
    );
    // MergeShards: not adjacent, the same shard twice, an unknown shard.
    let not_adjacent = "are not an adjacent pair of shards eligible for merging";
    assert_refused(
        merge(&c, &shard(0), &shard(2)).await,
        "InvalidArgumentException",
        not_adjacent,
    );
    assert_refused(
        merge(&c, &shard(1), &shard(1)).await,
        "InvalidArgumentException",
        not_adjacent,
    );
    assert_refused(
        merge(&c, &shard(0), &shard(5)).await,
        "ResourceNotFoundException",
        "shardId-000000000005",
    );
    // A shard already split is closed: neither split nor merged again.
    split(&c, &shard(0), "1000").await.unwrap();
    let closed = "has already been merged or split";
    assert_refused(
        split(&c, &shard(0), "2000").await,
        "InvalidArgumentException",
        closed,
    );
    assert_refused(
        merge(&c, &shard(0), &shard(1)).await,
        "InvalidArgumentException",
        closed,
    );
    // The account's shard limit counts open shards.
    let (_emu, c) = setup(3, &["max_shards=4", fast[0], fast[1]]).await;
    assert_refused(
        scale(&c, 5).await,
        "LimitExceededException",
        "exceed the shard limit",
    );
    split(&c, &shard(0), "1000").await.unwrap();
    let inside_shard_1 = (113427455640312821154458202477256070485u128 + 1000).to_string();
    assert_refused(
        split(&c, &shard(1), &inside_shard_1).await,
        "LimitExceededException",
        "Limit: 4",
    );
}

#[tokio::test]
async fn a_stream_is_updating_while_it_reshards_and_reads_and_writes_go_on() {
    // The default reshard_duration (30 s), on a frozen clock.
    let emu = emulator(&["stream_activation=0s"]).await;
    emu.freeze_clock();
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 2).await;
    scale(&c, 4).await.unwrap();
    assert_eq!(status(&c).await, ("UPDATING".into(), 2));
    let in_use = "not ACTIVE, instead in state UPDATING";
    assert_refused(scale(&c, 3).await, "ResourceInUseException", in_use);
    assert_refused(
        split(&c, &shard(0), "1000").await,
        "ResourceInUseException",
        in_use,
    );
    assert_refused(
        merge(&c, &shard(0), &shard(1)).await,
        "ResourceInUseException",
        in_use,
    );
    // Writes and reads go on, to and from the old shards.
    let put = c
        .put_record()
        .stream_name("s")
        .partition_key("k")
        .data(Blob::new("x"))
        .send()
        .await
        .unwrap();
    let old = put.shard_id.clone();
    assert!(old == shard(0) || old == shard(1), "{old}");
    let it = c
        .get_shard_iterator()
        .stream_name("s")
        .shard_id(&old)
        .shard_iterator_type(ShardIteratorType::TrimHorizon)
        .send()
        .await
        .unwrap()
        .shard_iterator
        .unwrap();
    let r = c.get_records().shard_iterator(&it).send().await.unwrap();
    assert_eq!(r.records.len(), 1);
    assert!(r.next_shard_iterator.is_some(), "not closed yet");
    let listed = c.list_shards().stream_name("s").send().await.unwrap();
    assert_eq!(listed.shards().len(), 2);
    emu.advance_clock(Duration::from_millis(29_900));
    assert_eq!(status(&c).await, ("UPDATING".into(), 2));
    emu.advance_clock(Duration::from_millis(100));
    assert_eq!(status(&c).await, ("ACTIVE".into(), 4));
    let listed = c.list_shards().stream_name("s").send().await.unwrap();
    assert_eq!(listed.shards().len(), 6);
    // The record put while UPDATING is its shard's last.
    let next = r.next_shard_iterator.unwrap();
    let r = c.get_records().shard_iterator(&next).send().await.unwrap();
    assert!(r.records.is_empty() && r.next_shard_iterator.is_none());
    assert_eq!(r.child_shards.unwrap().len(), 2);
}

#[tokio::test]
async fn update_shard_count_scales_ten_times_per_rolling_day() {
    let (emu, c) = setup(1, &[]).await;
    emu.freeze_clock();
    for i in 0..10 {
        scale(&c, if i % 2 == 0 { 2 } else { 1 }).await.unwrap();
        emu.advance_clock(Duration::from_secs(3600));
    }
    assert_refused(
        scale(&c, 2).await,
        "LimitExceededException",
        "scaled 10 times in the last 24 hours",
    );
    // A target equal to the open count changes nothing and is not counted.
    scale(&c, 1).await.unwrap();
    // The first scaling leaves the window 24 hours after it was made.
    emu.advance_clock(Duration::from_secs(14 * 3600 - 1));
    assert_refused(scale(&c, 2).await, "LimitExceededException", "24 hours");
    emu.advance_clock(Duration::from_secs(1));
    scale(&c, 2).await.unwrap();
}

#[tokio::test]
async fn reshard_call_rates_are_per_account() {
    let (emu, c) = setup(2, &[]).await;
    emu.freeze_clock();
    // UpdateShardCount: 10 calls a second, whatever they ask.
    for _ in 0..10 {
        scale(&c, 2).await.unwrap();
    }
    assert_refused(
        scale(&c, 2).await,
        "LimitExceededException",
        "Rate exceeded for UpdateShardCount",
    );
    // SplitShard and MergeShards: 5 each; refused calls count too.
    for _ in 0..5 {
        assert_refused(
            split(&c, &shard(7), "5").await,
            "ResourceNotFoundException",
            "shard",
        );
    }
    assert_refused(
        split(&c, &shard(7), "5").await,
        "LimitExceededException",
        "Rate exceeded for SplitShard",
    );
    for _ in 0..5 {
        assert_refused(
            merge(&c, &shard(7), &shard(8)).await,
            "ResourceNotFoundException",
            "shard",
        );
    }
    assert_refused(
        merge(&c, &shard(0), &shard(1)).await,
        "LimitExceededException",
        "Rate exceeded for MergeShards",
    );
    emu.advance_clock(Duration::from_millis(200));
    merge(&c, &shard(0), &shard(1)).await.unwrap();
}

/// A partition key whose MD5 hash falls in the lower (or upper) half of the key space.
fn key_in(lower: bool) -> String {
    (0..)
        .map(|i| format!("k{i}"))
        .find(|k| (partition_hash(k) < HALF) == lower)
        .unwrap()
}

#[tokio::test]
async fn child_shards_have_their_own_read_and_write_limits() {
    let (emu, c) = setup(1, &[]).await;
    emu.freeze_clock();
    scale(&c, 2).await.unwrap();
    let (low, high) = (key_in(true), key_in(false));
    // 1,000 records a second per shard: the lower child takes 1,000, then refuses; the upper
    // child still takes records.
    for _ in 0..2 {
        let records: Vec<_> = (0..500)
            .map(|_| {
                PutRecordsRequestEntry::builder()
                    .partition_key(&low)
                    .data(Blob::new("x"))
                    .build()
                    .unwrap()
            })
            .collect();
        let out = c
            .put_records()
            .stream_name("s")
            .set_records(Some(records))
            .send()
            .await
            .unwrap();
        assert_eq!(out.failed_record_count, Some(0));
        assert!(
            out.records
                .iter()
                .all(|r| r.shard_id.as_deref() == Some(&*shard(1)))
        );
    }
    let put = |key: String| {
        c.put_record()
            .stream_name("s")
            .partition_key(key)
            .data(Blob::new("x"))
            .send()
    };
    let e = put(low.clone()).await.unwrap_err();
    assert_error(&e, "ProvisionedThroughputExceededException", &shard(1));
    assert_eq!(put(high.clone()).await.unwrap().shard_id, shard(2));
    // GetRecords: 5 calls a second on each child, counted apart.
    let iterator = |id: String| {
        c.get_shard_iterator()
            .stream_name("s")
            .shard_id(id)
            .shard_iterator_type(ShardIteratorType::Latest)
            .send()
    };
    let it1 = iterator(shard(1)).await.unwrap().shard_iterator.unwrap();
    let it2 = iterator(shard(2)).await.unwrap().shard_iterator.unwrap();
    for _ in 0..5 {
        c.get_records().shard_iterator(&it1).send().await.unwrap();
    }
    let e = c
        .get_records()
        .shard_iterator(&it1)
        .send()
        .await
        .unwrap_err();
    assert_error(&e, "ProvisionedThroughputExceededException", &shard(1));
    c.get_records().shard_iterator(&it2).send().await.unwrap();
}
