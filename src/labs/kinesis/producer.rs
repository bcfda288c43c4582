//! The producer: records at the asked rate, each payload carrying its `seq` and send time, in one
//! of two modes:
//!
//! - `put-record`: one PutRecord per record, at most `max_in_flight` at once (the seed's producer);
//! - `put-records`: records gathered for at most `linger` (or until `batch` records) and sent
//!   with PutRecords, as high-rate producers (the KPL, Firehose) do. A record's send time is when
//!   it was handed to the batcher, so the linger is part of every latency measured.
//!
//! A record the service refused (after the SDK's retries for PutRecord, per record for
//! PutRecords) is sent once more with the same `seq`, as the seed's producer did, so a duplicate
//! can reach the consumers exactly as it would in the field.
//!
//! The asked rate is a schedule: by time t, `rate * t` records are due. When the producer cannot
//! keep up (the in-flight cap, the shard's write limit, the CPU) it falls behind the schedule, and
//! how long it waited for the in-flight cap is counted; it never catches up by more than a
//! second's worth in a burst.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use aws_sdk_kinesis::Client;
use aws_sdk_kinesis::primitives::Blob;
use aws_sdk_kinesis::types::PutRecordsRequestEntry;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::Ctx;
use super::config::{ProducerMode, ProducerSpec};
use super::ledger::SeqNo;
use crate::aws::error_code;

/// The bytes of one PutRecords request at most (the service's limit is 10 MiB; partition keys
/// count too, at most 20 bytes each here).
const MAX_REQUEST_BYTES: usize = 10 * 1024 * 1024;

/// One record on its way: its seq and payload.
struct Pending {
    seq: u64,
    data: Vec<u8>,
    /// Sent once already and refused: this is its one re-send.
    resend: bool,
}

