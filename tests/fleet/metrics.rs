//! `--metrics-addr` as a user meets it: a headless run's live figures scraped over plain TCP in
//! both text forms and checked by `promtool`, a real Prometheus server scraping the run and
//! answering a query about it, and a port in use refused in one line before anything starts.
//!
//! promtool and prometheus come from Debian's `prometheus` package (scripts/test and .ci/run
//! install it); a missing one fails the test with a message saying so.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0";
const EFO_COUNT: &str = "latlab_kinesis_arrival_to_receive_seconds_count{consumer=\"SDK subscribe_to_shard\",kind=\"efo\"}";

use common::latlab;

/// A child process killed when the test ends, however it ends.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `latlab run demo` with `--metrics-addr 127.0.0.1:0`: the process, the address it printed, and
/// the rest of its standard error.
struct Run {
    child: Guard,
    addr: String,
    stderr: Receiver<String>,
}

fn start_run(duration: &str) -> Run {
    let mut child = latlab()
        .args(["run", "demo", "--duration", duration, "--quiet"])
        .args(["--metrics-addr", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let child = Guard(child);
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("latlab printed no line on standard error within 30 s");
    let addr = line
        .strip_prefix("metrics: http://")
        .and_then(|l| l.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("the first line is not the metrics address: {line}"))
        .to_string();
    Run {
        child,
        addr,
        stderr: rx,
    }
}

impl Run {
    /// Waits (at most 90 s) for the run to end, successfully; its report.
    fn finish(mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(90);
        let status = loop {
            if let Some(s) = self.child.0.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "the run did not end in 90 s");
            std::thread::sleep(Duration::from_millis(200));
        };
        let mut report = String::new();
        self.child
            .0
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut report)
            .unwrap();
        let rest: Vec<String> = self.stderr.try_iter().collect();
        assert!(status.success(), "latlab failed: {}", rest.join("\n"));
        report
    }
}

/// One HTTP/1.1 exchange over a fresh connection: the status, the headers (lower-cased names)
/// and the body.
fn http(addr: &str, request: &[u8]) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    s.write_all(request).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {raw:?}"));
    (status, head.to_ascii_lowercase(), body.to_string())
}

fn get(addr: &str, path: &str, accept: Option<&str>) -> (u16, String, String) {
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    http(
        addr,
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n{accept}Connection: close\r\n\r\n")
            .as_bytes(),
    )
}

/// The figures, once the lab is up (503 until then; at most 60 s).
fn scrape(addr: &str, accept: Option<&str>) -> (String, String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, head, body) = get(addr, "/metrics", accept);
        match status {
            200 => return (head, body),
            503 if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(250)),
            _ => panic!("GET /metrics answered {status}: {body}"),
        }
    }
}

/// The value of the series written exactly as `series` (name and labels).
fn value(body: &str, series: &str) -> f64 {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no series {series} in:\n{body}"))
        .parse()
        .unwrap()
}

