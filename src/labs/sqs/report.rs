//! The SQS lab's part of a report: each consumer's send -> receive percentiles, its count that
//! adds up (received + lost + in flight + unread = sent), and what the queue did to it (empty
//! receives, redeliveries, visibility timeouts that ran out, throttles); the producer; and its
//! CSV rows. No seed measured SQS, so nothing is compared.

use super::snapshot::SqsSnapshot;
use crate::lab_kit::section::table::Table;
use crate::lab_kit::section::{CsvRows, Cx, section_heading};
use crate::labs::NoSeed;
use latlab_core::units::thousands;

impl crate::labs::Reported for super::SqsLab {
    /// The producer's acknowledged messages, and each consumer's accounting: received + lost +
    /// in flight + unread = sent.
    fn soak(q: &serde_json::Value, out: &mut String) -> u64 {
        let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
        let Some(q) = q.as_object() else {
            return 0;
        };
        out.push_str(&format!(
            "SQS producer: {} acknowledged\n",
            n(&q["producer"]["acknowledged"])
        ));
        let mut lost_total = 0;
        for c in q["consumers"].as_array().into_iter().flatten() {
            let (sent, rec, lost, flight, unread) = (
                n(&c["sent"]),
                n(&c["received"]),
                n(&c["lost"]),
                n(&c["in_flight"]),
                n(&c["unread"]),
            );
            lost_total += lost;
            out.push_str(&format!(
                "SQS {}: {sent} sent, {rec} received, {lost} lost, {flight} in flight, {unread} unread, {} redelivered: {}\n",
                c["name"].as_str().unwrap_or("?"),
                n(&c["redelivered"]),
                if rec + lost + flight + unread == sent {
                    "holds"
                } else {
                    "BROKEN"
                }
            ));
        }
        lost_total
    }

    /// Its rows of the CSV.
    fn csv(s: &SqsSnapshot, rows: &mut CsvRows) {
        for c in &s.consumers {
            rows.summary("sqs", &c.name, "send_to_receive", &c.latency);
            let k = c.counts;
            for (metric, v) in [
                ("sent", k.sent),
                ("received", k.received),
                ("in_flight", k.in_flight),
                ("unread", k.unread),
                ("lost", k.lost),
                ("redelivered", k.redelivered),
                ("receive_calls", c.receive_calls),
                ("empty_receives", c.empty_receives),
                ("empty_while_waiting", c.empty_while_waiting),
                ("visibility_ran_out", c.visibility_ran_out),
                ("out_of_order", c.out_of_order),
                ("attempts", c.sdk.counters.attempts),
                ("throttles", c.sdk.counters.throttles),
                ("retries", c.sdk.counters.retries),
            ] {
                rows.add("sqs", &c.name, metric, v as f64);
            }
        }
        let p = &s.producer;
        rows.add("sqs", "producer", "acknowledged", p.acknowledged as f64);
        rows.add("sqs", "producer", "failed", p.failed as f64);
        rows.add("sqs", "producer", "behind", p.behind as f64);
        rows.add("sqs", "producer", "calls", p.calls as f64);
        rows.add(
            "sqs",
            "producer",
            "throttles",
            p.sdk.counters.throttles as f64,
        );
    }

