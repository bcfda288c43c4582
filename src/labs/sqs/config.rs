//! The SQS lab's part of a scenario file (`[sqs]`): the producer's rate, payload and batching, the
//! queues' visibility timeout, the consumers' simulated processing time, and the consumers, each
//! on its own queue so that each sees every message the producer sends.

use std::time::Duration;

use anyhow::bail;
use serde::Deserialize;

use latlab_core::units::{Bytes, Dur};

/// The queues' base name unless a scenario gives its own (what `latlab cleanup` looks for).
pub const DEFAULT_PREFIX: &str = "latlab";

/// How a consumer reads its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsumerKind {
    /// ReceiveMessage with a wait (`WaitTimeSeconds`, 1-20 s): it answers as soon as a message
    /// is there. A wait of 0 makes it a short poller that asks again at once.
    LongPoll { wait_secs: u32 },
    /// ReceiveMessage with no wait, every `interval` (it samples a subset of the servers).
    ShortPoll { interval: Duration },
    /// A long poller on a FIFO queue, the producer spreading its messages over `groups` message
    /// groups.
    Fifo { wait_secs: u32 },
    /// Lambda's event source mapping on a queue: `pollers` long pollers, each gathering a batch
    /// of up to `batch_size` messages for up to `window`, then invoking the function with it.
    Lambda {
        pollers: u32,
        batch_size: u32,
        window: Duration,
    },
}

impl ConsumerKind {
    /// Its name in scenario files and reports.
    pub fn name(self) -> &'static str {
        match self {
            ConsumerKind::LongPoll { .. } => "long-poll",
            ConsumerKind::ShortPoll { .. } => "short-poll",
            ConsumerKind::Fifo { .. } => "fifo",
            ConsumerKind::Lambda { .. } => "lambda",
        }
    }

    /// Whether it reads a FIFO queue.
    pub fn fifo(self) -> bool {
        matches!(self, ConsumerKind::Fifo { .. })
    }

    /// How it polls, in a few words.
    pub fn describe(self) -> String {
        match self {
            ConsumerKind::LongPoll { wait_secs: 0 } => "short poll, back to back".into(),
            ConsumerKind::LongPoll { wait_secs } => format!("long poll, {wait_secs} s wait"),
            ConsumerKind::ShortPoll { interval } => format!(
                "short poll every {}",
                latlab_core::units::format_duration(interval)
            ),
            ConsumerKind::Fifo { wait_secs } => {
                format!("FIFO queue, long poll {wait_secs} s")
            }
            ConsumerKind::Lambda {
                pollers,
                batch_size,
                window,
            } => format!(
                "{pollers} pollers, batch {batch_size}, window {}",
                latlab_core::units::format_duration(window)
            ),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerSpec {
    pub name: String,
    pub kind: ConsumerKind,
}

/// The SQS lab as a scenario sets it.
#[derive(Clone, Debug, PartialEq)]
pub struct SqsScenario {
    /// Messages a second the producer sends to each queue.
    pub rate: u32,
    /// Each message body's size in bytes (at least what the seq and send time need).
    pub payload: u64,
    /// Whether the producer sends SendMessageBatch (up to 10 a call) or SendMessage.
    pub batching: bool,
    /// Message groups on the FIFO queues.
    pub groups: u32,
    /// The queues' visibility timeout.
    pub visibility: Duration,
    /// How long a consumer works on each message before deleting it.
    pub processing: Duration,
    /// A base name for the queues; a run names its own `BASE-RUNID-CONSUMER`.
    pub queue_prefix: String,
    pub consumers: Vec<ConsumerSpec>,
    /// A headless run's producing time (set by `for_duration`): the producer stops after it.
    pub produce_for: Option<Duration>,
}

/// The producer's rates the `<`/`>` keys step through, messages a second (300 and 400: either
/// side of a FIFO queue's 300 sends a second, docs/live-lab.md).
pub const RATE_STEPS: &[u64] = &[1, 2, 5, 10, 20, 50, 100, 200, 300, 400, 500, 1000];
/// The FIFO groups the `g`/`G` keys step through.
pub const GROUP_STEPS: &[u64] = &[1, 2, 5, 10, 20, 50];

/// Visibility timeouts the `V` key cycles through, seconds.
pub const VISIBILITY_STEPS: &[u64] = &[30, 10, 5, 2, 1];
/// Processing times the `k`/`K` keys step through, milliseconds.
pub const PROCESSING_STEPS: &[u64] = &[0, 10, 50, 100, 500, 1000, 2000, 5000];
/// Long pollers' waits the `w` key cycles through, seconds (0: short polling).
pub const WAIT_STEPS: &[u32] = &[20, 10, 5, 1, 0];

/// The largest message body SQS takes (1 MiB).
pub const MAX_PAYLOAD: u64 = 1024 * 1024;

impl Default for SqsScenario {
    fn default() -> Self {
        SqsScenario {
            rate: 10,
            payload: 256,
            batching: false,
            groups: 2,
            visibility: Duration::from_secs(30),
            processing: Duration::ZERO,
            queue_prefix: DEFAULT_PREFIX.into(),
            consumers: default_consumers(),
            produce_for: None,
        }
    }
}

/// The lab's consumers unless a scenario names its own: one of each kind.
pub fn default_consumers() -> Vec<ConsumerSpec> {
    vec![
        ConsumerSpec {
            name: "long-poll".into(),
            kind: ConsumerKind::LongPoll { wait_secs: 20 },
        },
        ConsumerSpec {
            name: "short-poll".into(),
            kind: ConsumerKind::ShortPoll {
                interval: Duration::from_millis(200),
            },
        },
        ConsumerSpec {
            name: "fifo".into(),
            kind: ConsumerKind::Fifo { wait_secs: 20 },
        },
        ConsumerSpec {
            name: "lambda".into(),
            kind: ConsumerKind::Lambda {
                pollers: 5,
                batch_size: 10,
                window: Duration::ZERO,
            },
        },
    ]
}

/// `[sqs]` as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SqsFile {
    rate: Option<u32>,
    payload: Option<Bytes>,
    batching: Option<bool>,
    groups: Option<u32>,
    visibility: Option<Dur>,
    processing: Option<Dur>,
    queue_prefix: Option<String>,
    consumers: Option<Vec<ConsumerFile>>,
}

/// `[[sqs.consumers]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsumerFile {
    name: String,
    kind: String,
    wait: Option<Dur>,
    interval: Option<Dur>,
    pollers: Option<u32>,
    batch_size: Option<u32>,
    window: Option<Dur>,
}

