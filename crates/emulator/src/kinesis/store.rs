//! The emulator's state: streams, their shards and records, and registered consumers.
//!
//! Each shard sits behind its own mutex, so producers and readers of different shards never wait
//! for each other; a stream's consumer list has one too. No lock is held across an await.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use parking_lot::{Mutex, RwLock};
use tokio::sync::{oneshot, watch};

use super::error::{ApiError, ApiResult};
use crate::kinesis::limits::KinesisLimits;
use latlab_core::shaping::{Bucket, CallRate};

pub use crate::ACCOUNT;

/// One stored record. Cloning is cheap: the payload and key are reference counted.
#[derive(Clone, Debug)]
pub struct Record {
    /// Position within the shard; the sequence number is derived from it.
    pub counter: u64,
    pub data: Bytes,
    pub partition_key: Arc<str>,
    /// ApproximateArrivalTimestamp, microseconds since the epoch.
    pub arrival_micros: i64,
    pub arrival: Instant,
    /// When GetRecords may return it (arrival + read-visibility delay, never before its
    /// predecessor's, so a shard is always read in order).
    pub visible_at: Instant,
}

impl Record {
    /// Data and partition key, the size that counts against every byte limit.
    pub fn size(&self) -> u64 {
        (self.data.len() + self.partition_key.len()) as u64
    }
}

/// Sequence numbers are 31 decimal digits: `4`, the shard index (9 digits), the record counter
/// (21 digits). They sort as numbers do, within a shard and across it.
pub fn sequence_number(shard: u32, counter: u64) -> String {
    format!("4{shard:09}{counter:021}")
}

/// (shard index, counter) of a sequence number made by [`sequence_number`].
pub fn parse_sequence_number(s: &str) -> Option<(u32, u64)> {
    if s.len() != 31 || !s.starts_with('4') || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((s[1..10].parse().ok()?, s[10..].parse().ok()?))
}

pub fn shard_id(index: u32) -> String {
    format!("shardId-{index:012}")
}

