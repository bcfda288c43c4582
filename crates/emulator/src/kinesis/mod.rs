//! The Kinesis Data Streams emulator: awsJson1_1 over HTTP, with the per-shard limits enforced.
//!
//! One file per group of operations: `streams.rs` (create, delete, describe, list, tags),
//! `records.rs` (put, iterators, GetRecords), `consumers.rs` (enhanced fan-out registration),
//! `subscribe.rs` (SubscribeToShard's event stream), `shards.rs` (ListShards, DescribeStream) and
//! `reshard.rs` (UpdateShardCount, SplitShard, MergeShards). `store.rs` holds the state they
//! share; `lineage.rs` how a reshard changes it.

pub mod consumers;
pub mod error;
pub mod http;
pub mod json;
pub mod limits;
pub mod lineage;
pub mod profile;
pub mod records;
pub mod reshard;
pub mod shards;
pub mod stats;
pub mod store;
pub mod streams;
pub mod subscribe;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use parking_lot::RwLock;
use serde_json::Value;

use super::Body;
use error::{ApiError, ApiResult};
use json::Req;
use limits::KinesisLimits;
use profile::KinesisProfile;
use stats::Stats;
use store::{ACCOUNT, Stream};

pub use latlab_core::services::kinesis::{Op, TARGET_PREFIX, faults};

/// What an operation answers: a JSON document, or (SubscribeToShard) an event stream.
pub enum Reply {
    Json(Value),
    EventStream(Body),
}

pub struct Kinesis {
    pub limits: KinesisLimits,
    profile: RwLock<Arc<KinesisProfile>>,
    streams: RwLock<BTreeMap<String, Arc<Stream>>>,
    incarnations: AtomicU64,
    subscriptions: AtomicU64,
    pub stats: Stats,
    /// The service's clock: every time-based rule reads it.
    pub clock: super::time::ServiceClock,
    /// Iterators handed out before the current epoch have expired (a fault moves it on).
    pub iterator_epoch: AtomicU64,
    /// The account's call rates of the resharding operations.
    reshard_rates: parking_lot::Mutex<reshard::Rates>,
}

impl Kinesis {
    pub fn new(limits: KinesisLimits, profile: KinesisProfile) -> Kinesis {
        Kinesis {
            profile: RwLock::new(Arc::new(profile)),
            streams: RwLock::new(BTreeMap::new()),
            incarnations: AtomicU64::new(1),
            subscriptions: AtomicU64::new(1),
            stats: Stats::default(),
            clock: Default::default(),
            iterator_epoch: AtomicU64::new(0),
            reshard_rates: parking_lot::Mutex::new(reshard::Rates::new(&limits)),
            limits,
        }
    }

    /// Every shard iterator handed out so far expires (a fault).
    pub fn expire_iterators(&self) {
        self.iterator_epoch.fetch_add(1, Ordering::Relaxed);
    }

    pub fn profile(&self) -> Arc<KinesisProfile> {
        self.profile.read().clone()
    }

    /// Replaces the latency profile; requests already in flight finish under the old one.
    pub fn set_profile(&self, profile: KinesisProfile) {
        *self.profile.write() = Arc::new(profile);
    }

    /// Handles one operation, with the profile's request and response legs around it.
    pub async fn handle(
        self: &Arc<Self>,
        target: &str,
        body: &[u8],
        region: &str,
    ) -> ApiResult<Reply> {
        let op = Op::of_target(target).ok_or_else(|| ApiError::unknown_operation(target))?;
        self.stats.asked(op.name());
        let req = Req::parse(body)?;
        let p = self.profile();
        latlab_core::shaping::delay(&p.request).await;
        let reply = self.dispatch(op, req, region).await;
        latlab_core::shaping::delay(&p.response).await;
        reply
    }

