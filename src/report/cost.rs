//! The report's cost section: what the configuration at the end of the run costs at list price
//! (each lab's charges, hourly and over a 730-hour month), and the trade-off tables: each Kinesis
//! consumer's and each S3 class's cost per million records (requests) and per GB beside its
//! latency percentiles. Text and Markdown here; the JSON form is [`Cost`], an optional field of
//! the public report.

use serde::{Deserialize, Serialize};

use super::Report;
use super::table::Table;
use crate::cost::{self, Prices, RunCost, usd, usd_or_dash};
use crate::units::ms;

/// The cost of the report's snapshot, with the prices given (`--prices`) or its region's.
pub fn run_cost(r: &Report) -> Option<RunCost> {
    let chosen = Prices::choose(r.prices.as_ref(), &r.snapshot.backend.region)?;
    Some(cost::of(&r.snapshot, &chosen))
}

fn prices_of(r: &Report) -> Option<std::sync::Arc<Prices>> {
    Prices::choose(r.prices.as_ref(), &r.snapshot.backend.region).map(|c| c.prices)
}

/// How the trade-off figures are made, said under their tables.
const KINESIS_HOW: &str = "cost per million records and per GB: (the stream's shard-hours and PUT payload units, which every consumer reads through, plus the consumer's own enhanced fan-out charges) at the asked rate, divided by the records (GB) the producer is asked for an hour";
const S3_HOW: &str = "cost per million requests and per GB moved at the current payload: the request price, plus S3 Express One Zone's per-GB charge on the charged part of each request; storage not included";

pub fn write(r: &Report, out: &mut String, md: bool) {
    let Some(c) = run_cost(r) else { return };
    if c.labs.is_empty() {
        return;
    }
    let heading = super::section_heading(md);
    heading(
        out,
        &format!(
            "What it costs: {} (prices from {}; a month is 730 h)",
            c.label(),
            c.origin
        ),
    );
    if let Some(note) = &c.note {
        out.push_str(&format!("- {note}\n"));
    }
    let mut t = Table::new(&["lab", "charge", "how", "$/hour", "$/month"]).labels(3);
    for lab in &c.labs {
        if let Some(why) = &lab.missing {
            t.row(vec![
                lab.lab.name().into(),
                "-".into(),
                why.clone(),
                "-".into(),
                "-".into(),
            ]);
            continue;
        }
        for i in &lab.items {
            t.row(vec![
                lab.lab.name().into(),
                format!("{}{}", i.what, if i.unverified { " *" } else { "" }),
                i.how.clone(),
                usd(i.hourly),
                usd(i.hourly * cost::HOURS_PER_MONTH),
            ]);
        }
        t.row(vec![
            lab.lab.name().into(),
            "total".into(),
            String::new(),
            usd(lab.hourly()),
            usd(lab.monthly()),
        ]);
    }
    out.push_str(&if md { t.markdown() } else { t.text() });
    for lab in &c.labs {
        for n in &lab.notes {
            out.push_str(&format!("- {}: {n}\n", lab.lab.name()));
        }
    }
    if !c.unverified.is_empty() {
        out.push_str(
            "- * unverified: these prices were not found in AWS's own text; where each comes from:\n",
        );
        for (key, why) in &c.unverified {
            out.push_str(&format!("  - {key}: {why}\n"));
        }
    }
    let Some(p) = prices_of(r) else { return };
    if let Some(k) = &r.snapshot.kinesis {
        heading(
            out,
            &format!("Kinesis consumers: latency and cost ({})", c.label()),
        );
        let mut t = Table::new(&["consumer", "p50", "p99", "$/M records", "$/GB"]);
        for (u, cs) in cost::consumer_units(k, &p).iter().zip(&k.consumers) {
            t.row(vec![
                u.name.clone(),
                ms(cs.arrival_to_receive.p50_us),
                ms(cs.arrival_to_receive.p99_us),
                usd_or_dash(u.per_million_records),
                usd_or_dash(u.per_gb),
            ]);
        }
        out.push_str(&if md { t.markdown() } else { t.text() });
        out.push_str(&format!("- {KINESIS_HOW}\n"));
    }
    if let Some(s) = &r.snapshot.s3 {
        heading(
            out,
            &format!("S3 classes: latency and cost ({})", c.label()),
        );
        let mut t = Table::new(&["class", "op", "p50", "p99", "$/M requests", "$/GB"]).labels(2);
        // A class the endpoint cannot serve is not beside the other: nothing of it was measured.
        let measured = |c: crate::services::s3::Class| {
            !(c == crate::services::s3::Class::ExpressOneZone && s.express_unsupported.is_some())
        };
        for u in cost::class_units(s, &p)
            .into_iter()
            .filter(|u| measured(u.class))
        {
            let o = s.ops.iter().find(|o| o.class == u.class && o.op == u.op);
            let lat = |f: fn(&crate::metrics::Summary) -> u64| {
                o.map_or_else(|| "-".to_string(), |o| ms(f(&o.total)))
            };
            t.row(vec![
                u.class.storage_class().into(),
                u.op.clone(),
                lat(|s| s.p50_us),
                lat(|s| s.p99_us),
                usd(u.per_million_requests),
                usd_or_dash(u.per_gb),
            ]);
        }
        out.push_str(&if md { t.markdown() } else { t.text() });
        out.push_str(&format!(
            "- {S3_HOW}; latency is the request's total time, at {}\n",
            crate::units::format_bytes(s.payload_bytes)
        ));
    }
}

