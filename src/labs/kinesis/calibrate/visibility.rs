//! Read visibility, from current-status probes: each puts a record and reads its shard once at a
//! chosen time after the put was sent, seen or not yet; the fraction seen by delay, fitted
//! monotone, gives the median and the tail at any resolution, within the shard's 5 GetRecords
//! calls a second.

use std::time::{Duration, Instant};

use aws_sdk_kinesis::Client;
use aws_sdk_kinesis::primitives::Blob;
use aws_sdk_kinesis::types::ShardIteratorType;

use super::{READ_GAP, now_ms};
use crate::lab_kit::calibrate::fit::Shape;
use crate::lab_kit::calibrate::status::{StatusProbe, current_status_delay};
use crate::lab_kit::calibrate::{Probe, hot};

/// A shard a visibility probe reads: its iterator and when it was last read.
struct ProbeShard {
    hash: String,
    iter: Option<String>,
    last_read: Instant,
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
    ) -> impl std::future::Future<Output = anyhow::Result<Option<(f64, bool)>>> + Send {
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

    /// A read reached the service its own request leg after it was sent, not the leg's median.
    fn blur(&self) -> Vec<f64> {
        self.request_leg.spread(16)
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
/// there, which resolves delays shorter than a round trip). Returns (x: ms from the record's
/// arrival to when the read reached the service, whether that read returned the record); the
/// shard is then read on until it does, so that the next probe starts after it. None when the
/// put failed.
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
) -> anyhow::Result<Option<(f64, bool)>> {
    p.cancelled()?;
    // The shard's read budget: a read at most every READ_GAP, counting the probe's own.
    p.pause((s.last_read + READ_GAP).saturating_duration_since(Instant::now()))
        .await;
    let Some(it) = s.iter.clone() else {
        return Ok(None);
    };
    let put = hot(client
        .put_record()
        .stream_name(stream)
        .partition_key("visibility")
        .explicit_hash_key(&s.hash)
        .data(Blob::new(format!("visibility {i}")))
        .send());
    let read = async {
        p.pause(Duration::from_secs_f64(delay / 1000.0)).await;
        let sent = now_ms();
        let r = hot(client.get_records().shard_iterator(it).send()).await;
        (sent, Instant::now(), r)
    };
    let (put, (sent, read_at, first)) = tokio::join!(put, read);
    s.last_read = read_at;
    let Ok(put) = put else { return Ok(None) };
    let seq = put.sequence_number().to_string();
    // The read reached the service the request leg's median after it was sent. Each probe's own
    // round trip halved was tried instead (2026-12-06): one recovery run read a 45 ms visibility
    // at 1.22 with it, against 0.92-1.00 in four with the median, so the median stays.
    let probe_at = sent + request_leg;
    let mut answer = first.ok();
    // A probe whose own read failed says nothing: its record is still read past.
    let probe_failed = answer.is_none();
    let mut first_read = true;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(r) = &answer {
            s.iter = r.next_shard_iterator().map(str::to_string);
            let arrival = r
                .records()
                .iter()
                .find(|rec| rec.sequence_number() == seq)
                .and_then(|rec| rec.approximate_arrival_timestamp());
            if let Some(a) = arrival {
                let a = a.as_secs_f64() * 1000.0 - offset;
                return Ok((!probe_failed).then_some((probe_at - a, first_read)));
            }
        }
        if Instant::now() > deadline {
            return Ok(None);
        }
        first_read = false;
        p.cancelled()?;
        p.pause((s.last_read + READ_GAP).saturating_duration_since(Instant::now()))
            .await;
        let Some(it) = s.iter.clone() else {
            return Ok(None);
        };
        s.last_read = Instant::now();
        answer = hot(client.get_records().shard_iterator(it).send())
            .await
            .ok();
    }
}
