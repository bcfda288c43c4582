//! The emulator's SQS through aws-sdk-sqs: every operation latlab makes, and every quota at its
//! documented default. Time-based quotas (visibility timeout, retention, delay, deduplication,
//! the purge and deleted-name holds) are checked at their real values by moving the emulator's
//! clock forward instead of waiting.

use crate::common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry,
    MessageSystemAttributeName, QueueAttributeName, SendMessageBatchRequestEntry,
};
use common::{code, emulator, message};
use latlab_emulator::Emulator;

const MIB: usize = 1024 * 1024;

pub(crate) fn sqs(emu: &Emulator) -> aws_sdk_sqs::Client {
    common::sqs_client(&emu.endpoint_url())
}

pub(crate) async fn queue(
    c: &aws_sdk_sqs::Client,
    name: &str,
    attrs: &[(QueueAttributeName, &str)],
) -> String {
    let mut req = c.create_queue().queue_name(name);
    for (k, v) in attrs {
        req = req.attributes(k.clone(), *v);
    }
    req.send().await.expect("create queue").queue_url.unwrap()
}

pub(crate) async fn attributes(c: &aws_sdk_sqs::Client, url: &str) -> HashMap<String, String> {
    c.get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .expect("attributes")
        .attributes
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k.as_str().to_string(), v))
        .collect()
}

async fn send(c: &aws_sdk_sqs::Client, url: &str, body: &str) -> String {
    c.send_message()
        .queue_url(url)
        .message_body(body)
        .send()
        .await
        .expect("send")
        .message_id
        .unwrap()
}

pub(crate) async fn receive(
    c: &aws_sdk_sqs::Client,
    url: &str,
    max: i32,
) -> Vec<aws_sdk_sqs::types::Message> {
    c.receive_message()
        .queue_url(url)
        .max_number_of_messages(max)
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .wait_time_seconds(0)
        .send()
        .await
        .expect("receive")
        .messages
        .unwrap_or_default()
}

/// Receives (short polls, which may miss: a few tries) until `n` messages came back.
async fn receive_all(
    c: &aws_sdk_sqs::Client,
    url: &str,
    n: usize,
) -> Vec<aws_sdk_sqs::types::Message> {
    let mut got = Vec::new();
    for _ in 0..50 {
        got.extend(receive(c, url, 10).await);
        if got.len() >= n {
            break;
        }
    }
    got
}

