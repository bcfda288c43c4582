//! A fetched region's price file, written in latlab's form: each lab's sections in the
//! registry's order, every price with the digits it has, each size with why it is what it is,
//! and every price's `[SECTION.fetched.KEY]` table naming its offer, version, publication date
//! and SKU.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::offer::Offer;
use crate::lab_kit::cost::prices::{Fetched, PRICE_LIST_SOURCE};

/// A price as the file writes it: no more digits than it has.
pub(super) fn number(x: f64) -> String {
    let s = format!("{x:.12}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() { "0".into() } else { s.into() }
}

/// The file's text.
pub(super) fn file(
    region: &str,
    taken: &str,
    urls: &[String],
    offers: &[Offer],
    values: &BTreeMap<String, (f64, Fetched)>,
) -> String {
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
    let sections = crate::prices::sections();
    for s in sections {
        let _ = writeln!(o, "\n[{}]", s.table);
        let _ = writeln!(o, "source = {}", q(&head(s.offer)));
        for p in s.prices {
            if let Some((v, _)) = values.get(&format!("{}.{}", s.table, p.key)) {
                let _ = writeln!(o, "{} = {}", p.key, number(*v));
            }
        }
        for z in s.sizes {
            let _ = writeln!(o, "# {}\n{} = {}", z.why, z.key, q(z.fetched));
        }
        if let Some(n) = s.named {
            let table = format!("{}.{}.", s.table, n.table);
            let _ = writeln!(o, "\n[{}.{}]", s.table, n.table);
            for (key, (v, _)) in values.range(table.clone()..) {
                let Some(name) = key.strip_prefix(&table) else {
                    break;
                };
                let _ = writeln!(o, "{} = {}", q(name), number(*v));
            }
        }
    }
    for (key, (_, f)) in values {
        // A named table's entry is fetched under its section: `[elasticache.fetched."NAME"]`.
        let named = sections.iter().find_map(|s| {
            let n = s.named?;
            let name = key.strip_prefix(&format!("{}.{}.", s.table, n.table))?;
            Some((s.table.to_string(), q(name)))
        });
        let (table, field) = match named {
            Some(tf) => tf,
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

#[cfg(test)]
mod tests {
    use super::*;

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
