//! The producer: one pacer hands out seqs at the knob's rate, and each consumer's queue has its
//! own sender, so every queue gets every message and a slow (or throttled) queue never holds up
//! the others. A body carries the run, the seq and the moment its send began.
//!
//! A standard queue's sender sends several calls at once (up to [`IN_FLIGHT`]); a FIFO queue's
//! sends one call at a time per message group, since a group's order is the order the queue
//! receives its sends in. With batching on, a sender gathers up to 10 messages (one group's, on a
//! FIFO queue) for at most [`LINGER`] into one SendMessageBatch.
//!
//! A body's send time is the moment the pacer handed the message to its queue's sender, so the
//! time it waits there (a batch's linger, a throttled queue's back-off) is in every latency
//! measured.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::state::{ConsumerState, Knobs, ProducerState};

/// Seqs a queue's sender may hold before the pacer counts the queue as behind.
pub const BUFFER: usize = 8192;
/// Send calls a standard queue's sender keeps in flight at once.
pub const IN_FLIGHT: usize = 64;
/// With batching on, how long a sender gathers messages for one batch at most: latlab's choice
/// (an assumption, not a figure of AWS's), short beside SQS's own latency.
pub const LINGER: Duration = Duration::from_millis(50);

/// A message handed to a sender: its seq and when (microseconds since the epoch).
pub type Handed = (u64, i64);

/// Everything a sender needs.
#[derive(Clone)]
pub struct Producing {
    pub client: Client,
    pub run: String,
    pub payload: u64,
    pub knobs: Arc<Knobs>,
    pub producer: Arc<ProducerState>,
    pub clock: Instant,
}

impl Producing {
    fn second(&self) -> u64 {
        self.clock.elapsed().as_secs()
    }
}

/// A queue the pacer feeds.
pub struct Feed {
    pub consumer: Arc<ConsumerState>,
    pub tx: mpsc::Sender<Handed>,
    /// The sender: once cancelled, it ends when its sends in flight have been answered.
    pub sender: Option<tokio::task::JoinHandle<()>>,
}

/// Starts a sender for `consumer`'s queue; the pacer feeds it through the returned feed.
pub fn feed(p: &Producing, consumer: &Arc<ConsumerState>, cancel: &CancellationToken) -> Feed {
    let (tx, rx) = mpsc::channel(BUFFER);
    let p = p.clone();
    let c = consumer.clone();
    let cancel = cancel.clone();
    let sender = if consumer.fifo() {
        tokio::spawn(fifo_sender(p, c, rx, cancel))
    } else {
        tokio::spawn(standard_sender(p, c, rx, cancel))
    };
    Feed {
        consumer: consumer.clone(),
        tx,
        sender: Some(sender),
    }
}

/// Hands out seqs at the knob's rate to every feed until cancelled (or `until` passes).
pub async fn pace(
    p: Producing,
    feeds: Arc<parking_lot::Mutex<Vec<Feed>>>,
    cancel: CancellationToken,
    until: Option<Duration>,
) {
    let started = Instant::now();
    let mut seq: u64 = 0;
    // Seqs are due at `rate` a second from (`from`, `base`), reset when the rate changes.
    let mut rate = p.knobs.rate();
    let mut from = Instant::now();
    let mut base = 0u64;
    *p.producer.status.lock() = format!("sending {rate}/s");
    let mut tick = tokio::time::interval(Duration::from_millis(5));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tick.tick() => {}
        }
        if until.is_some_and(|u| started.elapsed() >= u) {
            *p.producer.status.lock() = "done: the run's producing time is over".into();
            break;
        }
        let now_rate = p.knobs.rate();
        if now_rate != rate {
            rate = now_rate;
            from = Instant::now();
            base = seq;
            *p.producer.status.lock() = format!("sending {rate}/s");
        }
        let due = base + (from.elapsed().as_secs_f64() * f64::from(rate)) as u64;
        let feeds = feeds.lock();
        let now_us = latlab_core::clock::now_micros();
        while seq < due {
            for f in feeds.iter() {
                if f.tx.try_send((seq, now_us)).is_err() {
                    p.producer.metrics.lock().behind += 1;
                }
            }
            seq += 1;
        }
        drop(feeds);
        p.producer.metrics.lock().produced = seq;
    }
}

/// The next messages to send: one, or with batching up to 10 gathered for at most [`LINGER`]
/// from the first. Empty when the feed is closed or the run cancelled.
async fn take(
    rx: &mut mpsc::Receiver<Handed>,
    batching: bool,
    cancel: &CancellationToken,
) -> Vec<Handed> {
    let first = tokio::select! {
        _ = cancel.cancelled() => return Vec::new(),
        s = rx.recv() => match s { Some(s) => s, None => return Vec::new() },
    };
    let mut out = vec![first];
    if !batching {
        return out;
    }
    let until = tokio::time::Instant::now() + LINGER;
    while out.len() < 10 {
        match rx.try_recv() {
            Ok(s) => out.push(s),
            Err(mpsc::error::TryRecvError::Disconnected) => break,
            Err(mpsc::error::TryRecvError::Empty) => {
                match tokio::time::timeout_at(until, rx.recv()).await {
                    Ok(Some(s)) => out.push(s),
                    _ => break,
                }
            }
        }
    }
    out
}

