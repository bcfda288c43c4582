//! The S3 lab's configuration, priced: PUT and GET requests of the class measured now at their
//! measured rates (the last 10 seconds), the storage of the objects the live loop keeps, and S3
//! Express One Zone's per-GB upload and retrieval charges for the part of each request the price
//! file says they apply to.

use crate::lab_kit::cost::prices::{Price, Section, Size};
use crate::lab_kit::cost::{
    GB, HOURS_PER_MONTH, LabCost, Prices, UnitCosts, item, usd, usd_or_dash,
};
use crate::labs::LabKind;
use crate::labs::s3::LIVE_KEYS_PER_LOOP;
use crate::labs::s3::snapshot::S3Snapshot;
use latlab_core::services::s3::Class;
use latlab_core::units::{format_bytes, ms};

/// A price of an S3 section: `scale` units of the file's per unit of the price list's (1,000
/// for a price per 1,000 requests, 1 per GB), read from a product of this usage type.
const fn price(
    key: &'static str,
    unit: &'static str,
    usage: &'static [&'static str],
    attrs: &'static [(&'static str, &'static str)],
    scale: f64,
) -> Price {
    Price {
        key,
        unit,
        usage,
        attrs,
        scale,
    }
}

/// Its sections of a price file, one per storage class. The Price List products: S3 Standard's
/// usage types and groups as infracost's price queries use them (github.com/infracost/infracost,
/// internal/resources/aws/s3_standard_storage_class.go), matched as a suffix so that a region's
/// prefix is allowed; S3 Express One Zone's as AWS's S3 User Guide names its usage types in
/// billing reports (`Requests-XZ-Tier1`, `TimedStorage-XZ-ByteHrs`, `Upload-XZ`,
/// `Retrieval-XZ`), which no captured offer file here confirmed. S3 Standard has no per-GB
/// request charges.
pub const PRICES: &[Section] = &[
    Section {
        table: "s3.standard",
        offer: "AmazonS3",
        prices: &[
            price(
                "put_per_1000",
                "per 1,000 PUTs",
                &["Requests-Tier1"],
                &[("group", "S3-API-Tier1")],
                1000.0,
            ),
            price(
                "get_per_1000",
                "per 1,000 GETs",
                &["Requests-Tier2"],
                &[("group", "S3-API-Tier2")],
                1000.0,
            ),
            price(
                "storage_gb_month",
                "per GB-month",
                &["TimedStorage-ByteHrs"],
                &[("volumeType", "Standard")],
                1.0,
            ),
        ],
        sizes: &[],
        named: None,
        optional: false,
    },
    Section {
        table: "s3.express",
        offer: "AmazonS3",
        prices: &[
            price(
                "put_per_1000",
                "per 1,000 PUTs",
                &["Requests-XZ-Tier1"],
                &[],
                1000.0,
            ),
            price(
                "get_per_1000",
                "per 1,000 GETs",
                &["Requests-XZ-Tier2"],
                &[],
                1000.0,
            ),
            price(
                "storage_gb_month",
                "per GB-month",
                &["TimedStorage-XZ-ByteHrs"],
                &[],
                1.0,
            ),
            price(
                "upload_per_gb",
                "per GB uploaded",
                &["Upload-XZ", "Upload-XZ-Bytes"],
                &[],
                1.0,
            ),
            price(
                "retrieval_per_gb",
                "per GB retrieved",
                &["Retrieval-XZ", "Retrieval-XZ-Bytes"],
                &[],
                1.0,
            ),
        ],
        // The per-GB charges apply to the part of each request above this many bytes.
        sizes: &[Size {
            key: "per_gb_above",
            fetched: "0B",
            why: "The per-GB charges apply to every byte (AWS News Blog, 10 April 2025); not in the price list.",
        }],
        named: None,
        optional: false,
    },
];

/// One storage class's prices, read from a price file (which has every one). S3 Standard has
/// no per-GB request charges (zero here).
#[derive(Clone, Copy, Debug, PartialEq)]
struct ClassPrices {
    put_per_1000: f64,
    get_per_1000: f64,
    storage_gb_month: f64,
    upload_per_gb: f64,
    retrieval_per_gb: f64,
    /// The per-GB charges apply to the part of each request above this many bytes.
    per_gb_above: u64,
}

