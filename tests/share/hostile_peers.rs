//! Peers latlab does not control: a host `latlab attach` follows that sends a 100 MB frame, an
//! endless line, or an event that never ends; recordings to merge whose interval log declares a
//! 4 GiB histogram; and an S3 prefix whose keys climb out of the folder they are downloaded
//! to. Each is a one-line error naming the source, memory stays bounded (the process's peak
//! resident set is read from /proc), and nothing is written outside the output folder.

use std::time::Duration;

use latlab::share::client::{Incoming, Target, follow};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The process's peak resident set, in MB (VmHWM).
fn peak_mb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        .unwrap()
        / 1024
}

/// A host on 127.0.0.1 that answers `/events` with a 200 and then `send`'s bytes, chunk by
/// chunk, `pause` apart; it stops after `total` bytes (or at the test's end).
async fn host(chunk: Vec<u8>, total: usize, pause: Duration) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let chunk = chunk.clone();
            tokio::spawn(async move {
                let mut req = [0u8; 4096];
                let _ = sock.read(&mut req).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
                if sock.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let mut sent = 0;
                while sent < total {
                    if sock.write_all(&chunk).await.is_err() {
                        return;
                    }
                    sent += chunk.len();
                    if !pause.is_zero() {
                        tokio::time::sleep(pause).await;
                    }
                }
                tokio::time::sleep(Duration::from_secs(60)).await;
            });
        }
    });
    addr
}

