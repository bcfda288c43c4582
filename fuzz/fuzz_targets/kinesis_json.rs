//! Kinesis request bodies and the `x-amz-target` header: `Req::parse` and every typed accessor on
//! what it accepts, then the whole operation through `Kinesis::handle`. Each answers a value or
//! the service's error, never a panic.
#![no_main]

use std::sync::{Arc, OnceLock};

use arbitrary::Arbitrary;
use latlab_emulator::kinesis::Kinesis;
use latlab_emulator::kinesis::json::Req;
use latlab_emulator::kinesis::limits::KinesisLimits;
use latlab_emulator::kinesis::profile::KinesisProfile;
use latlab_emulator::service::ServiceProfile;
use latlab_core::services::kinesis::{Op, TARGET_PREFIX};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    /// An operation the emulator answers (by index), or the raw header when out of range.
    operation: u8,
    raw_target: String,
    body: Vec<u8>,
}

const FIELDS: &[&str] = &[
    "StreamName",
    "StreamARN",
    "ShardCount",
    "ShardId",
    "Data",
    "PartitionKey",
    "ExplicitHashKey",
    "Records",
    "ShardIterator",
    "ShardIteratorType",
    "StartingSequenceNumber",
    "Timestamp",
    "Limit",
    "NextToken",
    "ConsumerName",
    "ConsumerARN",
    "StartingPosition",
    "Tags",
    "StreamModeDetails",
    "EnforceConsumerDeletion",
];

fn service() -> &'static (tokio::runtime::Runtime, Arc<Kinesis>) {
    static S: OnceLock<(tokio::runtime::Runtime, Arc<Kinesis>)> = OnceLock::new();
    S.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let svc = Arc::new(Kinesis::new(
            KinesisLimits::default(),
            KinesisProfile::zero(),
        ));
        (rt, svc)
    })
}

fuzz_target!(|input: Input| {
    if let Ok(req) = Req::parse(&input.body) {
        for f in FIELDS {
            let _ = req.str_opt(f);
            let _ = req.str_len(f, 1, 256);
            let _ = req.int_opt(f, 1, 10_000);
            let _ = req.bool_opt(f);
            let _ = req.timestamp_opt(f);
            let _ = req.list(f);
            if let Ok(Some(inner)) = req.object_opt(f) {
                let _ = inner.str_opt("Type");
                let _ = inner.timestamp_opt("Timestamp");
            }
        }
        let _ = req.keys();
    }
    let target = match Op::NAMES.get(input.operation as usize) {
        Some(op) => format!("{TARGET_PREFIX}{op}"),
        None => input.raw_target,
    };
    let (rt, svc) = service();
    let _ = rt.block_on(svc.handle(&target, &input.body, "us-east-1"));
});