pub fn parse_shard_id(s: &str) -> Option<u32> {
    let digits = s.strip_prefix("shardId-")?;
    if digits.is_empty() || digits.len() > 12 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// An enhanced fan-out subscription in progress on one shard.
pub struct Subscription {
    pub id: u64,
    pub started: Instant,
    /// Ends the subscription early with the given exception (take-over, deregistration).
    pub cancel: oneshot::Sender<ApiError>,
}

/// A closed shard: no record is added after `end`, and its hash keys went to `children`.
#[derive(Clone, Debug)]
pub struct Closed {
    /// The counter one past the shard's last record.
    pub end: u64,
    pub at_micros: i64,
    pub children: Vec<u32>,
}

pub struct Shard {
    pub index: u32,
    pub id: String,
    pub hash_start: u128,
    pub hash_end: u128,
    /// The shard split into this one, or the first of the two merged into it.
    pub parent: Option<u32>,
    /// The second shard of a merge.
    pub adjacent_parent: Option<u32>,
    pub created_micros: i64,
    pub closed: Option<Closed>,
    pub records: VecDeque<Record>,
    /// Counter of `records[0]`; equal to `next_counter` when the shard holds nothing.
    pub first_counter: u64,
    pub next_counter: u64,
    pub bytes: u64,
    pub get_records_rate: CallRate,
    pub iterator_rate: CallRate,
    pub read_bytes: Bucket,
    pub penalty_until: Option<Instant>,
    pub write_records: Bucket,
    pub write_bytes: Bucket,
    last_visible: Option<Instant>,
    /// The counter one past the newest record; fan-out pushers wait on it.
    pub tip: watch::Sender<u64>,
    /// Per consumer ARN: the subscription in progress, and when SubscribeToShard was last called.
    pub subscriptions: HashMap<Arc<str>, Subscription>,
    pub last_subscribe_call: HashMap<Arc<str>, Instant>,
    /// Per consumer ARN: its enhanced fan-out read budget on this shard (2 MB/s by default).
    efo_budgets: HashMap<Arc<str>, Arc<Mutex<Bucket>>>,
}

/// Counters start at 1 so that counter 0 names "before the first record" and can be resumed after.
pub const FIRST_COUNTER: u64 = 1;

impl Shard {
    pub fn new(
        index: u32,
        (hash_start, hash_end): (u128, u128),
        parents: (Option<u32>, Option<u32>),
        created_micros: i64,
        limits: &KinesisLimits,
    ) -> Shard {
        Shard {
            index,
            id: shard_id(index),
            hash_start,
            hash_end,
            parent: parents.0,
            adjacent_parent: parents.1,
            created_micros,
            closed: None,
            records: VecDeque::new(),
            first_counter: FIRST_COUNTER,
            next_counter: FIRST_COUNTER,
            bytes: 0,
            get_records_rate: CallRate::new(
                limits.read_rate_window,
                limits.get_records_calls_per_sec,
            ),
            iterator_rate: CallRate::new(
                limits.read_rate_window,
                limits.get_shard_iterator_calls_per_sec,
            ),
            read_bytes: Bucket::new(limits.read_bytes_per_sec, true),
            penalty_until: None,
            write_records: Bucket::new(limits.write_records_per_sec.into(), false),
            write_bytes: Bucket::new(limits.write_bytes_per_sec, false),
            last_visible: None,
            tip: watch::Sender::new(FIRST_COUNTER),
            subscriptions: HashMap::new(),
            last_subscribe_call: HashMap::new(),
            efo_budgets: HashMap::new(),
        }
    }

    /// The fan-out read budget of a consumer on this shard, shared by its subscriptions one
    /// after another (a new subscription continues where the last one left the budget).
    pub fn efo_budget(&mut self, consumer: &Arc<str>, bytes_per_sec: u64) -> Arc<Mutex<Bucket>> {
        self.efo_budgets
            .entry(consumer.clone())
            .or_insert_with(|| Arc::new(Mutex::new(Bucket::new(bytes_per_sec, true))))
            .clone()
    }

    /// Forgets a deregistered consumer's subscription state on this shard.
    pub fn forget_consumer(&mut self, consumer: &Arc<str>) -> Option<Subscription> {
        self.last_subscribe_call.remove(consumer);
        self.efo_budgets.remove(consumer);
        self.subscriptions.remove(consumer)
    }

    /// Appends a record that passed the write limits; returns its counter.
    pub fn append(
        &mut self,
        data: Bytes,
        partition_key: Arc<str>,
        now: Instant,
        arrival_micros: i64,
        visibility: Duration,
    ) -> u64 {
        let counter = self.next_counter;
        let visible_at = (now + visibility).max(self.last_visible.unwrap_or(now));
        self.last_visible = Some(visible_at);
        let rec = Record {
            counter,
            data,
            partition_key,
            arrival_micros,
            arrival: now,
            visible_at,
        };
        self.bytes += rec.size();
        self.records.push_back(rec);
        self.next_counter += 1;
        self.tip.send_replace(self.next_counter);
        counter
    }

    /// Drops records past the retention period and, oldest first, records over the byte cap.
    /// Readers positioned before the new trim horizon continue from it, as on the service.
    pub fn trim(&mut self, now: Instant, retention: Duration, max_bytes: u64) {
        while let Some(front) = self.records.front() {
            let expired = now.saturating_duration_since(front.arrival) > retention;
            if !(expired || self.bytes > max_bytes) {
                break;
            }
            self.bytes -= front.size();
            self.records.pop_front();
            self.first_counter += 1;
        }
    }

    /// The index into `records` of the first record at or after `counter`.
    pub fn index_of(&self, counter: u64) -> usize {
        counter
            .saturating_sub(self.first_counter)
            .min(self.records.len() as u64) as usize
    }

    /// The first record whose arrival is at or after `micros` (AT_TIMESTAMP), as a counter.
    pub fn counter_at_time(&self, micros: i64) -> u64 {
        let i = self.records.partition_point(|r| r.arrival_micros < micros);
        self.first_counter + i as u64
    }

    pub fn starting_sequence_number(&self) -> String {
        sequence_number(self.index, FIRST_COUNTER)
    }

    pub fn is_open(&self) -> bool {
        self.closed.is_none()
    }

    /// A closed shard's EndingSequenceNumber: above every sequence number the shard holds.
    /// (The service's is likewise a number past the last record; it is never a record's.)
    pub fn ending_sequence_number(&self) -> Option<String> {
        self.closed
            .as_ref()
            .map(|_| sequence_number(self.index, u64::MAX))
    }

    /// The shard's parents, as ChildShards' `ParentShards` lists them.
    pub fn parent_ids(&self) -> Vec<String> {
        [self.parent, self.adjacent_parent]
            .into_iter()
            .flatten()
            .map(shard_id)
            .collect()
    }
}

/// The hash key range of shard `index` of `count`: the 128-bit space split evenly, shard `i`
/// starting at floor(i * 2^128 / count), as the service lays out a new stream (two shards split
/// at 2^127, three at 113427455640312821154458202477256070485). Boundaries nest: those of `n`
/// shards are among those of `2n`, so doubling splits each shard in two and halving merges pairs.
pub fn hash_range(index: u32, count: u32) -> (u128, u128) {
    let start = |i: u32| -> u128 {
        if i == 0 {
            return 0;
        }
        // 2^128 = q * count + r, computed without 2^128.
        let n = u128::from(count);
        let (mut q, mut r) = (u128::MAX / n, u128::MAX % n + 1);
        if r == n {
            (q, r) = (q + 1, 0);
        }
        let i = u128::from(i);
        i * q + i * r / n
    };
    let end = if index + 1 >= count {
        u128::MAX
    } else {
        start(index + 1) - 1
    };
    (start(index), end)
}

/// The 128-bit hash key of a partition key: its MD5 digest read as a big-endian integer.
pub fn partition_hash(partition_key: &str) -> u128 {
    use md5::{Digest, Md5};
    let digest = Md5::digest(partition_key.as_bytes());
    u128::from_be_bytes(digest.into())
}

#[derive(Clone, Debug)]
pub struct Consumer {
    pub name: String,
    pub arn: Arc<str>,
    pub created_micros: i64,
    pub active_at: Instant,
}

impl Consumer {
    pub fn status(&self, now: Instant) -> &'static str {
        if now >= self.active_at {
            "ACTIVE"
        } else {
            "CREATING"
        }
    }
}

