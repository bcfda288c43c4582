//! A price file (`prices/REGION.toml`, or `--prices FILE`): the list prices of one region, the
//! date they were taken, the pages they came from, and which of them are unverified. The files
//! for us-east-1 and ap-northeast-1 are compiled in; nothing is fetched at run time. A bad file
//! gets one line naming the file, the line and the key.

use super::lines::{key_at_line, line_of_key};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use anyhow::Context;
use serde::Deserialize;

use crate::units::Bytes;

/// The built-in price files: (region, file text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("us-east-1", include_str!("../../prices/us-east-1.toml")),
    (
        "ap-northeast-1",
        include_str!("../../prices/ap-northeast-1.toml"),
    ),
];

/// The region whose prices stand in when the run's region has no file.
pub const FALLBACK_REGION: &str = "us-east-1";

#[derive(Clone, Debug, PartialEq)]
pub struct KinesisPrices {
    pub source: String,
    pub shard_hour: f64,
    pub put_payload_units_per_million: f64,
    pub efo_consumer_shard_hour: f64,
    pub efo_retrieval_per_gb: f64,
}

/// One S3 storage class's prices. S3 Standard has no per-GB request charges (zero here).
#[derive(Clone, Debug, PartialEq)]
pub struct S3Prices {
    pub source: String,
    pub put_per_1000: f64,
    pub get_per_1000: f64,
    pub storage_gb_month: f64,
    pub upload_per_gb: f64,
    pub retrieval_per_gb: f64,
    /// The per-GB charges apply to the part of each request above this many bytes.
    pub per_gb_above: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ElastiCachePrices {
    pub source: String,
    /// On-demand price of one node-hour, by node type.
    pub node_hour: BTreeMap<String, f64>,
}

/// A section of prices by name (`[sqs]`: `source`, then `KEY = PRICE` lines).
#[derive(Clone, Debug, PartialEq)]
pub struct ServicePrices {
    pub source: String,
    pub prices: BTreeMap<String, f64>,
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
    pub kinesis: KinesisPrices,
    pub s3_standard: S3Prices,
    pub s3_express: S3Prices,
    pub elasticache: ElastiCachePrices,
    /// Any other service's section (`[sqs]`): a lab added later keeps its prices in a section of
    /// its own, read here without a type of its own, `SECTION.KEY` by [`Prices::value`].
    pub services: BTreeMap<String, ServicePrices>,
    /// Prices not found in AWS's own text, by key (`kinesis.shard_hour`,
    /// `elasticache.node_hour.cache.t3.micro`): where each figure comes from.
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

// ---- the file form ----

#[derive(Deserialize)]
struct File {
    region: String,
    taken: String,
    source: Vec<String>,
    kinesis: KinesisFile,
    s3: S3File,
    elasticache: ElastiCacheFile,
    /// Every other table: a service's section of its own (`[sqs]`).
    #[serde(flatten)]
    services: BTreeMap<String, ServiceFile>,
}

/// A service's section without a type of its own: its source, its prices by key, and which of
/// them are unverified or fetched.
#[derive(Deserialize)]
struct ServiceFile {
    source: String,
    #[serde(default)]
    fetched: BTreeMap<String, Fetched>,
    #[serde(default)]
    unverified: BTreeMap<String, String>,
    #[serde(flatten)]
    prices: BTreeMap<String, f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KinesisFile {
    source: String,
    shard_hour: f64,
    put_payload_units_per_million: f64,
    efo_consumer_shard_hour: f64,
    efo_retrieval_per_gb: f64,
    #[serde(default)]
    fetched: BTreeMap<String, Fetched>,
    #[serde(default)]
    unverified: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct S3File {
    standard: StandardFile,
    express: ExpressFile,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StandardFile {
    source: String,
    put_per_1000: f64,
    get_per_1000: f64,
    storage_gb_month: f64,
    #[serde(default)]
    fetched: BTreeMap<String, Fetched>,
    #[serde(default)]
    unverified: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpressFile {
    source: String,
    put_per_1000: f64,
    get_per_1000: f64,
    storage_gb_month: f64,
    upload_per_gb: f64,
    retrieval_per_gb: f64,
    per_gb_above: Bytes,
    #[serde(default)]
    fetched: BTreeMap<String, Fetched>,
    #[serde(default)]
    unverified: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ElastiCacheFile {
    source: String,
    node_hour: BTreeMap<String, f64>,
    #[serde(default)]
    fetched: BTreeMap<String, Fetched>,
    #[serde(default)]
    unverified: BTreeMap<String, String>,
}

impl Prices {
    /// Reads a price file; the error names the file, the line and the key.
    pub fn load(path: &Path) -> anyhow::Result<Prices> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read prices file {}", path.display()))?;
        Prices::parse(&text, &path.display().to_string())
    }

    /// Parses and checks a price file's text: every price a finite number of dollars at least
    /// 0, every `unverified` entry naming a price of its table.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Prices> {
        let file: File = toml::from_str(text).map_err(|e| {
            let at = e.span().map(|s| crate::units::line_of(text, s.start));
            let key = at
                .and_then(|l| key_at_line(text, l))
                .map(|k| format!(" ({k})"))
                .unwrap_or_default();
            anyhow::anyhow!(
                "prices file {origin}: {}{key}",
                crate::units::toml_error(text, &e)
            )
        })?;
        let bad = |section: &str, key: &str, why: String| {
            let line = line_of_key(text, section, key)
                .map(|l| format!("line {l} "))
                .unwrap_or_default();
            let dotted = if section.is_empty() {
                key.to_string()
            } else {
                format!("{section}.{key}")
            };
            anyhow::anyhow!("prices file {origin}: {line}({dotted}): {why}")
        };
        let mut prices: Vec<(&str, &str, f64)> = vec![
            ("kinesis", "shard_hour", file.kinesis.shard_hour),
            (
                "kinesis",
                "put_payload_units_per_million",
                file.kinesis.put_payload_units_per_million,
            ),
            (
                "kinesis",
                "efo_consumer_shard_hour",
                file.kinesis.efo_consumer_shard_hour,
            ),
            (
                "kinesis",
                "efo_retrieval_per_gb",
                file.kinesis.efo_retrieval_per_gb,
            ),
            ("s3.standard", "put_per_1000", file.s3.standard.put_per_1000),
            ("s3.standard", "get_per_1000", file.s3.standard.get_per_1000),
            (
                "s3.standard",
                "storage_gb_month",
                file.s3.standard.storage_gb_month,
            ),
            ("s3.express", "put_per_1000", file.s3.express.put_per_1000),
            ("s3.express", "get_per_1000", file.s3.express.get_per_1000),
            (
                "s3.express",
                "storage_gb_month",
                file.s3.express.storage_gb_month,
            ),
            ("s3.express", "upload_per_gb", file.s3.express.upload_per_gb),
            (
                "s3.express",
                "retrieval_per_gb",
                file.s3.express.retrieval_per_gb,
            ),
        ];
        for (node, price) in &file.elasticache.node_hour {
            prices.push(("elasticache.node_hour", node, *price));
        }
        for (section, service) in &file.services {
            for (key, price) in &service.prices {
                prices.push((section.as_str(), key.as_str(), *price));
            }
        }
        for (section, key, price) in &prices {
            if !price.is_finite() || *price < 0.0 {
                return Err(bad(
                    section,
                    key,
                    format!("a price is a number of dollars, 0 or more, not {price}"),
                ));
            }
        }
        if file.region.trim().is_empty() {
            return Err(bad("", "region", "the region is empty".into()));
        }
        let date_ok = {
            let parts: Vec<&str> = file.taken.split('-').collect();
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
                    file.taken
                ),
            ));
        }
        if file.source.is_empty() {
            return Err(bad(
                "",
                "source",
                "name the pricing pages the prices came from".into(),
            ));
        }
        let mut unverified = BTreeMap::new();
        let mut tables = vec![
            ("kinesis", &file.kinesis.unverified, "kinesis"),
            ("s3.standard", &file.s3.standard.unverified, "s3.standard"),
            ("s3.express", &file.s3.express.unverified, "s3.express"),
            (
                "elasticache",
                &file.elasticache.unverified,
                "elasticache.node_hour",
            ),
        ];
        for (section, service) in &file.services {
            tables.push((section.as_str(), &service.unverified, section.as_str()));
        }
        for (section, table, priced) in tables {
            for (key, why) in table {
                if !prices.iter().any(|(s, k, _)| *s == priced && k == key) {
                    return Err(bad(
                        &format!("{section}.unverified"),
                        key,
                        format!("names no price of [{priced}]"),
                    ));
                }
                unverified.insert(format!("{priced}.{key}"), why.clone());
            }
        }
        let mut fetched = BTreeMap::new();
        let mut tables = vec![
            ("kinesis", &file.kinesis.fetched, "kinesis"),
            ("s3.standard", &file.s3.standard.fetched, "s3.standard"),
            ("s3.express", &file.s3.express.fetched, "s3.express"),
            (
                "elasticache",
                &file.elasticache.fetched,
                "elasticache.node_hour",
            ),
        ];
        for (section, service) in &file.services {
            tables.push((section.as_str(), &service.fetched, section.as_str()));
        }
        for (section, table, priced) in tables {
            for (key, f) in table {
                let at = format!("{section}.fetched.{key}");
                if !prices.iter().any(|(s, k, _)| *s == priced && k == key) {
                    return Err(bad(&at, "source", format!("names no price of [{priced}]")));
                }
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
                let full = format!("{priced}.{key}");
                if unverified.contains_key(&full) {
                    return Err(bad(
                        &format!("{section}.unverified"),
                        key,
                        format!(
                            "is also read from the Price List ([{at}]): a price is verified or not, not both"
                        ),
                    ));
                }
                fetched.insert(full, f.clone());
            }
        }
        let standard = file.s3.standard;
        let express = file.s3.express;
        Ok(Prices {
            region: file.region,
            taken: file.taken,
            source: file.source,
            origin: origin.to_string(),
            kinesis: KinesisPrices {
                source: file.kinesis.source,
                shard_hour: file.kinesis.shard_hour,
                put_payload_units_per_million: file.kinesis.put_payload_units_per_million,
                efo_consumer_shard_hour: file.kinesis.efo_consumer_shard_hour,
                efo_retrieval_per_gb: file.kinesis.efo_retrieval_per_gb,
            },
            s3_standard: S3Prices {
                source: standard.source,
                put_per_1000: standard.put_per_1000,
                get_per_1000: standard.get_per_1000,
                storage_gb_month: standard.storage_gb_month,
                upload_per_gb: 0.0,
                retrieval_per_gb: 0.0,
                per_gb_above: 0,
            },
            s3_express: S3Prices {
                source: express.source,
                put_per_1000: express.put_per_1000,
                get_per_1000: express.get_per_1000,
                storage_gb_month: express.storage_gb_month,
                upload_per_gb: express.upload_per_gb,
                retrieval_per_gb: express.retrieval_per_gb,
                per_gb_above: express.per_gb_above.0,
            },
            elasticache: ElastiCachePrices {
                source: file.elasticache.source,
                node_hour: file.elasticache.node_hour,
            },
            services: file
                .services
                .into_iter()
                .map(|(name, f)| {
                    (
                        name,
                        ServicePrices {
                            source: f.source,
                            prices: f.prices,
                        },
                    )
                })
                .collect(),
            unverified,
            fetched,
        })
    }

