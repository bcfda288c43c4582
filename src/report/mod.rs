//! Reports of a finished run: text for terminals, Markdown for write-ups, JSON (schema in
//! `schemas/run-report.schema.json`) and CSV for scripts. All four render the same [`Report`].
//! For a seed scenario the seed's own figures stand beside ours, each compared cell labelled
//! `calibrated` (the model was fitted to it), `predicted` or `measured` (see [`compare`]).

pub mod compare;
pub mod table;

use serde::{Deserialize, Serialize};

use crate::labs::kinesis::config::ConsumerKind;
use crate::labs::kinesis::snapshot::ConsumerSnapshot;
use crate::metrics::Summary;
use crate::provenance::Label;
use crate::run::snapshot::Snapshot;
use crate::scenario::{Scenario, Seed};
use crate::units::{ms, ms_f, thousands};
use compare::{Cell, Tally};
use table::Table;

pub const SCHEMA: &str = "latlab-run-report/2";

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Json,
    Csv,
}

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// A headless run that ran its whole duration (or its whole experiment).
    Completed,
    /// A headless run stopped by Ctrl-C before its end.
    StoppedEarly,
    /// A live run in the TUI: it runs until quit, with no set length.
    Quit,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioInfo {
    pub name: String,
    pub description: String,
    pub origin: String,
    /// The length asked for (a headless run); None for a live run, which lasts until quit.
    pub requested_duration_secs: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub latlab_version: String,
    pub scenario: ScenarioInfo,
    pub ending: Ending,
    pub snapshot: Snapshot,
    pub seed: Option<Seed>,
    /// Every figure compared with the seed's, labelled.
    pub cells: Vec<Cell>,
    pub tally: Tally,
    /// Resources latlab could not clean up, and other things a reader must know.
    pub problems: Vec<String>,
}

