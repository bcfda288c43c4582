//! UpdateShardCount, SplitShard and MergeShards: accepted at once, the stream UPDATING until the
//! change takes effect (`lineage.rs`), with the documented limits on scaling.
//!
//! Error types: the API reference lists InvalidArgumentException, LimitExceededException,
//! ResourceInUseException and ResourceNotFoundException for all three, and says which applies
//! only for some cases: ResourceInUseException when the stream is not ACTIVE (MergeShards: "If a
//! stream is in the CREATING, UPDATING, or DELETING state, MergeShards returns a
//! ResourceInUseException"), LimitExceededException over UpdateShardCount's 10 calls per second
//! ("TPS over 10 will trigger the LimitExceededException") and over the account's shard limit.
//! Where it does not say, the choice is written next to the check.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::error::{ApiError, ApiResult};
use super::json::{Req, check_name, preview};
use super::lineage::Change;
use super::store::{ACCOUNT, Stream};
use super::{Kinesis, empty};
use crate::kinesis::limits::{KinesisLimits, RateWindow};
use latlab_core::shaping::CallRate;

/// The account's call rates of the resharding operations. The API reference gives the rates
/// ("Make over 10 TPS", "a limit of five transactions per second per account"), not how a second
/// is counted; they are token buckets, as the per-shard read rate is by default.
pub struct Rates {
    update_shard_count: CallRate,
    split: CallRate,
    merge: CallRate,
}

impl Rates {
    pub fn new(limits: &KinesisLimits) -> Rates {
        let rate = |n| CallRate::new(RateWindow::TokenBucket, n);
        Rates {
            update_shard_count: rate(limits.update_shard_count_calls_per_sec),
            split: rate(limits.split_merge_calls_per_sec),
            merge: rate(limits.split_merge_calls_per_sec),
        }
    }
}

/// The rolling window of UpdateShardCount's scalings-per-day limit.
const DAY: Duration = Duration::from_secs(24 * 3600);

fn rate_exceeded(op: &str, per_sec: u32) -> ApiError {
    ApiError::limit_exceeded(format!(
        "Rate exceeded for {op} under account {ACCOUNT}: at most {per_sec} calls per second."
    ))
}

/// A shard id member: required, 1-128 of `[a-zA-Z0-9_.-]`.
fn shard_member<'a>(req: &'a Req, field: &str) -> ApiResult<&'a str> {
    let id = req.str(field)?;
    check_name(field, id)?;
    Ok(id)
}

/// A reshard needs an ACTIVE stream. (The message is the one kinesalite records for the service.)
fn not_active(stream: &Stream, state: &str) -> ApiError {
    ApiError::in_use(format!(
        "Stream {} under account {ACCOUNT} not ACTIVE, instead in state {state}",
        stream.name
    ))
}

/// A shard that was split or merged cannot be again.
fn not_eligible(shard: &str, stream: &Stream) -> ApiError {
    // The API reference does not give this case's type; InvalidArgumentException ("a specified
    // parameter ... can't be used") is the one that fits.
    ApiError::invalid_argument(format!(
        "Shard {shard} in stream {} under account {ACCOUNT} has already been merged or split, and thus is not eligible for merging or splitting.",
        stream.name
    ))
}

impl Kinesis {
    /// Admits one call of a resharding operation against the account's rate.
    fn admit(&self, op: &str) -> ApiResult<()> {
        let now = self.clock.now();
        let mut rates = self.reshard_rates.lock();
        let (rate, per_sec) = match op {
            "UpdateShardCount" => (
                &mut rates.update_shard_count,
                self.limits.update_shard_count_calls_per_sec,
            ),
            "SplitShard" => (&mut rates.split, self.limits.split_merge_calls_per_sec),
            _ => (&mut rates.merge, self.limits.split_merge_calls_per_sec),
        };
        if rate.try_admit(now) {
            Ok(())
        } else {
            Err(rate_exceeded(op, per_sec))
        }
    }

