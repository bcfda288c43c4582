//! The Kinesis lab's configuration, priced (provisioned mode): shard-hours, PUT payload units at
//! the producer's asked rate and payload, enhanced fan-out consumer-shard-hours and data
//! retrieval for every fan-out consumer (Lambda on enhanced fan-out included). GetRecords reads
//! cost nothing beyond the shard-hours.

use super::{GB, Item, LabCost, Prices, item, usd};
use crate::labs::LabKind;
use crate::labs::kinesis::config::ConsumerKind;
use crate::labs::kinesis::snapshot::{ConsumerSnapshot, KinesisSnapshot};
use crate::units::format_bytes;

/// A PUT payload unit: 25 KB of a record (KB of 1,024 bytes, as AWS's Kinesis pricing counts).
pub const PUT_PAYLOAD_UNIT: u64 = 25 * 1024;

/// PUT payload units one record of `bytes` is billed as: whole units, at least one.
pub fn payload_units(bytes: u64) -> u64 {
    bytes.div_ceil(PUT_PAYLOAD_UNIT).max(1)
}

/// A consumer counts while it runs; once the run is complete, every consumer that ran counts.
fn counted(c: &ConsumerSnapshot, complete: bool) -> bool {
    complete || c.stopped_at_secs.is_none()
}

/// The lab's charges per hour, and the price keys they use.
pub fn cost(k: &KinesisSnapshot, complete: bool, p: &Prices) -> (LabCost, Vec<String>) {
    let kp = &p.kinesis;
    let shards = k.shards as f64;
    let rate = k.producer.asked_rate.max(0.0);
    let payload = k.producer.payload_bytes;
    let units = payload_units(payload);
    let fan_out = k
        .consumers
        .iter()
        .filter(|c| c.kind.is_fan_out() && counted(c, complete))
        .count();
    let lambda_efo = k
        .consumers
        .iter()
        .filter(|c| c.kind == ConsumerKind::LambdaEfo && counted(c, complete))
        .count();
    let units_per_hour = rate * units as f64 * 3600.0;
    let gb_per_hour = rate * payload as f64 * 3600.0 / GB;
    let mut items: Vec<Item> = vec![
        item(
            p,
            "kinesis.shard_hour",
            "shard-hours",
            format!(
                "{} shard{} × {} per shard-hour",
                k.shards,
                if k.shards == 1 { "" } else { "s" },
                usd(kp.shard_hour)
            ),
            shards * kp.shard_hour,
        ),
        item(
            p,
            "kinesis.put_payload_units_per_million",
            "PUT payload units",
            format!(
                "{} records/s asked × {units} unit{} ({} a record, 25 KB units) × 3,600 s × {} per million",
                trim(rate),
                if units == 1 { "" } else { "s" },
                format_bytes(payload),
                usd(kp.put_payload_units_per_million)
            ),
            units_per_hour / 1e6 * kp.put_payload_units_per_million,
        ),
    ];
    let mut keys = vec![
        "kinesis.shard_hour".to_string(),
        "kinesis.put_payload_units_per_million".to_string(),
    ];
    if fan_out > 0 {
        let lambda = if lambda_efo > 0 {
            format!(", {lambda_efo} of them Lambda's")
        } else {
            String::new()
        };
        items.push(item(
            p,
            "kinesis.efo_consumer_shard_hour",
            "enhanced fan-out consumer-shard-hours",
            format!(
                "{fan_out} fan-out consumer{}{lambda} × {} shard{} × {} per consumer-shard-hour",
                if fan_out == 1 { "" } else { "s" },
                k.shards,
                if k.shards == 1 { "" } else { "s" },
                usd(kp.efo_consumer_shard_hour)
            ),
            fan_out as f64 * shards * kp.efo_consumer_shard_hour,
        ));
        items.push(item(
            p,
            "kinesis.efo_retrieval_per_gb",
            "enhanced fan-out data retrieval",
            format!(
                "{} records/s × {} × {fan_out} consumer{} × 3,600 s = {:.6} GB × {} per GB",
                trim(rate),
                format_bytes(payload),
                if fan_out == 1 { "" } else { "s" },
                gb_per_hour * fan_out as f64,
                usd(kp.efo_retrieval_per_gb)
            ),
            gb_per_hour * fan_out as f64 * kp.efo_retrieval_per_gb,
        ));
        keys.push("kinesis.efo_consumer_shard_hour".into());
        keys.push("kinesis.efo_retrieval_per_gb".into());
    }
    let mut notes = vec![
        "priced at the producer's asked rate and payload, not the achieved rate".to_string(),
        "GetRecords pollers (and Lambda on a standard iterator) read within the shard-hours: no charge of their own".into(),
    ];
    if k.consumers.iter().any(|c| {
        matches!(
            c.kind,
            ConsumerKind::LambdaEfo | ConsumerKind::LambdaStandard
        ) && counted(c, complete)
    }) {
        notes.push("Lambda's own charges (requests, duration) are not priced".into());
    }
    (
        LabCost {
            lab: LabKind::Kinesis,
            items,
            notes,
            missing: None,
        },
        keys,
    )
}

/// One consumer's side of the trade-off: what a million records (and a GB) cost it to read,
/// the stream's own charges (shard-hours, PUT payload units) included.
#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerUnit {
    pub name: String,
    pub kind: ConsumerKind,
    /// Dollars an hour of its own (enhanced fan-out's consumer-shard-hours and retrieval).
    pub own_hourly: f64,
    pub per_million_records: Option<f64>,
    pub per_gb: Option<f64>,
}

/// Each consumer's cost per million records and per GB at the asked rate: (the stream's share,
/// which every consumer reads through, plus the consumer's own charges) divided by the records
/// (or GB) an hour the producer is asked for. None when the producer is asked for none.
pub fn consumer_units(k: &KinesisSnapshot, p: &Prices) -> Vec<ConsumerUnit> {
    let kp = &p.kinesis;
    let shards = k.shards as f64;
    let rate = k.producer.asked_rate.max(0.0);
    let payload = k.producer.payload_bytes;
    let records_per_hour = rate * 3600.0;
    let gb_per_hour = records_per_hour * payload as f64 / GB;
    let stream = shards * kp.shard_hour
        + records_per_hour * payload_units(payload) as f64 / 1e6 * kp.put_payload_units_per_million;
    k.consumers
        .iter()
        .map(|c| {
            let own = if c.kind.is_fan_out() {
                shards * kp.efo_consumer_shard_hour + gb_per_hour * kp.efo_retrieval_per_gb
            } else {
                0.0
            };
            let per = |amount: f64| (amount > 0.0).then(|| (stream + own) / amount);
            ConsumerUnit {
                name: c.name.clone(),
                kind: c.kind,
                own_hourly: own,
                per_million_records: per(records_per_hour / 1e6),
                per_gb: per(gb_per_hour),
            }
        })
        .collect()
}

/// `5`, `2.5`: a rate without needless decimals.
fn trim(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}
