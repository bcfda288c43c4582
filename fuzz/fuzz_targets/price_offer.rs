//! What `latlab prices fetch` reads from AWS's Price List (or a mirror of it): an offer's region
//! index (its regions and each one's offer file URL, which must stay on the index's host) and an
//! offer file of any shape (products, terms, their attributes and price dimensions), parsed as it
//! streams, for each offer the labs price from. Each gives a URL, an offer or an error saying
//! what is wrong, never a panic.
#![no_main]

use arbitrary::Arbitrary;
use latlab::prices::fetch::{offer::parse_offer, offers, url_in_index};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    index: Vec<u8>,
    region: String,
    offer: u8,
    file: Offer,
}

#[derive(Arbitrary, Debug)]
enum Offer {
    Raw(Vec<u8>),
    /// Products and terms of any attributes and prices, in either order.
    Built {
        products: Vec<(String, Option<String>, Vec<(String, String)>)>,
        terms: Vec<(String, String, String, String)>,
        terms_first: bool,
    },
}

fuzz_target!(|input: Input| {
    let base = "https://pricing.us-east-1.amazonaws.com";
    let all = offers();
    let offer = all[input.offer as usize % all.len()];
    if let Ok(index) = serde_json::from_slice::<serde_json::Value>(&input.index) {
        if let Ok(url) = url_in_index(&index, "index", base, offer, &input.region) {
            assert!(url.starts_with(base), "followed off the host: {url}");
        }
    }
    let bytes = match &input.file {
        Offer::Raw(b) => b.clone(),
        Offer::Built {
            products,
            terms,
            terms_first,
        } => {
            let products: serde_json::Map<String, serde_json::Value> = products
                .iter()
                .take(64)
                .map(|(sku, family, attrs)| {
                    let attrs: serde_json::Map<String, serde_json::Value> = attrs
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone().into()))
                        .collect();
                    (
                        sku.clone(),
                        serde_json::json!({"sku": sku, "productFamily": family, "attributes": attrs}),
                    )
                })
                .collect();
            let on_demand: serde_json::Map<String, serde_json::Value> = terms
                .iter()
                .take(64)
                .map(|(sku, begin, usd, unit)| {
                    (
                        sku.clone(),
                        serde_json::json!({"t": {"priceDimensions": {"d": {
                            "rateCode": "r", "description": "d", "unit": unit,
                            "beginRange": begin, "pricePerUnit": {"USD": usd}}}}}),
                    )
                })
                .collect();
            let p = serde_json::json!({"products": products});
            let t = serde_json::json!({"terms": {"OnDemand": on_demand}});
            let (first, second) = if *terms_first { (t, p) } else { (p, t) };
            let mut doc = serde_json::Map::new();
            doc.insert("offerCode".into(), offer.into());
            doc.insert("version".into(), "v".into());
            for part in [first, second] {
                if let serde_json::Value::Object(m) = part {
                    doc.extend(m);
                }
            }
            serde_json::Value::Object(doc).to_string().into_bytes()
        }
    };
    let _ = parse_offer(bytes.as_slice(), offer);
});
