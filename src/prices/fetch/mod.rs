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
pub mod offer;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::lab_kit::cost::prices::{Fetched, PRICE_LIST_SOURCE, Prices};
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
    url_in_index(&index, &index_url, base, offer, region)
}

/// A region's offer file's URL, as an offer's region index gives it: a path on `base`, or a URL
/// on `base`'s own host (an index that points elsewhere is refused, not followed).
pub fn url_in_index(
    index: &serde_json::Value,
    index_url: &str,
    base: &str,
    offer: &str,
    region: &str,
) -> anyhow::Result<String> {
    let regions = index["regions"]
        .as_object()
        .with_context(|| format!("{index_url}: no regions in it"))?;
    let path = match regions
        .get(region)
        .and_then(|r| r["currentVersionUrl"].as_str())
    {
        Some(path) => path,
        None => {
            let mut names: Vec<&str> = regions.keys().map(String::as_str).take(40).collect();
            if regions.len() > names.len() {
                names.push("...");
            }
            bail!(
                "unknown region '{region}': {offer}'s price list has {}",
                names.join(", ")
            )
        }
    };
    let origin = |u: &str| -> Option<String> {
        let uri: ::http::Uri = u.parse().ok()?;
        Some(format!("{}://{}", uri.scheme_str()?, uri.authority()?))
    };
    let url = if path.starts_with('/') && !path.starts_with("//") {
        format!("{base}{path}")
    } else if path.starts_with("http://") || path.starts_with("https://") {
        path.to_string()
    } else {
        bail!("{index_url}: {region}'s offer file is at {path:?}, not a path or a URL");
    };
    if origin(&url).is_none() || origin(&url) != origin(base) || url.contains("/../") {
        bail!("{index_url}: {region}'s offer file is at {url}, off {base}: not followed");
    }
    Ok(url)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An index's offer file is followed on its own host only: a path on it, or a URL on it.
    #[test]
    fn an_index_that_points_off_its_host_is_not_followed() {
        let base = "https://pricing.us-east-1.amazonaws.com";
        let at = |url: &str| {
            let index = serde_json::json!({"regions": {"us-east-1": {"currentVersionUrl": url}}});
            url_in_index(&index, "idx", base, "AmazonS3", "us-east-1")
        };
        assert_eq!(
            at("/offers/v1.0/aws/AmazonS3/1/us-east-1/index.json").unwrap(),
            format!("{base}/offers/v1.0/aws/AmazonS3/1/us-east-1/index.json")
        );
        assert!(at(&format!("{base}/x.json")).is_ok());
        for bad in [
            "https://evil.example/x.json",
            "//evil.example/x.json",
            "http://pricing.us-east-1.amazonaws.com/x.json",
            "file:///etc/passwd",
            "/a/../../etc",
            "x.json",
        ] {
            let e = at(bad).unwrap_err().to_string();
            assert!(
                e.contains("not followed") || e.contains("not a path"),
                "{bad}: {e}"
            );
        }
        // A region the index lacks names a bounded list of those it has.
        let many: serde_json::Map<String, serde_json::Value> = (0..500)
            .map(|i| (format!("r-{i}"), serde_json::json!({})))
            .collect();
        let e = url_in_index(
            &serde_json::json!({"regions": many}),
            "idx",
            base,
            "AmazonS3",
            "x",
        )
        .unwrap_err()
        .to_string();
        assert!(e.len() < 600 && e.ends_with("..."), "{e}");
    }
}
