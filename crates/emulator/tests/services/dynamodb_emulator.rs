//! The emulator's DynamoDB through the real SDK: tables, items, conditions, Query, batches and
//! their errors as the SDK's own types; and capacity: a hot partition key throttles its partition
//! (`TableWriteKeyRangeThroughputExceeded`) while the same load spread over keys does not, and a
//! table past its provisioned capacity says so (`TableWriteProvisionedThroughputExceeded`).

use crate::common::*;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ProvisionedThroughput, PutRequest, ReturnConsumedCapacity, ReturnValue, ScalarAttributeType,
    WriteRequest,
};

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_string())
}

fn n(v: i64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

fn attr(name: &str, t: ScalarAttributeType) -> AttributeDefinition {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(t)
        .build()
        .unwrap()
}

fn key_part(name: &str, t: KeyType) -> KeySchemaElement {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(t)
        .build()
        .unwrap()
}

/// A table keyed by `pk` (string) and `sk` (number), provisioned with `read` and `write` units.
async fn table(c: &aws_sdk_dynamodb::Client, name: &str, read: i64, write: i64) {
    c.create_table()
        .table_name(name)
        .attribute_definitions(attr("pk", ScalarAttributeType::S))
        .attribute_definitions(attr("sk", ScalarAttributeType::N))
        .key_schema(key_part("pk", KeyType::Hash))
        .key_schema(key_part("sk", KeyType::Range))
        .billing_mode(BillingMode::Provisioned)
        .provisioned_throughput(
            ProvisionedThroughput::builder()
                .read_capacity_units(read)
                .write_capacity_units(write)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_items_conditions_queries_and_batches_answer_as_dynamodb_does() {
    let emu = emulator(&[]).await;
    let c = dynamodb_client(&emu.endpoint_url());
    table(&c, "orders", 100, 100).await;
    let d = c
        .describe_table()
        .table_name("orders")
        .send()
        .await
        .unwrap();
    let t = d.table.unwrap();
    assert_eq!(
        t.table_status,
        Some(aws_sdk_dynamodb::types::TableStatus::Active)
    );
    assert!(t.table_arn.unwrap().ends_with(":table/orders"));
    assert_eq!(
        c.list_tables().send().await.unwrap().table_names(),
        ["orders"]
    );
    // The same name again.
    let err = table_again(&c).await;
    assert!(err.contains("ResourceInUseException"), "{err}");

    // Put, get (strong and eventual, with the capacity each consumed), a failed condition.
    let put = c
        .put_item()
        .table_name("orders")
        .item("pk", s("user#1"))
        .item("sk", n(1))
        .item("total", n(10))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert_eq!(put.consumed_capacity.unwrap().capacity_units, Some(1.0));
    let strong = c
        .get_item()
        .table_name("orders")
        .key("pk", s("user#1"))
        .key("sk", n(1))
        .consistent_read(true)
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert_eq!(strong.item.unwrap()["total"], n(10));
    assert_eq!(strong.consumed_capacity.unwrap().capacity_units, Some(1.0));
    let eventual = c
        .get_item()
        .table_name("orders")
        .key("pk", s("user#1"))
        .key("sk", n(1))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert_eq!(
        eventual.consumed_capacity.unwrap().capacity_units,
        Some(0.5)
    );
    let again = c
        .put_item()
        .table_name("orders")
        .item("pk", s("user#1"))
        .item("sk", n(1))
        .condition_expression("attribute_not_exists(pk)")
        .send()
        .await
        .unwrap_err();
    assert!(
        again
            .as_service_error()
            .unwrap()
            .is_conditional_check_failed_exception(),
        "{again:?}"
    );

    // Update: SET, ADD, REMOVE, with the new item back.
    let updated = c
        .update_item()
        .table_name("orders")
        .key("pk", s("user#1"))
        .key("sk", n(1))
        .update_expression("SET #s = :s ADD total :inc")
        .expression_attribute_names("#s", "status")
        .expression_attribute_values(":s", s("paid"))
        .expression_attribute_values(":inc", n(5))
        .return_values(ReturnValue::AllNew)
        .send()
        .await
        .unwrap();
    let attrs = updated.attributes.unwrap();
    assert_eq!(attrs["total"], n(15));
    assert_eq!(attrs["status"], s("paid"));

    // Query: the partition's items in sort order, a range, and pages.
    for sk in 2..=5 {
        c.put_item()
            .table_name("orders")
            .item("pk", s("user#1"))
            .item("sk", n(sk))
            .send()
            .await
            .unwrap();
    }
    c.put_item()
        .table_name("orders")
        .item("pk", s("user#2"))
        .item("sk", n(1))
        .send()
        .await
        .unwrap();
    let q = c
        .query()
        .table_name("orders")
        .key_condition_expression("pk = :p AND sk BETWEEN :a AND :b")
        .expression_attribute_values(":p", s("user#1"))
        .expression_attribute_values(":a", n(2))
        .expression_attribute_values(":b", n(4))
        .send()
        .await
        .unwrap();
    let sks: Vec<&AttributeValue> = q.items().iter().map(|i| &i["sk"]).collect();
    assert_eq!(sks, [&n(2), &n(3), &n(4)]);
    let page = c
        .query()
        .table_name("orders")
        .key_condition_expression("pk = :p")
        .expression_attribute_values(":p", s("user#1"))
        .scan_index_forward(false)
        .limit(2)
        .send()
        .await
        .unwrap();
    assert_eq!(page.count, 2);
    assert_eq!(page.items()[0]["sk"], n(5));
    let next = c
        .query()
        .table_name("orders")
        .key_condition_expression("pk = :p")
        .expression_attribute_values(":p", s("user#1"))
        .scan_index_forward(false)
        .set_exclusive_start_key(page.last_evaluated_key)
        .send()
        .await
        .unwrap();
    assert_eq!(next.count, 3);
    assert_eq!(next.items()[0]["sk"], n(3));

    // Batches.
    let writes: Vec<WriteRequest> = (10..35)
        .map(|sk| {
            WriteRequest::builder()
                .put_request(
                    PutRequest::builder()
                        .item("pk", s("batch"))
                        .item("sk", n(sk))
                        .build()
                        .unwrap(),
                )
                .build()
        })
        .collect();
    let out = c
        .batch_write_item()
        .request_items("orders", writes)
        .send()
        .await
        .unwrap();
    assert!(out.unprocessed_items.unwrap_or_default().is_empty());
    let keys = aws_sdk_dynamodb::types::KeysAndAttributes::builder()
        .keys([("pk".to_string(), s("batch")), ("sk".to_string(), n(10))].into())
        .keys([("pk".to_string(), s("batch")), ("sk".to_string(), n(34))].into())
        .build()
        .unwrap();
    let got = c
        .batch_get_item()
        .request_items("orders", keys)
        .send()
        .await
        .unwrap();
    assert_eq!(got.responses.unwrap()["orders"].len(), 2);

    // Tags, delete, and what a missing table and a wrong key say.
    let arn = c
        .describe_table()
        .table_name("orders")
        .send()
        .await
        .unwrap()
        .table
        .unwrap()
        .table_arn
        .unwrap();
    c.tag_resource()
        .resource_arn(&arn)
        .tags(
            aws_sdk_dynamodb::types::Tag::builder()
                .key("latlab:run-id")
                .value("r1")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let tags = c
        .list_tags_of_resource()
        .resource_arn(&arn)
        .send()
        .await
        .unwrap();
    assert_eq!(tags.tags()[0].key(), "latlab:run-id");
    let wrong = c
        .get_item()
        .table_name("orders")
        .key("pk", s("user#1"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        wrong.as_service_error().unwrap().meta().code(),
        Some("ValidationException")
    );
    c.delete_table().table_name("orders").send().await.unwrap();
    let gone = c
        .describe_table()
        .table_name("orders")
        .send()
        .await
        .unwrap_err();
    assert!(
        gone.as_service_error()
            .unwrap()
            .is_resource_not_found_exception(),
        "{gone:?}"
    );
}

async fn table_again(c: &aws_sdk_dynamodb::Client) -> String {
    let e = c
        .create_table()
        .table_name("orders")
        .attribute_definitions(attr("pk", ScalarAttributeType::S))
        .key_schema(key_part("pk", KeyType::Hash))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap_err();
    format!("{:?}", e.as_service_error().unwrap())
}

/// Writes `count` items in batches of 25 with the clock stopped (no capacity refills): their
/// partition keys from `key(i)`. Returns how many were left unprocessed.
async fn burst(
    c: &aws_sdk_dynamodb::Client,
    name: &str,
    count: i64,
    key: impl Fn(i64) -> String,
) -> usize {
    let mut unprocessed = 0;
    for start in (0..count).step_by(25) {
        let writes: Vec<WriteRequest> = (start..(start + 25).min(count))
            .map(|i| {
                WriteRequest::builder()
                    .put_request(
                        PutRequest::builder()
                            .item("pk", s(&key(i)))
                            .item("sk", n(i))
                            .build()
                            .unwrap(),
                    )
                    .build()
            })
            .collect();
        match c
            .batch_write_item()
            .request_items(name, writes)
            .send()
            .await
        {
            Ok(out) => {
                unprocessed += out
                    .unprocessed_items
                    .unwrap_or_default()
                    .get(name)
                    .map_or(0, Vec::len)
            }
            // Every entry refused: the call itself is throttled.
            Err(e) => {
                let e = e.into_service_error();
                assert!(e.is_provisioned_throughput_exceeded_exception(), "{e:?}");
                unprocessed += 25;
            }
        }
    }
    unprocessed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hot_key_throttles_its_partition_while_the_same_load_spread_over_keys_does_not() {
    let emu = emulator(&[]).await;
    emu.freeze_clock();
    let c = dynamodb_client(&emu.endpoint_url());
    // 4,000 write units: 5 partitions (4,000/1,000 + 1/3,000, rounded up).
    table(&c, "spread", 1, 4000).await;
    table(&c, "hot", 1, 4000).await;
    let spread = burst(&c, "spread", 1500, |i| format!("user#{i}")).await;
    let hot = burst(&c, "hot", 1500, |_| "user#celebrity".into()).await;
    println!("1,500 writes in one instant: spread over keys {spread} unprocessed, one key {hot}");
    assert_eq!(spread, 0);
    // The hot key's partition serves 1,000 write units a second; the table had 4,000.
    assert_eq!(hot, 500);

    // The reason, on a single write: the partition's, not the table's.
    let err = c
        .put_item()
        .table_name("hot")
        .item("pk", s("user#celebrity"))
        .item("sk", n(-1))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let aws_sdk_dynamodb::operation::put_item::PutItemError::ProvisionedThroughputExceededException(
        t,
    ) = &err
    else {
        panic!("{err:?}");
    };
    let reasons = t.throttling_reasons();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert_eq!(
        reasons[0].reason(),
        Some("TableWriteKeyRangeThroughputExceeded")
    );
    assert!(reasons[0].resource().unwrap().ends_with(":table/hot"));

    // The stats: one partition hot, the table far below its capacity.
    let stats = raw_stats(&emu).await;
    let hot_table = stats["dynamodb"]["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["table"] == "hot")
        .unwrap()
        .clone();
    let throttled: Vec<u64> = hot_table["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["throttled"].as_u64().unwrap())
        .collect();
    println!(
        "hot table's partitions, throttled calls: {throttled:?}; throttles: {}",
        hot_table["throttles"]
    );
    assert_eq!(throttled.len(), 5);
    assert_eq!(
        throttled.iter().filter(|t| **t > 0).count(),
        1,
        "{throttled:?}"
    );
    assert_eq!(
        hot_table["throttles"]["TableWriteKeyRangeThroughputExceeded"],
        501
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_past_its_provisioned_capacity_is_throttled_for_the_table() {
    let emu = emulator(&[]).await;
    emu.freeze_clock();
    let c = dynamodb_client(&emu.endpoint_url());
    table(&c, "small", 5, 10).await;
    for i in 0..10 {
        c.put_item()
            .table_name("small")
            .item("pk", s(&format!("k{i}")))
            .item("sk", n(i))
            .send()
            .await
            .unwrap();
    }
    let err = c
        .put_item()
        .table_name("small")
        .item("pk", s("k10"))
        .item("sk", n(10))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let aws_sdk_dynamodb::operation::put_item::PutItemError::ProvisionedThroughputExceededException(
        t,
    ) = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(
        t.throttling_reasons()[0].reason(),
        Some("TableWriteProvisionedThroughputExceeded")
    );
    // Capacity comes back with time: a second later the table takes 10 writes again.
    emu.advance_clock(std::time::Duration::from_secs(1));
    c.put_item()
        .table_name("small")
        .item("pk", s("k10"))
        .item("sk", n(10))
        .send()
        .await
        .unwrap();
}

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
async fn an_on_demand_table_serves_double_its_previous_peak_and_grows_by_windows() {
    let emu = emulator(&["dynamodb.on_demand_growth_window=60s"]).await;
    emu.freeze_clock();
    let c = dynamodb_client(&emu.endpoint_url());
    c.create_table()
        .table_name("spiky")
        .attribute_definitions(attr("pk", ScalarAttributeType::S))
        .attribute_definitions(attr("sk", ScalarAttributeType::N))
        .key_schema(key_part("pk", KeyType::Hash))
        .key_schema(key_part("sk", KeyType::Range))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
    // A new on-demand table: 4,000 write units at once (4 partitions); 5,000 in one instant
    // leave about a fifth unprocessed, each for its partition.
    let first = burst(&c, "spiky", 5000, |i| format!("user#{i}")).await;
    // A second later the table has seen its busiest second; a window later it serves double.
    emu.advance_clock(std::time::Duration::from_secs(1));
    c.put_item()
        .table_name("spiky")
        .item("pk", s("tick"))
        .item("sk", n(0))
        .send()
        .await
        .unwrap();
    emu.advance_clock(std::time::Duration::from_secs(60));
    let later = burst(&c, "spiky", 6000, |i| format!("user#{}", 10_000 + i)).await;
    println!(
        "on-demand: 5,000 writes on a new table: {first} unprocessed; 6,000 a window after a 4,000-unit second: {later}"
    );
    assert!((700..=1300).contains(&first), "{first}");
    assert_eq!(later, 0);
    let stats = raw_stats(&emu).await;
    let t = &stats["dynamodb"]["tables"][0];
    assert_eq!(t["partitions"].as_array().unwrap().len(), 8, "{t}");
    assert!(
        t["throttles"]["TableWriteKeyRangeThroughputExceeded"]
            .as_u64()
            .unwrap()
            > 0,
        "{t}"
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_short_of_write_capacity_throttles_the_tables_writes() {
    let emu = emulator(&[]).await;
    emu.freeze_clock();
    let c = dynamodb_client(&emu.endpoint_url());
    c.create_table()
        .table_name("orders-by-status")
        .attribute_definitions(attr("pk", ScalarAttributeType::S))
        .attribute_definitions(attr("status", ScalarAttributeType::S))
        .key_schema(key_part("pk", KeyType::Hash))
        .billing_mode(BillingMode::Provisioned)
        .provisioned_throughput(
            ProvisionedThroughput::builder()
                .read_capacity_units(100)
                .write_capacity_units(1000)
                .build()
                .unwrap(),
        )
        .global_secondary_indexes(
            aws_sdk_dynamodb::types::GlobalSecondaryIndex::builder()
                .index_name("by-status")
                .key_schema(key_part("status", KeyType::Hash))
                .projection(
                    aws_sdk_dynamodb::types::Projection::builder()
                        .projection_type(aws_sdk_dynamodb::types::ProjectionType::KeysOnly)
                        .build(),
                )
                .provisioned_throughput(
                    ProvisionedThroughput::builder()
                        .read_capacity_units(5)
                        .write_capacity_units(5)
                        .build()
                        .unwrap(),
                )
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    // Five writes the index carries fill its 5 write units; the sixth is refused for the index,
    // with the table's 1,000 units nearly untouched.
    for i in 0..5 {
        c.put_item()
            .table_name("orders-by-status")
            .item("pk", s(&format!("o{i}")))
            .item("status", s("new"))
            .send()
            .await
            .unwrap();
    }
    let err = c
        .put_item()
        .table_name("orders-by-status")
        .item("pk", s("o5"))
        .item("status", s("new"))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let aws_sdk_dynamodb::operation::put_item::PutItemError::ProvisionedThroughputExceededException(
        t,
    ) = &err
    else {
        panic!("{err:?}");
    };
    let r = &t.throttling_reasons()[0];
    assert_eq!(r.reason(), Some("IndexWriteProvisionedThroughputExceeded"));
    assert!(
        r.resource()
            .unwrap()
            .ends_with(":table/orders-by-status/index/by-status"),
        "{r:?}"
    );
    // A write the index does not carry (no status) takes the table's capacity alone.
    c.put_item()
        .table_name("orders-by-status")
        .item("pk", s("o6"))
        .send()
        .await
        .unwrap();
}
