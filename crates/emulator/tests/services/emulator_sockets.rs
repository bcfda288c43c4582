//! The emulator against raw sockets, as a broken or hostile client would talk to it: bytes that
//! are not HTTP, headers sent a byte at a time, a body larger than any operation takes, a
//! half-closed connection, a thousand connections at once. Each time the server must answer or cut
//! the client off, keep serving everyone else, and hold no more than its caps.

use std::time::{Duration, Instant};

use crate::common;

use latlab_emulator::profile::LatencyProfile;
use latlab_emulator::{Emulator, EmulatorConfig, STATS_PATH};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn emulator(header_timeout: Duration, max_connections: usize) -> Emulator {
    Emulator::start(EmulatorConfig {
        header_timeout,
        max_connections,
        ..EmulatorConfig::default()
    })
    .await
    .unwrap()
}

/// Everything the server sends until it closes the connection (or `within` passes).
async fn read_all(s: &mut TcpStream, within: Duration) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (out, true),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Err(_) => return (out, false),
        }
    }
}

/// A stats request on a fresh connection succeeds: the server still serves.
async fn still_serves(emu: &Emulator) {
    let mut s = TcpStream::connect(emu.addr()).await.unwrap();
    s.write_all(
        format!("GET {STATS_PATH} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let (out, closed) = read_all(&mut s, Duration::from_secs(5)).await;
    let text = String::from_utf8_lossy(&out);
    assert!(closed && text.starts_with("HTTP/1.1 200"), "{text}");
}

#[tokio::test]
async fn bytes_that_are_not_http_get_a_400_and_the_server_serves_on() {
    let emu = emulator(Duration::from_secs(5), 64).await;
    let mut s = TcpStream::connect(emu.addr()).await.unwrap();
    s.write_all(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 not http at all\r\n\r\n")
        .await
        .unwrap();
    let (out, closed) = read_all(&mut s, Duration::from_secs(5)).await;
    let text = String::from_utf8_lossy(&out);
    assert!(closed, "the connection is closed");
    assert!(
        text.is_empty() || text.starts_with("HTTP/1.1 400"),
        "a 400 or nothing: {text}"
    );
    still_serves(&emu).await;
}

#[tokio::test]
async fn a_client_dribbling_its_headers_is_cut_off_after_the_header_timeout() {
    let emu = emulator(Duration::from_millis(800), 64).await;
    let mut s = TcpStream::connect(emu.addr()).await.unwrap();
    let started = Instant::now();
    let request = b"GET /_latlab/stats HTTP/1.1\r\nhost: x\r\nx-slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let mut cut_off = None;
    for byte in request.iter() {
        if s.write_all(&[*byte]).await.is_err() {
            cut_off = Some(started.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut probe = [0u8; 256];
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(1), s.read(&mut probe)).await
        {
            // Closed (0) or an answer (408) before the headers were whole: cut off.
            let text = String::from_utf8_lossy(&probe[..n]);
            assert!(n == 0 || text.starts_with("HTTP/1.1 408"), "{text}");
            cut_off = Some(started.elapsed());
            break;
        }
    }
    let at = cut_off.expect("the server never cut the slow client off");
    assert!(
        at >= Duration::from_millis(700) && at < Duration::from_secs(4),
        "cut off after {at:?}, with a header timeout of 800 ms"
    );
    still_serves(&emu).await;
}

#[tokio::test]
async fn a_body_larger_than_any_operation_takes_is_refused_before_it_is_read() {
    let emu = emulator(Duration::from_secs(5), 64).await;
    let mut s = TcpStream::connect(emu.addr()).await.unwrap();
    // 1 GiB declared; the server must answer after the headers, without reading the body.
    let head = "POST / HTTP/1.1\r\nhost: x\r\nx-amz-target: Kinesis_20131202.PutRecord\r\n\
                content-type: application/x-amz-json-1.1\r\ncontent-length: 1073741824\r\n\r\n";
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(&[b'{'; 4096]).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
        .await
        .expect("an answer before the body")
        .unwrap();
    let text = String::from_utf8_lossy(&buf[..n]);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("SerializationException"), "{text}");
    assert!(text.contains("at most 16777216"), "{text}");
    // Streaming past the 16 MiB JSON cap without declaring a length is cut at the cap.
    let mut s = TcpStream::connect(emu.addr()).await.unwrap();
    let head = "POST / HTTP/1.1\r\nhost: x\r\nx-amz-target: Kinesis_20131202.PutRecord\r\n\
                content-type: application/x-amz-json-1.1\r\ntransfer-encoding: chunked\r\n\r\n";
    s.write_all(head.as_bytes()).await.unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 1 << 20, "a".repeat(1 << 20));
    let mut sent = 0usize;
    let (mut reader, mut writer) = s.into_split();
    let writing = tokio::spawn(async move {
        for _ in 0..64 {
            if writer.write_all(chunk.as_bytes()).await.is_err() {
                break;
            }
            sent += 1 << 20;
        }
        sent
    });
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(20), reader.read_to_end(&mut out)).await;
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.starts_with("HTTP/1.1 413"),
        "{}",
        &text[..text.len().min(300)]
    );
    writing.abort();
    still_serves(&emu).await;
}

