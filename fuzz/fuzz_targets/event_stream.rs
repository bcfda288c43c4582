//! SubscribeToShard events: arbitrary records encoded by the emulator's encoder and decoded with
//! `aws_smithy_eventstream` (CRCs checked) carry the records encoded, with the headers the SDKs
//! read; a frame cut short never decodes.
#![no_main]

use std::sync::Arc;
use std::time::Instant;

use arbitrary::Arbitrary;
use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
use base64::Engine;
use bytes::Bytes;
use latlab_emulator::kinesis::store::{Record, parse_sequence_number};
use latlab_emulator::kinesis::subscribe::event;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Generated {
    counter: u64,
    data: Vec<u8>,
    partition_key: String,
    arrival_micros: u64,
}

#[derive(Arbitrary, Debug)]
struct Input {
    shard: u32,
    continuation: u64,
    behind: u64,
    records: Vec<Generated>,
    cut: u16,
}

fn header(m: &aws_smithy_types::event_stream::Message, name: &str) -> Option<String> {
    m.headers()
        .iter()
        .find(|h| h.name().as_str() == name)
        .and_then(|h| h.value().as_string().ok())
        .map(|s| s.as_str().to_string())
}

fuzz_target!(|input: Input| {
    // Shard indexes have 9 digits in a sequence number; arrival times up to 2033 keep
    // microseconds in an f64 of seconds.
    let shard = input.shard % 1_000_000_000;
    let behind = (input.behind % (i64::MAX as u64)) as i64;
    let now = Instant::now();
    let records: Vec<Record> = input
        .records
        .iter()
        .map(|g| Record {
            counter: g.counter,
            data: Bytes::from(g.data.clone()),
            partition_key: Arc::from(g.partition_key.as_str()),
            arrival_micros: (g.arrival_micros % 2_000_000_000_000_000) as i64,
            arrival: now,
            visible_at: now,
        })
        .collect();
    let frame = event(shard, &records, input.continuation, behind);

    // Any prefix is incomplete.
    let cut = input.cut as usize % frame.len();
    let mut prefix = &frame[..cut];
    assert!(matches!(
        MessageFrameDecoder::new().decode_frame(&mut prefix),
        Ok(DecodedFrame::Incomplete)
    ));

    let mut whole = &frame[..];
    let DecodedFrame::Complete(m) = MessageFrameDecoder::new()
        .decode_frame(&mut whole)
        .expect("the frame decodes")
    else {
        panic!("a whole frame is incomplete");
    };
    assert!(whole.is_empty(), "bytes after the frame");
    assert_eq!(header(&m, ":message-type").as_deref(), Some("event"));
    assert_eq!(
        header(&m, ":event-type").as_deref(),
        Some("SubscribeToShardEvent")
    );
    assert_eq!(
        header(&m, ":content-type").as_deref(),
        Some("application/json")
    );
    let doc: serde_json::Value = serde_json::from_slice(m.payload()).expect("a JSON payload");
    let got = doc["Records"].as_array().expect("Records");
    assert_eq!(got.len(), records.len());
    for (r, j) in records.iter().zip(got) {
        let data = base64::engine::general_purpose::STANDARD
            .decode(j["Data"].as_str().expect("Data"))
            .expect("base64");
        assert_eq!(data, &r.data[..]);
        assert_eq!(j["PartitionKey"].as_str(), Some(&*r.partition_key));
        let seq = j["SequenceNumber"].as_str().expect("SequenceNumber");
        assert_eq!(seq, format!("4{shard:09}{:021}", r.counter));
        assert_eq!(parse_sequence_number(seq), Some((shard, r.counter)));
        let at = j["ApproximateArrivalTimestamp"]
            .as_f64()
            .expect("a timestamp");
        assert!((at - r.arrival_micros as f64 / 1e6).abs() <= 1e-6);
    }
    assert_eq!(
        doc["ContinuationSequenceNumber"].as_str(),
        Some(format!("4{shard:09}{:021}", input.continuation).as_str())
    );
    assert_eq!(doc["MillisBehindLatest"].as_i64(), Some(behind));
});
