//! Faults injected on purpose: what each kind does, where it is set (a scenario's `[[faults]]`,
//! `--fault KIND:key=value,...`, the TUI's fault menu) and the record of every one that fired.
//!
//! The emulator injects the Kinesis and S3 kinds (`emulator/faults/`); the Redis lab the Redis
//! kinds, on its real processes. Every fault that fires is a [`FaultEvent`] in a [`FaultLog`]
//! (`log.rs`): when, what kind, what it hit, and when the target next answered (its recovery).

mod log;

pub use log::{FaultEvent, FaultLog, KindCounts, LOG_CAPACITY};

use std::fmt;
use std::time::Duration;

use crate::units::{format_duration, parse_duration};

/// Which service a fault is injected into.
pub use crate::services::Service;

/// Every kind of fault latlab injects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// The connection is reset before the request is served: nothing happened.
    KinesisResetBefore,
    /// The request is served (a put is stored) and the connection reset instead of the answer.
    KinesisResetAfter,
    /// 500 InternalFailure.
    KinesisInternalFailure,
    /// 503 ServiceUnavailable.
    KinesisServiceUnavailable,
    /// A SubscribeToShard event stream is cut in the middle of a frame.
    KinesisStreamCut,
    /// A SubscribeToShard event stream ends early, cleanly.
    KinesisStreamEnd,
    /// The answer is held back for the fault's duration.
    KinesisStall,
    /// Every request waits the fault's delay more, for its duration.
    KinesisSpike,
    /// Every shard iterator handed out so far expires.
    KinesisExpireIterators,
    /// 500 InternalError.
    S3InternalError,
    /// 503 SlowDown.
    S3SlowDown,
    /// The connection is reset halfway through a body (an upload's or a download's).
    S3BodyReset,
    /// The answer's first byte is held back for the fault's duration.
    S3FirstByteStall,
    /// The replica's redis-server is killed and started again (a full resync follows).
    RedisReplicaRestart,
    /// `CLIENT PAUSE` on the primary for the fault's duration.
    RedisClientPause,
    /// The replication link carries nothing for the fault's duration.
    RedisLinkPartition,
    /// `DEBUG SLEEP` on a server for the fault's duration.
    RedisDebugSleep,
    /// The connection is reset before an SQS request is served: nothing happened.
    SqsReset,
    /// 500 InternalFailure from SQS.
    SqsInternalError,
    /// A ReceiveMessage's answer is held back for the fault's duration (its messages already
    /// taken: their visibility timeout runs meanwhile).
    SqsReceiveStall,
}

impl Kind {
    pub const ALL: [Kind; 20] = [
        Kind::KinesisResetBefore,
        Kind::KinesisResetAfter,
        Kind::KinesisInternalFailure,
        Kind::KinesisServiceUnavailable,
        Kind::KinesisStreamCut,
        Kind::KinesisStreamEnd,
        Kind::KinesisStall,
        Kind::KinesisSpike,
        Kind::KinesisExpireIterators,
        Kind::S3InternalError,
        Kind::S3SlowDown,
        Kind::S3BodyReset,
        Kind::S3FirstByteStall,
        Kind::RedisReplicaRestart,
        Kind::RedisClientPause,
        Kind::RedisLinkPartition,
        Kind::RedisDebugSleep,
        Kind::SqsReset,
        Kind::SqsInternalError,
        Kind::SqsReceiveStall,
    ];

