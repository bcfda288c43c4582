//! Every documented Kinesis limit at its documented default value, through aws-sdk-kinesis.
//!
//! Time-based limits (5-minute iterators and subscriptions, 24-hour retention, the 5-second
//! penalty and take-over) are checked at their real values by moving the emulator's clock forward
//! instead of waiting. Only `stream_activation` and `consumer_activation`, which are not service
//! values, are shortened.

use crate::common;

use std::time::{Duration, Instant};

use aws_sdk_kinesis::primitives::Blob;
use aws_sdk_kinesis::types::{
    PutRecordsRequestEntry, ShardIteratorType, SubscribeToShardEventStream,
};
use common::*;
use latlab_emulator::Emulator;
use latlab_emulator::kinesis::stats::Api;

const SHARD0: &str = "shardId-000000000000";
const STREAM_ARN: &str = "arn:aws:kinesis:us-east-1:000000000000:stream/s";
const MIB: usize = 1024 * 1024;

async fn defaults() -> (Emulator, aws_sdk_kinesis::Client) {
    let emu = emulator(&["stream_activation=0s", "consumer_activation=0s"]).await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 1).await;
    (emu, c)
}

async fn put(c: &aws_sdk_kinesis::Client, data: Vec<u8>) {
    c.put_record()
        .stream_name("s")
        .partition_key("k")
        .data(Blob::new(data))
        .send()
        .await
        .expect("put");
}

async fn trim_horizon(c: &aws_sdk_kinesis::Client) -> String {
    c.get_shard_iterator()
        .stream_name("s")
        .shard_id(SHARD0)
        .shard_iterator_type(ShardIteratorType::TrimHorizon)
        .send()
        .await
        .expect("iterator")
        .shard_iterator
        .unwrap()
}

/// Records of `size` bytes, written with the clock moved past the write limits instead of waiting
/// for them (1 MiB/s and 1,000 records/s per shard).
async fn fill(emu: &Emulator, c: &aws_sdk_kinesis::Client, count: usize, size: usize) {
    for i in 0..count {
        put(c, vec![(i % 251) as u8; size]).await;
        emu.advance_clock(Duration::from_secs_f64(size as f64 / MIB as f64 + 0.001));
    }
}

async fn get(c: &aws_sdk_kinesis::Client, it: &str) -> Result<(usize, usize, String), String> {
    match c.get_records().shard_iterator(it).send().await {
        Ok(out) => Ok((
            out.records().len(),
            out.records().iter().map(|r| r.data().as_ref().len()).sum(),
            out.next_shard_iterator().unwrap().to_string(),
        )),
        Err(e) => Err(code(&e)),
    }
}

#[tokio::test]
async fn a_read_that_returns_all_a_call_may_is_penalized_five_seconds() {
    // 100 KB records: 104 fit under 10 MiB, the 105th would not, so the call returns 10.4 MB,
    // less than 10 MiB, and is still the per-call maximum.
    let (emu, c) = defaults().await;
    // Only the test's own moves pass time: the margins below (0.5 s) are shorter than a busy
    // machine's pauses.
    emu.freeze_clock();
    fill(&emu, &c, 150, 100_000).await;
    let (records, bytes, next) = get(&c, &trim_horizon(&c).await).await.unwrap();
    assert_eq!(records, 104, "as many 100 KB records as fit in 10 MiB");
    assert!(bytes < 10 * MIB, "{bytes} bytes, short of 10 MiB");
    // The 2 MiB/s budget is repaid after ~4 s (10.4 MB - 2 MiB at 2 MiB/s); at 4.5 s only the
    // penalty refuses, and at 5.1 s it is over.
    let throttled = Err("ProvisionedThroughputExceededException".to_string());
    emu.advance_clock(Duration::from_millis(1000));
    assert_eq!(get(&c, &next).await.map(|r| r.0), throttled, "at 1 s");
    emu.advance_clock(Duration::from_millis(3500));
    assert_eq!(get(&c, &next).await.map(|r| r.0), throttled, "at 4.5 s");
    emu.advance_clock(Duration::from_millis(600));
    assert_eq!(get(&c, &next).await.map(|r| r.0), Ok(46), "after 5 s");

    // A large read that ended because the shard had no more records is not the maximum: only
    // the 2 MiB/s budget holds the next call back (6 MB: ~1.9 s), and no 5 s penalty follows.
    let (emu, c) = defaults().await;
    emu.freeze_clock();
    fill(&emu, &c, 60, 100_000).await;
    emu.advance_clock(Duration::from_secs(2));
    let (records, _, next) = get(&c, &trim_horizon(&c).await).await.unwrap();
    assert_eq!(records, 60);
    emu.advance_clock(Duration::from_millis(1000));
    assert_eq!(
        get(&c, &next).await.map(|r| r.0),
        Err("ProvisionedThroughputExceededException".into()),
        "6 MB overdrew the 2 MiB/s budget"
    );
    emu.advance_clock(Duration::from_millis(1000));
    assert_eq!(
        get(&c, &next).await.map(|r| r.0),
        Ok(0),
        "repaid, no penalty"
    );
    let stats = emu
        .kinesis()
        .stats
        .snapshot()
        .get("s", SHARD0, Api::GetRecords);
    assert_eq!((stats.calls, stats.throttled), (3, 1));
}