/// `promtool check metrics` on `text`: its exit status and everything it printed.
fn promtool_check(text: &str) -> (bool, String) {
    let mut c = common::prometheus_tool("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = c.wait_with_output().unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), said)
}

#[test]
fn a_headless_run_serves_its_live_figures_in_both_forms() {
    let run = start_run("20s");
    // Slow clients (one silent, one stopped half-way through its request) hold their own
    // connections only: every scrape below is answered while they stay open.
    let silent = TcpStream::connect(&run.addr).unwrap();
    let mut halfway = TcpStream::connect(&run.addr).unwrap();
    halfway
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nAcc")
        .unwrap();
    let (head, body) = scrape(&run.addr, None);
    assert!(
        head.contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    for family in [
        "# TYPE latlab_kinesis_arrival_to_receive_seconds histogram",
        "# TYPE latlab_kinesis_records_received_total counter",
        "# TYPE latlab_kinesis_records_lost_total counter",
        "# TYPE latlab_kinesis_records_duplicated_total counter",
        "# TYPE latlab_kinesis_producer_records_acknowledged_total counter",
        "# TYPE latlab_kinesis_producer_asked_records_per_second gauge",
        "# TYPE latlab_kinesis_producer_achieved_records_per_second gauge",
        "# TYPE latlab_sdk_throttles_total counter",
        "# TYPE latlab_sdk_retries_total counter",
    ] {
        assert!(body.contains(family), "no {family} in:\n{body}");
    }
    assert!(body.contains(
        "latlab_run_info{scenario=\"demo\",backend_kind=\"emulator\",backend=\"embedded emulator, latency profile seed-tokyo\"} 1"
    ));
    assert_eq!(
        value(&body, "latlab_kinesis_producer_asked_records_per_second"),
        5.0
    );

    // The fan-out consumer's histogram grows while the run goes on, the producer's achieved
    // rate (0 in its first second) rises above 0, and the consumer's received count (which
    // takes a record only once its put is acknowledged) too (at most 20 s).
    let first = value(&body, EFO_COUNT);
    let achieved = "latlab_kinesis_producer_achieved_records_per_second";
    let efo_received =
        "latlab_kinesis_records_received_total{consumer=\"SDK subscribe_to_shard\",kind=\"efo\"}";
    let deadline = Instant::now() + Duration::from_secs(20);
    let body = loop {
        let (_, body) = scrape(&run.addr, None);
        if value(&body, EFO_COUNT) > first
            && value(&body, achieved) > 0.0
            && value(&body, efo_received) > 0.0
        {
            break body;
        }
        assert!(
            Instant::now() < deadline,
            "{EFO_COUNT} stayed at {first}, or {achieved} or {efo_received} at 0"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    // Buckets are cumulative, +Inf holds every record, the mean is a plausible latency, and no
    // consumer has received more records than the producer had acknowledged.
    let efo = "latlab_kinesis_arrival_to_receive_seconds_bucket{consumer=\"SDK subscribe_to_shard\",kind=\"efo\",le=";
    let buckets: Vec<f64> = body
        .lines()
        .filter_map(|l| l.strip_prefix(efo))
        .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(buckets.len(), 18, "{body}");
    assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "{buckets:?}");
    let count = value(&body, EFO_COUNT);
    assert_eq!(buckets[17], count);
    let sum = value(
        &body,
        "latlab_kinesis_arrival_to_receive_seconds_sum{consumer=\"SDK subscribe_to_shard\",kind=\"efo\"}",
    );
    assert!(
        (0.001..10.0).contains(&(sum / count)),
        "mean {}",
        sum / count
    );
    let acked = value(&body, "latlab_kinesis_producer_records_acknowledged_total");
    let received = value(&body, efo_received);
    assert!(
        received <= acked,
        "received {received} of {acked} acknowledged"
    );
    let achieved = value(&body, achieved);
    assert!(achieved <= 10.0, "achieved {achieved}/s of 5 asked");

    let (ok, said) = promtool_check(&body);
    assert!(
        ok && said.is_empty(),
        "promtool check metrics: {said}\n{body}"
    );

    // OpenMetrics, when asked for: counters named as families without `_total`, samples with
    // it, and `# EOF` last.
    let (head, om) = scrape(&run.addr, Some(OPENMETRICS));
    assert!(
        head.contains(&format!("content-type: {OPENMETRICS}")),
        "{head}"
    );
    assert!(om.ends_with("\n# EOF\n"), "{om}");
    assert!(om.contains("# TYPE latlab_kinesis_records_received counter\n"));
    assert!(
        om.contains("\nlatlab_kinesis_records_received_total{consumer=\"SDK subscribe_to_shard\"")
    );
    assert!(
        !om.lines()
            .any(|l| l.starts_with("# TYPE") && l.ends_with("_total counter"))
    );
    // promtool reads OpenMetrics when it backfills: it parses every sample (stamped with a time,
    // which backfilling needs) or fails.
    let dir = tempfile::tempdir().unwrap();
    let stamped: String = om
        .lines()
        .map(|l| match l.starts_with('#') {
            true => format!("{l}\n"),
            false => format!("{l} 1700000000\n"),
        })
        .collect();
    std::fs::write(dir.path().join("om.txt"), stamped).unwrap();
    let out = common::prometheus_tool("promtool")
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(dir.path().join("om.txt"))
        .arg(dir.path().join("blocks"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "promtool could not parse the OpenMetrics form: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // `promtool check metrics` lints the text format only, where a counter's family is named as
    // its samples; named so, the OpenMetrics form's families pass its lint too.
    let counters: Vec<&str> = om
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let as_text: String = om
        .lines()
        .map(|l| {
            let mut words = l.splitn(4, ' ');
            match (words.next(), words.next(), words.next(), words.next()) {
                (Some("#"), Some(d @ ("HELP" | "TYPE")), Some(name), Some(rest))
                    if counters.contains(&name) =>
                {
                    format!("# {d} {name}_total {rest}\n")
                }
                _ => format!("{l}\n"),
            }
        })
        .collect();
    let (ok, said) = promtool_check(&as_text);
    assert!(
        ok && said.is_empty(),
        "promtool check metrics: {said}\n{as_text}"
    );

    // Anything else gets a line saying where the figures are, and bad requests break nothing.
    let (status, _, text) = get(&run.addr, "/", None);
    assert_eq!(
        (status, text.as_str()),
        (
            404,
            "not found: latlab serves its figures at GET /metrics\n"
        )
    );
    let (status, head, _) = http(
        &run.addr,
        b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 405);
    assert!(head.contains("allow: get, head"));
    let (status, _, _) = http(&run.addr, b"\x00\x01 nonsense \r\n\r\n");
    assert_eq!(status, 400);
    scrape(&run.addr, None);
    drop((silent, halfway));

    let report = run.finish();
    assert!(report.contains("SDK subscribe_to_shard"), "{report}");
}

/// A free port on 127.0.0.1 (free when this returns; Prometheus takes it a moment later).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A query's URL-encoded form.
fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Prometheus's HTTP API: the JSON answer to GET `path`, or None while it is not up.
fn api(addr: &str, path: &str) -> Option<serde_json::Value> {
    TcpStream::connect(addr).ok()?;
    let (status, _, body) = get(addr, path, None);
    (status == 200).then(|| serde_json::from_str(&body).unwrap())
}

#[test]
fn prometheus_scrapes_the_run_and_answers_a_query() {
    let run = start_run("25s");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: latlab\n    static_configs:\n      - targets: ['{}']\n",
            run.addr
        ),
    )
    .unwrap();
    let web = format!("127.0.0.1:{}", free_port());
    let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
    let prometheus = Guard(
        common::prometheus_tool("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={web}"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );

    // The fan-out consumer's records, read back from Prometheus (at most 45 s).
    let query = format!(
        "/api/v1/query?query={}",
        encode("latlab_kinesis_arrival_to_receive_seconds_count{kind=\"efo\"}")
    );
    let deadline = Instant::now() + Duration::from_secs(45);
    let result = loop {
        if let Some(answer) = api(&web, &query) {
            let result = answer["data"]["result"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let count = result
                .first()
                .and_then(|r| r["value"][1].as_str())
                .and_then(|v| v.parse::<f64>().ok());
            if count.is_some_and(|n| n > 0.0) {
                break result;
            }
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus did not answer with the series within 45 s; its log:\n{}",
            std::fs::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(result.len(), 1, "{result:?}");
    let labels = &result[0]["metric"];
    assert_eq!(labels["consumer"], "SDK subscribe_to_shard");
    assert_eq!(labels["job"], "latlab");
    assert_eq!(labels["instance"], run.addr.as_str());

    // The target is healthy, and Prometheus read the OpenMetrics form: its metadata names the
    // counter's family without `_total`, as only that form does.
    let targets = api(&web, "/api/v1/targets").unwrap();
    let target = &targets["data"]["activeTargets"][0];
    assert_eq!(target["health"], "up", "{target}");
    assert_eq!(target["lastError"], "", "{target}");
    let meta = api(
        &web,
        &format!(
            "/api/v1/targets/metadata?metric={}",
            encode("latlab_kinesis_records_received")
        ),
    )
    .unwrap();
    assert_eq!(meta["data"][0]["type"], "counter", "{meta}");
    let asked = api(
        &web,
        &format!(
            "/api/v1/query?query={}",
            encode("latlab_kinesis_producer_asked_records_per_second")
        ),
    )
    .unwrap();
    assert_eq!(asked["data"]["result"][0]["value"][1], "5", "{asked}");
    drop(prometheus);
    run.finish();
}

#[test]
fn a_port_in_use_is_one_line_and_nothing_starts() {
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = held.local_addr().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (record, report) = (dir.path().join("rec"), dir.path().join("report.txt"));
    let out = latlab()
        .args(["run", "demo", "--duration", "5s", "--metrics-addr"])
        .arg(addr.to_string())
        .arg("--record")
        .arg(&record)
        .arg("--output")
        .arg(&report)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "latlab: error: --metrics-addr {addr}: the port is in use; name another (e.g. --metrics-addr 127.0.0.1:{}) or stop what holds it\n",
            addr.port() + 1
        )
    );
    assert!(out.stdout.is_empty());
    assert!(
        !record.exists() && !report.exists(),
        "something was written"
    );

    let out = latlab()
        .args(["run", "demo", "--metrics-addr", "localhost"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("latlab: error: --metrics-addr localhost: not an address")
            && err.contains("give HOST:PORT (e.g. 127.0.0.1:9464), or a PORT alone")
            && err.lines().count() == 1,
        "{err}"
    );
    drop(held);
}