    /// The name scenarios, `--fault` and reports use.
    pub fn name(self) -> &'static str {
        match self {
            Kind::KinesisResetBefore => "kinesis.reset-before",
            Kind::KinesisResetAfter => "kinesis.reset-after",
            Kind::KinesisInternalFailure => "kinesis.internal-failure",
            Kind::KinesisServiceUnavailable => "kinesis.service-unavailable",
            Kind::KinesisStreamCut => "kinesis.stream-cut",
            Kind::KinesisStreamEnd => "kinesis.stream-end",
            Kind::KinesisStall => "kinesis.stall",
            Kind::KinesisSpike => "kinesis.spike",
            Kind::KinesisExpireIterators => "kinesis.expire-iterators",
            Kind::S3InternalError => "s3.internal-error",
            Kind::S3SlowDown => "s3.slow-down",
            Kind::S3BodyReset => "s3.body-reset",
            Kind::S3FirstByteStall => "s3.first-byte-stall",
            Kind::RedisReplicaRestart => "redis.replica-restart",
            Kind::RedisClientPause => "redis.client-pause",
            Kind::RedisLinkPartition => "redis.link-partition",
            Kind::RedisDebugSleep => "redis.debug-sleep",
            Kind::SqsReset => "sqs.reset",
            Kind::SqsInternalError => "sqs.internal-error",
            Kind::SqsReceiveStall => "sqs.receive-stall",
        }
    }

    /// What it does, in a few words, for the menu and `--help`.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::KinesisResetBefore => "connection reset before the request is served",
            Kind::KinesisResetAfter => {
                "request served, then the connection reset instead of the answer"
            }
            Kind::KinesisInternalFailure => "500 InternalFailure",
            Kind::KinesisServiceUnavailable => "503 ServiceUnavailable",
            Kind::KinesisStreamCut => "a fan-out event stream cut mid-frame",
            Kind::KinesisStreamEnd => "a fan-out event stream ended early",
            Kind::KinesisStall => "an answer held back",
            Kind::KinesisSpike => "every request slower for a while",
            Kind::KinesisExpireIterators => "every shard iterator expires",
            Kind::S3InternalError => "500 InternalError",
            Kind::S3SlowDown => "503 SlowDown",
            Kind::S3BodyReset => "connection reset halfway through a body",
            Kind::S3FirstByteStall => "an answer's first byte held back",
            Kind::RedisReplicaRestart => "replica killed and restarted (full resync)",
            Kind::RedisClientPause => "CLIENT PAUSE on the primary",
            Kind::RedisLinkPartition => "replication link partitioned",
            Kind::RedisDebugSleep => "DEBUG SLEEP on a server",
            Kind::SqsReset => "connection reset before an SQS request is served",
            Kind::SqsInternalError => "500 InternalFailure from SQS",
            Kind::SqsReceiveStall => "a ReceiveMessage answer held back",
        }
    }

    pub fn service(self) -> Service {
        match self {
            Kind::S3InternalError
            | Kind::S3SlowDown
            | Kind::S3BodyReset
            | Kind::S3FirstByteStall => Service::S3,
            Kind::RedisReplicaRestart
            | Kind::RedisClientPause
            | Kind::RedisLinkPartition
            | Kind::RedisDebugSleep => Service::Redis,
            Kind::SqsReset | Kind::SqsInternalError | Kind::SqsReceiveStall => Service::Sqs,
            _ => Service::Kinesis,
        }
    }

    /// Lasts a while (its `for`), rather than hitting requests one at a time.
    pub fn has_duration(self) -> bool {
        matches!(
            self,
            Kind::KinesisStall
                | Kind::KinesisSpike
                | Kind::S3FirstByteStall
                | Kind::RedisClientPause
                | Kind::RedisLinkPartition
                | Kind::RedisDebugSleep
                | Kind::SqsReceiveStall
        )
    }

    /// Hits one request (or `count` of them) each time it fires.
    pub fn per_request(self) -> bool {
        !matches!(
            self,
            Kind::KinesisSpike
                | Kind::KinesisExpireIterators
                | Kind::KinesisStreamCut
                | Kind::KinesisStreamEnd
        ) && self.service() != Service::Redis
    }

    fn default_duration(self) -> Duration {
        match self {
            Kind::KinesisStall | Kind::S3FirstByteStall | Kind::SqsReceiveStall => {
                Duration::from_secs(3)
            }
            Kind::KinesisSpike => Duration::from_secs(5),
            Kind::RedisClientPause | Kind::RedisLinkPartition => Duration::from_secs(3),
            Kind::RedisDebugSleep => Duration::from_secs(2),
            _ => Duration::ZERO,
        }
    }

    pub fn parse(text: &str) -> Result<Kind, String> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == text.trim())
            .ok_or_else(|| {
                format!(
                    "'{text}' is not a fault kind; valid: {}",
                    Kind::ALL.map(Kind::name).join(", ")
                )
            })
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// When a fault fires.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trigger {
    /// Every `period`, the first time after `first`.
    Every { period: Duration, first: Duration },
    /// On this fraction of the matching requests (per-request kinds only).
    Rate(f64),
    /// Once, now (the TUI's menu).
    Now,
}

