//! The Kinesis lab's configuration, priced (provisioned mode): shard-hours, PUT payload units at
//! the producer's asked rate and payload, enhanced fan-out consumer-shard-hours and data
//! retrieval for every fan-out consumer (Lambda on enhanced fan-out included). GetRecords reads
//! cost nothing beyond the shard-hours.

use crate::lab_kit::cost::prices::{Price, Section};
use crate::lab_kit::cost::{GB, Item, LabCost, Prices, UnitCosts, item, usd, usd_or_dash};
use crate::labs::LabKind;
use crate::labs::kinesis::config::ConsumerKind;
use crate::labs::kinesis::snapshot::{ConsumerSnapshot, KinesisSnapshot};
use latlab_core::units::format_bytes;

/// Its section of a price file, `[kinesis]` (provisioned capacity mode). The Price List
/// products: the usage types and operations infracost's price queries use
/// (github.com/infracost/infracost, internal/resources/aws/kinesis_stream.go), matched as a
/// suffix so that a region's prefix (`USE2-`) is allowed.
pub const PRICES: &[Section] = &[Section {
    table: "kinesis",
    offer: "AmazonKinesis",
    prices: &[
        Price {
            key: "shard_hour",
            unit: "per shard-hour",
            usage: &["Storage-ShardHour"],
            attrs: &[("operation", "shardHourStorage")],
            scale: 1.0,
        },
        Price {
            key: "put_payload_units_per_million",
            unit: "per million 25 KB PUT payload units",
            usage: &["PutRequestPayloadUnits"],
            attrs: &[("operation", "PutRequest")],
            scale: 1e6,
        },
        Price {
            key: "efo_consumer_shard_hour",
            unit: "per consumer-shard-hour",
            usage: &["EnhancedFanoutHour"],
            attrs: &[("operation", "ConsumerHour")],
            scale: 1.0,
        },
        Price {
            key: "efo_retrieval_per_gb",
            unit: "per GB read by fan-out",
            usage: &["ReadBytes"],
            attrs: &[("operation", "EnhancedFanoutDataRetrieval")],
            scale: 1.0,
        },
    ],
    sizes: &[],
    named: None,
    optional: false,
}];

/// Its prices, read from a price file (which has every one: a file without one is refused).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KinesisPrices {
    pub shard_hour: f64,
    pub put_payload_units_per_million: f64,
    pub efo_consumer_shard_hour: f64,
    pub efo_retrieval_per_gb: f64,
}

impl KinesisPrices {
    pub fn of(p: &Prices) -> KinesisPrices {
        KinesisPrices {
            shard_hour: p.price("kinesis.shard_hour"),
            put_payload_units_per_million: p.price("kinesis.put_payload_units_per_million"),
            efo_consumer_shard_hour: p.price("kinesis.efo_consumer_shard_hour"),
            efo_retrieval_per_gb: p.price("kinesis.efo_retrieval_per_gb"),
        }
    }
}

/// A PUT payload unit: 25 KB of a record (KB of 1,024 bytes, as AWS's Kinesis pricing counts).
pub const PUT_PAYLOAD_UNIT: u64 = 25 * 1024;

/// PUT payload units one record of `bytes` is billed as: whole units, at least one.
pub fn payload_units(bytes: u64) -> u64 {
    bytes.div_ceil(PUT_PAYLOAD_UNIT).max(1)
}

/// How far apart the run's end stops its consumers at most: it stops them all in one loop (a few
/// microseconds apart, seen 15 µs); one stopped earlier than this before the last was removed live
/// or could not run.
const END_STOP_SECS: f64 = 0.25;

/// Which consumers the cost counts: while the run goes on, those running; once it is complete,
/// those that ran to its end. A consumer removed live (`E`, `-`) is not priced in either, as the
/// pane showed it.
fn counted(k: &KinesisSnapshot, complete: bool) -> Vec<&ConsumerSnapshot> {
    // The run's end stopped every consumer still running: the last of those stops is the end
    // (none when a consumer has no stop, as in a snapshot of the run's figures before its end).
    let stops: Option<Vec<f64>> = k.consumers.iter().map(|c| c.stopped_at_secs).collect();
    let end = stops
        .filter(|_| complete)
        .and_then(|s| s.into_iter().reduce(f64::max));
    k.consumers
        .iter()
        .filter(|c| match (c.stopped_at_secs, end) {
            (None, _) => true,
            (Some(at), Some(end)) => at >= end - END_STOP_SECS,
            (Some(_), None) => false,
        })
        .collect()
}

