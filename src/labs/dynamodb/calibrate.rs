//! `latlab calibrate`'s probe of DynamoDB: its profile parameters, from an on-demand table of its
//! own with its stream on (tagged, deleted at the end): round trips of PutItem (a write), GetItem
//! (a read, eventually consistent) and DescribeTable (the other calls); and the stream's
//! visibility from current-status probes (`lab_kit::calibrate::status`): an item written, its
//! streams shard read once at a chosen time after the write was sent (even before its answer),
//! seen or not yet, at most four reads a second on the shard. The Kinesis destination's push is
//! not probed: the file keeps its base's.

use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType, StreamSpecification, StreamViewType, TableStatus, Tag,
};
use aws_sdk_dynamodbstreams::types::ShardIteratorType;

use crate::lab_kit::calibrate::status::{Look, StatusProbe, current_status_delay};
use crate::lab_kit::calibrate::{Calibration, PlanLine, Probe, hot, round_trips};

/// The least time between two reads of the probed streams shard: four a second at most (AWS
/// documents no GetRecords rate for a streams shard, only that no more than two processes
/// should read one at a time; Kinesis's shards allow five a second).
const READ_GAP: Duration = Duration::from_millis(250);

impl crate::labs::Calibrated for super::DynamoLab {
    const CALIBRATES: bool = true;

    fn calibration_plan(
        samples: usize,
        run: &str,
        _embedded: bool,
        _target: &<super::DynamoLab as crate::labs::Lab>::Target,
        prices: &crate::lab_kit::cost::Prices,
    ) -> Vec<PlanLine> {
        let price = |k: &str| prices.value(k).unwrap_or(0.0);
        // The round trips' writes, and one write and one stream read a visibility probe (two
        // passes of half the samples, and the grid's 24 at most).
        let (writes, stream_reads) = (2 * samples + 24, samples + 24);
        vec![PlanLine {
            what: format!(
                "DynamoDB table latlab-calibrate-{run} (on-demand, its stream on); about {writes} writes and {samples} reads of one unit each, about {stream_reads} stream reads"
            ),
            usd: writes as f64 / 1e6 * price("dynamodb.write_request_units_per_million")
                + stream_reads as f64 / 1e6 * price("dynamodb.streams_read_requests_per_million")
                + samples as f64 / 1e6 * price("dynamodb.read_request_units_per_million"),
            keys: vec![
                "dynamodb.write_request_units_per_million".into(),
                "dynamodb.read_request_units_per_million".into(),
                "dynamodb.streams_read_requests_per_million".into(),
            ],
        }]
    }

    fn calibrate(
        probe: &Probe,
        _target: &<super::DynamoLab as crate::labs::Lab>::Target,
        cal: &mut Calibration,
    ) -> impl std::future::Future<Output = anyhow::Result<()>> + Send {
        run(probe, cal)
    }
}

async fn run(p: &Probe, cal: &mut Calibration) -> anyhow::Result<()> {
    let client = super::client::dynamodb(
        &p.clients,
        &Probe::retry(),
        "latlab-calibrate",
        std::sync::Arc::new(crate::metrics::SdkStats::default()),
    );
    let name = format!("latlab-calibrate-{}", p.run_id);
    let mut req = client
        .create_table()
        .table_name(&name)
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("pk")
                .attribute_type(ScalarAttributeType::S)
                .build()?,
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("pk")
                .key_type(KeyType::Hash)
                .build()?,
        )
        .billing_mode(BillingMode::PayPerRequest)
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(StreamViewType::NewImage)
                .build()?,
        );
    for (k, v) in crate::lab_kit::plan::tags(&p.run_id, &crate::lab_kit::plan::now_rfc3339()) {
        req = req.tags(Tag::builder().key(k).value(v).build()?);
    }
    req.send()
        .await
        .map_err(|e| anyhow::anyhow!("CreateTable {name}: {}", crate::aws::error_line(&e)))?;
    p.say(format!("created table {name} (on-demand)"));
    let r = measure(p, &client, &name, cal).await;
    match client.delete_table().table_name(&name).send().await {
        Ok(_) => p.say(format!("deleted table {name}")),
        Err(e) => p.say(format!(
            "could not delete table {name}: {} (`latlab cleanup --run {}` finds it by its tag)",
            crate::aws::error_line(&e),
            p.run_id
        )),
    }
    r
}

