//! Many hosts, one picture, on real network namespaces: an endpoint host runs `latlab emulate
//! --allow-remote` (and a real Prometheus); one host produces (`--producer-only`) and three read
//! (`--no-producer`), each serving `--metrics-addr` and uploading its recording with
//! `--record-to s3://` to the endpoint's S3. One reader is stopped with SIGTERM mid-run.
//!
//! Every address is one this test assigns inside namespaces it made (a bridge in the endpoint's
//! namespace, a veth to each host); nothing outside them is ever a target. The namespaces are
//! removed on success and on failure, and every wait is bounded.
//!
//! It needs root and network namespaces (`.ci/run` runs as root), `ip` (iproute2), Debian's
//! `prometheus`, and python3 with boto3: a missing one fails the test with a clear message.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SUBNET: &str = "10.231.0";
const ENDPOINT_IP: &str = "10.231.0.1";
const PORT: u16 = 4567;

/// The namespaces of one test, removed (with every process in them) when dropped.
struct Net {
    names: Vec<String>,
    children: Vec<Child>,
}

impl Drop for Net {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        for ns in &self.names {
            // Anything still running in it (a process a failed step left behind).
            if let Ok(out) = Command::new("ip").args(["netns", "pids", ns]).output() {
                for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                    let _ = Command::new("kill").args(["-9", pid]).status();
                }
            }
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().unwrap_or_else(|e| {
        panic!("`ip` (iproute2) is needed to make the test's network namespaces and could not be run: {e}")
    });
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

impl Net {
    /// The endpoint's namespace with a bridge, and one namespace per host joined to it by a
    /// veth; host `i` gets the address `SUBNET.(10 + i)`.
    fn make(hosts: &[&str]) -> Net {
        let tag = std::process::id();
        let mut net = Net {
            names: Vec::new(),
            children: Vec::new(),
        };
        let ep = format!("ll{tag}ep");
        let probe = Command::new("ip").args(["netns", "add", &ep]).output();
        match probe {
            Err(e) => panic!(
                "this test makes network namespaces with `ip netns` (iproute2), which could not be run: {e}; install iproute2"
            ),
            Ok(out) if !out.status.success() => panic!(
                "this test makes network namespaces and runs where that is allowed (as root, as .ci/run runs it); `ip netns add` said: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Ok(_) => {}
        }
        net.names.push(ep.clone());
        ip(&["-n", &ep, "link", "set", "lo", "up"]);
        ip(&["-n", &ep, "link", "add", "br0", "type", "bridge"]);
        ip(&[
            "-n",
            &ep,
            "addr",
            "add",
            &format!("{ENDPOINT_IP}/24"),
            "dev",
            "br0",
        ]);
        ip(&["-n", &ep, "link", "set", "br0", "up"]);
        for (i, h) in hosts.iter().enumerate() {
            let ns = format!("ll{tag}{h}");
            ip(&["netns", "add", &ns]);
            net.names.push(ns.clone());
            ip(&["-n", &ns, "link", "set", "lo", "up"]);
            let port = format!("v{i}");
            ip(&[
                "-n", &ep, "link", "add", &port, "type", "veth", "peer", "name", "eth0", "netns",
                &ns,
            ]);
            ip(&["-n", &ep, "link", "set", &port, "master", "br0"]);
            ip(&["-n", &ep, "link", "set", &port, "up"]);
            let addr = format!("{SUBNET}.{}/24", 10 + i);
            ip(&["-n", &ns, "addr", "add", &addr, "dev", "eth0"]);
            ip(&["-n", &ns, "link", "set", "eth0", "up"]);
        }
        net
    }

    fn ns(&self, host: &str) -> String {
        format!("ll{}{host}", std::process::id())
    }

    fn endpoint(&self) -> String {
        format!("ll{}ep", std::process::id())
    }
}

fn host_ip(i: usize) -> String {
    format!("{SUBNET}.{}", 10 + i)
}

/// python3 tests/python/fleet.py ARGS inside `ns`: its standard output, or what it said when it
/// failed.
fn try_fleet_py(ns: &str, args: &[&str]) -> Result<String, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/fleet.py");
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "python3"])
        .arg(&script)
        .args(args)
        .output()
        .expect("python3 runs");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "fleet.py {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// python3 tests/python/fleet.py ARGS inside `ns`: its standard output.
fn fleet_py(ns: &str, args: &[&str]) -> String {
    try_fleet_py(ns, args).unwrap_or_else(|e| panic!("{e}"))
}

