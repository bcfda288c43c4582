//! `latlab prices`: the price files, and every price of one with whether AWS's own text states
//! it and where it comes from, so a user knows which to check before quoting a cost.

use super::{BUILTIN, Prices};

impl Prices {
    /// Every price: (key as in the file's `unverified` tables, value in US dollars, unit, the
    /// section's source), in the order of the labs' sections.
    pub fn entries(&self) -> Vec<(String, f64, &'static str, &str)> {
        let mut v = Vec::new();
        for s in super::sections() {
            let Some(source) = self.sections.get(s.table) else {
                continue;
            };
            for p in s.prices {
                let key = format!("{}.{}", s.table, p.key);
                if let Some(value) = self.value(&key) {
                    v.push((key, value, p.unit, source.as_str()));
                }
            }
            if let Some(n) = s.named {
                let table = format!("{}.{}", s.table, n.table);
                for (name, value) in self.named(&table) {
                    v.push((format!("{table}.{name}"), value, n.unit, source.as_str()));
                }
            }
        }
        v
    }

    /// Every price a line each, verified or not, then where each unverified one comes from.
    pub fn listing(&self) -> String {
        let entries = self.entries();
        let unverified = entries
            .iter()
            .filter(|(key, ..)| self.is_unverified(key))
            .count();
        let mut out = format!(
            "{}: list prices in US dollars, taken {} ({}); {} of {} verified in AWS's own text\n\n",
            self.region,
            self.taken,
            self.origin,
            entries.len() - unverified,
            entries.len()
        );
        let width = entries.iter().map(|(k, ..)| k.len()).max().unwrap_or(0);
        for (key, value, unit, _) in &entries {
            let mark = if self.is_unverified(key) {
                "unverified"
            } else {
                "verified"
            };
            out.push_str(&format!(
                "{key:width$}  {:>10}  {mark:<10}  {unit}\n",
                trim(*value)
            ));
        }
        out.push_str("\nverified: stated in AWS's own text, from:\n");
        let mut sources: Vec<&str> = entries
            .iter()
            .filter(|(key, ..)| !self.is_unverified(key))
            .map(|(.., source)| *source)
            .collect();
        sources.dedup();
        for s in sources {
            out.push_str(&format!("  {s}\n"));
        }
        if !self.fetched.is_empty() {
            out.push_str("\nread from AWS's Price List API (`latlab prices fetch`):\n");
            for (key, f) in &self.fetched {
                out.push_str(&format!("  {key}: {}\n", f.line()));
            }
        }
        if unverified > 0 {
            out.push_str(
                "\nunverified: not found in AWS's own text; where each figure comes from:\n",
            );
            for (key, why) in &self.unverified {
                out.push_str(&format!("  {key}: {why}\n"));
            }
            out.push_str(
                "\nCost figures built on an unverified price are marked * on screen and in reports. \
                 To price with figures you have checked, copy the file, correct it, move each \
                 price you checked out of its `unverified` table, and give it with --prices FILE \
                 (or the config file's `prices`).\n",
            );
        }
        out
    }
}

/// `latlab prices` without a region: the built-in files, a line each.
pub fn regions_listing() -> String {
    let mut out = String::new();
    for (region, _) in BUILTIN {
        if let Some(p) = Prices::builtin(region) {
            let entries = p.entries();
            let verified = entries
                .iter()
                .filter(|(key, ..)| !p.is_unverified(key))
                .count();
            out.push_str(&format!(
                "{region:<16} taken {}  {verified} of {} prices verified in AWS's own text\n",
                p.taken,
                entries.len()
            ));
        }
    }
    out.push_str(
        "\n`latlab prices REGION` (or a price file) lists each price and where it comes from.\n",
    );
    out
}

/// A price as written in the file: no trailing zeros.
fn trim(v: f64) -> String {
    let s = format!("{v:.8}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("${s}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_price_is_listed_with_whether_aws_states_it() {
        let p = Prices::builtin("us-east-1").unwrap();
        let text = p.listing();
        assert!(text.starts_with("us-east-1: list prices in US dollars, taken 2026-12-01 (built-in); 5 of 23 verified in AWS's own text\n"), "{text}");
        assert!(
            text.lines()
                .any(|l| l.starts_with("sqs.fifo_requests_per_million ")
                    && l.contains("$0.5")
                    && l.contains("unverified")
                    && l.ends_with("per million requests")),
            "{text}"
        );
        assert!(
            text.lines().any(|l| l.starts_with("kinesis.shard_hour ")
                && l.contains("$0.015")
                && l.contains("unverified")
                && l.ends_with("per shard-hour")),
            "{text}"
        );
        assert!(
            text.lines()
                .any(|l| l.starts_with("s3.express.put_per_1000 ")
                    && l.contains("$0.00113")
                    && l.contains(" verified ")),
            "{text}"
        );
        assert!(
            text.contains("\n  kinesis.shard_hour: infracost's Kinesis golden file"),
            "{text}"
        );
        let regions = regions_listing();
        assert!(
            regions.contains("us-east-1        taken 2026-12-01  5 of 23 prices verified"),
            "{regions}"
        );
        assert!(
            regions.contains("ap-northeast-1   taken 2026-12-01  0 of 15 prices verified"),
            "{regions}"
        );
        assert_eq!(trim(0.00003), "$0.00003");
        assert_eq!(trim(0.015), "$0.015");
    }
}
