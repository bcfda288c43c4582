//! `latlab run` and `latlab scenarios` as a user meets them: the binary, its output and its errors,
//! against the embedded emulator and against another endpoint.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Kill, latlab, output, with_credentials};

#[test]
fn scenarios_are_listed_a_line_each() {
    let (ok, out, _) = output(latlab().arg("scenarios"));
    assert!(ok);
    // The built-in ones come first, under their heading (the checkout's scenarios/ follows).
    assert!(out.starts_with("built in:\n"), "{out}");
    let names: Vec<&str> = out
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "demo",
            "seed-kinesis-round1",
            "seed-kinesis-round2",
            "kinesis-kcl",
            "seed-s3",
            "s3-demo",
            "seed-redis",
            "redis-demo",
            "sqs-demo",
            "queue-or-stream",
            "dynamodb-demo",
            "dynamodb-cdc",
            "dynamodb-on-demand",
            "tour",
            "soak"
        ]
    );
    assert!(out.contains("three GetRecords pollers"));
    // Run in the checkout: its scenarios/ holds the built-in files themselves, not listed twice.
    assert!(
        out.ends_with(
            "\nin scenarios (from the current directory):\n  (and the files of 2 built-in scenarios, listed above)\n"
        ),
        "{out}"
    );
}

#[test]
fn bad_scenarios_and_flags_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "name = \"x\"\ndescription = \"d\"\nduration = \"10s\"\n[kinesis]\nstream = \"s\"\n\
         [kinesis.producer]\nrate = 5\npayload = \"128B\"\n[[kinesis.consumers]]\nkind = \"efo\"\nbatch_size = 10\n",
    )
    .unwrap();
    let (ok, _, err) = output(latlab().args(["run", bad.to_str().unwrap()]));
    assert!(!ok);
    assert_eq!(
        err.trim(),
        format!(
            "latlab: error: scenario file {}: line 9, kinesis.consumers[0]: batch_size does not apply to kind = \"efo\"; it applies to lambda-standard and lambda-efo",
            bad.display()
        )
    );
    let (ok, _, err) = output(latlab().args(["run", "seed-kinesis-round3"]));
    assert!(!ok);
    assert!(err.contains("unknown scenario 'seed-kinesis-round3': valid names are demo, seed-kinesis-round1, seed-kinesis-round2, kinesis-kcl, seed-s3, s3-demo, seed-redis, redis-demo, sqs-demo, queue-or-stream, dynamodb-demo, dynamodb-cdc, dynamodb-on-demand, tour, soak"), "{err}");
    let (ok, _, err) = output(latlab().args(["run", "demo", "--duration", "soon"]));
    assert!(!ok);
    assert!(err.contains("'soon' is not a duration"), "{err}");
    let (ok, _, err) = output(latlab().args(["run", "demo", "--format", "xml"]));
    assert!(!ok);
    assert!(
        err.contains("possible values: text, markdown, json, csv"),
        "{err}"
    );
    let (ok, _, err) =
        output(latlab().args(["run", "demo", "--output", "/nonexistent/dir/report.txt"]));
    assert!(!ok);
    assert!(
        err.contains("cannot write --output /nonexistent/dir/report.txt"),
        "{err}"
    );
    let (ok, _, err) = output(latlab().args(["run", "demo", "--endpoint-url", "ftp://example"]));
    assert!(!ok);
    assert!(err.contains("must start with http:// or https://"), "{err}");
    let (ok, _, err) = output(latlab().args([
        "run",
        "demo",
        "--endpoint-url",
        "http://127.0.0.1:9",
        "--latency-profile",
        "zero",
    ]));
    assert!(!ok);
    assert!(err.contains("shape the embedded emulator"), "{err}");
}

