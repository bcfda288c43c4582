//! One file, though long: the SKU filters, the offer file's streaming parser and the price
//! file's writer are the three steps of one fetch, read together.
//!
//! `latlab prices fetch`: the prices latlab uses, read from AWS's own Price List (the bulk API's
//! offer files for AmazonKinesis, AmazonS3, AmazonElastiCache and AWSQueueService (SQS): each offer's region index
//! first, then the region's offer file), and written as a price file in latlab's form with every
//! entry's offer, version, publication date and SKU (`[section.fetched.key]`).
//!
//! The offer files are large (AmazonS3's is hundreds of MB): each is parsed as it arrives, one
//! product and one term at a time, keeping only the products latlab prices, so memory stays
//! flat whatever the file's size. The SKUs are picked by documented attributes (usage type,
//! operation, group, volume type, engine), each filter said when nothing matches it. A fetch that
//! fails writes nothing: the old file stays.
//!
//! The attribute filters and where each comes from: Kinesis's usage types and operations, and
//! S3 Standard's, as infracost's price queries use them (github.com/infracost/infracost,
//! internal/resources/aws: kinesis_stream.go, s3_standard_storage_class.go), matched as a suffix
//! so that a region's prefix (`USE2-`) is allowed; S3 Express One Zone's as AWS's S3 User Guide
//! names its usage types in billing reports (`Requests-XZ-Tier1`, `TimedStorage-XZ-ByteHrs`,
//! `Upload-XZ`, `Retrieval-XZ`), which no captured offer file here confirmed; ElastiCache's node
//! hours as infracost's elasticache_cluster.go filters them (productFamily `Cache Instance`,
//! cacheEngine `Redis`), without the extended-support, sync-durability and Outposts variants;
//! SQS's requests by group and queueType as infracost's sqs_queue.go filters them, with the usage
//! types of an excerpt of the us-east-1 offer file (see `WANTS`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};

use super::prices::{Fetched, PRICE_LIST_SOURCE, Prices};

/// AWS's Price List bulk API host.
pub const DEFAULT_URL: &str = "https://pricing.us-east-1.amazonaws.com";

/// The offers latlab prices from.
pub const OFFERS: [&str; 4] = [
    "AmazonKinesis",
    "AmazonS3",
    "AmazonElastiCache",
    "AWSQueueService",
];

/// One price latlab's file holds, and how its SKU is picked.
struct Want {
    /// Its key in the price file (`kinesis.shard_hour`).
    key: &'static str,
    offer: &'static str,
    /// The usage type, as its suffix (a region's prefix before it is allowed).
    usage: &'static [&'static str],
    /// Attributes that must hold besides.
    attrs: &'static [(&'static str, &'static str)],
    /// The file's unit per the price list's unit (per million, per 1,000).
    scale: f64,
}

