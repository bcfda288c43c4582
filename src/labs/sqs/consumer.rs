//! The consumers, each a real aws-sdk-sqs client on its own queue:
//! - a long poller: ReceiveMessage with the knob's wait (0: a short poll, asked again at once);
//! - a short poller: ReceiveMessage with no wait, every interval;
//! - a FIFO long poller, checking each message group's order;
//! - Lambda on a queue: its mapping's pollers, each long-polling 20 s and gathering a batch (up to
//!   the batch size, for up to the batching window) before it invokes the function with it.
//!
//! Each works on every message for the simulated processing time, then deletes it
//! (DeleteMessageBatch). A poller hands each batch it receives to a worker and receives again at
//! once (up to [`WORKERS`] batches at work), as a consumer with a worker pool does, so a message
//! whose visibility timeout runs out while it is worked on is received again: a redelivery.
//! Lambda's pollers each wait for their invocation, as the mapping's do; its other pollers receive
//! what comes back. A message whose processing ends after its visibility timeout ran out is
//! counted: the queue may have handed it out again, and the delete may not take.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::{DeleteMessageBatchRequestEntry, Message, MessageSystemAttributeName};
use tokio_util::sync::CancellationToken;

use super::config::ConsumerKind;
use super::state::{ConsumerState, Knobs};

/// What every consumer task needs.
#[derive(Clone)]
pub struct Consuming {
    pub client: Client,
    pub run: String,
    pub knobs: Arc<Knobs>,
    pub clock: Instant,
}

/// Lambda's long poll: the longest ReceiveMessage allows. AWS says the mapping long-polls but
/// not for how long; 20 s is the assumption (docs/emulator.md).
pub const LAMBDA_WAIT_SECS: i32 = 20;

/// Batches a poller has at work at once; it receives no more until one is done.
pub const WORKERS: usize = 16;

/// After a failed call, how long a consumer waits before the next (on top of the SDK's own
/// retries).
const ERROR_PAUSE: Duration = Duration::from_secs(1);

/// Starts `c`'s tasks; they stop when its token is cancelled.
pub fn start(cx: &Consuming, c: &Arc<ConsumerState>) {
    let kind = *c.kind.lock();
    match kind {
        ConsumerKind::Lambda { pollers, .. } => {
            for i in 0..pollers {
                tokio::spawn(lambda_poller(cx.clone(), c.clone(), i));
            }
        }
        _ => {
            tokio::spawn(poller(cx.clone(), c.clone()));
        }
    }
}

async fn pause(cancel: &CancellationToken, d: Duration) -> bool {
    tokio::select! {
        _ = cancel.cancelled() => false,
        _ = tokio::time::sleep(d) => true,
    }
}

/// One ReceiveMessage of up to `max` messages waiting `wait` seconds; the messages, or None after
/// a failure (said on the consumer's status).
async fn receive(cx: &Consuming, c: &ConsumerState, max: i32, wait: i32) -> Option<Vec<Message>> {
    let url = c.queue_url.lock().clone();
    let visibility = cx.knobs.visibility_secs() as i32;
    // Messages acknowledged before this call and not received: with one reader on the queue,
    // each of them is in the queue, visible (the lab sends no delay). Lambda's pollers read one
    // queue together, so one's empty answer may only mean another took the messages: not
    // counted for them.
    let lambda = matches!(*c.kind.lock(), ConsumerKind::Lambda { .. });
    let waiting = if lambda {
        0
    } else {
        c.ledger.lock().unreceived()
    };
    let answer = tokio::select! {
        _ = c.cancel.cancelled() => return None,
        a = cx
            .client
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(max)
            .wait_time_seconds(wait)
            .visibility_timeout(visibility)
            .message_system_attribute_names(MessageSystemAttributeName::MessageGroupId)
            .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
            .send() => a,
    };
    match answer {
        Ok(out) => {
            let msgs = out.messages.unwrap_or_default();
            let mut m = c.metrics.lock();
            m.receive_calls += 1;
            if msgs.is_empty() {
                m.empty_receives += 1;
                if waiting > 0 {
                    m.empty_while_waiting += 1;
                }
            }
            Some(msgs)
        }
        Err(e) => {
            c.sdk.escaped(&crate::aws::error_code(&e));
            let line = crate::aws::error_line(&e);
            c.set_status(format!("error: {line}"));
            *c.last_error.lock() = Some(line);
            None
        }
    }
}

