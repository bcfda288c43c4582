//! What `--share` costs the host, and how far behind it a viewer draws: the same scenario run
//! headless with `--share` and 0 viewers, then 10, then 10, then 0 (so that a drift of the
//! machine falls on both), measuring latlab's own CPU (from /proc, the redis-servers left out)
//! and, with viewers, each tick frame's delay: when a viewer had read it whole, less when the
//! host published it (`run.at_unix_ms`; one machine, one clock).
//!
//! `cargo bench --bench share`; `LATLAB_SHARE_BENCH_SECS` sets each run's length (default 20)
//! and `LATLAB_SHARE_BENCH_SCENARIO` the scenario (default `tour`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1000.0
}

/// A process's CPU seconds (user + system) from /proc/PID/stat.
fn cpu_of(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = after.split(' ').collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some(ticks / hz)
}

/// A viewer: reads the stream until it ends, noting each tick's delay in milliseconds.
/// `frames`: how many it read, and the most frames the share says viewers missed.
fn viewer(
    addr: String,
    token: String,
    delays: Arc<Mutex<Vec<f64>>>,
    frames: Arc<Mutex<(u64, u64)>>,
) {
    let Ok(sock) = TcpStream::connect(&addr) else {
        return;
    };
    let mut w = sock.try_clone().unwrap();
    let _ = write!(
        w,
        "GET /events HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\r\n"
    );
    let mut r = BufReader::with_capacity(1 << 20, sock);
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        // Chunk sizes and blank lines are skipped; an event's data is one line.
        if let Some(data) = line.strip_prefix("data: ") {
            let at = now_ms();
            let Ok(v) = serde_json::from_str::<serde_json::Value>(data.trim_end()) else {
                continue;
            };
            if v["kind"] == "end" {
                return;
            }
            {
                let mut f = frames.lock().unwrap();
                f.0 += 1;
                f.1 = f.1.max(v["run"]["dropped"].as_u64().unwrap_or(0));
            }
            if v["kind"] == "tick"
                && let Some(sent) = v["run"]["at_unix_ms"].as_f64()
            {
                delays.lock().unwrap().push(at - sent);
            }
        }
    }
}

struct Run {
    cpu_cores: f64,
    delays: Vec<f64>,
    frames: u64,
    dropped: u64,
}

fn run(scenario: &str, secs: u64, viewers: usize) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_latlab"))
        .args(["run", scenario, "--quiet", "--format", "json", "-o"])
        .arg(&out)
        .args(["--duration", &format!("{secs}s"), "--share"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("latlab runs");
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let url = loop {
        line.clear();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "latlab printed no share line"
        );
        if let Some(u) = line.trim().strip_prefix("share: ") {
            break u.to_string();
        }
    };
    std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = err.read_to_string(&mut rest);
    });
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, token) = rest.split_once("/?token=").unwrap();
    let delays = Arc::new(Mutex::new(Vec::new()));
    let frames = Arc::new(Mutex::new((0, 0)));
    let threads: Vec<_> = (0..viewers)
        .map(|_| {
            let (a, t, d, f) = (
                addr.to_string(),
                token.to_string(),
                delays.clone(),
                frames.clone(),
            );
            std::thread::spawn(move || viewer(a, t, d, f))
        })
        .collect();
    let pid = child.id();
    let started = Instant::now();
    let mut cpu = 0.0;
    while child.try_wait().unwrap().is_none() {
        if let Some(c) = cpu_of(pid) {
            cpu = c;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let wall = started.elapsed().as_secs_f64();
    for t in threads {
        let _ = t.join();
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(report["ending"], "completed");
    let (read, dropped) = *frames.lock().unwrap();
    let delays = delays.lock().unwrap().clone();
    Run {
        cpu_cores: cpu / wall,
        delays,
        frames: read,
        dropped,
    }
}

fn pct(xs: &mut [f64], q: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    if xs.is_empty() {
        return f64::NAN;
    }
    xs[((xs.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    let secs: u64 = std::env::var("LATLAB_SHARE_BENCH_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let scenario =
        std::env::var("LATLAB_SHARE_BENCH_SCENARIO").unwrap_or_else(|_| "tour".to_string());
    eprintln!("share bench: {scenario}, 4 runs of {secs} s (0, 10, 10, 0 viewers)");
    let runs: Vec<(usize, Run)> = [0, 10, 10, 0]
        .into_iter()
        .map(|n| (n, run(&scenario, secs, n)))
        .collect();
    let cpu = |n: usize| -> Vec<f64> {
        runs.iter()
            .filter(|(v, _)| *v == n)
            .map(|(_, r)| r.cpu_cores)
            .collect()
    };
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let (c0, c10) = (cpu(0), cpu(10));
    println!(
        "\n{scenario}: {secs} s runs with --share, 0 and 10 viewers (two of each, alternated)"
    );
    println!(
        "latlab's CPU (cores): 0 viewers {:.3} {:.3}, 10 viewers {:.3} {:.3}: x{:.3} (goal: at most x1.05)",
        c0[0],
        c0[1],
        c10[0],
        c10[1],
        mean(&c10) / mean(&c0)
    );
    let mut delays: Vec<f64> = runs
        .iter()
        .filter(|(v, _)| *v == 10)
        .flat_map(|(_, r)| r.delays.clone())
        .collect();
    let frames: u64 = runs.iter().map(|(_, r)| r.frames).sum();
    let dropped: u64 = runs.iter().map(|(_, r)| r.dropped).sum();
    println!(
        "a viewer's delay behind the host, over {} tick frames of 10 viewers: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (goal: p99 under one tick, 1000 ms); {frames} frames read, {dropped} missed",
        delays.len(),
        pct(&mut delays, 0.5),
        pct(&mut delays, 0.99),
        pct(&mut delays, 1.0)
    );
}