const WANTS: &[Want] = &[
    Want {
        key: "kinesis.shard_hour",
        offer: "AmazonKinesis",
        usage: &["Storage-ShardHour"],
        attrs: &[("operation", "shardHourStorage")],
        scale: 1.0,
    },
    Want {
        key: "kinesis.put_payload_units_per_million",
        offer: "AmazonKinesis",
        usage: &["PutRequestPayloadUnits"],
        attrs: &[("operation", "PutRequest")],
        scale: 1e6,
    },
    Want {
        key: "kinesis.efo_consumer_shard_hour",
        offer: "AmazonKinesis",
        usage: &["EnhancedFanoutHour"],
        attrs: &[("operation", "ConsumerHour")],
        scale: 1.0,
    },
    Want {
        key: "kinesis.efo_retrieval_per_gb",
        offer: "AmazonKinesis",
        usage: &["ReadBytes"],
        attrs: &[("operation", "EnhancedFanoutDataRetrieval")],
        scale: 1.0,
    },
    Want {
        key: "s3.standard.put_per_1000",
        offer: "AmazonS3",
        usage: &["Requests-Tier1"],
        attrs: &[("group", "S3-API-Tier1")],
        scale: 1000.0,
    },
    Want {
        key: "s3.standard.get_per_1000",
        offer: "AmazonS3",
        usage: &["Requests-Tier2"],
        attrs: &[("group", "S3-API-Tier2")],
        scale: 1000.0,
    },
    Want {
        key: "s3.standard.storage_gb_month",
        offer: "AmazonS3",
        usage: &["TimedStorage-ByteHrs"],
        attrs: &[("volumeType", "Standard")],
        scale: 1.0,
    },
    Want {
        key: "s3.express.put_per_1000",
        offer: "AmazonS3",
        usage: &["Requests-XZ-Tier1"],
        attrs: &[],
        scale: 1000.0,
    },
    Want {
        key: "s3.express.get_per_1000",
        offer: "AmazonS3",
        usage: &["Requests-XZ-Tier2"],
        attrs: &[],
        scale: 1000.0,
    },
    Want {
        key: "s3.express.storage_gb_month",
        offer: "AmazonS3",
        usage: &["TimedStorage-XZ-ByteHrs"],
        attrs: &[],
        scale: 1.0,
    },
    Want {
        key: "s3.express.upload_per_gb",
        offer: "AmazonS3",
        usage: &["Upload-XZ", "Upload-XZ-Bytes"],
        attrs: &[],
        scale: 1.0,
    },
    Want {
        key: "s3.express.retrieval_per_gb",
        offer: "AmazonS3",
        usage: &["Retrieval-XZ", "Retrieval-XZ-Bytes"],
        attrs: &[],
        scale: 1.0,
    },
    // SQS's offer is AWSQueueService. Its request products are `API Request`s of group
    // SQS-APIRequest-Tier1, told apart by queueType; their usage types are `Requests-RBP` and
    // `Requests-FIFO-RBP` in us-east-1's file and `REGION-Requests-Tier1` and
    // `REGION-Requests-FIFO-Tier1` elsewhere (an excerpt of the us-east-1 file published
    // 2025-08-28, and infracost's filter on queueType). The first tier is taken: the monthly
    // free tier is a product of its own (`Global-Requests`), not a band of these.
    Want {
        key: "sqs.standard_requests_per_million",
        offer: "AWSQueueService",
        usage: &["Requests-RBP", "Requests-Tier1"],
        attrs: &[("group", "SQS-APIRequest-Tier1"), ("queueType", "Standard")],
        scale: 1e6,
    },
    Want {
        key: "sqs.fifo_requests_per_million",
        offer: "AWSQueueService",
        usage: &["Requests-FIFO-RBP", "Requests-FIFO-Tier1"],
        attrs: &[
            ("group", "SQS-APIRequest-Tier1"),
            ("queueType", "FIFO (first-in, first-out)"),
        ],
        scale: 1e6,
    },
];

/// The node types a price file must have (the built-in files' and the scenarios' default).
const NODE_TYPES: &[&str] = &["cache.t3.micro", "cache.t3.small", "cache.t3.medium"];

impl Want {
    fn filter(&self) -> String {
        let mut parts = vec![format!(
            "usagetype ending {}",
            self.usage
                .iter()
                .map(|u| format!("'{u}'"))
                .collect::<Vec<_>>()
                .join(" or ")
        )];
        parts.extend(self.attrs.iter().map(|(k, v)| format!("{k} = '{v}'")));
        format!("{} with {}", self.offer, parts.join(", "))
    }

    fn matches(&self, p: &Product) -> bool {
        let usage = p.attributes.get("usagetype").map_or("", String::as_str);
        self.usage
            .iter()
            .any(|u| usage == *u || usage.ends_with(&format!("-{u}")))
            && self
                .attrs
                .iter()
                .all(|(k, v)| p.attributes.get(*k).is_some_and(|a| a == v))
    }
}

