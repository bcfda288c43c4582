//! Read visibility, from current-status probes: each puts a record and reads its shard once at a
//! chosen time after the put was sent, seen or not yet; the fraction seen by delay, fitted
//! monotone, gives the median and the tail at any resolution, within the shard's 5 GetRecords
//! calls a second. A probe's x needs its record's arrival, which only a read returns: a record
//! its look missed is read back by the next probe of its shard (the shards take turns), or at the
//! end of a pass, so no read waits out a shard's budget only to find it (which took about half
//! of the probes' time before, 2026-12-06).

use std::time::{Duration, Instant};

use aws_sdk_kinesis::Client;
use aws_sdk_kinesis::primitives::Blob;
use aws_sdk_kinesis::types::ShardIteratorType;

use super::{READ_GAP, now_ms};
use crate::lab_kit::calibrate::fit::Shape;
use crate::lab_kit::calibrate::status::{Look, StatusProbe, current_status_delay};
use crate::lab_kit::calibrate::{Probe, hot};

/// A shard a visibility probe reads: its iterator, when it was last read, and the records put
/// to it that no read has returned yet.
struct ProbeShard {
    hash: String,
    iter: Option<String>,
    last_read: Instant,
    open: Vec<Open>,
}

/// A probe whose look missed its record: settled when a read returns it.
struct Open {
    /// The probe's index.
    i: usize,
    seq: String,
    /// When its look reached the service, on the service's clock (ms).
    look_at: f64,
    /// Whether it says anything (its own look was answered).
    counts: bool,
}

/// Read visibility's probes: the stream's shards, each read within its budget, and what a
/// probe's x is measured against (the clock offset, the request leg: its median places each
/// read, its spread is the probes' blur).
struct Visibility<'a> {
    client: &'a Client,
    stream: &'a str,
    shards: Vec<ProbeShard>,
    offset: f64,
    request_leg: Shape,
}

impl StatusProbe for Visibility<'_> {
    fn probe(
        &mut self,
        p: &Probe,
        delay: f64,
        i: usize,
    ) -> impl std::future::Future<Output = anyhow::Result<Look>> + Send {
        let n = self.shards.len();
        one_probe(
            p,
            self.client,
            self.stream,
            &mut self.shards[i % n],
            delay,
            self.offset,
            self.request_leg.median,
            i,
        )
    }

    /// Each shard with an open probe read on (within its budget) until every one is settled,
    /// for 15 s at most.
    async fn settle(&mut self, p: &Probe) -> anyhow::Result<Vec<(usize, f64, bool)>> {
        let mut out = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(15);
        for s in &mut self.shards {
            while !s.open.is_empty() && Instant::now() < deadline {
                p.cancelled()?;
                p.pause((s.last_read + READ_GAP).saturating_duration_since(Instant::now()))
                    .await;
                let Some(it) = s.iter.clone() else { break };
                let r = hot(self.client.get_records().shard_iterator(it).send()).await;
                s.last_read = Instant::now();
                if let Ok(r) = r {
                    out.extend(s.settle(&r, self.offset));
                }
            }
            s.open.clear();
        }
        Ok(out)
    }

    /// A read reached the service its own request leg after it was sent, not the leg's median.
    fn blur(&self) -> Vec<f64> {
        self.request_leg.spread(16)
    }
}

impl ProbeShard {
    /// A read's answer: the iterator moves on, and each open probe whose record it returned is
    /// settled, as (index, x, not seen by its own look).
    fn settle(
        &mut self,
        r: &aws_sdk_kinesis::operation::get_records::GetRecordsOutput,
        offset: f64,
    ) -> Vec<(usize, f64, bool)> {
        self.iter = r.next_shard_iterator().map(str::to_string);
        let mut out = Vec::new();
        for rec in r.records() {
            let Some(k) = self
                .open
                .iter()
                .position(|o| o.seq == rec.sequence_number())
            else {
                continue;
            };
            let o = self.open.remove(k);
            if let (true, Some(a)) = (o.counts, rec.approximate_arrival_timestamp()) {
                out.push((o.i, o.look_at - (a.as_secs_f64() * 1000.0 - offset), false));
            }
        }
        out
    }
}