    /// Refuses a change that would take the account's open shards past `max_shards`.
    fn check_account_shards(&self, region_hint: &str, added: u32) -> ApiResult<()> {
        let open: u32 = self.streams.read().values().map(|s| s.open_count()).sum();
        if open + added > self.limits.max_shards {
            return Err(ApiError::limit_exceeded(format!(
                "This request would exceed the shard limit for the account {ACCOUNT} in {region_hint}. \
                 Current shard count for the account: {open}. Limit: {}. Number of additional shards \
                 that would have resulted from this request: {added}.",
                self.limits.max_shards
            )));
        }
        Ok(())
    }

    /// Starts a reshard: the stream must be ACTIVE; it is UPDATING until the change takes effect.
    fn begin(self: &Arc<Self>, stream: &Arc<Stream>, change: Change) -> ApiResult<()> {
        let now = self.clock.now();
        let due = now + self.limits.reshard_duration;
        {
            let mut r = stream.reshard.lock();
            let state = if now < stream.active_at {
                Some("CREATING")
            } else {
                r.pending.map(|_| "UPDATING")
            };
            if let Some(state) = state {
                return Err(not_active(stream, state));
            }
            if matches!(change, Change::Uniform { .. }) {
                let recent = r.recent_scalings(now, DAY);
                if recent >= self.limits.scalings_per_day as usize {
                    // The type is the one the API reference gives for UpdateShardCount's call
                    // rate; it names no other for this limit.
                    return Err(ApiError::limit_exceeded(format!(
                        "UpdateShardCount failed for stream {} under account {ACCOUNT}: the stream was scaled {recent} times in the last 24 hours, the limit is {}.",
                        stream.name, self.limits.scalings_per_day
                    )));
                }
                r.scalings.push_back(now);
            }
            r.pending = Some((change, due));
        }
        let (svc, stream) = (self.clone(), stream.clone());
        tokio::spawn(async move {
            svc.clock.sleep_until(due).await;
            stream.settle(svc.clock.now(), svc.clock.now_micros());
        });
        Ok(())
    }

    pub(super) fn update_shard_count(self: &Arc<Self>, req: &Req) -> ApiResult<Value> {
        self.admit("UpdateShardCount")?;
        let target = req
            .int_opt("TargetShardCount", 1, i32::MAX as i64)?
            .ok_or_else(|| ApiError::missing("TargetShardCount"))? as u32;
        let scaling = req.str("ScalingType")?;
        if scaling != "UNIFORM_SCALING" {
            return Err(ApiError::validation(
                "ScalingType",
                &format!("'{}'", preview(scaling)),
                "Member must satisfy enum value set: [UNIFORM_SCALING]",
            ));
        }
        let stream = self.stream_from(req)?;
        let open = stream.open_count();
        let answer = json!({
            "StreamName": &*stream.name,
            "StreamARN": stream.arn,
            "CurrentShardCount": open,
            "TargetShardCount": target,
        });
        let factor = self.limits.max_scale_factor;
        // "You cannot ... scale up to more than double your current shard count for a stream,
        // scale down below half your current shard count". The API reference lists these among
        // the default limits raised through the limits form, so they answer
        // LimitExceededException, as the scalings per day do; it does not name the type.
        let too_far = if u64::from(target) > u64::from(open) * u64::from(factor) {
            Some("up to more than")
        } else if u64::from(target) * u64::from(factor) < u64::from(open) {
            Some("down to less than 1/")
        } else {
            None
        };
        if let Some(how) = too_far {
            return Err(ApiError::limit_exceeded(format!(
                "UpdateShardCount failed for stream {} under account {ACCOUNT}: cannot scale from {open} open shards to {target}, {how}{factor} times the current shard count.",
                stream.name
            )));
        }
        if target > self.limits.max_shards_per_stream {
            return Err(ApiError::limit_exceeded(format!(
                "UpdateShardCount failed for stream {} under account {ACCOUNT}: {target} shards is more than the limit of {} shards in a stream.",
                stream.name, self.limits.max_shards_per_stream
            )));
        }
        if target == open {
            // Not documented. Nothing to split or merge: the answer says so and the stream
            // stays ACTIVE (a stream that is not ACTIVE answers as for any other target); it is
            // not counted as a scaling.
            let status = stream.status(self.clock.now());
            if status != "ACTIVE" {
                return Err(not_active(&stream, status));
            }
            return Ok(answer);
        }
        self.check_account_shards(region_of(&stream), target.saturating_sub(open))?;
        self.begin(&stream, Change::Uniform { target })?;
        Ok(answer)
    }

