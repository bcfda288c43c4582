//! DynamoDB's capacity through the real SDK: a hot partition key throttles its partition
//! (`TableWriteKeyRangeThroughputExceeded`) while the same load spread over keys does not; a
//! table past its provisioned capacity says so (`TableWriteProvisionedThroughputExceeded`); an
//! on-demand table serves double its previous peak and grows by windows, and no more than a maximum
//! throughput set on it (`TableWriteMaxOnDemandThroughputExceeded`); an index short of write
//! capacity throttles the table's writes.

use crate::common::*;
use aws_sdk_dynamodb::types::{
    BillingMode, KeyType, ProvisionedThroughput, PutRequest, ScalarAttributeType, WriteRequest,
};

use crate::dynamodb_emulator::{attr, key_part, n, s, table};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_on_demand_tables_maximum_throughput_throttles_past_it_with_its_reason() {
    use aws_sdk_dynamodb::operation::put_item::PutItemError;
    use aws_sdk_dynamodb::types::OnDemandThroughput;
    let emu = emulator(&[]).await;
    emu.freeze_clock();
    let c = dynamodb_client(&emu.endpoint_url());
    let once = c
        .config()
        .to_builder()
        .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled());
    let c = aws_sdk_dynamodb::Client::from_conf(once.build());
    c.create_table()
        .table_name("capped")
        .attribute_definitions(attr("pk", ScalarAttributeType::S))
        .key_schema(key_part("pk", KeyType::Hash))
        .billing_mode(BillingMode::PayPerRequest)
        .on_demand_throughput(
            OnDemandThroughput::builder()
                .max_write_request_units(10)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let d = c
        .describe_table()
        .table_name("capped")
        .send()
        .await
        .unwrap();
    let max = d.table().and_then(|t| t.on_demand_throughput()).unwrap();
    assert_eq!(
        (max.max_write_request_units(), max.max_read_request_units()),
        (Some(10), Some(-1))
    );
    // Ten writes of one unit in an instant, then the eleventh is refused.
    for i in 0..10 {
        c.put_item()
            .table_name("capped")
            .item("pk", s(&format!("k{i}")))
            .send()
            .await
            .unwrap();
    }
    let e = c
        .put_item()
        .table_name("capped")
        .item("pk", s("k10"))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let PutItemError::ThrottlingException(t) = &e else {
        panic!("{e:?}");
    };
    let reasons: Vec<&str> = t
        .throttling_reasons()
        .iter()
        .filter_map(|r| r.reason())
        .collect();
    assert_eq!(reasons, ["TableWriteMaxOnDemandThroughputExceeded"]);
    // A provisioned table takes no maximum.
    let e = c
        .create_table()
        .table_name("provisioned")
        .attribute_definitions(attr("pk", ScalarAttributeType::S))
        .key_schema(key_part("pk", KeyType::Hash))
        .provisioned_throughput(
            ProvisionedThroughput::builder()
                .read_capacity_units(1)
                .write_capacity_units(1)
                .build()
                .unwrap(),
        )
        .on_demand_throughput(
            OnDemandThroughput::builder()
                .max_write_request_units(5)
                .build(),
        )
        .send()
        .await
        .unwrap_err();
    assert!(
        format!("{:?}", e.into_service_error())
            .contains("only when BillingMode is PAY_PER_REQUEST")
    );
}