/// What the lab's charges are figured from: the stream's shards, the producer's asked rate and
/// payload, and its fan-out consumers (from a snapshot while it runs, or from the scenario for a
/// plan).
#[derive(Clone, Debug, PartialEq)]
pub struct Priced {
    pub shards: usize,
    pub rate: f64,
    pub payload: u64,
    /// Fan-out consumers (SDK and Lambda's), and those of them Lambda's.
    pub fan_out: usize,
    pub lambda_efo: usize,
    /// Whether Lambda reads the stream at all (its own charges are not priced).
    pub lambda: bool,
    /// Whether a KCL consumer reads it (its lease table in DynamoDB is not priced).
    pub kcl: bool,
    /// Fan-out consumers that ran during the run and stopped before its end (removed live): not
    /// priced, and said.
    pub fan_out_stopped: usize,
}

impl Priced {
    pub fn of_snapshot(k: &KinesisSnapshot, complete: bool) -> Priced {
        let counted = counted(k, complete);
        let running =
            |f: &dyn Fn(ConsumerKind) -> bool| counted.iter().filter(|c| f(c.kind)).count();
        let fan_out = running(&|k| k.is_fan_out());
        Priced {
            shards: k.shards,
            rate: k.producer.asked_rate.max(0.0),
            payload: k.producer.payload_bytes,
            fan_out,
            lambda_efo: running(&|k| k == ConsumerKind::LambdaEfo),
            lambda: running(&|k| {
                matches!(k, ConsumerKind::LambdaEfo | ConsumerKind::LambdaStandard)
            }) > 0,
            kcl: running(&|k| k == ConsumerKind::Kcl) > 0,
            fan_out_stopped: k.consumers.iter().filter(|c| c.kind.is_fan_out()).count() - fan_out,
        }
    }

    /// As the scenario sets it up, before anything runs.
    pub fn of_scenario(s: &crate::labs::kinesis::config::KinesisScenario) -> Priced {
        let kinds: Vec<ConsumerKind> = s
            .consumers
            .iter()
            .flat_map(|c| c.expand())
            .map(|c| c.kind)
            .collect();
        Priced {
            shards: s.shards as usize,
            rate: s.producer.rate.max(0.0),
            payload: s.producer.payload,
            fan_out: kinds.iter().filter(|k| k.is_fan_out()).count(),
            lambda_efo: kinds
                .iter()
                .filter(|k| **k == ConsumerKind::LambdaEfo)
                .count(),
            lambda: kinds
                .iter()
                .any(|k| matches!(k, ConsumerKind::LambdaEfo | ConsumerKind::LambdaStandard)),
            kcl: kinds.contains(&ConsumerKind::Kcl),
            fan_out_stopped: 0,
        }
    }
}

