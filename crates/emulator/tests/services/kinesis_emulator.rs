//! The Kinesis emulator through the real aws-sdk-kinesis over HTTP: every operation, the errors a
//! client sees, and each per-shard limit.

use crate::common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use aws_sdk_kinesis::primitives::{Blob, DateTime};
use aws_sdk_kinesis::types::{PutRecordsRequestEntry, ShardIteratorType};
use common::*;
use latlab_emulator::kinesis::stats::Api;

pub(crate) const SHARD0: &str = "shardId-000000000000";

async fn iterator(
    c: &aws_sdk_kinesis::Client,
    stream: &str,
    kind: ShardIteratorType,
    seq: Option<&str>,
) -> String {
    c.get_shard_iterator()
        .stream_name(stream)
        .shard_id(SHARD0)
        .shard_iterator_type(kind)
        .set_starting_sequence_number(seq.map(str::to_string))
        .send()
        .await
        .expect("iterator")
        .shard_iterator
        .unwrap()
}

fn payloads(out: &aws_sdk_kinesis::operation::get_records::GetRecordsOutput) -> Vec<String> {
    out.records()
        .iter()
        .map(|r| String::from_utf8(r.data().as_ref().to_vec()).unwrap())
        .collect()
}

#[tokio::test]
async fn stream_lifecycle_listing_and_tags() {
    let emu = emulator(&["stream_activation=300ms"]).await;
    let c = client_no_retry(&emu);
    c.create_stream()
        .stream_name("orders")
        .shard_count(3)
        .send()
        .await
        .unwrap();
    let d = c
        .describe_stream_summary()
        .stream_name("orders")
        .send()
        .await
        .unwrap();
    let s = d.stream_description_summary().unwrap();
    assert_eq!(s.stream_status().as_str(), "CREATING");
    assert_eq!(s.open_shard_count(), 3);
    assert_eq!(
        s.stream_arn(),
        "arn:aws:kinesis:us-east-1:000000000000:stream/orders"
    );
    // Writes to a stream that is not ACTIVE yet are refused.
    let e = c
        .put_record()
        .stream_name("orders")
        .partition_key("k")
        .data(Blob::new("x"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceNotFoundException");
    tokio::time::sleep(Duration::from_millis(350)).await;
    let d = c
        .describe_stream_summary()
        .stream_arn(s.stream_arn())
        .send()
        .await
        .unwrap();
    assert_eq!(
        d.stream_description_summary()
            .unwrap()
            .stream_status()
            .as_str(),
        "ACTIVE"
    );

    let e = c
        .create_stream()
        .stream_name("orders")
        .shard_count(1)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceInUseException");
    for name in ["a1", "a2", "a3"] {
        c.create_stream()
            .stream_name(name)
            .shard_count(1)
            .send()
            .await
            .unwrap();
    }
    let page = c.list_streams().limit(2).send().await.unwrap();
    assert_eq!(page.stream_names(), ["a1", "a2"]);
    assert!(page.has_more_streams());
    let rest = c
        .list_streams()
        .next_token(page.next_token().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(rest.stream_names(), ["a3", "orders"]);
    assert!(!rest.has_more_streams());
    assert_eq!(rest.stream_summaries().len(), 2);

    let shards = c
        .list_shards()
        .stream_name("orders")
        .max_results(2)
        .send()
        .await
        .unwrap();
    assert_eq!(shards.shards().len(), 2);
    let more = c
        .list_shards()
        .next_token(shards.next_token().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(more.shards()[0].shard_id(), "shardId-000000000002");
    assert!(more.next_token().is_none());
    assert_eq!(
        more.shards()[0].hash_key_range().unwrap().ending_hash_key(),
        u128::MAX.to_string()
    );
    assert_eq!(
        shards.shards()[0]
            .hash_key_range()
            .unwrap()
            .starting_hash_key(),
        "0"
    );

    c.add_tags_to_stream()
        .stream_name("orders")
        .tags("owner", "latlab")
        .send()
        .await
        .unwrap();
    let tags = c
        .list_tags_for_stream()
        .stream_name("orders")
        .send()
        .await
        .unwrap();
    assert_eq!(tags.tags()[0].key(), "owner");
    assert_eq!(tags.tags()[0].value(), Some("latlab"));

    c.delete_stream()
        .stream_name("orders")
        .send()
        .await
        .unwrap();
    let e = c
        .describe_stream_summary()
        .stream_name("orders")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceNotFoundException");
    assert_eq!(
        message(&e),
        "Stream orders under account 000000000000 not found."
    );
}

#[tokio::test]
async fn records_are_put_and_read_from_every_iterator_type() {
    let emu = emulator(&[
        "stream_activation=0s",
        "get_shard_iterator_calls_per_sec=100",
        "get_records_calls_per_sec=100",
    ])
    .await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 1).await;
    let latest = iterator(&c, "s", ShardIteratorType::Latest, None).await;
    let mut seqs = Vec::new();
    for i in 0..3 {
        let out = c
            .put_record()
            .stream_name("s")
            .partition_key("pk")
            .data(Blob::new(format!("r{i}")))
            .send()
            .await
            .unwrap();
        assert_eq!(out.shard_id(), SHARD0);
        seqs.push(out.sequence_number().to_string());
    }
    let batch = c
        .put_records()
        .stream_name("s")
        .set_records(Some(
            (3..6)
                .map(|i| {
                    PutRecordsRequestEntry::builder()
                        .partition_key("pk")
                        .data(Blob::new(format!("r{i}")))
                        .build()
                        .unwrap()
                })
                .collect(),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(batch.failed_record_count(), Some(0));
    seqs.extend(
        batch
            .records()
            .iter()
            .map(|r| r.sequence_number().unwrap().to_string()),
    );
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "sequence numbers increase: {seqs:?}"
    );

    let all: Vec<String> = (0..6).map(|i| format!("r{i}")).collect();
    let out = c.get_records().shard_iterator(latest).send().await.unwrap();
    assert_eq!(
        payloads(&out),
        all,
        "LATEST taken before the puts sees all of them"
    );
    assert_eq!(out.millis_behind_latest(), Some(0));
    let next = out.next_shard_iterator().unwrap().to_string();
    let empty = c.get_records().shard_iterator(next).send().await.unwrap();
    assert!(empty.records().is_empty());

    let th = iterator(&c, "s", ShardIteratorType::TrimHorizon, None).await;
    let out = c
        .get_records()
        .shard_iterator(th)
        .limit(2)
        .send()
        .await
        .unwrap();
    assert_eq!(payloads(&out), all[..2]);
    assert!(out.millis_behind_latest().unwrap() >= 0);
    let out = c
        .get_records()
        .shard_iterator(out.next_shard_iterator().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(payloads(&out), all[2..]);

    let at = iterator(&c, "s", ShardIteratorType::AtSequenceNumber, Some(&seqs[2])).await;
    assert_eq!(
        payloads(&c.get_records().shard_iterator(at).send().await.unwrap()),
        all[2..]
    );
    let after = iterator(
        &c,
        "s",
        ShardIteratorType::AfterSequenceNumber,
        Some(&seqs[2]),
    )
    .await;
    assert_eq!(
        payloads(&c.get_records().shard_iterator(after).send().await.unwrap()),
        all[3..]
    );

    let r = c
        .get_records()
        .shard_iterator(iterator(&c, "s", ShardIteratorType::TrimHorizon, None).await)
        .send()
        .await
        .unwrap();
    let t3 = r.records()[3]
        .approximate_arrival_timestamp()
        .unwrap()
        .as_secs_f64();
    let ts = c
        .get_shard_iterator()
        .stream_name("s")
        .shard_id(SHARD0)
        .shard_iterator_type(ShardIteratorType::AtTimestamp)
        .timestamp(DateTime::from_secs_f64(t3))
        .send()
        .await
        .unwrap();
    let got = payloads(
        &c.get_records()
            .shard_iterator(ts.shard_iterator().unwrap())
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(
        got.first().map(String::as_str),
        Some("r3"),
        "AT_TIMESTAMP starts at the record arrived then: {got:?}"
    );
    let now = DateTime::from(std::time::SystemTime::now()).as_secs_f64();
    assert!(
        (now - t3).abs() < 5.0,
        "ApproximateArrivalTimestamp is wall-clock time"
    );
}

#[tokio::test]
async fn bad_requests_get_the_real_error_types_naming_the_field() {
    let emu = emulator(&["stream_activation=0s"]).await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 1).await;

    let (status, body) = raw_kinesis(&emu, "Kinesis_20131202.FlyToTheMoon", "{}").await;
    assert_eq!(status, 400);
    assert_eq!(body["__type"], "UnknownOperationException");
    assert!(body["message"].as_str().unwrap().contains("FlyToTheMoon"));

    let (status, body) = raw_kinesis(&emu, "Kinesis_20131202.PutRecord", "{\"StreamName\": ").await;
    assert_eq!(
        (status, body["__type"].as_str()),
        (400, Some("SerializationException"))
    );

    let (_, body) = raw_kinesis(
        &emu,
        "Kinesis_20131202.CreateStream",
        r#"{"StreamName":"x","ShardCount":"two"}"#,
    )
    .await;
    assert_eq!(body["__type"], "SerializationException");
    assert_eq!(
        body["message"],
        "ShardCount must be a number, but the request has a string"
    );

    let (_, body) = raw_kinesis(
        &emu,
        "Kinesis_20131202.CreateStream",
        r#"{"StreamName":"x","ShardCount":0}"#,
    )
    .await;
    assert_eq!(body["__type"], "ValidationException");
    assert_eq!(
        body["message"],
        "1 validation error detected: Value '0' at 'shardCount' failed to satisfy constraint: Member must have value greater than or equal to 1"
    );
    let (_, body) = raw_kinesis(
        &emu,
        "Kinesis_20131202.CreateStream",
        r#"{"StreamName":"bad name!","ShardCount":1}"#,
    )
    .await;
    assert_eq!(body["__type"], "ValidationException");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("at 'streamName'")
    );

    let (_, body) = raw_kinesis(
        &emu,
        "Kinesis_20131202.PutRecord",
        r#"{"StreamName":"s","Data":"eA=="}"#,
    )
    .await;
    assert_eq!(body["__type"], "ValidationException");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("'partitionKey' failed to satisfy constraint: Member must not be null")
    );

    let (_, body) = raw_kinesis(
        &emu,
        "Kinesis_20131202.PutRecord",
        r#"{"StreamName":"s","Data":"***","PartitionKey":"k"}"#,
    )
    .await;
    assert_eq!(body["__type"], "SerializationException");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("Data is not valid base64")
    );

    let (_, body) = raw_kinesis(
        &emu,
        "Kinesis_20131202.PutRecords",
        r#"{"StreamName":"s","Records":[{"Data":"eA=="}]}"#,
    )
    .await;
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("Records[0].PartitionKey"),
        "{body}"
    );

    let (_, body) = raw_kinesis(
        &emu,
        "Kinesis_20131202.GetShardIterator",
        r#"{"StreamName":"s","ShardId":"shardId-000000000000","ShardIteratorType":"SIDEWAYS"}"#,
    )
    .await;
    assert_eq!(body["__type"], "ValidationException");
    assert!(body["message"].as_str().unwrap().contains("TRIM_HORIZON"));

    let e = c
        .get_records()
        .shard_iterator("not-an-iterator")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidArgumentException");
    let e = c
        .get_shard_iterator()
        .stream_name("s")
        .shard_id("shardId-000000000009")
        .shard_iterator_type(ShardIteratorType::Latest)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceNotFoundException");
    assert!(message(&e).contains("shardId-000000000009"));
    let e = c
        .get_shard_iterator()
        .stream_name("s")
        .shard_id(SHARD0)
        .shard_iterator_type(ShardIteratorType::AtSequenceNumber)
        .starting_sequence_number("123")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidArgumentException");
    assert!(message(&e).contains("StartingSequenceNumber 123"));
    let e = c
        .put_record()
        .stream_name("nope")
        .partition_key("k")
        .data(Blob::new("x"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceNotFoundException");
    let big = vec![0u8; 1024 * 1024 + 1];
    let e = c
        .put_record()
        .stream_name("s")
        .partition_key("k")
        .data(Blob::new(big))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ValidationException");

    // Garbage of every shape gets an answer, never a dropped connection.
    for body in [
        "",
        "null",
        "[]",
        "42",
        "{\"Records\": 7}",
        "\u{0}\u{1}",
        "{\"ShardIterator\": {}}",
    ] {
        for op in [
            "PutRecords",
            "GetRecords",
            "SubscribeToShard",
            "RegisterStreamConsumer",
            "ListShards",
        ] {
            let (status, v) = raw_kinesis(&emu, &format!("Kinesis_20131202.{op}"), body).await;
            assert_eq!(status, 400, "{op} {body:?}: {v}");
            assert!(v["__type"].is_string(), "{op} {body:?}: {v}");
        }
    }
    // Without x-amz-target a request is S3's: an unknown bucket is NoSuchBucket, in XML.
    let (status, body) = raw(&emu, "GET", "/favicon.ico", &[], b"").await;
    assert_eq!(status, 404);
    assert!(body.contains("<Code>NoSuchBucket</Code>"), "{body}");
}

#[tokio::test]
async fn get_records_calls_beyond_five_per_second_are_throttled() {
    let emu = emulator(&["stream_activation=0s"]).await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 1).await;
    let mut it = iterator(&c, "s", ShardIteratorType::TrimHorizon, None).await;
    let (mut ok, mut throttled) = (0, 0);
    for _ in 0..20 {
        match c.get_records().shard_iterator(&it).send().await {
            Ok(out) => {
                ok += 1;
                it = out.next_shard_iterator().unwrap().to_string();
            }
            Err(e) => {
                assert_eq!(code(&e), "ProvisionedThroughputExceededException");
                assert_eq!(
                    message(&e),
                    "Rate exceeded for shard shardId-000000000000 in stream s under account 000000000000."
                );
                assert!(
                    e.as_service_error()
                        .unwrap()
                        .is_provisioned_throughput_exceeded_exception()
                );
                throttled += 1;
            }
        }
    }
    assert_eq!(
        (ok, throttled),
        (5, 15),
        "20 back-to-back calls: 5 pass, 15 throttled"
    );
    let stats = emu
        .kinesis()
        .stats
        .snapshot()
        .get("s", SHARD0, Api::GetRecords);
    assert_eq!((stats.calls, stats.throttled), (20, 15));

    tokio::time::sleep(Duration::from_millis(1100)).await;
    for _ in 0..5 {
        let out = c
            .get_records()
            .shard_iterator(&it)
            .send()
            .await
            .expect("spread calls pass");
        it = out.next_shard_iterator().unwrap().to_string();
        tokio::time::sleep(Duration::from_millis(210)).await;
    }
    let stats = emu
        .kinesis()
        .stats
        .snapshot()
        .get("s", SHARD0, Api::GetRecords);
    assert_eq!(
        (stats.calls, stats.throttled),
        (25, 15),
        "5 calls spread over a second all pass"
    );

    // GetShardIterator has its own 5 calls/s.
    let results: Vec<bool> = futures_util::future::join_all((0..10).map(|_| {
        c.get_shard_iterator()
            .stream_name("s")
            .shard_id(SHARD0)
            .shard_iterator_type(ShardIteratorType::Latest)
            .send()
    }))
    .await
    .into_iter()
    .map(|r| r.is_ok())
    .collect();
    assert_eq!(results.iter().filter(|ok| **ok).count(), 5);
    assert_eq!(
        emu.kinesis()
            .stats
            .snapshot()
            .get("s", SHARD0, Api::GetShardIterator)
            .throttled,
        5
    );
}

#[tokio::test]
async fn the_sdk_retries_throttles_with_back_off() {
    let emu = emulator(&["stream_activation=0s"]).await;
    let c = client(&emu);
    create_stream(&c, "s", 1).await;
    let it = iterator(&c, "s", ShardIteratorType::TrimHorizon, None).await;
    // Use up the shard's five calls, then one more call must wait for the SDK's back-off.
    let plain = client_no_retry(&emu);
    for _ in 0..5 {
        plain
            .get_records()
            .shard_iterator(&it)
            .send()
            .await
            .unwrap();
    }
    let t = Instant::now();
    let result = c.get_records().shard_iterator(&it).send().await;
    let stats = emu
        .kinesis()
        .stats
        .snapshot()
        .get("s", SHARD0, Api::GetRecords);
    // The emulator saw the call's every attempt: more than one means the SDK retried.
    let attempts = stats.calls - 5;
    assert!(
        attempts >= 2,
        "the throttled call was retried: {attempts} attempt(s)"
    );
    match result {
        Ok(_) => {
            assert_eq!(stats.throttled, attempts - 1, "all but the last throttled");
            assert!(
                t.elapsed() > Duration::from_millis(5),
                "a retried call took back-off time"
            );
        }
        Err(e) => {
            assert_eq!(code(&e), "ProvisionedThroughputExceededException");
            assert_eq!(
                (attempts, stats.throttled),
                (3, 3),
                "every attempt throttled"
            );
        }
    }
}

#[tokio::test]
async fn writes_beyond_the_shard_limits_fail_per_record() {
    let emu = emulator(&["stream_activation=0s"]).await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 1).await;
    let entries: Vec<PutRecordsRequestEntry> = (0..500)
        .map(|i| {
            PutRecordsRequestEntry::builder()
                .partition_key("k")
                .data(Blob::new(format!("{i}")))
                .build()
                .unwrap()
        })
        .collect();
    let mut failed = 0;
    for _ in 0..3 {
        let out = c
            .put_records()
            .stream_name("s")
            .set_records(Some(entries.clone()))
            .send()
            .await
            .unwrap();
        failed += out.failed_record_count().unwrap();
        for r in out.records().iter().filter(|r| r.error_code().is_some()) {
            assert_eq!(
                r.error_code(),
                Some("ProvisionedThroughputExceededException")
            );
            assert!(
                r.error_message()
                    .unwrap()
                    .starts_with("Rate exceeded for shard shardId-000000000000 in stream s")
            );
            assert!(r.sequence_number().is_none());
        }
    }
    assert!(
        (400..=500).contains(&failed),
        "1,500 records at once into a 1,000 records/s shard: {failed} refused"
    );
    assert_eq!(
        emu.kinesis()
            .stats
            .snapshot()
            .get("s", SHARD0, Api::PutRecords)
            .throttled,
        failed as u64
    );

    // 1 MB/s: two 600 KB records back to back, the second is refused.
    let big = Blob::new(vec![7u8; 600_000]);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    c.put_record()
        .stream_name("s")
        .partition_key("k")
        .data(big.clone())
        .send()
        .await
        .unwrap();
    let e = c
        .put_record()
        .stream_name("s")
        .partition_key("k")
        .data(big)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ProvisionedThroughputExceededException");
}

#[tokio::test]
async fn a_ten_megabyte_read_throttles_the_next_five_seconds() {
    let emu = emulator(&["stream_activation=0s", "write_bytes_per_sec=64MiB"]).await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 1).await;
    let data = Blob::new(vec![1u8; 1024 * 1024 - 1]);
    for _ in 0..11 {
        c.put_record()
            .stream_name("s")
            .partition_key("k")
            .data(data.clone())
            .send()
            .await
            .unwrap();
    }
    let it = iterator(&c, "s", ShardIteratorType::TrimHorizon, None).await;
    // The penalty runs from when the emulator answered, a moment after this instant.
    let t0 = Instant::now();
    let first = c.get_records().shard_iterator(&it).send().await.unwrap();
    eprintln!(
        "a 10 MiB GetRecords answer took {:?} to arrive and parse",
        t0.elapsed()
    );
    assert_eq!(first.records().len(), 10, "one call returns at most 10 MiB");
    let next = first.next_shard_iterator().unwrap().to_string();
    // At 4.5 s the 2 MB/s budget has recovered (10 MiB - 2 MiB at 2 MiB/s = 4 s): only the
    // 5-second penalty still refuses the call.
    for at in [Duration::from_millis(1000), Duration::from_millis(4500)] {
        tokio::time::sleep_until((t0 + at).into()).await;
        let e = c
            .get_records()
            .shard_iterator(&next)
            .send()
            .await
            .unwrap_err();
        assert_eq!(
            code(&e),
            "ProvisionedThroughputExceededException",
            "at {at:?}"
        );
    }
    tokio::time::sleep_until((t0 + Duration::from_millis(5300)).into()).await;
    let out = c
        .get_records()
        .shard_iterator(&next)
        .send()
        .await
        .expect("the penalty is over after 5 s");
    assert_eq!(out.records().len(), 1);
}

