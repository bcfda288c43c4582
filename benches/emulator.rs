//! What the emulator itself costs, on the `zero` latency profile (nothing added):
//! - PutRecords throughput into 1 and 8 shards while 4 enhanced fan-out consumers read everything;
//! - put -> fan-out receive latency at a steady rate: the emulator's own added delay;
//! - DynamoDB PutItem and GetItem of 1 KB items: items a second with 8 callers, and each call's
//!   round trip (the SDK, HTTP and the emulator: what the emulator adds on the zero profile).
//!
//! Run with `cargo bench --bench emulator`. It prints figures; it asserts only that every record
//! reached every consumer exactly once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use aws_sdk_kinesis::Client;
use aws_sdk_kinesis::primitives::Blob;
use aws_sdk_kinesis::types::{
    PutRecordsRequestEntry, ShardIteratorType, StartingPosition, SubscribeToShardEventStream,
};
use aws_smithy_types::retry::RetryConfig;
use hdrhistogram::Histogram;
use latlab_emulator::limits::Limits;
use latlab_emulator::{Emulator, EmulatorConfig};

const CONSUMERS: usize = 4;

/// send -> receive and arrival -> receive, in microseconds.
type Latencies = Arc<parking_lot::Mutex<(Histogram<u64>, Histogram<u64>)>>;

async fn start() -> Emulator {
    let overrides: Vec<String> = [
        "stream_activation=0s",
        "consumer_activation=0s",
        "write_records_per_sec=100000000",
        "write_bytes_per_sec=100GB",
        "efo_bytes_per_sec=100GB",
        "max_consumers_per_stream=20",
        // DynamoDB's capacity out of the way: the bench measures the emulator, not the limits.
        "dynamodb.partition_write_units=100000000",
        "dynamodb.partition_read_units=100000000",
        "dynamodb.table_quota_write_units=100000000",
        "dynamodb.table_quota_read_units=100000000",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let config = EmulatorConfig {
        limits: Limits::load(None, &overrides).unwrap(),
        ..Default::default()
    };
    Emulator::start(config).await.unwrap()
}

fn client(emu: &Emulator) -> Client {
    latlab::aws::emulator_kinesis_client(&emu.endpoint_url(), RetryConfig::standard())
}

async fn setup(c: &Client, stream: &str, shards: i32) -> Vec<String> {
    c.create_stream()
        .stream_name(stream)
        .shard_count(shards)
        .send()
        .await
        .unwrap();
    let arn = format!("arn:aws:kinesis:us-east-1:000000000000:stream/{stream}");
    let mut consumers = Vec::new();
    for i in 0..CONSUMERS {
        let out = c
            .register_stream_consumer()
            .stream_arn(&arn)
            .consumer_name(format!("bench-{i}"))
            .send()
            .await
            .unwrap();
        consumers.push(out.consumer.unwrap().consumer_arn);
    }
    consumers
}

/// Subscribes one consumer to one shard from LATEST and counts records (and, when asked, the
/// latency from the payload's send time and from ApproximateArrivalTimestamp) until `total`.
fn subscribe(
    c: Client,
    consumer: String,
    shard: String,
    received: Arc<AtomicU64>,
    latency: Option<Latencies>,
) -> tokio::sync::oneshot::Receiver<()> {
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let pos = StartingPosition::builder()
            .r#type(ShardIteratorType::Latest)
            .build()
            .unwrap();
        let mut out = c
            .subscribe_to_shard()
            .consumer_arn(consumer)
            .shard_id(shard)
            .starting_position(pos)
            .send()
            .await
            .unwrap();
        let _ = ready_tx.send(());
        while let Ok(Some(ev)) = out.event_stream.recv().await {
            if let SubscribeToShardEventStream::SubscribeToShardEvent(ev) = ev {
                let now = latlab_core::clock::now_micros();
                if let Some(lat) = &latency {
                    let mut lat = lat.lock();
                    for r in ev.records() {
                        let sent: i64 = std::str::from_utf8(r.data().as_ref())
                            .unwrap()
                            .parse()
                            .unwrap();
                        let arrival = r.approximate_arrival_timestamp().unwrap();
                        let arrival =
                            arrival.secs() * 1_000_000 + arrival.subsec_nanos() as i64 / 1000;
                        lat.0.record((now - sent).max(0) as u64).unwrap();
                        lat.1.record((now - arrival).max(0) as u64).unwrap();
                    }
                }
                received.fetch_add(ev.records().len() as u64, Ordering::Relaxed);
            }
        }
    });
    ready_rx
}