fn receive_count(m: &aws_sdk_sqs::types::Message) -> u32 {
    m.attributes()
        .and_then(|a| a.get(&MessageSystemAttributeName::ApproximateReceiveCount))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[tokio::test]
async fn queues_are_created_found_listed_tagged_purged_and_deleted() {
    let emu = emulator(&[]).await;
    let c = sqs(&emu);
    let url = queue(&c, "orders", &[]).await;
    assert!(url.ends_with("/000000000000/orders"), "{url}");
    // The documented defaults.
    let a = attributes(&c, &url).await;
    assert_eq!(a["VisibilityTimeout"], "30");
    assert_eq!(a["MessageRetentionPeriod"], "345600", "4 days");
    assert_eq!(a["MaximumMessageSize"], "1048576", "1 MiB");
    assert_eq!(a["DelaySeconds"], "0");
    assert_eq!(a["ReceiveMessageWaitTimeSeconds"], "0");
    assert_eq!(a["QueueArn"], "arn:aws:sqs:us-east-1:000000000000:orders");
    assert!(
        !a.contains_key("FifoQueue"),
        "a standard queue has no FIFO attributes"
    );
    // The same name with the same attributes is the same queue; with others, an error.
    assert_eq!(queue(&c, "orders", &[]).await, url);
    let e = c
        .create_queue()
        .queue_name("orders")
        .attributes(QueueAttributeName::VisibilityTimeout, "5")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "QueueAlreadyExists");
    assert_eq!(
        c.get_queue_url()
            .queue_name("orders")
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap(),
        url
    );
    let e = c
        .get_queue_url()
        .queue_name("nope")
        .send()
        .await
        .unwrap_err();
    assert!(e.into_service_error().is_queue_does_not_exist());
    // Names and attributes are checked.
    let e = c.create_queue().queue_name("a.b").send().await.unwrap_err();
    assert_eq!(code(&e), "InvalidParameterValue");
    assert!(message(&e).contains("QueueName"), "{}", message(&e));
    let e = c
        .create_queue()
        .queue_name("plain.fifo")
        .send()
        .await
        .unwrap_err();
    assert!(message(&e).contains(".fifo"), "{}", message(&e));
    let e = c
        .create_queue()
        .queue_name("bad")
        .attributes(QueueAttributeName::MessageRetentionPeriod, "59")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidAttributeValue");
    assert!(
        message(&e).contains("MessageRetentionPeriod") && message(&e).contains("60 to 1209600"),
        "{}",
        message(&e)
    );
    // SetQueueAttributes.
    c.set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::VisibilityTimeout, "43200")
        .send()
        .await
        .unwrap();
    assert_eq!(
        attributes(&c, &url).await["VisibilityTimeout"],
        "43200",
        "12 hours"
    );
    let e = c
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::VisibilityTimeout, "43201")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidAttributeValue");
    // Tags.
    c.tag_queue()
        .queue_url(&url)
        .tags("latlab:run-id", "abcd1234")
        .send()
        .await
        .unwrap();
    let tags = c
        .list_queue_tags()
        .queue_url(&url)
        .send()
        .await
        .unwrap()
        .tags
        .unwrap();
    assert_eq!(tags["latlab:run-id"], "abcd1234");
    // ListQueues by prefix.
    queue(&c, "other", &[]).await;
    let listed = c
        .list_queues()
        .queue_name_prefix("ord")
        .send()
        .await
        .unwrap()
        .queue_urls
        .unwrap();
    assert_eq!(listed, vec![url.clone()]);
    // PurgeQueue: once a minute.
    send(&c, &url, "x").await;
    c.purge_queue().queue_url(&url).send().await.unwrap();
    assert_eq!(
        attributes(&c, &url).await["ApproximateNumberOfMessages"],
        "0"
    );
    let e = c.purge_queue().queue_url(&url).send().await.unwrap_err();
    assert!(e.into_service_error().is_purge_queue_in_progress());
    emu.advance_clock(Duration::from_secs(60));
    c.purge_queue().queue_url(&url).send().await.unwrap();
    // DeleteQueue; its name comes back after 60 s.
    c.delete_queue().queue_url(&url).send().await.unwrap();
    let e = c
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .send()
        .await
        .unwrap_err();
    assert!(e.into_service_error().is_queue_does_not_exist());
    let e = c
        .create_queue()
        .queue_name("orders")
        .send()
        .await
        .unwrap_err();
    assert!(e.into_service_error().is_queue_deleted_recently());
    emu.advance_clock(Duration::from_secs(60));
    queue(&c, "orders", &[]).await;
}