/// `--duration 300000000000y` overflowed the clock into a panic (exit 101): every duration and
/// size a user gives has a stated maximum and a one-line error past it.
#[test]
fn a_duration_past_a_year_is_refused_in_one_line_not_a_panic() {
    let (ok, _, err) = output(latlab().args(["run", "demo", "--duration", "300000000000y"]));
    assert!(!ok);
    assert!(
        !err.contains("panicked") && !err.contains("overflow"),
        "{err}"
    );
    assert!(
        err.contains(
            "'300000000000y' is longer than the longest duration latlab takes, 8760h (365 days)"
        ),
        "{err}"
    );
    let (ok, _, err) = output(latlab().args([
        "run",
        "demo",
        "--fault",
        "kinesis.stall:every=300000000000y,for=1s",
    ]));
    assert!(!ok);
    assert!(err.contains("longer than the longest duration"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let long = dir.path().join("long.toml");
    std::fs::write(
        &long,
        "name = \"x\"\ndescription = \"d\"\nduration = \"300000000000y\"\n[kinesis]\n\
         [[kinesis.consumers]]\nkind = \"efo\"\n",
    )
    .unwrap();
    let (ok, _, err) = output(latlab().args(["run", long.to_str().unwrap()]));
    assert!(!ok);
    assert!(err.contains("line 3"), "{err}");
    assert!(err.contains("longer than the longest duration"), "{err}");
    let big = dir.path().join("big.toml");
    std::fs::write(
        &big,
        "name = \"x\"\ndescription = \"d\"\nduration = \"10s\"\n[kinesis]\n\
         [kinesis.producer]\nrate = 5\npayload = \"9000000GB\"\n[[kinesis.consumers]]\nkind = \"efo\"\n",
    )
    .unwrap();
    let (ok, _, err) = output(latlab().args(["run", big.to_str().unwrap()]));
    assert!(!ok);
    assert!(err.contains("line 7"), "{err}");
    assert!(
        err.contains("larger than the largest size latlab takes, 1 TiB"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn a_run_writes_json_that_follows_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let (ok, stdout, err) = output(latlab().args([
        "run",
        "demo",
        "--duration",
        "3s",
        "--format",
        "json",
        "--quiet",
        "--limit",
        "consumer_activation=0s",
        "--output",
        out.to_str().unwrap(),
    ]));
    assert!(ok, "{err}");
    assert!(stdout.is_empty(), "the report went to the file");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    common::assert_follows_report_schema(&json);
    assert_eq!(json["scenario"]["name"], "demo");
    assert_eq!(json["snapshot"]["backend"]["kind"], "emulator");
    assert!(
        json["snapshot"]["kinesis"]["producer"]["acked"]
            .as_u64()
            .unwrap()
            >= 10
    );
}

/// `c` started with its output piped, killed if the test ends first.
fn started(c: &mut Command) -> Kill {
    Kill(
        c.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

/// SIGINT to `target`: a pid, or `-PGID` for a whole process group (as a terminal sends it).
fn interrupt(target: &str) {
    assert!(
        Command::new("kill")
            .args(["-INT", "--", target])
            .status()
            .unwrap()
            .success()
    );
}

/// What the started command printed, once it has ended.
fn ended(mut guard: Kill) -> std::process::Output {
    std::mem::replace(&mut guard.0, latlab().arg("--version").spawn().unwrap())
        .wait_with_output()
        .unwrap()
}

#[test]
fn ctrl_c_ends_the_run_early_and_still_prints_the_tables() {
    let guard = started(latlab().args([
        "run",
        "demo",
        "--duration",
        "10m",
        "--quiet",
        "--limit",
        "consumer_activation=0s",
    ]));
    std::thread::sleep(Duration::from_secs(6));
    interrupt(&guard.0.id().to_string());
    let out = ended(guard);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("(stopped early; 10m requested)"),
        "{stdout}"
    );
    assert!(stdout.contains("Kinesis: arrival -> receive"));
}

/// A terminal's Ctrl-C goes to the whole foreground process group: latlab's own redis-server
/// children must outlive it until latlab has deleted its keys (`could not delete latlab's keys
/// ... broken pipe` before).
#[test]
fn ctrl_c_in_a_terminal_on_a_redis_run_cleans_up_without_an_error() {
    common::require_redis_server();
    use std::os::unix::process::CommandExt;
    let guard = started(
        latlab()
            .args(["run", "redis-demo", "--duration", "2m", "--quiet"])
            // Its own group, as a shell's job: the signal below reaches every process in it.
            .process_group(0),
    );
    std::thread::sleep(Duration::from_secs(8));
    interrupt(&format!("-{}", guard.0.id()));
    let out = ended(guard);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("could not delete"), "{stderr}");
    assert!(!stdout.contains("could not delete"), "{stdout}");
    assert!(stdout.contains("(stopped early; 2m requested)"), "{stdout}");
}

/// A long drain (a slow consumer far behind, 2 minutes of drain allowed) is cut short by a
/// second Ctrl-C: the run ends at once and what was not drained is counted unread, every record
/// still accounted for (`q` waited 17 s with `consumers are draining`, a second `q` too).
#[test]
fn a_second_ctrl_c_ends_a_long_drain_at_once_and_counts_the_rest_unread() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/backlog.toml");
    let guard = started(latlab().args([
        "run",
        file.to_str().unwrap(),
        "--quiet",
        "--format",
        "json",
        "--limit",
        "consumer_activation=0s",
    ]));
    let pid = guard.0.id().to_string();
    std::thread::sleep(Duration::from_secs(6));
    interrupt(&pid);
    // Draining now: ten records a second against thousands behind.
    std::thread::sleep(Duration::from_secs(2));
    let second = Instant::now();
    interrupt(&pid);
    let out = ended(guard);
    let ended_in = second.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Not the two minutes of drain: cleanup and the report only (a bound, not a timing goal).
    assert!(ended_in < Duration::from_secs(60), "{ended_in:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let consumer = &report["snapshot"]["kinesis"]["consumers"][0];
    let c = &consumer["counts"];
    let n = |k: &str| c[k].as_u64().unwrap();
    assert!(n("unread") > 1_000, "{c}");
    assert_eq!(
        n("received") + n("lost") + n("unread"),
        n("acknowledged"),
        "{c}"
    );
    let acked = report["snapshot"]["kinesis"]["producer"]["acked"]
        .as_u64()
        .unwrap();
    assert_eq!(n("acknowledged"), acked);
}

/// `latlab emulate` on an ephemeral port, as the "other endpoint".
fn emulator() -> (common::Kill, String) {
    common::emulate(&[])
}

#[test]
fn another_endpoint_is_measured_and_left_as_found() {
    let (_emu, url) = emulator();
    let (ok, stdout, err) = output(with_credentials(&mut latlab()).args([
        "run",
        "demo",
        "--duration",
        "3s",
        "--quiet",
        "--endpoint-url",
        &url,
        "--region",
        "eu-west-1",
    ]));
    assert!(ok, "{err}");
    assert!(
        stdout.contains(&format!("backend  endpoint {url} (eu-west-1) (measured)")),
        "{stdout}"
    );
    assert!(
        stdout.contains("latlab-demo-latlab-"),
        "the stream latlab created carries the run id: {stdout}"
    );
    // Everything latlab created is gone again.
    let c = latlab::aws::emulator_kinesis_client(
        &url,
        aws_smithy_types::retry::RetryConfig::disabled(),
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let streams = rt.block_on(c.list_streams().send()).unwrap();
    assert!(
        streams.stream_names().is_empty(),
        "left behind: {:?}",
        streams.stream_names()
    );

    // An existing stream is used, and never deleted.
    rt.block_on(
        c.create_stream()
            .stream_name("theirs")
            .shard_count(1)
            .send(),
    )
    .unwrap();
    let (ok, stdout, err) = output(with_credentials(&mut latlab()).args([
        "run",
        "demo",
        "--duration",
        "2s",
        "--quiet",
        "--endpoint-url",
        &url,
        "--region",
        "eu-west-1",
        "--stream",
        "theirs",
    ]));
    assert!(ok, "{err}");
    assert!(stdout.contains("stream   theirs, 1 shard"), "{stdout}");
    let streams = rt.block_on(c.list_streams().send()).unwrap();
    assert_eq!(streams.stream_names(), ["theirs"]);
    let consumers = rt
        .block_on(
            c.list_stream_consumers()
                .stream_arn("arn:aws:kinesis:us-east-1:000000000000:stream/theirs")
                .send(),
        )
        .unwrap();
    assert!(
        consumers.consumers().is_empty(),
        "the consumers latlab registered are deregistered"
    );
}

#[test]
fn endpoint_errors_are_one_clear_line() {
    let (_emu, url) = emulator();
    let (ok, _, err) = output(with_credentials(&mut latlab()).args([
        "run",
        "demo",
        "--duration",
        "2s",
        "--quiet",
        "--endpoint-url",
        &url,
        "--region",
        "eu-west-1",
        "--stream",
        "nope",
    ]));
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "latlab: error: stream nope not found at {url}: ResourceNotFoundException: Stream nope under account"
        )),
        "{err}"
    );

    let (ok, _, err) = output(with_credentials(&mut latlab()).args([
        "run",
        "demo",
        "--duration",
        "2s",
        "--quiet",
        "--endpoint-url",
        "http://127.0.0.1:9",
        "--region",
        "eu-west-1",
    ]));
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("cannot create stream")
            && err.contains("at http://127.0.0.1:9: ")
            && err.contains("Connection refused"),
        "{err}"
    );
    assert!(
        !err.contains("DispatchFailure(") && !err.contains("ConnectorError {"),
        "the cause by its message, never the SDK's Debug: {err}"
    );

    // A service that denies everything, as real AWS does without the right IAM policy.
    let deny = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let deny_url = format!("http://{}", deny.local_addr().unwrap());
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in deny.incoming().take(8) {
            let Ok(mut s) = stream else { continue };
            let mut buf = [0u8; 65536];
            let _ = s.read(&mut buf);
            let body = r#"{"__type":"AccessDeniedException","message":"User: arn:aws:iam::123456789012:user/dev is not authorized to perform: kinesis:CreateStream"}"#;
            let _ = write!(
                s,
                "HTTP/1.1 400 Bad Request\r\nContent-Type: application/x-amz-json-1.1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let (ok, _, err) = output(with_credentials(&mut latlab()).args([
        "run",
        "demo",
        "--duration",
        "2s",
        "--quiet",
        "--endpoint-url",
        &deny_url,
        "--region",
        "eu-west-1",
    ]));
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("cannot create stream latlab-demo-latlab-"),
        "{err}"
    );
    assert!(err.contains(": AccessDeniedException: User: arn:aws:iam::123456789012:user/dev is not authorized to perform: kinesis:CreateStream"), "{err}");

    let home = tempfile::tempdir().unwrap();
    let (ok, _, err) = output(
        latlab()
            .args([
                "run",
                "demo",
                "--duration",
                "2s",
                "--quiet",
                "--endpoint-url",
                &url,
                "--region",
                "eu-west-1",
            ])
            .env_remove("AWS_ACCESS_KEY_ID")
            .env_remove("AWS_SECRET_ACCESS_KEY")
            .env_remove("AWS_PROFILE")
            .env("HOME", home.path())
            .env("AWS_CONFIG_FILE", home.path().join("none"))
            .env("AWS_SHARED_CREDENTIALS_FILE", home.path().join("none"))
            .env("AWS_EC2_METADATA_DISABLED", "true"),
    );
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no AWS credentials"), "{err}");
    assert!(
        !err.contains("Error(") && !err.contains("SdkBody"),
        "the cause by its message, never the SDK's Debug: {err}"
    );

    let (ok, _, err) = output(with_credentials(&mut latlab()).args([
        "run",
        "demo",
        "--duration",
        "2s",
        "--quiet",
        "--endpoint-url",
        &url,
        "--region",
        "Mars 1",
    ]));
    assert!(!ok);
    assert!(err.contains("'Mars 1' is not a region name"), "{err}");
}