/// What `follow` says first of a host: its first message.
async fn first(addr: String, silence: Duration) -> String {
    let (tx, mut rx) = tokio::sync::mpsc::channel(4);
    let t = Target {
        addr,
        token: "token-12345678".into(),
        silence,
    };
    let task = tokio::spawn(follow(t, tx));
    let said = tokio::time::timeout(Duration::from_secs(60), rx.recv())
        .await
        .expect("attach says something within a minute");
    task.abort();
    match said {
        Some(Incoming::Lost(why)) | Some(Incoming::Refused(why)) => why,
        Some(Incoming::Frame(_)) => "a frame".into(),
        Some(Incoming::End(_)) => "an end".into(),
        None => "nothing".into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_refuses_a_100_mb_frame_an_endless_line_and_an_event_that_never_ends() {
    let before = peak_mb();
    // A frame of 100 MB: `event: frame`, then data that does not end before the bound.
    let mut frame = b"event: frame\ndata: ".to_vec();
    frame.extend(vec![b'x'; 1 << 20]);
    let addr = host(frame, 100 << 20, Duration::ZERO).await;
    let why = first(addr.clone(), Duration::from_secs(45)).await;
    assert_eq!(why, format!("{addr}: an event over 32 MB"));
    assert!(!why.contains('\n'));
    // One endless line, no newline at all.
    let addr = host(vec![b'y'; 1 << 20], 100 << 20, Duration::ZERO).await;
    let why = first(addr.clone(), Duration::from_secs(45)).await;
    assert_eq!(why, format!("{addr}: an event over 32 MB"));
    // Neither was held whole: memory grew by about the bound, not by 100 MB.
    let grew = peak_mb().saturating_sub(before);
    assert!(grew < 90, "the peak grew by {grew} MB");
    // An event that never ends, a byte now and then: dropped once no whole event has come.
    let addr = host(
        b"event: frame\ndata: x".to_vec(),
        1 << 20,
        Duration::from_millis(200),
    )
    .await;
    let why = first(addr.clone(), Duration::from_secs(2)).await;
    assert_eq!(why, format!("{addr}: no whole event came for 2 s"));
}

/// An interval line whose histogram says its payload is 4 GiB (HdrHistogram's reader would size
/// its buffer by it): the merge stops at that file, in one line naming it, without the memory.
#[test]
fn a_merge_refuses_a_log_that_declares_4_gib_naming_the_file() {
    use base64::Engine;
    let root = tempfile::tempdir().unwrap();
    let seed = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/recording");
    let copy = |to: &std::path::Path| {
        std::fs::create_dir_all(to.join("hlog")).unwrap();
        for f in [
            "recording.json",
            "frames.jsonl",
            "events.jsonl",
            "report.json",
            "scenario.toml",
        ] {
            std::fs::copy(format!("{seed}/{f}"), to.join(f)).unwrap();
        }
        let log = "hlog/kinesis.get_records.arrival_to_receive.hlog";
        std::fs::copy(format!("{seed}/{log}"), to.join(log)).unwrap();
    };
    let (a, b, out) = (
        root.path().join("a"),
        root.path().join("b"),
        root.path().join("out"),
    );
    copy(&a);
    copy(&b);
    let mut v2 = Vec::new();
    v2.extend(0x1c84_9313u32.to_be_bytes());
    v2.extend((u32::MAX - 8).to_be_bytes());
    v2.extend(0u32.to_be_bytes());
    v2.extend(3u32.to_be_bytes());
    v2.extend(1u64.to_be_bytes());
    v2.extend(3_600_000_000u64.to_be_bytes());
    v2.extend(1f64.to_be_bytes());
    let bad = a.join("hlog/kinesis.get_records.arrival_to_receive.hlog");
    let mut text = std::fs::read_to_string(&bad).unwrap();
    text.push_str(&format!(
        "Tag=x,5.000,1.000,1.0,{}\n",
        base64::engine::general_purpose::STANDARD.encode(&v2)
    ));
    std::fs::write(&bad, text).unwrap();
    let before = peak_mb();
    let e = match latlab::compare::merge::merge(&[a, b], &out) {
        Ok(_) => panic!("a 4 GiB-declared histogram was merged"),
        Err(e) => format!("{e:#}"),
    };
    assert!(e.contains(&bad.display().to_string()), "{e}");
    assert!(e.contains("its payload says 4294967287 bytes"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    assert!(peak_mb().saturating_sub(before) < 200, "memory grew");
    // Nothing but the output folder beside the inputs.
    let names: Vec<String> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| ["a", "b", "out"].contains(&n.as_str())),
        "{names:?}"
    );
}

/// A prefix whose keys name a folder `..`, or a file that climbs out of its recording: the
/// download refuses it in one line naming the key, and writes nothing outside its folder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_s3_prefix_whose_keys_climb_out_writes_nothing_outside() {
    let emu = latlab_emulator::Emulator::start(Default::default())
        .await
        .unwrap();
    let c = latlab::aws::emulator_s3_client(
        &emu.endpoint_url(),
        aws_smithy_types::retry::RetryConfig::disabled(),
    );
    c.create_bucket().bucket("runs").send().await.unwrap();
    let put = |key: &'static str| {
        let c = c.clone();
        async move {
            c.put_object()
                .bucket("runs")
                .key(key)
                .body(aws_sdk_s3::primitives::ByteStream::from_static(b"{}"))
                .send()
                .await
                .unwrap();
        }
    };
    for (prefix, keys, says) in [
        (
            "climb/",
            vec!["climb/../recording.json", "climb/../report.json"],
            "the folder \"..\" is not a recording's",
        ),
        (
            "deep/",
            vec!["deep/h1/recording.json", "deep/h1/hlog/../../../escaped"],
            "is not a file a recording holds",
        ),
    ] {
        for k in keys {
            put(k).await;
        }
        let root = tempfile::tempdir().unwrap();
        let into = root.path().join("into");
        std::fs::create_dir_all(&into).unwrap();
        let url = latlab::fleet::s3::S3Url::parse(&format!("s3://runs/{prefix}")).unwrap();
        let e = latlab::fleet::s3::download(&c, &url, &into)
            .await
            .unwrap_err();
        let e = format!("{e:#}");
        assert!(e.contains(says), "{prefix}: {e}");
        assert!(!e.contains('\n'));
        let outside: Vec<String> = std::fs::read_dir(root.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .filter(|n| n != "into")
            .collect();
        assert!(outside.is_empty(), "written outside: {outside:?}");
    }
}
