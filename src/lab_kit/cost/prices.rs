//! A price file's data (`prices/REGION.toml`, or `--prices FILE`): the list prices of one
//! region, the date they were taken, the pages they came from, and which of them are
//! unverified; and its form, read against the sections it is given. Each lab declares its own
//! sections (`Facts::prices`, `labs/X/cost.rs`): every key a price must have, its unit, and how
//! `latlab prices fetch` finds it in AWS's Price List. This module names no lab; `crate::prices`
//! reads a file with every lab's sections. A bad file gets one line naming the file, the line and
//! the key.

use super::lines::{key_at_line, line_of_key};
use std::collections::BTreeMap;

use serde::Deserialize;

/// One section of a price file a lab prices from (`[kinesis]`, `[s3.standard]`): its table, the
/// Price List offer it is fetched from, and its keys.
#[derive(Clone, Copy, Debug)]
pub struct Section {
    /// Its table: `kinesis`, `s3.standard`.
    pub table: &'static str,
    /// The Price List offer its prices are fetched from (`AmazonKinesis`).
    pub offer: &'static str,
    /// Its prices.
    pub prices: &'static [Price],
    /// Its values that are byte sizes, not prices (`per_gb_above = "0B"`).
    pub sizes: &'static [Size],
    /// A table of prices by name within it (`[elasticache.node_hour]`, by node type).
    pub named: Option<Named>,
    /// Whether a file may leave it out (a lab added after the files were written): its lab's
    /// cost then says which price is missing.
    pub optional: bool,
}

/// One price of a section, and how `latlab prices fetch` picks its product in the offer file.
#[derive(Clone, Copy, Debug)]
pub struct Price {
    pub key: &'static str,
    /// What one unit of it is, for `latlab prices`: `per shard-hour`.
    pub unit: &'static str,
    /// The product's usage type, as its suffix (a region's prefix before it is allowed).
    pub usage: &'static [&'static str],
    /// Attributes the product must have besides.
    pub attrs: &'static [(&'static str, &'static str)],
    /// The file's unit per the price list's unit (per million: 1e6, per 1,000: 1e3).
    pub scale: f64,
}

/// A byte size of a section (not in the price list): its key, the value a fetched file writes,
/// and why (a comment in the fetched file).
#[derive(Clone, Copy, Debug)]
pub struct Size {
    pub key: &'static str,
    pub fetched: &'static str,
    pub why: &'static str,
}

/// A section's table of prices by name (`node_hour`, by node type).
#[derive(Clone, Copy, Debug)]
pub struct Named {
    pub table: &'static str,
    pub unit: &'static str,
    /// The names every fetched file must have.
    pub required: &'static [&'static str],
    /// The name a Price List product prices, if it is one of the table's: from the product's
    /// family and attributes.
    pub of_product: fn(Option<&str>, &BTreeMap<String, String>) -> Option<String>,
    /// What a product of a name must be, for the error when none is found (`{name}` is the
    /// name).
    pub filter: &'static str,
}

impl Section {
    /// The table its `unverified` and `fetched` keys name prices of: its named table's, when it
    /// has one and the key is not one of its own prices.
    fn priced(&self, key: &str) -> Option<String> {
        if self.prices.iter().any(|p| p.key == key) {
            return Some(format!("{}.{key}", self.table));
        }
        self.named
            .map(|n| format!("{}.{}.{key}", self.table, n.table))
    }
}

/// A region's list prices, in US dollars.
#[derive(Clone, Debug, PartialEq)]
pub struct Prices {
    pub region: String,
    /// The date the prices were read (YYYY-MM-DD).
    pub taken: String,
    pub source: Vec<String>,
    /// `built-in` or the file's path.
    pub origin: String,
    /// Each section's source, by its table (`kinesis`, `s3.standard`).
    pub sections: BTreeMap<String, String>,
    /// Every price by key (`kinesis.shard_hour`, `elasticache.node_hour.cache.t3.micro`).
    pub values: BTreeMap<String, f64>,
    /// Every byte size by key (`s3.express.per_gb_above`).
    pub sizes: BTreeMap<String, u64>,
    /// Prices not found in AWS's own text, by key: where each figure comes from.
    pub unverified: BTreeMap<String, String>,
    /// Prices read from AWS's Price List API (`latlab prices fetch`), by key: the offer and SKU
    /// each came from. These count as verified.
    pub fetched: BTreeMap<String, Fetched>,
}

/// Where a price read from AWS's Price List API came from: `[kinesis.fetched.shard_hour]`.
#[derive(Clone, Debug, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Fetched {
    /// Always `AWS Price List API`.
    pub source: String,
    /// The offer (`AmazonKinesis`).
    pub offer: String,
    /// The offer file's version and publication date.
    pub version: String,
    pub publication_date: String,
    /// The product's SKU and the price dimension's rate code.
    pub sku: String,
    #[serde(default)]
    pub rate_code: String,
    /// The price dimension's own words and unit.
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub unit: String,
}

