//! The interceptor every client gets: it sees every attempt of every call and keeps the counts
//! in [`SdkStats`], with a mirror of the retry quota.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::{
    BeforeSerializationInterceptorContextRef, BeforeTransmitInterceptorContextMut,
    BeforeTransmitInterceptorContextRef, FinalizerInterceptorContextRef,
};
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::{ConfigBag, Storable, StoreReplace};
use parking_lot::Mutex;

use super::{QUOTA_CAPACITY, QuotaPartition};
use crate::metrics::sdk::{SdkStats, is_throttle};

/// Per-call state of the observer, kept in the operation's config bag.
#[derive(Clone, Debug)]
struct AttemptState {
    /// The operation's name, from the SDK's metadata.
    op: String,
    attempt: u32,
    started: Instant,
    last_end: Option<Instant>,
    /// What the previous attempt's failure costs the quota if it is retried (0: not retryable).
    retry_cost: u64,
    /// When the SDK's retry loop began (after serialization): with the client-side rate limiter
    /// on, a first attempt later than this by a millisecond or more was held by it.
    loop_started: Option<Instant>,
}

impl Storable for AttemptState {
    type Storer = StoreReplace<Self>;
}

/// Sees every attempt of every call a client makes and keeps the counts in [`SdkStats`], including
/// a mirror of the retry quota that follows the SDK's rules: a retry takes 5 tokens (10 after a
/// timeout or transient error); a call that succeeds gives its last retry's tokens back, or one
/// token if it needed no retry; the tokens of a retry replaced by a later retry are gone.
pub(super) struct Observer {
    stats: Arc<SdkStats>,
    /// None: the client has no retry quota to follow.
    quota: Option<Arc<Mutex<u64>>>,
    /// The tokens of this client's outstanding retry permit (the SDK keeps it per client).
    held: Mutex<Option<u64>>,
    max_attempts: u32,
    /// The client retries in adaptive mode, the only one with a client-side rate limiter: in
    /// standard mode the SDK never delays a first attempt, so a gap before it is the
    /// orchestrator's own time (a busy machine's scheduling), not a wait.
    limiter: bool,
    clock: Instant,
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer")
            .field("max_attempts", &self.max_attempts)
            .finish_non_exhaustive()
    }
}

impl Observer {
    pub(super) fn new(
        stats: Arc<SdkStats>,
        quota: &QuotaPartition,
        retry: &super::RetrySettings,
        clock: Instant,
    ) -> Observer {
        let left = (!quota.unlimited).then(|| quota.tokens_left());
        stats.counters.lock().quota_left = left;
        let mirror = (!quota.unlimited).then(|| quota.mirror.clone());
        Observer {
            stats,
            quota: mirror,
            held: Mutex::new(None),
            max_attempts: retry.max_attempts,
            limiter: retry.mode == super::RetryMode::Adaptive && retry.max_attempts > 1,
            clock,
        }
    }

    fn second(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.clock).as_secs()
    }

    fn publish_quota(&self, tokens: u64) {
        self.stats.counters.lock().quota_left = Some(tokens);
    }
}

/// The error code of a failed attempt's response (JSON `__type`, XML `<Code>`, or the header).
fn response_code(resp: &aws_smithy_runtime_api::http::Response) -> Option<String> {
    if let Some(h) = resp.headers().get("x-amzn-errortype") {
        return Some(h.split(':').next().unwrap_or(h).to_string());
    }
    let body = std::str::from_utf8(resp.body().bytes()?).ok()?;
    let code = if let Some(i) = body.find("\"__type\"") {
        let rest = &body[i + 8..];
        let start = rest.find('"')? + 1;
        let end = start + rest[start..].find('"')?;
        rest[start..end].rsplit('#').next()?.to_string()
    } else {
        let start = body.find("<Code>")? + 6;
        let end = start + body[start..].find("</Code>")?;
        body[start..end].to_string()
    };
    Some(code)
}

