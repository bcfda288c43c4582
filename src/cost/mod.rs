//! What the configuration on screen costs: the hourly and monthly list price of each lab's
//! configuration, figured from the run's snapshot (shards, the producer's asked rate and payload,
//! the consumers and their kinds, the S3 class, payload and request rates, the Redis pair's node
//! type) and a price file ([`prices`]). Nothing is measured here and nothing is fetched: when a
//! key changes the snapshot, the next figure follows.
//!
//! A month is 730 hours (365 days × 24 h / 12), as AWS's pricing examples take it; a GB is 2^30
//! bytes, as the S3 FAQ's worked examples divide by 1,048,576 KB.

mod kinesis;
pub mod listing;
pub mod prices;
mod redis;
mod s3;
#[cfg(test)]
mod tests;

pub use kinesis::{ConsumerUnit, consumer_units};
pub use prices::{Chosen, Prices};
pub use s3::{ClassUnit, class_units};

use crate::labs::LabKind;
use crate::run::snapshot::Snapshot;

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
    pub lab: LabKind,
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

    pub fn lab(&self, lab: LabKind) -> Option<&LabCost> {
        self.labs.iter().find(|l| l.lab == lab)
    }

    pub fn hourly(&self) -> f64 {
        self.labs.iter().map(LabCost::hourly).sum()
    }
}

/// Prices every lab of the snapshot with `chosen`'s prices.
pub fn of(snap: &Snapshot, chosen: &Chosen) -> RunCost {
    let p = &chosen.prices;
    let mut labs = Vec::new();
    let mut used: Vec<String> = Vec::new();
    if let Some(k) = &snap.kinesis {
        let (lab, keys) = kinesis::cost(k, snap.complete, p);
        labs.push(lab);
        used.extend(keys);
    }
    if let Some(s) = &snap.s3 {
        let (lab, keys) = s3::cost(s, p);
        labs.push(lab);
        used.extend(keys);
    }
    if let Some(r) = snap.redis.as_ref().filter(|r| r.unavailable.is_none()) {
        let (lab, keys) = redis::cost(r, p);
        labs.push(lab);
        used.extend(keys);
    }
    used.sort();
    used.dedup();
    RunCost {
        region: p.region.clone(),
        taken: p.taken.clone(),
        origin: p.origin.clone(),
        note: chosen.note.clone(),
        labs,
        unverified: used
            .into_iter()
            .filter_map(|k| p.unverified.get(&k).map(|why| (k, why.clone())))
            .collect(),
    }
}

/// Dollars, with the digits a small figure needs: `$0.0153`, `$11.17`, `$0`.
pub fn usd(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x == 0.0 {
        "$0".into()
    } else if x >= 1.0 {
        format!("${x:.2}")
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
fn item(p: &Prices, key: &str, what: &str, how: String, hourly: f64) -> Item {
    Item {
        what: what.into(),
        how,
        hourly,
        unverified: p.is_unverified(key),
    }
}
