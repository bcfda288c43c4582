//! The cost arithmetic against examples worked by hand from the built-in us-east-1 file
//! (shard-hour $0.015, PUT payload units $0.014 per million, fan-out $0.015 per consumer-shard-
//! hour and $0.013 per GB; S3 Standard PUT $0.005 and GET $0.0004 per 1,000, $0.023 per
//! GB-month; Express PUT $0.00113 and GET $0.00003 per 1,000, $0.11 per GB-month, $0.0032 per GB
//! uploaded and $0.0006 per GB retrieved; cache.t3.micro $0.017 per node-hour). A GB is 2^30 B.

use std::sync::Arc;

use super::prices::{Chosen, Prices};
use super::*;
use crate::labs::kinesis::config::ConsumerKind;
use crate::services::s3::Class;
use crate::tui::fixture;

fn us_east_1() -> Chosen {
    Prices::choose(None, "us-east-1").expect("the built-in us-east-1 file parses")
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} != {b}");
}

#[test]
fn both_built_in_files_parse_and_name_their_region_date_and_sources() {
    for (region, _) in prices::BUILTIN {
        let p = Prices::builtin(region).unwrap_or_else(|| panic!("{region} does not parse"));
        assert_eq!(p.region, *region);
        assert_eq!(p.taken.len(), 10);
        assert!(!p.source.is_empty() && !p.kinesis.source.is_empty());
    }
    // Tokyo's prices were found in no stored page: every one of them says so.
    let tokyo = Prices::builtin("ap-northeast-1").unwrap();
    assert_eq!(tokyo.unverified.len(), 4 + 3 + 5 + 3);
}

#[test]
fn put_payload_units_round_each_record_up_to_25_kb() {
    // 25 KB = 25,600 B: a byte more is a second unit; 1 MB (1,048,576 B) is 41 units, and a
    // record of 1 B is still one.
    assert_eq!(kinesis::payload_units(1), 1);
    assert_eq!(kinesis::payload_units(25_600), 1);
    assert_eq!(kinesis::payload_units(25_601), 2);
    assert_eq!(kinesis::payload_units(1_048_576), 41);
}

#[test]
fn the_demo_stream_with_two_fan_out_consumers() {
    // 1 shard, 5 records/s of 128 B asked, 2 fan-out consumers (SDK, Lambda) and 2 pollers:
    //   shard-hours        1 × 0.015                                   = 0.015
    //   PUT payload units  5 × 1 unit × 3,600 = 18,000 / 1e6 × 0.014   = 0.000252
    //   EFO shard-hours    2 × 1 × 0.015                               = 0.030
    //   EFO retrieval      5 × 128 × 3,600 × 2 = 4,608,000 B / 2^30
    //                      = 0.00429153 GB × 0.013                     = 0.0000557899
    //   total 0.0453077899 $/h; × 730 = 33.0746867 $/month
    let view = fixture::sample_view();
    let cost = of(&view.snapshot, &us_east_1());
    let k = cost.lab(LabKind::Kinesis).unwrap();
    let hourly: Vec<f64> = k.items.iter().map(|i| i.hourly).collect();
    close(hourly[0], 0.015);
    close(hourly[1], 0.000252);
    close(hourly[2], 0.030);
    close(hourly[3], 4_608_000.0 / GB * 0.013);
    close(k.hourly(), 0.045_307_789_947_5);
    close(k.monthly(), 33.074_686_661_7);
    assert_eq!(cost.label(), "list price, us-east-1, 2026-12-01");
    assert!(k.unverified(), "the Kinesis prices are not AWS's own text");
    assert!(
        k.line(&cost)
            .starts_with("cost $0.0453/h · $33.07/mo (730 h) · list price, us-east-1, 2026-12-01"),
        "{}",
        k.line(&cost)
    );
}