fn prices_of(p: &Prices, class: Class) -> (ClassPrices, &'static str) {
    let section = match class {
        Class::Standard => "s3.standard",
        Class::ExpressOneZone => "s3.express",
    };
    let key = |k: &str| format!("{section}.{k}");
    let per_gb = |k: &str| p.value(&key(k)).unwrap_or(0.0);
    (
        ClassPrices {
            put_per_1000: p.price(&key("put_per_1000")),
            get_per_1000: p.price(&key("get_per_1000")),
            storage_gb_month: p.price(&key("storage_gb_month")),
            upload_per_gb: per_gb("upload_per_gb"),
            retrieval_per_gb: per_gb("retrieval_per_gb"),
            per_gb_above: p.size(&key("per_gb_above")),
        },
        section,
    )
}

/// The bytes of a request of `size` the per-GB charges apply to.
fn charged_bytes(size: u64, above: u64) -> u64 {
    size.saturating_sub(above)
}

/// What the lab's charges are figured from: the class, payload and loops on screen and the
/// request rates (measured while it runs; assumed, and said so, for a plan).
#[derive(Clone, Debug, PartialEq)]
pub struct Priced {
    pub class: Class,
    pub payload_bytes: u64,
    pub concurrency: usize,
    pub put_per_sec: f64,
    pub get_per_sec: f64,
    /// Where the rates come from, for the cost's notes.
    pub rates: String,
}

/// The charges per hour of a configuration, and the price keys they use.
pub fn priced(s: &Priced, p: &Prices) -> (LabCost, Vec<String>) {
    let (cp, section) = prices_of(p, s.class);
    let (put, get) = (s.put_per_sec, s.get_per_sec);
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
            "requests at the rates {}; storage of the {objects} objects the live loop keeps ({} loop(s) × {LIVE_KEYS_PER_LOOP} keys) at the current payload",
            s.rates, s.concurrency
        ),
        "one request per object: above the transfer threshold the SDK's multipart uploads and ranged GETs make more requests, not counted; DELETEs are free".into(),
    ];
    (
        LabCost {
            lab: LabKind::S3.name(),
            items,
            notes,
            missing: None,
        },
        keys,
    )
}