    /// The price at a key (`kinesis.shard_hour`, `s3.express.put_per_1000`,
    /// `elasticache.node_hour.cache.t3.micro`), if the file has it.
    pub fn value(&self, key: &str) -> Option<f64> {
        if let Some(node) = key.strip_prefix("elasticache.node_hour.") {
            return self.elasticache.node_hour.get(node).copied();
        }
        let (section, field) = key.rsplit_once('.')?;
        let s3 = |p: &S3Prices| match field {
            "put_per_1000" => Some(p.put_per_1000),
            "get_per_1000" => Some(p.get_per_1000),
            "storage_gb_month" => Some(p.storage_gb_month),
            "upload_per_gb" => Some(p.upload_per_gb),
            "retrieval_per_gb" => Some(p.retrieval_per_gb),
            _ => None,
        };
        match section {
            "kinesis" => match field {
                "shard_hour" => Some(self.kinesis.shard_hour),
                "put_payload_units_per_million" => Some(self.kinesis.put_payload_units_per_million),
                "efo_consumer_shard_hour" => Some(self.kinesis.efo_consumer_shard_hour),
                "efo_retrieval_per_gb" => Some(self.kinesis.efo_retrieval_per_gb),
                _ => None,
            },
            "s3.standard" => s3(&self.s3_standard),
            "s3.express" => s3(&self.s3_express),
            other => self.services.get(other)?.prices.get(field).copied(),
        }
    }