#[test]
fn screenshot_writes_the_screen_as_svg_and_presses_keys_on_the_way() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s3.svg");
    let (ok, _, err) = output(latlab().args([
        "screenshot",
        "s3-demo",
        "--after",
        "4s",
        "--size",
        "120x40",
        "--theme",
        "light",
        "--press",
        "s",
        "--output",
        file.to_str().unwrap(),
    ]));
    assert!(ok, "{err}");
    assert!(err.contains(&format!("wrote {}", file.display())), "{err}");
    let svg = std::fs::read_to_string(&file).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(
        svg.contains("fill=\"#fafafa\""),
        "drawn in the light theme's background (themes/light.toml)"
    );
    // `s` was pressed half-way: the GET pane reads from Standard now, and the status line
    // confirms the switch.
    assert!(svg.contains("reading from STANDARD"), "{svg}");
    assert!(svg.contains("S3 storage class STANDARD"), "{svg}");

    let (ok, _, err) = output(latlab().args([
        "screenshot",
        "--press",
        "+q",
        "--output",
        file.to_str().unwrap(),
    ]));
    assert!(!ok);
    assert!(
        err.contains(
            "'q' is not a key --press can give: use any of + - * / < > e E x X b i a o [ ] s C v c m L w j J g G B V k K H M U D y Y d l 0 1 2 3 4 5 f r z Z t"
        ),
        "{err}"
    );
    let (ok, _, err) = output(latlab().args([
        "screenshot",
        "--size",
        "20x5",
        "--output",
        file.to_str().unwrap(),
    ]));
    assert!(!ok);
    assert!(
        err.contains("'20x5' is not a size: write COLSxROWS, e.g. 120x40 (at least 80x24)"),
        "{err}"
    );
}