/// Prometheus's answer to `expr` (a vector), asked inside the endpoint's namespace.
fn query(net: &Net, expr: &str) -> Vec<serde_json::Value> {
    let text = fleet_py(&net.endpoint(), &["query", "http://127.0.0.1:9090", expr]);
    serde_json::from_str::<Vec<serde_json::Value>>(text.trim()).expect("a vector")
}

/// Waits for `child` to end, at most `limit`; its exit status.
fn wait(child: &mut Child, what: &str, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        assert!(
            start.elapsed() < limit,
            "{what} did not end within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Which of the exporter's buckets (by index) a value in microseconds falls in.
fn bucket(us: u64) -> usize {
    latlab::metrics::exposition::BOUNDS
        .iter()
        .position(|(le, _)| us <= *le)
        .expect("the last bucket takes every value")
}

#[test]
fn hosts_split_by_role_add_up_through_s3_and_prometheus() {
    common::require_boto3();
    // The hosts are scraped by a real Prometheus: missing, the test says how to install it.
    common::prometheus_tool("prometheus");
    let hosts = ["prod", "r1", "r2", "r3"];
    let mut net = Net::make(&hosts);
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    let endpoint = format!("http://{ENDPOINT_IP}:{PORT}");

    // The endpoint host: the emulator for every host, then the stream and bucket they share.
    let emulator = common::latlab_in(&net.endpoint())
        .args([
            "emulate",
            "--allow-remote",
            "--listen",
            &format!("{ENDPOINT_IP}:{PORT}"),
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(work.join("emulate.err")).unwrap())
        .spawn()
        .expect("latlab emulate starts");
    net.children.push(emulator);
    let said = fleet_py(&net.endpoint(), &["setup", &endpoint, "fleet", "runs"]);
    assert!(said.contains("ready"), "{said}");

    // A real Prometheus in the endpoint's namespace: the deploy folder's config and rules, its
    // targets the four hosts, scraped every second.
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/prometheus");
    let config = read(&deploy.join("prometheus.yml"))
        .replace("scrape_interval: 5s", "scrape_interval: 1s")
        .replace("scrape_timeout: 4s", "scrape_timeout: 1s")
        .replace("evaluation_interval: 5s", "evaluation_interval: 1s")
        .replace(
            "- latlab-rules.yml",
            &format!("- {}", deploy.join("latlab-rules.yml").display()),
        );
    let targets: Vec<String> = (0..hosts.len())
        .map(|i| format!("          - {}:9464", host_ip(i)))
        .collect();
    let config = config
        .lines()
        .filter(|l| !l.trim_start().starts_with("- host"))
        .map(|l| {
            if l.trim_end().ends_with("- targets:") {
                format!("{l}\n{}", targets.join("\n"))
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(config.contains(&format!("{}:9464", host_ip(3))), "{config}");
    std::fs::write(work.join("prometheus.yml"), &config).unwrap();
    let prometheus = Command::new("ip")
        .args(["netns", "exec", &net.endpoint(), "prometheus"])
        .arg(format!(
            "--config.file={}",
            work.join("prometheus.yml").display()
        ))
        .arg(format!(
            "--storage.tsdb.path={}",
            work.join("tsdb").display()
        ))
        .arg("--web.listen-address=127.0.0.1:9090")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(work.join("prometheus.err")).unwrap())
        .spawn()
        .expect("prometheus starts");
    net.children.push(prometheus);
    // Prometheus answers once its storage is open and its listener up: a few seconds on a loaded
    // machine (scripts/test runs test binaries side by side).
    let start = Instant::now();
    while let Err(e) = try_fleet_py(
        &net.endpoint(),
        &["query", "http://127.0.0.1:9090", "vector(1)"],
    ) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "Prometheus did not answer within 60 s: {e}; it said: {}",
            read(&work.join("prometheus.err"))
        );
        std::thread::sleep(Duration::from_millis(250));
    }

    // A host of the fleet: `latlab run demo` in its namespace, its recording kept locally too.
    let run = |net: &Net, i: usize, role: &str, duration: &str| -> Child {
        let h = hosts[i];
        let mut c = common::latlab_in(&net.ns(h));
        common::with_credentials(&mut c);
        c.args([
            "run",
            "demo",
            role,
            "--stream",
            "fleet",
            "--endpoint-url",
            &endpoint,
        ])
        .args(["--duration", duration, "--quiet", "--format", "json"])
        .args(["--host-name", h, "--record-to", "s3://runs/fleet/"])
        .arg("--record")
        .arg(work.join(h))
        .arg("--output")
        .arg(work.join(format!("{h}.json")))
        .args(["--metrics-addr", &format!("{}:9464", host_ip(i))])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(work.join(format!("{h}.err"))).unwrap())
        .spawn()
        .expect("latlab run starts")
    };
    let mut readers: Vec<Child> = (1..hosts.len())
        .map(|i| run(&net, i, "--no-producer", "40s"))
        .collect();
    // The readers are up once Prometheus scrapes their consumers (a run serves its figures
    // once every consumer holds its position).
    let start = Instant::now();
    loop {
        let up = query(&net, "count(latlab_kinesis_records_received_total)");
        let n = up
            .first()
            .and_then(|v| v["value"][1].as_str())
            .and_then(|s| s.parse::<f64>().ok())
            .unwrap_or(0.0);
        if n >= 12.0 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the readers' consumers did not come up in Prometheus within 60 s ({n} of 12); r1 said: {}; Prometheus said: {}; its targets: {:?}",
            read(&work.join("r1.err")),
            read(&work.join("prometheus.err")),
            query(&net, "up")
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let mut producer = run(&net, 0, "--producer-only", "15s");
    std::thread::sleep(Duration::from_secs(7));
    // One reader stops mid-run (as a host shut down would): it uploads what it has.
    let killed = readers.pop().unwrap();
    let status = Command::new("kill")
        .args(["-TERM", &killed.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut killed = killed;
    wait(&mut killed, "the stopped reader", Duration::from_secs(60));
    let produced = wait(&mut producer, "the producer", Duration::from_secs(90));
    assert!(produced.success(), "{}", read(&work.join("prod.err")));
    for (n, r) in readers.iter_mut().enumerate() {
        let status = wait(r, "a reader", Duration::from_secs(90));
        assert!(
            status.success(),
            "{}",
            read(&work.join(format!("r{}.err", n + 1)))
        );
    }
    for h in hosts {
        let err = read(&work.join(format!("{h}.err")));
        assert!(
            err.contains("uploaded the recording to s3://runs/fleet/")
                && err.contains(&format!("/fleet/{h}-")),
            "{h}: {err}"
        );
    }

    // Every record the producer acknowledged reached each whole reader's every consumer.
    let prod: serde_json::Value = serde_json::from_str(&read(&work.join("prod.json"))).unwrap();
    let acked = prod["snapshot"]["kinesis"]["producer"]["acked"]
        .as_u64()
        .unwrap();
    assert!(acked >= 60, "the producer ran: {acked}");
    let prod_run =
        serde_json::from_str::<serde_json::Value>(&read(&work.join("prod/recording.json")))
            .unwrap()["run_id"]
            .as_str()
            .unwrap()
            .to_string();
    for h in ["r1", "r2"] {
        let r: serde_json::Value =
            serde_json::from_str(&read(&work.join(format!("{h}.json")))).unwrap();
        common::assert_follows_report_schema(&r);
        let k = &r["snapshot"]["kinesis"];
        assert!(
            k["producer"]["elsewhere"].is_string(),
            "{h}: {}",
            k["producer"]
        );
        for c in k["consumers"].as_array().unwrap() {
            let runs = c["foreign_runs"].as_array().unwrap();
            assert_eq!(runs.len(), 1, "{h} {}: {runs:?}", c["name"]);
            assert_eq!(runs[0]["run"], prod_run.as_str());
            assert_eq!(
                runs[0]["received"].as_u64(),
                Some(acked),
                "{h} {}",
                c["name"]
            );
            assert_eq!(
                c["foreign_records"].as_u64().unwrap(),
                acked + runs[0]["duplicates"].as_u64().unwrap()
            );
        }
    }

    // The merge of the bucket's recordings is the merge of the local copies.
    let merge = |inputs: &[PathBuf], out: &Path, ns: Option<&str>| -> String {
        let mut c = match ns {
            Some(ns) => common::latlab_in(ns),
            None => common::latlab(),
        };
        common::with_credentials(&mut c);
        c.arg("merge").args(inputs).arg("-o").arg(out);
        if ns.is_some() {
            c.args(["--endpoint-url", &endpoint]);
        }
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "latlab merge: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let from_s3 = merge(
        &[PathBuf::from("s3://runs/fleet/")],
        &work.join("merged-s3"),
        Some(&net.ns("r1")),
    );
    let locals: Vec<PathBuf> = hosts.iter().map(|h| work.join(h)).collect();
    let from_disk = merge(&locals, &work.join("merged-local"), None);
    let body = |s: &str| s.lines().skip(1).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        body(&from_s3),
        body(&from_disk),
        "{from_s3}\n---\n{from_disk}"
    );
    assert!(from_s3.starts_with("merged 4 recordings"), "{from_s3}");
    let logs = |d: &Path| {
        let mut v: Vec<(String, String)> = std::fs::read_dir(d.join("hlog"))
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    read(&e.path()),
                )
            })
            .collect();
        v.sort();
        v
    };
    let s3_logs = logs(&work.join("merged-s3"));
    assert_eq!(s3_logs.len(), 4, "a series per consumer");
    assert_eq!(s3_logs, logs(&work.join("merged-local")));
    // It sets the producer's records beside every host's consumers, and names the host that
    // ended early; the whole readers' figures are whole.
    assert!(
        from_s3.contains(&format!(
            "records of prod's producer (run {prod_run}): {acked} acknowledged"
        )),
        "{from_s3}"
    );
    for h in ["r1", "r2"] {
        let whole = from_s3
            .lines()
            .filter(|l| {
                l.trim_start().starts_with(&format!("{h} "))
                    && l.ends_with(&format!("{acked} received, every one"))
            })
            .count();
        assert_eq!(
            whole, 4,
            "{h}'s four consumers received every record: {from_s3}"
        );
    }
    assert!(
        from_s3
            .lines()
            .any(|l| l.starts_with("warning: r3 ended early: stopped after")),
        "{from_s3}"
    );
    assert!(
        from_s3.lines().any(|l| l.starts_with("warning:   r3 ")
            && l.contains("not (lost, or unread when it ended)")),
        "{from_s3}"
    );
    assert!(
        from_s3.contains("clocks (least send -> arrival"),
        "{from_s3}"
    );
    eprintln!("{from_s3}");

    // `latlab compare` reads a prefix (merging its recordings) and one host's folder alike.
    let r1_folder = format!(
        "s3://runs/fleet/r1-{}/",
        serde_json::from_str::<serde_json::Value>(&read(&work.join("r1/recording.json"))).unwrap()
            ["run_id"]
            .as_str()
            .unwrap()
    );
    let mut c = common::latlab_in(&net.ns("r2"));
    common::with_credentials(&mut c);
    let compared = c
        .args([
            "compare",
            "s3://runs/fleet/",
            &r1_folder,
            "--format",
            "json",
        ])
        .args(["--endpoint-url", &endpoint])
        .output()
        .unwrap();
    assert!(
        compared.status.success(),
        "{}",
        String::from_utf8_lossy(&compared.stderr)
    );
    let compared: serde_json::Value = serde_json::from_slice(&compared.stdout).unwrap();
    let text = compared.to_string();
    assert!(
        text.contains("\"s3://runs/fleet/\"") && text.contains(&r1_folder),
        "each input is named by its URL: {text}"
    );

    // Prometheus's fleet p99 per consumer, from every host's summed buckets (their last
    // values: the stopped reader's too), agrees with the merged recording's within a bucket.
    let merged = latlab::compare::Input::read(&work.join("merged-local")).unwrap();
    let fleet = query(
        &net,
        "histogram_quantile(0.99, sum by (le, consumer) (last_over_time(latlab_kinesis_arrival_to_receive_seconds_bucket[10m])))",
    );
    assert_eq!(fleet.len(), 4, "{fleet:?}");
    for v in &fleet {
        let consumer = v["metric"]["consumer"].as_str().unwrap();
        let prom_us = (v["value"][1].as_str().unwrap().parse::<f64>().unwrap() * 1e6) as u64;
        let series = merged
            .series
            .values()
            .find(|s| s.name == format!("kinesis.{consumer}.arrival_to_receive"))
            .unwrap_or_else(|| panic!("{consumer} in the merge"));
        let merged_us = series.figures.p99;
        eprintln!(
            "{consumer}: Prometheus fleet p99 {prom_us} us, merged recording p99 {merged_us} us"
        );
        assert!(
            bucket(prom_us).abs_diff(bucket(merged_us)) <= 1,
            "{consumer}: Prometheus says {prom_us} us, the merge {merged_us} us"
        );
    }
    // The deploy folder's recording rule gave a fleet p99 for every consumer while it ran.
    let rule = query(
        &net,
        "max_over_time(latlab:kinesis_arrival_to_receive_seconds:p99_1m[10m])",
    );
    assert_eq!(rule.len(), 4, "{rule:?}");
}
