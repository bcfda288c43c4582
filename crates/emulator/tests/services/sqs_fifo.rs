//! The emulator's SQS FIFO queues through aws-sdk-sqs: each message group in order, a group held
//! while a message of it is in flight, deduplication, and the calls a second per action (with
//! batches carrying ten times the messages).

use crate::common;

use std::time::Duration;

use aws_sdk_sqs::types::{QueueAttributeName, SendMessageBatchRequestEntry};
use common::{code, emulator, message};

use crate::sqs_emulator::{attributes, queue, receive, sqs};

#[tokio::test]
async fn fifo_keeps_each_group_in_order_holds_a_group_in_flight_and_deduplicates() {
    let emu = emulator(&[]).await;
    emu.freeze_clock();
    let c = sqs(&emu);
    let url = queue(&c, "q.fifo", &[(QueueAttributeName::FifoQueue, "true")]).await;
    let a = attributes(&c, &url).await;
    assert_eq!(
        (
            a["FifoQueue"].as_str(),
            a["ContentBasedDeduplication"].as_str()
        ),
        ("true", "false")
    );
    let e = c
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .message_deduplication_id("d")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "MissingParameter");
    assert!(message(&e).contains("MessageGroupId"));
    let e = c
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .message_group_id("g")
        .send()
        .await
        .unwrap_err();
    assert!(
        message(&e).contains("ContentBasedDeduplication"),
        "{}",
        message(&e)
    );
    let e = c
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .message_group_id("g")
        .message_deduplication_id("d")
        .delay_seconds(5)
        .send()
        .await
        .unwrap_err();
    assert!(message(&e).contains("DelaySeconds"), "{}", message(&e));
    // Five messages in each of two groups, interleaved.
    let mut seqs = Vec::new();
    for i in 0..5 {
        for g in ["a", "b"] {
            let out = c
                .send_message()
                .queue_url(&url)
                .message_body(format!("{g}{i}"))
                .message_group_id(g)
                .message_deduplication_id(format!("{g}{i}"))
                .send()
                .await
                .unwrap();
            seqs.push(out.sequence_number.unwrap());
        }
    }
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "sequence numbers rise"
    );
    // One at a time: a, then b (a is held while a0 is in flight), then nothing.
    let first = receive(&c, &url, 1).await.remove(0);
    let second = receive(&c, &url, 1).await.remove(0);
    assert_eq!((first.body(), second.body()), (Some("a0"), Some("b0")));
    assert!(
        receive(&c, &url, 10).await.is_empty(),
        "both groups have a message in flight"
    );
    c.delete_message()
        .queue_url(&url)
        .receipt_handle(first.receipt_handle().unwrap())
        .send()
        .await
        .unwrap();
    let next: Vec<String> = receive(&c, &url, 10)
        .await
        .iter()
        .map(|m| m.body().unwrap().to_string())
        .collect();
    assert_eq!(
        next,
        ["a1", "a2", "a3", "a4"],
        "group a in order, b still held"
    );
    // Deduplication: the same id within 5 minutes is the same message.
    let id1 = c
        .send_message()
        .queue_url(&url)
        .message_body("dup")
        .message_group_id("c")
        .message_deduplication_id("same")
        .send()
        .await
        .unwrap()
        .message_id;
    let id2 = c
        .send_message()
        .queue_url(&url)
        .message_body("dup")
        .message_group_id("c")
        .message_deduplication_id("same")
        .send()
        .await
        .unwrap()
        .message_id;
    assert_eq!(id1, id2);
    emu.advance_clock(Duration::from_secs(299));
    let id3 = c
        .send_message()
        .queue_url(&url)
        .message_body("dup")
        .message_group_id("c")
        .message_deduplication_id("same")
        .send()
        .await
        .unwrap()
        .message_id;
    assert_eq!(id1, id3, "still within 5 minutes");
    emu.advance_clock(Duration::from_secs(2));
    let id4 = c
        .send_message()
        .queue_url(&url)
        .message_body("dup")
        .message_group_id("c")
        .message_deduplication_id("same")
        .send()
        .await
        .unwrap()
        .message_id;
    assert_ne!(id1, id4);
    // Content-based: the body's SHA-256.
    let cb = queue(
        &c,
        "cb.fifo",
        &[
            (QueueAttributeName::FifoQueue, "true"),
            (QueueAttributeName::ContentBasedDeduplication, "true"),
        ],
    )
    .await;
    let x = c
        .send_message()
        .queue_url(&cb)
        .message_body("same body")
        .message_group_id("g")
        .send()
        .await
        .unwrap()
        .message_id;
    let y = c
        .send_message()
        .queue_url(&cb)
        .message_body("same body")
        .message_group_id("g")
        .send()
        .await
        .unwrap()
        .message_id;
    let z = c
        .send_message()
        .queue_url(&cb)
        .message_body("other body")
        .message_group_id("g")
        .send()
        .await
        .unwrap()
        .message_id;
    assert_eq!(x, y);
    assert_ne!(x, z);
    assert_eq!(emu.sqs().stats().queues["cb.fifo"].sent, 2);
}

#[tokio::test]
async fn fifo_allows_300_calls_a_second_per_action_and_batching_carries_ten_times_the_messages() {
    let emu = emulator(&[]).await;
    emu.freeze_clock();
    let c = sqs(&emu);
    let url = queue(
        &c,
        "q.fifo",
        &[
            (QueueAttributeName::FifoQueue, "true"),
            (QueueAttributeName::ContentBasedDeduplication, "true"),
        ],
    )
    .await;
    let one = |i: usize| {
        c.send_message()
            .queue_url(&url)
            .message_body(format!("m{i}"))
            .message_group_id("g")
            .send()
    };
    for i in 0..300 {
        one(i).await.expect("within 300 a second");
    }
    let e = one(300).await.unwrap_err();
    assert_eq!(code(&e), "RequestThrottled");
    assert!(e.into_service_error().is_request_throttled());
    emu.advance_clock(Duration::from_secs(1));
    // 300 batches of 10 in the next second: 3,000 messages, no throttle.
    for b in 0..300 {
        let mut req = c.send_message_batch().queue_url(&url);
        for i in 0..10 {
            req = req.entries(
                SendMessageBatchRequestEntry::builder()
                    .id(format!("e{i}"))
                    .message_body(format!("b{b}-{i}"))
                    .message_group_id("g")
                    .build()
                    .unwrap(),
            );
        }
        assert_eq!(
            req.send()
                .await
                .expect("batch within the quota")
                .successful
                .len(),
            10
        );
    }
    assert_eq!(emu.sqs().stats().queues["q.fifo"].sent, 3_300);
    assert_eq!(emu.sqs().stats().queues["q.fifo"].throttled, 1);
    // High throughput mode lifts the quota.
    let ht = queue(
        &c,
        "ht.fifo",
        &[
            (QueueAttributeName::FifoQueue, "true"),
            (QueueAttributeName::ContentBasedDeduplication, "true"),
            (QueueAttributeName::DeduplicationScope, "messageGroup"),
            (QueueAttributeName::FifoThroughputLimit, "perMessageGroupId"),
        ],
    )
    .await;
    for i in 0..400 {
        c.send_message()
            .queue_url(&ht)
            .message_body(format!("m{i}"))
            .message_group_id(format!("g{}", i % 8))
            .send()
            .await
            .expect("high throughput");
    }
}
