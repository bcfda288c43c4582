//! The DynamoDB lab's configuration, priced: a provisioned table's capacity units by the hour, or
//! an on-demand table's request units at the rate the writer and reader consumed them; the
//! stream's read requests (each GetRecords call); and the Kinesis destination's change data
//! capture units (one per write, per 1 KB of the item), and the Kinesis data stream the changes go
//! to at Kinesis's prices (its shard, the changes' PUT payload units, its fan-out consumers and
//! their bytes read).

use crate::lab_kit::cost::prices::{Price, Section};
use crate::lab_kit::cost::{LabCost, Prices, item};
use crate::labs::LabKind;

use super::config::{Billing, CdcKind};
use super::snapshot::DynamoSnapshot;

pub const WCU_HOUR: &str = "dynamodb.wcu_hour";
pub const RCU_HOUR: &str = "dynamodb.rcu_hour";
pub const WRITE_REQUESTS: &str = "dynamodb.write_request_units_per_million";
pub const READ_REQUESTS: &str = "dynamodb.read_request_units_per_million";
pub const STREAMS_READS: &str = "dynamodb.streams_read_requests_per_million";
pub const CDC_UNITS: &str = "dynamodb.cdc_units_per_million";

/// Its section of a price file, `[dynamodb]`: the Standard table class's prices. The Price List
/// offer is AmazonDynamoDB; its usage types (AWS's billing documentation for DynamoDB) are
/// `ReadCapacityUnit-Hrs`, `WriteCapacityUnit-Hrs`, `ReadRequestUnits`, `WriteRequestUnits`,
/// `Streams-Requests` and `ChangeDataCaptureUnits-Kinesis`, each after a region's prefix outside
/// us-east-1. The `group` attribute (`DDB-WriteUnits`, `DDB-ReadUnits`, `DDB-StreamsReadRequests`,
/// `DDB-Kinesis`) tells the Standard table class's products from Standard-IA's (`...IA`): a third
/// party's reading of the price list (infracost's `dynamodb_table.go`), not AWS's text. Added after
/// the built-in files' first form, so a file may lack it.
pub const PRICES: &[Section] = &[Section {
    table: "dynamodb",
    offer: "AmazonDynamoDB",
    prices: &[
        Price {
            key: "wcu_hour",
            unit: "per provisioned WCU-hour",
            usage: &["WriteCapacityUnit-Hrs"],
            attrs: &[("group", "DDB-WriteUnits")],
            scale: 1.0,
        },
        Price {
            key: "rcu_hour",
            unit: "per provisioned RCU-hour",
            usage: &["ReadCapacityUnit-Hrs"],
            attrs: &[("group", "DDB-ReadUnits")],
            scale: 1.0,
        },
        Price {
            key: "write_request_units_per_million",
            unit: "per million on-demand write request units",
            usage: &["WriteRequestUnits"],
            attrs: &[("group", "DDB-WriteUnits")],
            scale: 1e6,
        },
        Price {
            key: "read_request_units_per_million",
            unit: "per million on-demand read request units",
            usage: &["ReadRequestUnits"],
            attrs: &[("group", "DDB-ReadUnits")],
            scale: 1e6,
        },
        Price {
            key: "streams_read_requests_per_million",
            unit: "per million DynamoDB Streams read requests",
            usage: &["Streams-Requests"],
            attrs: &[("group", "DDB-StreamsReadRequests")],
            scale: 1e6,
        },
        Price {
            key: "cdc_units_per_million",
            unit: "per million change data capture units (Kinesis Data Streams for DynamoDB)",
            usage: &["ChangeDataCaptureUnits-Kinesis"],
            attrs: &[("group", "DDB-Kinesis")],
            scale: 1e6,
        },
    ],
    sizes: &[],
    named: None,
    optional: true,
}];

/// The Kinesis prices of the stream a table's changes go to (Kinesis Data Streams for DynamoDB):
/// shard-hours, PUT payload units, fan-out consumer-shard-hours and fan-out's bytes read.
const DESTINATION: [&str; 4] = [
    "kinesis.shard_hour",
    "kinesis.put_payload_units_per_million",
    "kinesis.efo_consumer_shard_hour",
    "kinesis.efo_retrieval_per_gb",
];

