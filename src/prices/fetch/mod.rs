//! `latlab prices fetch`: the prices every lab's sections name, read from AWS's own Price List
//! (the bulk API's offer files of the offers the sections name: each offer's region index first,
//! then the region's offer file), and written as a price file in latlab's form with every
//! entry's offer, version, publication date and SKU (`[section.fetched.key]`). A fetch that fails
//! writes nothing: the old file stays.
//!
//! By concern: `http.rs` the GETs (hyper's client, a body handed on as it arrives), `offer.rs`
//! an offer file parsed as it is read, keeping only the products a section prices, `write.rs` the
//! price file written. Which products a price is read from (usage types, operations, groups,
//! engines) and where each filter comes from are each lab's, beside its sections
//! (`labs/X/cost.rs`); each filter is said when nothing matches it.

mod http;
mod offer;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::cost::prices::{Fetched, PRICE_LIST_SOURCE, Prices};
use offer::Offer;

/// AWS's Price List bulk API host.
pub const DEFAULT_URL: &str = "https://pricing.us-east-1.amazonaws.com";

/// The offers the labs price from, each once, in the order their sections come.
pub fn offers() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for s in super::sections() {
        if !out.contains(&s.offer) {
            out.push(s.offer);
        }
    }
    out
}

/// The URL of a region's offer file, from the offer's region index.
async fn offer_url(base: &str, offer: &str, region: &str) -> anyhow::Result<String> {
    let index_url = format!("{base}/offers/v1.0/aws/{offer}/current/region_index.json");
    let index = http::get_json(&index_url).await?;
    let regions = index["regions"]
        .as_object()
        .with_context(|| format!("{index_url}: no regions in it"))?;
    match regions
        .get(region)
        .and_then(|r| r["currentVersionUrl"].as_str())
    {
        Some(path) if path.starts_with("http") => Ok(path.to_string()),
        Some(path) => Ok(format!("{base}{path}")),
        None => bail!(
            "unknown region '{region}': {offer}'s price list has {}",
            regions.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
    }
}

/// One region's price file, fetched: its text (checked to parse as a price file).
pub async fn fetch_region(base: &str, region: &str, taken: &str) -> anyhow::Result<String> {
    let mut offers: Vec<Offer> = Vec::new();
    let mut urls = Vec::new();
    for offer in self::offers() {
        let url = offer_url(base, offer, region).await?;
        offers.push(offer::get_offer(&url, offer).await?);
        urls.push(url);
    }
    let mut values: BTreeMap<String, (f64, Fetched)> = BTreeMap::new();
    let mut missing: Vec<String> = Vec::new();
    let found = |o: &Offer, key: &str, scale: f64| -> Option<(f64, Fetched)> {
        o.matched.get(key)?.iter().find_map(|sku| {
            let d = o.prices.get(sku)?;
            let usd: f64 = d.price_per_unit.get("USD")?.parse().ok()?;
            Some((
                (usd * scale * 1e12).round() / 1e12,
                Fetched {
                    source: PRICE_LIST_SOURCE.into(),
                    offer: o.offer_code.clone(),
                    version: o.version.clone(),
                    publication_date: o.publication_date.clone(),
                    sku: sku.clone(),
                    rate_code: d.rate_code.clone(),
                    description: d.description.clone(),
                    unit: d.unit.clone(),
                },
            ))
        })
    };
    for s in super::sections() {
        let o = offers
            .iter()
            .find(|o| o.offer == s.offer)
            .expect("each section's offer was fetched");
        for p in s.prices {
            let key = format!("{}.{}", s.table, p.key);
            match found(o, &key, p.scale) {
                Some(v) => {
                    values.insert(key, v);
                }
                None => missing.push(format!(
                    "{key} (no on-demand USD price of a product matching {})",
                    offer::filter(s.offer, p)
                )),
            }
        }
        if let Some(n) = s.named {
            let table = format!("{}.{}.", s.table, n.table);
            for key in o.matched.keys().filter(|k| k.starts_with(&table)) {
                if let Some(v) = found(o, key, 1.0) {
                    values.insert(key.clone(), v);
                }
            }
            for name in n.required {
                let key = format!("{table}{name}");
                if !values.contains_key(&key) {
                    missing.push(format!(
                        "{key} (no on-demand USD price of {})",
                        n.filter.replace("{name}", name)
                    ));
                }
            }
        }
    }
    if !missing.is_empty() {
        bail!(
            "{region}: {} price{} not found in AWS's price list, so nothing was written: {}",
            missing.len(),
            if missing.len() == 1 { "" } else { "s" },
            missing.join("; ")
        );
    }
    let text = write::file(region, taken, &urls, &offers, &values);
    Prices::parse(&text, "the fetched prices")
        .context("the fetched prices do not make a price file")?;
    Ok(text)
}

/// Fetches each region's prices and writes each file only when all of them were read: to
/// `output` for one region (default `REGION.toml`), into the directory `output` for several.
/// A region whose fetch fails leaves its old file as it was.
pub async fn fetch(
    base: &str,
    regions: &[String],
    output: Option<&Path>,
) -> anyhow::Result<Vec<PathBuf>> {
    for r in regions {
        if !crate::aws::valid_region(r) {
            bail!("'{r}' is not a region name: regions look like us-east-1 or ap-northeast-1");
        }
    }
    let taken = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let taken = &taken[..10];
    let base = base.trim_end_matches('/');
    let mut texts = Vec::new();
    for r in regions {
        texts.push((r.clone(), fetch_region(base, r, taken).await?));
    }
    let mut written = Vec::new();
    for (region, text) in texts {
        let path = match output {
            Some(p) if regions.len() > 1 => {
                std::fs::create_dir_all(p)
                    .with_context(|| format!("cannot make the directory {}", p.display()))?;
                p.join(format!("{region}.toml"))
            }
            Some(p) => p.to_path_buf(),
            None => PathBuf::from(format!("{region}.toml")),
        };
        // Written beside, then renamed: the old file is replaced whole or not at all.
        let partial = path.with_extension("toml.partial");
        std::fs::write(&partial, &text)
            .with_context(|| format!("cannot write {}", partial.display()))?;
        std::fs::rename(&partial, &path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}