/// A Redis server a fault is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    Primary,
    Replica,
}

/// One fault as set: its kind, when it fires and what it targets.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultSpec {
    pub kind: Kind,
    pub trigger: Trigger,
    /// Only requests of this operation (Kinesis or S3 operation name).
    pub operation: Option<String>,
    /// Only this shard (its id or index), where the request names one.
    pub shard: Option<String>,
    /// Only this enhanced fan-out consumer (its registered name).
    pub consumer: Option<String>,
    /// S3 only: `standard` or `express`.
    pub class: Option<String>,
    /// Per-request kinds: requests hit each time it fires.
    pub count: u32,
    /// Stall, spike, pause, partition, sleep: how long.
    pub duration: Duration,
    /// Spike: the delay added to every request.
    pub delay: Duration,
    /// Redis DEBUG SLEEP: which server.
    pub node: Node,
}

/// The keys a fault takes, for error messages.
const KEYS: &str = "every, first, rate, operation, shard, consumer, class, count, for, delay, on";

impl FaultSpec {
    /// A fault of `kind` with its defaults, firing now.
    pub fn now(kind: Kind) -> FaultSpec {
        FaultSpec {
            kind,
            trigger: Trigger::Now,
            operation: None,
            shard: None,
            consumer: None,
            class: None,
            count: if kind == Kind::S3SlowDown { 10 } else { 1 },
            duration: kind.default_duration(),
            delay: Duration::from_millis(500),
            node: Node::Primary,
        }
    }

