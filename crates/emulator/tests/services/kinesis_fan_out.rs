//! The Kinesis emulator's enhanced fan-out through the real aws-sdk-kinesis over HTTP: consumers
//! registered, described, listed and capped; SubscribeToShard's pushed records, its rate limit,
//! a subscription taken over, and resuming without loss or duplicates.

use crate::common;

use std::time::{Duration, Instant};

use aws_sdk_kinesis::primitives::Blob;
use aws_sdk_kinesis::types::{ShardIteratorType, SubscribeToShardEventStream};
use common::*;
use latlab_emulator::kinesis::stats::Api;

use crate::kinesis_emulator::SHARD0;

#[tokio::test]
async fn consumers_register_describe_list_and_are_capped() {
    let emu = emulator(&["stream_activation=0s", "consumer_activation=10s"]).await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 1).await;
    let arn = "arn:aws:kinesis:us-east-1:000000000000:stream/s";
    for i in 0..5 {
        let out = c
            .register_stream_consumer()
            .stream_arn(arn)
            .consumer_name(format!("c{i}"))
            .send()
            .await
            .unwrap();
        assert_eq!(
            out.consumer().unwrap().consumer_status().as_str(),
            "CREATING"
        );
    }
    let e = c
        .register_stream_consumer()
        .stream_arn(arn)
        .consumer_name("c5")
        .send()
        .await
        .unwrap_err();
    assert_error(&e, "LimitExceededException", "5 consumers in CREATING");
    let e = c
        .register_stream_consumer()
        .stream_arn(arn)
        .consumer_name("c0")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceInUseException");

    let listed = c
        .list_stream_consumers()
        .stream_arn(arn)
        .max_results(3)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.consumers().len(), 3);
    let rest = c
        .list_stream_consumers()
        .stream_arn(arn)
        .next_token(listed.next_token().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(rest.consumers().len(), 2);
    let d = c
        .describe_stream_consumer()
        .stream_arn(arn)
        .consumer_name("c1")
        .send()
        .await
        .unwrap();
    let d = d.consumer_description().unwrap();
    assert!(
        d.consumer_arn()
            .starts_with("arn:aws:kinesis:us-east-1:000000000000:stream/s/consumer/c1:")
    );
    assert_eq!(d.stream_arn(), arn);
    // A consumer still CREATING cannot subscribe.
    let e = c
        .subscribe_to_shard()
        .consumer_arn(d.consumer_arn())
        .shard_id(SHARD0)
        .starting_position(starting(ShardIteratorType::Latest, None))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceInUseException");

    c.deregister_stream_consumer()
        .consumer_arn(d.consumer_arn())
        .send()
        .await
        .unwrap();
    let e = c
        .describe_stream_consumer()
        .consumer_arn(d.consumer_arn())
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "ResourceNotFoundException");

    // The per-stream cap of 20.
    let emu = emulator(&["stream_activation=0s", "consumer_activation=0s"]).await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 1).await;
    for i in 0..20 {
        c.register_stream_consumer()
            .stream_arn(arn)
            .consumer_name(format!("c{i}"))
            .send()
            .await
            .unwrap();
    }
    let e = c
        .register_stream_consumer()
        .stream_arn(arn)
        .consumer_name("c20")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "LimitExceededException");
    assert!(message(&e).contains("Consumer limit of 20"));
    let e = c.delete_stream().stream_name("s").send().await.unwrap_err();
    assert_eq!(code(&e), "ResourceInUseException");
    c.delete_stream()
        .stream_name("s")
        .enforce_consumer_deletion(true)
        .send()
        .await
        .unwrap();
}

/// Collects the payloads of a subscription until it ends; returns them, the last continuation
/// sequence number and how the stream ended.
/// The name of the exception that ended a subscription.
fn stream_error<R: std::fmt::Debug>(
    e: &aws_sdk_kinesis::error::SdkError<
        aws_sdk_kinesis::types::error::SubscribeToShardEventStreamError,
        R,
    >,
) -> String {
    use aws_sdk_kinesis::types::error::SubscribeToShardEventStreamError as E;
    match e.as_service_error() {
        Some(E::ResourceInUseException(_)) => "ResourceInUseException".into(),
        Some(E::ResourceNotFoundException(_)) => "ResourceNotFoundException".into(),
        Some(other) => format!("{other:?}"),
        None => format!("{e:?}"),
    }
}

async fn drain(
    mut out: aws_sdk_kinesis::operation::subscribe_to_shard::SubscribeToShardOutput,
    until: Duration,
) -> (Vec<String>, Option<String>, Result<(), String>) {
    let mut got = Vec::new();
    let mut cont = None;
    let deadline = tokio::time::Instant::now() + until;
    loop {
        match tokio::time::timeout_at(deadline, out.event_stream.recv()).await {
            Err(_) => return (got, cont, Err("still open".into())),
            Ok(Ok(None)) => return (got, cont, Ok(())),
            Ok(Ok(Some(SubscribeToShardEventStream::SubscribeToShardEvent(ev)))) => {
                got.extend(
                    ev.records()
                        .iter()
                        .map(|r| String::from_utf8(r.data().as_ref().to_vec()).unwrap()),
                );
                cont = Some(ev.continuation_sequence_number().to_string());
                assert_eq!(ev.millis_behind_latest(), 0);
            }
            Ok(Ok(Some(other))) => panic!("unexpected event {other:?}"),
            Ok(Err(e)) => return (got, cont, Err(stream_error(&e))),
        }
    }
}

