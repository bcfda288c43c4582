//! Reports of a finished run: text for terminals, Markdown for write-ups, JSON (schema in
//! `schemas/run-report.schema.json`) and CSV for scripts. All four render the same [`Report`].
//! For a seed scenario the seed's own figures stand beside ours with the ratio.

pub mod table;

use serde::{Deserialize, Serialize};

use crate::lab::snapshot::{ConsumerSnapshot, Snapshot};
use crate::metrics::Summary;
use crate::scenario::{ConsumerKind, Scenario, Seed, SeedRow};
use table::{Table, ms, ms_f, ratio, thousands};

pub const SCHEMA: &str = "latlab-run-report/1";

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Json,
    Csv,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioInfo {
    pub name: String,
    pub description: String,
    pub origin: String,
    pub requested_duration_secs: f64,
}

/// One row of ours against the seed's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub series: String,
    pub consumer: String,
    pub ours_p50_ms: f64,
    pub ours_p90_ms: f64,
    pub ours_p99_ms: f64,
    pub ours_max_ms: f64,
    pub seed_p50_ms: f64,
    pub seed_p90_ms: f64,
    pub seed_p99_ms: f64,
    pub seed_max_ms: Option<f64>,
    pub ratio_p50: f64,
    pub ratio_p90: f64,
    pub ratio_p99: f64,
}

/// One row of the seed's S3 tables against ours: seconds per whole set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct S3Comparison {
    pub direction: String,
    pub case: String,
    pub ours_express_s: f64,
    pub ours_standard_s: f64,
    /// Standard / Express, as the seed reports it.
    pub ours_ratio: f64,
    pub seed_case: String,
    pub seed_express_s: f64,
    pub seed_standard_s: f64,
    pub seed_ratio: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub latlab_version: String,
    pub scenario: ScenarioInfo,
    pub stopped_early: bool,
    pub snapshot: Snapshot,
    pub seed: Option<Seed>,
    pub comparisons: Vec<Comparison>,
    pub s3_comparisons: Vec<S3Comparison>,
    /// Resources latlab could not clean up, and other things a reader must know.
    pub problems: Vec<String>,
}

fn msf(us: u64) -> f64 {
    us as f64 / 1000.0
}

fn compare(series: &str, consumer: &str, ours: &Summary, seed: &SeedRow) -> Comparison {
    Comparison {
        series: series.into(),
        consumer: consumer.into(),
        ours_p50_ms: msf(ours.p50_us),
        ours_p90_ms: msf(ours.p90_us),
        ours_p99_ms: msf(ours.p99_us),
        ours_max_ms: msf(ours.max_us),
        seed_p50_ms: seed.p50_ms,
        seed_p90_ms: seed.p90_ms,
        seed_p99_ms: seed.p99_ms,
        seed_max_ms: seed.max_ms,
        ratio_p50: msf(ours.p50_us) / seed.p50_ms,
        ratio_p90: msf(ours.p90_us) / seed.p90_ms,
        ratio_p99: msf(ours.p99_us) / seed.p99_ms,
    }
}

