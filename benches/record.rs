//! What `--record` costs the live lab: the same scenario run headless without and with a
//! recording, alternately (off, on, on, off, so a drift of the machine falls on both), and per
//! mode latlab's CPU while producing, the whole process tree's CPU, and the latency figures a
//! recording could disturb (the producer's put, the fan-out consumers' arrival -> receive, S3's
//! total time, Redis's lag). Then the recording's size: bytes per minute, and the bytes added in
//! each 10 s of the run (a steady rate is what "constant per minute" means).
//!
//! `cargo bench --bench record`; `LATLAB_RECORD_BENCH_SECS` sets each run's length (default 30)
//! and `LATLAB_RECORD_BENCH_SCENARIOS` the scenarios (default `demo,tour`).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// CPU seconds (user + system) of every child process waited for so far.
fn children_cpu() -> f64 {
    // SAFETY: getrusage writes into the struct it is given and nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

struct Run {
    /// Figure name -> value.
    figures: BTreeMap<String, f64>,
    /// Recording only: bytes at each 10 s mark, and the whole size.
    growth: Vec<u64>,
    bytes: u64,
    secs: f64,
}

fn run(scenario: &str, secs: u64, record: bool) -> Run {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let out = tmp.path().join("report.json");
    let rec = tmp.path().join("rec");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_latlab"));
    cmd.args(["run", scenario, "--quiet", "--format", "json", "-o"])
        .arg(&out)
        .args(["--duration", &format!("{secs}s")]);
    if record {
        cmd.arg("--record").arg(&rec);
    }
    let cpu_before = children_cpu();
    let started = Instant::now();
    let mut child = cmd.spawn().expect("latlab runs");
    let mut growth = Vec::new();
    let mut mark = Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "latlab run {scenario} failed");
            break;
        }
        if record && started.elapsed() >= mark {
            growth.push(dir_bytes(&rec));
            mark += Duration::from_secs(10);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let tree_cpu = children_cpu() - cpu_before;
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("the report")).expect("JSON");
    let s = &report["snapshot"];
    let producing = s["producing_secs"].as_f64().unwrap_or(secs as f64);
    let mut figures = BTreeMap::new();
    figures.insert(
        "CPU: process tree (cores)".to_string(),
        tree_cpu / started.elapsed().as_secs_f64(),
    );
    let ms = |v: &serde_json::Value| v.as_f64().map(|us| us / 1000.0);
    if let Some(k) = s["kinesis"].as_object() {
        let p = &k["producer"];
        if let Some(cpu) = p["cpu"].as_f64() {
            figures.insert("CPU: latlab while producing (cores)".into(), cpu);
        }
        for q in ["p50", "p99"] {
            if let Some(v) = ms(&p["put_latency"][format!("{q}_us")]) {
                figures.insert(format!("Kinesis put {q} (ms)"), v);
            }
        }
        for c in k["consumers"].as_array().into_iter().flatten() {
            let kind = c["kind"].as_str().unwrap_or_default();
            if !kind.contains("efo") {
                continue;
            }
            for q in ["p50", "p99"] {
                if let Some(v) = ms(&c["arrival_to_receive"][format!("{q}_us")]) {
                    figures.insert(
                        format!("{} {q} (ms)", c["name"].as_str().unwrap_or(kind)),
                        v,
                    );
                }
            }
        }
    }
    for op in s["s3"]["ops"].as_array().into_iter().flatten() {
        let name = format!(
            "S3 {} {}",
            op["class"].as_str().unwrap_or_default(),
            op["op"].as_str().unwrap_or_default()
        );
        if let Some(v) = ms(&op["total"]["p50_us"]) {
            figures.insert(format!("{name} p50 (ms)"), v);
        }
        if let Some(n) = op["requests"].as_f64() {
            figures.insert(format!("{name} requests/s"), n / producing.max(1.0));
        }
    }
    for m in s["redis"]["methods"].as_array().into_iter().flatten() {
        if let Some(v) = ms(&m["lag"]["p50_us"]) {
            figures.insert(
                format!("Redis {} lag p50 (ms)", m["method"].as_str().unwrap_or("?")),
                v,
            );
        }
    }
    Run {
        figures,
        bytes: if record { dir_bytes(&rec) } else { 0 },
        growth,
        secs: started.elapsed().as_secs_f64(),
    }
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

fn main() {
    let secs: u64 = std::env::var("LATLAB_RECORD_BENCH_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let scenarios =
        std::env::var("LATLAB_RECORD_BENCH_SCENARIOS").unwrap_or_else(|_| "demo,tour".to_string());
    for scenario in scenarios.split(',') {
        eprintln!("record bench: {scenario}, 4 runs of {secs} s (off, on, on, off)");
        let runs: Vec<(bool, Run)> = [false, true, true, false]
            .into_iter()
            .map(|on| (on, run(scenario, secs, on)))
            .collect();
        println!(
            "\n{scenario}: {secs} s runs, without and with --record (two of each, alternated)"
        );
        println!(
            "{:<44} {:>16} {:>16} {:>8}",
            "figure", "without", "with --record", "ratio"
        );
        let names: Vec<String> = runs[0].1.figures.keys().cloned().collect();
        for name in names {
            let of = |on: bool| -> Vec<f64> {
                runs.iter()
                    .filter(|(o, _)| *o == on)
                    .filter_map(|(_, r)| r.figures.get(&name).copied())
                    .collect()
            };
            let (off, on) = (of(false), of(true));
            let fmt = |xs: &[f64]| {
                xs.iter()
                    .map(|x| format!("{x:.3}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            println!(
                "{:<44} {:>16} {:>16} {:>8}",
                name,
                fmt(&off),
                fmt(&on),
                format!("x{:.2}", mean(&on) / mean(&off))
            );
        }
        for (_, r) in runs.iter().filter(|(on, _)| *on) {
            let per_min = r.bytes as f64 / r.secs * 60.0;
            let steps: Vec<String> = r
                .growth
                .windows(2)
                .map(|w| format!("{:.1}", (w[1].saturating_sub(w[0])) as f64 / 1000.0))
                .collect();
            println!(
                "recording: {:.1} KB in {:.0} s = {:.1} KB per minute; KB added in each 10 s: {}",
                r.bytes as f64 / 1000.0,
                r.secs,
                per_min / 1000.0,
                steps.join(", ")
            );
        }
    }
}
