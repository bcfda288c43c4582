//! The S3 lab's part of a report: the seed's matrix of set times beside ours, and the live loop's
//! PUT and GET per storage class; and its CSV rows.

use crate::lab_kit::section::compare::Comparer;
use crate::lab_kit::section::table::Table;
use crate::lab_kit::section::{CsvRows, Cx, Run, ratio_text, section_heading};
use crate::labs::s3::config::S3Seed;
use crate::labs::s3::snapshot::S3Snapshot;
use latlab_core::units::thousands;

/// This run's matrix beside an S3 seed's.
fn compare_matrix(rows: &[crate::labs::s3::MatrixRow], seed: &S3Seed, cmp: &mut Comparer) {
    let exp = &seed.experiment;
    for (dir, seed_rows) in [("upload", &seed.upload), ("download", &seed.download)] {
        // Like with like: a set the seed did not run (a --quick set) has no seed figure.
        for row in rows {
            let label = row.case.label();
            let Some(s) = seed_rows.iter().find(|s| s.case == label) else {
                continue;
            };
            let (e, st) = if dir == "upload" {
                (row.upload_express_s, row.upload_standard_s)
            } else {
                (row.download_express_s, row.download_standard_s)
            };
            let id = |stat: &str| format!("{exp}/{dir}/{label}/{stat}");
            cmp.add(id("express"), e, s.express_s, s.express_s);
            cmp.add(id("standard"), st, s.standard_s, s.standard_s);
            if e > 0.0 {
                cmp.ratio_of(
                    id("ratio"),
                    st / e,
                    s.standard_s / s.express_s,
                    [&id("express"), &id("standard")],
                );
            }
        }
    }
}

impl crate::labs::Reported for super::S3Lab {
    /// Each class and operation's requests, SlowDowns and errors.
    fn soak(s3: &serde_json::Value, out: &mut String) -> u64 {
        let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
        for o in s3["ops"].as_array().into_iter().flatten() {
            out.push_str(&format!(
                "S3 {} {}: {} requests, {} SlowDown, {} errors\n",
                o["class"].as_str().unwrap_or("?"),
                o["op"].as_str().unwrap_or("?"),
                n(&o["requests"]),
                n(&o["slow_downs"]),
                n(&o["errors"])
            ));
        }
        0
    }

    /// Its rows of the CSV.
    fn csv(snap: &S3Snapshot, rows: &mut CsvRows) {
        for r in snap.matrix.iter().flatten() {
            let set = r.case.label();
            for (metric, v) in [
                ("upload_express_s", r.upload_express_s),
                ("upload_standard_s", r.upload_standard_s),
                ("download_express_s", r.download_express_s),
                ("download_standard_s", r.download_standard_s),
            ] {
                rows.add("s3", &set, metric, v);
            }
        }
        for o in &snap.ops {
            let subject = format!("{} {}", o.class.storage_class(), o.op);
            rows.summary("s3", &subject, "first_byte", &o.first_byte);
            rows.summary("s3", &subject, "total", &o.total);
            rows.add("s3", &subject, "mb_per_sec", o.mb_per_sec);
            rows.add("s3", &subject, "slow_downs", o.slow_downs as f64);
            rows.add("s3", &subject, "errors", o.errors as f64);
        }
    }

