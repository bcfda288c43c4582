//! DynamoDB Streams' JSON protocol: ListStreams, DescribeStream, GetShardIterator and GetRecords
//! (and any other target text) to `Dynamodb::answer`, against a table whose stream holds changes:
//! stream ARNs, shard ids, iterator types and sequence numbers that are real, cut, changed or any
//! text, and shard iterators handed out by the service then cut, changed, re-used or replaced by
//! any bytes. Each answers a JSON object or the service's error (a 4xx or 5xx with a type), never
//! a panic; a real iterator of a real shard reads the changes written.
#![no_main]

use std::sync::OnceLock;

use arbitrary::Arbitrary;
use latlab_core::services::dynamodb::{Op, STREAMS_TARGET_PREFIX, TARGET_PREFIX};
use latlab_emulator::dynamodb::Dynamodb;
use latlab_emulator::limits::Limits;
use latlab_emulator::profile::LatencyProfile;
use latlab_emulator::service::Service;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value as Json, json};

#[derive(Arbitrary, Debug)]
enum Text {
    /// The real value (the stream's ARN, its first shard's id, the last iterator handed out).
    Real,
    /// The real value cut to its first `n` bytes.
    Cut(u8),
    /// The real value with one byte changed.
    Changed(u8, u8),
    Any(String),
}

#[derive(Arbitrary, Debug)]
enum Call {
    List {
        arn: Option<Text>,
        limit: Option<i64>,
    },
    Describe {
        arn: Text,
        start: Option<Text>,
        limit: Option<i64>,
    },
    Iterator {
        arn: Text,
        shard: Text,
        kind: u8,
        kind_text: String,
        seq: Option<Text>,
    },
    Records {
        iterator: Text,
        limit: Option<i64>,
    },
    Write {
        key: String,
    },
    Raw {
        target: String,
        body: Vec<u8>,
    },
}

struct Shared {
    runtime: tokio::runtime::Runtime,
    db: Dynamodb,
    arn: String,
    shard: String,
    iterator: parking_lot::Mutex<String>,
    seq: parking_lot::Mutex<String>,
}

fn call(db: &Dynamodb, prefix: &str, op: &str, body: &Json) -> Result<Json, (u16, String)> {
    db.answer(
        &format!("{prefix}{op}"),
        body.to_string().as_bytes(),
        "us-east-1",
    )
    .map_err(|e| (e.status, e.kind.to_string()))
}

fn shared() -> &'static Shared {
    static S: OnceLock<Shared> = OnceLock::new();
    S.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let _guard = runtime.enter();
        let limits = Limits::default().dynamodb;
        let profile = LatencyProfile::resolve("zero")
            .expect("the zero profile")
            .dynamodb;
        let db = Dynamodb::new(limits, profile);
        let t = call(
            &db,
            TARGET_PREFIX,
            "CreateTable",
            &json!({
                "TableName": "fuzz",
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                "BillingMode": "PAY_PER_REQUEST",
                "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"},
            }),
        )
        .expect("the table is made");
        let arn = t["TableDescription"]["LatestStreamArn"]
            .as_str()
            .expect("a stream")
            .to_string();
        for i in 0..20 {
            call(
                &db,
                TARGET_PREFIX,
                "PutItem",
                &json!({"TableName": "fuzz", "Item": {"pk": {"S": format!("k{i}")}}}),
            )
            .expect("written");
        }
        let d = call(&db, STREAMS_TARGET_PREFIX, "DescribeStream", &json!({"StreamArn": arn}))
            .expect("described");
        let shard = d["StreamDescription"]["Shards"][0]["ShardId"]
            .as_str()
            .expect("a shard")
            .to_string();
        let it = call(
            &db,
            STREAMS_TARGET_PREFIX,
            "GetShardIterator",
            &json!({"StreamArn": arn, "ShardId": shard, "ShardIteratorType": "TRIM_HORIZON"}),
        )
        .expect("an iterator");
        let iterator = it["ShardIterator"].as_str().expect("an iterator").to_string();
        Shared {
            runtime,
            db,
            arn,
            shard,
            iterator: parking_lot::Mutex::new(iterator),
            seq: parking_lot::Mutex::new("1".into()),
        }
    })
}