fn msf(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// `x1.03`, or `-`.
fn ratio_text(r: f64) -> String {
    if r.is_finite() {
        format!("x{r:.2}")
    } else {
        "-".into()
    }
}

impl Report {
    pub fn new(
        scenario: &Scenario,
        snapshot: Snapshot,
        ending: Ending,
        problems: Vec<String>,
    ) -> Report {
        let cells = scenario
            .seed
            .as_ref()
            .map(|seed| compare::cells(&snapshot, seed))
            .unwrap_or_default();
        Report {
            schema: SCHEMA.into(),
            latlab_version: env!("CARGO_PKG_VERSION").into(),
            scenario: ScenarioInfo {
                name: scenario.name.clone(),
                description: scenario.description.clone(),
                origin: scenario.origin.clone(),
                requested_duration_secs: (ending != Ending::Quit)
                    .then_some(scenario.duration.as_secs_f64()),
            },
            ending,
            tally: Tally::of(&cells),
            cells,
            snapshot,
            seed: scenario.seed.clone(),
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

    /// The compared cell with this id.
    pub fn cell(&self, id: &str) -> Option<&Cell> {
        self.cells.iter().find(|c| c.id == id)
    }

    /// The seed rows of a compared figure: the seed's value, ours over it, and the cell's label.
    fn seed_rows(&self, ids: &[Option<String>]) -> Option<[Vec<String>; 3]> {
        let cells: Vec<Option<&Cell>> = ids
            .iter()
            .map(|id| id.as_deref().and_then(|id| self.cell(id)))
            .collect();
        if cells.iter().all(Option::is_none) {
            return None;
        }
        let each = |f: &dyn Fn(&Cell) -> String| -> Vec<String> {
            cells.iter().map(|c| c.map(f).unwrap_or_default()).collect()
        };
        Some([
            each(&|c| ms_f(c.seed_low)),
            each(&|c| ratio_text(c.ratio)),
            each(&|c| c.label.name().to_string()),
        ])
    }

    fn document(&self, md: bool) -> String {
        let mut out = String::new();
        let s = &self.snapshot;
        let heading = section_heading(md);
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
        let d = |secs: f64| {
            crate::units::format_duration(std::time::Duration::from_secs_f64(secs.round()))
        };
        let ran = match &s.kinesis {
            Some(_) => format!(
                "{} of records produced ({} with set-up and drain)",
                d(s.producing_secs),
                d(s.elapsed_secs)
            ),
            None => d(s.elapsed_secs),
        };
        let ran = match (self.ending, self.scenario.requested_duration_secs) {
            (Ending::StoppedEarly, Some(asked)) => {
                format!("{ran} (stopped early; {} requested)", d(asked))
            }
            (Ending::Quit, _) => format!("{ran} (live, until quit)"),
            _ => ran,
        };
        let mut facts = vec![
            (
                "backend",
                match s.backend.kind.as_str() {
                    "emulator" => format!(
                        "{} (modelled latency, real SDK clients over HTTP)",
                        s.backend.label
                    ),
                    "fixture" => s.backend.label.clone(),
                    _ => format!("{} (measured)", s.backend.label),
                },
            ),
            ("ran", ran),
        ];
        if let Some(k) = &s.kinesis {
            let p = &k.producer;
            facts.push((
                "stream",
                format!(
                    "{}, {} shard{}; producer asked {} records/s, achieved {:.1}/s ({}), {} payloads",
                    k.stream,
                    k.shards,
                    if k.shards == 1 { "" } else { "s" },
                    rate_text(p.asked_rate),
                    p.achieved_rate,
                    p.mode,
                    crate::units::format_bytes(p.payload_bytes)
                ),
            ));
            facts.push(("SDK", k.retry.clone()));
        }
        if let Some(seed) = self.seed.as_ref().and_then(|s| s.kinesis.as_ref()) {
            facts.push(("seed", seed.source.clone()));
        }
        let model = &s.backend.model;
        if !model.is_empty() {
            let derived = model
                .iter()
                .filter(|p| !p.provenance.seed_cells.is_empty())
                .count();
            let detail = match &s.backend.latency_profile {
                Some(p) => format!("`latlab profile show {p}` lists each with its source"),
                None => model
                    .iter()
                    .map(|p| format!("{} {} ({})", p.name, p.value, p.provenance.source.name()))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            facts.push((
                "model",
                format!(
                    "{} parameters, {derived} derived from seed figures: {detail}",
                    model.len(),
                ),
            ));
        }
        if !self.cells.is_empty() {
            facts.push(("compared", self.tally.line()));
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
        let calibrated: Vec<&Cell> = self
            .cells
            .iter()
            .filter(|c| c.label == Label::Calibrated)
            .collect();
        if !calibrated.is_empty() {
            heading(&mut out, "Calibrated cells: what the model was fitted to");
            let mut t = Table::new(&["cell", "derived into"]);
            for c in calibrated {
                t.row(vec![c.id.clone(), c.calibrated_by.join(", ")]);
            }
            out.push_str(&if md { t.markdown() } else { t.text() });
        }
        if !self.problems.is_empty() {
            heading(&mut out, "Problems");
            for p in &self.problems {
                out.push_str(&format!("- {p}\n"));
            }
        }
        out
    }

    fn redis_sections(
        &self,
        out: &mut String,
        md: bool,
        r: &crate::labs::redis::snapshot::RedisSnapshot,
    ) {
        use crate::labs::redis::Method;
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
                "cell",
                "2. persistent",
                "3. offset (WAIT)",
                "bytes behind p50",
                "tries",
            ]);
            for c in &r.conditions {
                let m = |method: Method| c.methods.iter().find(|x| x.method == method);
                let cell = |method: Method| {
                    if let Some(why) = &c.skipped {
                        return format!("skipped: {why}");
                    }
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
                let compared = seed.and_then(|s| {
                    self.cell(&format!(
                        "{}/average_lag/{}/new_clients",
                        s.experiment, c.condition.name
                    ))
                });
                let behind = m(Method::Offset)
                    .and_then(|x| x.behind_bytes.as_ref())
                    .map_or(String::new(), |b| crate::units::format_bytes(b.p50_bytes));
                t.row(vec![
                    c.condition.name.clone(),
                    seed_row.map_or(String::new(), |row| ms_f(row.average_ms)),
                    cell(Method::NewClients),
                    compared.map_or(String::new(), |x| ratio_text(x.ratio)),
                    compared.map_or(String::new(), |x| x.label.name().to_string()),
                    cell(Method::Persistent),
                    cell(Method::Offset),
                    behind,
                    thousands(m(Method::Persistent).map_or(0, |x| x.tries)),
                ]);
            }
            out.push_str(&table(&t));
            out.push_str(
                "Method 1 builds new clients inside every try, as the seed's program did, so its \
                 first EXISTS also dials the replica inside the timed loop; what that connection \
                 set-up cost on the seed's network is not known. Methods 2 and 3 measure the lag \
                 alone.\n",
            );
        }
        // The percentiles: per condition and method for a headless run of conditions (each
        // condition's tries are its own), else every try since the last reset.
        let rows: Vec<(String, &crate::labs::redis::MethodSnapshot)> = if r.conditions.is_empty() {
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

    fn s3_sections(&self, out: &mut String, md: bool, s3: &crate::labs::s3::snapshot::S3Snapshot) {
        let heading = section_heading(md);
        let table = |t: &Table| if md { t.markdown() } else { t.text() };
        let secs = |v: f64| format!("{v:.3}");
        let seed = self.seed.as_ref().and_then(|s| s.s3.as_ref());
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
                            self.cell(&format!("{}/{dir}/{set}/{stat}", sd.experiment))
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
        k: &crate::labs::kinesis::snapshot::KinesisSnapshot,
    ) {
        let s = &self.snapshot;
        let heading = section_heading(md);
        let table = |t: &Table| if md { t.markdown() } else { t.text() };
        let exp = self
            .seed
            .as_ref()
            .and_then(|s| s.kinesis.as_ref())
            .map(|k| k.experiment.clone());
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
            if let Some(rows) = self.seed_rows(ids) {
                for (label, mut cells) in
                    ["  seed", "  ours / seed", "  cell"].into_iter().zip(rows)
                {
                    cells.insert(0, label.to_string());
                    cells.extend(std::iter::repeat_n(String::new(), trailing));
                    t.row(cells);
                }
            }
        };

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
                ms(x.p50_us),
                ms(x.p90_us),
                ms(x.p99_us),
                ms(x.max_us),
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
        let unchecked: u64 = k.consumers.iter().map(|c| c.counts.unchecked).sum();
        if unchecked > 0 {
            out.push_str(&format!(
                "{} unread records were not checked for loss: their consumer was more than {} records behind in a shard.\n",
                thousands(unchecked),
                thousands(crate::metrics::ledger::TAIL_CAPACITY as u64)
            ));
        }
        let shortfall = p.shortfall();
        out.push_str(&format!(
            "producer: {}; asked {} records/s, achieved {:.1}/s{}; {} records sent, {} acknowledged, {} re-sent once refused, {} never stored; {} throttled attempts, {} records refused in PutRecords answers\n",
            p.mode,
            rate_text(p.asked_rate),
            p.achieved_rate,
            if shortfall.is_empty() {
                String::new()
            } else {
                format!(" (short: {})", shortfall.join("; "))
            },
            thousands(p.sent),
            thousands(p.acked),
            thousands(p.resent),
            thousands(p.failed),
            thousands(p.sdk.counters.throttles),
            thousands(p.records_refused),
        ));

        heading(out, "Kinesis: what the SDK did");
        let has_seed_escaped = k.consumers.iter().any(|c| {
            exp.as_ref().is_some_and(|e| {
                self.cell(&format!("{e}/escaped_throttles/{}/count", c.name))
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
                    .and_then(|e| self.cell(&format!("{e}/escaped_throttles/{}/count", c.name)));
                row.push(cell.map_or(String::new(), |c| thousands(c.seed_low as u64)));
                row.push(cell.map_or(String::new(), |c| c.label.name().into()));
            }
            // Lambda's pollers retry on their own schedule, with no retry quota.
            row.push(sdk.quota_left.map_or_else(|| "none".to_string(), thousands));
            t.row(row);
        }
        out.push_str(&table(&t));

        let reads = k.get_records_totals();
        let minutes = s.elapsed_secs / 60.0;
        if minutes > 0.0 && reads.attempts > 0 {
            heading(
                out,
                "Kinesis: the shard's read budget (per shard, per minute of the run)",
            );
            let seeded = exp.as_ref().is_some_and(|e| {
                self.cell(&format!("{e}/get_records_per_minute/shard/value"))
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
                    .and_then(|e| self.cell(&format!("{e}/{series}/shard/value")));
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

    /// Long form, one figure a row, for every lab: `lab,subject,metric,value`, then one row per
    /// compared cell (lab `compared`, the cell's id as subject) with the seed's figure (a range
    /// has `seed_high`) and the cell's label. Spreadsheets and data frames pivot it as they need.
    fn csv(&self) -> String {
        let mut rows: Vec<(String, String, String, f64)> = Vec::new();
        let mut add = |lab: &str, subject: &str, metric: &str, value: f64| {
            rows.push((lab.into(), subject.into(), metric.into(), value));
        };
        let summary = |add: &mut AddRow, lab: &str, subject: &str, series: &str, s: &Summary| {
            add(lab, subject, &format!("{series}_count"), s.count as f64);
            for (stat, us) in [
                ("p50", s.p50_us),
                ("p90", s.p90_us),
                ("p99", s.p99_us),
                ("p999", s.p999_us),
                ("max", s.max_us),
            ] {
                add(lab, subject, &format!("{series}_{stat}_ms"), msf(us));
            }
            add(
                lab,
                subject,
                &format!("{series}_mean_ms"),
                s.mean_us / 1000.0,
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
                );
                summary(
                    &mut add,
                    "kinesis",
                    &c.name,
                    "send_to_receive",
                    &c.send_to_receive,
                );
                let sdk = &c.sdk.counters;
                let n = &c.counts;
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
                    add("kinesis", &c.name, metric, v as f64);
                }
                if let Some(q) = sdk.quota_left {
                    add("kinesis", &c.name, "quota_left", q as f64);
                }
                if let Some(b) = c.millis_behind {
                    add("kinesis", &c.name, "millis_behind_latest", b as f64);
                }
            }
            summary(
                &mut add,
                "kinesis",
                "producer",
                "send_to_arrival",
                &k.send_to_arrival,
            );
            let p = &k.producer;
            summary(&mut add, "kinesis", "producer", "put", &p.put_latency);
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
                add("kinesis", "producer", metric, v);
            }
        }
        if let Some(s3) = &self.snapshot.s3 {
            for r in s3.matrix.iter().flatten() {
                let set = r.case.label();
                for (metric, v) in [
                    ("upload_express_s", r.upload_express_s),
                    ("upload_standard_s", r.upload_standard_s),
                    ("download_express_s", r.download_express_s),
                    ("download_standard_s", r.download_standard_s),
                ] {
                    add("s3", &set, metric, v);
                }
            }
            for o in &s3.ops {
                let subject = format!("{} {}", o.class.storage_class(), o.op);
                summary(&mut add, "s3", &subject, "first_byte", &o.first_byte);
                summary(&mut add, "s3", &subject, "total", &o.total);
                add("s3", &subject, "mb_per_sec", o.mb_per_sec);
                add("s3", &subject, "slow_downs", o.slow_downs as f64);
                add("s3", &subject, "errors", o.errors as f64);
            }
        }
        if let Some(r) = &self.snapshot.redis {
            for c in &r.conditions {
                for m in &c.methods {
                    let series = m.method.key();
                    add(
                        "redis",
                        &c.condition.name,
                        &format!("{series}_mean_ms"),
                        m.lag.mean_us / 1000.0,
                    );
                    add(
                        "redis",
                        &c.condition.name,
                        &format!("{series}_p50_ms"),
                        msf(m.lag.p50_us),
                    );
                    add(
                        "redis",
                        &c.condition.name,
                        &format!("{series}_max_ms"),
                        msf(m.lag.max_us),
                    );
                    add(
                        "redis",
                        &c.condition.name,
                        &format!("{series}_errors"),
                        m.errors as f64,
                    );
                }
            }
            for m in &r.methods {
                summary(&mut add, "redis", "live", m.method.key(), &m.lag);
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
        let head = format!(
            "{},{}",
            field(&self.scenario.name),
            field(&self.snapshot.backend.label)
        );
        let mut out =
            String::from("scenario,backend,lab,subject,metric,value,seed,seed_high,cell\n");
        for (lab, subject, metric, value) in rows {
            out.push_str(&format!(
                "{head},{lab},{},{metric},{},,,\n",
                field(&subject),
                num(value)
            ));
        }
        for c in &self.cells {
            out.push_str(&format!(
                "{head},compared,{},ours,{},{},{},{}\n",
                field(&c.id),
                num(c.ours),
                num(c.seed_low),
                if c.is_range() {
                    num(c.seed_high)
                } else {
                    String::new()
                },
                c.label.name()
            ));
        }
        out
    }
}

/// Adds one long-form CSV row: lab, subject, metric, value.
type AddRow<'a> = dyn FnMut(&str, &str, &str, f64) + 'a;

/// `5`, `0.5`, `8,000`: a rate as asked.
fn rate_text(r: f64) -> String {
    if r.fract() == 0.0 && r >= 0.0 {
        thousands(r as u64)
    } else {
        format!("{r}")
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_run_says_it_ran_until_quit_never_that_it_stopped_early() {
        let scenario = Scenario::resolve("demo").unwrap();
        let mut snap = crate::tui::fixture::sample_view().snapshot;
        snap.elapsed_secs = 231.0;
        snap.producing_secs = 229.0;
        let live = Report::new(&scenario, snap.clone(), Ending::Quit, vec![]).render(Format::Text);
        assert!(live.contains("(live, until quit)"), "{live}");
        assert!(
            !live.contains("stopped early") && !live.contains("requested"),
            "{live}"
        );
        let stopped =
            Report::new(&scenario, snap, Ending::StoppedEarly, vec![]).render(Format::Text);
        assert!(
            stopped.contains("(stopped early; 2m requested)"),
            "{stopped}"
        );
    }
}
