//! What the TUI costs: frame render time at 200x60 (the overview of every lab, 9 panes, and the
//! Kinesis tab of round 2, every pane and row drawn, from fixed views), and the CPU of the real
//! binary sitting idle at the default frame rate, against the same lab run headless (`latlab
//! run`), so the screen's own share shows as a ratio measured in one run.
//!
//! A frame is timed two ways: as the live TUI draws it (one terminal kept from frame to frame,
//! each frame a second later than the last, so the diff to the terminal has work to do), and
//! into a fresh in-memory terminal per frame (what this bench timed before, which adds
//! allocating and copying two 200x60 buffers to every frame). The second depends on the
//! allocator's history: glibc moves its mmap threshold as large blocks are freed, and two builds of
//! the same drawing code measured 1.15 and 1.92 ms one way round and 1.91 and 1.14 ms the other.
//! So the bench runs itself with glibc's mmap and trim thresholds pinned ([`TUNABLES`]), under
//! which both measure 1.15 ms; the binaries it times for CPU run without them.
//!
//! `cargo bench --bench tui`. Needs tmux for the first-frame and idle measurements.
//! `--frames-only` times the frames alone. With `LATLAB_TUI_BASELINE=BIN`, the frames are also
//! timed by BIN (this bench built from another commit by `scripts/tui-bench-baseline REV`) in
//! the same run, and the ratios printed.

use std::process::Command;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use latlab::labs::LabKind;
use latlab::theme::Theme;
use latlab::tui::app::App;
use latlab::tui::fixture::{lab_moment, sample_tour_moment};
use latlab::tui::moment::Moment;
use latlab::tui::screenshot::render;
use latlab::tui::ui;

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

fn stats(mut times: Vec<f64>) -> (f64, f64, f64) {
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times[times.len() - 1],
    )
}

/// Render time of one moment at `size` into a fresh in-memory terminal per frame, over 1000
/// frames after 50 to warm up: (p50, p99, max) in us.
fn fresh_frame_times(app: &App, moment: &Moment, size: (u16, u16)) -> (f64, f64, f64) {
    for _ in 0..50 {
        render(app, moment, size);
    }
    stats(
        (0..1000)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(render(app, moment, size));
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect(),
    )
}

/// The moment one second later: every sparkline moved on by a second, the clock too.
fn a_second_later(moment: &Moment) -> Moment {
    let mut next = moment.clone();
    next.snapshot.elapsed_secs += 1.0;
    fn on<T>(v: &mut [T]) {
        if !v.is_empty() {
            v.rotate_left(1);
        }
    }
    let h = &mut next.history;
    if let Some(k) = h.kinesis.as_mut() {
        k.consumers.iter_mut().for_each(|p| on(p));
        on(&mut k.read_rate);
    }
    h.s3.iter_mut().flatten().for_each(|(_, _, p)| on(p));
    h.redis.iter_mut().flatten().for_each(|(_, p)| on(p));
    next
}