/// What a change record adds to its item's bytes in the destination stream (its event name,
/// table, region, keys and times as JSON): latlab's estimate, an assumption.
const CHANGE_OVERHEAD: u64 = 400;

/// A unit price as the price file gives it: `$0.00065` (the report's dollars round to cents).
fn price(x: f64) -> String {
    format!("${x}")
}

/// Change data capture units of one write of `bytes` (one per 1 KB, rounded up).
pub fn cdc_units(bytes: u64) -> u64 {
    bytes.div_ceil(1024).max(1)
}

/// The lab's charges per hour, and the price keys they use.
pub fn cost(s: &DynamoSnapshot, p: &Prices) -> (LabCost, Vec<String>) {
    let lab = LabKind::Dynamodb.name();
    let keys = [
        WCU_HOUR,
        RCU_HOUR,
        WRITE_REQUESTS,
        READ_REQUESTS,
        STREAMS_READS,
        CDC_UNITS,
    ];
    let Some(v) = keys
        .iter()
        .map(|k| p.value(k))
        .collect::<Option<Vec<f64>>>()
    else {
        return (
            LabCost {
                lab,
                items: Vec::new(),
                notes: Vec::new(),
                missing: Some(format!(
                    "no DynamoDB prices ([dynamodb] {}) in the price file ({})",
                    keys.map(|k| k.trim_start_matches("dynamodb.")).join(", "),
                    p.origin
                )),
            },
            Vec::new(),
        );
    };
    let [wcu, rcu, wru, rru, streams, cdc] = [v[0], v[1], v[2], v[3], v[4], v[5]];
    let seconds = s.seconds.max(1.0);
    let mut items = Vec::new();
    let mut used = Vec::new();
    match s.billing {
        Billing::Provisioned { read, write } => {
            items.push(item(
                p,
                WCU_HOUR,
                "provisioned write capacity",
                format!("{} WCU × {} per WCU-hour", write, price(wcu)),
                write as f64 * wcu,
            ));
            items.push(item(
                p,
                RCU_HOUR,
                "provisioned read capacity",
                format!("{} RCU × {} per RCU-hour", read, price(rcu)),
                read as f64 * rcu,
            ));
            used.extend([WCU_HOUR, RCU_HOUR]);
        }
        Billing::OnDemand => {
            let w = s.writer.units / seconds;
            let r: f64 = s.readers.iter().map(|r| r.units).sum::<f64>() / seconds;
            items.push(item(
                p,
                WRITE_REQUESTS,
                "on-demand write request units",
                format!("{w:.1} units/s × 3,600 × {} per million", price(wru)),
                w * 3600.0 / 1e6 * wru,
            ));
            items.push(item(
                p,
                READ_REQUESTS,
                "on-demand read request units",
                format!("{r:.1} units/s × 3,600 × {} per million", price(rru)),
                r * 3600.0 / 1e6 * rru,
            ));
            used.extend([WRITE_REQUESTS, READ_REQUESTS]);
        }
    }
    let get_records: f64 = s
        .cdc
        .iter()
        .filter(|c| c.how.reads_stream() && !c.stopped)
        .map(|c| c.calls as f64)
        .sum::<f64>()
        / seconds;
    if get_records > 0.0 {
        items.push(item(
            p,
            STREAMS_READS,
            "DynamoDB Streams read requests",
            format!(
                "{get_records:.1} GetRecords/s × 3,600 × {} per million",
                price(streams)
            ),
            get_records * 3600.0 / 1e6 * streams,
        ));
        used.push(STREAMS_READS);
    }
    let fan_outs = s
        .cdc
        .iter()
        .filter(|c| c.how == CdcKind::FanOut && !c.stopped)
        .count();
    let mut notes = vec![
        "the Standard table class; storage, backups and the free tier are not priced; Lambda's \
         GetRecords calls are priced as the poller's are"
            .to_string(),
    ];
    if fan_outs > 0 {
        let units = s.writer.written as f64 * cdc_units(s.item_size) as f64 / seconds;
        items.push(item(
            p,
            CDC_UNITS,
            "change data capture units to Kinesis",
            format!(
                "{units:.1} units/s ({} a {} B write) × 3,600 × {} per million",
                cdc_units(s.item_size),
                s.item_size,
                price(cdc)
            ),
            units * 3600.0 / 1e6 * cdc,
        ));
        used.push(CDC_UNITS);
        // The Kinesis data stream the changes go to, at Kinesis's prices: its shard, its fan-out
        // consumers, each change a PUT payload unit (a change record is far under 25 KB but for
        // items near it) and the fan-out's bytes read.
        match DESTINATION.map(|k| p.value(k)) {
            [Some(shard), Some(put), Some(efo), Some(gb)] => {
                let writes = s.writer.written as f64 / seconds;
                let record = s.item_size + CHANGE_OVERHEAD;
                let put_units = writes * record.div_ceil(25 * 1024) as f64;
                let gb_hour =
                    writes * record as f64 * 3600.0 / crate::lab_kit::cost::GB * fan_outs as f64;
                for (key, what, how, hourly) in [
                    (
                        DESTINATION[0],
                        "the destination stream's shard",
                        format!("1 shard × {} per shard-hour", price(shard)),
                        shard,
                    ),
                    (
                        DESTINATION[1],
                        "the changes' PUT payload units",
                        format!(
                            "{put_units:.1} units/s × 3,600 × {} per million",
                            price(put)
                        ),
                        put_units * 3600.0 / 1e6 * put,
                    ),
                    (
                        DESTINATION[2],
                        "fan-out consumers on the destination",
                        format!("{fan_outs} consumer-shard(s) × {} per hour", price(efo)),
                        fan_outs as f64 * efo,
                    ),
                    (
                        DESTINATION[3],
                        "fan-out's bytes read",
                        format!(
                            "{gb_hour:.4} GB an hour ({} B a change) × {} per GB",
                            record,
                            price(gb)
                        ),
                        gb_hour * gb,
                    ),
                ] {
                    items.push(item(p, key, what, how, hourly));
                    used.push(key);
                }
            }
            _ => notes.push(format!(
                "the Kinesis data stream the changes go to is not priced: the price file ({}) \
                 lacks Kinesis's prices",
                p.origin
            )),
        }
    }
    (
        LabCost {
            lab,
            items,
            notes,
            missing: None,
        },
        used.into_iter().map(str::to_string).collect(),
    )
}

