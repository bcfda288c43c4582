//! The shared page in a real browser: Debian's chromium, headless, driven by playwright-core
//! (`tests/browser/page.mjs`) over a real `latlab run --share`. It checks what a viewer sees:
//! every pane's title and a p99 equal to the frame's, an update within two ticks, the help, the
//! themes, columns dropped on a phone's width, no control without `--share-control` (and a
//! forged key refused), a click on + that adds a poller with it and on a fault button that
//! injects it, and the line that says the
//! connection was lost.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use common::host::Host;
use serde_json::Value;

/// chromium and playwright-core, or a failure saying how to get them (never a skip).
fn browser() -> Command {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    assert!(
        Path::new("/usr/bin/chromium").exists() || std::env::var_os("LATLAB_CHROMIUM").is_some(),
        "the page tests drive Debian's chromium: install it (sudo apt-get install -y chromium), or name another with LATLAB_CHROMIUM"
    );
    assert!(
        dir.join("node_modules/playwright-core").exists(),
        "the page tests drive chromium with playwright-core: run `npm ci --prefix tests/browser` (scripts/test does)"
    );
    let mut c = Command::new("node");
    c.current_dir(&dir).arg("page.mjs");
    c
}

/// Runs the browser script; `on` sees each step as it comes and may act on it.
fn drive(mode: &str, url: &str, mut on: impl FnMut(&Value)) -> Vec<Value> {
    let mut child = browser()
        .args([mode, url])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node runs (install Node.js)");
    let out = child.stdout.take().unwrap();
    let mut steps = Vec::new();
    for line in BufReader::new(out).lines().map_while(Result::ok) {
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        on(&v);
        steps.push(v);
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "the browser script failed: {steps:?}");
    steps
}

fn step<'a>(steps: &'a [Value], name: &str) -> &'a Value {
    steps
        .iter()
        .find(|s| s["step"] == name)
        .unwrap_or_else(|| panic!("no step {name}: {steps:?}"))
}

fn url(host: &Host) -> String {
    format!("http://{}/?token={}", host.addr, host.token)
}

/// The cells of the table whose heads include `head`, by head: (heads, rows).
fn table_with<'a>(reading: &'a Value, head: &str) -> Option<&'a Value> {
    reading["tables"]
        .as_array()?
        .iter()
        .find(|t| t["heads"].as_array().unwrap().iter().any(|h| h == head))
}

