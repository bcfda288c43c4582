//! `--share`: the raw stream as a viewer reads it, over real HTTP from a real `latlab run`:
//! the first event is a full frame, later frames carry the host's figures, `Last-Event-ID`
//! resumes, a viewer that fell behind gets a full frame, the token is needed (and never
//! recorded), the viewers' cap holds, and control is refused without `--share-control` or from
//! another origin, and applied with it.

use crate::common;

use common::host::Host;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

/// A response: its status, headers (lower-case names) and, for a stream, the reader positioned
/// at its body.
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Body,
}

/// A body as it arrives, chunked or not.
struct Body {
    reader: BufReader<TcpStream>,
    chunked: bool,
    left: usize,
    buf: String,
}

impl Body {
    /// The next bytes of the body (empty: it ended).
    fn more(&mut self) -> Vec<u8> {
        if !self.chunked {
            let mut b = vec![0; 8192];
            let n = self.reader.read(&mut b).unwrap_or(0);
            b.truncate(n);
            return b;
        }
        if self.left == 0 {
            let mut size = String::new();
            if self.reader.read_line(&mut size).unwrap_or(0) == 0 {
                return Vec::new();
            }
            if size.trim().is_empty() {
                size.clear();
                self.reader.read_line(&mut size).unwrap_or(0);
            }
            self.left = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if self.left == 0 {
                return Vec::new();
            }
        }
        let mut b = vec![0; self.left.min(65536)];
        let n = self.reader.read(&mut b).unwrap_or(0);
        b.truncate(n);
        self.left -= n;
        if n == 0 {
            self.left = 0;
        }
        b
    }

    /// The whole body, for a short answer.
    fn text(&mut self) -> String {
        let mut all = Vec::new();
        loop {
            let b = self.more();
            if b.is_empty() {
                break;
            }
            all.extend(b);
        }
        String::from_utf8_lossy(&all).into_owned()
    }

    /// The next server-sent event: (id, event name, data), skipping comments; None at the end.
    fn event(&mut self) -> Option<(u64, String, String)> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let (mut id, mut name, mut data) = (0, String::new(), String::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        id = v.parse().unwrap();
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        name = v.to_string();
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data.push_str(v);
                    }
                }
                if !name.is_empty() {
                    return Some((id, name, data));
                }
                continue;
            }
            let b = self.more();
            if b.is_empty() {
                return None;
            }
            self.buf.push_str(&String::from_utf8_lossy(&b));
        }
    }
}

/// One request over a new connection; `rcvbuf`: the client's receive buffer, when it is to be
/// small (a viewer that falls behind).
fn request(addr: &str, head: &str, body: &str, rcvbuf: Option<usize>) -> Response {
    let sock = match rcvbuf {
        Some(n) => {
            let s =
                socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
            s.set_recv_buffer_size(n).unwrap();
            let a: std::net::SocketAddr = addr.parse().unwrap();
            s.connect(&a.into()).unwrap();
            TcpStream::from(s)
        }
        None => TcpStream::connect(addr).unwrap(),
    };
    sock.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut w = sock.try_clone().unwrap();
    write!(
        w,
        "{head}\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reader = BufReader::new(sock);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).unwrap();
    let status: u16 = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        let mut l = String::new();
        reader.read_line(&mut l).unwrap();
        let l = l.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':').unwrap();
        headers.push((k.to_lowercase(), v.trim().to_string()));
    }
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    Response {
        status,
        headers,
        body: Body {
            reader,
            chunked,
            left: 0,
            buf: String::new(),
        },
    }
}

fn get(host: &Host, path_and_query: &str, extra: &str) -> Response {
    let head = format!("GET {path_and_query} HTTP/1.1{extra}");
    request(&host.addr, &head, "", None)
}

fn events(host: &Host, extra: &str) -> Response {
    get(host, &format!("/events?token={}", host.token), extra)
}

fn frame_schema() -> jsonschema::Validator {
    let report: Value =
        serde_json::from_str(include_str!("../../schemas/run-report.schema.json")).unwrap();
    let frame: Value =
        serde_json::from_str(include_str!("../../schemas/frame.schema.json")).unwrap();
    let registry = jsonschema::Registry::new()
        .add("https://latlab.dev/schemas/run-report.schema.json", report)
        .unwrap()
        .prepare()
        .unwrap();
    jsonschema::options()
        .with_registry(&registry)
        .build(&frame)
        .unwrap()
}