    async fn dispatch(self: &Arc<Self>, op: Op, req: Req, region: &str) -> ApiResult<Reply> {
        let json = match op {
            Op::CreateStream => self.create_stream(&req, region)?,
            Op::DeleteStream => self.delete_stream(&req)?,
            Op::DescribeStream => self.describe_stream(&req)?,
            Op::DescribeStreamSummary => self.describe_stream_summary(&req)?,
            Op::ListStreams => self.list_streams(&req)?,
            Op::ListShards => self.list_shards(&req)?,
            Op::AddTagsToStream => self.add_tags(&req)?,
            Op::ListTagsForStream => self.list_tags(&req)?,
            Op::PutRecord => self.put_record(&req).await?,
            Op::PutRecords => self.put_records(&req).await?,
            Op::GetShardIterator => self.get_shard_iterator(&req)?,
            Op::GetRecords => self.get_records(&req)?,
            Op::RegisterStreamConsumer => self.register_consumer(&req)?,
            Op::DescribeStreamConsumer => self.describe_consumer(&req)?,
            Op::ListStreamConsumers => self.list_consumers(&req)?,
            Op::DeregisterStreamConsumer => self.deregister_consumer(&req)?,
            Op::SubscribeToShard => return self.subscribe_to_shard(&req).map(Reply::EventStream),
            Op::UpdateShardCount => self.update_shard_count(&req)?,
            Op::SplitShard => self.split_shard(&req)?,
            Op::MergeShards => self.merge_shards(&req)?,
        };
        Ok(Reply::Json(json))
    }

    /// A stream by name, with any reshard that has come due applied.
    fn stream_by_name(&self, name: &str) -> ApiResult<Arc<Stream>> {
        let stream = self
            .streams
            .read()
            .get(name)
            .cloned()
            .ok_or_else(|| not_found(name))?;
        stream.settle(self.clock.now(), self.clock.now_micros());
        Ok(stream)
    }

    /// The stream a request names, by `StreamName` or `StreamARN`.
    fn stream_from(&self, req: &Req) -> ApiResult<Arc<Stream>> {
        if let Some(name) = req.str_opt("StreamName")? {
            json::check_name("StreamName", name)?;
            return self.stream_by_name(name);
        }
        match req.str_opt("StreamARN")? {
            Some(arn) => {
                let name = store::stream_name_from_arn(arn).ok_or_else(|| {
                    ApiError::validation(
                        "StreamARN",
                        &format!("'{}'", json::preview(arn)),
                        "Member must satisfy regular expression pattern: arn:aws.*:kinesis:.*:\\d{12}:stream/\\S+",
                    )
                })?;
                self.stream_by_name(name)
            }
            None => Err(ApiError::invalid_argument(
                "Either StreamName or StreamARN must be provided.",
            )),
        }
    }

    /// The stream, which must be ACTIVE (or UPDATING: reads and writes go on during a reshard)
    /// for data operations.
    fn active_stream_from(&self, req: &Req) -> ApiResult<Arc<Stream>> {
        let stream = self.stream_from(req)?;
        let status = stream.status(self.clock.now());
        if status == "CREATING" {
            return Err(ApiError::not_found(format!(
                "Stream {} under account {ACCOUNT} is {status}, not ACTIVE.",
                stream.name
            )));
        }
        Ok(stream)
    }

    fn next_incarnation(&self) -> u64 {
        self.incarnations.fetch_add(1, Ordering::Relaxed)
    }

    fn next_subscription_id(&self) -> u64 {
        self.subscriptions.fetch_add(1, Ordering::Relaxed)
    }
}

fn not_found(name: &str) -> ApiError {
    ApiError::not_found(format!("Stream {name} under account {ACCOUNT} not found."))
}

/// The response body of an operation that answers nothing.
fn empty() -> Value {
    Value::Object(Default::default())
}

/// Epoch seconds with microsecond precision, the JSON form of every timestamp.
pub fn epoch_secs(micros: i64) -> f64 {
    micros as f64 / 1e6
}

/// Data of a request, decoded from base64.
fn decode_data(field: &str, text: &str) -> ApiResult<Bytes> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map(Bytes::from)
        .map_err(|e| ApiError::serialization(format!("{field} is not valid base64: {e}")))
}
