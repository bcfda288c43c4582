//! The S3 lab's configuration, priced: PUT and GET requests of the class measured now at their
//! measured rates (the last 10 seconds), the storage of the objects the live loop keeps, and S3
//! Express One Zone's per-GB upload and retrieval charges for the part of each request the price
//! file says they apply to.

use super::{GB, HOURS_PER_MONTH, LabCost, Prices, item, usd};
use crate::labs::LabKind;
use crate::labs::s3::LIVE_KEYS_PER_LOOP;
use crate::labs::s3::snapshot::S3Snapshot;
use crate::services::s3::Class;
use crate::units::format_bytes;

fn prices_of(p: &Prices, class: Class) -> (&super::prices::S3Prices, &'static str) {
    match class {
        Class::Standard => (&p.s3_standard, "s3.standard"),
        Class::ExpressOneZone => (&p.s3_express, "s3.express"),
    }
}

/// The bytes of a request of `size` the per-GB charges apply to.
fn charged_bytes(size: u64, above: u64) -> u64 {
    size.saturating_sub(above)
}

/// The lab's charges per hour, and the price keys they use.
pub fn cost(s: &S3Snapshot, p: &Prices) -> (LabCost, Vec<String>) {
    let (cp, section) = prices_of(p, s.class);
    let rate = |op: &str| {
        s.ops
            .iter()
            .find(|o| o.class == s.class && o.op == op)
            .map_or(0.0, |o| o.per_sec.max(0.0))
    };
    let (put, get) = (rate("PUT"), rate("GET"));
    let key = |k: &str| format!("{section}.{k}");
    let class = s.class.storage_class();
    let objects = s.concurrency as u64 * LIVE_KEYS_PER_LOOP;
    let stored_gb = objects as f64 * s.payload_bytes as f64 / GB;
    let mut items = vec![
        item(
            p,
            &key("put_per_1000"),
            "PUT requests",
            format!(
                "{put:.1} PUT/s measured ({class}) × 3,600 s × {} per 1,000",
                usd(cp.put_per_1000)
            ),
            put * 3600.0 / 1000.0 * cp.put_per_1000,
        ),
        item(
            p,
            &key("get_per_1000"),
            "GET requests",
            format!(
                "{get:.1} GET/s measured ({class}) × 3,600 s × {} per 1,000",
                usd(cp.get_per_1000)
            ),
            get * 3600.0 / 1000.0 * cp.get_per_1000,
        ),
        item(
            p,
            &key("storage_gb_month"),
            "storage",
            format!(
                "{objects} objects of {} = {stored_gb:.6} GB × {} per GB-month / 730 h",
                format_bytes(s.payload_bytes),
                usd(cp.storage_gb_month)
            ),
            stored_gb * cp.storage_gb_month / HOURS_PER_MONTH,
        ),
    ];
    let mut keys = vec![
        key("put_per_1000"),
        key("get_per_1000"),
        key("storage_gb_month"),
    ];
    let charged = charged_bytes(s.payload_bytes, cp.per_gb_above);
    if s.class == Class::ExpressOneZone {
        let part = if cp.per_gb_above == 0 {
            "every byte".to_string()
        } else {
            format!(
                "the {} above {}",
                format_bytes(charged),
                format_bytes(cp.per_gb_above)
            )
        };
        items.push(item(
            p,
            &key("upload_per_gb"),
            "upload per GB",
            format!(
                "{put:.1} PUT/s × {part} of {} × 3,600 s × {} per GB",
                format_bytes(s.payload_bytes),
                usd(cp.upload_per_gb)
            ),
            put * 3600.0 * charged as f64 / GB * cp.upload_per_gb,
        ));
        items.push(item(
            p,
            &key("retrieval_per_gb"),
            "retrieval per GB",
            format!(
                "{get:.1} GET/s × {part} of {} × 3,600 s × {} per GB",
                format_bytes(s.payload_bytes),
                usd(cp.retrieval_per_gb)
            ),
            get * 3600.0 * charged as f64 / GB * cp.retrieval_per_gb,
        ));
        keys.push(key("upload_per_gb"));
        keys.push(key("retrieval_per_gb"));
    }
    let notes = vec![
        format!(
            "requests at the rates measured in the last 10 s; storage of the {objects} objects the live loop keeps ({} loop(s) × {LIVE_KEYS_PER_LOOP} keys) at the current payload",
            s.concurrency
        ),
        "one request per object: above the transfer threshold the SDK's multipart uploads and ranged GETs make more requests, not counted; DELETEs are free".into(),
    ];
    (
        LabCost {
            lab: LabKind::S3,
            items,
            notes,
            missing: None,
        },
        keys,
    )
}

/// One class and operation's side of the trade-off at the current payload: the request price
/// plus (Express) the per-GB charge on the charged part, per million requests and per GB moved.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassUnit {
    pub class: Class,
    pub op: String,
    pub per_million_requests: f64,
    pub per_gb: Option<f64>,
}

/// PUT and GET of both classes at the snapshot's payload size (storage not included).
pub fn class_units(s: &S3Snapshot, p: &Prices) -> Vec<ClassUnit> {
    let mut out = Vec::new();
    for class in [Class::ExpressOneZone, Class::Standard] {
        let (cp, _) = prices_of(p, class);
        let charged = charged_bytes(s.payload_bytes, cp.per_gb_above) as f64 / GB;
        for (op, per_1000, per_gb) in [
            ("PUT", cp.put_per_1000, cp.upload_per_gb),
            ("GET", cp.get_per_1000, cp.retrieval_per_gb),
        ] {
            let per_million = per_1000 * 1000.0 + charged * per_gb * 1e6;
            let gb = s.payload_bytes as f64 / GB * 1e6;
            out.push(ClassUnit {
                class,
                op: op.into(),
                per_million_requests: per_million,
                per_gb: (gb > 0.0).then(|| per_million / gb),
            });
        }
    }
    out
}
