//! A Price List offer file, parsed as it is read: one product and one term at a time, keeping
//! only the products a lab's section prices (by its documented attributes: usage type, operation,
//! group, volume type, engine), so memory stays flat whatever the file's size (AmazonS3's is
//! hundreds of MB).

use std::collections::BTreeMap;

use anyhow::{Context, bail};
use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};

use crate::lab_kit::cost::prices::Price;

/// Whether a product is the one a price is read from: its usage type (a region's prefix before
/// it allowed) and every attribute the price names.
fn matches(price: &Price, p: &Product) -> bool {
    let usage = p.attributes.get("usagetype").map_or("", String::as_str);
    price
        .usage
        .iter()
        .any(|u| usage == *u || usage.ends_with(&format!("-{u}")))
        && price
            .attrs
            .iter()
            .all(|(k, v)| p.attributes.get(*k).is_some_and(|a| a == v))
}

/// How a price's product is picked, for the error when none is found.
pub(super) fn filter(offer: &str, price: &Price) -> String {
    let mut parts = vec![format!(
        "usagetype ending {}",
        price
            .usage
            .iter()
            .map(|u| format!("'{u}'"))
            .collect::<Vec<_>>()
            .join(" or ")
    )];
    parts.extend(price.attrs.iter().map(|(k, v)| format!("{k} = '{v}'")));
    format!("{offer} with {}", parts.join(", "))
}

#[derive(Deserialize)]
struct Product {
    #[serde(rename = "productFamily", default)]
    product_family: Option<String>,
    #[serde(default)]
    attributes: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct Term {
    #[serde(rename = "priceDimensions", default)]
    price_dimensions: BTreeMap<String, Dimension>,
}

#[derive(Deserialize, Clone)]
pub(super) struct Dimension {
    #[serde(rename = "rateCode", default)]
    pub(super) rate_code: String,
    #[serde(default)]
    pub(super) description: String,
    #[serde(default)]
    pub(super) unit: String,
    #[serde(rename = "beginRange", default)]
    begin_range: String,
    #[serde(rename = "pricePerUnit", default)]
    pub(super) price_per_unit: BTreeMap<String, String>,
}

/// What one offer file gave: its head, the SKUs latlab prices and their first-tier USD prices.
#[derive(Default)]
pub struct Offer {
    pub(super) offer_code: String,
    pub(super) version: String,
    pub(super) publication_date: String,
    /// Price file key -> SKUs that match it, in file order.
    pub(super) matched: BTreeMap<String, Vec<String>>,
    /// Whether the products came before the terms (then only matched SKUs' terms are kept).
    products_seen: bool,
    /// SKU -> its on-demand first-tier dimension in USD.
    pub(super) prices: BTreeMap<String, Dimension>,
    pub(super) offer: &'static str,
}

impl Offer {
    fn wanted(&self, sku: &str) -> bool {
        self.matched.values().any(|s| s.iter().any(|x| x == sku))
    }
}

struct OfferSeed<'a>(&'a mut Offer);

impl<'de> DeserializeSeed<'de> for OfferSeed<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for OfferSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a Price List offer file (an object with products and terms)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let o = self.0;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "offerCode" => o.offer_code = map.next_value()?,
                "version" => o.version = map.next_value()?,
                "publicationDate" => o.publication_date = map.next_value()?,
                "products" => map.next_value_seed(Products(&mut *o))?,
                "terms" => map.next_value_seed(Terms(&mut *o))?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

macro_rules! map_seed {
    ($name:ident, $what:literal, |$o:ident, $map:ident| $body:block) => {
        struct $name<'a>(&'a mut Offer);
        impl<'de> DeserializeSeed<'de> for $name<'_> {
            type Value = ();
            fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.deserialize_map(self)
            }
        }
        impl<'de> Visitor<'de> for $name<'_> {
            type Value = ();
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str($what)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut $map: A) -> Result<(), A::Error> {
                let $o = self.0;
                $body
                Ok(())
            }
        }
    };
}

// Products, one at a time: those latlab prices are remembered by SKU, the rest dropped.
map_seed!(Products, "the offer's products", |o, map| {
    while let Some(sku) = map.next_key::<String>()? {
        let p: Product = map.next_value()?;
        for s in crate::prices::sections()
            .iter()
            .filter(|s| s.offer == o.offer)
        {
            for price in s.prices.iter().filter(|price| matches(price, &p)) {
                o.matched
                    .entry(format!("{}.{}", s.table, price.key))
                    .or_default()
                    .push(sku.clone());
            }
            if let Some(n) = s.named
                && let Some(name) = (n.of_product)(p.product_family.as_deref(), &p.attributes)
            {
                o.matched
                    .entry(format!("{}.{}.{name}", s.table, n.table))
                    .or_default()
                    .push(sku.clone());
            }
        }
    }
    o.products_seen = true;
});