/// Render time as the live TUI draws: one terminal kept across frames, the moment a second later
/// each frame (two views in turn), over 1000 frames after 50 to warm up: (p50, p99, max) in us.
fn live_frame_times(app: &App, moment: &Moment, size: (u16, u16)) -> (f64, f64, f64) {
    let views = [moment.clone(), a_second_later(moment)];
    let mut terminal = Terminal::new(TestBackend::new(size.0, size.1)).expect("a terminal");
    let mut frame = 0usize;
    let mut draw = |terminal: &mut Terminal<TestBackend>| {
        let v = &views[frame % 2];
        frame += 1;
        terminal
            .draw(|f| ui::draw(f, app, v))
            .expect("drawing into memory");
    };
    for _ in 0..50 {
        draw(&mut terminal);
    }
    stats(
        (0..1000)
            .map(|_| {
                let t = Instant::now();
                draw(&mut terminal);
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect(),
    )
}

/// Every lab's tab exists (the overview of the `tour` scenario).
fn all_labs(app: &mut App) {
    app.sync_labs(&[LabKind::Kinesis, LabKind::S3, LabKind::Redis]);
}

/// The frame figures: (what, p50, p99, max) per line printed.
fn frames() -> Vec<(String, (f64, f64, f64))> {
    let tour = sample_tour_moment();
    let mut app = App::new(Theme::dark());
    all_labs(&mut app);
    let rows = tour
        .snapshot
        .kinesis
        .as_ref()
        .map_or(0, |k| k.consumers.len());
    let overview = format!(
        "overview of every lab: 9 panes (4 Kinesis with {rows} consumer rows, 2 S3, 3 Redis)"
    );
    // The Kinesis tab alone, round 2 with three pollers.
    let moment = lab_moment(LabKind::Kinesis);
    let kinesis_app = App::new(Theme::dark());
    let rows = moment
        .snapshot
        .kinesis
        .as_ref()
        .map_or(0, |k| k.consumers.len());
    let kinesis = format!("Kinesis tab: 4 panes / {rows} consumer rows");
    vec![
        (
            format!("{overview}, as the live TUI draws"),
            live_frame_times(&app, &tour, (200, 60)),
        ),
        (
            format!("{kinesis}, as the live TUI draws"),
            live_frame_times(&kinesis_app, &moment, (200, 60)),
        ),
        (
            format!("{overview}, fresh terminal per frame"),
            fresh_frame_times(&app, &tour, (200, 60)),
        ),
        (
            format!("{kinesis}, fresh terminal per frame"),
            fresh_frame_times(&kinesis_app, &moment, (200, 60)),
        ),
    ]
}

/// `p50 N us` of each line another build of this bench printed.
fn baseline(bin: &str) -> Option<Vec<f64>> {
    let out = Command::new(bin)
        .arg("--frames-only")
        .env_remove("LATLAB_TUI_BASELINE")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let p50s: Vec<f64> = text
        .lines()
        .filter_map(|l| {
            let rest = &l[l.find(" p50 ")? + 5..];
            rest.split_whitespace().next()?.parse().ok()
        })
        .collect();
    (!p50s.is_empty()).then_some(p50s)
}

/// glibc's malloc thresholds, pinned so that freeing a large block never moves them.
const TUNABLES: &str = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456";

fn main() {
    if std::env::var_os("GLIBC_TUNABLES").is_none() {
        let status = Command::new(std::env::current_exe().expect("the bench's own path"))
            .args(std::env::args_os().skip(1))
            .env("GLIBC_TUNABLES", TUNABLES)
            .status();
        std::process::exit(status.map_or(1, |s| s.code().unwrap_or(1)));
    }
    println!(
        "allocator: GLIBC_TUNABLES={}",
        std::env::var("GLIBC_TUNABLES").unwrap_or_default()
    );
    let figures = frames();
    for (what, (p50, p99, max)) in &figures {
        println!(
            "frame render at 200x60, {what}, 1000 frames: p50 {p50:.0} us, p99 {p99:.0} us, max {max:.0} us"
        );
    }
    if let Ok(bin) = std::env::var("LATLAB_TUI_BASELINE") {
        match baseline(&bin) {
            Some(before) if before.len() == figures.len() => {
                println!("against {bin}, timed in this run:");
                for ((what, (p50, _, _)), b) in figures.iter().zip(before) {
                    println!(
                        "  {what}: p50 {b:.0} us before, {p50:.0} us now (x{:.2})",
                        p50 / b
                    );
                }
            }
            _ => println!("baseline {bin}: no frame figures read from it"),
        }
    }
    if std::env::args().any(|a| a == "--frames-only") {
        return;
    }

    let bin = env!("CARGO_BIN_EXE_latlab");
    let settle = Duration::from_secs(6);
    let window = Duration::from_secs(10);
    let session = format!("latlab-bench-{}", std::process::id());
    let tui_cmd = format!(
        "env -u GLIBC_TUNABLES {bin} tui demo --log /dev/null --limit consumer_activation=0s"
    );
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
        .env_remove("GLIBC_TUNABLES")
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
