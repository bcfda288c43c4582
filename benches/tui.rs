//! What the TUI costs: frame render time at 200x60 (the overview of every lab, 9 panes, and the
//! Kinesis tab of round 2, every pane and row drawn, from fixed views), and the CPU of the real binary sitting idle at the default frame rate, against the same
//! lab run headless (`latlab run`), so the screen's own share shows as a ratio measured in one run.
//!
//! `cargo bench --bench tui`. Needs tmux for the first-frame and idle measurements.

use std::process::Command;
use std::time::{Duration, Instant};

use latlab::labs::LabKind;
use latlab::tui::app::App;
use latlab::tui::fixture::{sample_tour_view, sample_view};
use latlab::tui::screenshot::render;
use latlab::tui::theme::Theme;
use latlab::tui::view::View;

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// CPU seconds (user + system) a process has used, from /proc.
fn cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn pid_of(pattern: &str) -> Option<u32> {
    let out = Command::new("pgrep")
        .args(["-n", "-f", pattern])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// Average CPU % of the newest process matching `pattern` over `window`, after `settle`.
fn cpu_percent(pattern: &str, settle: Duration, window: Duration) -> Option<f64> {
    std::thread::sleep(settle);
    let pid = pid_of(pattern)?;
    let a = cpu_secs(pid)?;
    std::thread::sleep(window);
    let b = cpu_secs(pid)?;
    Some(100.0 * (b - a) / window.as_secs_f64())
}

/// Render time of one view at `size`, over 1000 frames after 50 to warm up: (p50, p99, max) in us.
fn frame_times(app: &App, view: &View, size: (u16, u16)) -> (f64, f64, f64) {
    for _ in 0..50 {
        render(app, view, size);
    }
    let mut times: Vec<f64> = (0..1000)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(render(app, view, size));
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times[times.len() - 1],
    )
}

fn main() {
    // The overview of the `tour` scenario: 4 Kinesis panes, 2 S3 panes and 3 Redis panes.
    let tour = sample_tour_view();
    let mut app = App::new(Theme::dark());
    app.sync_labs(&[LabKind::Kinesis, LabKind::S3, LabKind::Redis]);
    let rows = tour
        .snapshot
        .kinesis
        .as_ref()
        .map_or(0, |k| k.consumers.len());
    let (p50, p99, max) = frame_times(&app, &tour, (200, 60));
    println!(
        "frame render at 200x60, overview of every lab: 9 panes (4 Kinesis with {rows} consumer rows, 2 S3, 3 Redis), 1000 frames: p50 {p50:.0} us, p99 {p99:.0} us, max {max:.0} us"
    );
    // The Kinesis tab alone, round 2 with three pollers.
    let view = sample_view();
    let app = App::new(Theme::dark());
    let (p50, p99, max) = frame_times(&app, &view, (200, 60));
    println!(
        "frame render at 200x60, Kinesis tab: 4 panes / {rows} consumer rows, 1000 frames: p50 {p50:.0} us, p99 {p99:.0} us, max {max:.0} us"
    );

    let bin = env!("CARGO_BIN_EXE_latlab");
    let settle = Duration::from_secs(6);
    let window = Duration::from_secs(10);
    let session = format!("latlab-bench-{}", std::process::id());
    let tui_cmd = format!("{bin} tui demo --log /dev/null --limit consumer_activation=0s");
    let started = Command::new("tmux")
        .args([
            "new-session",
            "-d",
            "-s",
            &session,
            "-x",
            "200",
            "-y",
            "60",
            &tui_cmd,
        ])
        .status()
        .is_ok_and(|s| s.success());
    if !started {
        println!("idle CPU: not measured (tmux is needed: apt-get install -y tmux)");
        return;
    }
    // The first frame: from starting the binary until its header is on the terminal.
    let t0 = Instant::now();
    let mut first_frame = None;
    while t0.elapsed() < Duration::from_secs(10) {
        let pane = Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &session])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        if pane.contains("latlab │ demo") {
            first_frame = Some(t0.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    match first_frame {
        Some(d) => println!(
            "first frame of `latlab tui demo` at 200x60: {} ms after the binary started (polled every 10 ms)",
            d.as_millis()
        ),
        None => println!("first frame: not seen within 10 s"),
    }
    let tui = cpu_percent(&format!("{bin} tui demo"), settle, window);
    let _ = Command::new("tmux")
        .args(["kill-session", "-t", &session])
        .status();
    let mut headless = Command::new(bin)
        .args([
            "run",
            "demo",
            "--duration",
            "30s",
            "--quiet",
            "--limit",
            "consumer_activation=0s",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("latlab run starts");
    let run = cpu_percent(&format!("{bin} run demo"), settle, window);
    let _ = headless.kill();
    let _ = headless.wait();
    match (tui, run) {
        (Some(t), Some(r)) => println!(
            "idle CPU over {}s at the default 5 fps: latlab tui {t:.1}% of one core; the same lab headless {r:.1}%; the screen's share {:.1} points (x{:.2})",
            window.as_secs(),
            t - r,
            if r > 0.0 { t / r } else { f64::NAN }
        ),
        _ => println!("idle CPU: could not read /proc for the processes"),
    }
}