pub async fn run(ctx: Ctx, client: Client, spec: ProducerSpec, cancel: CancellationToken) {
    let in_flight = Arc::new(Semaphore::new(spec.max_in_flight as usize));
    let mut puts = tokio::task::JoinSet::new();
    let mut batch: Vec<Pending> = Vec::new();
    let mut batch_bytes = 0usize;
    let mut batch_started: Option<Instant> = None;
    // Refused records of a PutRecords batch come back here to be sent once more.
    let (retry_tx, mut retry_rx) = tokio::sync::mpsc::unbounded_channel::<Pending>();
    let shared = &ctx.shared;
    shared.producing.lock().0 = Some(shared.elapsed());
    shared.producing_cpu.lock().0 = Some(crate::metrics::cpu::process_seconds());
    let mut schedule = Schedule::new(shared.settings.lock().rate);
    let stop_at = spec.stop_after.map(|d| schedule.start + d);
    loop {
        let settings = shared.settings.lock().clone();
        schedule.set_rate(settings.rate);
        let now = Instant::now();
        // A run of a set length: records due at or after its end are not sent.
        let ended = stop_at.is_some_and(|end| now >= end);
        let due = schedule.due(stop_at.map_or(now, |end| now.min(end)));
        let mut made = 0u64;
        while made < due {
            let seq = shared.ledger.lock().allocate();
            let sent_us = latlab_core::clock::now_micros();
            let data = crate::labs::kinesis::payload::encode(
                seq,
                sent_us,
                &shared.run.run_id,
                settings.payload as usize,
            );
            made += 1;
            let record = Pending {
                seq,
                data,
                resend: false,
            };
            match settings.mode {
                ProducerMode::PutRecord => {
                    let Some(permit) = slot(&ctx, &in_flight).await else {
                        return;
                    };
                    let (ctx2, client) = (ctx.clone(), client.clone());
                    puts.spawn(async move {
                        let _permit = permit;
                        put_record(&ctx2, &client, record).await;
                    });
                }
                ProducerMode::PutRecords { batch: cap, .. } => {
                    // A request holds at most 10 MiB: a record that would overflow it starts
                    // the next one.
                    if batch_bytes + record.data.len() + 20 > MAX_REQUEST_BYTES {
                        let full = std::mem::take(&mut batch);
                        batch_bytes = 0;
                        batch_started = None;
                        send_batch(&ctx, &client, &in_flight, &mut puts, full, &retry_tx).await;
                    }
                    batch_started.get_or_insert_with(Instant::now);
                    batch_bytes += record.data.len() + 20;
                    batch.push(record);
                    if batch.len() >= cap as usize {
                        batch_bytes = 0;
                        let full = std::mem::take(&mut batch);
                        batch_started = None;
                        send_batch(&ctx, &client, &in_flight, &mut puts, full, &retry_tx).await;
                    }
                }
            }
            if cancel.is_cancelled() {
                break;
            }
        }
        schedule.sent(made);
        shared
            .producer
            .behind
            .store(schedule.behind(Instant::now()), Ordering::Relaxed);
        while let Ok(r) = retry_rx.try_recv() {
            batch_started.get_or_insert_with(Instant::now);
            batch_bytes += r.data.len() + 20;
            batch.push(r);
        }
        // A batch waits for its linger; after a switch to PutRecord (the `b` key), or once it is
        // full, it goes at once.
        let send_now = match settings.mode {
            ProducerMode::PutRecords { linger, batch: cap } => batch_started.is_some_and(|t| {
                t.elapsed() >= linger || batch.len() >= cap as usize || cancel.is_cancelled()
            }),
            ProducerMode::PutRecord => !batch.is_empty(),
        };
        if send_now {
            let full = std::mem::take(&mut batch);
            batch_bytes = 0;
            batch_started = None;
            send_batch(&ctx, &client, &in_flight, &mut puts, full, &retry_tx).await;
        }
        while puts.try_join_next().is_some() {}
        if cancel.is_cancelled() || ended || shared.producer.unsupported.lock().is_some() {
            break;
        }
        let mut wake = schedule.next_due(Instant::now());
        if let Some(end) = stop_at {
            wake = wake.min(end);
        }
        if let (ProducerMode::PutRecords { linger, .. }, Some(t)) = (settings.mode, batch_started) {
            wake = wake.min(t + linger);
        }
        tokio::select! {
            _ = cancel.cancelled() => {}
            _ = latlab_core::shaping::sleep_until(wake) => {}
        }
    }
    shared.producing.lock().1 = Some(shared.elapsed());
    shared.producing_cpu.lock().1 = Some(crate::metrics::cpu::process_seconds());
    // Records already handed over are sent and awaited: they must be accounted for.
    if !batch.is_empty() {
        send_batch(&ctx, &client, &in_flight, &mut puts, batch, &retry_tx).await;
    }
    loop {
        while puts.join_next().await.is_some() {}
        let mut again = Vec::new();
        while let Ok(r) = retry_rx.try_recv() {
            again.push(r);
        }
        if again.is_empty() {
            break;
        }
        send_batch(&ctx, &client, &in_flight, &mut puts, again, &retry_tx).await;
    }
    shared.producer.behind.store(0, Ordering::Relaxed);
}

/// The asked rate as a schedule of due records; re-based when the rate changes.
struct Schedule {
    rate: f64,
    start: Instant,
    sent: u64,
}

impl Schedule {
    fn new(rate: f64) -> Schedule {
        Schedule {
            rate,
            start: Instant::now(),
            sent: 0,
        }
    }

    fn set_rate(&mut self, rate: f64) {
        if rate != self.rate && rate > 0.0 {
            *self = Schedule::new(rate);
        }
    }

    /// Records due by `now`: the k-th (from 0) is due at k / rate, and counts once that time has
    /// passed, so a run of exactly N seconds at R records/s sends N x R records.
    fn owed(&self, now: Instant) -> u64 {
        (now.duration_since(self.start).as_secs_f64() * self.rate).ceil() as u64
    }

    /// Records due now; a backlog over one second's worth is forgiven (the shortfall shows as
    /// the achieved rate, not as a burst later).
    fn due(&mut self, now: Instant) -> u64 {
        let owed = self.owed(now);
        let second = self.rate.ceil().max(1.0) as u64;
        if owed > self.sent + second {
            self.sent = owed - second;
        }
        owed.saturating_sub(self.sent)
    }