#[test]
fn three_shards_large_records_and_a_stopped_consumer() {
    // 3 shards, 100 records/s of 60,000 B (3 units: 51,200 < 60,000 <= 76,800), one fan-out
    // consumer running and one stopped (not counted while the run goes on):
    //   shard-hours        3 × 0.015                                   = 0.045
    //   PUT payload units  100 × 3 × 3,600 = 1,080,000 / 1e6 × 0.014   = 0.01512
    //   EFO shard-hours    1 × 3 × 0.015                               = 0.045
    //   EFO retrieval      100 × 60,000 × 3,600 = 2.16e10 B / 2^30
    //                      = 20.1165378 GB × 0.013                     = 0.2615149
    //   total 0.366635379 $/h
    let mut view = fixture::sample_view();
    let k = view.snapshot.kinesis.as_mut().unwrap();
    k.shards = 3;
    k.producer.asked_rate = 100.0;
    k.producer.payload_bytes = 60_000;
    k.consumers.retain(|c| c.kind == ConsumerKind::Efo);
    let mut stopped = k.consumers[0].clone();
    stopped.stopped_at_secs = Some(12.0);
    k.consumers.push(stopped);
    let cost = of(&view.snapshot, &us_east_1());
    close(
        cost.lab(LabKind::Kinesis).unwrap().hourly(),
        0.366_635_378_952,
    );
    // Once the run is complete, every consumer that ran counts: a second 0.045 + 0.2615149.
    view.snapshot.complete = true;
    let complete = of(&view.snapshot, &us_east_1());
    close(
        complete.lab(LabKind::Kinesis).unwrap().hourly(),
        0.366_635_378_952 + 0.045 + 2.16e10 / GB * 0.013,
    );
}

#[test]
fn consumers_cost_per_million_records_and_per_gb() {
    // The demo stream: the stream's own 0.015 + 0.000252 = 0.015252 $/h over 18,000 records/h
    // (0.018 million) and 2,304,000 B/h (0.00214577 GB):
    //   a poller          0.015252 / 0.018                            = 0.847333 $/M records
    //                     0.015252 / 0.00214577                       = 7.107947 $/GB
    //   a fan-out reader  (0.015252 + 0.015 + 0.00214577 × 0.013) / 0.018 = 1.682216 $/M
    let view = fixture::sample_view();
    let k = view.snapshot.kinesis.as_ref().unwrap();
    let units = consumer_units(k, &us_east_1().prices);
    let poller = units
        .iter()
        .find(|u| u.kind == ConsumerKind::Poller)
        .unwrap();
    close(poller.per_million_records.unwrap(), 0.847_333_333_333);
    close(poller.per_gb.unwrap(), 7.107_947_178_667);
    assert_eq!(poller.own_hourly, 0.0);
    let efo = units.iter().find(|u| u.kind == ConsumerKind::Efo).unwrap();
    close(efo.per_million_records.unwrap(), 1.682_216_387_431);
    close(efo.per_gb.unwrap(), 14.111_453_845_333);
    // No records asked for: no per-record figure.
    let mut idle = k.clone();
    idle.producer.asked_rate = 0.0;
    assert!(
        consumer_units(&idle, &us_east_1().prices)[0]
            .per_million_records
            .is_none()
    );
}

#[test]
fn s3_standard_and_express_at_the_measured_rates() {
    // 2 PUT/s and 2 GET/s measured, 100,000 B objects, 1 loop keeping 16 of them
    // (1,600,000 B = 0.00149012 GB):
    //   Standard  PUT 2 × 3,600 / 1,000 × 0.005 = 0.036; GET × 0.0004 = 0.00288;
    //             storage 0.00149012 × 0.023 / 730 = 0.0000000469
    //             total 0.0388800469 $/h
    //   Express   PUT 7.2 × 0.00113 = 0.008136; GET 7.2 × 0.00003 = 0.000216;
    //             storage 0.00149012 × 0.11 / 730 = 0.000000224538;
    //             upload 7.2e8 B/h = 0.670552 GB × 0.0032 = 0.00214577;
    //             retrieval 0.670552 × 0.0006 = 0.000402331
    //             total 0.0109003231 $/h
    let mut view = fixture::sample_s3_view();
    let cost = of(&view.snapshot, &us_east_1());
    close(cost.lab(LabKind::S3).unwrap().hourly(), 0.038_880_046_949);
    view.snapshot.s3.as_mut().unwrap().class = Class::ExpressOneZone;
    let express = of(&view.snapshot, &us_east_1());
    let lab = express.lab(LabKind::S3).unwrap();
    assert_eq!(lab.items.len(), 5);
    close(lab.hourly(), 0.010_900_323_102);
    assert!(
        !lab.items[0].unverified,
        "Express's prices are the S3 FAQ's own"
    );
}