async fn measure(
    p: &Probe,
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    cal: &mut Calibration,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(300);
    let stream_arn = loop {
        p.cancelled()?;
        let d = client.describe_table().table_name(table).send().await;
        if let Ok(d) = d
            && let Some(t) = d.table()
            && t.table_status() == Some(&TableStatus::Active)
        {
            break t.latest_stream_arn().map(str::to_string);
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "table {table} was not ACTIVE within 300 s"
        );
        p.pause(Duration::from_millis(200)).await;
    };
    let n = p.samples;
    let (write, _) = round_trips(p, n, f64::INFINITY, |i| {
        client
            .put_item()
            .table_name(table)
            .item("pk", AttributeValue::S(format!("k{}", i % 16)))
            .item("v", AttributeValue::S("calibrate".into()))
            .send()
    })
    .await;
    p.cancelled()?;
    let (read, _) = round_trips(p, n, f64::INFINITY, |i| {
        client
            .get_item()
            .table_name(table)
            .key("pk", AttributeValue::S(format!("k{}", i % 16)))
            .send()
    })
    .await;
    p.cancelled()?;
    let (other, _) = round_trips(p, n, f64::INFINITY, |_| {
        client.describe_table().table_name(table).send()
    })
    .await;
    cal.round_trip("dynamodb.write", &write, "PutItem");
    cal.round_trip("dynamodb.read", &read, "GetItem");
    cal.round_trip("dynamodb.other", &other, "DescribeTable");
    cal.left
        .push("dynamodb.kinesis_push: not probed (it keeps the base profile's)".into());
    let half =
        |v: &[f64]| crate::lab_kit::calibrate::fit::Shape::of(v).map_or(0.0, |s| s.median / 2.0);
    match stream_arn {
        Some(arn) => {
            let (write_half, read_half) = (half(&write), half(&read));
            let mut v = StreamProbe::open(p, client, table, &arn, write_half, read_half).await?;
            // Two passes of half the samples each: a streams probe waits out the shard's reads.
            match current_status_delay(p, &mut v, n.div_ceil(2)).await? {
                Some((shape, probes)) => cal.delay(
                    "dynamodb.stream_visibility",
                    shape,
                    probes,
                    format!(
                        "{probes} current-status probes: an item written and its streams shard read once at a chosen time after the write was sent, seen or not yet; the median from a maximum-likelihood fit of a shifted log-normal, the 1% and 99% from the monotone fit. Each call is taken to reach the service half its round trip's median after it was sent (PutItem {write_half:.3} ms, GetItem's for the stream's read {read_half:.3} ms)"
                    ),
                ),
                None => cal
                    .left
                    .push("dynamodb.stream_visibility: no probe was seen or none was answered".into()),
            }
        }
        None => cal.left.push(
            "dynamodb.stream_visibility: the table answered no LatestStreamArn (its stream is off)"
                .into(),
        ),
    }
    Ok(())
}

/// The table's streams shard the probes' item goes to, read within [`READ_GAP`].
struct StreamProbe<'a> {
    client: &'a aws_sdk_dynamodb::Client,
    streams: aws_sdk_dynamodbstreams::Client,
    table: &'a str,
    iter: Option<String>,
    last_read: Instant,
    write_half: f64,
    read_half: f64,
}

/// The probes' item: one key, so every probe's change goes to one partition's shard.
const KEY: &str = "calibrate-visibility";