    fn sent(&mut self, n: u64) {
        self.sent += n;
    }

    /// Records due and not yet handed over.
    fn behind(&self, now: Instant) -> u64 {
        self.owed(now).saturating_sub(self.sent)
    }

    fn next_due(&self, now: Instant) -> Instant {
        let at = self.start + Duration::from_secs_f64(self.sent as f64 / self.rate);
        at.max(now + Duration::from_micros(100))
    }
}

/// A free in-flight slot, waiting for one when the cap is reached (the wait is counted: it is
/// why a producer falls short of its rate). None once the semaphore is closed.
async fn slot(ctx: &Ctx, in_flight: &Arc<Semaphore>) -> Option<tokio::sync::OwnedSemaphorePermit> {
    if let Ok(p) = in_flight.clone().try_acquire_owned() {
        return Some(p);
    }
    let waited = Instant::now();
    let p = in_flight.clone().acquire_owned().await.ok()?;
    ctx.shared
        .producer
        .cap_wait_us
        .fetch_add(waited.elapsed().as_micros() as u64, Ordering::Relaxed);
    Some(p)
}

/// Sends a PutRecords batch as one request in flight.
async fn send_batch(
    ctx: &Ctx,
    client: &Client,
    in_flight: &Arc<Semaphore>,
    puts: &mut tokio::task::JoinSet<()>,
    batch: Vec<Pending>,
    retry: &tokio::sync::mpsc::UnboundedSender<Pending>,
) {
    if batch.is_empty() {
        return;
    }
    let Some(permit) = slot(ctx, in_flight).await else {
        return;
    };
    let (ctx, client, retry) = (ctx.clone(), client.clone(), retry.clone());
    puts.spawn(async move {
        let _permit = permit;
        put_records(&ctx, &client, batch, &retry).await;
    });
}

/// The record was stored: it counts as acknowledged where the service put it.
fn acknowledged(ctx: &Ctx, seq: u64, started: Instant, shard: Option<&str>, kseq: Option<&str>) {
    let shared = &ctx.shared;
    shared
        .producer
        .put_latency
        .lock()
        .record(started.elapsed().as_micros() as u64, shared.second());
    shared.producer.acked.fetch_add(1, Ordering::Relaxed);
    let shard = shard.map_or(0, |id| ctx.shard_index(id));
    shared
        .ledger
        .lock()
        .ack(seq, shard, kseq.and_then(SeqNo::parse));
}

/// Answers in a row, saying the endpoint lacks the put operation, before the producer stops.
const LACKING_STRIKES: u32 = 2;

/// A put failed after the SDK's retries: its line is kept for the screen and the report; an
/// endpoint that answers as one lacking the operation twice in a row stops the producer.
fn put_failed<E>(
    ctx: &Ctx,
    op: &str,
    e: &aws_smithy_runtime_api::client::result::SdkError<E, aws_smithy_runtime_api::http::Response>,
) where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
{
    let p = &ctx.shared.producer;
    *p.last_error.lock() = Some(format!("{op}: {}", crate::aws::error_line(e)));
    match crate::aws::unsupported(e) {
        Some(answered) => {
            if p.lacking.fetch_add(1, Ordering::Relaxed) + 1 >= LACKING_STRIKES {
                let mut unsupported = p.unsupported.lock();
                if unsupported.is_none() {
                    let line = format!("{}: {op} answered {answered}", super::state::UNSUPPORTED);
                    ctx.shared.log(format!("producer: {line}"));
                    *unsupported = Some(line);
                }
            }
        }
        None => p.lacking.store(0, Ordering::Relaxed),
    }
}

