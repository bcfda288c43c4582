//! The Kinesis lab's part of a report: latency per consumer beside the seed's, the record
//! accounting, the SDK's retries and the shard's read budget; and its CSV rows.

use super::config::ConsumerKind;
use super::snapshot::{ConsumerSnapshot, batch_line};
use crate::lab_kit::section::compare::Comparer;
use crate::lab_kit::section::table::Table;
use crate::lab_kit::section::{CsvRows, Cx, Run, rate_text, ratio_text, section_heading};
use crate::labs::kinesis::config::KinesisSeed;
use crate::labs::kinesis::snapshot::KinesisSnapshot;
use crate::labs::kinesis::state::UNSUPPORTED;
use crate::metrics::Summary;
use latlab_core::units::thousands;

impl crate::labs::Reported for super::KinesisLab {
    /// The producer's acknowledged records, and each consumer's accounting: received + lost +
    /// unread = acknowledged.
    fn soak(k: &serde_json::Value, out: &mut String) -> u64 {
        let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
        let Some(k) = k.as_object() else {
            return 0;
        };
        let mut lost_total = 0;
        let p = &k["producer"];
        out.push_str(&format!(
            "producer: {} acknowledged, {} re-sent by the SDK's retries\n",
            n(&p["acked"]),
            n(&p["sdk"]["retries"])
        ));
        out.push_str(&format!(
            "{:<18}{:>13}{:>10}{:>7}{:>12}{:>8}  identity\n",
            "consumer", "acknowledged", "received", "lost", "duplicates", "unread"
        ));
        for c in k["consumers"].as_array().into_iter().flatten() {
            let x = &c["counts"];
            let (ack, rec, lost, unread) = (
                n(&x["acknowledged"]),
                n(&x["received"]),
                n(&x["lost"]),
                n(&x["unread"]),
            );
            lost_total += lost;
            out.push_str(&format!(
                "{:<18}{ack:>13}{rec:>10}{lost:>7}{:>12}{unread:>8}  {}\n",
                c["name"].as_str().unwrap_or("?"),
                n(&x["duplicates"]),
                if rec + lost + unread == ack {
                    "holds"
                } else {
                    "BROKEN"
                }
            ));
        }
        lost_total
    }

    /// The stream and the producer, the SDK's retries, and the seed's source.
    fn facts(k: &KinesisSnapshot, seed: Option<&KinesisSeed>) -> Vec<(&'static str, String)> {
        let p = &k.producer;
        let mut facts = vec![
            (
                "stream",
                format!(
                    "{}, {}; producer asked {} records/s, {} ({}), {} payloads",
                    k.stream,
                    k.shards_text(),
                    crate::lab_kit::section::rate_text(p.asked_rate),
                    p.achieved_text(),
                    p.mode,
                    latlab_core::units::format_bytes(p.payload_bytes)
                ),
            ),
            ("SDK", k.retry.clone()),
        ];
        facts.extend(seed.map(|s| ("seed", s.source.clone())));
        facts
    }

    /// Its rows of the CSV.
    fn csv(snap: &KinesisSnapshot, rows: &mut CsvRows) {
        for c in &snap.consumers {
            rows.summary(
                "kinesis",
                &c.name,
                "arrival_to_receive",
                &c.arrival_to_receive,
            );
            rows.summary("kinesis", &c.name, "send_to_receive", &c.send_to_receive);
            let sdk = &c.sdk.counters;
            let n = &c.counts;
            if c.out_of_order > 0 {
                rows.add("kinesis", &c.name, "out_of_order", c.out_of_order as f64);
            }
            for (metric, v) in [
                ("acknowledged", n.acknowledged),
                ("received", n.received),
                ("lost", n.lost),
                ("unread", n.unread),
                ("duplicates", n.duplicates),
                ("late", n.late),
                ("attempts", sdk.attempts),
                ("throttled", sdk.throttles),
                ("retries", sdk.retries),
                ("escaped", sdk.escaped_total()),
                ("escaped_throttles", sdk.escaped_throttles()),
            ] {
                rows.add("kinesis", &c.name, metric, v as f64);
            }
            if let Some(q) = sdk.quota_left {
                rows.add("kinesis", &c.name, "quota_left", q as f64);
            }
            if let Some(b) = c.millis_behind {
                rows.add("kinesis", &c.name, "millis_behind_latest", b as f64);
            }
        }
        rows.summary(
            "kinesis",
            "producer",
            "send_to_arrival",
            &snap.send_to_arrival,
        );
        let p = &snap.producer;
        rows.summary("kinesis", "producer", "put", &p.put_latency);
        for (metric, v) in [
            ("asked_rate", p.asked_rate),
            ("achieved_rate", p.achieved_rate),
            ("acknowledged", p.acked as f64),
            ("resent", p.resent as f64),
            ("never_stored", p.failed as f64),
            ("records_refused", p.records_refused as f64),
            ("in_flight_full", p.in_flight_full),
            ("cpu_cores_used", p.cpu),
        ] {
            rows.add("kinesis", "producer", metric, v);
        }
    }