#[test]
fn express_per_gb_charges_only_above_the_files_threshold() {
    // The same loop with 1,000,000 B objects and the launch rule (only the part of a request
    // above 512 KiB = 524,288 B is charged per GB): 475,712 B of each request.
    //   PUT 0.008136 + GET 0.000216 + storage 16e6 B = 0.0149012 GB × 0.11 / 730 = 0.00000224538
    //   upload 7,200 × 475,712 B = 3.18991 GB × 0.0032 = 0.0102077
    //   retrieval 3.18991 × 0.0006 = 0.00191395
    //   total 0.0204758560 $/h
    let text = prices::BUILTIN[0]
        .1
        .replace("per_gb_above = \"0B\"", "per_gb_above = \"512KiB\"");
    let p = Arc::new(Prices::parse(&text, "test.toml").unwrap());
    let mut view = fixture::sample_s3_view();
    let s3 = view.snapshot.s3.as_mut().unwrap();
    s3.class = Class::ExpressOneZone;
    s3.payload_bytes = 1_000_000;
    let cost = of(
        &view.snapshot,
        &Prices::choose(Some(&p), "us-east-1").unwrap(),
    );
    close(cost.lab(LabKind::S3).unwrap().hourly(), 0.020_475_856_022);
    assert_eq!(cost.origin, "test.toml");
}

#[test]
fn s3_classes_cost_per_million_requests_and_per_gb() {
    // At 100,000 B (93.1323 GB a million requests):
    //   Standard PUT 0.005 × 1,000 = 5.00 $/M, 5 / 93.1323 = 0.0536871 $/GB
    //   Express PUT 1.13 + 100,000 / 2^30 × 0.0032 × 1e6 = 1.13 + 0.298023 = 1.428023 $/M,
    //              1.428023 / 93.1323 = 0.0153333 $/GB
    let view = fixture::sample_s3_view();
    let units = class_units(view.snapshot.s3.as_ref().unwrap(), &us_east_1().prices);
    let find = |class, op: &str| {
        units
            .iter()
            .find(|u| u.class == class && u.op == op)
            .unwrap()
    };
    close(find(Class::Standard, "PUT").per_million_requests, 5.0);
    close(
        find(Class::Standard, "PUT").per_gb.unwrap(),
        0.053_687_091_2,
    );
    close(
        find(Class::ExpressOneZone, "PUT").per_million_requests,
        1.428_023_223_877,
    );
    close(
        find(Class::ExpressOneZone, "PUT").per_gb.unwrap(),
        0.015_333_282_611,
    );
}

#[test]
fn redis_node_hours_of_the_scenarios_node_type() {
    // 2 nodes (primary + replica) × 0.017 = 0.034 $/h; × 730 = 24.82 $/month.
    let mut view = fixture::sample_redis_view();
    let cost = of(&view.snapshot, &us_east_1());
    let r = cost.lab(LabKind::Redis).unwrap();
    close(r.hourly(), 0.034);
    close(r.monthly(), 24.82);
    assert!(
        r.notes[0].contains("scenario's assumption"),
        "{:?}",
        r.notes
    );
    // A node type the file does not price: said, not guessed.
    view.snapshot.redis.as_mut().unwrap().node_type = "cache.r7g.large".into();
    let cost = of(&view.snapshot, &us_east_1());
    let r = cost.lab(LabKind::Redis).unwrap();
    assert!(r.items.is_empty());
    assert_eq!(
        r.line(&cost),
        "cost: no price for cache.r7g.large in the price file (built-in)"
    );
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
}

/// The built-in us-east-1 file with `from` replaced by `to`, parsed.
fn edited(from: &str, to: &str) -> String {
    let text = prices::BUILTIN[0].1;
    assert!(text.contains(from), "{from}");
    let e = Prices::parse(&text.replace(from, to), "bad.toml").unwrap_err();
    format!("{e:#}")
}

#[test]
fn a_bad_price_file_is_one_line_naming_the_file_the_line_and_the_key() {
    let line = |key: &str| {
        prices::BUILTIN[0]
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