#[tokio::test]
async fn a_message_is_sent_received_and_deleted_with_its_attributes() {
    let emu = emulator(&[]).await;
    let c = sqs(&emu);
    let url = queue(&c, "q", &[]).await;
    let out = c
        .send_message()
        .queue_url(&url)
        .message_body("hello")
        .send()
        .await
        .unwrap();
    assert_eq!(
        out.md5_of_message_body.unwrap(),
        "5d41402abc4b2a76b9719d911017c592"
    );
    let got = receive_all(&c, &url, 1).await;
    assert_eq!(got.len(), 1);
    let m = &got[0];
    assert_eq!(m.body(), Some("hello"));
    assert_eq!(m.message_id(), out.message_id.as_deref());
    assert_eq!(receive_count(m), 1);
    let sent: i64 = m.attributes().unwrap()[&MessageSystemAttributeName::SentTimestamp]
        .parse()
        .unwrap();
    assert!((sent - latlab_core::clock::now_micros() / 1000).abs() < 60_000);
    // In flight: counted as not visible, not received again.
    let a = attributes(&c, &url).await;
    assert_eq!(
        (
            a["ApproximateNumberOfMessages"].as_str(),
            a["ApproximateNumberOfMessagesNotVisible"].as_str()
        ),
        ("0", "1")
    );
    c.delete_message()
        .queue_url(&url)
        .receipt_handle(m.receipt_handle().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(
        attributes(&c, &url).await["ApproximateNumberOfMessagesNotVisible"],
        "0"
    );
    assert!(receive_all(&c, &url, 1).await.is_empty());
    let e = c
        .delete_message()
        .queue_url(&url)
        .receipt_handle("not-a-handle")
        .send()
        .await
        .unwrap_err();
    assert!(e.into_service_error().is_receipt_handle_is_invalid());
    // Message attributes come back with the MD5 the SDKs check.
    c.send_message()
        .queue_url(&url)
        .message_body("with attributes")
        .message_attributes(
            "seq",
            aws_sdk_sqs::types::MessageAttributeValue::builder()
                .data_type("Number")
                .string_value("7")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let got = c
        .receive_message()
        .queue_url(&url)
        .message_attribute_names("All")
        .wait_time_seconds(1)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap();
    assert_eq!(
        got[0].message_attributes().unwrap()["seq"].string_value(),
        Some("7")
    );
    assert!(got[0].md5_of_message_attributes().is_some());
}

#[tokio::test]
async fn the_visibility_timeout_returns_an_unfinished_message_and_only_the_latest_receipt_counts() {
    let emu = emulator(&[]).await;
    emu.freeze_clock();
    let c = sqs(&emu);
    let url = queue(&c, "q", &[]).await;
    send(&c, &url, "work").await;
    let first = receive_all(&c, &url, 1).await.remove(0);
    emu.advance_clock(Duration::from_secs(29));
    assert!(receive_all(&c, &url, 1).await.is_empty(), "hidden for 30 s");
    emu.advance_clock(Duration::from_secs(1));
    let second = receive_all(&c, &url, 1).await.remove(0);
    assert_eq!(receive_count(&second), 2, "redelivered");
    // The first receipt no longer deletes it (and is no error); the latest does.
    c.delete_message()
        .queue_url(&url)
        .receipt_handle(first.receipt_handle().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(
        attributes(&c, &url).await["ApproximateNumberOfMessagesNotVisible"],
        "1"
    );
    // ChangeMessageVisibility: 0 makes it visible now; a message not in flight is refused.
    c.change_message_visibility()
        .queue_url(&url)
        .receipt_handle(second.receipt_handle().unwrap())
        .visibility_timeout(0)
        .send()
        .await
        .unwrap();
    let e = c
        .change_message_visibility()
        .queue_url(&url)
        .receipt_handle(second.receipt_handle().unwrap())
        .visibility_timeout(10)
        .send()
        .await
        .unwrap_err();
    assert!(e.into_service_error().is_message_not_inflight());
    let third = receive_all(&c, &url, 1).await.remove(0);
    assert_eq!(receive_count(&third), 3);
    let e = c
        .change_message_visibility()
        .queue_url(&url)
        .receipt_handle(third.receipt_handle().unwrap())
        .visibility_timeout(43_201)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidParameterValue");
    assert!(message(&e).contains("VisibilityTimeout"), "{}", message(&e));
    // A receive's own VisibilityTimeout.
    c.change_message_visibility()
        .queue_url(&url)
        .receipt_handle(third.receipt_handle().unwrap())
        .visibility_timeout(0)
        .send()
        .await
        .unwrap();
    let m = c
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(5)
        .wait_time_seconds(1)
        .send()
        .await
        .unwrap()
        .messages
        .unwrap();
    assert_eq!(m.len(), 1);
    emu.advance_clock(Duration::from_secs(5));
    assert_eq!(
        receive_all(&c, &url, 1).await.len(),
        1,
        "visible again after its own 5 s"
    );
    // The batch forms.
    let m = receive_all(&c, &url, 0).await;
    assert!(m.is_empty());
    emu.advance_clock(Duration::from_secs(30));
    let m = receive_all(&c, &url, 1).await.remove(0);
    let out = c
        .change_message_visibility_batch()
        .queue_url(&url)
        .entries(
            ChangeMessageVisibilityBatchRequestEntry::builder()
                .id("a")
                .receipt_handle(m.receipt_handle().unwrap())
                .visibility_timeout(60)
                .build()
                .unwrap(),
        )
        .entries(
            ChangeMessageVisibilityBatchRequestEntry::builder()
                .id("b")
                .receipt_handle("junk")
                .visibility_timeout(60)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(out.successful.len(), 1);
    assert_eq!(out.failed[0].code(), "ReceiptHandleIsInvalid");
    let out = c
        .delete_message_batch()
        .queue_url(&url)
        .entries(
            DeleteMessageBatchRequestEntry::builder()
                .id("a")
                .receipt_handle(m.receipt_handle().unwrap())
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(out.successful.len(), 1);
    assert_eq!(
        attributes(&c, &url).await["ApproximateNumberOfMessagesNotVisible"],
        "0"
    );
}

#[tokio::test]
async fn retention_and_delay_run_on_the_service_clock() {
    let emu = emulator(&[]).await;
    emu.freeze_clock();
    let c = sqs(&emu);
    let url = queue(&c, "q", &[]).await;
    send(&c, &url, "old").await;
    emu.advance_clock(Duration::from_secs(4 * 86_400 - 1));
    assert_eq!(
        attributes(&c, &url).await["ApproximateNumberOfMessages"],
        "1"
    );
    emu.advance_clock(Duration::from_secs(2));
    assert_eq!(
        attributes(&c, &url).await["ApproximateNumberOfMessages"],
        "0",
        "gone after 4 days"
    );
    // Retention from 60 s to 14 days.
    for (v, ok) in [("60", true), ("1209600", true), ("1209601", false)] {
        let r = c
            .set_queue_attributes()
            .queue_url(&url)
            .attributes(QueueAttributeName::MessageRetentionPeriod, v)
            .send()
            .await;
        assert_eq!(r.is_ok(), ok, "{v}");
    }
    // Delay up to 15 minutes.
    let e = c
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .delay_seconds(901)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidParameterValue");
    assert!(message(&e).contains("DelaySeconds"), "{}", message(&e));
    c.send_message()
        .queue_url(&url)
        .message_body("later")
        .delay_seconds(900)
        .send()
        .await
        .unwrap();
    assert_eq!(
        attributes(&c, &url).await["ApproximateNumberOfMessagesDelayed"],
        "1"
    );
    assert!(receive_all(&c, &url, 1).await.is_empty());
    emu.advance_clock(Duration::from_secs(900));
    assert_eq!(receive_all(&c, &url, 1).await.len(), 1);
}

#[tokio::test]
async fn sizes_batches_and_receive_parameters_are_limited_as_documented() {
    let emu = emulator(&[]).await;
    let c = sqs(&emu);
    let url = queue(&c, "q", &[]).await;
    // 1 MiB is the largest message.
    c.send_message()
        .queue_url(&url)
        .message_body("x".repeat(MIB))
        .send()
        .await
        .unwrap();
    let e = c
        .send_message()
        .queue_url(&url)
        .message_body("x".repeat(MIB + 1))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidParameterValue");
    assert!(message(&e).contains("1048576"), "{}", message(&e));
    c.purge_queue().queue_url(&url).send().await.unwrap();
    let entry = |id: &str, body: String| {
        SendMessageBatchRequestEntry::builder()
            .id(id)
            .message_body(body)
            .build()
            .unwrap()
    };
    // Ten entries a batch.
    let mut b = c.send_message_batch().queue_url(&url);
    for i in 0..10 {
        b = b.entries(entry(&format!("e{i}"), format!("m{i}")));
    }
    let out = b.send().await.unwrap();
    assert_eq!(out.successful.len(), 10);
    let mut b = c.send_message_batch().queue_url(&url);
    for i in 0..11 {
        b = b.entries(entry(&format!("e{i}"), format!("m{i}")));
    }
    assert!(
        b.send()
            .await
            .unwrap_err()
            .into_service_error()
            .is_too_many_entries_in_batch_request()
    );
    let e = c
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("a", "1".into()))
        .entries(entry("a", "2".into()))
        .send()
        .await
        .unwrap_err();
    assert!(e.into_service_error().is_batch_entry_ids_not_distinct());
    let e = c
        .send_message_batch()
        .queue_url(&url)
        .set_entries(Some(vec![]))
        .send()
        .await
        .unwrap_err();
    assert!(e.into_service_error().is_empty_batch_request());
    let e = c
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("a", "x".repeat(MIB / 2 + 1)))
        .entries(entry("b", "x".repeat(MIB / 2)))
        .send()
        .await
        .unwrap_err();
    assert!(
        e.into_service_error().is_batch_request_too_long(),
        "1 MiB a batch"
    );
    let e = c
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("bad id!", "x".into()))
        .send()
        .await
        .unwrap_err();
    assert!(e.into_service_error().is_invalid_batch_entry_id());
    // Receive: up to 10 messages, a wait of at most 20 s.
    let got = receive_all(&c, &url, 10).await;
    assert_eq!(got.len(), 10);
    let e = c
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(11)
        .send()
        .await
        .unwrap_err();
    assert!(
        message(&e).contains("MaxNumberOfMessages"),
        "{}",
        message(&e)
    );
    let e = c
        .receive_message()
        .queue_url(&url)
        .wait_time_seconds(21)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidParameterValue");
    assert!(
        message(&e).contains("WaitTimeSeconds") && message(&e).contains("20"),
        "{}",
        message(&e)
    );
    let del = got
        .iter()
        .enumerate()
        .fold(c.delete_message_batch().queue_url(&url), |b, (i, m)| {
            b.entries(
                DeleteMessageBatchRequestEntry::builder()
                    .id(format!("d{i}"))
                    .receipt_handle(m.receipt_handle().unwrap())
                    .build()
                    .unwrap(),
            )
        });
    assert_eq!(del.send().await.unwrap().successful.len(), 10);
}

#[tokio::test]
async fn a_long_poll_answers_when_a_message_arrives_and_a_short_poll_samples_servers() {
    let emu = emulator(&[]).await;
    let c = sqs(&emu);
    let url = queue(&c, "q", &[]).await;
    // A long poll waiting for a message that is sent 300 ms into it.
    let (c2, url2) = (c.clone(), url.clone());
    let started = Instant::now();
    let poll = tokio::spawn(async move {
        c2.receive_message()
            .queue_url(url2)
            .wait_time_seconds(20)
            .send()
            .await
            .unwrap()
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    send(&c, &url, "now").await;
    let got = poll.await.unwrap().messages.unwrap();
    assert_eq!(got[0].body(), Some("now"));
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "answered on arrival, not at the wait's end"
    );
    // With nothing to receive, it answers empty at the wait's end.
    c.delete_message()
        .queue_url(&url)
        .receipt_handle(got[0].receipt_handle().unwrap())
        .send()
        .await
        .unwrap();
    let started = Instant::now();
    let out = c
        .receive_message()
        .queue_url(&url)
        .wait_time_seconds(1)
        .send()
        .await
        .unwrap();
    assert!(out.messages.unwrap_or_default().is_empty());
    assert!(started.elapsed() >= Duration::from_millis(900));
    // Short polling: a message alone in the queue is missed by some first polls (each asks 2 of
    // the 4 servers) and never by the poll after a miss.
    let (mut missed_first, mut missed_twice) = (0, 0);
    for i in 0..200 {
        send(&c, &url, &format!("m{i}")).await;
        let mut polls = 0;
        let m = loop {
            polls += 1;
            let got = receive(&c, &url, 1).await;
            if let Some(m) = got.into_iter().next() {
                break m;
            }
            assert!(polls < 10);
        };
        missed_first += usize::from(polls > 1);
        missed_twice += usize::from(polls > 2);
        c.delete_message()
            .queue_url(&url)
            .receipt_handle(m.receipt_handle().unwrap())
            .send()
            .await
            .unwrap();
    }
    assert!(
        missed_first > 20 && missed_first < 180,
        "{missed_first} of 200 first polls came back empty"
    );
    assert_eq!(missed_twice, 0);
    let stats = emu.sqs().stats();
    assert_eq!(stats.queues["q"].empty_receives as usize, missed_first + 1);
}

#[tokio::test]
async fn in_flight_messages_are_capped_with_over_limit_for_a_short_poll_only() {
    // The cap is 120,000 (shown by --print-limits' test); 20 here, so the test stays short.
    let emu = emulator(&["sqs.max_in_flight_standard=20"]).await;
    let c = sqs(&emu);
    let url = queue(&c, "q", &[]).await;
    for i in 0..25 {
        send(&c, &url, &format!("m{i}")).await;
    }
    let got = receive_all(&c, &url, 20).await;
    assert_eq!(got.len(), 20);
    let e = c
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .unwrap_err();
    assert!(e.into_service_error().is_over_limit());
    let out = c
        .receive_message()
        .queue_url(&url)
        .wait_time_seconds(1)
        .send()
        .await
        .unwrap();
    assert!(
        out.messages.unwrap_or_default().is_empty(),
        "a long poll gets no error, and nothing"
    );
}

#[tokio::test]
async fn a_request_for_an_operation_sqs_lacks_or_with_a_body_that_is_not_json_is_refused() {
    let emu = emulator(&[]).await;
    for (target, body, want) in [
        ("AmazonSQS.NoSuchThing", "{}", "InvalidAction"),
        ("AmazonSQS.SendMessage", "not json", "MalformedQueryString"),
        ("AmazonSQS.SendMessage", "[1]", "MalformedQueryString"),
    ] {
        let (status, text) = common::raw(
            &emu,
            "POST",
            "/",
            &[
                ("Content-Type", "application/x-amz-json-1.0"),
                ("X-Amz-Target", target),
            ],
            body.as_bytes(),
        )
        .await;
        assert_eq!(status, 400, "{target}");
        assert!(
            text.contains(&format!("com.amazonaws.sqs#{want}")),
            "{target}: {text}"
        );
    }
}