#[tokio::test]
async fn iterators_expire() {
    let emu = emulator(&["stream_activation=0s", "iterator_expiry=1s"]).await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 1).await;
    let it = iterator(&c, "s", ShardIteratorType::TrimHorizon, None).await;
    let out = c.get_records().shard_iterator(&it).send().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let e = c
        .get_records()
        .shard_iterator(&it)
        .send()
        .await
        .unwrap_err();
    assert_error(
        &e,
        "ExpiredIteratorException",
        "tolerated delay of 1000 milliseconds",
    );
    assert!(
        e.as_service_error()
            .unwrap()
            .is_expired_iterator_exception()
    );
    // NextShardIterator is a new iterator: it was created when that call answered.
    let e = c
        .get_records()
        .shard_iterator(out.next_shard_iterator().unwrap())
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ExpiredIteratorException");
}

#[tokio::test]
async fn trimmed_records_are_gone_and_readers_continue_from_the_horizon() {
    let emu = emulator(&["stream_activation=0s", "stream_max_bytes=10KB"]).await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 1).await;
    let th = iterator(&c, "s", ShardIteratorType::TrimHorizon, None).await;
    for i in 0..30 {
        c.put_record()
            .stream_name("s")
            .partition_key("k")
            .data(Blob::new(format!("{i:03}").repeat(333)))
            .send()
            .await
            .unwrap();
    }
    let out = c.get_records().shard_iterator(th).send().await.unwrap();
    let first: BTreeSet<String> = payloads(&out).iter().map(|p| p[..3].to_string()).collect();
    assert!(
        out.records().len() <= 10,
        "a 10 KB stream keeps about ten 1 KB records"
    );
    assert_eq!(first.last().map(String::as_str), Some("029"));
    assert!(!first.contains("000"), "the oldest records were trimmed");
}

#[tokio::test]
async fn stats_are_served_over_http() {
    let emu = emulator(&["stream_activation=0s"]).await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 1).await;
    c.put_record()
        .stream_name("s")
        .partition_key("k")
        .data(Blob::new("x"))
        .send()
        .await
        .unwrap();
    let (status, body) = raw(&emu, "GET", "/_latlab/stats", &[], b"").await;
    assert_eq!(status, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let row = &v["shards"][0];
    assert_eq!(
        (
            row["stream"].as_str(),
            row["shard"].as_str(),
            row["api"].as_str()
        ),
        (Some("s"), Some(SHARD0), Some("PutRecord"))
    );
    assert_eq!(
        (
            row["calls"].as_u64(),
            row["throttled"].as_u64(),
            row["records"].as_u64()
        ),
        (Some(1), Some(0), Some(1))
    );
}