fn text(t: &Text, real: &str) -> String {
    match t {
        Text::Real => real.to_string(),
        Text::Cut(n) => real.chars().take(*n as usize).collect(),
        Text::Changed(at, b) => {
            let mut bytes = real.as_bytes().to_vec();
            if !bytes.is_empty() {
                let i = *at as usize % bytes.len();
                bytes[i] = *b;
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
        Text::Any(s) => s.clone(),
    }
}

const KINDS: &[&str] = &[
    "TRIM_HORIZON",
    "LATEST",
    "AT_SEQUENCE_NUMBER",
    "AFTER_SEQUENCE_NUMBER",
];

fuzz_target!(|calls: Vec<Call>| {
    let s = shared();
    let _guard = s.runtime.enter();
    for c in calls.iter().take(8) {
        let (prefix, op, body) = match c {
            Call::List { arn, limit } => {
                let mut b = json!({});
                if let Some(a) = arn {
                    b["TableName"] = text(a, "fuzz").into();
                }
                if let Some(l) = limit {
                    b["Limit"] = (*l).into();
                }
                (STREAMS_TARGET_PREFIX, "ListStreams".to_string(), b)
            }
            Call::Describe { arn, start, limit } => {
                let mut b = json!({"StreamArn": text(arn, &s.arn)});
                if let Some(st) = start {
                    b["ExclusiveStartShardId"] = text(st, &s.shard).into();
                }
                if let Some(l) = limit {
                    b["Limit"] = (*l).into();
                }
                (STREAMS_TARGET_PREFIX, "DescribeStream".to_string(), b)
            }
            Call::Iterator {
                arn,
                shard,
                kind,
                kind_text,
                seq,
            } => {
                let kind = KINDS
                    .get(*kind as usize)
                    .map_or(kind_text.clone(), |k| k.to_string());
                let mut b = json!({
                    "StreamArn": text(arn, &s.arn),
                    "ShardId": text(shard, &s.shard),
                    "ShardIteratorType": kind,
                });
                if let Some(q) = seq {
                    b["SequenceNumber"] = text(q, &s.seq.lock()).into();
                }
                (STREAMS_TARGET_PREFIX, "GetShardIterator".to_string(), b)
            }
            Call::Records { iterator, limit } => {
                let mut b = json!({"ShardIterator": text(iterator, &s.iterator.lock())});
                if let Some(l) = limit {
                    b["Limit"] = (*l).into();
                }
                (STREAMS_TARGET_PREFIX, "GetRecords".to_string(), b)
            }
            Call::Write { key } => (
                TARGET_PREFIX,
                "PutItem".to_string(),
                json!({"TableName": "fuzz", "Item": {"pk": {"S": key}}}),
            ),
            Call::Raw { target, body } => {
                let target = Op::ALL
                    .iter()
                    .find(|o| o.of_streams() && target.ends_with(o.name()))
                    .map_or(target.clone(), |o| {
                        format!("{STREAMS_TARGET_PREFIX}{}", o.name())
                    });
                match s.db.answer(&target, body, "us-east-1") {
                    Ok(v) => assert!(v.is_object(), "{target}: {v}"),
                    Err(e) => assert!((400..600).contains(&e.status) && !e.kind.is_empty()),
                }
                continue;
            }
        };
        match call(&s.db, prefix, &op, &body) {
            Ok(v) => {
                assert!(v.is_object(), "{op}: {v}");
                // What the service hands out, the next calls build on.
                if let Some(it) = v["ShardIterator"]
                    .as_str()
                    .or(v["NextShardIterator"].as_str())
                {
                    *s.iterator.lock() = it.to_string();
                }
                if let Some(q) = v["Records"]
                    .as_array()
                    .and_then(|r| r.last())
                    .and_then(|r| r["dynamodb"]["SequenceNumber"].as_str())
                {
                    *s.seq.lock() = q.to_string();
                }
            }
            Err((status, kind)) => {
                assert!((400..600).contains(&status), "{op}: {status} {kind}");
                assert!(!kind.is_empty(), "{op}");
            }
        }
    }
});