impl Report {
    pub fn new(
        scenario: &Scenario,
        snapshot: Snapshot,
        stopped_early: bool,
        problems: Vec<String>,
    ) -> Report {
        let mut comparisons = Vec::new();
        if let (Some(seed), Some(k)) = (
            scenario.seed.as_ref().and_then(|s| s.kinesis.as_ref()),
            &snapshot.kinesis,
        ) {
            for row in &seed.arrival_to_receive {
                if let Some(c) = k.consumers.iter().find(|c| c.name == row.consumer) {
                    comparisons.push(compare(
                        "arrival_to_receive",
                        &c.name,
                        &c.arrival_to_receive,
                        row,
                    ));
                }
            }
            if let Some(row) = &seed.send_to_arrival {
                comparisons.push(compare("send_to_arrival", "all", &k.send_to_arrival, row));
            }
        }
        let mut s3_comparisons = Vec::new();
        if let (Some(seed), Some(rows)) = (
            scenario.seed.as_ref().and_then(|s| s.s3.as_ref()),
            snapshot.s3.as_ref().and_then(|s| s.matrix.as_ref()),
        ) {
            for (dir, seed_rows) in [("upload", &seed.upload), ("download", &seed.download)] {
                for (row, seed_row) in rows.iter().zip(seed_rows.iter()) {
                    let (e, st) = if dir == "upload" {
                        (row.upload_express_s, row.upload_standard_s)
                    } else {
                        (row.download_express_s, row.download_standard_s)
                    };
                    s3_comparisons.push(S3Comparison {
                        direction: dir.into(),
                        case: row.case.label(),
                        ours_express_s: e,
                        ours_standard_s: st,
                        ours_ratio: if e > 0.0 { st / e } else { 0.0 },
                        seed_case: seed_row.case.clone(),
                        seed_express_s: seed_row.express_s,
                        seed_standard_s: seed_row.standard_s,
                        seed_ratio: seed_row.standard_s / seed_row.express_s,
                    });
                }
            }
        }
        Report {
            schema: SCHEMA.into(),
            latlab_version: env!("CARGO_PKG_VERSION").into(),
            scenario: ScenarioInfo {
                name: scenario.name.clone(),
                description: scenario.description.clone(),
                origin: scenario.origin.clone(),
                requested_duration_secs: scenario.duration.as_secs_f64(),
            },
            stopped_early,
            snapshot,
            seed: scenario.seed.clone(),
            comparisons,
            s3_comparisons,
            problems,
        }
    }

    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => self.document(false),
            Format::Markdown => self.document(true),
            Format::Json => serde_json::to_string_pretty(self).expect("a report serializes") + "\n",
            Format::Csv => self.csv(),
        }
    }

    fn comparison(&self, series: &str, consumer: &str) -> Option<&Comparison> {
        self.comparisons
            .iter()
            .find(|c| c.series == series && c.consumer == consumer)
    }

    fn seed_escaped(&self, consumer: &str) -> Option<u64> {
        let seed = self.seed.as_ref()?.kinesis.as_ref()?;
        seed.escaped_throttles
            .iter()
            .find(|e| e.consumer == consumer)
            .map(|e| e.count)
    }

    fn document(&self, md: bool) -> String {
        let mut out = String::new();
        let s = &self.snapshot;
        let heading = |out: &mut String, text: &str| {
            if md {
                out.push_str(&format!("\n### {text}\n\n"));
            } else {
                out.push_str(&format!("\n{text}\n"));
            }
        };
        if md {
            out.push_str(&format!(
                "## latlab: {}\n\n{}\n\n",
                self.scenario.name, self.scenario.description
            ));
        } else {
            out.push_str(&format!(
                "latlab: {} - {}\n",
                self.scenario.name, self.scenario.description
            ));
        }
        let ran = match &s.kinesis {
            Some(_) => format!(
                "{} of records produced ({} with set-up and drain)",
                crate::units::format_duration(std::time::Duration::from_secs_f64(
                    s.producing_secs.round()
                )),
                crate::units::format_duration(std::time::Duration::from_secs_f64(
                    s.elapsed_secs.round()
                ))
            ),
            None => crate::units::format_duration(std::time::Duration::from_secs_f64(
                s.elapsed_secs.round(),
            )),
        };
        let mut facts = vec![
            (
                "backend",
                match s.backend.kind.as_str() {
                    "emulator" => format!(
                        "{} (modelled latency, real SDK clients over HTTP)",
                        s.backend.label
                    ),
                    _ => format!("{} (measured)", s.backend.label),
                },
            ),
            (
                "ran",
                if self.stopped_early {
                    format!(
                        "{ran} (stopped early; {} requested)",
                        crate::units::format_duration(std::time::Duration::from_secs_f64(
                            self.scenario.requested_duration_secs
                        ))
                    )
                } else {
                    ran
                },
            ),
        ];
        if let Some(k) = &s.kinesis {
            facts.push((
                "stream",
                format!(
                    "{}, {} shard{}; producer {} records/s, {} payloads",
                    k.stream,
                    k.shards,
                    if k.shards == 1 { "" } else { "s" },
                    k.producer.rate,
                    crate::units::format_bytes(k.producer.payload_bytes)
                ),
            ));
            facts.push(("SDK", k.retry.clone()));
        }
        if let Some(seed) = self.seed.as_ref().and_then(|s| s.kinesis.as_ref()) {
            facts.push(("seed", seed.source.clone()));
        }
        for (k, v) in facts {
            if md {
                out.push_str(&format!("- **{k}**: {v}\n"));
            } else {
                out.push_str(&format!("{k:<8} {v}\n"));
            }
        }
        if let Some(k) = &s.kinesis {
            self.kinesis_sections(&mut out, md, k);
        }
        if let Some(s3) = &s.s3 {
            self.s3_sections(&mut out, md, s3);
        }
        if let Some(r) = &s.redis {
            self.redis_sections(&mut out, md, r);
        }
        if !self.problems.is_empty() {
            heading(&mut out, "Problems");
            for p in &self.problems {
                out.push_str(&format!("- {p}\n"));
            }
        }
        out
    }

    fn redis_sections(&self, out: &mut String, md: bool, r: &crate::lab::snapshot::RedisSnapshot) {
        use crate::lab::redis::Method;
        let heading = section_heading(md);
        let table = |t: &Table| if md { t.markdown() } else { t.text() };
        if let Some(why) = &r.unavailable {
            heading(out, "Redis: not run");
            out.push_str(&format!("{why}\n"));
            return;
        }
        let mean = |us: f64| ms_f(us / 1000.0);
        let seed = self.seed.as_ref().and_then(|s| s.redis.as_ref());
        if !r.conditions.is_empty() {
            heading(
                out,
                "Redis: replication lag per condition (mean; p50 in brackets)",
            );
            let mut t = Table::new(&[
                "condition",
                "seed average",
                "1. new clients",
                "ours / seed",
                "2. persistent",
                "3. offset (WAIT)",
                "bytes behind p50",
                "tries",
            ]);
            for c in &r.conditions {
                let m = |method: Method| c.methods.iter().find(|x| x.method == method);
                let cell = |method: Method| {
                    m(method).map_or("-".to_string(), |x| {
                        if x.lag.count == 0 {
                            format!("{} errors", x.errors)
                        } else {
                            format!("{} ({})", mean(x.lag.mean_us), ms(x.lag.p50_us))
                        }
                    })
                };
                let seed_row =
                    seed.and_then(|s| s.rows.iter().find(|row| row.condition == c.condition.name));
                let ratio_cell = match (seed_row, m(Method::NewClients)) {
                    (Some(row), Some(x)) if x.lag.count > 0 => {
                        ratio(x.lag.mean_us / 1000.0, row.average_ms)
                    }
                    _ => String::new(),
                };
                let behind = m(Method::Offset)
                    .and_then(|x| x.behind_bytes.as_ref())
                    .map_or(String::new(), |b| crate::units::format_bytes(b.p50_us));
                t.row(vec![
                    c.condition.name.clone(),
                    seed_row.map_or(String::new(), |row| ms_f(row.average_ms)),
                    cell(Method::NewClients),
                    ratio_cell,
                    cell(Method::Persistent),
                    cell(Method::Offset),
                    behind,
                    thousands(m(Method::Persistent).map_or(0, |x| x.tries)),
                ]);
            }
            out.push_str(&table(&t));
            out.push_str(
                "Method 1 builds new clients every try, as the seed's program did, so its figure includes connecting \
                 to the replica; the seed's ~20 ms for 1 KB values is mostly that (TLS to ElastiCache), which a \
                 loopback connection does not cost. Methods 2 and 3 are the lag itself.\n",
            );
        }
        // The percentiles: per condition and method for a headless run of conditions (each
        // condition's tries are its own), else every try since the last reset.
        let rows: Vec<(String, &crate::lab::redis::MethodSnapshot)> = if r.conditions.is_empty() {
            let tried = r.methods.iter().any(|m| m.tries > 0);
            r.methods
                .iter()
                .filter(|_| tried)
                .map(|m| (String::new(), m))
                .collect()
        } else {
            r.conditions
                .iter()
                .flat_map(|c| c.methods.iter().map(|m| (c.condition.name.clone(), m)))
                .collect()
        };
        if !rows.is_empty() {
            let by_condition = !r.conditions.is_empty();
            heading(
                out,
                if by_condition {
                    "Redis: replication lag percentiles per condition and method"
                } else {
                    "Redis: replication lag, every try since the start or the last reset"
                },
            );
            let mut headers = vec![
                "method", "p50", "p90", "p99", "p99.9", "max", "mean", "tries", "errors",
            ];
            if by_condition {
                headers.insert(0, "condition");
            }
            let mut t = Table::new(&headers).labels(if by_condition { 2 } else { 1 });
            for (condition, m) in rows {
                let l = &m.lag;
                let mut row = vec![
                    m.method.label().to_string(),
                    ms(l.p50_us),
                    ms(l.p90_us),
                    ms(l.p99_us),
                    ms(l.p999_us),
                    ms(l.max_us),
                    mean(l.mean_us),
                    thousands(m.tries),
                    thousands(m.errors),
                ];
                if by_condition {
                    row.insert(0, condition);
                }
                t.row(row);
            }
            out.push_str(&table(&t));
        }
        let link = r
            .link
            .as_ref()
            .map_or("none (a user's Redis)".to_string(), |l| {
                format!(
                    "{} ({} ms one way, {})",
                    l.link,
                    l.latency_ms,
                    if l.bandwidth > 0.0 {
                        format!("{}/s", crate::units::format_bytes(l.bandwidth as u64))
                    } else {
                        "unlimited".into()
                    }
                )
            });
        out.push_str(&format!(
            "primary {}, replica {}; replication link {link}\n",
            r.primary, r.replica
        ));
        if let Some(s) = seed {
            out.push_str(&format!("seed: {}\n", s.source));
        }
    }

    fn s3_sections(&self, out: &mut String, md: bool, s3: &crate::lab::snapshot::S3Snapshot) {
        let heading = section_heading(md);
        let table = |t: &Table| if md { t.markdown() } else { t.text() };
        let secs = |v: f64| format!("{v:.3}");
        for dir in ["upload", "download"] {
            let rows: Vec<&S3Comparison> = self
                .s3_comparisons
                .iter()
                .filter(|c| c.direction == dir)
                .collect();
            if rows.is_empty() {
                continue;
            }
            heading(
                out,
                &format!("S3: {dir}, seconds per whole set (one object after another)"),
            );
            let mut t = Table::new(&[
                "set",
                "Express One Zone",
                "Standard",
                "ratio",
                "seed set",
                "seed Express",
                "seed Standard",
                "seed ratio",
                "ratio / seed",
            ]);
            for c in rows {
                t.row(vec![
                    c.case.clone(),
                    secs(c.ours_express_s),
                    secs(c.ours_standard_s),
                    format!("x{:.2}", c.ours_ratio),
                    c.seed_case.clone(),
                    secs(c.seed_express_s),
                    secs(c.seed_standard_s),
                    format!("x{:.2}", c.seed_ratio),
                    ratio(c.ours_ratio, c.seed_ratio),
                ]);
            }
            out.push_str(&table(&t));
        }
        if let (Some(rows), true) = (&s3.matrix, self.s3_comparisons.is_empty()) {
            heading(out, "S3: seconds per whole set (one object after another)");
            let mut t = Table::new(&[
                "set",
                "upload Express",
                "upload Standard",
                "download Express",
                "download Standard",
            ]);
            for r in rows {
                t.row(vec![
                    r.case.label(),
                    secs(r.upload_express_s),
                    secs(r.upload_standard_s),
                    secs(r.download_express_s),
                    secs(r.download_standard_s),
                ]);
            }
            out.push_str(&table(&t));
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
                ms(o.first_byte.p50_us),
                ms(o.first_byte.p99_us),
                ms(o.total.p50_us),
                ms(o.total.p99_us),
                ms(o.total.max_us),
                format!("{:.1}", o.mb_per_sec),
                thousands(o.slow_downs),
                thousands(o.errors),
            ]);
        }
        out.push_str(&table(&t));
        out.push_str(&format!(
            "buckets: {} (Standard), {} (Express One Zone); CreateSession calls: {}; live payload {}, {} loop(s)\n",
            s3.standard_bucket,
            s3.express_bucket,
            s3.create_sessions.map_or("not observable on this endpoint".to_string(), thousands),
            crate::units::format_bytes(s3.payload_bytes),
            s3.concurrency
        ));
    }

    fn kinesis_sections(
        &self,
        out: &mut String,
        md: bool,
        k: &crate::lab::snapshot::KinesisSnapshot,
    ) {
        let s = &self.snapshot;
        let heading = section_heading(md);
        let table = |t: &Table| if md { t.markdown() } else { t.text() };

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
                ms(a.p50_us),
                ms(a.p90_us),
                ms(a.p99_us),
                ms(a.p999_us),
                ms(a.max_us),
                thousands(a.count),
            ]);
            if let Some(cmp) = self.comparison("arrival_to_receive", &c.name) {
                t.row(vec![
                    "  seed".into(),
                    ms_f(cmp.seed_p50_ms),
                    ms_f(cmp.seed_p90_ms),
                    ms_f(cmp.seed_p99_ms),
                    String::new(),
                    cmp.seed_max_ms.map(ms_f).unwrap_or_default(),
                    String::new(),
                ]);
                t.row(vec![
                    "  ours / seed".into(),
                    ratio(cmp.ours_p50_ms, cmp.seed_p50_ms),
                    ratio(cmp.ours_p90_ms, cmp.seed_p90_ms),
                    ratio(cmp.ours_p99_ms, cmp.seed_p99_ms),
                    String::new(),
                    cmp.seed_max_ms
                        .map(|m| ratio(cmp.ours_max_ms, m))
                        .unwrap_or_default(),
                    String::new(),
                ]);
            }
        }
        out.push_str(&table(&t));

        heading(
            out,
            "Kinesis: send -> arrival (each record once) and send -> receive",
        );
        let mut t = Table::new(&["series", "p50", "p90", "p99", "max", "records"]);
        let sa = &k.send_to_arrival;
        t.row(vec![
            "send -> arrival".into(),
            ms(sa.p50_us),
            ms(sa.p90_us),
            ms(sa.p99_us),
            ms(sa.max_us),
            thousands(sa.count),
        ]);
        if let Some(cmp) = self.comparison("send_to_arrival", "all") {
            t.row(vec![
                "  seed".into(),
                ms_f(cmp.seed_p50_ms),
                ms_f(cmp.seed_p90_ms),
                ms_f(cmp.seed_p99_ms),
                String::new(),
                String::new(),
            ]);
            t.row(vec![
                "  ours / seed".into(),
                ratio(cmp.ours_p50_ms, cmp.seed_p50_ms),
                ratio(cmp.ours_p90_ms, cmp.seed_p90_ms),
                ratio(cmp.ours_p99_ms, cmp.seed_p99_ms),
                String::new(),
                String::new(),
            ]);
        }
        for c in &k.consumers {
            let r = &c.send_to_receive;
            t.row(vec![
                format!("send -> receive, {}", c.name),
                ms(r.p50_us),
                ms(r.p90_us),
                ms(r.p99_us),
                ms(r.max_us),
                thousands(r.count),
            ]);
        }
        let p = &k.producer;
        t.row(vec![
            "put call (send -> acknowledged)".into(),
            ms(p.put_latency.p50_us),
            ms(p.put_latency.p90_us),
            ms(p.put_latency.p99_us),
            ms(p.put_latency.max_us),
            thousands(p.put_latency.count),
        ]);
        out.push_str(&table(&t));

        heading(out, "Kinesis: records by seq, and what the SDK did");
        let has_seed_escaped = k
            .consumers
            .iter()
            .any(|c| self.seed_escaped(&c.name).is_some());
        let mut headers = vec![
            "consumer",
            "received",
            "lost",
            "duplicates",
            "late",
            "calls",
            "attempts",
            "throttled",
            "retries",
            "escaped",
            "of them throttles",
        ];
        if has_seed_escaped {
            headers.push("seed escaped");
        }
        headers.push("quota left");
        let mut t = Table::new(&headers);
        for c in &k.consumers {
            let sdk = &c.sdk.counters;
            let mut row = vec![
                c.name.clone(),
                thousands(c.counts.received),
                thousands(c.counts.lost),
                thousands(c.counts.duplicates),
                thousands(c.counts.late),
                thousands(sdk.calls),
                thousands(sdk.attempts),
                thousands(sdk.throttles),
                thousands(sdk.retries),
                thousands(sdk.escaped_total()),
                thousands(sdk.escaped_throttles()),
            ];
            if has_seed_escaped {
                row.push(
                    self.seed_escaped(&c.name)
                        .map(thousands)
                        .unwrap_or_default(),
                );
            }
            // Lambda's pollers retry on their own schedule, with no retry quota.
            row.push(sdk.quota_left.map_or_else(|| "none".to_string(), thousands));
            t.row(row);
        }
        out.push_str(&table(&t));
        out.push_str(&format!(
            "producer: {} puts sent, {} acknowledged, {} re-sent after the SDK gave up, {} never stored; {} throttled attempts\n",
            thousands(p.sent),
            thousands(p.acked),
            thousands(p.resent),
            thousands(p.failed),
            thousands(p.sdk.counters.throttles)
        ));

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

    /// Long form, one figure a row, for every lab: `lab,subject,metric,value,seed` (the seed's
    /// figure where it has one). Spreadsheets and data frames pivot it as they need.
    fn csv(&self) -> String {
        let mut rows: Vec<(String, String, String, f64, Option<f64>)> = Vec::new();
        let mut add = |lab: &str, subject: &str, metric: &str, value: f64, seed: Option<f64>| {
            rows.push((
                lab.to_string(),
                subject.to_string(),
                metric.to_string(),
                value,
                seed,
            ));
        };
        let summary = |add: &mut AddRow,
                       lab: &str,
                       subject: &str,
                       series: &str,
                       s: &Summary,
                       seed: Option<&Comparison>| {
            add(
                lab,
                subject,
                &format!("{series}_count"),
                s.count as f64,
                None,
            );
            add(
                lab,
                subject,
                &format!("{series}_p50_ms"),
                msf(s.p50_us),
                seed.map(|c| c.seed_p50_ms),
            );
            add(
                lab,
                subject,
                &format!("{series}_p90_ms"),
                msf(s.p90_us),
                seed.map(|c| c.seed_p90_ms),
            );
            add(
                lab,
                subject,
                &format!("{series}_p99_ms"),
                msf(s.p99_us),
                seed.map(|c| c.seed_p99_ms),
            );
            add(
                lab,
                subject,
                &format!("{series}_p999_ms"),
                msf(s.p999_us),
                None,
            );
            add(
                lab,
                subject,
                &format!("{series}_max_ms"),
                msf(s.max_us),
                seed.and_then(|c| c.seed_max_ms),
            );
            add(
                lab,
                subject,
                &format!("{series}_mean_ms"),
                s.mean_us / 1000.0,
                None,
            );
        };
        if let Some(k) = &self.snapshot.kinesis {
            for c in &k.consumers {
                summary(
                    &mut add,
                    "kinesis",
                    &c.name,
                    "arrival_to_receive",
                    &c.arrival_to_receive,
                    self.comparison("arrival_to_receive", &c.name),
                );
                summary(
                    &mut add,
                    "kinesis",
                    &c.name,
                    "send_to_receive",
                    &c.send_to_receive,
                    None,
                );
                let sdk = &c.sdk.counters;
                for (metric, v) in [
                    ("received", c.counts.received),
                    ("lost", c.counts.lost),
                    ("duplicates", c.counts.duplicates),
                    ("late", c.counts.late),
                    ("attempts", sdk.attempts),
                    ("throttled", sdk.throttles),
                    ("retries", sdk.retries),
                    ("escaped", sdk.escaped_total()),
                ] {
                    let seed = if metric == "escaped" {
                        self.seed_escaped(&c.name).map(|n| n as f64)
                    } else {
                        None
                    };
                    add("kinesis", &c.name, metric, v as f64, seed);
                }
                if let Some(q) = sdk.quota_left {
                    add("kinesis", &c.name, "quota_left", q as f64, None);
                }
            }
            summary(
                &mut add,
                "kinesis",
                "producer",
                "send_to_arrival",
                &k.send_to_arrival,
                self.comparison("send_to_arrival", "all"),
            );
            summary(
                &mut add,
                "kinesis",
                "producer",
                "put_call",
                &k.producer.put_latency,
                None,
            );
        }
        if let Some(s3) = &self.snapshot.s3 {
            for c in &self.s3_comparisons {
                add(
                    "s3",
                    &c.case,
                    &format!("{}_express_s", c.direction),
                    c.ours_express_s,
                    Some(c.seed_express_s),
                );
                add(
                    "s3",
                    &c.case,
                    &format!("{}_standard_s", c.direction),
                    c.ours_standard_s,
                    Some(c.seed_standard_s),
                );
                add(
                    "s3",
                    &c.case,
                    &format!("{}_ratio", c.direction),
                    c.ours_ratio,
                    Some(c.seed_ratio),
                );
            }
            for o in &s3.ops {
                let subject = format!("{} {}", o.class.storage_class(), o.op);
                summary(&mut add, "s3", &subject, "first_byte", &o.first_byte, None);
                summary(&mut add, "s3", &subject, "total", &o.total, None);
                add("s3", &subject, "mb_per_sec", o.mb_per_sec, None);
                add("s3", &subject, "slow_downs", o.slow_downs as f64, None);
                add("s3", &subject, "errors", o.errors as f64, None);
            }
        }
        if let Some(r) = &self.snapshot.redis {
            let seed = self.seed.as_ref().and_then(|s| s.redis.as_ref());
            for c in &r.conditions {
                let seed_avg = seed
                    .and_then(|s| s.rows.iter().find(|row| row.condition == c.condition.name))
                    .map(|row| row.average_ms);
                for m in &c.methods {
                    let series = format!("{:?}", m.method).to_lowercase();
                    let seed = if m.method == crate::lab::redis::Method::NewClients {
                        seed_avg
                    } else {
                        None
                    };
                    add(
                        "redis",
                        &c.condition.name,
                        &format!("{series}_mean_ms"),
                        m.lag.mean_us / 1000.0,
                        seed,
                    );
                    add(
                        "redis",
                        &c.condition.name,
                        &format!("{series}_p50_ms"),
                        msf(m.lag.p50_us),
                        None,
                    );
                    add(
                        "redis",
                        &c.condition.name,
                        &format!("{series}_max_ms"),
                        msf(m.lag.max_us),
                        None,
                    );
                    add(
                        "redis",
                        &c.condition.name,
                        &format!("{series}_errors"),
                        m.errors as f64,
                        None,
                    );
                }
            }
            for m in &r.methods {
                let series = format!("{:?}", m.method).to_lowercase();
                summary(&mut add, "redis", "live", &series, &m.lag, None);
            }
        }
        let field = |s: &str| {
            if s.contains([',', '"', '\n']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        let num = |v: f64| {
            if v.fract() == 0.0 && v.abs() < 1e15 {
                format!("{v:.0}")
            } else {
                format!("{v:.3}")
            }
        };
        let mut out = String::from("scenario,backend,lab,subject,metric,value,seed\n");
        for (lab, subject, metric, value, seed) in rows {
            out.push_str(&format!(
                "{},{},{lab},{},{metric},{},{}\n",
                field(&self.scenario.name),
                field(&self.snapshot.backend.label),
                field(&subject),
                num(value),
                seed.map(num).unwrap_or_default()
            ));
        }
        out
    }
}

/// Adds one long-form CSV row: lab, subject, metric, value, the seed's value.
type AddRow<'a> = dyn FnMut(&str, &str, &str, f64, Option<f64>) + 'a;

/// A section heading in text or Markdown.
fn section_heading(md: bool) -> impl Fn(&mut String, &str) {
    move |out: &mut String, text: &str| {
        if md {
            out.push_str(&format!("\n### {text}\n\n"));
        } else {
            out.push_str(&format!("\n{text}\n"));
        }
    }
}

/// `5: 2,050 (68.3%), 6: 402 (13.4%), ...; largest 17`, most records first.
pub fn batch_line(c: &ConsumerSnapshot) -> String {
    let total: u64 = c.batch_sizes.iter().map(|b| b.records).sum();
    if total == 0 {
        return "no batches".into();
    }
    let mut sizes = c.batch_sizes.clone();
    sizes.sort_by(|a, b| b.records.cmp(&a.records).then(a.size.cmp(&b.size)));
    let parts: Vec<String> = sizes
        .iter()
        .take(6)
        .map(|b| {
            format!(
                "{}: {} ({:.1}%)",
                b.size,
                thousands(b.records),
                100.0 * b.records as f64 / total as f64
            )
        })
        .collect();
    let largest = c.batch_sizes.iter().map(|b| b.size).max().unwrap_or(0);
    format!(
        "{}; largest {largest}; {} batches",
        parts.join(", "),
        thousands(c.batches)
    )
}
