//! The SQS lab's probes against the embedded emulator, every call through aws-sdk-sqs over HTTP:
//! what a user would watch the lab show. Short polling answers empty while messages wait and long
//! polling does not; a FIFO queue keeps each group's order; processing past the visibility
//! timeout brings redeliveries; a FIFO queue throttles past 300 sends a second and stops when
//! the producer batches. Every consumer's count adds up: received + lost + in flight + unread =
//! sent.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use latlab::aws::{Clients, RetrySettings, Target};
use latlab::labs::sqs::config::{ConsumerKind, ConsumerSpec, SqsScenario};
use latlab::labs::sqs::{ConsumerFigures, Probes};
use latlab::metrics::SdkStats;
use latlab_emulator::Emulator;

/// The longest a test waits for its consumers to read what was sent once the producer stops:
/// `stop` returns as soon as they have, so this bounds a loaded machine's wait and costs an
/// idle one nothing (5 s was once too short with two busy cores).
const DRAIN: Duration = Duration::from_secs(30);

async fn probes(emu: &Emulator, scenario: &SqsScenario) -> Probes {
    let clients = Clients::connect(
        &Target::Emulator {
            url: emu.endpoint_url(),
        },
        std::time::Instant::now(),
    )
    .await
    .unwrap();
    let retry = RetrySettings::default();
    let n = std::sync::atomic::AtomicU32::new(0);
    Probes::start(
        Box::new(move |stats: &Arc<SdkStats>| {
            let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            latlab::labs::sqs::client::client(&clients, &retry, &format!("c{i}"), stats.clone())
        }),
        "5e5e5e5e",
        scenario,
    )
    .await
    .expect("the probes start")
}

fn consumer(name: &str, kind: ConsumerKind) -> ConsumerSpec {
    ConsumerSpec {
        name: name.into(),
        kind,
    }
}

fn by_name<'a>(figures: &'a [ConsumerFigures], name: &str) -> &'a ConsumerFigures {
    figures.iter().find(|f| f.name == name).unwrap()
}

