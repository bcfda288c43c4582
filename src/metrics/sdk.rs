//! What the SDK did on a client's behalf: attempts, retries, throttles, back-off waits, calls whose
//! error escaped the retries, and the retry quota left. Filled by the interceptor in `aws.rs`
//! (which sees attempts the SDK retried internally) and by the probes (which see escaped errors).

use std::collections::BTreeMap;

use parking_lot::Mutex;

use super::series::{Rate, Series, Summary};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SdkCounters {
    /// Operations started.
    pub calls: u64,
    /// HTTP attempts, the first of each call and every retry.
    pub attempts: u64,
    /// Attempts beyond the first.
    pub retries: u64,
    /// Attempts answered with a throttling error (ProvisionedThroughputExceeded, SlowDown, ...).
    pub throttles: u64,
    /// Calls that failed after the SDK's retries, by error code.
    pub escaped: BTreeMap<String, u64>,
    /// Tokens left in the client's retry quota, as the SDK's documented rules count them.
    pub quota_left: Option<u64>,
    /// Retries the quota refused (an error was retryable but the bucket was empty).
    pub quota_refusals: u64,
    /// Calls, attempts and throttled attempts by operation name.
    pub operations: BTreeMap<String, OpCounts>,
    /// First attempts the SDK held back before sending (its adaptive mode's client-side rate
    /// limiter: the wait between the retry loop's start and the first attempt).
    pub client_waits: u64,
}

/// One operation's share of a client's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCounts {
    pub calls: u64,
    pub attempts: u64,
    pub throttles: u64,
}

impl SdkCounters {
    pub fn escaped_total(&self) -> u64 {
        self.escaped.values().sum()
    }

    pub fn escaped_throttles(&self) -> u64 {
        self.escaped
            .iter()
            .filter(|(code, _)| is_throttle(code))
            .map(|(_, n)| n)
            .sum()
    }
}

/// Codes the SDKs classify as throttling.
pub fn is_throttle(code: &str) -> bool {
    matches!(
        code,
        "ProvisionedThroughputExceededException"
            | "LimitExceededException"
            | "ThrottlingException"
            | "Throttling"
            | "ThrottledException"
            | "RequestThrottledException"
            | "TooManyRequestsException"
            | "RequestLimitExceeded"
            | "SlowDown"
            | "BandwidthLimitExceeded"
            | "RequestThrottled"
            | "PriorRequestNotComplete"
            | "EC2ThrottledException"
            | "TransactionInProgressException"
    )
}

/// Counters plus the latency of each attempt and each back-off wait.
#[derive(Default)]
pub struct SdkStats {
    pub counters: Mutex<SdkCounters>,
    /// Duration of every attempt; its per-second counts are the client's calls/s.
    pub attempt_latency: Mutex<Series>,
    /// The SDK's wait before each retry.
    pub retry_wait: Mutex<Series>,
    /// The client-side rate limiter's wait before a first attempt (adaptive mode), when it waited.
    pub client_wait: Mutex<Series>,
    /// Attempts per second, by operation (GetRecords apart from GetShardIterator).
    pub attempts_by_op: Mutex<BTreeMap<String, Rate>>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SdkSnapshot {
    pub counters: SdkCounters,
    pub attempt_latency: Summary,
    pub retry_wait: Summary,
    pub client_wait: Summary,
}

impl SdkStats {
    pub fn escaped(&self, code: &str) {
        *self
            .counters
            .lock()
            .escaped
            .entry(code.to_string())
            .or_default() += 1;
    }

    pub fn snapshot(&self) -> SdkSnapshot {
        let counters = self.counters.lock().clone();
        let attempt_latency = self.attempt_latency.lock().summary();
        let retry_wait = self.retry_wait.lock().summary();
        let client_wait = self.client_wait.lock().summary();
        SdkSnapshot {
            counters,
            attempt_latency,
            retry_wait,
            client_wait,
        }
    }

    /// Forgets the counts and latencies (the quota mirror keeps its level: the SDK's bucket does).
    pub fn reset(&self) {
        {
            let mut c = self.counters.lock();
            let quota = c.quota_left;
            *c = SdkCounters {
                quota_left: quota,
                ..SdkCounters::default()
            };
        }
        self.attempt_latency.lock().reset();
        self.retry_wait.lock().reset();
        self.client_wait.lock().reset();
        self.attempts_by_op.lock().clear();
    }

    /// Attempts of `op` in each of the last `n` seconds up to `now_second`, oldest first.
    pub fn attempts_of(&self, op: &str, now_second: u64, n: usize) -> Vec<u32> {
        self.attempts_by_op
            .lock()
            .get(op)
            .map_or_else(|| vec![0; n], |r| r.counts(now_second, n))
    }
}
