//! SQS's quotas as the emulator enforces them. Each default is the figure the SQS Developer
//! Guide states (cited per field and in docs/emulator.md); the short-poll sample is the one
//! modelled behaviour with no published figure, and says so. Every key can be set in a limits
//! file's `[sqs]` table or with `--limit sqs.KEY=VALUE`.

use std::time::Duration;

use anyhow::bail;
use serde::Deserialize;

use crate::service::ServiceLimits;
use latlab_core::provenance::{Param, Provenance, Source};
use latlab_core::units::{Bytes, Dur};

const MIB: u64 = 1024 * 1024;
const DAY: u64 = 24 * 3600;

#[derive(Clone, Debug, PartialEq)]
pub struct SqsLimits {
    /// Largest message body (quotas-messages: "The maximum is 1,048,576 bytes (1 MiB)", raised
    /// from 256 KiB on 2025-08-04).
    pub max_message_bytes: u64,
    /// Entries per batch request (quotas-messages: "a maximum of 10 messages").
    pub batch_max_entries: u32,
    /// A SendMessageBatch's whole payload (sqs-batch-api: "cannot exceed 1,048,576 bytes").
    pub batch_max_bytes: u64,
    /// ReceiveMessage's longest `WaitTimeSeconds` (quotas-queues: 20 seconds).
    pub max_wait: Duration,
    /// ReceiveMessage's largest `MaxNumberOfMessages` (API reference: 1 to 10).
    pub max_receive_messages: u32,
    /// Visibility timeout: default and maximum (quotas-messages: 30 s; 0 s to 12 hours).
    pub default_visibility: Duration,
    pub max_visibility: Duration,
    /// Retention: default, minimum and maximum (quotas-messages: 4 days; 60 s to 14 days).
    pub default_retention: Duration,
    pub min_retention: Duration,
    pub max_retention: Duration,
    /// Longest delay, per queue or per message (quotas-queues: 15 minutes).
    pub max_delay: Duration,
    /// In-flight messages a queue may hold (quotas-queues: about 120,000 for a standard queue,
    /// OverLimit to a short poll, nothing to a long poll; quotas-fifo: 120,000, no error).
    pub max_in_flight_standard: u32,
    pub max_in_flight_fifo: u32,
    /// A FIFO queue's calls per second per API action without high throughput (quotas-messages:
    /// 300 transactions per second; with batches of 10, 3,000 messages).
    pub fifo_calls_per_sec: u32,
    /// The same with high throughput mode (quotas-messages: up to 70,000 in US East (N.
    /// Virginia), US West (Oregon) and Europe (Ireland); less elsewhere).
    pub fifo_high_throughput_calls_per_sec: u32,
    /// FIFO deduplication interval (FIFO-key-terms: 5 minutes).
    pub dedup_interval: Duration,
    /// After DeleteQueue, how long its name cannot be created again (DeleteQueue: 60 seconds).
    pub deleted_queue_name_hold: Duration,
    /// After PurgeQueue, how long another purge is refused (PurgeQueue: 60 seconds).
    pub purge_interval: Duration,
    /// Short polling's model (sqs-short-and-long-polling: "queries only a subset of the servers
    /// (based on a weighted random distribution)"): a queue's messages are spread over this many
    /// servers, and a short poll asks this many of them, those missed last time first. No figure
    /// is published for either: both are assumptions (docs/emulator.md).
    pub short_poll_servers: u32,
    pub short_poll_sampled: u32,
}

impl Default for SqsLimits {
    fn default() -> Self {
        SqsLimits {
            max_message_bytes: MIB,
            batch_max_entries: 10,
            batch_max_bytes: MIB,
            max_wait: Duration::from_secs(20),
            max_receive_messages: 10,
            default_visibility: Duration::from_secs(30),
            max_visibility: Duration::from_secs(12 * 3600),
            default_retention: Duration::from_secs(4 * DAY),
            min_retention: Duration::from_secs(60),
            max_retention: Duration::from_secs(14 * DAY),
            max_delay: Duration::from_secs(900),
            max_in_flight_standard: 120_000,
            max_in_flight_fifo: 120_000,
            fifo_calls_per_sec: 300,
            fifo_high_throughput_calls_per_sec: 70_000,
            dedup_interval: Duration::from_secs(300),
            deleted_queue_name_hold: Duration::from_secs(60),
            purge_interval: Duration::from_secs(60),
            short_poll_servers: 4,
            short_poll_sampled: 2,
        }
    }
}

/// The file form: every key optional, unknown keys rejected.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SqsSpec {
    max_message_bytes: Option<Bytes>,
    batch_max_entries: Option<u32>,
    batch_max_bytes: Option<Bytes>,
    max_wait: Option<Dur>,
    max_receive_messages: Option<u32>,
    default_visibility: Option<Dur>,
    max_visibility: Option<Dur>,
    default_retention: Option<Dur>,
    min_retention: Option<Dur>,
    max_retention: Option<Dur>,
    max_delay: Option<Dur>,
    max_in_flight_standard: Option<u32>,
    max_in_flight_fifo: Option<u32>,
    fifo_calls_per_sec: Option<u32>,
    fifo_high_throughput_calls_per_sec: Option<u32>,
    dedup_interval: Option<Dur>,
    deleted_queue_name_hold: Option<Dur>,
    purge_interval: Option<Dur>,
    short_poll_servers: Option<u32>,
    short_poll_sampled: Option<u32>,
}

