//! A DynamoDB table's changes: its stream through DynamoDB Streams' operations (each change with
//! its images, two readers a shard, iterators that expire) and its Kinesis data stream
//! destination.

use crate::common::*;

use crate::dynamodb_emulator::{n, s, table};

/// Reads every readable record of a stream's shards from TRIM_HORIZON, through the wire.
async fn stream_records(emu: &latlab_emulator::Emulator, arn: &str) -> Vec<serde_json::Value> {
    let (status, d) = raw_dynamo(
        emu,
        "DynamoDBStreams_20120810.DescribeStream",
        &format!(r#"{{"StreamArn":"{arn}"}}"#),
    )
    .await;
    assert_eq!(status, 200, "{d}");
    let mut records = Vec::new();
    for shard in d["StreamDescription"]["Shards"].as_array().unwrap() {
        let id = shard["ShardId"].as_str().unwrap();
        let (_, it) = raw_dynamo(
            emu,
            "DynamoDBStreams_20120810.GetShardIterator",
            &format!(
                r#"{{"StreamArn":"{arn}","ShardId":"{id}","ShardIteratorType":"TRIM_HORIZON"}}"#
            ),
        )
        .await;
        let token = it["ShardIterator"].as_str().unwrap().to_string();
        let (status, got) = raw_dynamo(
            emu,
            "DynamoDBStreams_20120810.GetRecords",
            &format!(r#"{{"ShardIterator":"{token}"}}"#),
        )
        .await;
        assert_eq!(status, 200, "{got}");
        records.extend(got["Records"].as_array().unwrap().iter().cloned());
    }
    records
}

/// One DynamoDB or DynamoDB Streams call by hand (AWS JSON 1.0): (status, body).
async fn raw_dynamo(
    emu: &latlab_emulator::Emulator,
    target: &str,
    body: &str,
) -> (u16, serde_json::Value) {
    let (status, text) = raw(
        emu,
        "POST",
        "/",
        &[
            ("Content-Type", "application/x-amz-json-1.0"),
            ("X-Amz-Target", target),
        ],
        body.as_bytes(),
    )
    .await;
    (
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tables_stream_carries_each_change_with_its_images_and_refuses_a_third_reader() {
    let emu = emulator(&[]).await;
    let c = dynamodb_client(&emu.endpoint_url());
    table(&c, "changes", 10, 10).await;
    let spec = aws_sdk_dynamodb::types::StreamSpecification::builder()
        .stream_enabled(true)
        .stream_view_type(aws_sdk_dynamodb::types::StreamViewType::NewAndOldImages)
        .build()
        .unwrap();
    let updated = c
        .update_table()
        .table_name("changes")
        .stream_specification(spec)
        .send()
        .await
        .unwrap();
    let arn = updated
        .table_description
        .unwrap()
        .latest_stream_arn
        .unwrap();
    c.put_item()
        .table_name("changes")
        .item("pk", s("a"))
        .item("sk", n(1))
        .item("v", n(1))
        .send()
        .await
        .unwrap();
    c.put_item()
        .table_name("changes")
        .item("pk", s("a"))
        .item("sk", n(1))
        .item("v", n(2))
        .send()
        .await
        .unwrap();
    c.delete_item()
        .table_name("changes")
        .key("pk", s("a"))
        .key("sk", n(1))
        .send()
        .await
        .unwrap();
    let records = stream_records(&emu, &arn).await;
    let events: Vec<&str> = records
        .iter()
        .map(|r| r["eventName"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["INSERT", "MODIFY", "REMOVE"]);
    assert_eq!(records[1]["dynamodb"]["OldImage"]["v"]["N"], "1");
    assert_eq!(records[1]["dynamodb"]["NewImage"]["v"]["N"], "2");
    assert_eq!(records[2]["dynamodb"]["Keys"]["pk"]["S"], "a");
    assert!(records[2]["dynamodb"].get("NewImage").is_none());
    let seqs: Vec<&str> = records
        .iter()
        .map(|r| r["dynamodb"]["SequenceNumber"].as_str().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");

    // Two readers of a shard within a second are served; a third is refused. (The reader
    // above is a second older by then.)
    emu.advance_clock(std::time::Duration::from_secs(2));
    let (_, d) = raw_dynamo(
        &emu,
        "DynamoDBStreams_20120810.DescribeStream",
        &format!(r#"{{"StreamArn":"{arn}"}}"#),
    )
    .await;
    let shard = d["StreamDescription"]["Shards"][0]["ShardId"]
        .as_str()
        .unwrap()
        .to_string();
    let mut answers = Vec::new();
    for _ in 0..3 {
        let (_, it) = raw_dynamo(
            &emu,
            "DynamoDBStreams_20120810.GetShardIterator",
            &format!(r#"{{"StreamArn":"{arn}","ShardId":"{shard}","ShardIteratorType":"LATEST"}}"#),
        )
        .await;
        let token = it["ShardIterator"].as_str().unwrap().to_string();
        answers.push(
            raw_dynamo(
                &emu,
                "DynamoDBStreams_20120810.GetRecords",
                &format!(r#"{{"ShardIterator":"{token}"}}"#),
            )
            .await,
        );
    }
    assert_eq!(answers[0].0, 200, "{}", answers[0].1);
    assert_eq!(answers[1].0, 200, "{}", answers[1].1);
    assert_eq!(answers[2].0, 400, "{}", answers[2].1);
    assert_eq!(
        answers[2].1["__type"],
        "com.amazonaws.dynamodb.v20120810#LimitExceededException"
    );
    // An iterator expires 15 minutes after it was handed out.
    let (_, it) = raw_dynamo(
        &emu,
        "DynamoDBStreams_20120810.GetShardIterator",
        &format!(
            r#"{{"StreamArn":"{arn}","ShardId":"{shard}","ShardIteratorType":"TRIM_HORIZON"}}"#
        ),
    )
    .await;
    emu.advance_clock(std::time::Duration::from_secs(16 * 60));
    let token = it["ShardIterator"].as_str().unwrap();
    let (status, expired) = raw_dynamo(
        &emu,
        "DynamoDBStreams_20120810.GetRecords",
        &format!(r#"{{"ShardIterator":"{token}"}}"#),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        expired["__type"],
        "com.amazonaws.dynamodb.v20120810#ExpiredIteratorException"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tables_changes_reach_its_kinesis_data_stream() {
    let emu = emulator(&["kinesis.stream_activation=0s"]).await;
    let c = dynamodb_client(&emu.endpoint_url());
    let k = client(&emu);
    create_stream(&k, "table-changes", 1).await;
    let stream_arn = k
        .describe_stream_summary()
        .stream_name("table-changes")
        .send()
        .await
        .unwrap()
        .stream_description_summary
        .unwrap()
        .stream_arn;
    table(&c, "cdc", 100, 100).await;
    // A stream that does not exist is refused.
    let missing = c
        .enable_kinesis_streaming_destination()
        .table_name("cdc")
        .stream_arn("arn:aws:kinesis:us-east-1:000000000000:stream/nope")
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        missing.as_service_error().unwrap().meta().code(),
        Some("ValidationException")
    );
    let enabled = c
        .enable_kinesis_streaming_destination()
        .table_name("cdc")
        .stream_arn(&stream_arn)
        .send()
        .await
        .unwrap();
    assert_eq!(
        enabled.destination_status,
        Some(aws_sdk_dynamodb::types::DestinationStatus::Enabling)
    );
    for v in 1..=3 {
        c.put_item()
            .table_name("cdc")
            .item("pk", s("a"))
            .item("sk", n(v))
            .send()
            .await
            .unwrap();
    }
    c.update_item()
        .table_name("cdc")
        .key("pk", s("a"))
        .key("sk", n(1))
        .update_expression("SET x = :x")
        .expression_attribute_values(":x", n(9))
        .send()
        .await
        .unwrap();
    c.delete_item()
        .table_name("cdc")
        .key("pk", s("a"))
        .key("sk", n(2))
        .send()
        .await
        .unwrap();
    let d = c
        .describe_kinesis_streaming_destination()
        .table_name("cdc")
        .send()
        .await
        .unwrap();
    assert_eq!(
        d.kinesis_data_stream_destinations()[0].destination_status,
        Some(aws_sdk_dynamodb::types::DestinationStatus::Active)
    );
    // The records arrive in the data stream (pushed after the profile's delay: zero here).
    let it = k
        .get_shard_iterator()
        .stream_name("table-changes")
        .shard_id("shardId-000000000000")
        .shard_iterator_type(aws_sdk_kinesis::types::ShardIteratorType::TrimHorizon)
        .send()
        .await
        .unwrap()
        .shard_iterator
        .unwrap();
    let mut events = Vec::new();
    let mut iterator = it;
    for _ in 0..50 {
        let got = k
            .get_records()
            .shard_iterator(&iterator)
            .send()
            .await
            .unwrap();
        for r in got.records() {
            let v: serde_json::Value = serde_json::from_slice(r.data().as_ref()).unwrap();
            assert_eq!(v["tableName"], "cdc");
            assert_eq!(v["eventSource"], "aws:dynamodb");
            events.push(v);
        }
        iterator = got.next_shard_iterator.unwrap();
        if events.len() >= 5 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["eventName"].as_str().unwrap())
        .collect();
    println!("Kinesis data stream for DynamoDB: {names:?}");
    assert_eq!(names, ["INSERT", "INSERT", "INSERT", "MODIFY", "REMOVE"]);
    assert_eq!(events[3]["dynamodb"]["NewImage"]["x"]["N"], "9");
    assert!(events[3]["dynamodb"]["OldImage"].get("x").is_none());
    let stats = raw_stats(&emu).await;
    assert_eq!(stats["dynamodb"]["kinesis_pushed"], 5);
    assert_eq!(stats["dynamodb"]["kinesis_push_failed"], 0);
}
