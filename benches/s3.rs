//! What the S3 emulator sustains on the `zero` latency profile (no modelled delays or bandwidth):
//! small-object PUT and GET rates, and large-object throughput, on a Standard bucket and an
//! Express directory bucket, through aws-sdk-s3 over HTTP on this machine.
//!
//! Run with `cargo bench --bench s3`. It prints figures; it asserts only that nothing failed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use aws_sdk_s3::primitives::ByteStream;
use aws_smithy_types::retry::RetryConfig;
use latlab_emulator::limits::Limits;
use latlab_emulator::{Emulator, EmulatorConfig};

async fn rate(
    c: &aws_sdk_s3::Client,
    bucket: &str,
    get: bool,
    seconds: u64,
    workers: usize,
) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let body = bytes::Bytes::from(vec![7u8; 1000]);
    let mut tasks = Vec::new();
    for w in 0..workers {
        let (c, bucket, done, body) = (c.clone(), bucket.to_string(), done.clone(), body.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = 0u64;
            while Instant::now() < deadline {
                let key = format!("latlab/bench/{w}/{}", i % 64);
                if get {
                    let out = c
                        .get_object()
                        .bucket(&bucket)
                        .key(&key)
                        .send()
                        .await
                        .expect("GET");
                    out.body.collect().await.expect("body");
                } else {
                    c.put_object()
                        .bucket(&bucket)
                        .key(&key)
                        .body(ByteStream::from(body.clone()))
                        .send()
                        .await
                        .expect("PUT");
                }
                i += 1;
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    done.load(Ordering::Relaxed) as f64 / seconds as f64
}

async fn throughput(c: &aws_sdk_s3::Client, bucket: &str, size: usize, count: usize) -> (f64, f64) {
    let body = bytes::Bytes::from(vec![9u8; size]);
    let t = Instant::now();
    for i in 0..count {
        c.put_object()
            .bucket(bucket)
            .key(format!("latlab/big/{i}"))
            .body(ByteStream::from(body.clone()))
            .send()
            .await
            .expect("PUT");
    }
    let up = (size * count) as f64 / t.elapsed().as_secs_f64() / 1e6;
    let t = Instant::now();
    for i in 0..count {
        let out = c
            .get_object()
            .bucket(bucket)
            .key(format!("latlab/big/{i}"))
            .send()
            .await
            .expect("GET");
        let n = out.body.collect().await.expect("body").into_bytes().len();
        assert_eq!(n, size);
    }
    let down = (size * count) as f64 / t.elapsed().as_secs_f64() / 1e6;
    (up, down)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let limits = Limits::load(None, &["s3.memory_bytes=2GiB".to_string()]).unwrap();
        let emu = Emulator::start(EmulatorConfig { limits, ..Default::default() }).await.unwrap();
        let c = latlab::aws::emulator_s3_client(&emu.endpoint_url(), RetryConfig::disabled());
        println!("latlab S3 emulator benchmark (zero latency profile, {} cores)", std::thread::available_parallelism().map_or(0, |n| n.get()));
        for bucket in ["bench-standard", "bench--use1-az4--x-s3"] {
            c.create_bucket().bucket(bucket).send().await.unwrap();
            let class = if bucket.ends_with("--x-s3") { "Express One Zone" } else { "Standard" };
            let puts = rate(&c, bucket, false, 5, 16).await;
            let gets = rate(&c, bucket, true, 5, 16).await;
            let (up, down) = throughput(&c, bucket, 64 * 1024 * 1024, 8).await;
            println!(
                "{class:<17} 1 KB objects, 16 at once: {puts:>7.0} PUT/s {gets:>7.0} GET/s | 64 MiB objects one at a time: {up:>6.0} MB/s up {down:>6.0} MB/s down"
            );
        }
        let stats = emu.s3().stats();
        let errors: u64 = stats.operations.iter().map(|(_, _, c)| c.errors + c.slow_downs).sum();
        assert_eq!(errors, 0);
    });
}