    /// `KIND[:key=value,...]`, the form of `--fault`, e.g.
    /// `kinesis.reset-after:operation=PutRecord,every=10s`.
    pub fn parse(text: &str) -> Result<FaultSpec, String> {
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        let mut pairs = Vec::new();
        for part in rest.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| {
                format!("'{part}' in fault '{text}' is not key=value; keys: {KEYS}")
            })?;
            pairs.push((k.trim().to_string(), v.trim().to_string()));
        }
        FaultSpec::from_pairs(kind, &pairs).map_err(|e| format!("fault '{text}': {e}"))
    }

    /// A fault from its kind and `key = value` settings (a scenario's table or `--fault`).
    pub fn from_pairs(kind: &str, pairs: &[(String, String)]) -> Result<FaultSpec, String> {
        let kind = Kind::parse(kind)?;
        let mut spec = FaultSpec::now(kind);
        let mut every = None;
        let mut first = None;
        let mut rate = None;
        for (k, v) in pairs {
            let dur = |v: &str| parse_duration(v).map_err(|e| format!("{k}: {e}"));
            match k.as_str() {
                "every" => every = Some(dur(v)?),
                "first" => first = Some(dur(v)?),
                "rate" => rate = Some(parse_rate(v)?),
                "operation" => spec.operation = Some(v.clone()),
                "shard" => spec.shard = Some(v.clone()),
                "consumer" => spec.consumer = Some(v.clone()),
                "class" => match v.as_str() {
                    "standard" | "express" => spec.class = Some(v.clone()),
                    _ => return Err(format!("class '{v}': valid: standard, express")),
                },
                "count" => {
                    spec.count = v
                        .parse()
                        .ok()
                        .filter(|n| (1..=100_000).contains(n))
                        .ok_or_else(|| format!("count '{v}': write a whole number 1-100000"))?
                }
                "for" => spec.duration = dur(v)?,
                "delay" => spec.delay = dur(v)?,
                "on" => {
                    spec.node = match v.as_str() {
                        "primary" => Node::Primary,
                        "replica" => Node::Replica,
                        _ => return Err(format!("on '{v}': valid: primary, replica")),
                    }
                }
                other => return Err(format!("unknown key '{other}'; keys: {KEYS}")),
            }
        }
        spec.trigger = match (every, rate) {
            (Some(_), Some(_)) => return Err("give every or rate, not both".into()),
            (Some(period), None) => {
                if period < Duration::from_millis(100) {
                    return Err(format!(
                        "every {}: at most ten a second (every 100ms or more)",
                        format_duration(period)
                    ));
                }
                Trigger::Every {
                    period,
                    first: first.unwrap_or(period),
                }
            }
            (None, Some(r)) => {
                if !kind.per_request() {
                    return Err(format!(
                        "{kind} is not drawn per request: give every=DURATION instead of rate"
                    ));
                }
                if first.is_some() {
                    return Err("first goes with every, not rate".into());
                }
                Trigger::Rate(r)
            }
            (None, None) => {
                return Err(
                    "give when it fires: every=DURATION (e.g. 10s) or rate=PERCENT (e.g. 1%)"
                        .into(),
                );
            }
        };
        spec.check()?;
        Ok(spec)
    }

    /// The settings that do not fit the kind.
    fn check(&self) -> Result<(), String> {
        let kind = self.kind;
        let service = kind.service();
        if let Some(op) = &self.operation {
            let valid: &[&str] = match service {
                Service::Kinesis => crate::services::kinesis::Op::NAMES,
                Service::S3 => crate::services::s3::Op::NAMES,
                Service::Sqs => crate::services::sqs::Op::NAMES,
                Service::Redis => &[],
            };
            if !valid.contains(&op.as_str()) {
                return Err(if valid.is_empty() {
                    format!("{kind} takes no operation")
                } else {
                    format!(
                        "operation '{op}' is not one of {kind}'s: {}",
                        valid.join(", ")
                    )
                });
            }
            if matches!(kind, Kind::KinesisStreamCut | Kind::KinesisStreamEnd)
                && op != "SubscribeToShard"
            {
                return Err(format!("{kind} hits SubscribeToShard's event streams only"));
            }
            if kind == Kind::S3BodyReset
                && !crate::services::s3::Op::parse(op).is_some_and(|o| o.carries_object_body())
            {
                return Err(format!(
                    "{kind} cuts a body: operation PutObject, UploadPart or GetObject"
                ));
            }
            if kind == Kind::KinesisExpireIterators {
                return Err(format!(
                    "{kind} takes no operation: it expires every iterator"
                ));
            }
        }
        if self.consumer.is_some() {
            let subscribe = matches!(kind, Kind::KinesisStreamCut | Kind::KinesisStreamEnd)
                || self.operation.as_deref() == Some("SubscribeToShard");
            if service != Service::Kinesis || !subscribe {
                return Err(
                    "consumer: the emulator tells consumers apart only by their fan-out registration; give it with kinesis.stream-cut, kinesis.stream-end or operation=SubscribeToShard".into(),
                );
            }
        }
        if self.shard.is_some() && service != Service::Kinesis {
            return Err(format!("{kind} takes no shard"));
        }
        if self.class.is_some() && service != Service::S3 {
            return Err(format!("{kind} takes no class"));
        }
        if kind.has_duration() && self.duration.is_zero() {
            return Err(format!("{kind} needs for=DURATION above zero"));
        }
        if kind.has_duration()
            && kind.service() == Service::Redis
            && self.duration > Duration::from_secs(60)
        {
            return Err(format!(
                "{kind} for {}: at most 60s, so that the lab's tries never wait on it longer than they time out",
                format_duration(self.duration)
            ));
        }
        if let Trigger::Every { period, .. } = self.trigger
            && kind.has_duration()
            && self.duration >= period
        {
            return Err(format!(
                "{kind} for {} every {}: it must end before it fires again",
                format_duration(self.duration),
                format_duration(period)
            ));
        }
        Ok(())
    }

    /// How it reads in a status line or a report: kind, target and trigger.
    pub fn describe(&self) -> String {
        let mut out = self.kind.name().to_string();
        let mut add = |s: String| {
            out.push(' ');
            out.push_str(&s);
        };
        if let Some(op) = &self.operation {
            add(op.clone());
        }
        if let Some(s) = &self.shard {
            add(format!("shard {s}"));
        }
        if let Some(c) = &self.consumer {
            add(format!("consumer {c}"));
        }
        if let Some(c) = &self.class {
            add(c.clone());
        }
        if self.kind.has_duration() {
            add(format!("for {}", format_duration(self.duration)));
        }
        if self.kind == Kind::KinesisSpike {
            add(format!("+{}", format_duration(self.delay)));
        }
        if self.kind.per_request() && self.count > 1 {
            add(format!("x{}", self.count));
        }
        match self.trigger {
            Trigger::Every { period, .. } => add(format!("every {}", format_duration(period))),
            Trigger::Rate(r) => add(format!("on {}% of requests", r * 100.0)),
            Trigger::Now => {}
        }
        out
    }
}

