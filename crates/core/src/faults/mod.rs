//! Faults injected on purpose: what each kind does, where it is set (a scenario's `[[faults]]`,
//! `--fault KIND:key=value,...`, the TUI's fault menu) and the record of every one that fired.
//!
//! Each service declares its kinds (`services::kinesis::faults`, ...: a constant and what it
//! does, its [`Effect`]); the emulator injects the emulated services' kinds by their effect
//! (`emulator/faults/`), the Redis lab the Redis kinds on its real processes. Every fault that fires is a [`FaultEvent`] in a [`FaultLog`]
//! (`log.rs`): when, what kind, what it hit, and when the target next answered (its recovery).

mod log;

pub use log::{FaultEvent, FaultLog, KindCounts, LOG_CAPACITY};

use std::time::Duration;

use crate::units::{format_duration, parse_duration};

/// Which service a fault is injected into.
pub use crate::services::Service;
/// A kind of fault, declared by its service.
pub use crate::services::fault_kinds::{Effect, Kind, KindInfo};

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
            count: kind.info().count,
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
            let valid = service.operations();
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
            match kind.only() {
                Some([]) => {
                    return Err(format!("{kind} takes no operation: {}", kind.describe()));
                }
                Some(only) if !only.contains(&op.as_str()) => {
                    return Err(format!("{kind} hits {} only", or_list(only)));
                }
                _ => {}
            }
        }
        if self.consumer.is_some() {
            let subscribe = matches!(kind.effect(), Effect::StreamCut | Effect::StreamEnd)
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
            && kind.effect() == Effect::OnServers
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
        if self.kind.effect() == Effect::Spike {
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

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[&str]) -> String {
    match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => items.join(""),
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
        assert_eq!(f.kind, crate::services::kinesis::faults::RESET_AFTER);
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