impl crate::labs::Priced for super::DynamoLab {
    fn cost(
        snap: &DynamoSnapshot,
        _complete: bool,
        prices: &Prices,
    ) -> Option<(LabCost, Vec<String>)> {
        snap.unavailable.is_none().then(|| cost(snap, prices))
    }
}

#[cfg(test)]
mod tests {
    //! The arithmetic against an example worked by hand from the built-in us-east-1 file.
    use super::*;
    use crate::lab_kit::cost::testing::{close, us_east_1};
    use crate::tui::fixture;

    #[test]
    fn the_samples_provisioned_capacity_and_stream_reads() {
        // The sample: 4,000 WCU × $0.00065 = 2.6; 3,000 RCU × $0.00013 = 0.39. Its stream readers
        // made 1,200 + 2,400 GetRecords calls in 120 s = 30/s × 3,600 = 108,000 / 1e6 × $0.20 =
        // 0.0216. Its fan-out consumer: 23,800 writes of 4 KB = 4 units each over 120 s = 793.33
        // units/s × 3,600 = 2,856,000 / 1e6 × $0.10 = 0.2856.
        let view = fixture::lab_moment(LabKind::Dynamodb);
        let cost = view.snapshot.cost(&us_east_1());
        let d = cost.lab(LabKind::Dynamodb.name()).unwrap();
        close(d.items[0].hourly, 2.6);
        close(d.items[1].hourly, 0.39);
        close(d.items[2].hourly, 0.0216);
        close(d.items[3].hourly, 0.2856);
        // Its destination stream at Kinesis's prices: 1 shard × $0.015; 198.33 changes/s of 4,496
        // B (one PUT payload unit each) × 3,600 = 714,000 / 1e6 × $0.014 = 0.009996; 1 fan-out
        // consumer-shard × $0.015; 198.33 × 4,496 B × 3,600 / 2^30 = 2.98963 GB × $0.013 = 0.038865.
        close(d.items[4].hourly, 0.015);
        close(d.items[5].hourly, 0.009996);
        close(d.items[6].hourly, 0.015);
        close(d.items[7].hourly, 0.038865834474563606);
        assert_eq!(cdc_units(1024), 1);
        assert_eq!(cdc_units(1025), 2);
    }
}
