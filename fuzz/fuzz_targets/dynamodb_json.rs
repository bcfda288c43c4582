//! DynamoDB's JSON protocol: any `x-amz-target` (an operation the emulator answers, or any text)
//! and any body to `Dynamodb::answer`, after a provisioned table with a stream and an on-demand
//! table with a sort key exist: bodies of the operations' fields with values of any shape
//! (attribute values of every type, nested, malformed; expressions of any text; key schemas,
//! capacities and batches), or raw bytes. Each answers a JSON object or the service's error (a
//! 4xx or 5xx with a type), never a panic.
#![no_main]

use std::sync::OnceLock;

use arbitrary::Arbitrary;
use latlab_core::services::dynamodb::{Op, TARGET_PREFIX};
use latlab_emulator::dynamodb::Dynamodb;
use latlab_emulator::limits::Limits;
use latlab_emulator::profile::LatencyProfile;
use latlab_emulator::service::Service;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value as Json, json};

#[derive(Arbitrary, Debug)]
struct Call {
    /// An operation the emulator answers (by index), or the raw header when out of range.
    operation: u8,
    raw_target: String,
    table: u8,
    fields: Vec<(u8, Value)>,
    raw_body: Option<Vec<u8>>,
}

/// A value of a field: plain JSON, or an attribute value (typed, nested, possibly malformed).
#[derive(Arbitrary, Debug)]
enum Value {
    Text(String),
    Number(i64),
    Float(f64),
    Bool(bool),
    Null,
    Attr(Attr),
    Item(Vec<(String, Attr)>),
    Items(Vec<Vec<(String, Attr)>>),
    Map(Vec<(String, Box<Value>)>),
    List(Vec<Value>),
}

#[derive(Arbitrary, Debug)]
enum Attr {
    S(String),
    N(String),
    B(String),
    Bool(bool),
    Null(bool),
    Ss(Vec<String>),
    Ns(Vec<String>),
    L(Vec<Attr>),
    M(Vec<(String, Attr)>),
    /// A type tag of any text with any value.
    Odd(String, String),
}

const FIELDS: &[&str] = &[
    "TableName",
    "Key",
    "Item",
    "KeySchema",
    "AttributeDefinitions",
    "ProvisionedThroughput",
    "BillingMode",
    "StreamSpecification",
    "GlobalSecondaryIndexes",
    "GlobalSecondaryIndexUpdates",
    "ConsistentRead",
    "ReturnConsumedCapacity",
    "ReturnValues",
    "ConditionExpression",
    "UpdateExpression",
    "KeyConditionExpression",
    "FilterExpression",
    "ProjectionExpression",
    "ExpressionAttributeNames",
    "ExpressionAttributeValues",
    "RequestItems",
    "ExclusiveStartKey",
    "Limit",
    "Select",
    "ScanIndexForward",
    "IndexName",
    "ResourceArn",
    "Tags",
    "TagKeys",
    "StreamArn",
    "ExclusiveStartTableName",
];

const TABLES: &[&str] = &["fuzz", "fuzz-sorted"];

fn attr(a: &Attr) -> Json {
    match a {
        Attr::S(s) => json!({ "S": s }),
        Attr::N(n) => json!({ "N": n }),
        Attr::B(b) => json!({ "B": b }),
        Attr::Bool(b) => json!({ "BOOL": b }),
        Attr::Null(b) => json!({ "NULL": b }),
        Attr::Ss(v) => json!({ "SS": v }),
        Attr::Ns(v) => json!({ "NS": v }),
        Attr::L(v) => json!({ "L": v.iter().take(8).map(attr).collect::<Vec<_>>() }),
        Attr::M(v) => json!({ "M": item(v) }),
        Attr::Odd(t, v) => json!({ t.clone(): v }),
    }
}

fn item(v: &[(String, Attr)]) -> Json {
    Json::Object(
        v.iter()
            .take(16)
            .map(|(k, a)| (k.clone(), attr(a)))
            .collect(),
    )
}

fn json(v: &Value, depth: u8) -> Json {
    if depth > 4 {
        return Json::Null;
    }
    match v {
        Value::Text(s) => s.clone().into(),
        Value::Number(n) => (*n).into(),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Into::into),
        Value::Bool(b) => (*b).into(),
        Value::Null => Json::Null,
        Value::Attr(a) => attr(a),
        Value::Item(i) => item(i),
        Value::Items(l) => Json::Array(l.iter().take(30).map(|i| item(i)).collect()),
        Value::Map(m) => Json::Object(
            m.iter()
                .take(16)
                .map(|(k, v)| (k.clone(), json(v, depth + 1)))
                .collect(),
        ),
        Value::List(l) => Json::Array(l.iter().take(16).map(|v| json(v, depth + 1)).collect()),
    }
}

struct Shared {
    runtime: tokio::runtime::Runtime,
    db: Dynamodb,
}

fn shared() -> &'static Shared {
    static S: OnceLock<Shared> = OnceLock::new();
    S.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let limits = Limits::default().dynamodb;
        let profile = LatencyProfile::resolve("zero")
            .expect("the zero profile")
            .dynamodb;
        let db = Dynamodb::new(limits, profile);
        let tables = [
            json!({
                "TableName": TABLES[0],
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                "BillingMode": "PROVISIONED",
                "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
                "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"},
            }),
            json!({
                "TableName": TABLES[1],
                "AttributeDefinitions": [
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "sk", "AttributeType": "N"},
                ],
                "KeySchema": [
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"},
                ],
                "BillingMode": "PAY_PER_REQUEST",
            }),
        ];
        let _guard = runtime.enter();
        for t in tables {
            db.answer(
                &format!("{TARGET_PREFIX}CreateTable"),
                t.to_string().as_bytes(),
                "us-east-1",
            )
            .expect("the tables are made");
        }
        Shared { runtime, db }
    })
}

fuzz_target!(|calls: Vec<Call>| {
    let s = shared();
    let _guard = s.runtime.enter();
    for call in calls.iter().take(8) {
        let target = match Op::ALL.get(call.operation as usize) {
            // Never delete the shared tables: every input starts from them.
            Some(Op::DeleteTable) => continue,
            Some(op) => format!("{TARGET_PREFIX}{}", op.name()),
            None => call.raw_target.clone(),
        };
        let body = match &call.raw_body {
            Some(raw) => raw.clone(),
            None => {
                let mut m = serde_json::Map::new();
                m.insert(
                    "TableName".into(),
                    TABLES[call.table as usize % TABLES.len()].into(),
                );
                for (f, v) in call.fields.iter().take(12) {
                    let name = FIELDS[*f as usize % FIELDS.len()];
                    if name == "TableName" {
                        continue;
                    }
                    m.insert(name.into(), json(v, 0));
                }
                Json::Object(m).to_string().into_bytes()
            }
        };
        match s.db.answer(&target, &body, "us-east-1") {
            Ok(v) => assert!(v.is_object(), "{target}: {v}"),
            Err(e) => {
                assert!((400..600).contains(&e.status), "{target}: {e:?}");
                assert!(!e.kind.is_empty(), "{target}: {e:?}");
            }
        }
    }
});
