//! `latlab calibrate`'s probe of Kinesis: its profile parameters, from a stream of its own (4 shards, tagged, deleted at the end):
//!
//! - the request and response legs: round trips of ListShards, split into two like legs (one
//!   clock cannot split a round trip: the file says so);
//! - the put commit: send -> `ApproximateArrivalTimestamp`, less the request leg. The client's
//!   clock offset is bounded from both directions (each arrival lies between its put's send and
//!   its answer), the bound printed; inside the bound the offset is taken as 0;
//! - read visibility: each probe puts a record and reads its shard once, at a chosen time after
//!   the record's arrival: seen or not yet. The fraction seen by delay, fitted monotone, gives
//!   the median and the tail, at any resolution, within the shard's 5 GetRecords calls a second;
//! - the fan-out push: arrival -> the record's SubscribeToShard event.

mod visibility;

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_sdk_kinesis::Client;
use aws_sdk_kinesis::primitives::Blob;
use aws_sdk_kinesis::types::{ShardIteratorType, StartingPosition, SubscribeToShardEventStream};

use crate::lab_kit::calibrate::fit::{self, Shape};
use crate::lab_kit::calibrate::{Calibration, PlanLine, Probe, hot, round_trips};

const SHARDS: usize = 4;
/// A shard's GetRecords calls a second, less a margin: each probe's reads on a shard are this far
/// apart at least.
const READ_GAP: Duration = Duration::from_millis(220);

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

impl crate::labs::Calibrated for super::KinesisLab {
    const CALIBRATES: bool = true;

    fn calibration_plan(
        samples: usize,
        run: &str,
        _embedded: bool,
        _target: &super::target::KinesisTarget,
        prices: &crate::lab_kit::cost::Prices,
    ) -> Vec<PlanLine> {
        let price = |k: &str| prices.value(k).unwrap_or(0.0);
        // Puts: the commit's n, the visibility probes' about 2.2 n, the push's n.
        let puts = 4.2 * samples as f64;
        let hours = crate::lab_kit::calibrate::PRICED_FOR_HOURS;
        vec![PlanLine {
            what: format!(
                "Kinesis stream latlab-calibrate-{run} ({SHARDS} shards) and a fan-out consumer, for at most 10 minutes; about {puts:.0} PutRecord calls"
            ),
            usd: SHARDS as f64 * price("kinesis.shard_hour") * hours
                + price("kinesis.efo_consumer_shard_hour") * hours
                + puts / 1e6 * price("kinesis.put_payload_units_per_million"),
            keys: vec![
                "kinesis.shard_hour".into(),
                "kinesis.efo_consumer_shard_hour".into(),
                "kinesis.put_payload_units_per_million".into(),
            ],
        }]
    }

    fn calibrate(
        probe: &Probe,
        _target: &super::target::KinesisTarget,
        cal: &mut Calibration,
    ) -> impl std::future::Future<Output = anyhow::Result<()>> + Send {
        run(probe, cal)
    }
}

async fn run(p: &Probe, cal: &mut Calibration) -> anyhow::Result<()> {
    let client = super::client::client(
        &p.clients,
        &Probe::retry(),
        &crate::aws::QuotaPartition::unlimited("latlab-calibrate"),
        std::sync::Arc::new(crate::metrics::SdkStats::default()),
    );
    let stream = format!("latlab-calibrate-{}", p.run_id);
    let mut req = client
        .create_stream()
        .stream_name(&stream)
        .shard_count(SHARDS as i32);
    let created = crate::lab_kit::plan::now_rfc3339();
    for (k, v) in crate::lab_kit::plan::tags(&p.run_id, &created) {
        req = req.tags(k, v);
    }
    req.send()
        .await
        .map_err(|e| anyhow::anyhow!("CreateStream {stream}: {}", crate::aws::error_line(&e)))?;
    p.say(format!("created stream {stream} ({SHARDS} shards)"));
    let result = measure(p, &client, &stream, cal).await;
    let deleted = client
        .delete_stream()
        .stream_name(&stream)
        .enforce_consumer_deletion(true)
        .send()
        .await;
    match deleted {
        Ok(_) => p.say(format!("deleted stream {stream}")),
        Err(e) => p.say(format!(
            "could not delete stream {stream}: {} (`latlab cleanup --run {}` finds it by its tag)",
            crate::aws::error_line(&e),
            p.run_id
        )),
    }
    result
}