#[tokio::test]
async fn get_records_returns_at_most_10000_records() {
    let (emu, c) = defaults().await;
    let batch: Vec<PutRecordsRequestEntry> = (0..500)
        .map(|_| {
            PutRecordsRequestEntry::builder()
                .partition_key("k")
                .data(Blob::new("x"))
                .build()
                .unwrap()
        })
        .collect();
    for i in 0..21 {
        let out = c
            .put_records()
            .stream_name("s")
            .set_records(Some(batch.clone()))
            .send()
            .await
            .unwrap();
        assert_eq!(out.failed_record_count(), Some(0));
        if i % 2 == 1 {
            emu.advance_clock(Duration::from_secs(1));
        }
    }
    emu.advance_clock(Duration::from_secs(1));
    let (records, _, next) = get(&c, &trim_horizon(&c).await).await.unwrap();
    assert_eq!(records, 10_000);
    emu.advance_clock(Duration::from_secs(1));
    assert_eq!(get(&c, &next).await.map(|r| r.0), Ok(500));
}

#[tokio::test]
async fn the_read_rate_is_a_bucket_of_five_calls_refilled_at_five_a_second() {
    let (emu, c) = defaults().await;
    // Only the test's own moves pass time: a token refills in 200 ms, less than a busy
    // machine's pauses.
    emu.freeze_clock();
    let it = trim_horizon(&c).await;
    // After an idle second the bucket is full: five calls pass at once, and five more spread
    // over the next second: ten within about one second, never more than five a second on
    // average over longer spans (docs/emulator.md).
    emu.advance_clock(Duration::from_secs(2));
    let mut passed = 0;
    for _ in 0..6 {
        passed += u32::from(get(&c, &it).await.is_ok());
    }
    assert_eq!(passed, 5, "five at once, the sixth refused");
    for _ in 0..5 {
        emu.advance_clock(Duration::from_millis(200));
        assert!(get(&c, &it).await.is_ok(), "one token every 200 ms");
    }
    assert_eq!(
        get(&c, &it).await.map(|r| r.0),
        Err("ProvisionedThroughputExceededException".into())
    );
    // 6 calls/s for 20 s after an idle second: the full bucket's 5 calls, then 5 a second pass
    // (about 104 of 120); the rest, about one call in six once the bucket is empty, is refused.
    emu.advance_clock(Duration::from_secs(1));
    let (mut ok, mut refused) = (0, 0);
    for _ in 0..120 {
        emu.advance_clock(Duration::from_micros(166_667));
        match get(&c, &it).await {
            Ok(_) => ok += 1,
            Err(_) => refused += 1,
        }
    }
    // 5 + 120 x 5/6 = 105 tokens for 120 calls.
    assert!(
        (14..=16).contains(&refused),
        "6 calls/s for 20 s: {ok} passed, {refused} refused"
    );
}

#[tokio::test]
async fn records_over_one_mib_and_put_records_over_500_or_10_mib_are_refused() {
    let (_emu, c) = defaults().await;
    let e = c
        .put_record()
        .stream_name("s")
        .partition_key("k")
        .data(Blob::new(vec![0u8; MIB + 1]))
        .send()
        .await
        .unwrap_err();
    assert_error(
        &e,
        "ValidationException",
        "Member must have length less than or equal to 1048576",
    );
    let entry = |size: usize| {
        PutRecordsRequestEntry::builder()
            .partition_key("k")
            .data(Blob::new(vec![1u8; size]))
            .build()
            .unwrap()
    };
    let e = c
        .put_records()
        .stream_name("s")
        .set_records(Some(vec![entry(1); 501]))
        .send()
        .await
        .unwrap_err();
    assert_error(
        &e,
        "ValidationException",
        "Member must have length between 1 and 500",
    );
    // Eleven records of just under 1 MiB: over 10 MiB in one request.
    let e = c
        .put_records()
        .stream_name("s")
        .set_records(Some(vec![entry(MIB - 10); 11]))
        .send()
        .await
        .unwrap_err();
    assert_error(
        &e,
        "InvalidArgumentException",
        "over the PutRecords limit of 10485760 bytes",
    );
}

