//! The real binary in a real terminal: `latlab tui` inside tmux, driven with keys as a person
//! would, the screen read back with capture-pane.

use crate::common;

use std::process::Command;
use std::time::{Duration, Instant};

struct Session(String);

/// tmux on the session's own server (a socket named after the session): tests that run side by
/// side never share a server, so one test's last session closing cannot take down the server
/// another is starting a session on.
fn tmux(name: &str) -> Command {
    let mut c = Command::new("tmux");
    c.args(["-L", name]);
    c
}

impl Session {
    /// `cmd` in a new detached 140x44 tmux session named `name`, in colour.
    fn start(name: String, cmd: &str) -> Session {
        Session::sized(name, cmd, 140, 44)
    }

    /// `cmd` in a new detached tmux session of `width` x `height`, in colour.
    fn sized(name: String, cmd: &str, width: u16, height: u16) -> Session {
        let (width, height) = (width.to_string(), height.to_string());
        let ok = tmux(&name)
            .args([
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                &width,
                "-y",
                &height,
                cmd,
            ])
            .env_remove("NO_COLOR")
            .status()
            .unwrap()
            .success();
        assert!(ok, "tmux starts a session");
        Session(name)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = tmux(&self.0).arg("kill-server").status();
    }
}

fn capture(s: &Session) -> String {
    let out = tmux(&s.0)
        .args(["capture-pane", "-p", "-t", &s.0])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn wait_for(s: &Session, what: &str, timeout: Duration) -> String {
    let t = Instant::now();
    loop {
        let screen = capture(s);
        if screen.contains(what) {
            return settled(s, what, screen);
        }
        if t.elapsed() > timeout {
            panic!("'{what}' did not appear within {timeout:?}; the screen:\n{screen}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A screen that showed `what`, drawn whole. A frame is written top to bottom, so a capture can
/// hold the top of one (its header) and not yet the rest: a replay's first capture showed its
/// header over blank rows on a loaded machine (CI, 2026-12-06). Captures again, 100 ms apart,
/// until the bottom row has text (every TUI screen ends with its footer) or two captures agree
/// (a shell's lines under a blank bottom), for 2 s at most.
fn settled(s: &Session, what: &str, mut screen: String) -> String {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(2) {
        if screen.lines().last().is_some_and(|l| !l.trim().is_empty()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        let next = capture(s);
        if next == screen {
            break;
        }
        if next.contains(what) {
            screen = next;
        }
    }
    screen
}

fn keys(s: &Session, k: &str) {
    assert!(
        tmux(&s.0)
            .args(["send-keys", "-t", &s.0, k])
            .status()
            .unwrap()
            .success()
    );
}

#[test]
fn the_tui_runs_in_a_terminal_and_answers_keys() {
    let tmux = Command::new("tmux").arg("-V").output();
    assert!(
        tmux.is_ok_and(|o| o.status.success()),
        "tmux is required for this test: install it (apt-get install -y tmux; .ci/run does)"
    );
    let name = format!("latlab-test-{}", std::process::id());
    let bin = env!("CARGO_BIN_EXE_latlab");
    let log = std::env::temp_dir().join(format!("{name}.log"));
    let rec = tempfile::tempdir().unwrap();
    let record = rec.path().join("rec");
    let cmd = format!(
        "{bin} tui demo --limit consumer_activation=0s --log {} --record {}; echo \"[exit $?]\"; sleep 120",
        log.display(),
        record.display()
    );
    let s = Session::start(name, &cmd);
    let first = wait_for(&s, "latlab │ demo", Duration::from_secs(10));
    assert!(
        first.contains("latlab │ demo"),
        "the first frame names the scenario"
    );
    let screen = wait_for(
        &s,
        "Shared throughput: GetRecords pollers",
        Duration::from_secs(30),
    );
    assert!(screen.contains("emulator · seed-tokyo profile"), "{screen}");
    assert!(
        screen.contains("GetRecords") && screen.contains("of 5 per shard"),
        "{screen}"
    );

    keys(&s, "+");
    let screen = wait_for(&s, "added poller get_records 2", Duration::from_secs(10));
    assert!(
        screen.contains("get_records 2"),
        "a second poller row: {screen}"
    );

    keys(&s, "?");
    let screen = wait_for(&s, "latlab keys", Duration::from_secs(5));
    assert!(
        screen.contains("add / remove a GetRecords poller"),
        "{screen}"
    );
    keys(&s, "x");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !capture(&s).contains("latlab keys"),
        "any key closes the help"
    );

    keys(&s, "p");
    wait_for(&s, "PAUSED", Duration::from_secs(5));
    keys(&s, "p");

    // The fault menu: the demo's lab is Kinesis, so its faults are offered, lettered.
    keys(&s, "f");
    let screen = wait_for(&s, "inject a fault", Duration::from_secs(5));
    assert!(
        screen.contains("j  kinesis.expire-iterators") && !screen.contains("s3.slow-down"),
        "{screen}"
    );
    keys(&s, "j");
    wait_for(
        &s,
        "fault injected: kinesis.expire-iterators",
        Duration::from_secs(5),
    );
    // A marker over the second it fired in, on the Kinesis sparklines.
    let screen = wait_for(&s, "▼", Duration::from_secs(5));
    assert!(
        !screen.contains("inject a fault"),
        "the menu closed: {screen}"
    );

    keys(&s, "q");
    let screen = wait_for(&s, "[exit 0]", Duration::from_secs(40));
    assert!(
        screen.contains("producer:") || screen.contains("Lambda"),
        "the summary tables are printed after quit: {screen}"
    );
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        log_text.contains("added poller get_records 2"),
        "logs went to the file: {log_text}"
    );
    let _ = std::fs::remove_file(&log);
    // The recording kept every key's command and the lab's answer, the fault, the series' logs
    // and the report.
    let events = std::fs::read_to_string(record.join("events.jsonl")).unwrap();
    for want in [
        r#""event":"command","text":"adding a GetRecords poller""#,
        r#""event":"confirmed","text":"added poller get_records 2""#,
        r#""event":"command","text":"injecting kinesis.expire-iterators""#,
        r#""event":"fault","kind":"kinesis.expire-iterators""#,
    ] {
        assert!(
            events.lines().any(|l| l.contains(want)),
            "{want} in:\n{events}"
        );
    }
    assert!(record.join("report.json").is_file());
    assert!(
        record
            .join("hlog")
            .join("kinesis.get_records_2.arrival_to_receive.hlog")
            .is_file()
    );
    replay_in_the_terminal(&record);
}

/// `latlab replay` on the recording the live test just made: the same panes, a REPLAY header,
/// a cursor the keys move, and the keys that would change the experiment refused.
fn replay_in_the_terminal(record: &std::path::Path) {
    let name = format!("latlab-replay-{}", std::process::id());
    let bin = env!("CARGO_BIN_EXE_latlab");
    let cmd = format!(
        "{bin} replay {} --speed 60; echo \"[exit $?]\"; sleep 120",
        record.display()
    );
    let s = Session::start(name, &cmd);
    let screen = wait_for(&s, "REPLAY of", Duration::from_secs(10));
    assert!(
        screen.contains("Shared throughput: GetRecords pollers"),
        "the live lab's panes: {screen}"
    );
    assert!(
        screen.contains("Space play/pause") && !screen.contains("+/- pollers"),
        "the footer offers the replay's keys, not the experiment's: {screen}"
    );
    // At 60x the short recording plays to its end and stops there, paused.
    let screen = wait_for(&s, "⏸ 60x", Duration::from_secs(20));
    assert!(
        screen.contains("get_records 2"),
        "the poller added live is there at the end: {screen}"
    );
    keys(&s, "+");
    wait_for(
        &s,
        "replay: adding a GetRecords poller would change the experiment",
        Duration::from_secs(5),
    );
    keys(&s, "Home");
    // Jumping event by event from the start reaches the key that added the poller.
    let mut seen = String::new();
    for _ in 0..40 {
        keys(&s, "n");
        std::thread::sleep(Duration::from_millis(150));
        seen = capture(&s);
        if seen.contains("added poller get_records 2") {
            break;
        }
    }
    assert!(
        seen.contains("added poller get_records 2"),
        "n reaches the confirmed key: {seen}"
    );
    keys(&s, "q");
    let screen = wait_for(&s, "[exit 0]", Duration::from_secs(10));
    assert!(
        screen.contains("every record accounted for") || screen.contains("Problems"),
        "the tables at the cursor are printed after quit: {screen}"
    );
}

#[test]
fn sigterm_restores_the_terminal_and_prints_the_summary() {
    let name = format!("latlab-term-{}", std::process::id());
    let bin = env!("CARGO_BIN_EXE_latlab");
    let log = std::env::temp_dir().join(format!("{name}.log"));
    let cmd = format!(
        "{bin} tui demo --limit consumer_activation=0s --log {}; echo \"[exit $?]\"; sleep 120",
        log.display()
    );
    let s = Session::start(name, &cmd);
    wait_for(
        &s,
        "Shared throughput: GetRecords pollers",
        Duration::from_secs(30),
    );
    let pid = Command::new("pgrep")
        .args([
            "-f",
            &format!(
                "tui demo --limit consumer_activation=0s --log {}",
                log.display()
            ),
        ])
        .output()
        .unwrap();
    let pids = String::from_utf8_lossy(&pid.stdout).to_string();
    // The newest match is latlab itself (tmux's own command line also mentions it).
    let pid = pids
        .lines()
        .filter_map(|l| l.trim().parse::<u32>().ok())
        .max()
        .expect("latlab runs");
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    let screen = wait_for(&s, "[exit 0]", Duration::from_secs(40));
    assert!(
        !screen.contains("Shared throughput: GetRecords pollers"),
        "the alternate screen is gone: {screen}"
    );
    // The summary's last tables are on the screen (its first ones scrolled up).
    assert!(
        screen.contains("producer:") || screen.contains("latency and cost"),
        "the summary is printed: {screen}"
    );
    let _ = std::fs::remove_file(&log);
}

/// The URL in a host's status line: `sharing at http://ADDR/?token=TOKEN`.
fn share_url(screen: &str) -> String {
    let at = screen.find("at http://").expect("the share's URL");
    screen[at + "at ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn a_shared_tui_is_attached_to_from_another_terminal_read_only_unless_it_grants_control() {
    let bin = env!("CARGO_BIN_EXE_latlab");
    for control in [false, true] {
        let name = format!("latlab-share-{}-{control}", std::process::id());
        let log = std::env::temp_dir().join(format!("{name}.log"));
        let grant = if control { " --share-control" } else { "" };
        let cmd = format!(
            "{bin} tui demo --limit consumer_activation=0s --log {} --share{grant} 2>/dev/null; echo \"[exit $?]\"; sleep 120",
            log.display()
        );
        let host = Session::start(name.clone(), &cmd);
        // The host shows where it shares, and how many watch.
        let screen = wait_for(
            &host,
            "sharing at http://127.0.0.1:",
            Duration::from_secs(30),
        );
        assert!(screen.contains("shared · 0 viewers"), "{screen}");
        let url = share_url(&screen);
        assert!(url.contains("/?token="), "{url}");
        let viewer = Session::start(format!("{name}-viewer"), &format!("{bin} attach '{url}'"));
        let seen = wait_for(
            &viewer,
            "Shared throughput: GetRecords pollers",
            Duration::from_secs(30),
        );
        assert!(seen.contains("ATTACHED to "), "{seen}");
        assert!(
            seen.contains("Enhanced fan-out: SDK SubscribeToShard"),
            "{seen}"
        );
        wait_for(&host, "shared · 1 viewer", Duration::from_secs(10));
        keys(&viewer, "+");
        if control {
            // The host applies it, says who sent it, and the viewer sees the poller.
            let h = wait_for(
                &host,
                "): added poller get_records 2",
                Duration::from_secs(15),
            );
            assert!(h.contains("viewer "), "{h}");
            wait_for(&viewer, "get_records 2", Duration::from_secs(15));
        } else {
            let v = wait_for(
                &viewer,
                "refused: this share is read-only",
                Duration::from_secs(10),
            );
            assert!(v.contains("adding a GetRecords poller"), "{v}");
            assert!(
                !capture(&host).contains("get_records 2"),
                "the host changed nothing"
            );
        }
        // The viewer's own keys stay its own: its tab and zoom change, the host's do not.
        keys(&viewer, "z");
        wait_for(&viewer, "sparklines show the last", Duration::from_secs(5));
        assert!(!capture(&host).contains("sparklines show the last"));
        // The host quits: the viewer is told the run ended.
        keys(&host, "q");
        wait_for(
            &viewer,
            "the run ended: the host quit",
            Duration::from_secs(40),
        );
        wait_for(&host, "[exit 0]", Duration::from_secs(40));
        keys(&viewer, "q");
        // The token was on the host's screen, and is nowhere in its log.
        let token = url.split("token=").nth(1).unwrap();
        let logged = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(!logged.is_empty(), "the host wrote its log");
        assert!(!logged.contains(token), "the log holds the token");
        let _ = std::fs::remove_file(&log);
    }
}

#[test]
fn a_shared_replay_shows_its_viewers_the_hosts_cursor() {
    let bin = env!("CARGO_BIN_EXE_latlab");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/recording-e1ba53f/recording");
    let name = format!("latlab-share-replay-{}", std::process::id());
    let cmd = format!(
        "{bin} replay {} --share --share-token replay-token-1; echo \"[exit $?]\"; sleep 60",
        fixture.display()
    );
    let host = Session::start(name, &cmd);
    let screen = wait_for(
        &host,
        "sharing the replay at http://",
        Duration::from_secs(20),
    );
    let url = share_url(&screen);
    let addr = url
        .strip_prefix("http://")
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_string();
    // A full frame now, as a script would read it: its header holds the host's cursor.
    let frame = |addr: &str| -> serde_json::Value {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        use std::io::{Read, Write};
        write!(
            s,
            "GET /frame HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer replay-token-1\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let body = &text[text.find("\r\n\r\n").unwrap() + 4..];
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
    };
    let first = frame(&addr);
    let header: Vec<String> = first["screen"]["header"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["text"].as_str().unwrap().to_string())
        .collect();
    assert!(
        header.iter().any(|h| h.starts_with("REPLAY of ")),
        "{header:?}"
    );
    assert!(first["run"]["replay"]["last_secs"].as_f64().unwrap() > 0.0);
    assert!(!first["run"]["control"].as_bool().unwrap());
    // The host moves its cursor to the end: the viewers' frames follow it.
    keys(&host, "End");
    std::thread::sleep(Duration::from_millis(2500));
    let later = frame(&addr);
    assert_eq!(
        later["run"]["replay"]["at_secs"], later["run"]["replay"]["last_secs"],
        "{}",
        later["run"]
    );
    keys(&host, "q");
    wait_for(&host, "[exit 0]", Duration::from_secs(20));
}

#[test]
fn a_run_on_aws_asks_on_the_terminal_before_it_creates_anything() {
    // The stand-in account for `--aws`, reached through the SDK's `AWS_ENDPOINT_URL`.
    let (_emu, url) = common::emulate(&[]);
    let bin = env!("CARGO_BIN_EXE_latlab");
    let cmd = |answer: &str| {
        format!(
            "env XDG_CONFIG_HOME=/nonexistent-latlab-config AWS_ENDPOINT_URL={url} AWS_ACCESS_KEY_ID=AKIDTEST AWS_SECRET_ACCESS_KEY=secret AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true {bin} run demo --aws --duration 2s --quiet > /dev/null; echo \"[exit $? after {answer}]\"; sleep 120"
        )
    };
    // No: nothing is created.
    let s = Session::start(format!("latlab-ask-n-{}", std::process::id()), &cmd("n"));
    let screen = wait_for(&s, "[y/N]", Duration::from_secs(30));
    assert!(
        screen.contains("this run creates on AWS us-east-1: stream latlab-demo-latlab-"),
        "{screen}"
    );
    assert!(screen.contains("cost: $0.0453/h at list price"), "{screen}");
    keys(&s, "n");
    keys(&s, "Enter");
    let screen = wait_for(&s, "[exit 1 after n]", Duration::from_secs(30));
    assert!(screen.contains("not run: nothing was created"), "{screen}");
    drop(s);
    // The emulator's count of each operation it was asked for.
    let streams = |url: &str| {
        use std::io::{Read, Write};
        let addr = url.trim_start_matches("http://");
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        write!(c, "GET /_latlab/stats HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
        let mut text = String::new();
        c.read_to_string(&mut text).unwrap();
        text
    };
    assert!(!streams(&url).contains("CreateStream"), "{}", streams(&url));
    // Yes: the run goes on, and cleans up after itself.
    let s = Session::start(format!("latlab-ask-y-{}", std::process::id()), &cmd("y"));
    wait_for(&s, "[y/N]", Duration::from_secs(30));
    keys(&s, "y");
    keys(&s, "Enter");
    wait_for(&s, "[exit 0 after y]", Duration::from_secs(90));
    let stats = streams(&url);
    assert!(
        stats.contains("\"CreateStream\": 1") && stats.contains("\"DeleteStream\": 1"),
        "{stats}"
    );
}

/// A reading host in the TUI (`--no-producer`): its status line says the producer is on
/// another host, and when it quits its recording goes up with `--record-to`.
#[test]
fn a_reading_host_in_the_terminal_uploads_its_recording_when_it_quits() {
    let (_emu, url) = common::emulate(&[]);
    common::make_stream_and_bucket(&url, "shared", "runs");
    let bin = env!("CARGO_BIN_EXE_latlab");
    let cmd = format!(
        "env XDG_CONFIG_HOME=/nonexistent-latlab-config AWS_ACCESS_KEY_ID=AKIDTEST AWS_SECRET_ACCESS_KEY=secret AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true {bin} tui demo --endpoint-url {url} --stream shared --no-producer --record-to s3://runs/tui/ --host-name tuihost; echo \"[exit $?]\"; sleep 120"
    );
    let s = Session::start(format!("latlab-reader-{}", std::process::id()), &cmd);
    let screen = wait_for(
        &s,
        "producer on another host (--no-producer)",
        Duration::from_secs(60),
    );
    assert!(
        screen.contains("shared · 1 shard │ producer on another host · "),
        "the header asks for no rate of its own: {screen}"
    );
    keys(&s, "q");
    let screen = wait_for(&s, "[exit 0]", Duration::from_secs(60));
    assert!(
        screen.contains("uploaded the recording to s3://runs/tui/tuihost-"),
        "{screen}"
    );
}

/// The heads of the Kinesis tab's consumer table, each whole (a column that does not fit goes
/// whole; a clipped head such as `nread` or `rottled` is a defect).
const KINESIS_HEADS: [&str; 17] = [
    "consumer",
    "p50",
    "p90",
    "p99",
    "p99.9",
    "max",
    "acked",
    "received",
    "lost",
    "unread",
    "behind",
    "dup",
    "throttled",
    "retries",
    "escaped",
    "quota",
    "status",
];

/// The README's 60-second tour at 80x24, the smallest size latlab takes: after `+` twice every
/// poller has its row, the throttle gauge says OVER, and the table's heads are whole, with p50,
/// p99, throttled and escaped kept. Then `q` says what it waits for, and a second `q` ends it.
#[test]
fn the_readme_tour_at_80x24_shows_every_poller_and_the_throttling_columns() {
    let name = format!("latlab-80x24-{}", std::process::id());
    let bin = env!("CARGO_BIN_EXE_latlab");
    let cmd =
        format!("{bin} tui demo --limit consumer_activation=0s; echo \"[exit $?]\"; sleep 120");
    let s = Session::sized(name, &cmd, 80, 24);
    wait_for(&s, "GetRecords pollers", Duration::from_secs(30));
    keys(&s, "+");
    wait_for(&s, "added poller get_records 2", Duration::from_secs(10));
    keys(&s, "+");
    wait_for(&s, "added poller get_records 3", Duration::from_secs(10));
    let screen = wait_for(&s, "OVER", Duration::from_secs(30));
    for poller in ["get_records ", "get_records 2 ", "get_records 3 "] {
        assert!(
            screen.lines().any(|l| l.starts_with(&format!("│{poller}"))),
            "a row for {poller:?}:\n{screen}"
        );
    }
    let heads: Vec<&str> = screen
        .lines()
        .filter(|l| l.starts_with("│consumer"))
        .collect();
    assert_eq!(heads.len(), 4, "a table head in each pane:\n{screen}");
    for head in heads {
        let words: Vec<&str> = head.trim_matches('│').split_whitespace().collect();
        for w in &words {
            assert!(
                KINESIS_HEADS.contains(w),
                "{w:?} is a clipped head:\n{screen}"
            );
        }
        for kept in ["p50", "p99", "throttled", "escaped"] {
            assert!(words.contains(&kept), "{kept} kept: {head}");
        }
    }
    // The gauge is whole in its title: its mark, a cell past it, and OVER.
    assert!(
        screen.lines().any(|l| l.starts_with("┌ GetRecords pollers")
            && l.contains("│█")
            && l.contains(" OVER ")),
        "{screen}"
    );

    keys(&s, "q");
    let screen = wait_for(&s, "[exit 0]", Duration::from_secs(30));
    assert!(
        screen.contains("Kinesis"),
        "the summary after quitting:\n{screen}"
    );
}

/// `q` on a run whose consumer is far behind waits for the drain and says so; a second `q` ends
/// it at once, the records not drained counted unread in the summary (a second `q` waited too).
#[test]
fn a_second_q_cuts_a_long_drain_short() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/backlog.toml");
    let name = format!("latlab-drain-{}", std::process::id());
    let bin = env!("CARGO_BIN_EXE_latlab");
    let cmd = format!(
        "{bin} tui {} --limit consumer_activation=0s; echo \"[exit $?]\"; sleep 120",
        file.display()
    );
    let s = Session::sized(name, &cmd, 100, 30);
    wait_for(&s, "slow", Duration::from_secs(30));
    std::thread::sleep(Duration::from_secs(4));
    keys(&s, "q");
    let screen = wait_for(&s, "q again: stop now", Duration::from_secs(10));
    assert!(
        screen.contains("Kinesis: the producer has stopped; consumers are draining"),
        "{screen}"
    );
    std::thread::sleep(Duration::from_secs(1));
    let second = Instant::now();
    keys(&s, "q");
    wait_for(&s, "[exit 0]", Duration::from_secs(60));
    assert!(second.elapsed() < Duration::from_secs(60));
    // The whole summary, its scrolled-off lines too.
    let out = tmux(&s.0)
        .args(["capture-pane", "-p", "-S", "-3000", "-t", &s.0])
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&out.stdout);
    let row = screen
        .lines()
        .skip_while(|l| !(l.starts_with("consumer") && l.contains("acknowledged")))
        .find(|l| l.starts_with("slow "))
        .unwrap_or_else(|| panic!("the accounting row:\n{screen}"));
    let n: Vec<u64> = row
        .split_whitespace()
        .skip(1)
        .map(|w| w.replace(',', "").parse().unwrap_or(0))
        .collect();
    // acknowledged, received, lost, unread: the rest was counted unread, and it adds up.
    assert!(n[3] > 1_000, "{row}");
    assert_eq!(n[1] + n[2] + n[3], n[0], "{row}");
}

/// The tour's SQS tab at 80x24: a values row in each of its four panes (the fifo pane had none).
#[test]
fn the_tours_sqs_tab_at_80x24_has_a_values_row_in_every_pane() {
    common::require_redis_server();
    let name = format!("latlab-sqs80-{}", std::process::id());
    let bin = env!("CARGO_BIN_EXE_latlab");
    let cmd =
        format!("{bin} tui tour --limit consumer_activation=0s; echo \"[exit $?]\"; sleep 120");
    let s = Session::sized(name, &cmd, 80, 24);
    wait_for(&s, "4 SQS", Duration::from_secs(40));
    keys(&s, "4");
    let screen = wait_for(&s, "SQS lambda", Duration::from_secs(10));
    let lines: Vec<&str> = screen.lines().collect();
    for pane in ["long-poll", "short-poll", "fifo", "lambda"] {
        let top = lines
            .iter()
            .position(|l| l.starts_with(&format!("┌ SQS {pane} ")))
            .unwrap_or_else(|| panic!("the {pane} pane:\n{screen}"));
        let inside: Vec<&str> = lines[top + 1..]
            .iter()
            .take_while(|l| !l.starts_with('└'))
            .copied()
            .collect();
        assert!(
            inside.iter().any(|l| l.contains("sent")),
            "{pane}: its head:\n{screen}"
        );
        assert!(
            inside.iter().any(|l| l
                .trim_matches('│')
                .trim()
                .starts_with(|c: char| c.is_ascii_digit())),
            "{pane}: a values row:\n{screen}"
        );
    }
    keys(&s, "q");
    wait_for(&s, "[exit 0]", Duration::from_secs(60));
}

/// The DynamoDB lab in a terminal: the keys spread evenly, then `H` skews them towards one key,
/// and its partition is marked hot with the throttle's reason; `H` again spreads them.
#[test]
fn pressing_h_skews_the_dynamodb_keys_and_marks_the_hot_partition() {
    let name = format!("latlab-ddb-{}", std::process::id());
    let bin = env!("CARGO_BIN_EXE_latlab");
    let log = std::env::temp_dir().join(format!("{name}.log"));
    let dir = tempfile::tempdir().unwrap();
    // The demo's table and writer, without its scheduled skew: the key does it here.
    let scenario = dir.path().join("hot.toml");
    std::fs::write(
        &scenario,
        "name = \"hot\"\ndescription = \"the hot key, by hand\"\nduration = \"5m\"\nlatency_profile = \"zero\"\n\
         [dynamodb]\nmode = \"provisioned\"\nread_capacity = 3000\nwrite_capacity = 4000\n\
         item_size = \"4KiB\"\nrate = 400\nkeys = 100\nhot_share = 0.9\nreads = 10\n",
    )
    .unwrap();
    let cmd = format!(
        "{bin} tui {} --log {}; echo \"[exit $?]\"; sleep 120",
        scenario.display(),
        log.display()
    );
    let s = Session::sized(name, &cmd, 160, 44);
    let screen = wait_for(
        &s,
        "Partitions (5, latlab's model)",
        Duration::from_secs(30),
    );
    assert!(screen.contains("uniform over 100 keys"), "{screen}");
    // A few seconds of even writes: no partition is hot.
    std::thread::sleep(Duration::from_secs(3));
    let screen = capture(&s);
    assert!(screen.contains("no partition is hot"), "{screen}");
    keys(&s, "H");
    let screen = wait_for(&s, "DynamoDB keys skewed", Duration::from_secs(10));
    assert!(screen.contains("90% to key 'hot'"), "{screen}");
    // Once the hot partition's second of capacity is spent, it throttles.
    let screen = wait_for(
        &s,
        "throttled by reason: TableWriteKeyRangeThroughputExceeded",
        Duration::from_secs(20),
    );
    assert!(
        screen.contains("◀ HOT") && screen.contains(" HOT: "),
        "the hot partition marked: {screen}"
    );
    keys(&s, "H");
    wait_for(&s, "DynamoDB keys spread evenly", Duration::from_secs(10));
    keys(&s, "q");
    wait_for(&s, "[exit 0]", Duration::from_secs(60));
    let _ = std::fs::remove_file(&log);
}
