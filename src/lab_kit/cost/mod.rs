//! What the configuration on screen costs: the hourly and monthly list price of each lab's
//! configuration, figured from the run's snapshot (shards, the producer's asked rate and payload,
//! the consumers and their kinds, the S3 class, payload and request rates, the Redis pair's node
//! type) and a price file ([`prices`]). Nothing is measured here and nothing is fetched: when a
//! key changes the snapshot, the next figure follows.
//!
//! A month is 730 hours (365 days × 24 h / 12), as AWS's pricing examples take it; a GB is 2^30
//! bytes, as the S3 FAQ's worked examples divide by 1,048,576 KB.

//!
//! This is the base each lab prices its own configuration on (`labs/X/cost.rs`, through
//! `Priced::cost`): the price file's data and form (each lab declares its sections), a charge, a
//! lab's total and the run's. It names no lab; `crate::prices` reads the files with every lab's
//! sections.

pub mod cap;
mod lines;
pub mod prices;

/// What the labs' cost tests share.
#[cfg(test)]
pub mod testing {
    use super::prices::{Chosen, Prices};

    pub fn us_east_1() -> Chosen {
        Prices::choose(None, "us-east-1").expect("the built-in us-east-1 file parses")
    }

    pub fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} != {b}");
    }
}

pub use prices::{Chosen, Prices, Section};

/// Hours in the month the monthly figures are for.
pub const HOURS_PER_MONTH: f64 = 730.0;
/// Bytes in a GB, as AWS bills data.
pub const GB: f64 = 1_073_741_824.0;

/// One charge of a lab's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// What is charged: `shard-hours`, `PUT payload units`, ...
    pub what: String,
    /// How the figure is made, e.g. `1 shard × $0.015 per shard-hour`.
    pub how: String,
    /// Dollars per hour.
    pub hourly: f64,
    /// The price it uses is unverified (see the price file).
    pub unverified: bool,
}

/// One lab's configuration, priced.
#[derive(Clone, Debug, PartialEq)]
pub struct LabCost {
    /// The lab, as screens name it ("Kinesis").
    pub lab: &'static str,
    pub items: Vec<Item>,
    /// What the figures assume or leave out.
    pub notes: Vec<String>,
    /// Why the lab could not be priced (no price for its node type): then it has no items.
    pub missing: Option<String>,
}

impl LabCost {
    pub fn hourly(&self) -> f64 {
        self.items.iter().map(|i| i.hourly).sum()
    }

    pub fn monthly(&self) -> f64 {
        self.hourly() * HOURS_PER_MONTH
    }

    pub fn unverified(&self) -> bool {
        self.items.iter().any(|i| i.unverified)
    }

    /// One line for a pane's edge: `$0.0153/h · $11.17/mo (730 h) · list price, us-east-1,
    /// 2026-12-01`.
    pub fn line(&self, cost: &RunCost) -> String {
        match &self.missing {
            Some(why) => format!("cost: {why}"),
            None => format!(
                "cost {}/h · {}/mo (730 h) · {}{}",
                usd(self.hourly()),
                usd(self.monthly()),
                cost.label(),
                if self.unverified() {
                    " · unverified prices"
                } else {
                    ""
                }
            ),
        }
    }
}

/// The run's configuration, priced: each lab's part, the prices' region and date.
#[derive(Clone, Debug, PartialEq)]
pub struct RunCost {
    pub region: String,
    pub taken: String,
    /// `built-in` or the price file's path.
    pub origin: String,
    /// Why the prices are not the run's region's own, when they are not.
    pub note: Option<String>,
    pub labs: Vec<LabCost>,
    /// The unverified prices the figures use: (key, where the figure comes from).
    pub unverified: Vec<(String, String)>,
}

impl RunCost {
    /// `list price, us-east-1, 2026-12-01`: what every cost figure says it is.
    pub fn label(&self) -> String {
        format!("list price, {}, {}", self.region, self.taken)
    }

    /// The part of the lab screens name `lab` ("Kinesis").
    pub fn lab(&self, lab: &str) -> Option<&LabCost> {
        self.labs.iter().find(|l| l.lab == lab)
    }

    pub fn hourly(&self) -> f64 {
        self.labs.iter().map(LabCost::hourly).sum()
    }
}

impl RunCost {
    /// The run's cost from its labs' parts (each with the price keys it used), in screen order.
    pub fn of(chosen: &Chosen, parts: Vec<(LabCost, Vec<String>)>) -> RunCost {
        let p = &chosen.prices;
        let mut used: Vec<String> = parts.iter().flat_map(|(_, k)| k.clone()).collect();
        used.sort();
        used.dedup();
        RunCost {
            region: p.region.clone(),
            taken: p.taken.clone(),
            origin: p.origin.clone(),
            note: chosen.note.clone(),
            labs: parts.into_iter().map(|(lab, _)| lab).collect(),
            unverified: used
                .into_iter()
                .filter_map(|k| p.unverified.get(&k).map(|why| (k, why.clone())))
                .collect(),
        }
    }
}

/// A lab's trade-off table: what each of its subjects (a consumer, a class and operation) costs
/// per unit it moves, beside its latency, for the report (text and JSON).
#[derive(Clone, Debug, PartialEq)]
pub struct UnitCosts {
    /// `Kinesis consumers: latency and cost` (the report adds the prices' label).
    pub title: String,
    pub columns: Vec<&'static str>,
    /// How many leading columns are labels.
    pub labels: usize,
    /// One row of cells per subject.
    pub rows: Vec<Vec<String>>,
    /// The lab is in the run: its table is shown (with no rows if it has no subjects).
    pub in_run: bool,
    /// How the figures are made, said under the table.
    pub how: String,
    /// Its key in the JSON report's cost (`kinesis_consumers`), and its rows there: present (as
    /// an empty list) even when the lab is not in the run, as the schema requires.
    pub json_key: &'static str,
    pub json: Vec<JsonRow>,
    /// Its consumers of messages (a stream's records, a queue's messages), each by its send ->
    /// receive latency and its cost per million messages: what the report sets side by side
    /// across labs when a run has more than one lab that delivers messages (`queue-or-stream`).
    pub per_message: Vec<PerMessage>,
}

/// One consumer of messages, for the table across labs.
#[derive(Clone, Debug, PartialEq)]
pub struct PerMessage {
    /// Its lab, as screens name it.
    pub lab: &'static str,
    pub consumer: String,
    /// Send -> receive, the same quantity whatever the lab.
    pub send_to_receive: crate::metrics::Summary,
    pub usd_per_million: Option<f64>,
}

/// One row of a trade-off table as the JSON report writes it: its fields, in order.
pub type JsonRow = Vec<(&'static str, serde_json::Value)>;

/// Dollars, with the digits a small figure needs: `$0.0153`, `$11.17`, `$0`.
pub fn usd(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x == 0.0 {
        "$0".into()
    } else if x >= 1.0 {
        // Whole dollars with separators: $1,163.63.
        let cents = (x * 100.0).round() as u64;
        format!(
            "${}.{:02}",
            latlab_core::units::thousands(cents / 100),
            cents % 100
        )
    } else if x >= 0.0001 {
        format!("${x:.4}")
    } else {
        format!("${x:.6}")
    }
}

/// `$0.0153/h`-style figure of an optional per-unit cost, `-` when there is none.
pub fn usd_or_dash(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), usd)
}

/// An item, marking it unverified when its price key is.
pub fn item(p: &Prices, key: &str, what: &str, how: String, hourly: f64) -> Item {
    Item {
        what: what.into(),
        how,
        hourly,
        unverified: p.is_unverified(key),
    }
}