/// The kinds a consumer may be.
const KINDS: &str = "long-poll, short-poll, fifo, lambda";

/// Checks `[sqs]` and makes the lab's scenario.
pub fn parse(f: SqsFile) -> anyhow::Result<SqsScenario> {
    let d = SqsScenario::default();
    let rate = f.rate.unwrap_or(d.rate);
    if rate == 0 || rate > 10_000 {
        bail!("[sqs] rate = {rate}: must be 1 to 10000 messages a second");
    }
    let payload = f.payload.map_or(d.payload, |b| b.0);
    if !(super::body::MIN_BYTES..=MAX_PAYLOAD).contains(&payload) {
        bail!(
            "[sqs] payload = {payload} bytes: must be {} B to 1 MiB (a body carries the run, seq \
             and send time; SQS's largest message is 1 MiB)",
            super::body::MIN_BYTES
        );
    }
    let groups = f.groups.unwrap_or(d.groups);
    if groups == 0 || groups > 1000 {
        bail!("[sqs] groups = {groups}: must be 1 to 1000 message groups");
    }
    let visibility = f.visibility.map_or(d.visibility, |v| v.0);
    if visibility > Duration::from_secs(12 * 3600) {
        bail!(
            "[sqs] visibility = {}: SQS's visibility timeout is 0 s to 12 h",
            latlab_core::units::format_duration(visibility)
        );
    }
    if visibility.subsec_nanos() != 0 {
        bail!("[sqs] visibility: SQS takes whole seconds");
    }
    let processing = f.processing.map_or(d.processing, |v| v.0);
    if processing > Duration::from_secs(3600) {
        bail!("[sqs] processing: at most 1h");
    }
    let queue_prefix = f.queue_prefix.unwrap_or(d.queue_prefix);
    if queue_prefix.is_empty()
        || queue_prefix.len() > 40
        || !queue_prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        bail!(
            "[sqs] queue_prefix = '{queue_prefix}': 1 to 40 of letters, digits, '-' and '_' \
             (a queue's name adds the run id and the consumer's name, 80 at most)"
        );
    }
    let consumers = match f.consumers {
        None => default_consumers(),
        Some(list) => list
            .into_iter()
            .map(consumer)
            .collect::<anyhow::Result<Vec<_>>>()?,
    };
    if consumers.is_empty() {
        bail!("[sqs] consumers: give at least one (kinds: {KINDS})");
    }
    let mut names = std::collections::HashSet::new();
    for c in &consumers {
        if !names.insert(c.name.as_str()) {
            bail!(
                "[sqs] two consumers are named '{}': names must differ",
                c.name
            );
        }
    }
    Ok(SqsScenario {
        rate,
        payload,
        batching: f.batching.unwrap_or(d.batching),
        groups,
        visibility,
        processing,
        queue_prefix,
        consumers,
        produce_for: None,
    })
}