/// The record was refused for good: sent once more, or counted as never stored.
fn refused(ctx: &Ctx, record: Pending) -> Option<Pending> {
    let p = &ctx.shared.producer;
    if record.resend {
        p.failed.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    p.resent.fetch_add(1, Ordering::Relaxed);
    let sent_us = latlab_core::clock::now_micros();
    Some(Pending {
        data: crate::labs::kinesis::payload::encode(
            record.seq,
            sent_us,
            &ctx.shared.run.run_id,
            record.data.len(),
        ),
        resend: true,
        ..record
    })
}

async fn put_record(ctx: &Ctx, client: &Client, record: Pending) {
    let shared = &ctx.shared;
    let mut record = record;
    loop {
        let started = Instant::now();
        shared.producer.sent.fetch_add(1, Ordering::Relaxed);
        let result = client
            .put_record()
            .stream_name(&ctx.stream)
            .partition_key(crate::labs::kinesis::payload::partition_key(record.seq))
            .data(Blob::new(record.data.clone()))
            .send()
            .await;
        match result {
            Ok(out) => {
                acknowledged(
                    ctx,
                    record.seq,
                    started,
                    Some(out.shard_id()),
                    Some(out.sequence_number()),
                );
                return;
            }
            Err(e) => {
                shared.producer_sdk.escaped(&error_code(&e));
                put_failed(ctx, "PutRecord", &e);
                match refused(ctx, record) {
                    Some(again) => record = again,
                    None => return,
                }
            }
        }
    }
}

async fn put_records(
    ctx: &Ctx,
    client: &Client,
    batch: Vec<Pending>,
    retry: &tokio::sync::mpsc::UnboundedSender<Pending>,
) {
    let shared = &ctx.shared;
    let started = Instant::now();
    shared
        .producer
        .sent
        .fetch_add(batch.len() as u64, Ordering::Relaxed);
    let entries: Vec<PutRecordsRequestEntry> = batch
        .iter()
        .map(|r| {
            PutRecordsRequestEntry::builder()
                .partition_key(crate::labs::kinesis::payload::partition_key(r.seq))
                .data(Blob::new(r.data.clone()))
                .build()
                .expect("data and partition key are set")
        })
        .collect();
    let result = client
        .put_records()
        .stream_name(&ctx.stream)
        .set_records(Some(entries))
        .send()
        .await;
    match result {
        Ok(out) => {
            for (record, answer) in batch.into_iter().zip(out.records()) {
                match answer.error_code() {
                    None => acknowledged(
                        ctx,
                        record.seq,
                        started,
                        answer.shard_id(),
                        answer.sequence_number(),
                    ),
                    // The call succeeded; this record was refused on its own (usually the
                    // shard's write limit): counted apart from the SDK's escaped errors.
                    Some(_) => {
                        shared
                            .producer
                            .records_refused
                            .fetch_add(1, Ordering::Relaxed);
                        if let Some(again) = refused(ctx, record) {
                            let _ = retry.send(again);
                        }
                    }
                }
            }
        }
        Err(e) => {
            shared.producer_sdk.escaped(&error_code(&e));
            put_failed(ctx, "PutRecords", &e);
            for record in batch {
                if let Some(again) = refused(ctx, record) {
                    let _ = retry.send(again);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_owes_rate_times_time_and_forgives_more_than_a_second() {
        let mut s = Schedule::new(100.0);
        let t0 = s.start;
        assert_eq!(s.due(t0), 0);
        assert_eq!(
            s.due(t0 + Duration::from_micros(100)),
            1,
            "the first record at once"
        );
        s.sent(1);
        assert_eq!(s.due(t0 + Duration::from_millis(95)), 9);
        s.sent(9);
        assert_eq!(s.behind(t0 + Duration::from_millis(95)), 0);
        // Exactly one second: 100 records, not 101.
        assert_eq!(s.owed(t0 + Duration::from_secs(1)), 100);
        // A run of exactly ten minutes at 5/s owes 3,000 records at its end, not 3,001.
        let five = Schedule::new(5.0);
        assert_eq!(five.owed(five.start + Duration::from_secs(600)), 3000);
        // Ten seconds without sending: only one second's worth is owed.
        assert_eq!(s.due(t0 + Duration::from_secs(10)), 100);
        assert_eq!(s.behind(t0 + Duration::from_secs(10)), 100);
    }
}