#[tokio::test]
async fn a_subscriber_receives_pushed_records_and_resumes_without_loss_or_duplicates() {
    let emu = emulator(&[
        "stream_activation=0s",
        "consumer_activation=0s",
        "subscription_duration=1500ms",
    ])
    .await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 1).await;
    c.put_record()
        .stream_name("s")
        .partition_key("k")
        .data(Blob::new("before"))
        .send()
        .await
        .unwrap();
    let consumer =
        register_active(&c, "arn:aws:kinesis:us-east-1:000000000000:stream/s", "efo").await;

    let producer = {
        let c = c.clone();
        tokio::spawn(async move {
            for i in 0..40 {
                c.put_record()
                    .stream_name("s")
                    .partition_key("k")
                    .data(Blob::new(format!("m{i:02}")))
                    .send()
                    .await
                    .unwrap();
                tokio::time::sleep(Duration::from_millis(70)).await;
            }
        })
    };
    let mut received = Vec::new();
    let mut position = starting(ShardIteratorType::Latest, None);
    let mut subscriptions = 0;
    while received.len() < 40 && subscriptions < 10 {
        let t = Instant::now();
        let out = c
            .subscribe_to_shard()
            .consumer_arn(&consumer)
            .shard_id(SHARD0)
            .starting_position(position.clone())
            .send()
            .await
            .unwrap();
        subscriptions += 1;
        let (got, cont, end) = drain(out, Duration::from_secs(5)).await;
        assert_eq!(
            end,
            Ok(()),
            "the subscription ends cleanly at its configured length"
        );
        assert!(t.elapsed() >= Duration::from_millis(1400) || received.len() + got.len() == 40);
        received.extend(got);
        position = starting(ShardIteratorType::AfterSequenceNumber, cont);
        // SubscribeToShard may be called once per second per consumer and shard.
        tokio::time::sleep(Duration::from_millis(1000)).await;
    }
    producer.await.unwrap();
    let expected: Vec<String> = (0..40).map(|i| format!("m{i:02}")).collect();
    assert_eq!(
        received, expected,
        "every record once, in order, across {subscriptions} subscriptions"
    );
    assert!(
        subscriptions >= 2,
        "the run spanned more than one subscription"
    );
    let s = emu
        .kinesis()
        .stats
        .snapshot()
        .get("s", SHARD0, Api::SubscribeToShard);
    assert_eq!(s.records, 40);
    assert_eq!(s.calls, subscriptions);
}

#[tokio::test]
async fn subscribe_rate_resource_in_use_and_take_over() {
    let emu = emulator(&[
        "stream_activation=0s",
        "consumer_activation=0s",
        "subscribe_takeover_after=2s",
    ])
    .await;
    let c = client_no_retry(&emu);
    create_stream(&c, "s", 1).await;
    let consumer =
        register_active(&c, "arn:aws:kinesis:us-east-1:000000000000:stream/s", "efo").await;
    let sub = || {
        c.subscribe_to_shard()
            .consumer_arn(&consumer)
            .shard_id(SHARD0)
            .starting_position(starting(ShardIteratorType::Latest, None))
    };
    let first = sub().send().await.unwrap();
    let e = sub().send().await.unwrap_err();
    assert_eq!(
        code(&e),
        "LimitExceededException",
        "a second call within a second"
    );
    tokio::time::sleep(Duration::from_millis(1050)).await;
    let e = sub().send().await.unwrap_err();
    assert_eq!(
        code(&e),
        "ResourceInUseException",
        "within the take-over window"
    );
    assert!(message(&e).starts_with("Another active subscription exists for this consumer"));
    tokio::time::sleep(Duration::from_millis(1050)).await;
    let second = sub()
        .send()
        .await
        .expect("after the window a new subscription takes over");
    let (_, _, end) = drain(first, Duration::from_secs(2)).await;
    assert_eq!(
        end,
        Err("ResourceInUseException".into()),
        "the old subscription ends with ResourceInUse"
    );
    c.put_record()
        .stream_name("s")
        .partition_key("k")
        .data(Blob::new("x"))
        .send()
        .await
        .unwrap();
    // Deregistering the consumer ends its subscription.
    let watcher = tokio::spawn(drain(second, Duration::from_secs(3)));
    tokio::time::sleep(Duration::from_millis(200)).await;
    c.deregister_stream_consumer()
        .consumer_arn(&consumer)
        .send()
        .await
        .unwrap();
    let (got, _, end) = watcher.await.unwrap();
    assert_eq!(got, ["x"]);
    assert_eq!(end, Err("ResourceNotFoundException".into()));
    let stats = emu
        .kinesis()
        .stats
        .snapshot()
        .get("s", SHARD0, Api::SubscribeToShard);
    assert_eq!((stats.calls, stats.throttled), (4, 1));
}