/// The ElastiCache node type a product prices the on-demand hour of, for Redis.
fn node_type(p: &Product) -> Option<&str> {
    let a = &p.attributes;
    let usage = a.get("usagetype")?;
    (p.product_family.as_deref() == Some("Cache Instance")
        && a.get("cacheEngine").is_some_and(|e| e == "Redis")
        && usage.contains("NodeUsage:")
        && !["ExtendedSupport", "SyncDurability", "Outpost"]
            .iter()
            .any(|x| usage.contains(x)))
    .then(|| a.get("instanceType").map(String::as_str))
    .flatten()
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
struct Dimension {
    #[serde(rename = "rateCode", default)]
    rate_code: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    unit: String,
    #[serde(rename = "beginRange", default)]
    begin_range: String,
    #[serde(rename = "pricePerUnit", default)]
    price_per_unit: BTreeMap<String, String>,
}

/// What one offer file gave: its head, the SKUs latlab prices and their first-tier USD prices.
#[derive(Default)]
struct Offer {
    offer_code: String,
    version: String,
    publication_date: String,
    /// Price file key -> SKUs that match it, in file order.
    matched: BTreeMap<String, Vec<String>>,
    /// Whether the products came before the terms (then only matched SKUs' terms are kept).
    products_seen: bool,
    /// SKU -> its on-demand first-tier dimension in USD.
    prices: BTreeMap<String, Dimension>,
    offer: &'static str,
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
        if o.offer == "AmazonElastiCache" {
            if let Some(node) = node_type(&p) {
                o.matched
                    .entry(format!("elasticache.node_hour.{node}"))
                    .or_default()
                    .push(sku);
            }
            continue;
        }
        for w in WANTS.iter().filter(|w| w.offer == o.offer) {
            if w.matches(&p) {
                o.matched
                    .entry(w.key.to_string())
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
fn parse_offer(reader: impl std::io::Read, offer: &'static str) -> anyhow::Result<Offer> {
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

/// A response body as a blocking reader, a chunk at a time through a bounded channel.
struct BodyReader {
    rx: tokio::sync::mpsc::Receiver<Result<bytes::Bytes, String>>,
    chunk: bytes::Bytes,
}

impl std::io::Read for BodyReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.chunk.is_empty() {
            match self.rx.blocking_recv() {
                Some(Ok(c)) => self.chunk = c,
                Some(Err(e)) => return Err(std::io::Error::other(e)),
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len());
        buf[..n].copy_from_slice(&self.chunk[..n]);
        bytes::Buf::advance(&mut self.chunk, n);
        Ok(n)
    }
}

trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Io for T {}

/// GET `url` (http or https), its answer's head checked: a 200 or an error naming the URL.
async fn get(url: &str) -> anyhow::Result<hyper::Response<hyper::body::Incoming>> {
    let uri: http::Uri = url
        .parse()
        .with_context(|| format!("'{url}' is not a URL"))?;
    let (https, host) = match (uri.scheme_str(), uri.host()) {
        (Some("https"), Some(h)) => (true, h.to_string()),
        (Some("http"), Some(h)) => (false, h.to_string()),
        _ => bail!("'{url}' is not an http:// or https:// URL"),
    };
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let tcp = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await
    .map_err(|_| anyhow::anyhow!("{host}:{port} did not answer within 30 s"))?
    .with_context(|| format!("cannot connect to {host}:{port}"))?;
    let io: Box<dyn Io> = if https {
        let mut roots = tokio_rustls::rustls::RootCertStore::empty();
        for cert in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(cert);
        }
        let provider = tokio_rustls::rustls::crypto::aws_lc_rs::default_provider();
        let config = tokio_rustls::rustls::ClientConfig::builder_with_provider(
            std::sync::Arc::new(provider),
        )
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let name = tokio_rustls::rustls::pki_types::ServerName::try_from(host.clone())
            .with_context(|| format!("'{host}' is not a server name"))?;
        let tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
            .connect(name, tcp)
            .await
            .with_context(|| format!("TLS with {host} failed"))?;
        Box::new(tls)
    } else {
        Box::new(tcp)
    };
    let (mut send, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(io)).await?;
    tokio::spawn(conn);
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let req = http::Request::get(path)
        .header("host", &host)
        .header("user-agent", concat!("latlab/", env!("CARGO_PKG_VERSION")))
        .body(http_body_util::Empty::<bytes::Bytes>::new())?;
    let resp = tokio::time::timeout(Duration::from_secs(60), send.send_request(req))
        .await
        .map_err(|_| anyhow::anyhow!("GET {url}: no answer within 60 s"))?
        .with_context(|| format!("GET {url} failed"))?;
    if resp.status() != http::StatusCode::OK {
        bail!("GET {url} answered {}", resp.status());
    }
    Ok(resp)
}

/// GET a small JSON document whole (a region index).
async fn get_json(url: &str) -> anyhow::Result<serde_json::Value> {
    use http_body_util::BodyExt;
    let body = get(url)
        .await?
        .into_body()
        .collect()
        .await
        .with_context(|| format!("GET {url}: the download broke off"))?
        .to_bytes();
    serde_json::from_slice(&body).with_context(|| format!("GET {url}: not JSON"))
}

/// GET an offer file and parse it as it arrives.
async fn get_offer(url: &str, offer: &'static str) -> anyhow::Result<Offer> {
    use http_body_util::BodyExt;
    let mut body = get(url).await?.into_body();
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let parser = tokio::task::spawn_blocking(move || {
        parse_offer(
            BodyReader {
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

/// The URL of a region's offer file, from the offer's region index.
async fn offer_url(base: &str, offer: &str, region: &str) -> anyhow::Result<String> {
    let index_url = format!("{base}/offers/v1.0/aws/{offer}/current/region_index.json");
    let index = get_json(&index_url).await?;
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

/// A price as the file writes it: no more digits than it has.
fn number(x: f64) -> String {
    let s = format!("{x:.12}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() { "0".into() } else { s.into() }
}

/// One region's price file, fetched: its text (checked to parse as a price file).
pub async fn fetch_region(base: &str, region: &str, taken: &str) -> anyhow::Result<String> {
    let mut offers = Vec::new();
    let mut urls = Vec::new();
    for offer in OFFERS {
        let url = offer_url(base, offer, region).await?;
        offers.push(get_offer(&url, offer).await?);
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
    for w in WANTS {
        let o = offers
            .iter()
            .find(|o| o.offer == w.offer)
            .expect("each offer");
        match found(o, w.key, w.scale) {
            Some(v) => {
                values.insert(w.key.to_string(), v);
            }
            None => missing.push(format!(
                "{} (no on-demand USD price of a product matching {})",
                w.key,
                w.filter()
            )),
        }
    }
    let cache = offers
        .iter()
        .find(|o| o.offer == "AmazonElastiCache")
        .expect("the ElastiCache offer");
    for key in cache.matched.keys() {
        if let Some(v) = found(cache, key, 1.0) {
            values.insert(key.clone(), v);
        }
    }
    for node in NODE_TYPES {
        let key = format!("elasticache.node_hour.{node}");
        if !values.contains_key(&key) {
            missing.push(format!(
                "{key} (no on-demand USD price of an AmazonElastiCache product with productFamily = 'Cache Instance', cacheEngine = 'Redis', instanceType = '{node}', usagetype containing 'NodeUsage:')"
            ));
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
    let text = write_file(region, taken, &urls, &offers, &values);
    Prices::parse(&text, "the fetched prices")
        .context("the fetched prices do not make a price file")?;
    Ok(text)
}

fn write_file(
    region: &str,
    taken: &str,
    urls: &[String],
    offers: &[Offer],
    values: &BTreeMap<String, (f64, Fetched)>,
) -> String {
    use std::fmt::Write;
    let q = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# List prices in {region}, in US dollars, read from AWS's Price List API by `latlab prices fetch`.\n# Every price's [SECTION.fetched.KEY] table names its offer, version, publication date and SKU.\n"
    );
    let _ = writeln!(o, "region = {}", q(region));
    let _ = writeln!(o, "taken = {}", q(taken));
    let _ = writeln!(
        o,
        "source = [{}]",
        urls.iter().map(|u| q(u)).collect::<Vec<_>>().join(", ")
    );
    let head = |offer: &str| {
        offers
            .iter()
            .find(|x| x.offer == offer)
            .map(|x| {
                format!(
                    "{PRICE_LIST_SOURCE}: {} offer {} (published {})",
                    x.offer_code, x.version, x.publication_date
                )
            })
            .unwrap_or_default()
    };
    let section = |o: &mut String, name: &str, offer: &str, keys: &[(&str, &str)], extra: &str| {
        let _ = writeln!(o, "\n[{name}]");
        let _ = writeln!(o, "source = {}", q(&head(offer)));
        for (field, key) in keys {
            if let Some((v, _)) = values.get(*key) {
                let _ = writeln!(o, "{field} = {}", number(*v));
            }
        }
        o.push_str(extra);
    };
    section(
        &mut o,
        "kinesis",
        "AmazonKinesis",
        &[
            ("shard_hour", "kinesis.shard_hour"),
            (
                "put_payload_units_per_million",
                "kinesis.put_payload_units_per_million",
            ),
            ("efo_consumer_shard_hour", "kinesis.efo_consumer_shard_hour"),
            ("efo_retrieval_per_gb", "kinesis.efo_retrieval_per_gb"),
        ],
        "",
    );
    section(
        &mut o,
        "s3.standard",
        "AmazonS3",
        &[
            ("put_per_1000", "s3.standard.put_per_1000"),
            ("get_per_1000", "s3.standard.get_per_1000"),
            ("storage_gb_month", "s3.standard.storage_gb_month"),
        ],
        "",
    );
    section(
        &mut o,
        "s3.express",
        "AmazonS3",
        &[
            ("put_per_1000", "s3.express.put_per_1000"),
            ("get_per_1000", "s3.express.get_per_1000"),
            ("storage_gb_month", "s3.express.storage_gb_month"),
            ("upload_per_gb", "s3.express.upload_per_gb"),
            ("retrieval_per_gb", "s3.express.retrieval_per_gb"),
        ],
        "# The per-GB charges apply to every byte (AWS News Blog, 10 April 2025); not in the price list.\nper_gb_above = \"0B\"\n",
    );
    section(
        &mut o,
        "sqs",
        "AWSQueueService",
        &[
            (
                "standard_requests_per_million",
                "sqs.standard_requests_per_million",
            ),
            ("fifo_requests_per_million", "sqs.fifo_requests_per_million"),
        ],
        "",
    );
    let _ = writeln!(o, "\n[elasticache]");
    let _ = writeln!(o, "source = {}", q(&head("AmazonElastiCache")));
    let _ = writeln!(o, "\n[elasticache.node_hour]");
    for (key, (v, _)) in values.range("elasticache.node_hour.".to_string()..) {
        if let Some(node) = key.strip_prefix("elasticache.node_hour.") {
            let _ = writeln!(o, "{} = {}", q(node), number(*v));
        }
    }
    for (key, (_, f)) in values {
        let (table, field) = match key.strip_prefix("elasticache.node_hour.") {
            Some(node) => ("elasticache".to_string(), q(node)),
            None => {
                let (t, f) = key.rsplit_once('.').expect("a dotted key");
                (t.to_string(), f.to_string())
            }
        };
        let _ = writeln!(o, "\n[{table}.fetched.{field}]");
        let _ = writeln!(o, "source = {}", q(&f.source));
        let _ = writeln!(o, "offer = {}", q(&f.offer));
        let _ = writeln!(o, "version = {}", q(&f.version));
        let _ = writeln!(o, "publication_date = {}", q(&f.publication_date));
        let _ = writeln!(o, "sku = {}", q(&f.sku));
        let _ = writeln!(o, "rate_code = {}", q(&f.rate_code));
        let _ = writeln!(o, "description = {}", q(&f.description));
        let _ = writeln!(o, "unit = {}", q(&f.unit));
    }
    o
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

    #[test]
    fn prices_are_written_with_the_digits_they_have() {
        assert_eq!(number(0.000000014 * 1e6), "0.014");
        assert_eq!(
            number((0.000005 * 1000.0 * 1e12_f64).round() / 1e12),
            "0.005"
        );
        assert_eq!(number(0.0), "0");
    }
}