/// `1%`, `0.5%` or a fraction `0.01`.
fn parse_rate(v: &str) -> Result<f64, String> {
    let bad = || format!("rate '{v}': write a percentage (e.g. 1% or 0.5%) or a fraction 0-1");
    let r = match v.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map_err(|_| bad())? / 100.0,
        None => v.parse::<f64>().map_err(|_| bad())?,
    };
    if !(r > 0.0 && r <= 1.0) {
        return Err(bad());
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_form_parses_and_describes_itself() {
        let f = FaultSpec::parse("kinesis.reset-after:operation=PutRecord,every=10s").unwrap();
        assert_eq!(f.kind, Kind::KinesisResetAfter);
        assert_eq!(f.operation.as_deref(), Some("PutRecord"));
        assert_eq!(
            f.trigger,
            Trigger::Every {
                period: Duration::from_secs(10),
                first: Duration::from_secs(10)
            }
        );
        assert_eq!(f.describe(), "kinesis.reset-after PutRecord every 10s");
        let f = FaultSpec::parse("s3.slow-down:rate=1%,class=express").unwrap();
        assert_eq!(f.trigger, Trigger::Rate(0.01));
        assert_eq!(f.describe(), "s3.slow-down express x10 on 1% of requests");
    }

    #[test]
    fn bad_faults_say_what_is_wrong_and_what_is_valid() {
        for (text, says) in [
            (
                "kinesis.boom:every=1s",
                "not a fault kind; valid: kinesis.reset-before",
            ),
            ("kinesis.stall", "give when it fires"),
            ("kinesis.stall:every=1s,rate=1%", "not both"),
            ("kinesis.spike:rate=1%", "not drawn per request"),
            (
                "kinesis.stall:every=1s,for=2s",
                "must end before it fires again",
            ),
            (
                "kinesis.stall:every=1s,operation=GetObject",
                "not one of kinesis.stall's",
            ),
            ("s3.slow-down:every=1s,shard=0", "takes no shard"),
            (
                "kinesis.reset-before:every=1s,consumer=efo-1",
                "fan-out registration",
            ),
            (
                "kinesis.stall:every=5s,wat=1",
                "unknown key 'wat'; keys: every",
            ),
            ("kinesis.stall:every", "is not key=value"),
            ("s3.slow-down:rate=200%", "write a percentage"),
            ("redis.debug-sleep:every=5m,for=2m", "at most 60s"),
            ("kinesis.stall:every=10ms", "at most ten a second"),
        ] {
            let e = FaultSpec::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
