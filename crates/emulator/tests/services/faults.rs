//! The emulator's faults through the real SDK and raw sockets: what a client sees of each kind
//! (a cut or ended event stream, a reset after a put was stored, each service's own errors, an
//! SQS receive held back).

use std::time::Duration;

use latlab_core::faults::FaultSpec;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common;
use latlab_core::services::kinesis::faults as kinesis_faults;
use latlab_core::services::sqs::faults as sqs_faults;

/// De-chunks an HTTP/1.1 answer's body: the bytes, and whether its last chunk came.
fn dechunk(raw: &[u8]) -> Option<(Vec<u8>, bool)> {
    let at = raw.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let mut body = &raw[at..];
    let mut out = Vec::new();
    while let Some(eol) = body.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(std::str::from_utf8(&body[..eol]).ok()?, 16).ok()?;
        if size == 0 {
            return Some((out, true));
        }
        let data = &body[eol + 2..];
        let take = size.min(data.len());
        out.extend_from_slice(&data[..take]);
        if take < size {
            break;
        }
        body = &data[(size + 2).min(data.len())..];
    }
    Some((out, false))
}

/// Reads a raw chunked event stream until the server lets go of it or ends the body; returns
/// the event-stream bytes.
async fn read_event_stream(s: &mut tokio::net::TcpStream) -> Vec<u8> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => raw.extend_from_slice(&buf[..n]),
            Err(_) => panic!("the stream was neither cut nor ended within 10 s"),
        }
        if dechunk(&raw).is_some_and(|(_, ended)| ended) {
            break;
        }
    }
    dechunk(&raw).map(|(b, _)| b).unwrap_or_default()
}

/// Splits event-stream bytes into whole frames (by each prelude's total length); returns the
/// frames and the bytes of a last, incomplete one.
fn frames(mut bytes: &[u8]) -> (usize, usize) {
    let mut whole = 0;
    while bytes.len() >= 4 {
        let len = u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
        if bytes.len() < len {
            return (whole, bytes.len());
        }
        whole += 1;
        bytes = &bytes[len..];
    }
    (whole, bytes.len())
}