/// An endpoint that lacks DescribeStreamConsumer: the fan-out consumers cannot learn that they
/// are ACTIVE, so they stop and say so at once instead of waiting; the pollers run.
#[test]
fn fan_out_consumers_stop_when_describe_stream_consumer_is_lacking() {
    let (ok, out, err) = output(latlab().args([
        "run",
        "demo",
        "--lacking",
        "DescribeStreamConsumer",
        "--duration",
        "4s",
        "--quiet",
    ]));
    assert!(ok, "{err}");
    for consumer in ["Lambda EFO", "SDK subscribe_to_shard"] {
        assert!(
            out.contains(&format!(
                "- {consumer}: not supported by this endpoint: DescribeStreamConsumer answered HTTP 500, not an AWS response"
            )),
            "{out}"
        );
    }
    assert!(
        out.lines().any(|l| l.starts_with("get_records ")),
        "the pollers measured: {out}"
    );
}

/// An endpoint that lacks SubscribeToShard (it answers an HTML 500, as a partial Kinesis server
/// does): the fan-out consumers are marked in one line within seconds, the pollers run and report
/// as usual, and no SDK debug output reaches the user.
#[test]
fn consumers_an_endpoint_cannot_serve_say_so_and_the_rest_run() {
    let started = std::time::Instant::now();
    let (ok, out, err) = output(latlab().args([
        "run",
        "demo",
        "--lacking",
        "SubscribeToShard",
        "--duration",
        "6s",
        "--quiet",
        "--limit",
        "consumer_activation=0s",
    ]));
    assert!(ok, "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the run did not wait for the missing operation: {:?}",
        started.elapsed()
    );
    assert!(
        out.contains("Kinesis: consumers this endpoint cannot serve"),
        "{out}"
    );
    for consumer in ["Lambda EFO", "SDK subscribe_to_shard"] {
        assert!(
            out.contains(&format!(
                "- {consumer}: not supported by this endpoint: SubscribeToShard answered HTTP 500, not an AWS response"
            )),
            "{out}"
        );
    }
    let received = |name: &str| -> u64 {
        let line = out
            .lines()
            .skip_while(|l| !l.starts_with("Kinesis: every record accounted for"))
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no accounting row for {name}: {out}"));
        line.split_whitespace()
            .rev()
            .nth(5)
            .unwrap()
            .replace(',', "")
            .parse()
            .unwrap()
    };
    assert!(received("get_records") > 0, "the pollers measured: {out}");
    for line in out.lines().chain(err.lines()) {
        assert!(
            line.chars().count() <= 300
                && !line.contains("SdkBody")
                && !line.contains("ResponseError {"),
            "no SDK debug output reaches the user: {line}"
        );
    }

    let (ok, _, err) = output(latlab().args(["run", "demo", "--lacking", "Subscribe"]));
    assert!(!ok);
    assert!(
        err.contains("--lacking Subscribe: not a Kinesis operation the emulator answers; valid: ")
            && err.contains("SubscribeToShard"),
        "{err}"
    );
}