map_seed!(Terms, "the offer's terms", |o, map| {
    while let Some(kind) = map.next_key::<String>()? {
        if kind == "OnDemand" {
            map.next_value_seed(OnDemand(&mut *o))?;
        } else {
            map.next_value::<IgnoredAny>()?;
        }
    }
});

// On-demand terms, one SKU at a time: a SKU latlab does not price is skipped unread.
map_seed!(OnDemand, "the offer's on-demand terms", |o, map| {
    while let Some(sku) = map.next_key::<String>()? {
        if o.products_seen && !o.wanted(&sku) {
            map.next_value::<IgnoredAny>()?;
            continue;
        }
        let terms: BTreeMap<String, Term> = map.next_value()?;
        let first = terms
            .into_values()
            .flat_map(|t| t.price_dimensions.into_values())
            .filter(|d| d.price_per_unit.contains_key("USD"))
            .min_by_key(|d| d.begin_range.parse::<f64>().map_or(u64::MAX, |b| b as u64));
        if let Some(d) = first {
            o.prices.insert(sku, d);
        }
    }
});

/// Parses one offer file as it is read.
pub fn parse_offer(reader: impl std::io::Read, offer: &'static str) -> anyhow::Result<Offer> {
    let mut o = Offer {
        offer,
        ..Offer::default()
    };
    let mut de =
        serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(64 * 1024, reader));
    OfferSeed(&mut o)
        .deserialize(&mut de)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    de.end().map_err(|e| anyhow::anyhow!("{e}"))?;
    if !o.products_seen {
        bail!("no products in it");
    }
    Ok(o)
}

/// GET an offer file and parse it as it arrives.
pub(super) async fn get_offer(url: &str, offer: &'static str) -> anyhow::Result<Offer> {
    use http_body_util::BodyExt;
    let mut body = super::http::get(url).await?.into_body();
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let parser = tokio::task::spawn_blocking(move || {
        parse_offer(
            super::http::BodyReader {
                rx,
                chunk: bytes::Bytes::new(),
            },
            offer,
        )
    });
    loop {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data()
                    && tx.send(Ok(data)).await.is_err()
                {
                    break;
                }
            }
            Some(Err(e)) => {
                let _ = tx.send(Err(format!("the download broke off: {e}"))).await;
                break;
            }
            None => break,
        }
    }
    drop(tx);
    parser
        .await?
        .with_context(|| format!("{offer}'s offer file {url}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offer_file_is_read_for_the_products_latlab_prices_in_either_order() {
        let products = r#""products": {
            "AAA": {"sku": "AAA", "productFamily": "Kinesis Streams", "attributes": {"usagetype": "USE2-Storage-ShardHour", "operation": "shardHourStorage"}},
            "BBB": {"sku": "BBB", "attributes": {"usagetype": "LongTermRetention-ReadBytes", "operation": "x"}}
        }"#;
        let terms = r#""terms": {"OnDemand": {
            "AAA": {"AAA.JRTCKXETXF": {"priceDimensions": {"AAA.JRTCKXETXF.6YS6EN2CT7": {"rateCode": "AAA.JRTCKXETXF.6YS6EN2CT7", "description": "shard hour", "unit": "ShardHour", "beginRange": "0", "endRange": "Inf", "pricePerUnit": {"USD": "0.0150000000"}}}}},
            "BBB": {"BBB.JRTCKXETXF": {"priceDimensions": {}}}
        }, "Reserved": {"AAA": {}}}"#;
        for text in [
            format!(
                r#"{{"offerCode": "AmazonKinesis", "version": "v1", "publicationDate": "2026-11-20T00:00:00Z", {products}, {terms}}}"#
            ),
            format!(
                r#"{{{terms}, "offerCode": "AmazonKinesis", "version": "v1", {products}, "publicationDate": "2026-11-20T00:00:00Z"}}"#
            ),
        ] {
            let o = parse_offer(text.as_bytes(), "AmazonKinesis").unwrap();
            assert_eq!(o.version, "v1");
            assert_eq!(o.matched["kinesis.shard_hour"], ["AAA"]);
            assert!(!o.matched.contains_key("kinesis.efo_retrieval_per_gb"));
            assert_eq!(o.prices["AAA"].price_per_unit["USD"], "0.0150000000");
        }
        // A file cut short is an error, not a partial result.
        let cut = format!(
            r#"{{"offerCode": "AmazonKinesis", {products}, "terms": {{"OnDemand": {{"AAA""#
        );
        assert!(parse_offer(cut.as_bytes(), "AmazonKinesis").is_err());
    }
}