    /// Where the price at a key comes from: why it is unverified, else its section's source.
    pub fn source_of(&self, key: &str) -> String {
        if let Some(why) = self.unverified.get(key) {
            return why.clone();
        }
        if let Some(f) = self.fetched.get(key) {
            return f.line();
        }
        let section = if key.starts_with("kinesis.") {
            &self.kinesis.source
        } else if key.starts_with("s3.standard.") {
            &self.s3_standard.source
        } else if key.starts_with("s3.express.") {
            &self.s3_express.source
        } else if let Some(service) = key
            .split_once('.')
            .and_then(|(section, _)| self.services.get(section))
        {
            &service.source
        } else {
            &self.elasticache.source
        };
        section.clone()
    }

    /// Whether the price at this key is unverified.
    pub fn is_unverified(&self, key: &str) -> bool {
        self.unverified.contains_key(key)
    }

    /// The built-in prices of a region, if latlab has a file for it.
    pub fn builtin(region: &str) -> Option<Arc<Prices>> {
        static PARSED: OnceLock<Vec<Arc<Prices>>> = OnceLock::new();
        PARSED
            .get_or_init(|| {
                BUILTIN
                    .iter()
                    .filter_map(|(_, text)| Prices::parse(text, "built-in").ok().map(Arc::new))
                    .collect()
            })
            .iter()
            .find(|p| p.region == region)
            .cloned()
    }

    /// The prices a run's cost uses: the file given with `--prices`, else the built-in file of
    /// the run's region, else us-east-1's with a note saying so.
    pub fn choose(given: Option<&Arc<Prices>>, region: &str) -> Option<Chosen> {
        if let Some(p) = given {
            let note = (p.region != region).then(|| {
                format!(
                    "the prices are {}'s (from {}); the run measured {region}",
                    p.region, p.origin
                )
            });
            return Some(Chosen {
                prices: p.clone(),
                note,
            });
        }
        if let Some(p) = Prices::builtin(region) {
            return Some(Chosen {
                prices: p,
                note: None,
            });
        }
        Prices::builtin(FALLBACK_REGION).map(|p| Chosen {
            prices: p,
            note: Some(format!(
                "latlab has no price file for {}; {FALLBACK_REGION}'s prices stand in",
                if region.is_empty() {
                    "this run's region"
                } else {
                    region
                }
            )),
        })
    }
}

/// The prices a run's cost is figured with, and why they are not the run's region's own.
#[derive(Clone, Debug, PartialEq)]
pub struct Chosen {
    pub prices: Arc<Prices>,
    pub note: Option<String>,
}
