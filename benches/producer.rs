//! The producer's two modes on the embedded emulator (`zero` profile), through aws-sdk-kinesis
//! over HTTP on this machine: one PutRecord per record against PutRecords batches, each asked
//! for more than one PutRecord at a time can carry. It prints, per mode, the asked and achieved
//! rates, the CPU latlab's process used (emulator included: it is embedded), records per second
//! per core, and why a mode fell short.
//!
//! Run with `cargo bench --bench producer` (`-- SECONDS` to change the 10 s per mode). It
//! asserts only that every acknowledged record is accounted for.

use std::time::Duration;

use latlab::metrics::cpu;
use latlab::run::{Run, TargetOptions};
use latlab::scenario::Scenario;

const RATE: u32 = 15_000;
const SHARDS: u32 = 20;

fn scenario(mode: &str) -> Scenario {
    // One poller reading once a minute: a consumer the lab needs, costing next to nothing.
    let text = format!(
        "name = \"producer-bench\"\ndescription = \"producer bench\"\nduration = \"10s\"\n\
         latency_profile = \"zero\"\n[emulator]\nlimits = {{ stream_activation = \"0s\" }}\n\
         [kinesis]\nstream = \"bench\"\nshards = {SHARDS}\ndrain = \"0s\"\n\
         [kinesis.producer]\nrate = {RATE}\npayload = \"128B\"\nmax_in_flight = 64\n{mode}\n\
         [[kinesis.consumers]]\nkind = \"poller\"\nname = \"idle\"\ninterval = \"1m\"\n"
    );
    Scenario::parse(&text, "bench").expect("a valid scenario")
}

async fn measure(label: &str, mode: &str, seconds: u64) -> f64 {
    let lab = Run::start(scenario(mode), &TargetOptions::default())
        .await
        .expect("the lab starts");
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let (snap, problems) = lab.finish().await;
    assert!(problems.is_empty(), "{problems:?}");
    let k = snap.kinesis.expect("a Kinesis lab");
    let p = &k.producer;
    let cores_used = p.cpu;
    let per_core = if cores_used > 0.0 {
        p.achieved_rate / cores_used
    } else {
        0.0
    };
    let c = &k.consumers[0].counts;
    assert_eq!(
        c.received + c.lost + c.unread,
        c.acknowledged,
        "{label}: every acknowledged record is accounted for"
    );
    println!(
        "{label:<36} asked {RATE:>6}/s  achieved {:>8.0}/s  CPU {:>4.0}% of a core  {:>8.0} records/s per core{}",
        p.achieved_rate,
        cores_used * 100.0,
        per_core,
        p.shortfall()
            .map_or(String::new(), |s| format!("  {}", s.describe(usize::MAX)))
    );
    p.achieved_rate
}

fn main() {
    let seconds: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    println!(
        "producer: {SHARDS} shards, 128 B records, at most 64 requests in flight, {seconds} s per mode, {} cores",
        cpu::cores()
    );
    rt.block_on(async {
        let single = measure("PutRecord per record", "", seconds).await;
        let batched = measure(
            "PutRecords, linger 20 ms, batch 500",
            "mode = \"put-records\"\nlinger = \"20ms\"\nbatch = 500",
            seconds,
        )
        .await;
        println!(
            "batched / single achieved rate: x{:.2}",
            batched / single.max(1.0)
        );
    });
}
