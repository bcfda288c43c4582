//! What latlab reports of the SDK's own work, checked against the SDK: the retry quota latlab
//! mirrors against the SDK's token bucket, and attempts counted under their operation's name.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_kinesis::primitives::Blob;
use aws_sdk_kinesis::types::ShardIteratorType;
use common::*;
use latlab::aws::{Clients, QuotaPartition, RetrySettings, Target};
use latlab::metrics::SdkStats;
use latlab_core::units::Dur;
use latlab_emulator::kinesis::stats::Api;

const SHARD0: &str = "shardId-000000000000";
const SHARD1: &str = "shardId-000000000001";

async fn iterator(c: &aws_sdk_kinesis::Client, shard: &str) -> String {
    c.get_shard_iterator()
        .stream_name("s")
        .shard_id(shard)
        .shard_iterator_type(ShardIteratorType::TrimHorizon)
        .send()
        .await
        .unwrap()
        .shard_iterator
        .unwrap()
}

#[tokio::test]
async fn the_quota_left_follows_the_sdks_own_token_bucket() {
    // Shard 0 refuses every read for an hour after one 10 MiB read; shard 1 answers.
    let emu = emulator(&[
        "stream_activation=0s",
        "write_bytes_per_sec=64MiB",
        "large_read_penalty=1h",
    ])
    .await;
    let admin = client_no_retry(&emu);
    create_stream(&admin, "s", 2).await;
    for _ in 0..11 {
        admin
            .put_record()
            .stream_name("s")
            .partition_key("k")
            .explicit_hash_key("0")
            .data(Blob::new(vec![1u8; 1024 * 1024 - 1]))
            .send()
            .await
            .unwrap();
    }
    let it0 = iterator(&admin, SHARD0).await;
    admin
        .get_records()
        .shard_iterator(&it0)
        .send()
        .await
        .unwrap();

    let clients = Clients::connect(
        &Target::Emulator {
            url: emu.endpoint_url(),
        },
        Instant::now(),
    )
    .await
    .unwrap();
    let quota = QuotaPartition::new("quota-under-test");
    let stats = Arc::new(SdkStats::default());
    let retry = RetrySettings {
        max_attempts: 2,
        initial_backoff: Dur(Duration::from_millis(1)),
        max_backoff: Dur(Duration::from_millis(2)),
        ..RetrySettings::default()
    };
    let c = latlab::labs::kinesis::client::client(&clients, &retry, &quota, stats.clone());
    assert_eq!(quota.tokens_left(), 500);
    // Every call is throttled twice: its retry takes 5 tokens, which never come back.
    for i in 1..=100u64 {
        let e = c
            .get_records()
            .shard_iterator(&it0)
            .send()
            .await
            .unwrap_err();
        assert_eq!(code(&e), "ProvisionedThroughputExceededException");
        let left = 500 - 5 * i;
        assert_eq!(quota.tokens_left(), left, "after {i} throttled calls");
        assert_eq!(
            quota.sdk_bucket_is_empty(),
            left == 0,
            "the SDK's bucket is empty exactly when latlab's count says so ({left} left)"
        );
    }
    // With the quota spent the SDK no longer retries: one attempt, one refusal.
    let attempts = stats.counters.lock().attempts;
    c.get_records()
        .shard_iterator(&it0)
        .send()
        .await
        .unwrap_err();
    let counters = stats.counters.lock().clone();
    assert_eq!(counters.attempts, attempts + 1, "no retry without quota");
    assert_eq!(counters.quota_refusals, 1);
    assert_eq!(
        emu.kinesis()
            .stats
            .snapshot()
            .get("s", SHARD0, Api::GetRecords)
            .calls,
        1 + 200 + 1,
        "the emulator saw each attempt latlab counted"
    );
    // A success gives back the last retry's tokens; a success at the first try adds one.
    let it1 = iterator(&admin, SHARD1).await;
    let out = c.get_records().shard_iterator(&it1).send().await.unwrap();
    assert_eq!(quota.tokens_left(), 5);
    assert!(!quota.sdk_bucket_is_empty());
    c.get_records()
        .shard_iterator(out.next_shard_iterator().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(quota.tokens_left(), 6);
    assert!(!quota.sdk_bucket_is_empty());
}

#[tokio::test]
async fn attempts_are_counted_under_their_operation() {
    let emu = emulator(&["stream_activation=0s"]).await;
    let admin = client_no_retry(&emu);
    create_stream(&admin, "s", 1).await;
    let start = Instant::now();
    let clients = Clients::connect(
        &Target::Emulator {
            url: emu.endpoint_url(),
        },
        start,
    )
    .await
    .unwrap();
    let stats = Arc::new(SdkStats::default());
    let c = latlab::labs::kinesis::client::client(
        &clients,
        &RetrySettings::default(),
        &QuotaPartition::new("ops"),
        stats.clone(),
    );
    // Three iterators and two reads: the GetRecords gauge counts the two reads only.
    let mut it = String::new();
    for _ in 0..3 {
        it = iterator(&c, SHARD0).await;
    }
    for _ in 0..2 {
        it = c
            .get_records()
            .shard_iterator(&it)
            .send()
            .await
            .unwrap()
            .next_shard_iterator
            .unwrap();
    }
    let sec = start.elapsed().as_secs();
    let ops = stats.counters.lock().operations.clone();
    assert_eq!(ops["GetShardIterator"].calls, 3, "{ops:?}");
    assert_eq!(ops["GetRecords"].attempts, 2, "{ops:?}");
    assert!(
        !ops.contains_key("") && !ops.contains_key("unknown"),
        "{ops:?}"
    );
    let per_sec: u32 = stats
        .attempts_of("GetRecords", sec, (sec + 1) as usize)
        .iter()
        .sum();
    assert_eq!(per_sec, 2, "GetShardIterator is not counted as GetRecords");
}