fn consumer(f: ConsumerFile) -> anyhow::Result<ConsumerSpec> {
    let name = f.name;
    if name.is_empty()
        || name.len() > 24
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        bail!(
            "[[sqs.consumers]] name = '{name}': 1 to 24 of letters, digits, '-' and '_' (it names \
             the consumer's queue)"
        );
    }
    let wait = |w: Option<Dur>| -> anyhow::Result<u32> {
        let w = w.map_or(Duration::from_secs(20), |w| w.0);
        if w > Duration::from_secs(20) || w.subsec_nanos() != 0 {
            bail!(
                "[[sqs.consumers]] '{name}': wait = {}: ReceiveMessage waits 0 to 20 whole seconds",
                latlab_core::units::format_duration(w)
            );
        }
        Ok(w.as_secs() as u32)
    };
    let unused = |what: &str, given: bool| -> anyhow::Result<()> {
        if given {
            bail!(
                "[[sqs.consumers]] '{name}': {what} does not apply to a {} consumer",
                f.kind
            );
        }
        Ok(())
    };
    let kind = match f.kind.as_str() {
        "long-poll" | "fifo" => {
            unused("interval", f.interval.is_some())?;
            unused("pollers", f.pollers.is_some())?;
            unused("batch_size", f.batch_size.is_some())?;
            unused("window", f.window.is_some())?;
            let wait_secs = wait(f.wait)?;
            if f.kind == "fifo" {
                ConsumerKind::Fifo { wait_secs }
            } else {
                ConsumerKind::LongPoll { wait_secs }
            }
        }
        "short-poll" => {
            unused("wait", f.wait.is_some())?;
            unused("pollers", f.pollers.is_some())?;
            unused("batch_size", f.batch_size.is_some())?;
            unused("window", f.window.is_some())?;
            let interval = f.interval.map_or(Duration::from_millis(200), |i| i.0);
            if interval < Duration::from_millis(10) || interval > Duration::from_secs(60) {
                bail!("[[sqs.consumers]] '{name}': interval must be 10ms to 60s");
            }
            ConsumerKind::ShortPoll { interval }
        }
        "lambda" => {
            unused("wait", f.wait.is_some())?;
            unused("interval", f.interval.is_some())?;
            let pollers = f.pollers.unwrap_or(5);
            if pollers == 0 || pollers > 100 {
                bail!("[[sqs.consumers]] '{name}': pollers must be 1 to 100");
            }
            let batch_size = f.batch_size.unwrap_or(10);
            if batch_size == 0 || batch_size > 10_000 {
                bail!(
                    "[[sqs.consumers]] '{name}': batch_size must be 1 to 10000 (Lambda's largest \
                     for a standard queue)"
                );
            }
            let window = f.window.map_or(Duration::ZERO, |w| w.0);
            if window > Duration::from_secs(300) {
                bail!("[[sqs.consumers]] '{name}': window must be 0s to 300s (Lambda's range)");
            }
            if batch_size > 10 && window < Duration::from_secs(1) {
                bail!(
                    "[[sqs.consumers]] '{name}': a batch_size over 10 needs a window of at least \
                     1s (Lambda's rule)"
                );
            }
            ConsumerKind::Lambda {
                pollers,
                batch_size,
                window,
            }
        }
        other => bail!("[[sqs.consumers]] '{name}': kind = '{other}': must be one of {KINDS}"),
    };
    Ok(ConsumerSpec { name, kind })
}

