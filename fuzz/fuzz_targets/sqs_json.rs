//! SQS's JSON protocol: any `x-amz-target` (an operation the emulator answers, or any text) and
//! any body, to `Sqs::handle`, after a queue of each kind exists, on a runtime whose clock stands
//! still unless a call waits (a long poll ends at once, not in 20 s). Each answers a JSON object
//! or the service's error, never a panic; an error is a 4xx or 5xx with a code.
#![no_main]

use std::sync::OnceLock;

use arbitrary::Arbitrary;
use latlab_emulator::limits::Limits;
use latlab_emulator::profile::LatencyProfile;
use latlab_emulator::sqs::Sqs;
use latlab_core::services::sqs::{Op, TARGET_PREFIX};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Call {
    /// An operation the emulator answers (by index), or the raw header when out of range.
    operation: u8,
    raw_target: String,
    /// A body of the operation's usual fields, or raw bytes.
    queue: u8,
    fields: Vec<(u8, Value)>,
    raw_body: Option<Vec<u8>>,
}

#[derive(Arbitrary, Debug)]
enum Value {
    Text(String),
    Number(i64),
    Float(f64),
    Bool(bool),
    Null,
    List(Vec<String>),
    Map(Vec<(String, String)>),
}

const FIELDS: &[&str] = &[
    "QueueName",
    "QueueUrl",
    "MessageBody",
    "MessageGroupId",
    "MessageDeduplicationId",
    "DelaySeconds",
    "MaxNumberOfMessages",
    "WaitTimeSeconds",
    "VisibilityTimeout",
    "ReceiptHandle",
    "Entries",
    "Attributes",
    "MessageAttributes",
    "AttributeNames",
    "MessageSystemAttributeNames",
    "tags",
    "TagKeys",
    "QueueNamePrefix",
    "MaxResults",
    "NextToken",
    "Id",
    "ReceiveRequestAttemptId",
];

const QUEUES: &[&str] = &["fuzz", "fuzz.fifo"];

struct Shared {
    runtime: tokio::runtime::Runtime,
    sqs: Sqs,
}

fn shared() -> &'static Shared {
    static S: OnceLock<Shared> = OnceLock::new();
    S.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("a runtime");
        let limits = Limits::default().sqs;
        let profile = LatencyProfile::resolve("zero")
            .expect("the zero profile")
            .sqs;
        let sqs = Sqs::new(limits, profile);
        for q in QUEUES {
            let mut body = serde_json::json!({"QueueName": q});
            if q.ends_with(".fifo") {
                body["Attributes"] = serde_json::json!({"FifoQueue": "true"});
            }
            runtime
                .block_on(sqs.handle(
                    &format!("{TARGET_PREFIX}CreateQueue"),
                    body.to_string().as_bytes(),
                    "127.0.0.1:4566",
                    "us-east-1",
                ))
                .expect("the queues are made");
        }
        Shared { runtime, sqs }
    })
}

fn json(v: &Value) -> serde_json::Value {
    match v {
        Value::Text(s) => s.clone().into(),
        Value::Number(n) => (*n).into(),
        Value::Float(f) => {
            serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into)
        }
        Value::Bool(b) => (*b).into(),
        Value::Null => serde_json::Value::Null,
        Value::List(l) => l.clone().into(),
        Value::Map(m) => m
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect::<serde_json::Map<_, _>>()
            .into(),
    }
}

fuzz_target!(|calls: Vec<Call>| {
    let s = shared();
    for call in calls.iter().take(8) {
        let ops = Op::ALL;
        let target = match ops.get(call.operation as usize) {
            Some(op) => format!("{TARGET_PREFIX}{}", op.name()),
            None => call.raw_target.clone(),
        };
        let body = match &call.raw_body {
            Some(raw) => raw.clone(),
            None => {
                let q = QUEUES[call.queue as usize % QUEUES.len()];
                let mut m = serde_json::Map::new();
                m.insert(
                    "QueueUrl".into(),
                    format!("http://127.0.0.1:4566/000000000000/{q}").into(),
                );
                for (f, v) in &call.fields {
                    m.insert(FIELDS[*f as usize % FIELDS.len()].into(), json(v));
                }
                serde_json::Value::Object(m).to_string().into_bytes()
            }
        };
        let answer =
            s.runtime
                .block_on(s.sqs.handle(&target, &body, "127.0.0.1:4566", "us-east-1"));
        match answer {
            Ok(v) => assert!(v.is_object(), "{target}: {v}"),
            Err(e) => {
                assert!((400..600).contains(&e.status), "{target}: {e:?}");
                assert!(!e.code.is_empty(), "{target}: {e:?}");
            }
        }
    }
});