    /// Its sections of the text or Markdown report.
    fn write(s: &SqsSnapshot, _cx: &Cx<'_, NoSeed>, out: &mut String, md: bool) {
        let heading = section_heading(md);
        let table = |t: &Table| if md { t.markdown() } else { t.text() };
        if let Some(why) = &s.unavailable {
            heading(out, "SQS: not run");
            out.push_str(&format!("{why}\n"));
            return;
        }
        heading(
            out,
            "SQS: send -> receive per consumer (Lambda: send -> the invocation)",
        );
        let mut t = Table::new(&[
            "consumer", "how", "count", "p50", "p90", "p99", "p99.9", "max",
        ])
        .labels(2);
        for c in &s.consumers {
            let lat = |us: u64| c.latency.ms(us);
            t.row(vec![
                format!("{}{}", c.name, if c.stopped { " (left)" } else { "" }),
                c.kind.describe(),
                thousands(c.latency.count),
                lat(c.latency.p50_us),
                lat(c.latency.p90_us),
                lat(c.latency.p99_us),
                lat(c.latency.p999_us),
                lat(c.latency.max_us),
            ]);
        }
        out.push_str(&table(&t));
        heading(
            out,
            "SQS: every message counted (received + lost + in flight + unread = sent)",
        );
        let mut t = Table::new(&[
            "consumer",
            "sent",
            "received",
            "lost",
            "in flight",
            "unread",
            "adds up",
            "redelivered",
            "foreign",
        ])
        .labels(1);
        for c in &s.consumers {
            let k = c.counts;
            t.row(vec![
                c.name.clone(),
                thousands(k.sent),
                thousands(k.received),
                thousands(k.lost),
                thousands(k.in_flight),
                thousands(k.unread),
                if k.adds_up() { "yes" } else { "NO" }.into(),
                thousands(k.redelivered),
                thousands(k.foreign),
            ]);
        }
        out.push_str(&table(&t));
        heading(out, "SQS: what the queue did to each consumer");
        let mut t = Table::new(&[
            "consumer",
            "receives",
            "empty",
            "empty while messages waited",
            "receives per message",
            "visibility ran out",
            "out of order",
            "SDK attempts",
            "throttled",
            "retries",
        ])
        .labels(1);
        for c in &s.consumers {
            t.row(vec![
                c.name.clone(),
                thousands(c.receive_calls),
                thousands(c.empty_receives),
                if matches!(c.kind, super::config::ConsumerKind::Lambda { .. }) {
                    "n/a".into()
                } else {
                    thousands(c.empty_while_waiting)
                },
                c.receives_per_message()
                    .map_or("-".into(), |r| format!("{r:.2}")),
                thousands(c.visibility_ran_out),
                if c.kind.fifo() {
                    thousands(c.out_of_order)
                } else {
                    "n/a".into()
                },
                thousands(c.sdk.counters.attempts),
                thousands(c.sdk.counters.throttles),
                thousands(c.sdk.counters.retries),
            ]);
        }
        out.push_str(&table(&t));
        let p = &s.producer;
        out.push_str(&format!(
            "Producer: {}/s to each of {} queue(s) with {}, {} sends acknowledged in {} calls (send \
             p50 {}, p99 {}); {} throttled attempts, {} failed after the SDK's retries, {} never sent \
             (a queue's sender was behind).\n",
            s.rate,
            s.consumers.len(),
            if s.batching {
                "SendMessageBatch (up to 10 a call)"
            } else {
                "SendMessage"
            },
            thousands(p.acknowledged),
            thousands(p.calls),
            p.send_latency.ms(p.send_latency.p50_us),
            p.send_latency.ms(p.send_latency.p99_us),
            thousands(p.sdk.counters.throttles),
            thousands(p.failed),
            thousands(p.behind),
        ));
        out.push_str(
            "Empty receives while messages waited: answers with no message to a receive that began \
             while a message acknowledged before it had not been received; a short poll samples a \
             subset of SQS's servers. Lambda's pollers share a queue, so theirs are not told apart.\n",
        );
    }

    /// Its lines of the report's opening facts.
    fn facts(s: &SqsSnapshot, _seed: Option<&NoSeed>) -> Vec<(&'static str, String)> {
        if s.unavailable.is_some() {
            return Vec::new();
        }
        vec![(
            "SQS",
            format!(
                "{} consumer(s), each on its own queue; {}/s, {} B bodies; visibility {} s, \
                 processing {} ms a message",
                s.consumers.len(),
                s.rate,
                s.payload_bytes,
                s.visibility_secs,
                s.processing_ms
            ),
        )]
    }
}
