//! The price files: parsed, chosen by region, and refused with the line and key at fault. Each
//! lab's arithmetic is tested beside it (`labs/X/cost.rs`), against examples worked by hand
//! from the built-in us-east-1 file (shard-hour $0.015, PUT payload units $0.014 per million, fan-out $0.015 per consumer-shard-
//! hour and $0.013 per GB; S3 Standard PUT $0.005 and GET $0.0004 per 1,000, $0.023 per
//! GB-month; Express PUT $0.00113 and GET $0.00003 per 1,000, $0.11 per GB-month, $0.0032 per GB
//! uploaded and $0.0006 per GB retrieved; cache.t3.micro $0.017 per node-hour). A GB is 2^30 B.

use super::*;

#[test]
fn both_built_in_files_parse_and_name_their_region_date_and_sources() {
    for (region, _) in BUILTIN {
        let p = Prices::builtin(region).unwrap_or_else(|| panic!("{region} does not parse"));
        assert_eq!(p.region, *region);
        assert_eq!(p.taken.len(), 10);
        assert!(!p.source.is_empty() && p.sections.values().all(|s| !s.is_empty()));
    }
    // Tokyo's prices were found in no stored page: every one of them says so.
    let tokyo = Prices::builtin("ap-northeast-1").unwrap();
    assert_eq!(tokyo.unverified.len(), 4 + 3 + 5 + 3);
}

#[test]
fn a_region_without_a_file_falls_back_to_us_east_1_and_says_so() {
    let c = Prices::choose(None, "eu-west-1").unwrap();
    assert_eq!(c.prices.region, "us-east-1");
    assert_eq!(
        c.note.as_deref(),
        Some("latlab has no price file for eu-west-1; us-east-1's prices stand in")
    );
    assert!(
        Prices::choose(None, "ap-northeast-1")
            .unwrap()
            .note
            .is_none()
    );
    // A Redis-only run on latlab's own servers has no region: not "no price file" for one.
    let c = Prices::choose(None, "").unwrap();
    assert_eq!(
        c.note.as_deref(),
        Some(
            "the run used no AWS region (nothing it measured is in one): priced at us-east-1's list prices"
        )
    );
}

/// The built-in us-east-1 file with `from` replaced by `to`, parsed.
fn edited(from: &str, to: &str) -> String {
    let text = BUILTIN[0].1;
    assert!(text.contains(from), "{from}");
    let e = Prices::parse(&text.replace(from, to), "bad.toml").unwrap_err();
    format!("{e:#}")
}

#[test]
fn a_bad_price_file_is_one_line_naming_the_file_the_line_and_the_key() {
    let line = |key: &str| {
        BUILTIN[0]
            .1
            .lines()
            .position(|l| l.starts_with(key))
            .unwrap()
            + 1
    };
    let n = line("shard_hour =");
    let e = edited("\nshard_hour = 0.015", "\nshard_hour = \"cheap\"");
    assert!(
        e.starts_with(&format!("prices file bad.toml: line {n}, column ")),
        "{e}"
    );
    assert!(
        e.contains("(kinesis.shard_hour)") && !e.contains('\n'),
        "{e}"
    );
    let e = edited("\nshard_hour = 0.015", "\nshard_hour = -0.015");
    assert_eq!(
        e,
        format!(
            "prices file bad.toml: line {n} (kinesis.shard_hour): a price is a number of dollars, 0 or more, not -0.015"
        )
    );
    let n = line("taken =");
    let e = edited("taken = \"2026-12-01\"", "taken = \"December\"");
    assert!(
        e.starts_with(&format!("prices file bad.toml: line {n} (taken): ")),
        "{e}"
    );
    let e = edited(
        "get_per_1000 = 0.0004",
        "get_per_1000 = 0.0004\nlist_per_1000 = 1",
    );
    assert!(
        e.contains("(s3.standard.list_per_1000)") && e.contains("unknown field"),
        "{e}"
    );
    let e = edited("\nshard_hour = \"infracost", "\nshard_hours = \"infracost");
    assert!(
        e.contains("(kinesis.unverified.shard_hours): names no price"),
        "{e}"
    );
}