/// The one source a fetched price may name.
pub const PRICE_LIST_SOURCE: &str = "AWS Price List API";

impl Fetched {
    /// `AWS Price List API: AmazonKinesis offer 20261120190000 (published 2026-11-20T19:00:00Z), SKU X`.
    pub fn line(&self) -> String {
        format!(
            "{}: {} offer {} (published {}), SKU {}",
            self.source, self.offer, self.version, self.publication_date, self.sku
        )
    }
}

/// The value at `path` (`s3.standard`) of a TOML table.
fn table_at<'t>(root: &'t toml::Table, path: &str) -> Option<&'t toml::Table> {
    let mut t = root;
    for part in path.split('.') {
        t = t.get(part)?.as_table()?;
    }
    Some(t)
}

/// A number of the file: a float or an integer.
fn number(v: &toml::Value) -> Option<f64> {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64))
}

impl Prices {
    /// Parses and checks a price file's text against `sections`: every section there (but an
    /// optional one), every key of each, each price a finite number of dollars at least 0,
    /// every `unverified` or `fetched` entry naming a price of its table.
    pub fn parse_with(text: &str, origin: &str, sections: &[Section]) -> anyhow::Result<Prices> {
        let root: toml::Table = toml::from_str(text).map_err(|e| {
            let at = e.span().map(|s| latlab_core::units::line_of(text, s.start));
            let key = at
                .and_then(|l| key_at_line(text, l))
                .map(|k| format!(" ({k})"))
                .unwrap_or_default();
            anyhow::anyhow!(
                "prices file {origin}: {}{key}",
                latlab_core::units::toml_error(text, &e)
            )
        })?;
        // Where a key is, as a toml error would say it: `line N, column M`.
        let at = |section: &str, key: &str| -> String {
            let line = line_of_key(text, section, key).unwrap_or_else(|| {
                // A table's header, for a key it lacks.
                text.lines()
                    .position(|l| l.trim() == format!("[{section}]"))
                    .map_or(1, |i| i + 1)
            });
            let column = text
                .lines()
                .nth(line - 1)
                .and_then(|l| l.find('=').map(|i| i + 3))
                .unwrap_or(1);
            format!("line {line}, column {column}")
        };
        let dotted = |section: &str, key: &str| {
            if section.is_empty() {
                key.to_string()
            } else {
                format!("{section}.{key}")
            }
        };
        let typed = |section: &str, key: &str, why: String| {
            anyhow::anyhow!(
                "prices file {origin}: {}: {why} ({})",
                at(section, key),
                dotted(section, key)
            )
        };
        let bad = |section: &str, key: &str, why: String| {
            let line = line_of_key(text, section, key)
                .map(|l| format!("line {l} "))
                .unwrap_or_default();
            anyhow::anyhow!(
                "prices file {origin}: {line}({}): {why}",
                dotted(section, key)
            )
        };
        let text_of = |t: &toml::Table, section: &str, key: &str| -> anyhow::Result<String> {
            match t.get(key) {
                Some(toml::Value::String(s)) => Ok(s.clone()),
                Some(v) => Err(typed(
                    section,
                    key,
                    format!("invalid type: {}, expected a string", v.type_str()),
                )),
                None => Err(typed(section, key, format!("missing field `{key}`"))),
            }
        };
        // The file's head.
        let region = text_of(&root, "", "region")?;
        let taken = text_of(&root, "", "taken")?;
        let source: Vec<String> = match root.get("source") {
            Some(toml::Value::Array(items)) => items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    typed(
                        "",
                        "source",
                        "invalid type: expected a list of strings".into(),
                    )
                })?,
            Some(v) => {
                return Err(typed(
                    "",
                    "source",
                    format!("invalid type: {}, expected a list of strings", v.type_str()),
                ));
            }
            None => return Err(typed("", "source", "missing field `source`".into())),
        };
        // Every top-level key is the head's or leads to a section.
        for key in root.keys() {
            let head = ["region", "taken", "source"].contains(&key.as_str());
            let leads = sections
                .iter()
                .any(|s| s.table == key || s.table.starts_with(&format!("{key}.")));
            if !head && !leads {
                let valid: Vec<String> = ["region", "taken", "source"]
                    .into_iter()
                    .map(str::to_string)
                    .chain(sections.iter().map(|s| format!("[{}]", s.table)))
                    .collect();
                return Err(typed(
                    "",
                    key,
                    format!(
                        "unknown field `{key}`, expected one of {}",
                        valid.join(", ")
                    ),
                ));
            }
        }
        let mut prices = Prices {
            region,
            taken,
            source,
            origin: origin.to_string(),
            sections: BTreeMap::new(),
            values: BTreeMap::new(),
            sizes: BTreeMap::new(),
            unverified: BTreeMap::new(),
            fetched: BTreeMap::new(),
        };
        // Each section, key by key: every key it must have, none it does not know.
        let mut read: Vec<(&Section, &toml::Table)> = Vec::new();
        for s in sections {
            let Some(t) = table_at(&root, s.table) else {
                if s.optional {
                    continue;
                }
                return Err(typed("", s.table, format!("missing field `{}`", s.table)));
            };
            let mut known: Vec<&str> = vec!["source"];
            known.extend(s.prices.iter().map(|p| p.key));
            known.extend(s.sizes.iter().map(|z| z.key));
            known.extend(s.named.iter().map(|n| n.table));
            // A section's subsections (`s3` holds `s3.standard`), and its own tables.
            let subsections: Vec<&str> = sections
                .iter()
                .filter_map(|o| o.table.strip_prefix(&format!("{}.", s.table)))
                .collect();
            known.extend(subsections.iter().copied());
            known.extend(["fetched", "unverified"]);
            for key in t.keys() {
                if !known.contains(&key.as_str()) {
                    let valid: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                    return Err(typed(
                        s.table,
                        key,
                        format!(
                            "unknown field `{key}`, expected one of {}",
                            valid.join(", ")
                        ),
                    ));
                }
            }
            let source = text_of(t, s.table, "source")?;
            prices.sections.insert(s.table.to_string(), source);
            for p in s.prices {
                match t.get(p.key) {
                    Some(v) => match number(v) {
                        Some(n) => {
                            prices.values.insert(format!("{}.{}", s.table, p.key), n);
                        }
                        None => {
                            return Err(typed(
                                s.table,
                                p.key,
                                format!(
                                    "invalid type: {} {v}, expected a price in dollars",
                                    v.type_str()
                                ),
                            ));
                        }
                    },
                    None => {
                        return Err(typed(s.table, p.key, format!("missing field `{}`", p.key)));
                    }
                }
            }
            for z in s.sizes {
                let v = t
                    .get(z.key)
                    .ok_or_else(|| typed(s.table, z.key, format!("missing field `{}`", z.key)))?;
                let size = match v {
                    toml::Value::Integer(i) => {
                        u64::try_from(*i).map_err(|_| "a size cannot be negative".to_string())
                    }
                    toml::Value::String(t) => latlab_core::units::parse_bytes(t),
                    other => Err(format!(
                        "invalid type: {}, expected a size such as 1048576, \"100KB\" or \"1MiB\"",
                        other.type_str()
                    )),
                }
                .map_err(|why| typed(s.table, z.key, why))?;
                prices.sizes.insert(format!("{}.{}", s.table, z.key), size);
            }
            if let Some(n) = s.named {
                let table = format!("{}.{}", s.table, n.table);
                let named = t
                    .get(n.table)
                    .and_then(toml::Value::as_table)
                    .ok_or_else(|| {
                        typed(s.table, n.table, format!("missing field `{}`", n.table))
                    })?;
                for (name, v) in named {
                    let Some(price) = number(v) else {
                        return Err(typed(
                            &table,
                            name,
                            format!(
                                "invalid type: {}, expected a price in dollars",
                                v.type_str()
                            ),
                        ));
                    };
                    prices.values.insert(format!("{table}.{name}"), price);
                }
            }
            read.push((s, t));
        }
        for (key, price) in &prices.values {
            if !price.is_finite() || *price < 0.0 {
                let (section, field) = split_key(sections, key);
                return Err(bad(
                    &section,
                    &field,
                    format!("a price is a number of dollars, 0 or more, not {price}"),
                ));
            }
        }
        if prices.region.trim().is_empty() {
            return Err(bad("", "region", "the region is empty".into()));
        }
        let date_ok = {
            let parts: Vec<&str> = prices.taken.split('-').collect();
            parts.len() == 3
                && [4, 2, 2]
                    .iter()
                    .zip(&parts)
                    .all(|(n, p)| p.len() == *n && p.chars().all(|c| c.is_ascii_digit()))
        };
        if !date_ok {
            return Err(bad(
                "",
                "taken",
                format!(
                    "the date the prices were taken, as YYYY-MM-DD, not '{}'",
                    prices.taken
                ),
            ));
        }
        if prices.source.is_empty() {
            return Err(bad(
                "",
                "source",
                "name the pricing pages the prices came from".into(),
            ));
        }
        // Each section's unverified prices, then its fetched ones: each names a price of its
        // table, and none is both.
        for (s, t) in &read {
            let at = format!("{}.unverified", s.table);
            for (key, why) in t
                .get("unverified")
                .and_then(|v| v.as_table())
                .into_iter()
                .flatten()
            {
                let full = s.priced(key).filter(|k| prices.values.contains_key(k));
                let Some(full) = full else {
                    return Err(bad(
                        &at,
                        key,
                        format!("names no price of [{}]", priced_table(s, key)),
                    ));
                };
                let Some(why) = why.as_str() else {
                    return Err(typed(&at, key, "invalid type: expected a string".into()));
                };
                prices.unverified.insert(full, why.to_string());
            }
        }
        for (s, t) in &read {
            for (key, f) in t
                .get("fetched")
                .and_then(|v| v.as_table())
                .into_iter()
                .flatten()
            {
                let at = format!("{}.fetched.{key}", s.table);
                let full = s.priced(key).filter(|k| prices.values.contains_key(k));
                let Some(full) = full else {
                    return Err(bad(
                        &at,
                        "source",
                        format!("names no price of [{}]", priced_table(s, key)),
                    ));
                };
                let f: Fetched = f.clone().try_into().map_err(|e: toml::de::Error| {
                    anyhow::anyhow!("prices file {origin}: [{at}]: {}", e.message())
                })?;
                if f.source != PRICE_LIST_SOURCE {
                    return Err(bad(
                        &at,
                        "source",
                        format!(
                            "a fetched price's source is \"{PRICE_LIST_SOURCE}\", not \"{}\"",
                            f.source
                        ),
                    ));
                }
                if prices.unverified.contains_key(&full) {
                    return Err(bad(
                        &format!("{}.unverified", s.table),
                        key,
                        format!(
                            "is also read from the Price List ([{at}]): a price is verified or not, not both"
                        ),
                    ));
                }
                prices.fetched.insert(full, f);
            }
        }
        Ok(prices)
    }

    /// The price at a key (`kinesis.shard_hour`, `s3.express.put_per_1000`,
    /// `elasticache.node_hour.cache.t3.micro`), if the file has it.
    pub fn value(&self, key: &str) -> Option<f64> {
        self.values.get(key).copied()
    }

    /// The price at a key a lab's section declares: every file has it (one without it is
    /// refused as it is read), but a file read without that section (NaN then shows it).
    pub fn price(&self, key: &str) -> f64 {
        self.value(key).unwrap_or(f64::NAN)
    }

    /// The byte size at a key (`s3.express.per_gb_above`), as [`Prices::price`] reads a price.
    pub fn size(&self, key: &str) -> u64 {
        self.sizes.get(key).copied().unwrap_or(0)
    }

    /// The prices of a named table (`elasticache.node_hour`), by name.
    pub fn named(&self, table: &str) -> Vec<(&str, f64)> {
        let prefix = format!("{table}.");
        self.values
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix(&prefix)?, *v)))
            .collect()
    }

    /// Where the price at a key comes from: why it is unverified, else where it was fetched,
    /// else its section's source.
    pub fn source_of(&self, key: &str) -> String {
        if let Some(why) = self.unverified.get(key) {
            return why.clone();
        }
        if let Some(f) = self.fetched.get(key) {
            return f.line();
        }
        self.sections
            .iter()
            .filter(|(table, _)| key.starts_with(&format!("{table}.")))
            .max_by_key(|(table, _)| table.len())
            .map(|(_, s)| s.clone())
            .unwrap_or_default()
    }

    /// Whether the price at this key is unverified.
    pub fn is_unverified(&self, key: &str) -> bool {
        self.unverified.contains_key(key)
    }
}

/// The table an `unverified` or `fetched` key of `s` must name a price of, for the error.
fn priced_table(s: &Section, key: &str) -> String {
    match (s.prices.iter().any(|p| p.key == key), s.named) {
        (false, Some(n)) => format!("{}.{}", s.table, n.table),
        _ => s.table.to_string(),
    }
}

/// A price's key split into its table and its field, as the file writes them.
fn split_key(sections: &[Section], key: &str) -> (String, String) {
    let table = sections
        .iter()
        .flat_map(|s| {
            std::iter::once(s.table.to_string())
                .chain(s.named.map(|n| format!("{}.{}", s.table, n.table)))
        })
        .filter(|t| key.starts_with(&format!("{t}.")))
        .max_by_key(String::len)
        .unwrap_or_default();
    let field = key
        .strip_prefix(&format!("{table}."))
        .unwrap_or(key)
        .to_string();
    (table, field)
}

/// The prices a run's cost is figured with, and why they are not the run's region's own.
#[derive(Clone, Debug, PartialEq)]
pub struct Chosen {
    pub prices: std::sync::Arc<Prices>,
    pub note: Option<String>,
}