impl<'a> StreamProbe<'a> {
    /// Finds the shard: one item written, every shard read from its start until one returns it;
    /// that shard is read on from there.
    async fn open(
        p: &Probe,
        client: &'a aws_sdk_dynamodb::Client,
        table: &'a str,
        arn: &str,
        write_half: f64,
        read_half: f64,
    ) -> anyhow::Result<StreamProbe<'a>> {
        let streams = super::client::streams(
            &p.clients,
            &Probe::retry(),
            "latlab-calibrate-streams",
            std::sync::Arc::new(crate::metrics::SdkStats::default()),
        );
        let shards: Vec<String> = streams
            .describe_stream()
            .stream_arn(arn)
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("DescribeStream: {}", crate::aws::error_line(&e)))?
            .stream_description()
            .map(|d| {
                d.shards()
                    .iter()
                    .filter_map(|s| s.shard_id().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        anyhow::ensure!(!shards.is_empty(), "the table's stream has no shard");
        client
            .put_item()
            .table_name(table)
            .item("pk", AttributeValue::S(KEY.into()))
            .item("v", AttributeValue::S("find".into()))
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("PutItem: {}", crate::aws::error_line(&e)))?;
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut iters: Vec<Option<String>> = Vec::new();
        for id in &shards {
            let it = streams
                .get_shard_iterator()
                .stream_arn(arn)
                .shard_id(id)
                .shard_iterator_type(ShardIteratorType::TrimHorizon)
                .send()
                .await
                .map_err(|e| anyhow::anyhow!("GetShardIterator: {}", crate::aws::error_line(&e)))?
                .shard_iterator;
            iters.push(it);
        }
        loop {
            p.cancelled()?;
            for it in iters.iter_mut() {
                let Some(token) = it.take() else { continue };
                let out = streams
                    .get_records()
                    .shard_iterator(token)
                    .send()
                    .await
                    .map_err(|e| anyhow::anyhow!("GetRecords: {}", crate::aws::error_line(&e)))?;
                *it = out.next_shard_iterator().map(str::to_string);
                if out
                    .records()
                    .iter()
                    .any(|r| value_of(r).as_deref() == Some("find"))
                {
                    return Ok(StreamProbe {
                        client,
                        streams,
                        table,
                        iter: it.clone(),
                        last_read: Instant::now(),
                        write_half,
                        read_half,
                    });
                }
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "the probe's item did not reach the table's stream within 30 s"
            );
            p.pause(READ_GAP).await;
        }
    }
}

/// A stream record's new `v`.
fn value_of(r: &aws_sdk_dynamodbstreams::types::Record) -> Option<String> {
    match r.dynamodb()?.new_image()?.get("v")? {
        aws_sdk_dynamodbstreams::types::AttributeValue::S(s) => Some(s.clone()),
        _ => None,
    }
}

impl StatusProbe for StreamProbe<'_> {
    /// An item written, and the shard read once `delay` ms after the write was sent: x is known
    /// from the send times, so the probe is settled by its own look, seen or not. A change its
    /// look missed comes back in the next probe's read, which looks for its own change alone.
    async fn probe(&mut self, p: &Probe, delay: f64, i: usize) -> anyhow::Result<Look> {
        p.cancelled()?;
        // The write goes early enough for its read to land when the shard's budget allows one.
        let next_read = self.last_read + READ_GAP;
        let ahead = Duration::from_secs_f64(delay / 1000.0);
        p.pause(next_read.checked_sub(ahead).map_or(Duration::ZERO, |t| {
            t.saturating_duration_since(Instant::now())
        }))
        .await;
        let Some(token) = self.iter.clone() else {
            return Ok(Look::default());
        };
        let want = format!("probe {i}");
        let t0 = Instant::now();
        let put = hot(self
            .client
            .put_item()
            .table_name(self.table)
            .item("pk", AttributeValue::S(KEY.into()))
            .item("v", AttributeValue::S(want.clone()))
            .send());
        let read = async {
            p.pause(ahead.max(next_read.saturating_duration_since(Instant::now())))
                .await;
            let sent = t0.elapsed().as_secs_f64() * 1000.0;
            let r = hot(self.streams.get_records().shard_iterator(token).send()).await;
            (sent, r)
        };
        let (put, (sent, first)) = tokio::join!(put, read);
        self.last_read = Instant::now();
        let Ok(answer) = first else {
            // The shard is read again from the same place by the next probe.
            return Ok(Look::default());
        };
        self.iter = answer.next_shard_iterator().map(str::to_string);
        if put.is_err() {
            return Ok(Look::default());
        }
        let x = sent + self.read_half - self.write_half;
        let seen = answer
            .records()
            .iter()
            .any(|r| value_of(r).as_deref() == Some(want.as_str()));
        Ok(Look {
            seen: Some(seen),
            settled: vec![(i, x, seen)],
        })
    }
}