#[tokio::test]
async fn a_half_closed_connection_still_gets_its_answer() {
    let emu = emulator(Duration::from_secs(5), 64).await;
    let mut s = TcpStream::connect(emu.addr()).await.unwrap();
    s.write_all(format!("GET {STATS_PATH} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    s.shutdown().await.unwrap();
    let (out, closed) = read_all(&mut s, Duration::from_secs(5)).await;
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(closed, "and then the server closes its side");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(emu.connections().0, 0, "no connection is left open");
}

/// A profile that delays every Kinesis request and every S3 first byte by 300 ms, so an answer is
/// still on its way when the client half-closes.
fn delaying_profile() -> LatencyProfile {
    LatencyProfile::from_toml(
        "name = \"slow\"\n\
         [kinesis]\nrequest = { fixed_ms = 300 }\n\
         [s3.standard]\nput_first_byte = { fixed_ms = 300 }\nget_first_byte = { fixed_ms = 300 }\n",
    )
    .unwrap()
}

async fn delaying_emulator(limits: &[&str]) -> Emulator {
    common::emulator_with(limits, delaying_profile()).await
}

/// Sends `request` whole, half-closes (SHUT_WR), and reads until the server closes its side.
/// Returns the answer, whether the server closed, and how long the answer took.
async fn half_closed(emu: &Emulator, request: &[u8]) -> (String, bool, Duration) {
    let mut s = TcpStream::connect(emu.addr()).await.unwrap();
    s.write_all(request).await.unwrap();
    let sent = Instant::now();
    s.shutdown().await.unwrap();
    let (out, closed) = read_all(&mut s, Duration::from_secs(10)).await;
    (
        String::from_utf8_lossy(&out).into_owned(),
        closed,
        sent.elapsed(),
    )
}

fn kinesis_post(op: &str, body: &str) -> Vec<u8> {
    format!(
        "POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/x-amz-json-1.1\r\n\
         x-amz-target: Kinesis_20131202.{op}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[tokio::test]
async fn a_half_closed_kinesis_request_is_answered_after_the_profiles_delay() {
    let emu = delaying_emulator(&[]).await;
    let (text, closed, took) = half_closed(&emu, &kinesis_post("ListStreams", "{}")).await;
    assert!(text.starts_with("HTTP/1.1 200"), "no answer: {text:?}");
    assert!(text.contains("\"StreamNames\""), "{text}");
    assert!(
        took >= Duration::from_millis(290),
        "the delay applied: {took:?}"
    );
    assert!(closed, "and then the server closes its side");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(emu.connections().0, 0, "no connection is left open");
}

#[tokio::test]
async fn a_half_closed_s3_put_and_get_are_answered_after_the_profiles_delay() {
    let emu = delaying_emulator(&[]).await;
    let (status, body) = common::raw(&emu, "PUT", "/halfclosed", &[], b"").await;
    assert_eq!(status, 200, "bucket: {body}");
    let payload = "x".repeat(1000);
    let put = format!(
        "PUT /halfclosed/k?x-id=PutObject HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {}\r\n\r\n{payload}",
        payload.len()
    );
    let (text, closed, took) = half_closed(&emu, put.as_bytes()).await;
    assert!(text.starts_with("HTTP/1.1 200"), "PUT unanswered: {text:?}");
    assert!(
        took >= Duration::from_millis(290),
        "PUT's delay applied: {took:?}"
    );
    assert!(closed, "the server closes after the PUT's answer");
    let get = "GET /halfclosed/k?x-id=GetObject HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n";
    let (text, closed, took) = half_closed(&emu, get.as_bytes()).await;
    assert!(text.starts_with("HTTP/1.1 200"), "GET unanswered: {text:?}");
    assert!(text.ends_with(&payload), "the object whole: {text}");
    assert!(
        took >= Duration::from_millis(290),
        "GET's delay applied: {took:?}"
    );
    assert!(closed, "the server closes after the GET's answer");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(emu.connections().0, 0, "no connection is left open");
}

#[tokio::test]
async fn a_half_closed_subscription_streams_until_the_subscription_ends() {
    let emu = delaying_emulator(&["kinesis.subscription_duration=5s"]).await;
    let c = common::client(&emu);
    common::create_stream(&c, "half", 1).await;
    let stream_arn = c
        .describe_stream_summary()
        .stream_name("half")
        .send()
        .await
        .unwrap()
        .stream_description_summary()
        .unwrap()
        .stream_arn()
        .to_string();
    let consumer = common::register_active(&c, &stream_arn, "half-closer").await;
    let body = format!(
        r#"{{"ConsumerARN":"{consumer}","ShardId":"shardId-000000000000","StartingPosition":{{"Type":"LATEST"}}}}"#
    );
    let mut s = TcpStream::connect(emu.addr()).await.unwrap();
    s.write_all(&kinesis_post("SubscribeToShard", &body))
        .await
        .unwrap();
    let subscribed = Instant::now();
    s.shutdown().await.unwrap();
    // Records put while the subscription runs, after the client's write side has closed (each
    // put is delayed 300 ms too: five are stored within about 2.5 s).
    let producer = {
        let c = c.clone();
        tokio::spawn(async move {
            for i in 0..5u8 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                c.put_record()
                    .stream_name("half")
                    .partition_key("k")
                    .data(aws_smithy_types::Blob::new(vec![i; 100]))
                    .send()
                    .await
                    .unwrap();
            }
        })
    };
    let (out, closed) = read_all(&mut s, Duration::from_secs(10)).await;
    let lasted = subscribed.elapsed();
    producer.await.unwrap();
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("initial-response"), "{text}");
    let records = text.matches("\"SequenceNumber\"").count();
    assert_eq!(
        records, 5,
        "every record put after the half-close is pushed: {text}"
    );
    assert!(
        text.ends_with("0\r\n\r\n"),
        "the body ends as a finished subscription's does"
    );
    assert!(closed, "then the server closes its side");
    assert!(
        lasted >= Duration::from_millis(4900),
        "the stream went on until the 5 s subscription ended: {lasted:?}"
    );
}

#[tokio::test]
async fn a_thousand_connections_are_all_served_within_the_connection_cap() {
    let cap = 100;
    let emu = emulator(Duration::from_secs(5), cap).await;
    let addr = emu.addr();
    let clients: Vec<_> = (0..1000)
        .map(|_| {
            tokio::spawn(async move {
                let mut s = TcpStream::connect(addr).await.unwrap();
                s.write_all(
                    format!("GET {STATS_PATH} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
                        .as_bytes(),
                )
                .await
                .unwrap();
                let (out, closed) = read_all(&mut s, Duration::from_secs(30)).await;
                closed && out.starts_with(b"HTTP/1.1 200")
            })
        })
        .collect();
    let mut served = 0;
    for c in clients {
        served += c.await.unwrap() as usize;
    }
    assert_eq!(served, 1000, "every client got its answer");
    let (open, peak) = emu.connections();
    assert!(
        peak <= cap && peak > 1,
        "at most {cap} connections served at once, the rest waited: peak {peak}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        emu.connections().0,
        0,
        "none left open (open {open} just after)"
    );
}

#[tokio::test]
async fn headers_past_the_buffer_cap_are_refused() {
    let emu = emulator(Duration::from_secs(5), 64).await;
    let mut s = TcpStream::connect(emu.addr()).await.unwrap();
    let mut head = String::from("GET /_latlab/stats HTTP/1.1\r\nhost: x\r\n");
    // 600 KiB of headers, past hyper's ~408 KiB read buffer.
    for i in 0..600 {
        head.push_str(&format!("x-h{i}: {}\r\n", "a".repeat(1010)));
    }
    head.push_str("\r\n");
    let _ = s.write_all(head.as_bytes()).await;
    let (out, closed) = read_all(&mut s, Duration::from_secs(5)).await;
    let text = String::from_utf8_lossy(&out);
    assert!(closed, "the connection is closed");
    assert!(text.starts_with("HTTP/1.1 431"), "{text}");
    still_serves(&emu).await;
}