#[test]
fn a_producer_the_endpoint_cannot_serve_stops_and_says_why() {
    let (ok, out, err) = output(latlab().args([
        "run",
        "demo",
        "--lacking",
        "PutRecord",
        "--duration",
        "5s",
        "--quiet",
        "--latency-profile",
        "zero",
    ]));
    assert!(ok, "{err}");
    assert!(
        out.contains(
            "producer stopped: not supported by this endpoint: PutRecord answered HTTP 500, not an AWS response"
        ),
        "{out}"
    );
    assert!(
        out.contains("short: the endpoint lacks the put operation"),
        "{out}"
    );
    // Nothing was stored, and every record is accounted for as such.
    assert!(out.contains(" 0 acknowledged"), "{out}");
    for line in out.lines().chain(err.lines()) {
        assert!(
            !line.contains("SdkBody") && !line.contains("ResponseError {"),
            "no SDK debug output reaches the user: {line}"
        );
    }
}

#[test]
fn s3_express_an_endpoint_cannot_serve_is_named_and_standard_is_measured() {
    let (ok, out, err) = output(latlab().args([
        "run",
        "s3-demo",
        "--lacking",
        "CreateSession",
        "--duration",
        "3s",
        "--quiet",
        "--latency-profile",
        "zero",
    ]));
    assert!(ok, "{err}");
    assert!(
        out.contains("S3 Express One Zone not measured: not supported by this endpoint: CreateSession answered HTTP 500, not an AWS response; Standard was"),
        "{out}"
    );
    let standard_puts = out
        .lines()
        .find(|l| l.starts_with("STANDARD  PUT"))
        .unwrap_or_else(|| panic!("Standard was measured: {out}"));
    let requests: u64 = standard_puts
        .split_whitespace()
        .nth(2)
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    assert!(requests > 0, "{standard_puts}");
    assert!(!out.contains("EXPRESS_ONEZONE  PUT"), "{out}");
    for line in out.lines().chain(err.lines()) {
        assert!(
            !line.contains("Error {") && !line.contains("SdkBody"),
            "no SDK debug output reaches the user: {line}"
        );
    }
    // The S3 matrix needs both classes: it says why it cannot run, in one line.
    let (ok, _, err) = output(latlab().args([
        "run",
        "seed-s3",
        "--quick",
        "--lacking",
        "CreateSession",
        "--quiet",
        "--latency-profile",
        "zero",
    ]));
    assert!(!ok);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("the S3 matrix compares Express One Zone with Standard, and S3 Express One Zone is not supported by this endpoint: CreateSession answered HTTP 500"),
        "{err}"
    );
}

