//! The writer and the reader, each a real aws-sdk-dynamodb client.
//!
//! The writer's pacer hands out seqs at the knob's rate; each becomes one PutItem of an item of
//! the scenario's size under a partition key chosen by the seq: one of `keys` keys in turn, or
//! while the keys are skewed the hot key for `hot_share` of them. Every call asks for its consumed
//! capacity, and a per-call interceptor reads each throttled attempt's `ThrottlingReasons`, so
//! that every unit and every throttle is counted on the partition (latlab's model) its key lives
//! on. An item carries the run, its seq and the moment its write began, which the change
//! consumers measure from.
//!
//! The reader reads the keys the writer writes, at its own rate, strongly or eventually
//! consistent as the knob says.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnConsumedCapacity};
use parking_lot::Mutex;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::client::Throttles;
use super::config::Then;
use super::state::{Heat, Knobs, LEDGER_CAPACITY, Ledger, ReaderState, WriterState};
use super::table::KEY;

/// Writes the writer keeps in flight at once; past it, a due write is counted behind.
pub const IN_FLIGHT: usize = 1024;
/// Reads the reader keeps in flight at once.
const READS_IN_FLIGHT: usize = 64;

/// The hot key's name.
pub const HOT: &str = "hot";

/// The partition key of `seq`'s write: the hot key for `hot_share` of seqs while skewed (spread
/// evenly by a hash of the seq), else one of `keys` in turn.
pub fn key_of(seq: u64, skewed: bool, hot_share: f64, keys: u32) -> String {
    let spread = seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
    if skewed && (spread % 10_000) < (hot_share * 10_000.0) as u64 {
        HOT.to_string()
    } else {
        format!("k{}", seq % u64::from(keys.max(1)))
    }
}

/// An item's attributes: its key, the run, its seq, its write's start (microseconds since the
/// epoch) and padding to `size` bytes as DynamoDB sizes items (each attribute's name plus its
/// value; a number's value counts about one byte per two digits, plus one).
pub fn item(
    run: &str,
    key: &str,
    seq: u64,
    at_us: i64,
    size: u64,
) -> HashMap<String, AttributeValue> {
    let number = |n: &str| (n.len() as u64).div_ceil(2) + 1;
    let (seq_s, at_s) = (seq.to_string(), at_us.to_string());
    let fixed =
        (KEY.len() + key.len() + 3 + run.len() + 3 + 2 + 3) as u64 + number(&seq_s) + number(&at_s);
    // A few bytes short of the size, so a 1 KB item is one write unit as DynamoDB rounds it.
    let pad = size.saturating_sub(fixed + 8).max(1) as usize;
    HashMap::from([
        (KEY.to_string(), AttributeValue::S(key.to_string())),
        ("run".to_string(), AttributeValue::S(run.to_string())),
        ("seq".to_string(), AttributeValue::N(seq_s)),
        ("at".to_string(), AttributeValue::N(at_s)),
        ("pad".to_string(), AttributeValue::S(".".repeat(pad))),
    ])
}

/// Everything the writer and reader share.
#[derive(Clone)]
pub struct Writing {
    pub client: Client,
    pub table: String,
    pub run: String,
    pub item_size: u64,
    pub keys: u32,
    pub hot_share: f64,
    pub knobs: Arc<Knobs>,
    pub writer: Arc<WriterState>,
    pub reader: Arc<ReaderState>,
    pub ledger: Arc<Mutex<Ledger>>,
    pub heat: Arc<Mutex<Heat>>,
    pub clock: Instant,
}

impl Writing {
    fn second(&self) -> u64 {
        self.clock.elapsed().as_secs()
    }

    fn partition(&self, key: &str) -> usize {
        let n = self.heat.lock().partitions.len();
        latlab_emulator::dynamodb::partition_of(key.as_bytes(), n)
    }

    /// Counts a call's throttled attempts by reason and on its partition.
    fn throttles(
        &self,
        reasons: Vec<String>,
        p: usize,
        into: &mut std::collections::BTreeMap<String, u64>,
    ) {
        if reasons.is_empty() {
            return;
        }
        self.heat
            .lock()
            .throttled(p, reasons.len() as u64, self.second());
        for r in reasons {
            *into.entry(r).or_default() += 1;
        }
    }
}

/// Hands out seqs at the knob's rate until cancelled (or `until` passes), applying `then` once
/// when its time comes.
pub async fn pace(
    w: Writing,
    cancel: CancellationToken,
    until: Option<Duration>,
    then: Option<Then>,
) {
    let started = Instant::now();
    let permits = Arc::new(Semaphore::new(IN_FLIGHT));
    let mut seq: u64 = 0;
    let mut rate = w.knobs.rate();
    let mut from = Instant::now();
    let mut base = 0u64;
    let mut then = then;
    *w.writer.status.lock() = format!("writing {rate}/s");
    let mut tick = tokio::time::interval(Duration::from_millis(5));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tick.tick() => {}
        }
        if until.is_some_and(|u| started.elapsed() >= u) {
            *w.writer.status.lock() = "done: the run's writing time is over".into();
            break;
        }
        if let Some(t) = then.take_if(|t| started.elapsed() >= t.after) {
            use std::sync::atomic::Ordering::Relaxed;
            if let Some(s) = t.skewed {
                w.knobs.skewed.store(s, Relaxed);
            }
            if let Some(r) = t.rate {
                w.knobs.rate.store(r, Relaxed);
            }
        }
        let now_rate = w.knobs.rate();
        if now_rate != rate {
            rate = now_rate;
            from = Instant::now();
            base = seq;
            *w.writer.status.lock() = format!("writing {rate}/s");
        }
        let due = base + (from.elapsed().as_secs_f64() * f64::from(rate)) as u64;
        while seq < due {
            if seq >= LEDGER_CAPACITY {
                *w.writer.status.lock() =
                    format!("stopped: the ledger holds {LEDGER_CAPACITY} writes");
                break;
            }
            let Ok(permit) = permits.clone().try_acquire_owned() else {
                w.writer.metrics.lock().behind += 1;
                seq += 1;
                continue;
            };
            let w2 = w.clone();
            let s = seq;
            tokio::spawn(async move {
                put(&w2, s).await;
                drop(permit);
            });
            seq += 1;
        }
        w.writer.metrics.lock().produced = seq;
    }
    *w.writer.wrote_for.lock() = Some(started.elapsed());
    // Let the writes in flight finish: a write is acknowledged when its answer comes.
    let _ = permits.acquire_many(IN_FLIGHT as u32).await;
}