/// Records what a receive (or an invocation) handed over at `at_us`; returns the messages that
/// were this run's, with the moment their visibility timeout runs out.
fn hand_over(
    cx: &Consuming,
    c: &ConsumerState,
    msgs: Vec<Message>,
    at_us: i64,
    received_at: Instant,
) -> Vec<(Message, Option<u64>, Instant)> {
    let second = cx.clock.elapsed().as_secs();
    let deadline = received_at + Duration::from_secs(u64::from(cx.knobs.visibility_secs()));
    let fifo = c.fifo();
    msgs.into_iter()
        .map(|m| {
            let seq = c.received(m.body().unwrap_or(""), &cx.run, at_us, second);
            if let (true, Some(seq)) = (fifo, seq) {
                let first = m
                    .attributes()
                    .and_then(|a| a.get(&MessageSystemAttributeName::ApproximateReceiveCount))
                    .is_none_or(|n| n == "1");
                let group = m
                    .attributes()
                    .and_then(|a| a.get(&MessageSystemAttributeName::MessageGroupId))
                    .and_then(|g| g.strip_prefix('g'))
                    .and_then(|g| g.parse::<usize>().ok());
                if let (true, Some(g)) = (first, group) {
                    c.check_order(seq, g);
                }
            }
            (m, seq, deadline)
        })
        .collect()
}

/// Works on `batch` for the processing time each, then deletes it; counts what finished.
async fn finish(cx: &Consuming, c: &ConsumerState, batch: Vec<(Message, Option<u64>, Instant)>) {
    if batch.is_empty() {
        return;
    }
    let work = cx.knobs.processing() * batch.len() as u32;
    if !work.is_zero() && !pause(&c.cancel, work).await {
        return;
    }
    let now = Instant::now();
    let late = batch.iter().filter(|(_, _, d)| now > *d).count() as u64;
    if late > 0 {
        c.metrics.lock().visibility_ran_out += late;
    }
    let url = c.queue_url.lock().clone();
    for chunk in batch.chunks(10) {
        let entries: Vec<DeleteMessageBatchRequestEntry> = chunk
            .iter()
            .enumerate()
            .filter_map(|(i, (m, _, _))| {
                DeleteMessageBatchRequestEntry::builder()
                    .id(format!("d{i}"))
                    .receipt_handle(m.receipt_handle().unwrap_or_default())
                    .build()
                    .ok()
            })
            .collect();
        let answer = cx
            .client
            .delete_message_batch()
            .queue_url(&url)
            .set_entries(Some(entries))
            .send()
            .await;
        match answer {
            Ok(out) => {
                let ok: std::collections::HashSet<&str> =
                    out.successful().iter().map(|s| s.id()).collect();
                let mut ledger = c.ledger.lock();
                let mut failed = 0;
                for (i, (_, seq, _)) in chunk.iter().enumerate() {
                    if ok.contains(format!("d{i}").as_str()) {
                        if let Some(seq) = seq {
                            ledger.finished(*seq);
                        }
                    } else {
                        failed += 1;
                    }
                }
                drop(ledger);
                c.metrics.lock().delete_failed += failed;
            }
            Err(e) => {
                c.sdk.escaped(&crate::aws::error_code(&e));
                c.metrics.lock().delete_failed += chunk.len() as u64;
                *c.last_error.lock() = Some(crate::aws::error_line(&e));
            }
        }
    }
}