    /// Its sections of the text or Markdown report.
    fn write(k: &KinesisSnapshot, cx: &Cx<'_, KinesisSeed>, out: &mut String, md: bool) {
        let s = &cx.run;
        let heading = section_heading(md);
        let table = |t: &Table| if md { t.markdown() } else { t.text() };
        let exp = cx.seed.map(|k| k.experiment.clone());
        // Cell ids of a percentile row: p50, p90, p99, (p99.9: never in the seed), max.
        let ids = |series: &str, subject: &str| -> Vec<Option<String>> {
            ["p50", "p90", "p99", "", "max"]
                .iter()
                .map(|stat| {
                    exp.as_ref()
                        .filter(|_| !stat.is_empty())
                        .map(|e| format!("{e}/{series}/{subject}/{stat}"))
                })
                .collect()
        };
        let push_seed = |t: &mut Table, ids: &[Option<String>], trailing: usize| {
            if let Some(rows) = cx.seed_rows(ids) {
                for (label, mut cells) in
                    ["  seed", "  ours / seed", "  cell"].into_iter().zip(rows)
                {
                    cells.insert(0, label.to_string());
                    cells.extend(std::iter::repeat_n(String::new(), trailing));
                    t.row(cells);
                }
            }
        };
        // Consumers the endpoint could not serve, first: their rows below are empty for that reason.
        let unsupported: Vec<String> = k
            .consumers
            .iter()
            .filter(|c| c.status.starts_with(UNSUPPORTED))
            .map(|c| format!("{}: {}", c.name, c.status))
            .collect();
        if !unsupported.is_empty() {
            heading(out, "Kinesis: consumers this endpoint cannot serve");
            for line in unsupported {
                out.push_str(&format!("- {line}\n"));
            }
        }

        heading(
            out,
            "Kinesis: arrival -> receive (receive time - ApproximateArrivalTimestamp)",
        );
        let mut t = Table::new(&["consumer", "p50", "p90", "p99", "p99.9", "max", "records"]);
        for c in &k.consumers {
            let a = &c.arrival_to_receive;
            let name = if c.stopped_at_secs.is_some() && !s.complete {
                format!("{} (stopped)", c.name)
            } else {
                c.name.clone()
            };
            t.row(vec![
                name,
                a.ms(a.p50_us),
                a.ms(a.p90_us),
                a.ms(a.p99_us),
                a.ms(a.p999_us),
                a.ms(a.max_us),
                thousands(a.count),
            ]);
            push_seed(&mut t, &ids("arrival_to_receive", &c.name), 1);
        }
        out.push_str(&table(&t));

        heading(
            out,
            "Kinesis: send -> arrival (each record once) and send -> receive",
        );
        let mut t = Table::new(&["series", "p50", "p90", "p99", "max", "records"]);
        let row = |name: String, x: &Summary| {
            vec![
                name,
                x.ms(x.p50_us),
                x.ms(x.p90_us),
                x.ms(x.p99_us),
                x.ms(x.max_us),
                thousands(x.count),
            ]
        };
        t.row(row("send -> arrival".into(), &k.send_to_arrival));
        let mut sa = ids("send_to_arrival", "all");
        sa.remove(3);
        push_seed(&mut t, &sa, 1);
        for c in &k.consumers {
            t.row(row(
                format!("send -> receive, {}", c.name),
                &c.send_to_receive,
            ));
        }
        let p = &k.producer;
        t.row(row("put (send -> acknowledged)".into(), &p.put_latency));
        out.push_str(&table(&t));

        heading(
            out,
            "Kinesis: every record accounted for (received + lost + unread = acknowledged)",
        );
        let late = k.consumers.iter().any(|c| c.counts.late > 0);
        let unacked = k.consumers.iter().any(|c| c.counts.unacknowledged > 0);
        let mut headers = vec![
            "consumer",
            "acknowledged",
            "received",
            "lost",
            "unread",
            "duplicates",
        ];
        if late {
            headers.push("late");
        }
        if unacked {
            headers.push("never acknowledged");
        }
        // Per-key order: shown once it can say something (a reshard, or a record out of order).
        let order = k.resharded() || k.consumers.iter().any(|c| c.out_of_order > 0);
        if order {
            headers.push("out of order (per key)");
        }
        headers.push("behind (MillisBehindLatest)");
        let mut t = Table::new(&headers);
        for c in &k.consumers {
            let n = &c.counts;
            let mut row = vec![
                c.name.clone(),
                thousands(n.acknowledged),
                thousands(n.received),
                thousands(n.lost),
                thousands(n.unread),
                thousands(n.duplicates),
            ];
            if late {
                row.push(thousands(n.late));
            }
            if unacked {
                row.push(thousands(n.unacknowledged));
            }
            if order {
                row.push(thousands(c.out_of_order));
            }
            row.push(
                c.millis_behind
                    .map_or("-".into(), |b| format!("{} ms", thousands(b.max(0) as u64))),
            );
            t.row(row);
        }
        out.push_str(&table(&t));
        if k.consumers.iter().any(|c| c.counts.unread > 0) && s.complete {
            out.push_str(
                "unread: still in the stream, ahead of the consumer, when the drain ended.\n",
            );
        }
        if k.resharded() {
            out.push_str(&format!(
                "resharded: {} open shards{}; every consumer reads a parent to its end before its children (out of order: records that arrived after a record of their partition key stored later).\n",
                k.shard_story(),
                if k.updating { ", a reshard still under way (UPDATING)" } else { "" }
            ));
        }
        let unchecked: u64 = k.consumers.iter().map(|c| c.counts.unchecked).sum();
        if unchecked > 0 {
            out.push_str(&format!(
                "{} unread records were not checked for loss: their consumer was more than {} records behind in a shard.\n",
                thousands(unchecked),
                thousands(super::ledger::TAIL_CAPACITY as u64)
            ));
        }
        let shortfall = p.shortfall();
        // A host without the producer has no producer figures to give.
        if p.elsewhere.is_none() {
            out.push_str(&format!(
            "producer: {}; asked {} records/s, {}{}; {} records sent, {} acknowledged, {} re-sent by the SDK's retries, {} re-sent once refused, {} never stored; {} throttled attempts, {} records refused in PutRecords answers\n",
            p.mode,
            rate_text(p.asked_rate),
            p.achieved_text(),
            shortfall.map_or(String::new(), |s| format!(" ({})", s.describe(usize::MAX))),
            thousands(p.sent),
            thousands(p.acked),
            thousands(p.sdk.counters.retries),
            thousands(p.resent),
            thousands(p.failed),
            thousands(p.sdk.counters.throttles),
            thousands(p.records_refused),
        ));
        }
        match (&p.unsupported, &p.last_error) {
            _ if p.elsewhere.is_some() => out.push_str(&format!(
                "producer: {}\n",
                p.elsewhere.as_deref().unwrap_or_default()
            )),
            (Some(why), _) => out.push_str(&format!("producer stopped: {why}\n")),
            (None, Some(line)) if p.failed > 0 || p.resent > 0 => {
                out.push_str(&format!("producer: the last put that failed: {line}\n"))
            }
            _ => {}
        }
        for line in super::fleet::foreign_lines(k) {
            out.push_str(&line);
        }
        // On the embedded emulator the service's stamps are the host's own clock: nothing to bound.
        if !cx.run.embedded
            && let Some(line) = super::fleet::clock(k).line()
        {
            out.push_str(&line);
        }

        heading(out, "Kinesis: what the SDK did");
        let has_seed_escaped = k.consumers.iter().any(|c| {
            exp.as_ref().is_some_and(|e| {
                cx.cell(&format!("{e}/escaped_throttles/{}/count", c.name))
                    .is_some()
            })
        });
        let mut headers = vec![
            "consumer",
            "calls",
            "attempts",
            "throttled",
            "retries",
            "escaped",
            "of them throttles",
        ];
        if has_seed_escaped {
            headers.extend(["seed escaped", "cell"]);
        }
        headers.push("quota left");
        let mut t = Table::new(&headers);
        for c in &k.consumers {
            let sdk = &c.sdk.counters;
            let mut row = vec![
                c.name.clone(),
                thousands(sdk.calls),
                thousands(sdk.attempts),
                thousands(sdk.throttles),
                thousands(sdk.retries),
                thousands(sdk.escaped_total()),
                thousands(sdk.escaped_throttles()),
            ];
            if has_seed_escaped {
                let cell = exp
                    .as_ref()
                    .and_then(|e| cx.cell(&format!("{e}/escaped_throttles/{}/count", c.name)));
                row.push(cell.map_or(String::new(), |c| thousands(c.seed_low as u64)));
                row.push(cell.map_or(String::new(), |c| c.label.name().into()));
            }
            // Lambda's pollers retry on their own schedule, with no retry quota.
            row.push(sdk.quota_left.map_or_else(|| "none".to_string(), thousands));
            t.row(row);
        }
        out.push_str(&table(&t));
        for c in &k.consumers {
            let held = c.sdk.counters.client_waits;
            if held > 0 {
                let w = &c.sdk.client_wait;
                out.push_str(&format!(
                    "{}: the SDK's client-side rate limiter (adaptive mode) held {} first attempts back before sending: p50 {}, max {}\n",
                    c.name,
                    thousands(held),
                    w.ms(w.p50_us),
                    w.ms(w.max_us)
                ));
            }
        }
        for c in &k.consumers {
            let escaped = c.sdk.counters.escaped_total();
            if let (true, Some(line)) = (escaped > 0, &c.last_error) {
                out.push_str(&format!(
                    "{}: {} calls failed after the SDK's retries; the last: {line}\n",
                    c.name,
                    thousands(escaped)
                ));
            }
        }

        let reads = k.get_records_totals();
        let minutes = s.elapsed_secs / 60.0;
        if minutes > 0.0 && reads.attempts > 0 {
            heading(
                out,
                "Kinesis: the shard's read budget (per shard, per minute of the run)",
            );
            let seeded = exp.as_ref().is_some_and(|e| {
                cx.cell(&format!("{e}/get_records_per_minute/shard/value"))
                    .is_some()
            });
            let mut headers = vec!["figure", "ours"];
            if seeded {
                headers.extend(["seed (CloudWatch)", "ours / seed", "cell"]);
            }
            let mut t = Table::new(&headers);
            let per_min = |n: u64| n as f64 / minutes / k.shards.max(1) as f64;
            for (name, ours, series) in [
                (
                    "GetRecords calls that succeeded",
                    per_min(reads.attempts - reads.throttles),
                    "get_records_per_minute",
                ),
                (
                    "GetRecords calls throttled",
                    per_min(reads.throttles),
                    "read_throttles_per_minute",
                ),
            ] {
                let c = exp
                    .as_ref()
                    .and_then(|e| cx.cell(&format!("{e}/{series}/shard/value")));
                let mut row = vec![name.into(), format!("{ours:.1}")];
                if seeded {
                    row.extend([
                        c.map_or(String::new(), |c| format!("{}-{}", c.seed_low, c.seed_high)),
                        c.map_or(String::new(), |c| ratio_text(c.ratio)),
                        c.map_or(String::new(), |c| c.label.name().into()),
                    ]);
                }
                t.row(row);
            }
            out.push_str(&table(&t));
        }

        let lambdas: Vec<&ConsumerSnapshot> = k
            .consumers
            .iter()
            .filter(|c| {
                matches!(
                    c.kind,
                    ConsumerKind::LambdaStandard | ConsumerKind::LambdaEfo
                )
            })
            .collect();
        if !lambdas.is_empty() {
            heading(out, "Lambda: records by batch size");
            for c in lambdas {
                out.push_str(&format!("{}: {}\n", c.name, batch_line(c)));
            }
        }
    }