#[test]
fn a_browser_shows_the_tour_as_its_frames_hold_it_and_no_control_without_the_grant() {
    let mut host = Host::start(&[
        "run",
        "tour",
        "--duration",
        "60s",
        "--quiet",
        "--format",
        "json",
        "--share",
    ]);
    let pid = host.child.id();
    let steps = drive("view", &url(&host), |s| {
        if s["step"] == "kill-host" {
            // SAFETY: kill sends a signal to the host this test started.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    });
    let _ = host.child.wait();

    let read = step(&steps, "read");
    // Every pane of every lab is on the overview, with its title (or its narrow title).
    let page: Vec<&str> = read["pageTitles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let frame = read["frameTitles"].as_array().unwrap();
    assert!(frame.len() >= 8, "the tour's panes: {frame:?}");
    for pair in frame {
        let (full, narrow) = (pair[0].as_str().unwrap(), pair[1].as_str());
        assert!(
            page.contains(&full) || narrow.is_some_and(|n| page.contains(&n)),
            "the pane {full:?} is on the page: {page:?}"
        );
    }
    assert_eq!(page.len(), frame.len());
    // The p99 in the page's table is the frame's, as the TUI writes it.
    let consumer = &read["consumer"];
    let name = consumer["name"].as_str().unwrap();
    let p99 = latlab_core::units::ms(consumer["p99_us"].as_u64().unwrap());
    // The pane of that consumer's kind: the table with its row.
    let (heads, row) = read["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|t| {
            let row = t["rows"].as_array()?.iter().find(|r| r[0] == name)?;
            Some((t["heads"].as_array()?.clone(), row.clone()))
        })
        .unwrap_or_else(|| panic!("{name}'s row: {:?}", read["tables"]));
    let col = heads.iter().position(|h| *h == "p99").unwrap();
    assert_eq!(row[col], p99, "{name}'s p99 on the page");
    assert!(
        read["header"]
            .as_str()
            .unwrap()
            .contains("shared · 1 viewer")
    );

    // The page follows the run: the next frame within two ticks (two seconds).
    let update = step(&steps, "update");
    assert!(
        update["waited_ms"].as_u64().unwrap() <= 2000,
        "the page updates within two ticks: {update}"
    );

    let help = step(&steps, "help");
    assert_eq!(help["shown"], "block");
    assert!(help["text"].as_str().unwrap().contains("read-only"));
    assert!(help["text"].as_str().unwrap().contains("poller"), "{help}");
    assert_eq!(help["closed"], "none");

    let ro = step(&steps, "readonly");
    assert_eq!(ro["buttons"]["count"], 0, "no buttons without control");
    assert_eq!(ro["buttons"]["shown"], "none");
    assert_eq!(ro["refused"]["status"], 403, "{ro}");
    assert!(
        ro["refused"]["text"]
            .as_str()
            .unwrap()
            .contains("read-only")
    );

    // ?theme=light and ?theme=dark draw the themes' own backgrounds.
    let theme = step(&steps, "theme");
    for name in ["light", "dark"] {
        let t = latlab::theme::Theme::resolve(name).unwrap();
        let (r, g, b) = latlab::theme::rgb(t.background, (15, 20, 25));
        assert_eq!(
            theme["colours"][name],
            format!("rgb({r}, {g}, {b})"),
            "{name}"
        );
    }

    // On a phone's width the consumers' tables drop columns, by their ranks, as the TUI's do.
    let phone = step(&steps, "phone");
    let wide = table_with(read, "consumer").unwrap()["heads"]
        .as_array()
        .unwrap()
        .len();
    let narrow = table_with(phone, "consumer").unwrap()["heads"]
        .as_array()
        .unwrap()
        .len();
    assert!(
        narrow < wide,
        "a phone shows fewer columns: {narrow} of {wide}"
    );

    let lost = step(&steps, "lost");
    assert_eq!(lost["text"], "connection lost, retrying");
    let errors = step(&steps, "done")["errors"].as_array().unwrap();
    assert!(
        errors.is_empty(),
        "no script error and no request elsewhere: {errors:?}"
    );
}

#[test]
fn with_control_a_click_on_plus_adds_a_poller_the_host_then_shows() {
    let mut host = Host::start(&[
        "run",
        "demo",
        "--duration",
        "20s",
        "--quiet",
        "--format",
        "json",
        "--share",
        "--share-control",
    ]);
    let steps = drive("control", &url(&host), |_| {});
    let clicked = step(&steps, "clicked");
    assert_eq!(
        clicked["after"].as_u64().unwrap(),
        clicked["before"].as_u64().unwrap() + 1,
        "{clicked}"
    );
    let fault = step(&steps, "fault");
    assert!(
        fault["status"]
            .as_str()
            .unwrap()
            .contains(fault["fault"].as_str().unwrap()),
        "the host's answer is on the page's status line: {fault}"
    );
    let (report, stderr) = host.finish();
    let pollers = report["snapshot"]["kinesis"]["consumers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "poller")
        .count() as u64;
    assert_eq!(
        pollers,
        clicked["after"].as_u64().unwrap(),
        "the report has it too"
    );
    assert!(
        stderr.contains("viewer "),
        "the host says a viewer sent it: {stderr}"
    );
    assert!(
        step(&steps, "done")["errors"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// A frame whose every string holds markup and script (an `onerror=`, a `</script>`, quotes
/// that close an attribute) is drawn as text: nothing runs, no element of its is made, and the
/// page is served with its one script allowed by its hash, never `'unsafe-inline'`.
#[test]
fn markup_in_a_frame_is_drawn_as_text_and_runs_nothing() {
    let mut host = Host::start(&[
        "run",
        "tour",
        "--duration",
        "30s",
        "--quiet",
        "--format",
        "json",
        "--share",
    ]);
    let steps = drive("hostile", &url(&host), |_| {});
    let _ = host.child.kill();
    let _ = host.child.wait();
    let seen = step(&steps, "hostile");
    let csp = seen["csp"].as_str().unwrap();
    assert!(csp.contains("script-src 'sha256-"), "{csp}");
    assert!(!csp.contains("script-src 'unsafe-inline'"), "{csp}");
    assert!(seen["strings"].as_u64().unwrap() > 100, "{seen}");
    assert_eq!(seen["pwned"], 0, "a payload ran: {seen}");
    assert_eq!(seen["injected"], 0, "a payload made an element: {seen}");
    assert_eq!(seen["scripts"], 1, "{seen}");
    // The panes are drawn, the payloads in their titles as text.
    assert!(seen["panes"].as_u64().unwrap() >= 8, "{seen}");
    let titles = seen["titles"].to_string();
    assert!(titles.contains("onerror"), "{titles}");
    assert!(titles.contains("</script>"), "{titles}");
    assert_eq!(
        step(&steps, "done")["errors"],
        serde_json::json!([]),
        "{steps:?}"
    );
}

/// The host's end event says the whole line (`the run ended: completed`): the page showed it
/// after its own `the run ended: ` again.
#[test]
fn a_viewer_is_told_the_run_ended_once() {
    let mut host = Host::start(&[
        "run",
        "demo",
        "--duration",
        "30s",
        "--quiet",
        "--format",
        "json",
        "--share",
    ]);
    let steps = drive("ended", &url(&host), |_| {});
    let _ = host.child.kill();
    let _ = host.child.wait();
    assert_eq!(step(&steps, "ended")["status"], "the run ended: completed");
    assert_eq!(
        step(&steps, "done")["errors"],
        serde_json::json!([]),
        "{steps:?}"
    );
}