/// The charges per hour of a configuration, and the price keys they use.
pub fn priced(k: &Priced, p: &Prices) -> (LabCost, Vec<String>) {
    let kp = KinesisPrices::of(p);
    let shards = k.shards as f64;
    let (rate, payload, fan_out, lambda_efo) = (k.rate, k.payload, k.fan_out, k.lambda_efo);
    let units = payload_units(payload);
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
    if k.kcl {
        notes.push(
            "KCL consumers read within the shard-hours too; a KCL application's lease table (DynamoDB) is not priced: latlab's KCL consumers keep no leases".into(),
        );
    }
    if k.lambda {
        notes.push("Lambda's own charges (requests, duration) are not priced".into());
    }
    if k.fan_out_stopped > 0 {
        notes.push(format!(
            "the fan-out consumers changed during the run: {} of the {} that ran stopped before the end (removed, or the endpoint could not serve them) and {} not priced",
            k.fan_out_stopped,
            k.fan_out_stopped + fan_out,
            if k.fan_out_stopped == 1 { "is" } else { "are" }
        ));
    }
    (
        LabCost {
            lab: LabKind::Kinesis.name(),
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
    let kp = KinesisPrices::of(p);
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

/// How the trade-off figures are made, said under their table.
const HOW: &str = "cost per million records and per GB: (the stream's shard-hours and PUT payload units, which every consumer reads through, plus the consumer's own enhanced fan-out charges) at the asked rate, divided by the records (GB) the producer is asked for an hour";

impl crate::labs::Priced for super::KinesisLab {
    /// The lab's charges per hour, and the price keys they use.
    fn cost(k: &KinesisSnapshot, complete: bool, p: &Prices) -> Option<(LabCost, Vec<String>)> {
        Some(priced(&Priced::of_snapshot(k, complete), p))
    }

    /// The consumers' trade-off table: each one's latency beside what it costs per million records
    /// and per GB.
    fn unit_costs(k: Option<&KinesisSnapshot>, p: &Prices) -> Option<UnitCosts> {
        let units = k.map(|k| consumer_units(k, p)).unwrap_or_default();
        let rows = k.map_or_else(Vec::new, |k| {
            units
                .iter()
                .zip(&k.consumers)
                .map(|(u, c)| {
                    vec![
                        u.name.clone(),
                        c.arrival_to_receive.ms(c.arrival_to_receive.p50_us),
                        c.arrival_to_receive.ms(c.arrival_to_receive.p99_us),
                        usd_or_dash(u.per_million_records),
                        usd_or_dash(u.per_gb),
                    ]
                })
                .collect()
        });
        // A consumer's row of the JSON report's `cost.kinesis_consumers`.
        let json = units
            .into_iter()
            .map(|u| {
                vec![
                    ("name", u.name.into()),
                    ("kind", serde_json::to_value(u.kind).unwrap_or_default()),
                    ("own_hourly_usd", u.own_hourly.into()),
                    ("usd_per_million_records", u.per_million_records.into()),
                    ("usd_per_gb", u.per_gb.into()),
                ]
            })
            .collect();
        // Each consumer beside other labs' consumers of messages: its send -> receive, a record
        // being a message.
        let per_message = k.map_or_else(Vec::new, |k| {
            consumer_units(k, p)
                .into_iter()
                .zip(&k.consumers)
                .map(|(u, c)| crate::lab_kit::cost::PerMessage {
                    lab: crate::labs::LabKind::Kinesis.name(),
                    consumer: u.name,
                    send_to_receive: c.send_to_receive,
                    usd_per_million: u.per_million_records,
                })
                .collect()
        });
        Some(UnitCosts {
            title: "Kinesis consumers: latency and cost".into(),
            columns: vec!["consumer", "p50", "p99", "$/M records", "$/GB"],
            labels: 1,
            rows,
            in_run: k.is_some(),
            how: HOW.into(),
            json_key: "kinesis_consumers",
            json,
            per_message,
        })
    }
}

#[cfg(test)]
mod tests {
    //! The arithmetic against examples worked by hand from the built-in us-east-1 file (see
    //! `crate::lab_kit::cost::testing`).
    use super::*;
    use crate::lab_kit::cost::testing::{close, us_east_1};
    use crate::labs::kinesis::config::ConsumerKind;
    use crate::tui::fixture;

    #[test]
    fn put_payload_units_round_each_record_up_to_25_kb() {
        // 25 KB = 25,600 B: a byte more is a second unit; 1 MB (1,048,576 B) is 41 units, and a
        // record of 1 B is still one.
        assert_eq!(payload_units(1), 1);
        assert_eq!(payload_units(25_600), 1);
        assert_eq!(payload_units(25_601), 2);
        assert_eq!(payload_units(1_048_576), 41);
    }

    #[test]
    fn the_demo_stream_with_two_fan_out_consumers() {
        // 1 shard, 5 records/s of 128 B asked, 2 fan-out consumers (SDK, Lambda) and 2 pollers:
        //   shard-hours        1 × 0.015                                   = 0.015
        //   PUT payload units  5 × 1 unit × 3,600 = 18,000 / 1e6 × 0.014   = 0.000252
        //   EFO shard-hours    2 × 1 × 0.015                               = 0.030
        //   EFO retrieval      5 × 128 × 3,600 × 2 = 4,608,000 B / 2^30
        //                      = 0.00429153 GB × 0.013                     = 0.0000557899
        //   total 0.0453077899 $/h; × 730 = 33.0746867 $/month
        let view = fixture::lab_moment(LabKind::Kinesis);
        let cost = view.snapshot.cost(&us_east_1());
        let k = cost.lab(LabKind::Kinesis.name()).unwrap();
        let hourly: Vec<f64> = k.items.iter().map(|i| i.hourly).collect();
        close(hourly[0], 0.015);
        close(hourly[1], 0.000252);
        close(hourly[2], 0.030);
        close(hourly[3], 4_608_000.0 / GB * 0.013);
        close(k.hourly(), 0.045_307_789_947_5);
        close(k.monthly(), 33.074_686_661_7);
        assert_eq!(cost.label(), "list price, us-east-1, 2026-12-01");
        assert!(k.unverified(), "the Kinesis prices are not AWS's own text");
        assert!(
            k.line(&cost).starts_with(
                "cost $0.0453/h · $33.07/mo (730 h) · list price, us-east-1, 2026-12-01"
            ),
            "{}",
            k.line(&cost)
        );
    }

    #[test]
    fn three_shards_large_records_and_a_consumer_removed_live_is_not_priced() {
        // 3 shards, 100 records/s of 60,000 B (3 units: 51,200 < 60,000 <= 76,800), one fan-out
        // consumer running and one stopped (not counted while the run goes on):
        //   shard-hours        3 × 0.015                                   = 0.045
        //   PUT payload units  100 × 3 × 3,600 = 1,080,000 / 1e6 × 0.014   = 0.01512
        //   EFO shard-hours    1 × 3 × 0.015                               = 0.045
        //   EFO retrieval      100 × 60,000 × 3,600 = 2.16e10 B / 2^30
        //                      = 20.1165378 GB × 0.013                     = 0.2615149
        //   total 0.366635379 $/h
        let mut view = fixture::lab_moment(LabKind::Kinesis);
        let k = view.snapshot.kinesis.as_mut().unwrap();
        k.shards = 3;
        k.producer.asked_rate = 100.0;
        k.producer.payload_bytes = 60_000;
        k.consumers.retain(|c| c.kind == ConsumerKind::Efo);
        let mut stopped = k.consumers[0].clone();
        stopped.stopped_at_secs = Some(12.0);
        k.consumers.push(stopped);
        let cost = view.snapshot.cost(&us_east_1());
        close(
            cost.lab(LabKind::Kinesis.name()).unwrap().hourly(),
            0.366_635_378_952,
        );
        // Once the run is complete, the consumer removed at 12 s is still not priced (the
        // quit summary priced it: `3 fan-out consumers` where the pane showed 2), and the
        // report says the configuration changed.
        view.snapshot.complete = true;
        let k = view.snapshot.kinesis.as_mut().unwrap();
        k.consumers[0].stopped_at_secs = Some(30.000_004);
        let complete = view.snapshot.cost(&us_east_1());
        let lab = complete.lab(LabKind::Kinesis.name()).unwrap();
        close(lab.hourly(), 0.366_635_378_952);
        assert!(
            lab.notes.iter().any(|n| n
                == "the fan-out consumers changed during the run: 1 of the 2 that ran stopped before the end (removed, or the endpoint could not serve them) and is not priced"),
            "{:?}",
            lab.notes
        );
        // Both ran to the end (the run stops them microseconds apart): both are priced, a
        // second 0.045 + 0.2615149.
        let k = view.snapshot.kinesis.as_mut().unwrap();
        k.consumers[1].stopped_at_secs = Some(30.000_019);
        let both = view.snapshot.cost(&us_east_1());
        let lab = both.lab(LabKind::Kinesis.name()).unwrap();
        close(
            lab.hourly(),
            0.366_635_378_952 + 0.045 + 2.16e10 / GB * 0.013,
        );
        assert!(
            !lab.notes
                .iter()
                .any(|n| n.contains("changed during the run"))
        );
    }

    #[test]
    fn consumers_cost_per_million_records_and_per_gb() {
        // The demo stream: the stream's own 0.015 + 0.000252 = 0.015252 $/h over 18,000 records/h
        // (0.018 million) and 2,304,000 B/h (0.00214577 GB):
        //   a poller          0.015252 / 0.018                            = 0.847333 $/M records
        //                     0.015252 / 0.00214577                       = 7.107947 $/GB
        //   a fan-out reader  (0.015252 + 0.015 + 0.00214577 × 0.013) / 0.018 = 1.682216 $/M
        let view = fixture::lab_moment(LabKind::Kinesis);
        let k = view.snapshot.kinesis.as_ref().unwrap();
        let units = consumer_units(k, &us_east_1().prices);
        let poller = units
            .iter()
            .find(|u| u.kind == ConsumerKind::Poller)
            .unwrap();
        close(poller.per_million_records.unwrap(), 0.847_333_333_333);
        close(poller.per_gb.unwrap(), 7.107_947_178_667);
        assert_eq!(poller.own_hourly, 0.0);
        let efo = units.iter().find(|u| u.kind == ConsumerKind::Efo).unwrap();
        close(efo.per_million_records.unwrap(), 1.682_216_387_431);
        close(efo.per_gb.unwrap(), 14.111_453_845_333);
        // No records asked for: no per-record figure.
        let mut idle = k.clone();
        idle.producer.asked_rate = 0.0;
        assert!(
            consumer_units(&idle, &us_east_1().prices)[0]
                .per_million_records
                .is_none()
        );
    }
}