async fn standard_sender(
    p: Producing,
    c: Arc<ConsumerState>,
    mut rx: mpsc::Receiver<Handed>,
    cancel: CancellationToken,
) {
    let permits = Arc::new(Semaphore::new(IN_FLIGHT));
    loop {
        let seqs = take(&mut rx, p.knobs.batching(), &cancel).await;
        if seqs.is_empty() {
            break;
        }
        let Ok(permit) = permits.clone().acquire_owned().await else {
            break;
        };
        let (p, c) = (p.clone(), c.clone());
        tokio::spawn(async move {
            send(&p, &c, &seqs, None).await;
            drop(permit);
        });
    }
    // Let the sends in flight finish.
    let _ = permits.acquire_many(IN_FLIGHT as u32).await;
}

async fn fifo_sender(
    p: Producing,
    c: Arc<ConsumerState>,
    mut rx: mpsc::Receiver<Handed>,
    cancel: CancellationToken,
) {
    // One task per message group, each sending its group's seqs in order.
    let mut groups: HashMap<u32, mpsc::Sender<Handed>> = HashMap::new();
    let mut tasks = Vec::new();
    while let Some(handed) = tokio::select! {
        _ = cancel.cancelled() => None,
        s = rx.recv() => s,
    } {
        let group = (handed.0 % u64::from(p.knobs.groups())) as u32;
        let tx = groups.entry(group).or_insert_with(|| {
            let (tx, mut grx) = mpsc::channel::<Handed>(BUFFER);
            let (p, c, cancel) = (p.clone(), c.clone(), cancel.clone());
            tasks.push(tokio::spawn(async move {
                loop {
                    let seqs = take(&mut grx, p.knobs.batching(), &cancel).await;
                    if seqs.is_empty() {
                        break;
                    }
                    send(&p, &c, &seqs, Some(group)).await;
                }
            }));
            tx
        });
        if tx.try_send(handed).is_err() {
            p.producer.metrics.lock().behind += 1;
        }
    }
    drop(groups);
    for t in tasks {
        let _ = t.await;
    }
}

/// Sends `seqs` to `c`'s queue (one SendMessage, or a SendMessageBatch) and counts what was
/// acknowledged.
async fn send(p: &Producing, c: &Arc<ConsumerState>, handed: &[Handed], group: Option<u32>) {
    let url = c.queue_url.lock().clone();
    let seqs: Vec<u64> = handed.iter().map(|h| h.0).collect();
    let body = |i: usize| super::body::encode(&p.run, handed[i].0, handed[i].1, p.payload);
    let dedup = |seq: u64| format!("{}-{seq}", p.run);
    let started = Instant::now();
    let outcome: Result<Vec<(u64, bool)>, String> = if seqs.len() == 1 {
        let mut req = p
            .client
            .send_message()
            .queue_url(&url)
            .message_body(body(0));
        if let Some(g) = group {
            req = req
                .message_group_id(format!("g{g}"))
                .message_deduplication_id(dedup(seqs[0]));
        }
        match req.send().await {
            Ok(_) => Ok(vec![(seqs[0], true)]),
            Err(e) => {
                p.producer.sdk.escaped(&crate::aws::error_code(&e));
                Err(crate::aws::error_line(&e))
            }
        }
    } else {
        let entries: Vec<SendMessageBatchRequestEntry> = seqs
            .iter()
            .enumerate()
            .filter_map(|(i, seq)| {
                let mut e = SendMessageBatchRequestEntry::builder()
                    .id(format!("m{i}"))
                    .message_body(body(i));
                if let Some(g) = group {
                    e = e
                        .message_group_id(format!("g{g}"))
                        .message_deduplication_id(dedup(*seq));
                }
                e.build().ok()
            })
            .collect();
        match p
            .client
            .send_message_batch()
            .queue_url(&url)
            .set_entries(Some(entries))
            .send()
            .await
        {
            Ok(out) => {
                let ok: std::collections::HashSet<&str> =
                    out.successful().iter().map(|s| s.id()).collect();
                for f in out.failed() {
                    p.producer.sdk.escaped(f.code());
                }
                Ok(seqs
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (*s, ok.contains(format!("m{i}").as_str())))
                    .collect())
            }
            Err(e) => {
                p.producer.sdk.escaped(&crate::aws::error_code(&e));
                Err(crate::aws::error_line(&e))
            }
        }
    };
    let second = p.second();
    let mut m = p.producer.metrics.lock();
    m.calls += 1;
    m.send_latency
        .record(started.elapsed().as_micros() as u64, second);
    match outcome {
        Ok(done) => {
            let mut ledger = c.ledger.lock();
            for (seq, ok) in done {
                if ok {
                    m.acknowledged += 1;
                    ledger.sent(seq, second);
                } else {
                    m.failed += 1;
                }
            }
        }
        Err(line) => {
            m.failed += seqs.len() as u64;
            drop(m);
            *p.producer.last_error.lock() = Some(line);
        }
    }
}