impl crate::labs::Setup for super::SqsLab {
    fn parse(file: SqsFile, _text: &str) -> anyhow::Result<SqsScenario> {
        parse(file)
    }

    /// No seed measured SQS: a seed section is refused.
    fn check_seed(seed: &crate::labs::NoSeed, _s: &SqsScenario) -> anyhow::Result<()> {
        anyhow::bail!(
            "seed.sqs (source '{}'): no seed measured SQS, so the SQS lab has no figures to compare; remove [seed.sqs]",
            seed.source
        )
    }

    /// The lab's own assumptions: Lambda's long poll and the producer's batching linger.
    fn model(s: &SqsScenario) -> Vec<latlab_core::provenance::Param> {
        use latlab_core::provenance::{Param, Provenance, Source};
        let mut params = Vec::new();
        if s.consumers
            .iter()
            .any(|c| matches!(c.kind, ConsumerKind::Lambda { .. }))
        {
            params.push(Param::new(
                "sqs.lambda_wait",
                format!("{} s", super::consumer::LAMBDA_WAIT_SECS),
                Provenance::new(
                    Source::Assumption,
                    "AWS's Lambda guide says the event source mapping 'uses long polling' on a \
                     queue but not for how long; the longest wait ReceiveMessage allows is assumed",
                ),
            ));
        }
        params.push(Param::new(
            "sqs.batch_linger",
            latlab_core::units::format_duration(super::producer::LINGER),
            Provenance::new(
                Source::Assumption,
                "how long the producer gathers messages for one SendMessageBatch with batching \
                 on: latlab's choice, in every batched message's latency",
            ),
        ));
        params
    }

    fn for_duration(s: &mut SqsScenario, duration: std::time::Duration) {
        s.produce_for = Some(duration);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> anyhow::Result<SqsScenario> {
        let f: SqsFile = toml::from_str(text)?;
        parse(f)
    }

    #[test]
    fn an_empty_section_is_one_consumer_of_each_kind() {
        let s = parse_text("").unwrap();
        let kinds: Vec<&str> = s.consumers.iter().map(|c| c.kind.name()).collect();
        assert_eq!(kinds, ["long-poll", "short-poll", "fifo", "lambda"]);
        assert_eq!(s.visibility, Duration::from_secs(30));
    }

    #[test]
    fn bad_values_are_named_with_what_is_valid() {
        let e = parse_text("rate = 0").unwrap_err().to_string();
        assert!(e.contains("rate = 0: must be 1 to 10000"), "{e}");
        let e = parse_text("[[consumers]]\nname = \"a\"\nkind = \"push\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("kind = 'push': must be one of long-poll, short-poll, fifo, lambda"),
            "{e}"
        );
        let e = parse_text("[[consumers]]\nname = \"a\"\nkind = \"long-poll\"\nwait = \"21s\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ReceiveMessage waits 0 to 20 whole seconds"),
            "{e}"
        );
        let e = parse_text(
            "[[consumers]]\nname = \"a\"\nkind = \"lambda\"\nbatch_size = 100\nwindow = \"0s\"",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("needs a window of at least 1s"), "{e}");
        let e = parse_text("payload = \"2MiB\"").unwrap_err().to_string();
        assert!(e.contains("SQS's largest message is 1 MiB"), "{e}");
        let e = parse_text("[[consumers]]\nname = \"a\"\nkind = \"short-poll\"\nwait = \"1s\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("wait does not apply to a short-poll consumer"),
            "{e}"
        );
    }
}