#[tokio::test]
async fn the_account_has_500_shards() {
    let emu = emulator(&["stream_activation=0s"]).await;
    let c = client_no_retry(&emu);
    c.create_stream()
        .stream_name("big")
        .shard_count(500)
        .send()
        .await
        .expect("500 shards fit the account");
    let e = c
        .create_stream()
        .stream_name("one-more")
        .shard_count(1)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "LimitExceededException");
    assert!(message(&e).contains("Limit: 500"), "{}", message(&e));
}

#[tokio::test]
async fn iterators_expire_after_five_minutes() {
    let (emu, c) = defaults().await;
    emu.freeze_clock();
    put(&c, b"a".to_vec()).await;
    let it = trim_horizon(&c).await;
    emu.advance_clock(Duration::from_secs(299));
    let (records, _, _) = get(&c, &it)
        .await
        .expect("a 4m59s-old iterator still works");
    assert_eq!(records, 1);
    emu.advance_clock(Duration::from_secs(2));
    let e = c
        .get_records()
        .shard_iterator(&it)
        .send()
        .await
        .unwrap_err();
    assert_error(
        &e,
        "ExpiredIteratorException",
        "tolerated delay of 300000 milliseconds",
    );
}

#[tokio::test]
async fn records_are_kept_24_hours() {
    let (emu, c) = defaults().await;
    put(&c, b"a".to_vec()).await;
    emu.advance_clock(Duration::from_secs(24 * 3600 - 60));
    put(&c, b"b".to_vec()).await;
    let payloads = |out: aws_sdk_kinesis::operation::get_records::GetRecordsOutput| -> Vec<String> {
        out.records()
            .iter()
            .map(|r| String::from_utf8_lossy(r.data().as_ref()).into_owned())
            .collect()
    };
    let out = c
        .get_records()
        .shard_iterator(trim_horizon(&c).await)
        .send()
        .await
        .unwrap();
    assert_eq!(payloads(out), ["a", "b"], "23h59m: both kept");
    emu.advance_clock(Duration::from_secs(120));
    put(&c, b"c".to_vec()).await;
    let out = c
        .get_records()
        .shard_iterator(trim_horizon(&c).await)
        .send()
        .await
        .unwrap();
    assert_eq!(payloads(out), ["b", "c"], "past 24 h the oldest is gone");
}

#[tokio::test]
async fn subscribe_to_shard_once_a_second_take_over_after_five_seconds() {
    let (emu, c) = defaults().await;
    // Only the test's own moves pass time: the 0.9 s steps must not drift past a second.
    emu.freeze_clock();
    let consumer = register_active(&c, STREAM_ARN, "efo").await;
    let subscribe = || {
        c.subscribe_to_shard()
            .consumer_arn(&consumer)
            .shard_id(SHARD0)
            .starting_position(starting(ShardIteratorType::Latest, None))
            .send()
    };
    let first = subscribe().await.expect("the first subscription");
    // A client retrying every 0.9 s: refused calls do not restart the once-a-second clock, so
    // every second call is admitted (and answered ResourceInUse until 5 s have passed), and at
    // 5.4 s it takes over.
    let mut answers = Vec::new();
    for _ in 0..6 {
        emu.advance_clock(Duration::from_millis(900));
        answers.push(match subscribe().await {
            Ok(_) => "taken over".to_string(),
            Err(e) => code(&e),
        });
    }
    assert_eq!(
        answers,
        [
            "LimitExceededException",
            "ResourceInUseException",
            "LimitExceededException",
            "ResourceInUseException",
            "LimitExceededException",
            "taken over",
        ]
    );
    let mut first = first;
    let ended = loop {
        match tokio::time::timeout(Duration::from_secs(5), first.event_stream.recv()).await {
            Ok(Ok(Some(_))) => continue,
            Ok(Ok(None)) => break "clean end".to_string(),
            Ok(Err(e)) => {
                break format!("{:?}", e.as_service_error())
                    .split('(')
                    .nth(1)
                    .unwrap_or("")
                    .to_string();
            }
            Err(_) => break "still open".to_string(),
        }
    };
    assert!(
        ended.starts_with("ResourceInUseException"),
        "the old subscription ends with ResourceInUse: {ended}"
    );
    let stats = emu
        .kinesis()
        .stats
        .snapshot()
        .get("s", SHARD0, Api::SubscribeToShard);
    assert_eq!((stats.calls, stats.throttled), (7, 3));
}