/// A long, short or FIFO poller: receive, work, delete, again.
async fn poller(cx: Consuming, c: Arc<ConsumerState>) {
    let workers = Arc::new(tokio::sync::Semaphore::new(WORKERS));
    let mut next = Instant::now();
    loop {
        if c.cancel.is_cancelled() {
            break;
        }
        let permit = tokio::select! {
            _ = c.cancel.cancelled() => break,
            p = workers.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
        };
        let kind = *c.kind.lock();
        let (wait, interval) = match kind {
            ConsumerKind::LongPoll { .. } => (cx.knobs.wait_secs(), None),
            ConsumerKind::Fifo { wait_secs } => (wait_secs, None),
            ConsumerKind::ShortPoll { interval } => (0, Some(interval)),
            ConsumerKind::Lambda { .. } => return,
        };
        if let Some(interval) = interval {
            let now = Instant::now();
            if next > now && !pause(&c.cancel, next - now).await {
                break;
            }
            next = next.max(now) + interval;
        }
        // Its way of polling is the pane's title: the status says only that it works (or what
        // went wrong).
        c.set_status("receiving");
        let Some(msgs) = receive(&cx, &c, 10, wait as i32).await else {
            if c.cancel.is_cancelled() || !pause(&c.cancel, ERROR_PAUSE).await {
                break;
            }
            continue;
        };
        let batch = hand_over(
            &cx,
            &c,
            msgs,
            latlab_core::clock::now_micros(),
            Instant::now(),
        );
        let (cx, c) = (cx.clone(), c.clone());
        tokio::spawn(async move {
            finish(&cx, &c, batch).await;
            drop(permit);
        });
    }
    c.set_status("stopped");
}

/// One of a Lambda mapping's pollers: gathers a batch, invokes, deletes it.
async fn lambda_poller(cx: Consuming, c: Arc<ConsumerState>, index: u32) {
    loop {
        if c.cancel.is_cancelled() {
            break;
        }
        let ConsumerKind::Lambda {
            pollers,
            batch_size,
            window,
        } = *c.kind.lock()
        else {
            return;
        };
        if index >= pollers {
            // Fewer pollers now: this one rests until there are more again.
            if !pause(&c.cancel, Duration::from_millis(200)).await {
                break;
            }
            continue;
        }
        if index == 0 {
            c.set_status("receiving");
        }
        let mut batch: Vec<Message> = Vec::new();
        let mut first_at: Option<Instant> = None;
        loop {
            let want = (batch_size as usize - batch.len()).min(10) as i32;
            let wait = match first_at {
                None => LAMBDA_WAIT_SECS,
                Some(t) => window.saturating_sub(t.elapsed()).as_secs() as i32,
            };
            let Some(msgs) = receive(&cx, &c, want, wait).await else {
                if c.cancel.is_cancelled() || !pause(&c.cancel, ERROR_PAUSE).await {
                    break;
                }
                continue;
            };
            if !msgs.is_empty() && first_at.is_none() {
                first_at = Some(Instant::now());
            }
            batch.extend(msgs);
            let full = batch.len() >= batch_size as usize;
            let window_over = first_at.is_some_and(|t| t.elapsed() >= window);
            if !batch.is_empty() && (full || window_over) {
                break;
            }
            if c.cancel.is_cancelled() {
                break;
            }
        }
        if batch.is_empty() {
            continue;
        }
        // The invocation: the function is handed the batch now.
        let received_at = first_at.unwrap_or_else(Instant::now);
        {
            let mut m = c.metrics.lock();
            m.invocations += 1;
            m.batch_messages
                .record(batch.len() as u64, cx.clock.elapsed().as_secs());
        }
        let batch = hand_over(
            &cx,
            &c,
            batch,
            latlab_core::clock::now_micros(),
            received_at,
        );
        finish(&cx, &c, batch).await;
    }
    if index == 0 {
        c.set_status("stopped");
    }
}