async fn throughput(emu: &Emulator, shards: i32, seconds: u64) {
    let c = client(emu);
    let stream = format!("tput-{shards}");
    let consumers = setup(&c, &stream, shards).await;
    let received = Arc::new(AtomicU64::new(0));
    let mut ready = Vec::new();
    for consumer in &consumers {
        for s in 0..shards {
            ready.push(subscribe(
                client(emu),
                consumer.clone(),
                format!("shardId-{s:012}"),
                received.clone(),
                None,
            ));
        }
    }
    for r in ready {
        r.await.unwrap();
    }
    let sent = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    let deadline = t0 + Duration::from_secs(seconds);
    let mut producers = Vec::new();
    for p in 0..4 {
        let (c, stream, sent) = (client(emu), stream.clone(), sent.clone());
        producers.push(tokio::spawn(async move {
            let mut n = 0u64;
            while Instant::now() < deadline {
                let entries: Vec<PutRecordsRequestEntry> = (0..500)
                    .map(|i| {
                        n += 1;
                        PutRecordsRequestEntry::builder()
                            .partition_key(format!("{p}-{i}"))
                            .data(Blob::new(vec![b'x'; 100]))
                            .build()
                            .unwrap()
                    })
                    .collect();
                let out = c
                    .put_records()
                    .stream_name(&stream)
                    .set_records(Some(entries))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(out.failed_record_count(), Some(0));
                sent.fetch_add(500, Ordering::Relaxed);
            }
        }));
    }
    for p in producers {
        p.await.unwrap();
    }
    let put_secs = t0.elapsed().as_secs_f64();
    let total = sent.load(Ordering::Relaxed);
    let want = total * CONSUMERS as u64;
    while received.load(Ordering::Relaxed) < want
        && t0.elapsed() < Duration::from_secs(seconds * 10)
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let all_secs = t0.elapsed().as_secs_f64();
    let got = received.load(Ordering::Relaxed);
    println!(
        "PutRecords into {shards} shard(s), 100-byte records, {CONSUMERS} fan-out consumers: \
         {:>9.0} records/s put; {:>9.0} records/s delivered to the consumers ({got} of {want} delivered)",
        total as f64 / put_secs,
        got as f64 / all_secs,
    );
    assert_eq!(
        got, want,
        "every record reached every consumer exactly once"
    );
}

async fn latency(emu: &Emulator, rate: u64, seconds: u64) {
    let c = client(emu);
    let consumers = setup(&c, "latency", 1).await;
    let received = Arc::new(AtomicU64::new(0));
    let hist = || Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
    let lat = Arc::new(parking_lot::Mutex::new((hist(), hist())));
    let mut ready = Vec::new();
    for consumer in &consumers {
        ready.push(subscribe(
            client(emu),
            consumer.clone(),
            "shardId-000000000000".into(),
            received.clone(),
            Some(lat.clone()),
        ));
    }
    for r in ready {
        r.await.unwrap();
    }
    let interval = Duration::from_secs_f64(1.0 / rate as f64);
    let mut tick = tokio::time::interval(interval);
    let n = rate * seconds;
    for _ in 0..n {
        tick.tick().await;
        let sent = latlab_core::clock::now_micros().to_string();
        c.put_record()
            .stream_name("latency")
            .partition_key("k")
            .data(Blob::new(sent))
            .send()
            .await
            .unwrap();
    }
    let t = Instant::now();
    while received.load(Ordering::Relaxed) < n * CONSUMERS as u64
        && t.elapsed() < Duration::from_secs(10)
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let lat = lat.lock();
    let ms = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    println!(
        "put -> fan-out receive at {rate} records/s, {CONSUMERS} consumers, {} samples:\n  \
         send -> receive     p50 {:.3} ms  p99 {:.3} ms  max {:.3} ms  (SDK put + emulator + SDK push)\n  \
         arrival -> receive  p50 {:.3} ms  p99 {:.3} ms  max {:.3} ms  (the emulator's own added delay)",
        lat.0.len(),
        ms(&lat.0, 0.5),
        ms(&lat.0, 0.99),
        lat.0.max() as f64 / 1000.0,
        ms(&lat.1, 0.5),
        ms(&lat.1, 0.99),
        lat.1.max() as f64 / 1000.0,
    );
    assert_eq!(received.load(Ordering::Relaxed), n * CONSUMERS as u64);
}