#[tokio::test]
async fn a_subscription_lasts_five_minutes() {
    let (emu, c) = defaults().await;
    let consumer = register_active(&c, STREAM_ARN, "efo").await;
    let mut out = c
        .subscribe_to_shard()
        .consumer_arn(&consumer)
        .shard_id(SHARD0)
        .starting_position(starting(ShardIteratorType::Latest, None))
        .send()
        .await
        .unwrap();
    emu.advance_clock(Duration::from_secs(290));
    put(&c, b"at 4m50s".to_vec()).await;
    let mut got = Vec::new();
    while got.is_empty() {
        match tokio::time::timeout(Duration::from_secs(10), out.event_stream.recv()).await {
            Ok(Ok(Some(SubscribeToShardEventStream::SubscribeToShardEvent(ev)))) => got.extend(
                ev.records()
                    .iter()
                    .map(|r| String::from_utf8_lossy(r.data().as_ref()).into_owned()),
            ),
            other => panic!("the subscription is open at 4m50s: {other:?}"),
        }
    }
    assert_eq!(got, ["at 4m50s"]);
    emu.advance_clock(Duration::from_secs(11));
    let end = loop {
        match tokio::time::timeout(Duration::from_secs(10), out.event_stream.recv()).await {
            Ok(Ok(Some(_))) => continue,
            Ok(Ok(None)) => break Ok(()),
            other => break Err(format!("{other:?}")),
        }
    };
    assert_eq!(end, Ok(()), "past 5 minutes the stream ends cleanly");
}

#[tokio::test]
async fn the_fan_out_budget_belongs_to_the_consumer_and_shard() {
    // 2 MB/s per consumer per shard: subscribing again must not refill it. Six subscriptions a
    // little over a second apart, each read for a second, over 40 MB waiting: the consumer gets
    // what 2 MiB/s allows over the whole time (plus the bucket's one second and one event of
    // debt), not a fresh burst per subscription.
    let emu = emulator(&[
        "stream_activation=0s",
        "consumer_activation=0s",
        "write_bytes_per_sec=64MiB",
    ])
    .await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 1).await;
    for i in 0..80 {
        put(&c, vec![(i % 251) as u8; 500_000]).await;
    }
    let consumer = register_active(&c, STREAM_ARN, "efo").await;
    let started = Instant::now();
    let mut bytes = 0usize;
    // Time with a subscription open: a refused resubscription (the emulator has not yet seen
    // the last one close) waits outside it, with the budget's one-second bucket full.
    let mut subscribed = Duration::ZERO;
    let mut continuation: Option<String> = None;
    for _ in 0..6 {
        let pos = match &continuation {
            Some(s) => starting(ShardIteratorType::AfterSequenceNumber, Some(s.clone())),
            None => starting(ShardIteratorType::TrimHorizon, None),
        };
        // The dropped subscription ends as soon as the emulator notices the closed connection.
        let mut tries = 0;
        let mut out = loop {
            match c
                .subscribe_to_shard()
                .consumer_arn(&consumer)
                .shard_id(SHARD0)
                .starting_position(pos.clone())
                .send()
                .await
            {
                Ok(out) => break out,
                Err(e) if tries < 50 => {
                    tries += 1;
                    eprintln!("subscribe: {}", code(&e));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("subscribe: {e:?}"),
            }
        };
        let opened = Instant::now();
        let until = tokio::time::Instant::now() + Duration::from_millis(1000);
        while let Ok(Ok(Some(ev))) = tokio::time::timeout_at(until, out.event_stream.recv()).await {
            if let SubscribeToShardEventStream::SubscribeToShardEvent(ev) = ev {
                bytes += ev
                    .records()
                    .iter()
                    .map(|r| r.data().as_ref().len())
                    .sum::<usize>();
                continuation = Some(ev.continuation_sequence_number().to_string());
            }
        }
        drop(out);
        subscribed += opened.elapsed();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let subscribed = subscribed.as_secs_f64();
    let allowed = 2.0 * MIB as f64 * (elapsed + 2.0);
    eprintln!(
        "fan-out: {:.1} MB in {elapsed:.1} s over 6 subscriptions open {subscribed:.1} s ({:.1} MB allowed)",
        bytes as f64 / 1e6,
        allowed / 1e6
    );
    assert!(
        (bytes as f64) <= allowed,
        "{bytes} bytes in {elapsed:.1} s: more than 2 MiB/s"
    );
    // While subscribed, the budget is used: at least 2 MiB/s of the time open, less a second
    // for the first event and one for the last's debt.
    assert!(
        bytes as f64 >= 2.0 * MIB as f64 * (subscribed - 2.0),
        "{bytes} bytes over {subscribed:.1} s subscribed: the budget was not used"
    );
}
