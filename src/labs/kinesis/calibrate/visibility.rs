//! Read visibility, from current-status probes: each puts a record and reads its shard once at a
//! chosen time after the put was sent, seen or not yet; the fraction seen by delay, fitted
//! monotone, gives the median and the tail at any resolution, within the shard's 5 GetRecords
//! calls a second.

use std::time::{Duration, Instant};

use aws_sdk_kinesis::Client;
use aws_sdk_kinesis::primitives::Blob;
use aws_sdk_kinesis::types::ShardIteratorType;

use super::{READ_GAP, now_ms};
use crate::lab_kit::calibrate::fit::{self, Shape};
use crate::lab_kit::calibrate::{Probe, hot};

/// A shard a visibility probe reads: its iterator and when it was last read.
struct ProbeShard {
    hash: String,
    iter: Option<String>,
    last_read: Instant,
}

/// Delays (ms after the put was sent) of the first probes, twice each, until two in a row are
/// always seen: they learn the span the rest are spread over.
const GRID: [f64; 12] = [
    0.0, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 640.0, 1280.0, 2560.0, 5120.0,
];

/// Read visibility from current-status probes: (its shape, the probes it rests on).
pub(super) async fn visibility(
    p: &Probe,
    client: &Client,
    stream: &str,
    shards: &[(String, String)],
    offset: f64,
    request_leg: f64,
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
    let mut data: Vec<(f64, bool)> = Vec::new();
    let mut i = 0;
    // The grid: twice each delay, until two delays in a row were always seen.
    let mut seen_in_a_row = 0;
    let mut base = Vec::new();
    for d in GRID {
        let mut all = true;
        for _ in 0..2 {
            if let Some((x, seen)) = one_probe(
                p,
                client,
                stream,
                &mut probe_shards[i % shards.len()],
                d,
                offset,
                request_leg,
                i,
            )
            .await?
            {
                data.push((x, seen));
                base.push(x - d);
                all &= seen;
            }
            i += 1;
        }
        seen_in_a_row = if all { seen_in_a_row + 1 } else { 0 };
        if seen_in_a_row == 2 {
            break;
        }
    }
    // The span: from the earliest a read can come after an arrival to 1.5 times the least x
    // after which every probe saw its record (20 ms at least).
    let floor = fit::quantile(&fit::sorted(base), 0.5).max(0.0);
    let mut sorted = data.clone();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let always = sorted
        .iter()
        .rposition(|(_, seen)| !seen)
        .map_or(floor, |k| sorted.get(k + 1).map_or(sorted[k].0, |x| x.0));
    let span = (1.5 * (always - floor)).clamp(20.0, 8000.0);
    // Two passes of `samples` probes each: the first spread evenly over the span, the second
    // over the half of it centred on the first pass's median, where a probe says most about it.
    let n = p.samples;
    for pass in 0..2 {
        let (from, width) = if pass == 0 {
            (0.0, span)
        } else {
            let m = fit::current_status(data.clone(), &[0.5])[0].unwrap_or(floor + span / 2.0);
            ((m - floor - span / 4.0).max(0.0), span / 2.0)
        };
        for k in 0..n {
            // Evenly over the range, in an order that mixes short and long.
            let d = from + width * ((k * 7919) % n) as f64 / n as f64;
            if let Some(probe) = one_probe(
                p,
                client,
                stream,
                &mut probe_shards[i % shards.len()],
                d,
                offset,
                request_leg,
                i,
            )
            .await?
            {
                data.push(probe);
            }
            i += 1;
        }
    }
    // The median from the profile's own family fitted smooth (a shifted log-normal), the tails
    // from the step (as far as the probes reach).
    let qs = fit::current_status(data.clone(), &[0.01, 0.5, 0.99]);
    let median = fit::shifted_lognormal(&data)
        .map(|(_, median, _)| median)
        .or(qs[1]);
    Ok(median.map(|median| {
        (
            Shape::from_quantiles(
                qs[0].unwrap_or(0.0).max(0.0),
                median,
                qs[2].unwrap_or(floor + span),
            ),
            data.len(),
        )
    }))
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