impl Intercept for Observer {
    fn name(&self) -> &'static str {
        "latlab::Observer"
    }

    // Not `read_before_execution`: a client's interceptors run that hook before the operation's
    // configuration (and so its name) is in the config bag.
    fn read_before_serialization(
        &self,
        _context: &BeforeSerializationInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let op = cfg
            .load::<aws_smithy_runtime_api::client::orchestrator::Metadata>()
            .map_or_else(|| "unknown".to_string(), |m| m.name().to_string());
        {
            let mut c = self.stats.counters.lock();
            c.calls += 1;
            c.operations.entry(op.clone()).or_default().calls += 1;
        }
        cfg.interceptor_state().store_put(AttemptState {
            op,
            attempt: 0,
            started: Instant::now(),
            last_end: None,
            retry_cost: 0,
            loop_started: None,
        });
        Ok(())
    }

    // The orchestrator runs this hook, then asks the retry strategy for leave to send the first
    // attempt: the adaptive strategy's rate limiter answers with a delay it sleeps, and only then
    // does `read_before_attempt` run (aws-smithy-runtime's orchestrator, `try_op`).
    fn modify_before_retry_loop(
        &self,
        _context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(state) = cfg.load::<AttemptState>().cloned() {
            cfg.interceptor_state().store_put(AttemptState {
                loop_started: Some(Instant::now()),
                ..state
            });
        }
        Ok(())
    }

    fn read_before_attempt(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let now = Instant::now();
        let mut state = cfg.load::<AttemptState>().cloned().unwrap_or(AttemptState {
            op: String::new(),
            attempt: 0,
            started: now,
            last_end: None,
            retry_cost: 0,
            loop_started: None,
        });
        state.attempt += 1;
        state.started = now;
        {
            let mut c = self.stats.counters.lock();
            c.attempts += 1;
            if state.attempt > 1 {
                c.retries += 1;
            }
            c.operations.entry(state.op.clone()).or_default().attempts += 1;
        }
        self.stats
            .attempts_by_op
            .lock()
            .entry(state.op.clone())
            .or_default()
            .tick(self.second(now));
        if state.attempt == 1
            && self.limiter
            && let Some(begun) = state.loop_started
        {
            let held = now.saturating_duration_since(begun);
            if held >= Duration::from_millis(1) {
                self.stats.counters.lock().client_waits += 1;
                self.stats
                    .client_wait
                    .lock()
                    .record(held.as_micros() as u64, self.second(now));
            }
        }
        if state.attempt > 1 {
            if let Some(end) = state.last_end {
                let wait = now.saturating_duration_since(end);
                self.stats
                    .retry_wait
                    .lock()
                    .record(wait.as_micros() as u64, self.second(now));
            }
            // The SDK took a retry permit: its tokens leave the quota; an earlier permit of this
            // client is forgotten (its tokens never come back).
            if let Some(quota) = &self.quota {
                let cost = state.retry_cost.max(5);
                let left = {
                    let mut q = quota.lock();
                    *q = q.saturating_sub(cost);
                    *q
                };
                *self.held.lock() = Some(cost);
                self.publish_quota(left);
            }
        }
        cfg.interceptor_state().store_put(state);
        Ok(())
    }

    fn read_after_attempt(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let now = Instant::now();
        let Some(mut state) = cfg.load::<AttemptState>().cloned() else {
            return Ok(());
        };
        self.stats.attempt_latency.lock().record(
            now.saturating_duration_since(state.started).as_micros() as u64,
            self.second(now),
        );
        state.last_end = Some(now);
        state.retry_cost = match context.output_or_error() {
            Some(Err(e)) if e.is_timeout_error() || e.is_connector_error() => 10,
            Some(Err(_)) => {
                let resp = context.response();
                let code = resp.and_then(response_code);
                let status = resp.map_or(0, |r| r.status().as_u16());
                if code.as_deref().is_some_and(is_throttle) || status == 429 {
                    let mut c = self.stats.counters.lock();
                    c.throttles += 1;
                    c.operations.entry(state.op.clone()).or_default().throttles += 1;
                    5
                } else if status >= 500 {
                    10
                } else {
                    0
                }
            }
            _ => 0,
        };
        cfg.interceptor_state().store_put(state);
        Ok(())
    }

    fn read_after_execution(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let state = cfg.load::<AttemptState>().cloned();
        let failed = matches!(context.output_or_error(), Some(Err(_)));
        let Some(quota) = &self.quota else {
            return Ok(());
        };
        if !failed {
            let held = self.held.lock().take();
            let left = {
                let mut q = quota.lock();
                *q = (*q + held.unwrap_or(1)).min(QUOTA_CAPACITY);
                *q
            };
            self.publish_quota(left);
        } else if let Some(s) = state
            && s.retry_cost > 0
            && s.attempt < self.max_attempts
        {
            self.stats.counters.lock().quota_refusals += 1;
        }
        Ok(())
    }
}