/// PutItem then GetItem of 1 KB items from `callers` tasks for `seconds` each: items a second
/// and each call's round trip.
async fn dynamodb(emu: &Emulator, callers: usize, seconds: u64) {
    use aws_sdk_dynamodb::types::{
        AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
        ScalarAttributeType,
    };
    let c = {
        let config = aws_sdk_dynamodb::Config::builder()
            .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
            .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
            .credentials_provider(latlab::aws::emulator_credentials())
            .endpoint_url(emu.endpoint_url())
            .retry_config(RetryConfig::disabled())
            .http_client(latlab::aws::https_client())
            .build();
        aws_sdk_dynamodb::Client::from_conf(config)
    };
    c.create_table()
        .table_name("bench")
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("pk")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("pk")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
    let body = AttributeValue::S("x".repeat(1000));
    for write in [true, false] {
        let hist = Arc::new(parking_lot::Mutex::new(
            Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap(),
        ));
        let done = Arc::new(AtomicU64::new(0));
        let until = Instant::now() + Duration::from_secs(seconds);
        let mut tasks = Vec::new();
        for caller in 0..callers {
            let (c, hist, done, body) = (c.clone(), hist.clone(), done.clone(), body.clone());
            tasks.push(tokio::spawn(async move {
                let mut i = 0u64;
                while Instant::now() < until {
                    // Reads ask for the first 100 keys each caller wrote (it wrote more).
                    let n = if write { i % 1000 } else { i % 100 };
                    let key = AttributeValue::S(format!("item-{caller}-{n}"));
                    let at = Instant::now();
                    if write {
                        c.put_item()
                            .table_name("bench")
                            .item("pk", key)
                            .item("body", body.clone())
                            .send()
                            .await
                            .unwrap();
                    } else {
                        let got = c
                            .get_item()
                            .table_name("bench")
                            .key("pk", key)
                            .send()
                            .await
                            .unwrap();
                        assert!(got.item.is_some(), "every item read was written");
                    }
                    let _ = hist.lock().record(at.elapsed().as_micros() as u64);
                    done.fetch_add(1, Ordering::Relaxed);
                    i += 1;
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let h = hist.lock();
        let ms = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
        println!(
            "DynamoDB {} of 1 KB items, {callers} callers, {seconds} s: {:.0} items/s; round trip p50 {:.3} ms  p99 {:.3} ms  (SDK + HTTP + emulator)",
            if write { "PutItem" } else { "GetItem" },
            done.load(Ordering::Relaxed) as f64 / seconds as f64,
            ms(0.5),
            ms(0.99),
        );
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let emu = start().await;
        println!(
            "latlab emulator benchmark (zero latency profile, {} cores)",
            std::thread::available_parallelism().map_or(0, |n| n.get())
        );
        throughput(&emu, 1, 5).await;
        throughput(&emu, 8, 5).await;
        latency(&emu, 200, 10).await;
        dynamodb(&emu, 8, 5).await;
    });
}