impl ServiceLimits for SqsLimits {
    type Spec = SqsSpec;

    /// The documented limits with a file's `[sqs]` table applied, checked.
    fn from_spec(spec: SqsSpec) -> anyhow::Result<SqsLimits> {
        let mut l = SqsLimits::default();
        crate::limits::apply!(l, spec;
            plain: batch_max_entries, max_receive_messages, max_in_flight_standard,
                max_in_flight_fifo, fifo_calls_per_sec, fifo_high_throughput_calls_per_sec,
                short_poll_servers, short_poll_sampled;
            wrapped: max_message_bytes, batch_max_bytes, max_wait, default_visibility,
                max_visibility, default_retention, min_retention, max_retention, max_delay,
                dedup_interval, deleted_queue_name_hold, purge_interval);
        l.validate()?;
        Ok(l)
    }

    fn describe(&self) -> Vec<(&'static str, String)> {
        self.lines()
    }

    /// Short polling's sample of servers: modelled as the guide describes it, at sizes no
    /// document gives (a user's values are listed with the limits set).
    fn modelled(&self) -> Vec<Param> {
        let d = SqsLimits::default();
        [
            (
                "short_poll_servers",
                self.short_poll_servers,
                d.short_poll_servers,
                "the servers a queue's messages are spread over, each message on one: the SQS \
                 Developer Guide says a short poll 'queries only a subset of the servers (based \
                 on a weighted random distribution)' but gives no number; assumed",
            ),
            (
                "short_poll_sampled",
                self.short_poll_sampled,
                d.short_poll_sampled,
                "the servers one short poll asks, those the previous one missed first (the guide: \
                 a subsequent request returns messages a poll missed); no number is published; \
                 assumed",
            ),
        ]
        .into_iter()
        .filter(|(_, value, default, _)| value == default)
        .map(|(name, value, _, note)| {
            Param::new(
                &format!("emulator.sqs.{name}"),
                value.to_string(),
                Provenance::new(Source::Assumption, note),
            )
        })
        .collect()
    }
}

impl SqsLimits {
    fn validate(&self) -> anyhow::Result<()> {
        for (name, v) in [
            ("max_message_bytes", self.max_message_bytes),
            ("batch_max_entries", self.batch_max_entries.into()),
            ("batch_max_bytes", self.batch_max_bytes),
            ("max_receive_messages", self.max_receive_messages.into()),
            ("max_in_flight_standard", self.max_in_flight_standard.into()),
            ("max_in_flight_fifo", self.max_in_flight_fifo.into()),
            ("fifo_calls_per_sec", self.fifo_calls_per_sec.into()),
            (
                "fifo_high_throughput_calls_per_sec",
                self.fifo_high_throughput_calls_per_sec.into(),
            ),
            ("short_poll_servers", self.short_poll_servers.into()),
            ("short_poll_sampled", self.short_poll_sampled.into()),
        ] {
            if v == 0 {
                bail!("sqs.{name} must be greater than 0");
            }
        }
        if self.short_poll_sampled > self.short_poll_servers {
            bail!(
                "sqs.short_poll_sampled ({}) must not exceed sqs.short_poll_servers ({})",
                self.short_poll_sampled,
                self.short_poll_servers
            );
        }
        if self.default_visibility > self.max_visibility {
            bail!("sqs.default_visibility must not exceed sqs.max_visibility");
        }
        if !(self.min_retention <= self.default_retention
            && self.default_retention <= self.max_retention)
        {
            bail!("sqs retention must satisfy min_retention <= default_retention <= max_retention");
        }
        if self.min_retention.is_zero() {
            bail!("sqs.min_retention must be longer than 0s");
        }
        Ok(())
    }

    /// The limits as `key = value` lines, for `latlab emulate --print-limits` and the docs.
    fn lines(&self) -> Vec<(&'static str, String)> {
        let d = |v: Duration| format!("\"{}\"", latlab_core::units::format_duration(v));
        vec![
            ("max_message_bytes", self.max_message_bytes.to_string()),
            ("batch_max_entries", self.batch_max_entries.to_string()),
            ("batch_max_bytes", self.batch_max_bytes.to_string()),
            ("max_wait", d(self.max_wait)),
            (
                "max_receive_messages",
                self.max_receive_messages.to_string(),
            ),
            ("default_visibility", d(self.default_visibility)),
            ("max_visibility", d(self.max_visibility)),
            ("default_retention", d(self.default_retention)),
            ("min_retention", d(self.min_retention)),
            ("max_retention", d(self.max_retention)),
            ("max_delay", d(self.max_delay)),
            (
                "max_in_flight_standard",
                self.max_in_flight_standard.to_string(),
            ),
            ("max_in_flight_fifo", self.max_in_flight_fifo.to_string()),
            ("fifo_calls_per_sec", self.fifo_calls_per_sec.to_string()),
            (
                "fifo_high_throughput_calls_per_sec",
                self.fifo_high_throughput_calls_per_sec.to_string(),
            ),
            ("dedup_interval", d(self.dedup_interval)),
            ("deleted_queue_name_hold", d(self.deleted_queue_name_hold)),
            ("purge_interval", d(self.purge_interval)),
            ("short_poll_servers", self.short_poll_servers.to_string()),
            ("short_poll_sampled", self.short_poll_sampled.to_string()),
        ]
    }
}