/// What a matrix's requests cost, once (not by the hour: the matrix ran its cases and ended):
/// each case's objects uploaded and downloaded in both classes, at one request per object, with
/// S3 Express One Zone's per-GB charges on the charged part of each.
fn matrix_once(rows: &[super::matrix::MatrixRow], p: &Prices) -> (LabCost, Vec<String>) {
    let mut total = 0.0;
    let mut requests = 0u64;
    let mut keys = Vec::new();
    for class in [Class::ExpressOneZone, Class::Standard] {
        let (cp, section) = prices_of(p, class);
        for r in rows {
            let n = r.case.objects * u64::from(r.repetitions.max(1));
            let charged = charged_bytes(r.case.size, cp.per_gb_above) as f64 / GB;
            total += n as f64 / 1000.0 * (cp.put_per_1000 + cp.get_per_1000)
                + n as f64 * charged * (cp.upload_per_gb + cp.retrieval_per_gb);
            requests += 2 * n;
        }
        keys.extend(
            [
                "put_per_1000",
                "get_per_1000",
                "upload_per_gb",
                "retrieval_per_gb",
            ]
            .map(|k| format!("{section}.{k}")),
        );
    }
    let why = format!(
        "a matrix run: {} PUTs and GETs in both classes, {} once at list price",
        latlab_core::units::thousands(requests),
        usd(total)
    );
    (
        LabCost {
            lab: LabKind::S3.name(),
            items: Vec::new(),
            notes: vec![
                "a matrix run is priced once, not by the hour: it ran its cases and ended (no live loop, nothing kept stored); one request per object (multipart parts and ranged GETs not counted), with S3 Express One Zone's per-GB charges".into(),
            ],
            missing: Some(why),
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

/// How the trade-off figures are made, said under their table.
const HOW: &str = "cost per million requests and per GB moved at the current payload: the request price, plus S3 Express One Zone's per-GB charge on the charged part of each request; storage not included";

impl crate::labs::Priced for super::S3Lab {
    /// The lab's charges per hour, and the price keys they use. A matrix run (`seed-s3`) has no
    /// live loop to price by the hour: what its requests cost, once, is said instead.
    fn cost(s: &S3Snapshot, _complete: bool, p: &Prices) -> Option<(LabCost, Vec<String>)> {
        if let Some(rows) = s.matrix.as_ref().filter(|rows| !rows.is_empty()) {
            return Some(matrix_once(rows, p));
        }
        let rate = |op: &str| {
            s.ops
                .iter()
                .find(|o| o.class == s.class && o.op == op)
                .map_or(0.0, |o| o.per_sec.max(0.0))
        };
        Some(priced(
            &Priced {
                class: s.class,
                payload_bytes: s.payload_bytes,
                concurrency: s.concurrency,
                put_per_sec: rate("PUT"),
                get_per_sec: rate("GET"),
                rates: "measured in the last 10 s".into(),
            },
            p,
        ))
    }

    /// The classes' trade-off table: each class and operation's latency beside what it costs per
    /// million requests and per GB. A class the endpoint cannot serve is not beside the other in
    /// the text: nothing of it was measured.
    fn unit_costs(s: Option<&S3Snapshot>, p: &Prices) -> Option<UnitCosts> {
        let units = s.map(|s| class_units(s, p)).unwrap_or_default();
        let rows = s.map_or_else(Vec::new, |s| {
            let measured =
                |c: Class| !(c == Class::ExpressOneZone && s.express_unsupported.is_some());
            units
                .iter()
                .filter(|u| measured(u.class))
                .map(|u| {
                    let o = s.ops.iter().find(|o| o.class == u.class && o.op == u.op);
                    let lat = |f: fn(&crate::metrics::Summary) -> u64| {
                        o.map_or_else(|| "-".to_string(), |o| ms(f(&o.total)))
                    };
                    vec![
                        u.class.storage_class().into(),
                        u.op.clone(),
                        lat(|s| s.p50_us),
                        lat(|s| s.p99_us),
                        usd(u.per_million_requests),
                        usd_or_dash(u.per_gb),
                    ]
                })
                .collect()
        });
        // A class and operation's row of the JSON report's `cost.s3_classes`.
        let json = units
            .into_iter()
            .map(|u| {
                vec![
                    ("class", u.class.storage_class().into()),
                    ("op", u.op.into()),
                    ("usd_per_million_requests", u.per_million_requests.into()),
                    ("usd_per_gb", u.per_gb.into()),
                ]
            })
            .collect();
        Some(UnitCosts {
            title: "S3 classes: latency and cost".into(),
            columns: vec!["class", "op", "p50", "p99", "$/M requests", "$/GB"],
            labels: 2,
            rows,
            in_run: s.is_some(),
            how: format!(
                "{HOW}; latency is the request's total time, at {}",
                format_bytes(s.map_or(0, |s| s.payload_bytes))
            ),
            json_key: "s3_classes",
            json,
            per_message: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    //! The arithmetic against examples worked by hand from the built-in us-east-1 file (see
    //! `crate::lab_kit::cost::testing`).
    use std::sync::Arc;

    use super::*;
    use crate::lab_kit::cost::testing::{close, us_east_1};
    use crate::prices;
    use crate::tui::fixture;

    /// `seed-s3 --quick` described a live loop the matrix run does not have (`0.0 PUT/s
    /// measured ... 16 objects the live loop keeps`): a matrix is priced once.
    #[test]
    fn a_matrix_run_is_priced_once_not_as_a_live_loop() {
        // 10 objects of 100,000 B, once, uploaded and downloaded in both classes: 40 requests.
        //   Standard  10 × (0.005 + 0.0004) / 1,000                        = 0.000054
        //   Express   10 × (0.00113 + 0.00003) / 1,000                     = 0.0000116
        //             10 × 100,000 B / 2^30 × (0.0032 + 0.0006) per GB      = 0.00000353903
        //   total 0.00006913903 $
        let mut view = fixture::lab_moment(LabKind::S3);
        let s3 = view.snapshot.s3.as_mut().unwrap();
        s3.matrix = Some(vec![super::super::matrix::MatrixRow {
            case: super::super::matrix::Case {
                objects: 10,
                size: 100_000,
            },
            upload_express_s: 1.0,
            upload_standard_s: 2.0,
            download_express_s: 1.0,
            download_standard_s: 2.0,
            repetitions: 1,
        }]);
        let cost = view.snapshot.cost(&us_east_1());
        let lab = cost.lab(LabKind::S3.name()).unwrap();
        assert!(lab.items.is_empty(), "no hourly charge: {:?}", lab.items);
        assert_eq!(
            lab.missing.as_deref(),
            Some(
                format!(
                    "a matrix run: 40 PUTs and GETs in both classes, {} once at list price",
                    usd(0.000_069_139_03)
                )
                .as_str()
            )
        );
        assert!(!lab.notes.iter().any(|n| n.contains("live loop keeps")));
    }

    #[test]
    fn s3_standard_and_express_at_the_measured_rates() {
        // 2 PUT/s and 2 GET/s measured, 100,000 B objects, 1 loop keeping 16 of them
        // (1,600,000 B = 0.00149012 GB):
        //   Standard  PUT 2 × 3,600 / 1,000 × 0.005 = 0.036; GET × 0.0004 = 0.00288;
        //             storage 0.00149012 × 0.023 / 730 = 0.0000000469
        //             total 0.0388800469 $/h
        //   Express   PUT 7.2 × 0.00113 = 0.008136; GET 7.2 × 0.00003 = 0.000216;
        //             storage 0.00149012 × 0.11 / 730 = 0.000000224538;
        //             upload 7.2e8 B/h = 0.670552 GB × 0.0032 = 0.00214577;
        //             retrieval 0.670552 × 0.0006 = 0.000402331
        //             total 0.0109003231 $/h
        let mut view = fixture::lab_moment(LabKind::S3);
        let cost = view.snapshot.cost(&us_east_1());
        close(
            cost.lab(LabKind::S3.name()).unwrap().hourly(),
            0.038_880_046_949,
        );
        view.snapshot.s3.as_mut().unwrap().class = Class::ExpressOneZone;
        let express = view.snapshot.cost(&us_east_1());
        let lab = express.lab(LabKind::S3.name()).unwrap();
        assert_eq!(lab.items.len(), 5);
        close(lab.hourly(), 0.010_900_323_102);
        assert!(
            !lab.items[0].unverified,
            "Express's prices are the S3 FAQ's own"
        );
    }

    #[test]
    fn express_per_gb_charges_only_above_the_files_threshold() {
        // The same loop with 1,000,000 B objects and the launch rule (only the part of a request
        // above 512 KiB = 524,288 B is charged per GB): 475,712 B of each request.
        //   PUT 0.008136 + GET 0.000216 + storage 16e6 B = 0.0149012 GB × 0.11 / 730 = 0.00000224538
        //   upload 7,200 × 475,712 B = 3.18991 GB × 0.0032 = 0.0102077
        //   retrieval 3.18991 × 0.0006 = 0.00191395
        //   total 0.0204758560 $/h
        let text = prices::BUILTIN[0]
            .1
            .replace("per_gb_above = \"0B\"", "per_gb_above = \"512KiB\"");
        let p = Arc::new(Prices::parse(&text, "test.toml").unwrap());
        let mut view = fixture::lab_moment(LabKind::S3);
        let s3 = view.snapshot.s3.as_mut().unwrap();
        s3.class = Class::ExpressOneZone;
        s3.payload_bytes = 1_000_000;
        let cost = view
            .snapshot
            .cost(&Prices::choose(Some(&p), "us-east-1").unwrap());
        close(
            cost.lab(LabKind::S3.name()).unwrap().hourly(),
            0.020_475_856_022,
        );
        assert_eq!(cost.origin, "test.toml");
    }

    #[test]
    fn s3_classes_cost_per_million_requests_and_per_gb() {
        // At 100,000 B (93.1323 GB a million requests):
        //   Standard PUT 0.005 × 1,000 = 5.00 $/M, 5 / 93.1323 = 0.0536871 $/GB
        //   Express PUT 1.13 + 100,000 / 2^30 × 0.0032 × 1e6 = 1.13 + 0.298023 = 1.428023 $/M,
        //              1.428023 / 93.1323 = 0.0153333 $/GB
        let view = fixture::lab_moment(LabKind::S3);
        let units = class_units(view.snapshot.s3.as_ref().unwrap(), &us_east_1().prices);
        let find = |class, op: &str| {
            units
                .iter()
                .find(|u| u.class == class && u.op == op)
                .unwrap()
        };
        close(find(Class::Standard, "PUT").per_million_requests, 5.0);
        close(
            find(Class::Standard, "PUT").per_gb.unwrap(),
            0.053_687_091_2,
        );
        close(
            find(Class::ExpressOneZone, "PUT").per_million_requests,
            1.428_023_223_877,
        );
        close(
            find(Class::ExpressOneZone, "PUT").per_gb.unwrap(),
            0.015_333_282_611,
        );
    }
}
