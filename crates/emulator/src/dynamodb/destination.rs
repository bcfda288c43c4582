//! Kinesis Data Streams for DynamoDB: a table's changes put into a Kinesis data stream of the
//! emulator's, each as the JSON record AWS documents (the event, the table, the keys, both images,
//! the creation time in milliseconds), after the latency profile's `dynamodb.kinesis_push`.
//! Pushes wait in a bounded queue for one worker, which hands each to the service that owns the
//! stream (`service::Peers`, never naming it); a push the stream refuses for throughput is tried
//! again a few times, as DynamoDB retries, and one it never takes is counted, not lost silently.

use std::sync::Weak;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::service::{Delivery, Peers};

/// Pushes waiting at most; past it a push is counted as dropped.
pub const QUEUE: usize = 10_000;
/// Tries of one push before it is counted as failed, and the wait between them.
const TRIES: u32 = 5;
const BACKOFF: Duration = Duration::from_millis(100);

/// One change on its way to a data stream.
pub struct Push {
    pub due: tokio::time::Instant,
    pub to: String,
    pub partition_key: String,
    pub data: Vec<u8>,
}

/// The counts of pushes: put into their stream, and given up on (the queue full, the stream
/// refusing every try, or gone).
#[derive(Default)]
pub struct Counts {
    pub pushed: AtomicU64,
    pub failed: AtomicU64,
}

/// The worker: each push at its time, in order, until the queue's senders are gone.
pub async fn run(
    mut rx: mpsc::Receiver<Push>,
    peers: Weak<dyn Peers>,
    counts: std::sync::Arc<Counts>,
) {
    while let Some(p) = rx.recv().await {
        tokio::time::sleep_until(p.due).await;
        let Some(peers) = peers.upgrade() else {
            return;
        };
        let d = Delivery {
            to: &p.to,
            partition_key: &p.partition_key,
            data: &p.data,
        };
        let mut done = false;
        for attempt in 0..TRIES {
            if peers.deliver(&d).is_ok() {
                done = true;
                break;
            }
            if attempt + 1 < TRIES {
                tokio::time::sleep(BACKOFF * (attempt + 1)).await;
            }
        }
        let c = if done { &counts.pushed } else { &counts.failed };
        c.fetch_add(1, Ordering::Relaxed);
    }
}

/// A change as Kinesis Data Streams for DynamoDB writes it into the data stream.
#[allow(clippy::too_many_arguments)]
pub fn record(
    event: &str,
    table: &str,
    region: &str,
    seq: u64,
    keys: &Value,
    old: Option<&Value>,
    new: Option<&Value>,
    size: u64,
) -> Vec<u8> {
    let mut d = json!({
        "ApproximateCreationDateTime": latlab_core::clock::now_micros() / 1000,
        "ApproximateCreationDateTimePrecision": "MILLISECOND",
        "Keys": keys,
        "SizeBytes": size,
    });
    if let Some(n) = new {
        d["NewImage"] = n.clone();
    }
    if let Some(o) = old {
        d["OldImage"] = o.clone();
    }
    serde_json::to_vec(&json!({
        "awsRegion": region,
        "eventID": format!("{:032x}", seq as u128 * 0x9e37_79b9_7f4a_7c15),
        "eventName": event,
        "userIdentity": null,
        "recordFormat": "application/json",
        "tableName": table,
        "dynamodb": d,
        "eventSource": "aws:dynamodb",
    }))
    .unwrap_or_default()
}