/// A TCP proxy to `upstream` whose credentials "expire" `after` its first connection (so a slow
/// start on a loaded machine does not use the time up): from then on every connection is closed
/// and every request answered 400 ExpiredTokenException, as AWS answers a call signed with an
/// expired session token.
fn expiring_proxy(upstream: String, after: Duration) -> String {
    use std::io::{Read, Write};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let upstream = upstream.trim_start_matches("http://").to_string();
    let expired = Arc::new(AtomicBool::new(false));
    let flag = expired.clone();
    let mut timer = Some(move || {
        std::thread::spawn(move || {
            std::thread::sleep(after);
            flag.store(true, Ordering::SeqCst);
        });
    });
    std::thread::spawn(move || {
        for client in listener.incoming().take(2000) {
            let Ok(mut client) = client else { continue };
            if let Some(start) = timer.take() {
                start();
            }
            let expired = expired.clone();
            let upstream = upstream.clone();
            std::thread::spawn(move || {
                if expired.load(Ordering::SeqCst) {
                    let mut buf = [0u8; 65536];
                    let _ = client.set_read_timeout(Some(Duration::from_secs(5)));
                    let _ = client.read(&mut buf);
                    let body = r#"{"__type":"ExpiredTokenException","message":"The security token included in the request is expired"}"#;
                    let _ = write!(
                        client,
                        "HTTP/1.1 400 Bad Request\r\nContent-Type: application/x-amz-json-1.1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    return;
                }
                let Ok(server) = std::net::TcpStream::connect(&upstream) else {
                    return;
                };
                let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let up = std::thread::spawn(move || {
                    let _ = std::io::copy(&mut c2, &mut s2);
                });
                let (mut c3, mut s3) = (client, server);
                let watch = {
                    let (c, s) = (c3.try_clone().unwrap(), s3.try_clone().unwrap());
                    let expired = expired.clone();
                    std::thread::spawn(move || {
                        while !expired.load(Ordering::SeqCst) {
                            std::thread::sleep(Duration::from_millis(50));
                        }
                        let _ = c.shutdown(std::net::Shutdown::Both);
                        let _ = s.shutdown(std::net::Shutdown::Both);
                    })
                };
                let _ = std::io::copy(&mut s3, &mut c3);
                let _ = c3.shutdown(std::net::Shutdown::Both);
                let _ = up.join();
                drop(watch);
            });
        }
    });
    url
}

#[test]
fn credentials_that_expire_mid_run_are_one_line_and_redis_goes_on() {
    assert!(
        latlab::labs::redis::local::redis_server_binary().is_ok(),
        "redis-server is required for this test: install it (sudo apt-get install -y redis-server)"
    );
    let (_emu, url) = emulator();
    let proxy = expiring_proxy(url, Duration::from_secs(6));
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("expiry.toml");
    std::fs::write(
        &scenario,
        r#"
name = "expiry"
description = "Kinesis on an endpoint whose credentials expire, and Redis"
duration = "14s"

[kinesis]
stream = "latlab-expiry"
shards = 1
retry = { max_attempts = 2, initial_backoff = "100ms", max_backoff = "500ms" }

[kinesis.producer]
rate = 10
payload = "128B"

[[kinesis.consumers]]
kind = "poller"
name = "poller"
interval = "200ms"

[redis]
value = "1KB"
"#,
    )
    .unwrap();
    let json = dir.path().join("expiry.json");
    let (ok, _, err) = output(
        with_credentials(&mut latlab())
            .args(["run", "--quiet", "--format", "json", "-o"])
            .arg(&json)
            .args(["--endpoint-url", &proxy, "--region", "us-east-1"])
            .arg(&scenario),
    );
    assert!(ok, "{err}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let k = &report["snapshot"]["kinesis"];
    let expired = "ExpiredTokenException: The security token included in the request is expired";
    let producer = k["producer"]["last_error"].as_str().unwrap_or_default();
    assert_eq!(producer, format!("PutRecord: {expired}"));
    let poller = k["consumers"][0]["last_error"].as_str().unwrap_or_default();
    assert!(poller.ends_with(expired), "{poller}");
    // The records acknowledged before the expiry are all accounted for.
    let n = &k["consumers"][0]["counts"];
    let get = |f: &str| n[f].as_u64().unwrap();
    assert_eq!(
        get("received") + get("lost") + get("unread"),
        get("acknowledged")
    );
    assert!(get("acknowledged") > 0, "{n}");
    // Redis went on measuring: every method tried after the expiry too.
    for m in report["snapshot"]["redis"]["methods"].as_array().unwrap() {
        assert!(m["tries"].as_u64().unwrap() >= 20, "{m}");
    }
    // The text report says it in one line per part.
    let parsed: latlab::report::json::RunReport =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let text = latlab::report::Report::from(parsed).render(latlab::report::Format::Text);
    assert!(
        text.contains("poller: ")
            && text.contains(&format!(
                "calls failed after the SDK's retries; the last: {poller}"
            )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "producer: the last put that failed: PutRecord: {expired}"
        )),
        "{text}"
    );
}

#[test]
fn a_redis_that_cannot_be_reached_is_one_line_and_the_other_labs_run() {
    // A name that does not resolve, and a server that does not speak TLS to a rediss:// URL.
    let plain = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = plain.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for s in plain.incoming().take(8) {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 512];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"-ERR plain text\r\n");
        }
    });
    for (url, says) in [
        (
            "redis://no-such-host.invalid:6379".to_string(),
            "cannot connect to redis://no-such-host.invalid:6379: failed to lookup address information",
        ),
        (format!("rediss://127.0.0.1:{port}"), "over TLS: "),
    ] {
        let (ok, out, err) = output(latlab().args([
            "run",
            "tour",
            "--duration",
            "2s",
            "--quiet",
            "--latency-profile",
            "zero",
            "--redis-primary",
            &url,
            "--redis-replica",
            &url,
        ]));
        assert!(ok, "{err}");
        let line = out
            .lines()
            .skip_while(|l| *l != "Redis: not run")
            .nth(1)
            .unwrap_or_else(|| panic!("{out}"));
        assert!(line.contains(says), "{line}");
        assert!(out.contains("Kinesis: every record accounted for"), "{out}");
        assert!(
            out.contains("STANDARD  PUT") || out.contains("EXPRESS_ONEZONE  PUT"),
            "{out}"
        );
    }
}