fn assert_adds_up(f: &ConsumerFigures) {
    let c = f.counts;
    assert!(
        c.adds_up(),
        "{}: received {} + lost {} + in flight {} + unread {} != sent {}",
        f.name,
        c.received,
        c.lost,
        c.in_flight,
        c.unread,
        c.sent
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_polls_answer_empty_while_messages_wait_and_long_polls_do_not() {
    let emu = common::emulator(&[]).await;
    let scenario = SqsScenario {
        rate: 50,
        consumers: vec![
            consumer("long", ConsumerKind::LongPoll { wait_secs: 20 }),
            consumer(
                "short",
                ConsumerKind::ShortPoll {
                    interval: Duration::from_millis(20),
                },
            ),
        ],
        ..SqsScenario::default()
    };
    let p = probes(&emu, &scenario).await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    p.stop(DRAIN, &latlab::labs::Hurry::new()).await;
    let figures = p.figures();
    let (long, short) = (by_name(&figures, "long"), by_name(&figures, "short"));
    println!(
        "short: {} receives, {} empty, {} of them while messages waited; long: {} receives, {} \
         empty",
        short.receive_calls,
        short.empty_receives,
        short.empty_while_waiting,
        long.receive_calls,
        long.empty_receives
    );
    assert!(long.counts.sent >= 100, "{:?}", long.counts);
    assert!(
        short.empty_while_waiting > 0,
        "short polling samples a subset of the servers: some polls miss waiting messages"
    );
    assert_eq!(
        long.empty_while_waiting, 0,
        "a long poll asks every server and answers when a message is there"
    );
    for f in [long, short] {
        assert_eq!(f.counts.received, f.counts.sent, "{}: all read", f.name);
        assert_eq!(f.counts.redelivered, 0);
        assert_adds_up(f);
    }
    assert!(p.cleanup().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_queue_keeps_each_groups_order() {
    let emu = common::emulator(&[]).await;
    let scenario = SqsScenario {
        rate: 100,
        groups: 5,
        consumers: vec![consumer("fifo", ConsumerKind::Fifo { wait_secs: 20 })],
        ..SqsScenario::default()
    };
    let p = probes(&emu, &scenario).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    p.stop(DRAIN, &latlab::labs::Hurry::new()).await;
    let figures = p.figures();
    let f = by_name(&figures, "fifo");
    assert!(f.counts.sent >= 200, "{:?}", f.counts);
    assert_eq!(f.counts.received, f.counts.sent);
    assert_eq!(f.out_of_order, 0, "every group in order");
    assert_adds_up(f);
    assert!(p.cleanup().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processing_past_the_visibility_timeout_brings_redeliveries_and_the_count_holds() {
    let emu = common::emulator(&[]).await;
    let scenario = SqsScenario {
        rate: 5,
        visibility: Duration::from_secs(1),
        processing: Duration::from_millis(1500),
        consumers: vec![consumer("slow", ConsumerKind::LongPoll { wait_secs: 1 })],
        ..SqsScenario::default()
    };
    let p = probes(&emu, &scenario).await;
    tokio::time::sleep(Duration::from_secs(6)).await;
    let mid = p.figures();
    let f = by_name(&mid, "slow");
    println!(
        "{:?}, visibility ran out {}",
        f.counts, f.visibility_ran_out
    );
    assert!(f.visibility_ran_out > 0, "processing 1.5 s outlasts 1 s");
    assert!(f.counts.redelivered > 0, "the queue handed them out again");
    assert!(f.counts.in_flight > 0 || f.counts.unread > 0);
    assert_adds_up(f);
    // Back to no processing: the consumer catches up and the count still holds.
    p.knobs
        .processing_ms
        .store(0, std::sync::atomic::Ordering::Relaxed);
    p.stop(DRAIN, &latlab::labs::Hurry::new()).await;
    let end = p.figures();
    let f = by_name(&end, "slow");
    assert_eq!(f.counts.received, f.counts.sent, "{:?}", f.counts);
    assert_adds_up(f);
    assert!(p.cleanup().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_queue_throttles_past_300_sends_a_second_and_batching_stops_it() {
    let emu = common::emulator(&[]).await;
    let scenario = SqsScenario {
        rate: 500,
        groups: 10,
        consumers: vec![consumer("fifo", ConsumerKind::Fifo { wait_secs: 1 })],
        ..SqsScenario::default()
    };
    let p = probes(&emu, &scenario).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let unbatched = p.producer.sdk.snapshot().counters.throttles;
    p.knobs
        .batching
        .store(true, std::sync::atomic::Ordering::Relaxed);
    // Let the sends throttled before the switch finish their retries.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let before = p.producer.sdk.snapshot().counters.throttles;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let batched = p.producer.sdk.snapshot().counters.throttles - before;
    println!("throttles: {unbatched} in 3 s without batching, {batched} in 3 s with it");
    assert!(unbatched > 0, "500 SendMessage calls a second exceed 300");
    assert_eq!(
        batched, 0,
        "batches of up to 10 need well under 300 calls a second"
    );
    p.stop(DRAIN, &latlab::labs::Hurry::new()).await;
    let figures = p.figures();
    assert_adds_up(by_name(&figures, "fifo"));
    assert!(p.cleanup().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lambda_on_a_queue_invokes_batches_and_counts_every_message() {
    let emu = common::emulator(&[]).await;
    let scenario = SqsScenario {
        rate: 100,
        consumers: vec![consumer(
            "lambda",
            ConsumerKind::Lambda {
                pollers: 5,
                batch_size: 10,
                window: Duration::ZERO,
            },
        )],
        ..SqsScenario::default()
    };
    let p = probes(&emu, &scenario).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    p.stop(DRAIN, &latlab::labs::Hurry::new()).await;
    let figures = p.figures();
    let f = by_name(&figures, "lambda");
    assert!(f.invocations > 0);
    assert_eq!(f.counts.received, f.counts.sent, "{:?}", f.counts);
    assert_adds_up(f);
    assert!(p.cleanup().await.is_empty());
}