    /// Its sections of the text or Markdown report.
    fn write(s3: &S3Snapshot, cx: &Cx<'_, S3Seed>, out: &mut String, md: bool) {
        let heading = section_heading(md);
        let table = |t: &Table| if md { t.markdown() } else { t.text() };
        let secs = |v: f64| format!("{v:.3}");
        let seed = cx.seed;
        if let Some(rows) = &s3.matrix {
            for dir in ["upload", "download"] {
                heading(
                    out,
                    &format!("S3: {dir}, seconds per whole set (one object after another)"),
                );
                let mut t =
                    Table::new(&["set", "class", "ours", "seed", "ours / seed", "cell"]).labels(2);
                for row in rows {
                    let set = row.case.label();
                    let (e, st) = if dir == "upload" {
                        (row.upload_express_s, row.upload_standard_s)
                    } else {
                        (row.download_express_s, row.download_standard_s)
                    };
                    let ratio = if e > 0.0 { st / e } else { f64::NAN };
                    for (class, ours, stat, as_ratio) in [
                        ("Express One Zone", e, "express", false),
                        ("Standard", st, "standard", false),
                        ("Standard / Express", ratio, "ratio", true),
                    ] {
                        let c = seed.and_then(|sd| {
                            cx.cell(&format!("{}/{dir}/{set}/{stat}", sd.experiment))
                        });
                        let show = |v: f64| if as_ratio { ratio_text(v) } else { secs(v) };
                        t.row(vec![
                            set.clone(),
                            class.into(),
                            show(ours),
                            c.map_or(String::new(), |c| show(c.seed_low)),
                            c.map_or(String::new(), |c| ratio_text(c.ratio)),
                            c.map_or(String::new(), |c| c.label.name().into()),
                        ]);
                    }
                }
                out.push_str(&table(&t));
            }
            if let Some(sd) = seed {
                let unmatched: Vec<String> = rows
                    .iter()
                    .map(|r| r.case.label())
                    .filter(|l| !sd.upload.iter().any(|u| &u.case == l))
                    .collect();
                if !unmatched.is_empty() {
                    out.push_str(&format!(
                        "No seed figure for {}: the seed ran {} (a scaled-down set is not compared with a full one).\n",
                        unmatched.join(", "),
                        sd.upload
                            .iter()
                            .map(|u| u.case.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
        }
        heading(out, "S3: per request");
        let mut t = Table::new(&[
            "class",
            "op",
            "requests",
            "first byte p50",
            "p99",
            "total p50",
            "p99",
            "max",
            "MB/s",
            "SlowDown",
            "errors",
        ])
        .labels(2);
        for o in &s3.ops {
            t.row(vec![
                o.class.storage_class().to_string(),
                o.op.clone(),
                thousands(o.requests),
                o.first_byte.ms(o.first_byte.p50_us),
                o.first_byte.ms(o.first_byte.p99_us),
                o.total.ms(o.total.p50_us),
                o.total.ms(o.total.p99_us),
                o.total.ms(o.total.max_us),
                format!("{:.1}", o.mb_per_sec),
                thousands(o.slow_downs),
                thousands(o.errors),
            ]);
        }
        out.push_str(&table(&t));
        out.push_str(&format!(
            "buckets: {} (Standard), {} (Express One Zone); CreateSession calls: {}; live payload {}, {} loop(s)\n",
            s3.standard_bucket,
            if s3.express_bucket.is_empty() {
                "none named"
            } else {
                &s3.express_bucket
            },
            s3.create_sessions.map_or("not observable on this endpoint".to_string(), thousands),
            latlab_core::units::format_bytes(s3.payload_bytes),
            s3.concurrency
        ));
        for o in s3.ops.iter().filter(|o| o.errors > 0) {
            if let Some(line) = &o.last_error {
                out.push_str(&format!(
                    "{} {}: {} failed; the last: {line}\n",
                    o.class.storage_class(),
                    o.op,
                    thousands(o.errors)
                ));
            }
        }
        if let Some(why) = &s3.express_unsupported {
            out.push_str(&format!(
                "S3 Express One Zone not measured: {why}; Standard was\n"
            ));
        }
    }

    /// The cells an S3 seed can be compared on.
    fn seed_ids(s3: &S3Seed, ids: &mut Vec<String>) {
        for (dir, rows) in [("upload", &s3.upload), ("download", &s3.download)] {
            for r in rows {
                for stat in ["express", "standard", "ratio"] {
                    ids.push(format!("{}/{dir}/{}/{stat}", s3.experiment, r.case));
                }
            }
        }
    }

    /// Its matrix beside the seed's, when it ran one.
    fn compare(s3: &S3Snapshot, seed: &S3Seed, _run: &Run<'_>, cmp: &mut Comparer) {
        if let Some(rows) = &s3.matrix {
            compare_matrix(rows, seed, cmp);
        }
    }
}
