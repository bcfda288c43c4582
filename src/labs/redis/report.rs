//! The Redis lab's part of a report: replication lag per method and condition, beside the seed's
//! table; and its CSV rows.

use crate::lab_kit::section::compare::Comparer;
use crate::lab_kit::section::table::Table;
use crate::lab_kit::section::{CsvRows, Cx, Run, msf, ratio_text, section_heading};
use crate::labs::redis::config::RedisSeed;
use crate::labs::redis::snapshot::RedisSnapshot;
use latlab_core::units::{ms_f, thousands};

impl crate::labs::Reported for super::RedisLab {
    /// Each method's tries and errors.
    fn soak(r: &serde_json::Value, out: &mut String) -> u64 {
        let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
        for m in r["methods"].as_array().into_iter().flatten() {
            out.push_str(&format!(
                "Redis {}: {} tries, {} errors\n",
                m["method"].as_str().unwrap_or("?"),
                n(&m["tries"]),
                n(&m["errors"])
            ));
        }
        0
    }

    /// Its rows of the CSV.
    fn csv(snap: &RedisSnapshot, rows: &mut CsvRows) {
        for c in &snap.conditions {
            for m in &c.methods {
                let series = m.method.key();
                let name = &c.condition.name;
                rows.add(
                    "redis",
                    name,
                    &format!("{series}_mean_ms"),
                    m.lag.mean_us / 1000.0,
                );
                rows.add(
                    "redis",
                    name,
                    &format!("{series}_p50_ms"),
                    msf(m.lag.p50_us),
                );
                rows.add(
                    "redis",
                    name,
                    &format!("{series}_max_ms"),
                    msf(m.lag.max_us),
                );
                rows.add("redis", name, &format!("{series}_errors"), m.errors as f64);
            }
        }
        for m in &snap.methods {
            rows.summary("redis", "live", m.method.key(), &m.lag);
        }
    }

    /// Its sections of the text or Markdown report.
    fn write(r: &RedisSnapshot, cx: &Cx<'_, RedisSeed>, out: &mut String, md: bool) {
        use crate::labs::redis::Method;
        let heading = section_heading(md);
        let table = |t: &Table| if md { t.markdown() } else { t.text() };
        if let Some(why) = &r.unavailable {
            heading(out, "Redis: not run");
            out.push_str(&format!("{why}\n"));
            return;
        }
        let mean = |us: f64| ms_f(us / 1000.0);
        let seed = cx.seed;
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
                            format!("{} ({})", mean(x.lag.mean_us), x.lag.ms(x.lag.p50_us))
                        }
                    })
                };
                let seed_row =
                    seed.and_then(|s| s.rows.iter().find(|row| row.condition == c.condition.name));
                let compared = seed.and_then(|s| {
                    cx.cell(&format!(
                        "{}/average_lag/{}/new_clients",
                        s.experiment, c.condition.name
                    ))
                });
                let behind = m(Method::Offset)
                    .and_then(|x| x.behind_bytes.as_ref())
                    .map_or(String::new(), |b| {
                        latlab_core::units::format_bytes(b.p50_bytes)
                    });
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
                    l.ms(l.p50_us),
                    l.ms(l.p90_us),
                    l.ms(l.p99_us),
                    l.ms(l.p999_us),
                    l.ms(l.max_us),
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
                        format!("{}/s", latlab_core::units::format_bytes(l.bandwidth as u64))
                    } else {
                        "unlimited".into()
                    }
                )
            });
        out.push_str(&format!(
            "primary {}, replica {}; replication link {link}\n",
            r.primary, r.replica
        ));
        for m in r.methods.iter().filter(|m| m.errors > 0) {
            if let Some(line) = &m.last_error {
                out.push_str(&format!(
                    "{}: {} failed; the last: {line}\n",
                    m.method.label(),
                    latlab_core::units::plural(m.errors, "try", "tries")
                ));
            }
        }
        if let Some(s) = seed {
            out.push_str(&format!("seed: {}\n", s.source));
        }
    }

    /// The cells a Redis seed can be compared on.
    fn seed_ids(r: &RedisSeed, ids: &mut Vec<String>) {
        for row in &r.rows {
            ids.push(format!(
                "{}/average_lag/{}/new_clients",
                r.experiment, row.condition
            ));
        }
    }

    /// This run's conditions beside a Redis seed's table.
    fn compare(r: &RedisSnapshot, seed: &RedisSeed, run: &Run<'_>, cmp: &mut Comparer) {
        // The Redis lab measures real servers; only its link shaping is modelled.
        let redis_model = r.local.then_some(run.model);
        let mut redis = Comparer::new(redis_model);
        for c in &r.conditions {
            let Some(row) = seed.rows.iter().find(|s| s.condition == c.condition.name) else {
                continue;
            };
            let Some(m) = c
                .methods
                .iter()
                .find(|m| m.method == crate::labs::redis::Method::NewClients && m.lag.count > 0)
            else {
                continue;
            };
            redis.add(
                format!(
                    "{}/average_lag/{}/new_clients",
                    seed.experiment, c.condition.name
                ),
                m.lag.mean_us / 1000.0,
                row.average_ms,
                row.average_ms,
            );
        }
        cmp.cells.extend(redis.cells);
    }
}