    /// The cells a Kinesis seed can be compared on.
    fn seed_ids(k: &KinesisSeed, ids: &mut Vec<String>) {
        let e = &k.experiment;
        let stats = |ids: &mut Vec<String>, prefix: String, max: bool| {
            for stat in ["p50", "p90", "p99"] {
                ids.push(format!("{prefix}/{stat}"));
            }
            if max {
                ids.push(format!("{prefix}/max"));
            }
        };
        for row in &k.arrival_to_receive {
            stats(
                ids,
                format!("{e}/arrival_to_receive/{}", row.consumer),
                row.max_ms.is_some(),
            );
        }
        if let Some(row) = &k.send_to_arrival {
            stats(
                ids,
                format!("{e}/send_to_arrival/all"),
                row.max_ms.is_some(),
            );
        }
        for c in &k.escaped_throttles {
            ids.push(format!("{e}/escaped_throttles/{}/count", c.consumer));
        }
        if k.read_throttles_per_minute.is_some() {
            ids.push(format!("{e}/read_throttles_per_minute/shard/value"));
        }
        if k.get_records_per_minute.is_some() {
            ids.push(format!("{e}/get_records_per_minute/shard/value"));
        }
    }

    /// This run's figures beside a Kinesis seed's.
    fn compare(k: &KinesisSnapshot, seed: &KinesisSeed, run: &Run<'_>, cmp: &mut Comparer) {
        let exp = &seed.experiment;
        for row in &seed.arrival_to_receive {
            if let Some(c) = k.consumers.iter().find(|c| c.name == row.consumer) {
                cmp.percentiles(
                    &format!("{exp}/arrival_to_receive/{}", c.name),
                    &c.arrival_to_receive,
                    &row.percentiles(),
                );
            }
        }
        if let Some(row) = &seed.send_to_arrival {
            cmp.percentiles(
                &format!("{exp}/send_to_arrival/all"),
                &k.send_to_arrival,
                &row.percentiles(),
            );
        }
        for e in &seed.escaped_throttles {
            if let Some(c) = k.consumers.iter().find(|c| c.name == e.consumer) {
                let ours = c.sdk.counters.escaped_throttles() as f64;
                cmp.add(
                    format!("{exp}/escaped_throttles/{}/count", c.name),
                    ours,
                    e.count as f64,
                    e.count as f64,
                );
            }
        }
        let minutes = run.elapsed_secs / 60.0;
        let read = k.get_records_totals();
        if let (Some([lo, hi]), true) = (seed.read_throttles_per_minute, minutes > 0.0) {
            cmp.add(
                format!("{exp}/read_throttles_per_minute/shard/value"),
                read.throttles as f64 / minutes / k.shards.max(1) as f64,
                lo,
                hi,
            );
        }
        if let (Some([lo, hi]), true) = (seed.get_records_per_minute, minutes > 0.0) {
            cmp.add(
                format!("{exp}/get_records_per_minute/shard/value"),
                (read.attempts - read.throttles) as f64 / minutes / k.shards.max(1) as f64,
                lo,
                hi,
            );
        }
    }

    fn fleet(
        hosts: &[crate::labs::hosts::HostPart<'_, KinesisSnapshot>],
    ) -> Vec<crate::labs::hosts::Line> {
        super::fleet::fleet(hosts)
    }
}