fn assert_follows_frame_schema(schema: &jsonschema::Validator, v: &Value) {
    let errors: Vec<String> = schema
        .iter_errors(v)
        .take(10)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the frame follows its schema: {errors:?}"
    );
}

/// The p99 the Kinesis pane's table shows for `consumer`, as text.
fn shown_p99(frame: &Value, consumer: &str) -> Option<String> {
    let tab = frame["screen"]["tabs"]
        .as_array()?
        .iter()
        .find(|t| t["lab"] == "kinesis")?;
    for (_, block) in tab["view"]["blocks"].as_array()?.iter().filter_map(|b| {
        let b = b.as_array()?;
        Some((b[0].clone(), b[1].clone()))
    }) {
        let Some(parts) = block["block"]["parts"].as_array() else {
            continue;
        };
        for part in parts {
            let p = &part[1];
            if p["type"] != "table" {
                continue;
            }
            let t = &p["part"];
            let heads: Vec<&str> = t["columns"]
                .as_array()?
                .iter()
                .filter_map(|c| c["head"].as_str())
                .collect();
            let (Some(name), Some(p99)) = (
                heads.iter().position(|h| *h == "consumer"),
                heads.iter().position(|h| *h == "p99"),
            ) else {
                continue;
            };
            for row in t["rows"].as_array()? {
                if row[name]["text"] == consumer {
                    return row[p99]["text"].as_str().map(str::to_string);
                }
            }
        }
    }
    None
}