/// Subscribes with a raw request; returns the connection once the headers are answered.
async fn subscribe_raw(
    emu: &latlab_emulator::Emulator,
    consumer_arn: &str,
) -> tokio::net::TcpStream {
    let body = format!(
        r#"{{"ConsumerARN":"{consumer_arn}","ShardId":"shardId-000000000000","StartingPosition":{{"Type":"LATEST"}}}}"#
    );
    let mut s = tokio::net::TcpStream::connect(emu.addr()).await.unwrap();
    s.write_all(
        format!(
            "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-amz-json-1.1\r\nX-Amz-Target: Kinesis_20131202.SubscribeToShard\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    s
}

#[tokio::test]
async fn a_cut_event_stream_ends_mid_frame_and_an_ended_one_on_a_frame_boundary() {
    let emu = common::emulator(&[]).await;
    let c = common::client(&emu);
    common::create_stream(&c, "cut", 1).await;
    let stream_arn = c
        .describe_stream_summary()
        .stream_name("cut")
        .send()
        .await
        .unwrap()
        .stream_description_summary()
        .unwrap()
        .stream_arn()
        .to_string();
    for (kind, consumer) in [
        (kinesis_faults::STREAM_CUT, "cutter"),
        (kinesis_faults::STREAM_END, "ender"),
    ] {
        let arn = common::register_active(&c, &stream_arn, consumer).await;
        let mut s = subscribe_raw(&emu, &arn).await;
        // The fault fires now: the stream's next frame after the initial response gets it.
        let mut spec = FaultSpec::now(kind);
        spec.consumer = Some(consumer.into());
        emu.faults().add(spec).unwrap();
        c.put_record()
            .stream_name("cut")
            .partition_key("k")
            .data(aws_smithy_types::Blob::new(vec![7u8; 2000]))
            .send()
            .await
            .unwrap();
        let bytes = read_event_stream(&mut s).await;
        let (whole, partial) = frames(&bytes);
        match kind {
            kinesis_faults::STREAM_CUT => {
                assert_eq!(whole, 1, "only the initial response is whole");
                assert!(partial > 0, "the cut leaves part of a frame");
            }
            _ => {
                assert_eq!(whole, 1, "the initial response, then the end");
                assert_eq!(partial, 0, "an early end is on a frame boundary");
            }
        }
        let events = emu.faults().log.events();
        let e = events.last().unwrap();
        assert_eq!(e.kind, kind);
        assert!(e.target.contains(consumer), "{}", e.target);
    }
}

#[tokio::test]
async fn a_put_reset_after_it_was_stored_is_stored_and_its_client_sees_a_broken_connection() {
    let emu = common::emulator(&[]).await;
    let c = common::client_no_retry(&emu);
    common::create_stream(&c, "reset", 1).await;
    let mut spec = FaultSpec::now(kinesis_faults::RESET_AFTER);
    spec.operation = Some("PutRecord".into());
    emu.faults().add(spec).unwrap();
    let err = c
        .put_record()
        .stream_name("reset")
        .partition_key("k")
        .data(aws_smithy_types::Blob::new(b"x".to_vec()))
        .send()
        .await
        .expect_err("the answer never came");
    // No answer: the connection broke, which the SDK reports as a failure to dispatch or to read
    // the response, never as a service error.
    use aws_sdk_kinesis::error::SdkError;
    assert!(
        matches!(
            err,
            SdkError::DispatchFailure(_) | SdkError::ResponseError(_)
        ),
        "{err:?}"
    );
    // The record was stored all the same.
    let it = c
        .get_shard_iterator()
        .stream_name("reset")
        .shard_id("shardId-000000000000")
        .shard_iterator_type(aws_sdk_kinesis::types::ShardIteratorType::TrimHorizon)
        .send()
        .await
        .unwrap();
    let got = c
        .get_records()
        .shard_iterator(it.shard_iterator().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(got.records().len(), 1);
    // Expired iterators: every iterator handed out before the fault answers
    // ExpiredIteratorException; a new one reads.
    emu.faults()
        .add(FaultSpec::now(kinesis_faults::EXPIRE_ITERATORS))
        .unwrap();
    let e = c
        .get_records()
        .shard_iterator(got.next_shard_iterator().unwrap())
        .send()
        .await
        .expect_err("expired");
    assert_eq!(common::code(&e), "ExpiredIteratorException");
    let it = c
        .get_shard_iterator()
        .stream_name("reset")
        .shard_id("shardId-000000000000")
        .shard_iterator_type(aws_sdk_kinesis::types::ShardIteratorType::TrimHorizon)
        .send()
        .await
        .unwrap();
    let again = c
        .get_records()
        .shard_iterator(it.shard_iterator().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(again.records().len(), 1);
    let counts = emu.faults().log.counts();
    assert_eq!(counts[&kinesis_faults::RESET_AFTER].fired, 1);
    assert_eq!(counts[&kinesis_faults::EXPIRE_ITERATORS].recovered, 1);
}

#[tokio::test]
async fn errors_are_the_services_own_and_a_rate_hits_about_its_share() {
    let emu = common::emulator(&[]).await;
    let c = common::client_no_retry(&emu);
    common::create_stream(&c, "errs", 1).await;
    for (kind, code) in [
        (kinesis_faults::INTERNAL_FAILURE, "InternalFailure"),
        (kinesis_faults::SERVICE_UNAVAILABLE, "ServiceUnavailable"),
    ] {
        emu.faults().add(FaultSpec::now(kind)).unwrap();
        let e = c
            .describe_stream_summary()
            .stream_name("errs")
            .send()
            .await
            .expect_err("the fault answers");
        assert_eq!(common::code(&e), code);
    }
    emu.faults()
        .add(FaultSpec::parse("kinesis.internal-failure:operation=ListShards,rate=25%").unwrap())
        .unwrap();
    let mut failed = 0;
    for _ in 0..400 {
        if c.list_shards().stream_name("errs").send().await.is_err() {
            failed += 1;
        }
    }
    // 25% of 400: 100, with a binomial spread of about 9; 40 to 160 is more than six of them.
    assert!((40..=160).contains(&failed), "{failed} of 400 failed");
}

/// SQS's fault kinds through aws-sdk-sqs (no retries, so each answer is seen as it is): a reset
/// sends nothing back and changes nothing, a 500 is InternalFailure, a receive stall holds a
/// ReceiveMessage's answer back and leaves every other call alone; each is logged and recovers.
#[tokio::test]
async fn sqs_faults_reset_fail_and_stall_a_receive() {
    let emu = common::emulator(&[]).await;
    let c = common::sqs_client(&emu.endpoint_url());
    let url = c
        .create_queue()
        .queue_name("faults")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();

    emu.faults().add(FaultSpec::now(sqs_faults::RESET)).unwrap();
    let e = c
        .send_message()
        .queue_url(&url)
        .message_body("reset")
        .send()
        .await
        .expect_err("the reset answers nothing");
    assert!(
        matches!(e, aws_sdk_sqs::error::SdkError::DispatchFailure(_)),
        "a reset is a broken connection to the SDK: {e:?}"
    );
    emu.faults()
        .add(FaultSpec::now(sqs_faults::INTERNAL_ERROR))
        .unwrap();
    let e = c
        .send_message()
        .queue_url(&url)
        .message_body("500")
        .send()
        .await
        .expect_err("the fault answers");
    assert_eq!(
        aws_sdk_sqs::error::ProvideErrorMetadata::code(&e),
        Some("InternalFailure")
    );
    let attrs = c
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages)
        .send()
        .await
        .unwrap();
    assert_eq!(
        attrs.attributes().unwrap()
            [&aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages],
        "0",
        "neither failed send stored a message"
    );

    c.send_message()
        .queue_url(&url)
        .message_body("held")
        .send()
        .await
        .unwrap();
    let mut stall = FaultSpec::now(sqs_faults::RECEIVE_STALL);
    stall.duration = Duration::from_millis(1500);
    emu.faults().add(stall).unwrap();
    // A send is no receive: the stall waits for ReceiveMessage.
    let t = std::time::Instant::now();
    c.send_message()
        .queue_url(&url)
        .message_body("second")
        .send()
        .await
        .unwrap();
    assert!(
        t.elapsed() < Duration::from_millis(1000),
        "{:?}",
        t.elapsed()
    );
    let t = std::time::Instant::now();
    let got = c
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .wait_time_seconds(1)
        .send()
        .await
        .unwrap();
    let held = t.elapsed();
    assert!(held >= Duration::from_millis(1500), "held {held:?}");
    assert_eq!(
        got.messages().len(),
        2,
        "the held answer still carries them"
    );
    let counts = emu.faults().log.counts();
    for kind in [
        sqs_faults::RESET,
        sqs_faults::INTERNAL_ERROR,
        sqs_faults::RECEIVE_STALL,
    ] {
        assert_eq!(counts[&kind].fired, 1, "{kind}");
    }
    // A later correct answer is each one's recovery.
    c.get_queue_url().queue_name("faults").send().await.unwrap();
    let counts = emu.faults().log.counts();
    for kind in [
        sqs_faults::RESET,
        sqs_faults::INTERNAL_ERROR,
        sqs_faults::RECEIVE_STALL,
    ] {
        assert_eq!(counts[&kind].recovered, 1, "{kind} recovers");
    }
}
