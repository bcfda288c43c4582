//! The report's cost section: what the configuration at the end of the run costs at list price
//! (each lab's charges, hourly and over a 730-hour month), and each lab's trade-off table (its
//! `Priced::unit_costs`: a Kinesis consumer's or an S3 class's cost per million records or requests
//! and per GB beside its latency percentiles). Text and Markdown here; the JSON form is [`Cost`],
//! the public report.

use serde::{Deserialize, Serialize};

use super::Report;
use super::table::Table;
use crate::lab_kit::cost::{self, Prices, RunCost, usd};

/// The cost of the report's snapshot, with the prices given (`--prices`) or its region's.
pub fn run_cost(r: &Report) -> Option<RunCost> {
    let chosen = Prices::choose(r.prices.as_ref(), &r.snapshot.backend.region)?;
    Some(r.snapshot.cost(&chosen))
}

fn prices_of(r: &Report) -> Option<std::sync::Arc<Prices>> {
    Prices::choose(r.prices.as_ref(), &r.snapshot.backend.region).map(|c| c.prices)
}

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
                lab.lab.into(),
                "-".into(),
                why.clone(),
                "-".into(),
                "-".into(),
            ]);
            continue;
        }
        for i in &lab.items {
            t.row(vec![
                lab.lab.into(),
                format!("{}{}", i.what, if i.unverified { " *" } else { "" }),
                i.how.clone(),
                usd(i.hourly),
                usd(i.hourly * cost::HOURS_PER_MONTH),
            ]);
        }
        t.row(vec![
            lab.lab.into(),
            "total".into(),
            String::new(),
            usd(lab.hourly()),
            usd(lab.monthly()),
        ]);
    }
    out.push_str(&if md { t.markdown() } else { t.text() });
    for lab in &c.labs {
        for n in &lab.notes {
            out.push_str(&format!("- {}: {n}\n", lab.lab));
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
    let tables: Vec<cost::UnitCosts> = r
        .snapshot
        .unit_costs(&p)
        .into_iter()
        .filter(|u| u.in_run)
        .collect();
    // Two labs or more that deliver messages (a stream beside a queue): every consumer in one
    // table, by the same latency and the same unit.
    let across: Vec<&cost::PerMessage> = tables.iter().flat_map(|u| &u.per_message).collect();
    let labs = {
        let mut l: Vec<&str> = across.iter().map(|m| m.lab).collect();
        l.dedup();
        l
    };
    if labs.len() > 1 {
        heading(
            out,
            &format!(
                "{}: every consumer by latency and cost per million messages ({})",
                labs.join(" and "),
                c.label()
            ),
        );
        let mut t = Table::new(&[
            "lab",
            "consumer",
            "send -> receive p50",
            "p99",
            "$/M messages",
        ])
        .labels(2);
        for m in &across {
            t.row(vec![
                m.lab.to_string(),
                m.consumer.clone(),
                m.send_to_receive.ms(m.send_to_receive.p50_us),
                m.send_to_receive.ms(m.send_to_receive.p99_us),
                cost::usd_or_dash(m.usd_per_million),
            ]);
        }
        out.push_str(&if md { t.markdown() } else { t.text() });
        out.push_str(
            "- send -> receive: from the producer's send to the consumer's first receipt (Lambda: \
             its invocation); $/M messages: each lab's own figure, below\n",
        );
    }
    for u in tables {
        heading(out, &format!("{} ({})", u.title, c.label()));
        let mut t = Table::new(&u.columns).labels(u.labels);
        for row in u.rows {
            t.row(row);
        }
        out.push_str(&if md { t.markdown() } else { t.text() });
        out.push_str(&format!("- {}\n", u.how));
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
    /// Each lab's trade-off table under its own key (`kinesis_consumers`, `s3_classes`), its
    /// rows as the lab writes them (`labs/X/cost.rs`).
    #[serde(flatten)]
    pub units: std::collections::BTreeMap<String, Rows>,
}

/// A trade-off table's rows, each an object whose fields keep the order its lab wrote them in.
pub struct Rows(pub Vec<Vec<(String, serde_json::Value)>>);

impl Serialize for Rows {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        struct Row<'a>(&'a [(String, serde_json::Value)]);
        impl Serialize for Row<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
            }
        }
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for row in &self.0 {
            seq.serialize_element(&Row(row))?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Rows {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Rows, D::Error> {
        let rows = Vec::<serde_json::Map<String, serde_json::Value>>::deserialize(d)?;
        Ok(Rows(
            rows.into_iter().map(|r| r.into_iter().collect()).collect(),
        ))
    }
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
                lab: l.lab.into(),
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
        units: r
            .snapshot
            .unit_costs(&p)
            .into_iter()
            .map(|u| {
                let rows = u
                    .json
                    .into_iter()
                    .map(|row| row.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
                (u.json_key.to_string(), Rows(rows.collect()))
            })
            .collect(),
    })
}