#[test]
fn a_viewer_reads_full_then_tick_frames_with_the_hosts_figures_and_resumes_where_it_left() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    let token = "pairing-token-0123";
    let host = Host::start(&[
        "run",
        "demo",
        "--duration",
        "12s",
        "--quiet",
        "--format",
        "json",
        "--record",
        rec.to_str().unwrap(),
        "--share",
        "--share-token",
        token,
        "--share-viewers",
        "2",
    ]);
    assert_eq!(host.token, token, "the token given is the URL's");
    let schema = frame_schema();

    // The token is needed: missing, wrong, or as a bearer token.
    for (path, extra, want) in [
        ("/events", "", 401),
        ("/events?token=wrong-token-000", "", 401),
        ("/", "", 401),
        (
            "/frame",
            &*format!("\r\nAuthorization: Bearer {token}"),
            200,
        ),
        (&*format!("/?token={token}"), "", 200),
    ] {
        let mut r = get(&host, path, extra);
        let body = r.body.text();
        assert_eq!(r.status, want, "{path} {extra:?}: {body}");
        if want == 401 {
            assert!(body.contains("this share needs its token"), "{body}");
            assert!(!body.contains(token), "a refusal never says the token");
        }
    }

    // The first event is a full frame; the next are ticks, a second apart.
    let mut first = events(&host, "");
    assert_eq!(first.status, 200);
    assert!(
        first
            .headers
            .iter()
            .any(|(k, v)| k == "content-type" && v.starts_with("text/event-stream"))
    );
    let (id0, name, data) = first.body.event().expect("a first event");
    assert_eq!(name, "frame");
    let full: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(full["kind"], "full");
    assert_eq!(full["format"], "latlab-frame/1");
    assert_eq!(full["id"], id0);
    assert!(full["viewer"].as_u64().unwrap() >= 1);
    assert_follows_frame_schema(&schema, &full);
    assert_eq!(full["run"]["scenario"], "demo");
    assert!(!full["run"]["control"].as_bool().unwrap());
    // The full frame carries the sparklines' history: every second up to its last whole one.
    let upto = full["points"]["upto"]["kinesis"].as_u64().unwrap();
    let series = full["points"]["kinesis"].as_object().unwrap();
    assert!(!series.is_empty(), "the consumers' series");
    for (name, pts) in series {
        let seconds: Vec<u64> = pts
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p[0].as_u64().unwrap())
            .collect();
        assert_eq!(seconds.last(), Some(&upto), "{name}");
        assert!(
            seconds.windows(2).all(|w| w[0] < w[1]),
            "{name}: {seconds:?}"
        );
    }
    let mut ticks = Vec::new();
    while ticks.len() < 3 {
        let (id, name, data) = first.body.event().expect("ticks follow");
        assert_eq!(name, "frame");
        let t: Value = serde_json::from_str(&data).unwrap();
        assert_eq!(t["kind"], "tick");
        assert_eq!(id, id0 + 1 + ticks.len() as u64, "ids follow one another");
        assert_follows_frame_schema(&schema, &t);
        ticks.push(t);
    }
    // Each tick's screen shows the figures of its own snapshot: the p99 in the Kinesis table is
    // the snapshot's, as the TUI writes it.
    let t = &ticks[2];
    let consumer = &t["snapshot"]["kinesis"]["consumers"][0];
    let name = consumer["name"].as_str().unwrap();
    let p99_us = consumer["arrival_to_receive"]["p99_us"].as_u64().unwrap();
    assert!(p99_us > 0, "a measured p99 by the third tick");
    assert_eq!(
        shown_p99(t, name).as_deref(),
        Some(latlab_core::units::ms(p99_us).as_str()),
        "the pane's p99 for {name}"
    );
    assert!(t["at_secs"].as_f64().unwrap() > ticks[0]["at_secs"].as_f64().unwrap());
    assert_eq!(t["run"]["viewers"], 1);

    // The cap: this share takes two viewers.
    let second = events(&host, "");
    assert_eq!(second.status, 200);
    let mut third = events(&host, "");
    assert_eq!(third.status, 503);
    let says = third.body.text();
    assert!(says.contains("its 2 viewers already"), "{says}");
    drop(second);

    // Resuming: a viewer that saw event K gets K+1 and on, not a full frame.
    let last_seen = id0 + 2;
    drop(first);
    // The share finds a closed stream at its next write (within a tick): its seat is free then.
    std::thread::sleep(Duration::from_millis(1500));
    let mut resumed = events(&host, &format!("\r\nLast-Event-ID: {last_seen}"));
    let (id, _, data) = resumed.body.event().unwrap();
    let v: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(id, last_seen + 1, "it resumes after the last event seen");
    assert_eq!(v["kind"], "tick");
    // An id the share no longer keeps (or never had) gets a full frame.
    let mut stale = events(&host, "\r\nLast-Event-ID: 999999");
    let (_, _, data) = stale.body.event().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&data).unwrap()["kind"],
        "full"
    );
    drop(stale);

    // Read-only: a key is refused.
    let r = request(
        &host.addr,
        &format!("POST /keys?token={token} HTTP/1.1\r\nContent-Type: application/json"),
        r#"{"key":"+"}"#,
        None,
    );
    assert_eq!(r.status, 403);

    // The run ends: its last event says so, and the stream closes.
    let mut last_frame = None;
    let ended = loop {
        match resumed.body.event() {
            Some((_, name, data)) if name == "frame" => last_frame = Some(data),
            Some((_, name, data)) if name == "end" => break data,
            Some(_) => {}
            None => panic!("the stream closed without its end event"),
        }
    };
    let ended: Value = serde_json::from_str(&ended).unwrap();
    assert_follows_frame_schema(&schema, &ended);
    assert_eq!(ended["text"], "the run ended: completed");
    assert!(resumed.body.event().is_none(), "nothing after the end");
    let (report, stderr) = {
        let mut host = host;
        host.finish()
    };
    // The last frame is the run's end: its counts are the report's.
    let last: Value = serde_json::from_str(&last_frame.unwrap()).unwrap();
    for (i, c) in report["snapshot"]["kinesis"]["consumers"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        assert_eq!(
            last["snapshot"]["kinesis"]["consumers"][i]["counts"], c["counts"],
            "{}",
            c["name"]
        );
    }
    common::assert_every_record_counted(
        &report,
        report["snapshot"]["kinesis"]["producer"]["acked"]
            .as_u64()
            .unwrap(),
    );
    // The token is in the share line only: never in the recording.
    assert!(!stderr.contains(token), "{stderr}");
    for entry in walk(&rec) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(token),
            "{} holds the token",
            entry.display()
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_viewer_that_stops_reading_misses_frames_and_then_gets_a_full_one() {
    let host = Host::start(&[
        "run",
        "tour",
        "--duration",
        "40s",
        "--quiet",
        "--format",
        "json",
        "--share",
    ]);
    // A small receive buffer: the frames it does not read back up to the share quickly.
    let mut slow = request(
        &host.addr,
        &format!("GET /events?token={} HTTP/1.1", host.token),
        "",
        Some(4096),
    );
    let (_, _, data) = slow.body.event().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&data).unwrap()["kind"],
        "full"
    );
    // Another viewer reads on, in its own thread, undisturbed.
    let mut brisk = events(&host, "");
    let (brisk_first, _, _) = brisk.body.event().unwrap();
    let reader = std::thread::spawn(move || {
        let mut ids = Vec::new();
        while ids.len() < 20 {
            let (id, name, _) = brisk.body.event().unwrap();
            assert_eq!(name, "frame");
            ids.push(id);
        }
        ids
    });
    std::thread::sleep(Duration::from_secs(25));
    // What the brisk viewer was sent while the slow one slept: every tick, in order.
    let brisk_ids = reader.join().unwrap();
    assert!(
        brisk_ids.windows(2).all(|w| w[1] == w[0] + 1) && brisk_ids[0] == brisk_first + 1,
        "{brisk_ids:?}"
    );
    let mut kinds = Vec::new();
    let mut dropped = 0;
    while kinds.len() < 40 {
        let Some((_, name, data)) = slow.body.event() else {
            break;
        };
        if name != "frame" {
            break;
        }
        let v: Value = serde_json::from_str(&data).unwrap();
        dropped = v["run"]["dropped"].as_u64().unwrap();
        kinds.push(v["kind"].as_str().unwrap().to_string());
        if v["kind"] == "full" {
            break;
        }
    }
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("full"),
        "the viewer that fell behind gets a full frame: {kinds:?}"
    );
    assert!(dropped > 0, "the frames it missed are counted");
    drop(slow);
    let (report, _) = {
        let mut host = host;
        host.finish()
    };
    assert_eq!(report["ending"], "completed");
}

