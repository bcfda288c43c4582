//! The DynamoDB lab's part of a report: the table and its partitions (each partition's units and
//! throttles, the hot one named, the table's total use against its capacity, throttles by
//! reason), the writes' and reads' percentiles, and the change-data-capture race with each
//! consumer's count that adds up (received + lost + unread = written); and its CSV rows. No seed
//! measured DynamoDB, so nothing is compared.

use super::config::Billing;
use super::snapshot::DynamoSnapshot;
use crate::lab_kit::section::table::Table;
use crate::lab_kit::section::{CsvRows, Cx, section_heading};
use crate::labs::NoSeed;
use latlab_core::units::thousands;

fn units(u: f64) -> String {
    thousands(u.round() as u64)
}

/// The table's use over the run, as one sentence: what it consumed a second against its
/// capacity, and where the throttles went.
pub fn table_line(s: &DynamoSnapshot) -> String {
    let per_sec = s.write_units_per_sec();
    let capacity = match s.billing {
        Billing::Provisioned { write, .. } => format!(
            "{} WCU/s on average of {} provisioned ({:.0}% of the table's write capacity)",
            units(per_sec),
            thousands(write),
            100.0 * per_sec / write.max(1) as f64
        ),
        Billing::OnDemand => format!("{} WCU/s on average, on-demand", units(per_sec)),
    };
    let throttled = s.writer.throttled_attempts();
    let hot = match s.most_throttled() {
        Some(p) => format!(
            "; partition p{} took {} of the {} throttled write and read attempts",
            p.index,
            thousands(p.throttled),
            thousands(s.partitions.iter().map(|p| p.throttled).sum())
        ),
        None => String::new(),
    };
    format!(
        "Table {} ({}): the writer consumed {capacity}; {} write attempts throttled ({}){hot}.",
        s.table,
        s.billing.describe(),
        thousands(throttled),
        super::view::reasons(&s.writer.throttled)
    )
}