/// Read visibility from current-status probes: (its shape, the probes it rests on).
pub(super) async fn visibility(
    p: &Probe,
    client: &Client,
    stream: &str,
    shards: &[(String, String)],
    offset: f64,
    request_leg: Shape,
) -> anyhow::Result<Option<(Shape, usize)>> {
    let mut probe_shards = Vec::new();
    for (id, hash) in shards {
        let iter = client
            .get_shard_iterator()
            .stream_name(stream)
            .shard_id(id)
            .shard_iterator_type(ShardIteratorType::Latest)
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("GetShardIterator: {}", crate::aws::error_line(&e)))?
            .shard_iterator()
            .map(str::to_string);
        probe_shards.push(ProbeShard {
            hash: hash.clone(),
            iter,
            last_read: Instant::now(),
            open: Vec::new(),
        });
    }
    let mut v = Visibility {
        client,
        stream,
        shards: probe_shards,
        offset,
        request_leg,
    };
    current_status_delay(p, &mut v, p.samples).await
}

/// One probe: a record put to a shard, and its shard read once `delay` ms after the put was
/// sent (the read may go before the put's answer comes: it can then find the record not yet
/// there, which resolves delays shorter than a round trip). Its x is the ms from the record's
/// arrival to when the read reached the service; the read also settles the shard's earlier open
/// probes whose records it returns. A record the read missed stays open. Nothing when the put
/// failed.
#[allow(clippy::too_many_arguments)]
async fn one_probe(
    p: &Probe,
    client: &Client,
    stream: &str,
    s: &mut ProbeShard,
    delay: f64,
    offset: f64,
    request_leg: f64,
    i: usize,
) -> anyhow::Result<Look> {
    p.cancelled()?;
    // The shard's read budget: the put goes early enough for its read to land when the shard
    // allows one.
    let ahead = Duration::from_secs_f64(delay / 1000.0);
    let next_read = s.last_read + READ_GAP;
    p.pause(next_read.checked_sub(ahead).map_or(Duration::ZERO, |t| {
        t.saturating_duration_since(Instant::now())
    }))
    .await;
    let Some(it) = s.iter.clone() else {
        return Ok(Look::default());
    };
    let put = hot(client
        .put_record()
        .stream_name(stream)
        .partition_key("visibility")
        .explicit_hash_key(&s.hash)
        .data(Blob::new(format!("visibility {i}")))
        .send());
    let read = async {
        p.pause(ahead.max(next_read.saturating_duration_since(Instant::now())))
            .await;
        let sent = now_ms();
        let r = hot(client.get_records().shard_iterator(it).send()).await;
        (sent, Instant::now(), r)
    };
    let (put, (sent, read_at, first)) = tokio::join!(put, read);
    s.last_read = read_at;
    // The read reached the service the request leg's median after it was sent. Each probe's own
    // round trip halved was tried instead (2026-12-06): one recovery run read a 45 ms visibility
    // at 1.22 with it, against 0.92-1.00 in four with the median, so the median stays.
    let look_at = sent + request_leg;
    let mut look = Look::default();
    if let Ok(put) = &put {
        // Open until a read returns it; it says something only if its own look was answered.
        s.open.push(Open {
            i,
            seq: put.sequence_number().to_string(),
            look_at,
            counts: first.is_ok(),
        });
    }
    if let Ok(r) = &first {
        look.settled = s.settle(r, offset);
        if put.is_ok() {
            let own = look.settled.iter_mut().find(|(k, ..)| *k == i);
            look.seen = Some(own.is_some());
            // Settled by its own look: seen by it.
            if let Some(own) = own {
                own.2 = true;
            }
        }
    }
    Ok(look)
}