#[test]
fn with_control_a_viewers_key_changes_the_run_and_is_recorded_with_who_sent_it() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    let host = Host::start(&[
        "run",
        "demo",
        "--duration",
        "10s",
        "--quiet",
        "--format",
        "json",
        "--record",
        rec.to_str().unwrap(),
        "--share",
        "--share-control",
    ]);
    let mut stream = events(&host, "");
    let (_, _, data) = stream.body.event().unwrap();
    let full: Value = serde_json::from_str(&data).unwrap();
    assert!(full["run"]["control"].as_bool().unwrap());
    let pollers = |v: &Value| {
        v["snapshot"]["kinesis"]["consumers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == "poller" && c["stopped_at_secs"].is_null())
            .count()
    };
    let before = pollers(&full);
    let post = |origin: Option<&str>, body: &str| {
        let origin = origin.map_or_else(String::new, |o| format!("\r\nOrigin: {o}"));
        request(
            &host.addr,
            &format!(
                "POST /keys?token={} HTTP/1.1\r\nContent-Type: application/json{origin}",
                host.token
            ),
            body,
            None,
        )
    };
    // Another site's page may not send keys.
    let mut r = post(Some("http://evil.example"), r#"{"key":"+"}"#);
    assert_eq!(r.status, 403);
    assert!(r.body.text().contains("Origin http://evil.example"));
    // A key that changes nothing of the experiment is refused, saying why.
    let mut r = post(None, r#"{"key":"z","viewer":1}"#);
    assert_eq!(r.status, 422);
    assert!(r.body.text().contains("does not change the experiment"));
    let mut r = post(None, r#"{"key":"++"}"#);
    assert_eq!(r.status, 400);
    assert!(r.body.text().contains("one character"));
    // From the page's own origin, + adds a poller.
    let origin = format!("http://{}", host.addr);
    let viewer = full["viewer"].as_u64().unwrap();
    let mut r = post(
        Some(&origin),
        &format!(r#"{{"key":"+","viewer":{viewer},"tab":"kinesis"}}"#),
    );
    let answer = r.body.text();
    assert_eq!(r.status, 200, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert!(answer["ok"].as_bool().unwrap());
    // The host's next frames show it.
    let mut after = before;
    for _ in 0..5 {
        let (_, name, data) = stream.body.event().unwrap();
        assert_eq!(name, "frame");
        after = pollers(&serde_json::from_str(&data).unwrap());
        if after > before {
            break;
        }
    }
    assert_eq!(after, before + 1, "the viewer's + added a poller");
    // A fault from the menu's list, by name, as the page's buttons send it.
    let fault = full["screen"]["faults"][0]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let mut r = post(None, &format!(r#"{{"fault":"{fault}","viewer":{viewer}}}"#));
    let said = r.body.text();
    assert_eq!(r.status, 200, "{said}");
    let mut fired = 0;
    for _ in 0..5 {
        let (_, _, data) = stream.body.event().unwrap();
        let v: Value = serde_json::from_str(&data).unwrap();
        fired = v["snapshot"]["faults"]["events"].as_array().map_or(0, |e| {
            e.iter().filter(|e| e["kind"] == fault.as_str()).count()
        });
        if fired > 0 {
            break;
        }
    }
    assert_eq!(fired, 1, "the viewer's fault {fault} was injected");
    let mut r = post(None, r#"{"fault":"no.such-fault"}"#);
    assert_eq!(r.status, 422);
    let says = r.body.text();
    assert!(says.contains("no.such-fault"), "{says}");
    drop(stream);
    let (_, stderr) = {
        let mut host = host;
        host.finish()
    };
    let who = format!("viewer {viewer} (127.0.0.1:");
    assert!(stderr.contains(&who), "the host says who sent it: {stderr}");
    let events = std::fs::read_to_string(rec.join("events.jsonl")).unwrap();
    let lines: Vec<Value> = events
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        lines
            .iter()
            .any(|e| e["event"] == "command" && e["text"].as_str().unwrap().starts_with(&who)),
        "events.jsonl records the viewer's command: {events}"
    );
    assert!(
        lines
            .iter()
            .any(|e| e["event"] == "confirmed" && e["text"].as_str().unwrap().starts_with(&who)),
        "and the host's answer: {events}"
    );
}

#[test]
fn share_flags_are_checked_before_anything_runs() {
    for (args, says) in [
        (
            vec!["run", "demo", "--share-control"],
            "--share-control is a setting of --share",
        ),
        (
            vec!["run", "demo", "--share", "0.0.0.0:0"],
            "add --allow-remote",
        ),
        (
            vec!["run", "demo", "--share", "--share-token", "short"],
            "--share-token: a token is 8 to 256",
        ),
        (
            vec!["run", "demo", "--share", "127.0.0.1:x"],
            "--share 127.0.0.1:x: not an address",
        ),
    ] {
        let (ok, _, err) = common::latlab_output(&args);
        assert!(!ok, "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn ctrl_c_on_the_host_ends_every_stream_with_a_last_event() {
    let mut host = Host::start(&[
        "run",
        "demo",
        "--duration",
        "60s",
        "--quiet",
        "--format",
        "json",
        "--share",
    ]);
    let mut a = events(&host, "");
    let mut b = events(&host, "");
    for s in [&mut a, &mut b] {
        let (_, name, _) = s.body.event().unwrap();
        assert_eq!(name, "frame");
    }
    // SAFETY: kill sends SIGINT to the host this test started.
    unsafe { libc::kill(host.child.id() as i32, libc::SIGINT) };
    for s in [&mut a, &mut b] {
        let ended = loop {
            match s.body.event() {
                Some((_, name, data)) if name == "end" => break data,
                Some(_) => {}
                None => panic!("the stream closed without its end event"),
            }
        };
        let v: Value = serde_json::from_str(&ended).unwrap();
        assert_eq!(v["text"], "the run ended: stopped early");
        assert!(s.body.event().is_none(), "the stream closes after it");
    }
    let (report, _) = host.finish();
    assert_eq!(report["ending"], "stopped-early");
}