// ---- the public JSON form ----

#[derive(Serialize, Deserialize)]
pub struct Cost {
    /// `list price, us-east-1, 2026-12-01`.
    pub label: String,
    pub region: String,
    /// The date the prices were taken.
    pub taken: String,
    /// `built-in` or the price file's path.
    pub prices: String,
    pub hours_per_month: f64,
    pub note: Option<String>,
    pub hourly_usd: f64,
    pub monthly_usd: f64,
    pub labs: Vec<LabCostJson>,
    pub unverified: Vec<Unverified>,
    pub kinesis_consumers: Vec<ConsumerCost>,
    pub s3_classes: Vec<ClassCost>,
}

#[derive(Serialize, Deserialize)]
pub struct LabCostJson {
    pub lab: String,
    pub hourly_usd: f64,
    pub monthly_usd: f64,
    pub items: Vec<ItemJson>,
    pub notes: Vec<String>,
    pub missing: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct ItemJson {
    pub what: String,
    pub how: String,
    pub hourly_usd: f64,
    pub unverified: bool,
}

#[derive(Serialize, Deserialize)]
pub struct Unverified {
    pub price: String,
    pub comes_from: String,
}

#[derive(Serialize, Deserialize)]
pub struct ConsumerCost {
    pub name: String,
    pub kind: crate::labs::kinesis::config::ConsumerKind,
    pub own_hourly_usd: f64,
    pub usd_per_million_records: Option<f64>,
    pub usd_per_gb: Option<f64>,
}

#[derive(Serialize, Deserialize)]
pub struct ClassCost {
    pub class: String,
    pub op: String,
    pub usd_per_million_requests: f64,
    pub usd_per_gb: Option<f64>,
}

/// The report's cost in its public form; None when no price file could be had.
pub fn json(r: &Report) -> Option<Cost> {
    let c = run_cost(r)?;
    let p = prices_of(r)?;
    Some(Cost {
        label: c.label(),
        region: c.region.clone(),
        taken: c.taken.clone(),
        prices: c.origin.clone(),
        hours_per_month: cost::HOURS_PER_MONTH,
        note: c.note.clone(),
        hourly_usd: c.hourly(),
        monthly_usd: c.hourly() * cost::HOURS_PER_MONTH,
        labs: c
            .labs
            .iter()
            .map(|l| LabCostJson {
                lab: l.lab.name().into(),
                hourly_usd: l.hourly(),
                monthly_usd: l.monthly(),
                items: l
                    .items
                    .iter()
                    .map(|i| ItemJson {
                        what: i.what.clone(),
                        how: i.how.clone(),
                        hourly_usd: i.hourly,
                        unverified: i.unverified,
                    })
                    .collect(),
                notes: l.notes.clone(),
                missing: l.missing.clone(),
            })
            .collect(),
        unverified: c
            .unverified
            .iter()
            .map(|(k, w)| Unverified {
                price: k.clone(),
                comes_from: w.clone(),
            })
            .collect(),
        kinesis_consumers: r
            .snapshot
            .kinesis
            .as_ref()
            .map(|k| {
                cost::consumer_units(k, &p)
                    .into_iter()
                    .map(|u| ConsumerCost {
                        name: u.name,
                        kind: u.kind,
                        own_hourly_usd: u.own_hourly,
                        usd_per_million_records: u.per_million_records,
                        usd_per_gb: u.per_gb,
                    })
                    .collect()
            })
            .unwrap_or_default(),
        s3_classes: r
            .snapshot
            .s3
            .as_ref()
            .map(|s| {
                cost::class_units(s, &p)
                    .into_iter()
                    .map(|u| ClassCost {
                        class: u.class.storage_class().into(),
                        op: u.op,
                        usd_per_million_requests: u.per_million_requests,
                        usd_per_gb: u.per_gb,
                    })
                    .collect()
            })
            .unwrap_or_default(),
    })
}