async fn measure(
    p: &Probe,
    client: &Client,
    stream: &str,
    cal: &mut Calibration,
) -> anyhow::Result<()> {
    let arn = wait_active(p, client, stream).await?;
    let shards = client
        .list_shards()
        .stream_name(stream)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("ListShards: {}", crate::aws::error_line(&e)))?;
    let shards: Vec<(String, String)> = shards
        .shards()
        .iter()
        .map(|s| {
            (
                s.shard_id().to_string(),
                s.hash_key_range()
                    .map(|r| r.starting_hash_key().to_string())
                    .unwrap_or_else(|| "0".into()),
            )
        })
        .collect();
    anyhow::ensure!(!shards.is_empty(), "the stream has no shards");
    let n = p.samples;

    // The legs: a cheap call's round trip, split evenly.
    // ListShards: its quota is 1,000 calls a second per stream (the Kinesis quotas page), so
    // its round trips go back to back, with no idle wake-up in them.
    let (rtt, failed) = round_trips(p, n, f64::INFINITY, |_| {
        client.list_shards().stream_name(stream).send()
    })
    .await;
    p.cancelled()?;
    let rtt_shape = Shape::of(&rtt)
        .ok_or_else(|| anyhow::anyhow!("no ListShards answered ({failed} failed)"))?;
    let leg = fit::summand(rtt_shape, None);
    for name in ["kinesis.request", "kinesis.response"] {
        cal.delay(
            name,
            leg,
            rtt.len(),
            format!(
                "{} ListShards round trips (median {:.3} ms) fitted as the sum of two like legs (the round trip's shape scaled until simulated sums of two legs have its median): one client clock cannot split a round trip, so it is split evenly between the request and the response legs",
                rtt.len(),
                rtt_shape.median
            ),
        );
    }

    // The put commit and the clock.
    let mut puts: HashMap<String, (f64, f64)> = HashMap::new();
    let (first, hash) = (&shards[0].0, &shards[0].1);
    for i in 0..n {
        p.cancelled()?;
        let t0 = now_ms();
        let r = client
            .put_record()
            .stream_name(stream)
            .partition_key("calibrate")
            .explicit_hash_key(hash)
            .data(Blob::new(format!("commit {i}")))
            .send()
            .await;
        let t1 = now_ms();
        if let Ok(out) = r {
            puts.insert(out.sequence_number().to_string(), (t0, t1));
        }
        p.pause(Duration::from_millis(20)).await;
    }
    let arrivals = read_arrivals(p, client, stream, first, puts.len()).await?;
    let mut lo = f64::NEG_INFINITY;
    let mut hi = f64::INFINITY;
    let mut send_to_arrival = Vec::new();
    for (seq, a) in &arrivals {
        if let Some((t0, t1)) = puts.get(seq) {
            lo = lo.max(a - t1);
            hi = hi.min(a - t0);
            send_to_arrival.push((a, t0));
        }
    }
    anyhow::ensure!(!send_to_arrival.is_empty(), "no put was read back");
    // ApproximateArrivalTimestamp has millisecond precision: the bound widens by one each way.
    let (lo, hi) = (lo - 1.0, hi + 1.0);
    let offset = 0.0f64.clamp(lo, hi.max(lo));
    cal.notes.push(format!(
        "the client's clock offset from the service's is between {lo:+.1} ms and {hi:+.1} ms ({} puts: each arrival lies between its send and its answer); {} taken",
        send_to_arrival.len(),
        if offset == 0.0 { "0 ms (inside the bound) is".to_string() } else { format!("{offset:+.1} ms (the bound's nearest end) is") }
    ));
    let sta: Vec<f64> = send_to_arrival
        .iter()
        .map(|(a, t0)| *a - offset - *t0)
        .collect();
    let sta_shape = Shape::of(&sta).unwrap_or(leg);
    cal.delay(
        "kinesis.put_commit",
        fit::summand(sta_shape, Some(leg)),
        sta.len(),
        format!(
            "{} sends -> ApproximateArrivalTimestamp (median {:.3} ms, clock offset {offset:+.1} ms, bounded to [{lo:+.1}, {hi:+.1}] ms) fitted as the request leg (median {:.3} ms, from the round trips) plus the commit: the request leg and the commit are split by the legs' round trips",
            sta.len(),
            sta_shape.median,
            leg.median
        ),
    );
    p.cancelled()?;

    // Read visibility.
    let vis = visibility::visibility(p, client, stream, &shards, offset, leg).await?;
    if let Some((shape, probes)) = vis {
        cal.delay(
            "kinesis.read_visibility",
            shape,
            probes,
            format!(
                "{probes} probes, each a record put and its shard read once at a chosen delay after its arrival (server time: the read's send plus the request leg's median, clock offset {offset:+.1} ms): the median from a shifted log-normal fitted to the fraction seen by delay (maximum likelihood, each read's time spread as the request leg's shape about its median), the 1st and 99th percentiles from its monotone fit"
            ),
        );
    } else {
        cal.left.push(
            "kinesis.read_visibility: the probes never saw a record in time to fit it".into(),
        );
    }
    p.cancelled()?;

    // The fan-out push.
    match push(p, client, &arn, stream, first, hash, offset).await {
        Ok(push) if !push.is_empty() => cal.delay(
            "kinesis.efo_push",
            Shape::of(&push).unwrap_or(leg),
            push.len(),
            format!(
                "quantiles of {} arrivals -> the record's SubscribeToShard event received (clock offset {offset:+.1} ms)",
                push.len()
            ),
        ),
        Ok(_) => cal.left.push("kinesis.efo_push: no record was pushed".into()),
        Err(e) => cal.left.push(format!("kinesis.efo_push: {e:#}")),
    }
    Ok(())
}