pub struct Stream {
    pub name: Arc<str>,
    pub arn: String,
    /// Distinguishes a stream from an earlier one of the same name, so old iterators fail.
    pub incarnation: u64,
    pub created_micros: i64,
    pub active_at: Instant,
    /// Every shard, open and closed, by index; and the open ones' hash ranges.
    pub shards: RwLock<Shards>,
    /// A reshard under way and the recent scalings (`lineage.rs`).
    pub reshard: Mutex<super::lineage::Reshard>,
    pub consumers: Mutex<Vec<Consumer>>,
    pub retention_hours: u32,
    pub tags: Mutex<Vec<(String, String)>>,
    /// The limits new shards are made with.
    pub limits: KinesisLimits,
}

/// A stream's shards. Indexes only grow: a reshard closes shards and appends their children.
pub struct Shards {
    pub all: Vec<Arc<Mutex<Shard>>>,
    /// (StartingHashKey, EndingHashKey, index) of the open shards, by StartingHashKey.
    pub open: Vec<(u128, u128, u32)>,
}

impl Shards {
    /// The open shard whose hash key range holds `hash` (the open ranges cover 0..2^128-1).
    pub fn route(&self, hash: u128) -> &Arc<Mutex<Shard>> {
        let i = self.open.partition_point(|(start, _, _)| *start <= hash);
        let (_, _, index) = self.open[i.saturating_sub(1)];
        &self.all[index as usize]
    }

    pub fn open_count(&self) -> u32 {
        self.open.len() as u32
    }
}

impl Stream {
    pub fn new(
        name: &str,
        region: &str,
        shard_count: u32,
        incarnation: u64,
        limits: &KinesisLimits,
        clock: &crate::time::ServiceClock,
    ) -> Stream {
        let now = clock.now();
        let created_micros = clock.now_micros();
        let all: Vec<_> = (0..shard_count)
            .map(|i| {
                let range = hash_range(i, shard_count);
                Arc::new(Mutex::new(Shard::new(
                    i,
                    range,
                    (None, None),
                    created_micros,
                    limits,
                )))
            })
            .collect();
        let open = (0..shard_count)
            .map(|i| {
                let (s, e) = hash_range(i, shard_count);
                (s, e, i)
            })
            .collect();
        Stream {
            name: Arc::from(name),
            arn: stream_arn(region, name),
            incarnation,
            created_micros,
            active_at: now + limits.stream_activation,
            shards: RwLock::new(Shards { all, open }),
            reshard: Mutex::new(Default::default()),
            consumers: Mutex::new(Vec::new()),
            retention_hours: (limits.retention.as_secs() / 3600).max(1) as u32,
            tags: Mutex::new(Vec::new()),
            limits: limits.clone(),
        }
    }

    /// CREATING, then ACTIVE; UPDATING while a reshard is under way.
    pub fn status(&self, now: Instant) -> &'static str {
        if now < self.active_at {
            "CREATING"
        } else if self.reshard.lock().updating(now) {
            "UPDATING"
        } else {
            "ACTIVE"
        }
    }

    /// Every shard, open and closed.
    pub fn all_shards(&self) -> Vec<Arc<Mutex<Shard>>> {
        self.shards.read().all.clone()
    }

    pub fn open_count(&self) -> u32 {
        self.shards.read().open_count()
    }

    pub fn shard_at(&self, index: u32) -> Option<Arc<Mutex<Shard>>> {
        self.shards.read().all.get(index as usize).cloned()
    }

    pub fn shard(&self, shard_id: &str) -> ApiResult<Arc<Mutex<Shard>>> {
        parse_shard_id(shard_id)
            .and_then(|i| self.shard_at(i))
            .ok_or_else(|| {
                ApiError::not_found(format!(
                    "Could not find shard {shard_id} in stream {} under account {ACCOUNT}.",
                    self.name
                ))
            })
    }
}

