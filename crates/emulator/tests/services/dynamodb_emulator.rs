//! The emulator's DynamoDB through the real SDK: tables, items, conditions, Query, batches and
//! their errors as the SDK's own types. Capacity and throttling are `dynamodb_capacity.rs`; the
//! table's stream and its Kinesis destination `dynamodb_streams.rs`; both use the helpers here.

use crate::common::*;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ProvisionedThroughput, PutRequest, ReturnConsumedCapacity, ReturnValue, ScalarAttributeType,
    WriteRequest,
};

pub fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_string())
}

pub fn n(v: i64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

pub fn attr(name: &str, t: ScalarAttributeType) -> AttributeDefinition {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(t)
        .build()
        .unwrap()
}

pub fn key_part(name: &str, t: KeyType) -> KeySchemaElement {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(t)
        .build()
        .unwrap()
}

/// A table keyed by `pk` (string) and `sk` (number), provisioned with `read` and `write` units.
pub async fn table(c: &aws_sdk_dynamodb::Client, name: &str, read: i64, write: i64) {
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
