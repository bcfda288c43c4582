//! The made-up service through every part the registry builds: answered over HTTP by the
//! emulator's own server, its limits read from `--limit` and printed with the others, its leg in
//! every built-in profile and read from a profile file, its stats, its count and `--lacking`.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::limits::Limits;
use crate::profile::{BUILTIN_PROFILES, LatencyProfile};
use crate::{Emulator, EmulatorConfig};

/// One HTTP/1.1 request on its own connection: the status and the body.
async fn call(
    emu: &Emulator,
    method: &str,
    path: &str,
    target: Option<&str>,
    body: &str,
) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(emu.addr()).await.unwrap();
    let target = target
        .map(|t| format!("x-amz-target: {t}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nhost: x\r\n{target}content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body.as_bytes()).await.unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).await.unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

async fn echo(emu: &Emulator, op: &str, body: &str) -> (u16, serde_json::Value) {
    let (status, body) = call(emu, "POST", "/", Some(&format!("Echo_20261206.{op}")), body).await;
    (
        status,
        serde_json::from_str(&body).unwrap_or(serde_json::Value::Null),
    )
}

async fn start(limits: Limits, lacking: &[&str]) -> Emulator {
    Emulator::start(EmulatorConfig {
        limits,
        lacking: lacking.iter().map(|s| s.to_string()).collect(),
        ..EmulatorConfig::default()
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn a_registered_service_is_answered_over_http_beside_the_others() {
    let emu = start(Limits::default(), &[]).await;
    let (status, body) = echo(&emu, "Echo", r#"{"Say": "hello"}"#).await;
    assert_eq!(
        (status, &body["Echo"]["Say"]),
        (200, &serde_json::json!("hello"))
    );
    let (status, body) = echo(&emu, "Shout", "{}").await;
    assert_eq!(
        (status, body["__type"].as_str()),
        (400, Some("UnknownOperationException"))
    );
    // The others are where they were: a Kinesis call is Kinesis's, a target no service claims
    // gets the JSON protocols' answer to an unknown operation, and S3 takes the REST requests.
    let (status, body) = call(
        &emu,
        "POST",
        "/",
        Some("Kinesis_20131202.ListStreams"),
        "{}",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("StreamNames"), "{body}");
    let (status, body) = call(&emu, "POST", "/", Some("Nobody_1.Anything"), "{}").await;
    assert_eq!(status, 400);
    assert!(
        body.contains("UnknownOperationException") && body.contains("Nobody_1.Anything"),
        "{body}"
    );
    let (status, body) = call(&emu, "GET", "/", None, "").await;
    assert_eq!(status, 200);
    assert!(body.contains("ListAllMyBucketsResult"), "{body}");
    // Its part of the stats document and its count.
    let (_, stats) = call(&emu, "GET", crate::STATS_PATH, None, "").await;
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats["echo"]["calls"], 1, "{stats}");
    assert!(
        stats["s3"].is_object() && stats["sqs"].is_object(),
        "{stats}"
    );
    assert_eq!(emu.counts().get("echo.calls"), Some(1));
    assert_eq!(emu.counts().get("echo.nothing"), None);
}

#[tokio::test]
async fn its_limits_are_read_printed_and_enforced() {
    let limits = Limits::load(None, &["echo.calls_per_sec=2".into()]).unwrap();
    // What `latlab emulate --print-limits` prints, under its name, after the others.
    let sections = limits.sections();
    let names: Vec<&str> = sections.iter().map(|(n, _)| *n).collect();
    assert_eq!(names.last(), Some(&"echo"));
    assert!(names.starts_with(&["kinesis", "s3", "sqs"]), "{names:?}");
    let printed = &sections.last().unwrap().1;
    assert_eq!(printed, &vec![("calls_per_sec", "2".to_string())]);
    assert_eq!(limits.get("echo.calls_per_sec").as_deref(), Some("2"));
    // Set away from its default, it is in a run's model as the user's.
    let model = limits.model_params(&["echo"]);
    assert!(
        model
            .iter()
            .any(|p| p.name == "emulator.echo.calls_per_sec"),
        "{model:?}"
    );
    // Enforced, on the emulator's clock.
    let emu = start(limits, &[]).await;
    emu.freeze_clock();
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(echo(&emu, "Echo", "{}").await.0);
    }
    assert_eq!(statuses, [200, 200, 400]);
    let (_, body) = echo(&emu, "Echo", "{}").await;
    assert_eq!(body["__type"], "ThrottlingException");
    emu.advance_clock(Duration::from_secs(1));
    assert_eq!(echo(&emu, "Echo", "{}").await.0, 200);
    // A wrong key or value names what is wrong and what is valid.
    let e = format!(
        "{:#}",
        Limits::load(None, &["echo.calls=3".into()]).unwrap_err()
    );
    assert!(
        e.contains("unknown field `calls`") && e.contains("calls_per_sec"),
        "{e}"
    );
    let e = format!(
        "{:#}",
        Limits::load(None, &["echo.calls_per_sec=0".into()]).unwrap_err()
    );
    assert!(
        e.contains("echo.calls_per_sec must be greater than 0"),
        "{e}"
    );
}

#[tokio::test]
async fn its_leg_is_in_every_profile_and_a_profile_file() {
    for name in BUILTIN_PROFILES {
        let p = LatencyProfile::resolve(name).unwrap();
        let leg = p.params().into_iter().find(|x| x.name == "echo.reply");
        let leg = leg.unwrap_or_else(|| panic!("{name} lists no echo.reply"));
        assert!(!leg.provenance.note.is_empty(), "{name}: {leg:?}");
    }
    let p =
        LatencyProfile::from_toml("name = \"mine\"\n[echo]\nreply = { fixed_ms = 150 }\n").unwrap();
    assert_eq!(p.echo.reply, latlab_core::shaping::dist::Dist::Fixed(150.0));
    let e = LatencyProfile::from_toml("name = \"x\"\n[echo]\nrepyl = { fixed_ms = 5 }\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("repyl") && e.contains("reply"), "{e}");
    // Set on a running emulator, the next call waits for it.
    let emu = start(Limits::default(), &[]).await;
    emu.set_profile(&p);
    let t0 = std::time::Instant::now();
    assert_eq!(echo(&emu, "Echo", "{}").await.0, 200);
    assert!(
        t0.elapsed() >= Duration::from_millis(150),
        "{:?}",
        t0.elapsed()
    );
}

#[tokio::test]
async fn lacking_takes_its_operations_and_lists_them() {
    let emu = start(Limits::default(), &["Echo"]).await;
    let (status, body) = call(&emu, "POST", "/", Some("Echo_20261206.Echo"), "{}").await;
    assert_eq!(status, 500);
    assert!(body.contains("Internal Server Error"), "{body}");
    let e = Emulator::start(EmulatorConfig {
        lacking: vec!["Shout".into()],
        ..EmulatorConfig::default()
    })
    .await
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.starts_with("--lacking Shout: not a Kinesis operation the emulator answers; valid: ")
            && e.contains("; or an S3 operation: ")
            && e.contains("; or an SQS operation: ")
            && e.ends_with("; or an Echo operation: Echo"),
        "{e}"
    );
}