impl crate::labs::Reported for super::DynamoLab {
    fn write(s: &DynamoSnapshot, _cx: &Cx<'_, NoSeed>, out: &mut String, md: bool) {
        let heading = section_heading(md);
        let table = |t: &Table| if md { t.markdown() } else { t.text() };
        if let Some(why) = &s.unavailable {
            heading(out, "DynamoDB: not run");
            out.push_str(&format!("{why}\n"));
            return;
        }
        heading(
            out,
            "DynamoDB: partitions (latlab's model), units as DynamoDB answered them",
        );
        let seconds = s.seconds.max(1.0);
        let most = s.most_throttled().map(|p| p.index);
        let mut t = Table::new(&[
            "partition",
            "write units",
            "WCU/s average",
            "of its limit",
            "throttled attempts",
            "",
        ])
        .labels(1);
        for p in &s.partitions {
            let avg = p.write_units_total / seconds;
            t.row(vec![
                format!("p{}", p.index),
                units(p.write_units_total),
                units(avg),
                format!("{:.0}%", 100.0 * avg / p.write_limit.max(1) as f64),
                thousands(p.throttled),
                if most == Some(p.index) {
                    "HOT".into()
                } else {
                    String::new()
                },
            ]);
        }
        out.push_str(&table(&t));
        out.push_str(&table_line(s));
        out.push('\n');
        heading(
            out,
            "DynamoDB: writes and reads (call -> answer, retries included)",
        );
        let mut t = Table::new(&[
            "series",
            "calls",
            "p50",
            "p90",
            "p99",
            "p99.9",
            "max",
            "units",
            "throttled",
            "failed",
        ])
        .labels(1);
        let w = &s.writer;
        let lat = |l: &crate::metrics::Summary| {
            [l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us].map(|us| l.ms(us))
        };
        let [a, b, c, d, e] = lat(&w.latency);
        t.row(vec![
            format!("PutItem ({} B)", s.item_size),
            thousands(w.latency.count),
            a,
            b,
            c,
            d,
            e,
            units(w.units),
            thousands(w.throttled_attempts()),
            thousands(w.failed),
        ]);
        for r in &s.readers {
            let [a, b, c, d, e] = lat(&r.latency);
            t.row(vec![
                format!("GetItem, {}", r.consistency),
                thousands(r.latency.count),
                a,
                b,
                c,
                d,
                e,
                format!("{:.1}", r.units),
                thousands(r.throttled.values().sum()),
                thousands(r.failed),
            ]);
        }
        out.push_str(&table(&t));
        out.push_str(&format!(
            "Writer: {} acknowledged, {} failed after the SDK's retries ({}), {} never sent (the \
             writer had its most calls in flight); SDK attempts {}, retries {}.\n",
            thousands(w.written),
            thousands(w.failed),
            if w.sdk.counters.escaped.is_empty() {
                "none".to_string()
            } else {
                w.sdk
                    .counters
                    .escaped
                    .iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            thousands(w.behind),
            thousands(w.sdk.counters.attempts),
            thousands(w.sdk.counters.retries),
        ));
        if s.cdc.is_empty() {
            return;
        }
        heading(
            out,
            "DynamoDB: change data capture, write start -> the consumer has the change",
        );
        let mut t = Table::new(&[
            "consumer", "how", "count", "p50", "p90", "p99", "p99.9", "max",
        ])
        .labels(2);
        for c in &s.cdc {
            let [a, b, cc, d, e] = lat(&c.latency);
            t.row(vec![
                format!("{}{}", c.name, if c.stopped { " (left)" } else { "" }),
                c.how.describe(),
                thousands(c.latency.count),
                a,
                b,
                cc,
                d,
                e,
            ]);
        }
        out.push_str(&table(&t));
        heading(
            out,
            "DynamoDB: every change counted (received + lost + unread = written)",
        );
        let mut t = Table::new(&[
            "consumer",
            "written",
            "received",
            "lost",
            "unread",
            "adds up",
            "duplicates",
            "unacknowledged",
            "calls",
            "throttled",
        ])
        .labels(1);
        for c in &s.cdc {
            let k = c.counts;
            t.row(vec![
                c.name.clone(),
                thousands(k.written),
                thousands(k.received),
                thousands(k.lost),
                thousands(k.unread),
                if k.adds_up() { "yes" } else { "NO" }.into(),
                thousands(k.duplicates),
                thousands(k.unacknowledged),
                thousands(c.calls),
                thousands(c.sdk.counters.throttles),
            ]);
        }
        out.push_str(&table(&t));
        out.push_str(
            "Unacknowledged: changes a consumer received whose write the writer never heard \
             acknowledged (it failed after DynamoDB committed it). A consumer that joined with a \
             key counts every write, from the stream's oldest change.\n",
        );
    }

    fn csv(s: &DynamoSnapshot, rows: &mut CsvRows) {
        let w = &s.writer;
        rows.summary("dynamodb", "writer", "write", &w.latency);
        for (metric, v) in [
            ("written", w.written as f64),
            ("failed", w.failed as f64),
            ("behind", w.behind as f64),
            ("units", w.units),
            ("throttled", w.throttled_attempts() as f64),
            ("retries", w.sdk.counters.retries as f64),
        ] {
            rows.add("dynamodb", "writer", metric, v);
        }
        for (reason, n) in &w.throttled {
            rows.add(
                "dynamodb",
                "writer",
                &format!("throttled_{reason}"),
                *n as f64,
            );
        }
        for r in &s.readers {
            rows.summary("dynamodb", &r.consistency, "read", &r.latency);
            rows.add("dynamodb", &r.consistency, "units", r.units);
        }
        for p in &s.partitions {
            let subject = format!("p{}", p.index);
            rows.add("dynamodb", &subject, "write_units", p.write_units_total);
            rows.add("dynamodb", &subject, "throttled", p.throttled as f64);
        }
        for c in &s.cdc {
            rows.summary("dynamodb", &c.name, "write_to_receive", &c.latency);
            let k = c.counts;
            for (metric, v) in [
                ("written", k.written),
                ("received", k.received),
                ("lost", k.lost),
                ("unread", k.unread),
                ("duplicates", k.duplicates),
                ("throttles", c.sdk.counters.throttles),
            ] {
                rows.add("dynamodb", &c.name, metric, v as f64);
            }
        }
    }

    fn facts(s: &DynamoSnapshot, _seed: Option<&NoSeed>) -> Vec<(&'static str, String)> {
        if s.unavailable.is_some() {
            return Vec::new();
        }
        vec![(
            "DynamoDB",
            format!(
                "table {} ({}), {} partitions in latlab's model; {}/s PutItem of {} B over {} keys{}; {} change consumer(s)",
                s.table,
                s.billing.describe(),
                s.partitions.len(),
                s.rate,
                s.item_size,
                s.keys,
                if s.skewed {
                    format!(", {:.0}% to the hot key at the end", s.hot_share * 100.0)
                } else {
                    String::new()
                },
                s.cdc.len()
            ),
        )]
    }

    /// Each change consumer's accounting: received + lost + unread = written.
    fn soak(d: &serde_json::Value, out: &mut String) -> u64 {
        let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
        let Some(d) = d.as_object() else {
            return 0;
        };
        if let Some(why) = d.get("unavailable").and_then(|v| v.as_str()) {
            out.push_str(&format!("DynamoDB: not run: {why}\n"));
        }
        out.push_str(&format!(
            "DynamoDB writer: {} acknowledged\n",
            n(&d["writer"]["written"])
        ));
        let mut lost_total = 0;
        for c in d["cdc"].as_array().into_iter().flatten() {
            let k = &c["counts"];
            let (w, r, l, u) = (
                n(&k["written"]),
                n(&k["received"]),
                n(&k["lost"]),
                n(&k["unread"]),
            );
            lost_total += l;
            out.push_str(&format!(
                "DynamoDB {}: {w} written, {r} received, {l} lost, {u} unread: {}\n",
                c["name"].as_str().unwrap_or("?"),
                if r + l + u == w { "holds" } else { "BROKEN" }
            ));
        }
        lost_total
    }
}