    pub(super) fn split_shard(self: &Arc<Self>, req: &Req) -> ApiResult<Value> {
        self.admit("SplitShard")?;
        let shard_id = shard_member(req, "ShardToSplit")?;
        let key_text = req.str("NewStartingHashKey")?;
        let well_formed = key_text == "0"
            || (key_text.len() <= 39
                && !key_text.starts_with('0')
                && key_text.bytes().all(|b| b.is_ascii_digit()));
        if !well_formed {
            return Err(ApiError::validation(
                "NewStartingHashKey",
                &format!("'{}'", preview(key_text)),
                "Member must satisfy regular expression pattern: 0|([1-9]\\d{0,38})",
            ));
        }
        let stream = self.stream_from(req)?;
        let (index, start, end, open) = {
            let shard = stream.shard(shard_id)?;
            let s = shard.lock();
            (s.index, s.hash_start, s.hash_end, s.is_open())
        };
        if !open {
            return Err(not_eligible(shard_id, &stream));
        }
        // The bounds and the message are those kinesalite records for the service: the new key
        // must be greater than one plus the shard's StartingHashKey and less than its
        // EndingHashKey. (A 39-digit key past 2^128-1 is in no shard's range.)
        let at = key_text
            .parse::<u128>()
            .ok()
            .filter(|k| *k > start.saturating_add(1) && *k < end)
            .ok_or_else(|| {
                ApiError::invalid_argument(format!(
                    "NewStartingHashKey {key_text} used in SplitShard() on shard {shard_id} in stream {} under account {ACCOUNT} is not both greater than one plus the shard's StartingHashKey {start} and less than the shard's EndingHashKey {end}.",
                    stream.name
                ))
            })?;
        if stream.open_count() + 1 > self.limits.max_shards_per_stream {
            return Err(ApiError::limit_exceeded(format!(
                "SplitShard failed for stream {} under account {ACCOUNT}: a stream has at most {} shards.",
                stream.name, self.limits.max_shards_per_stream
            )));
        }
        self.check_account_shards(region_of(&stream), 1)?;
        self.begin(&stream, Change::Split { shard: index, at })?;
        Ok(empty())
    }

    pub(super) fn merge_shards(self: &Arc<Self>, req: &Req) -> ApiResult<Value> {
        self.admit("MergeShards")?;
        let first_id = shard_member(req, "ShardToMerge")?;
        let second_id = shard_member(req, "AdjacentShardToMerge")?;
        let stream = self.stream_from(req)?;
        let describe = |id: &str| -> ApiResult<(u32, u128, u128, bool)> {
            let shard = stream.shard(id)?;
            let s = shard.lock();
            Ok((s.index, s.hash_start, s.hash_end, s.is_open()))
        };
        let (a, b) = (describe(first_id)?, describe(second_id)?);
        for (id, (_, _, _, open)) in [(first_id, a), (second_id, b)] {
            if !open {
                return Err(not_eligible(id, &stream));
            }
        }
        // "Two shards are considered adjacent if the union of the hash key ranges for the two
        // shards form a contiguous set with no gaps", in either order. The message is the one
        // kinesalite records for the service.
        let follows = |x: (u32, u128, u128, bool), y: (u32, u128, u128, bool)| {
            x.2.checked_add(1) == Some(y.1)
        };
        if a.0 == b.0 || !(follows(a, b) || follows(b, a)) {
            return Err(ApiError::invalid_argument(format!(
                "Shards {first_id} and {second_id} in stream {} under account {ACCOUNT} are not an adjacent pair of shards eligible for merging",
                stream.name
            )));
        }
        self.begin(
            &stream,
            Change::Merge {
                shard: a.0,
                adjacent: b.0,
            },
        )?;
        Ok(empty())
    }
}

/// The region in a stream's ARN, for messages.
fn region_of(stream: &Stream) -> &str {
    stream.arn.split(':').nth(3).unwrap_or("")
}