/// One PutItem of `seq`, counted.
async fn put(w: &Writing, seq: u64) {
    let key = key_of(seq, w.knobs.skewed(), w.hot_share, w.keys);
    let p = w.partition(&key);
    let at_us = latlab_core::clock::now_micros();
    let throttles = Throttles::default();
    let started = Instant::now();
    let answer = w
        .client
        .put_item()
        .table_name(&w.table)
        .set_item(Some(item(&w.run, &key, seq, at_us, w.item_size)))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .customize()
        .interceptor(throttles.clone())
        .send()
        .await;
    let second = w.second();
    let took = started.elapsed().as_micros() as u64;
    let reasons = throttles.taken();
    let mut m = w.writer.metrics.lock();
    w.throttles(reasons, p, &mut m.throttled);
    m.latency.record(took, second);
    match answer {
        Ok(out) => {
            let units = out
                .consumed_capacity()
                .and_then(|c| c.capacity_units())
                .unwrap_or(0.0);
            m.written += 1;
            m.units += units;
            drop(m);
            w.ledger.lock().acked(seq, second);
            let mut heat = w.heat.lock();
            heat.write(p, units, second);
            heat.tick(second);
        }
        Err(e) => {
            m.failed += 1;
            drop(m);
            w.writer.sdk.escaped(&crate::aws::error_code(&e));
            *w.writer.last_error.lock() = Some(crate::aws::error_line(&e));
        }
    }
}

/// Reads at `rate` a second until cancelled: each a GetItem of a key the writer writes (skewed
/// as its writes are), strong or eventual as the knob says.
pub async fn read(w: Writing, rate: u32, cancel: CancellationToken) {
    if rate == 0 {
        return;
    }
    let permits = Arc::new(Semaphore::new(READS_IN_FLIGHT));
    let mut n: u64 = 0;
    let from = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(5));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tick.tick() => {}
        }
        let due = (from.elapsed().as_secs_f64() * f64::from(rate)) as u64;
        while n < due {
            // Reads pick keys by a seq of their own, spread over the writer's keys.
            let key = key_of(n.wrapping_mul(7919), w.knobs.skewed(), w.hot_share, w.keys);
            n += 1;
            let Ok(permit) = permits.clone().try_acquire_owned() else {
                continue;
            };
            let w2 = w.clone();
            tokio::spawn(async move {
                get(&w2, &key).await;
                drop(permit);
            });
        }
    }
    let _ = permits.acquire_many(READS_IN_FLIGHT as u32).await;
}

async fn get(w: &Writing, key: &str) {
    let strong = w.knobs.consistent();
    let p = w.partition(key);
    let throttles = Throttles::default();
    let started = Instant::now();
    let answer = w
        .client
        .get_item()
        .table_name(&w.table)
        .key(KEY, AttributeValue::S(key.to_string()))
        .consistent_read(strong)
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .customize()
        .interceptor(throttles.clone())
        .send()
        .await;
    let second = w.second();
    let took = started.elapsed().as_micros() as u64;
    let slot = if strong {
        &w.reader.strong
    } else {
        &w.reader.eventual
    };
    let reasons = throttles.taken();
    let mut m = slot.lock();
    w.throttles(reasons, p, &mut m.throttled);
    m.latency.record(took, second);
    match answer {
        Ok(out) => {
            let units = out
                .consumed_capacity()
                .and_then(|c| c.capacity_units())
                .unwrap_or(0.0);
            m.reads += 1;
            m.units += units;
            drop(m);
            w.heat.lock().read(p, units, second);
        }
        Err(e) => {
            m.failed += 1;
            drop(m);
            w.reader.sdk.escaped(&crate::aws::error_code(&e));
            *w.reader.last_error.lock() = Some(crate::aws::error_line(&e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skewed_keys_send_the_hot_share_to_one_key() {
        let hot = (0..10_000u64)
            .filter(|s| key_of(*s, true, 0.9, 100) == HOT)
            .count();
        assert!((8_800..=9_200).contains(&hot), "{hot} of 10000 hot");
        assert!((0..1000u64).all(|s| key_of(s, false, 0.9, 100) != HOT));
        assert_eq!(key_of(205, false, 0.9, 100), "k5");
    }

    #[test]
    fn an_item_is_sized_a_little_under_the_size_asked() {
        let size = |m: &HashMap<String, AttributeValue>| -> usize {
            m.iter()
                .map(|(k, v)| {
                    k.len()
                        + match v {
                            AttributeValue::S(s) => s.len(),
                            AttributeValue::N(n) => n.len().div_ceil(2) + 1,
                            _ => 0,
                        }
                })
                .sum()
        };
        for want in [256u64, 1024, 4096] {
            let got = size(&item(
                "0a1b2c3d",
                "k17",
                123_456,
                1_700_000_000_000_000,
                want,
            )) as u64;
            assert!(got <= want && got + 16 >= want, "{got} for {want}");
        }
    }
}