pub fn stream_arn(region: &str, name: &str) -> String {
    format!("arn:aws:kinesis:{region}:{ACCOUNT}:stream/{name}")
}

/// The stream name inside a stream ARN (`arn:aws:kinesis:R:A:stream/NAME`).
pub fn stream_name_from_arn(arn: &str) -> Option<&str> {
    let mut parts = arn.splitn(6, ':');
    let (arn_, _partition, service) = (parts.next()?, parts.next()?, parts.next()?);
    let resource = parts.nth(2)?;
    if arn_ != "arn" || service != "kinesis" {
        return None;
    }
    let name = resource.strip_prefix("stream/")?;
    (!name.is_empty() && !name.contains('/')).then_some(name)
}

/// (stream name, consumer name) inside a consumer ARN
/// (`arn:aws:kinesis:R:A:stream/NAME/consumer/CONSUMER:CREATED`).
pub fn parse_consumer_arn(arn: &str) -> Option<(&str, &str)> {
    let mut parts = arn.splitn(6, ':');
    let (arn_, _partition, service) = (parts.next()?, parts.next()?, parts.next()?);
    let resource = parts.nth(2)?;
    if arn_ != "arn" || service != "kinesis" {
        return None;
    }
    let rest = resource.strip_prefix("stream/")?;
    let (stream, consumer) = rest.split_once("/consumer/")?;
    let consumer = consumer.split(':').next()?;
    (!stream.is_empty() && !consumer.is_empty()).then_some((stream, consumer))
}

/// Shard iterators are opaque to clients; ours carry where to read and when they were made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Iterator {
    pub stream: String,
    pub incarnation: u64,
    pub shard: u32,
    pub position: u64,
    pub created_ms: i64,
    /// The emulator's iterator epoch when it was handed out: a forced expiry (a fault) moves the
    /// epoch on, and older iterators answer ExpiredIteratorException.
    pub epoch: u64,
}

impl Iterator {
    pub fn encode(&self) -> String {
        let raw = format!(
            "latlab2|{}|{}|{}|{}|{}|{}",
            self.incarnation, self.shard, self.position, self.created_ms, self.epoch, self.stream
        );
        base64::engine::general_purpose::STANDARD.encode(raw)
    }

    pub fn decode(text: &str) -> Option<Iterator> {
        let raw = base64::engine::general_purpose::STANDARD
            .decode(text)
            .ok()?;
        let raw = String::from_utf8(raw).ok()?;
        let mut p = raw.splitn(7, '|');
        if p.next()? != "latlab2" {
            return None;
        }
        Some(Iterator {
            incarnation: p.next()?.parse().ok()?,
            shard: p.next()?.parse().ok()?,
            position: p.next()?.parse().ok()?,
            created_ms: p.next()?.parse().ok()?,
            epoch: p.next()?.parse().ok()?,
            stream: p.next()?.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_round_trip_and_sort() {
        let a = sequence_number(3, 41);
        assert_eq!(parse_sequence_number(&a), Some((3, 41)));
        assert!(sequence_number(0, 9) < sequence_number(0, 10));
        assert_eq!(parse_sequence_number("12"), None);
        assert_eq!(parse_shard_id("shardId-000000000007"), Some(7));
        assert_eq!(parse_shard_id("shard-7"), None);
    }

    #[test]
    fn hash_ranges_cover_the_key_space() {
        for count in [1u32, 2, 3, 8] {
            let mut next = 0u128;
            for i in 0..count {
                let (s, e) = hash_range(i, count);
                assert_eq!(s, next, "shard {i} of {count}");
                next = e.wrapping_add(1);
            }
            assert_eq!(next, 0, "the last shard ends at 2^128-1");
        }
        assert_eq!(hash_range(1, 2).0, 1 << 127);
        assert_eq!(hash_range(1, 3).0, 113427455640312821154458202477256070485);
        assert_eq!(hash_range(2, 4).0, hash_range(1, 2).0);
    }

    #[test]
    fn arns_parse() {
        assert_eq!(
            stream_name_from_arn("arn:aws:kinesis:us-east-1:000000000000:stream/s1"),
            Some("s1")
        );
        assert_eq!(stream_name_from_arn("arn:aws:s3:::b"), None);
        assert_eq!(
            parse_consumer_arn(
                "arn:aws:kinesis:us-east-1:000000000000:stream/s1/consumer/c1:1700000000"
            ),
            Some(("s1", "c1"))
        );
    }

    #[test]
    fn iterators_round_trip() {
        let it = Iterator {
            stream: "a|b".into(),
            incarnation: 2,
            shard: 1,
            position: 9,
            created_ms: 5,
            epoch: 3,
        };
        assert_eq!(Iterator::decode(&it.encode()), Some(it));
        assert_eq!(Iterator::decode("bm9wZQ=="), None);
    }
}