async fn wait_active(p: &Probe, client: &Client, stream: &str) -> anyhow::Result<String> {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        p.cancelled()?;
        let out = client
            .describe_stream_summary()
            .stream_name(stream)
            .send()
            .await;
        if let Ok(out) = out
            && let Some(d) = out.stream_description_summary()
            && d.stream_status().as_str() == "ACTIVE"
        {
            return Ok(d.stream_arn().to_string());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "stream {stream} was not ACTIVE within 300 s"
        );
        p.pause(Duration::from_millis(200)).await;
    }
}

/// Reads a shard from its start until `want` records came back: their arrival (ms since the
/// epoch, the service's clock) by sequence number.
async fn read_arrivals(
    p: &Probe,
    client: &Client,
    stream: &str,
    shard: &str,
    want: usize,
) -> anyhow::Result<HashMap<String, f64>> {
    let mut iter = client
        .get_shard_iterator()
        .stream_name(stream)
        .shard_id(shard)
        .shard_iterator_type(ShardIteratorType::TrimHorizon)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("GetShardIterator: {}", crate::aws::error_line(&e)))?
        .shard_iterator()
        .map(str::to_string);
    let mut out = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while out.len() < want && Instant::now() < deadline {
        p.cancelled()?;
        let Some(it) = iter.clone() else { break };
        if let Ok(r) = client.get_records().shard_iterator(it).send().await {
            for rec in r.records() {
                if let Some(a) = rec.approximate_arrival_timestamp() {
                    out.insert(rec.sequence_number().to_string(), a.as_secs_f64() * 1000.0);
                }
            }
            iter = r.next_shard_iterator().map(str::to_string);
        }
        p.pause(READ_GAP).await;
    }
    Ok(out)
}

/// Arrival -> SubscribeToShard event, for records put to one shard while a consumer is subscribed.
async fn push(
    p: &Probe,
    client: &Client,
    arn: &str,
    stream: &str,
    shard: &str,
    hash: &str,
    offset: f64,
) -> anyhow::Result<Vec<f64>> {
    let name = format!("latlab-calibrate-{}", p.run_id);
    let consumer = client
        .register_stream_consumer()
        .stream_arn(arn)
        .consumer_name(&name)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("RegisterStreamConsumer: {}", crate::aws::error_line(&e)))?;
    let carn = consumer
        .consumer()
        .map(|c| c.consumer_arn().to_string())
        .ok_or_else(|| anyhow::anyhow!("RegisterStreamConsumer answered without a consumer"))?;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        p.cancelled()?;
        let d = client
            .describe_stream_consumer()
            .consumer_arn(&carn)
            .send()
            .await;
        if let Ok(d) = d
            && d.consumer_description()
                .is_some_and(|c| c.consumer_status().as_str() == "ACTIVE")
        {
            break;
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the fan-out consumer was not ACTIVE within 120 s"
        );
        p.pause(Duration::from_millis(200)).await;
    }
    let position = StartingPosition::builder()
        .r#type(ShardIteratorType::Latest)
        .build()?;
    let mut out = client
        .subscribe_to_shard()
        .consumer_arn(&carn)
        .shard_id(shard)
        .starting_position(position)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("SubscribeToShard: {}", crate::aws::error_line(&e)))?;
    let n = p.samples;
    let producer = {
        let (client, stream, hash, cancel) = (
            client.clone(),
            stream.to_string(),
            hash.to_string(),
            p.cancel.clone(),
        );
        tokio::spawn(async move {
            // The subscription's first event comes once it is open: give it a moment.
            tokio::time::sleep(Duration::from_millis(300)).await;
            for i in 0..n {
                if cancel.is_cancelled() {
                    break;
                }
                let _ = client
                    .put_record()
                    .stream_name(&stream)
                    .partition_key("push")
                    .explicit_hash_key(&hash)
                    .data(Blob::new(format!("push {i}")))
                    .send()
                    .await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    let mut delays = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30) + Duration::from_millis(60 * n as u64);
    while delays.len() < n && Instant::now() < deadline {
        let ev = tokio::select! {
            _ = p.cancel.cancelled() => break,
            _ = tokio::time::sleep(Duration::from_secs(5)) => continue,
            e = hot(out.event_stream.recv()) => e,
        };
        match ev {
            Ok(Some(SubscribeToShardEventStream::SubscribeToShardEvent(e))) => {
                let got = now_ms();
                for r in e.records() {
                    if let Some(a) = r.approximate_arrival_timestamp() {
                        delays.push(got - (a.as_secs_f64() * 1000.0 - offset));
                    }
                }
            }
            Ok(Some(_)) => {}
            _ => break,
        }
    }
    producer.abort();
    let _ = client
        .deregister_stream_consumer()
        .consumer_arn(&carn)
        .send()
        .await;
    Ok(delays)
}
