//! The service limits the emulator enforces. Defaults are the documented values (see
//! `docs/emulator.md`); a TOML file (`--limits FILE`) or `--limit key=value` flags shorten them for
//! demos and tests. Both go through one parser, so a key is spelt the same way in either place and an
//! unknown key is an error that names it and lists the valid ones.

use std::time::Duration;

use anyhow::{Context, bail};
use serde::Deserialize;

use latlab_core::units::{Bytes, Dur, one_line, toml_error};

mod model;

const MIB: u64 = 1024 * 1024;

pub use latlab_core::shaping::RateWindow;

/// Kinesis Data Streams limits, per shard unless the name says otherwise.
#[derive(Clone, Debug, PartialEq)]
pub struct KinesisLimits {
    pub get_records_calls_per_sec: u32,
    pub get_shard_iterator_calls_per_sec: u32,
    pub read_rate_window: RateWindow,
    pub read_bytes_per_sec: u64,
    pub get_records_max_records: u32,
    pub get_records_max_bytes: u64,
    pub large_read_penalty: Duration,
    pub iterator_expiry: Duration,
    pub write_records_per_sec: u32,
    pub write_bytes_per_sec: u64,
    pub max_record_bytes: u64,
    pub put_records_max_records: u32,
    pub put_records_max_bytes: u64,
    pub efo_bytes_per_sec: u64,
    pub subscribe_min_interval: Duration,
    pub subscribe_takeover_after: Duration,
    pub subscription_duration: Duration,
    pub efo_idle_event_interval: Duration,
    pub max_consumers_per_stream: u32,
    pub max_creating_consumers: u32,
    pub stream_activation: Duration,
    pub consumer_activation: Duration,
    pub max_shards: u32,
    pub retention: Duration,
    pub stream_max_bytes: u64,
    /// How long a stream stays UPDATING before a reshard takes effect.
    pub reshard_duration: Duration,
    /// UpdateShardCount: at most this factor up or down per call.
    pub max_scale_factor: u32,
    /// UpdateShardCount: scalings per stream per rolling 24 hours.
    pub scalings_per_day: u32,
    /// UpdateShardCount calls per second per account.
    pub update_shard_count_calls_per_sec: u32,
    /// SplitShard calls, and MergeShards calls, per second per account.
    pub split_merge_calls_per_sec: u32,
    pub max_shards_per_stream: u32,
}

impl Default for KinesisLimits {
    fn default() -> Self {
        KinesisLimits {
            get_records_calls_per_sec: 5,
            get_shard_iterator_calls_per_sec: 5,
            read_rate_window: RateWindow::TokenBucket,
            read_bytes_per_sec: 2 * MIB,
            get_records_max_records: 10_000,
            get_records_max_bytes: 10 * MIB,
            large_read_penalty: Duration::from_secs(5),
            iterator_expiry: Duration::from_secs(300),
            write_records_per_sec: 1_000,
            write_bytes_per_sec: MIB,
            max_record_bytes: MIB,
            put_records_max_records: 500,
            put_records_max_bytes: 10 * MIB,
            efo_bytes_per_sec: 2 * MIB,
            subscribe_min_interval: Duration::from_secs(1),
            subscribe_takeover_after: Duration::from_secs(5),
            subscription_duration: Duration::from_secs(300),
            efo_idle_event_interval: Duration::from_secs(5),
            max_consumers_per_stream: 20,
            max_creating_consumers: 5,
            stream_activation: Duration::from_millis(500),
            consumer_activation: Duration::from_millis(1000),
            max_shards: 500,
            retention: Duration::from_secs(24 * 3600),
            stream_max_bytes: 512 * MIB,
            reshard_duration: Duration::from_secs(30),
            max_scale_factor: 2,
            scalings_per_day: 10,
            update_shard_count_calls_per_sec: 10,
            split_merge_calls_per_sec: 5,
            max_shards_per_stream: 10_000,
        }
    }
}

/// S3 limits: request rates per storage class, sessions, and the emulator's own storage bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct S3Limits {
    /// S3 Standard: per second per prefix.
    pub standard_writes_per_sec: u32,
    pub standard_reads_per_sec: u32,
    /// S3 Express One Zone: per second per directory bucket.
    pub express_writes_per_sec: u32,
    pub express_reads_per_sec: u32,
    /// How long a CreateSession token is valid.
    pub session_duration: Duration,
    /// Smallest part of a multipart upload (but the last).
    pub min_part_bytes: u64,
    pub max_object_bytes: u64,
    /// Object bytes kept in memory; beyond, objects spill to a temporary directory.
    pub memory_bytes: u64,
    /// All object bytes, memory and disk; beyond, uploads fail with a clear error.
    pub max_total_bytes: u64,
}

impl Default for S3Limits {
    fn default() -> Self {
        S3Limits {
            standard_writes_per_sec: 3_500,
            standard_reads_per_sec: 5_500,
            express_writes_per_sec: 100_000,
            express_reads_per_sec: 200_000,
            session_duration: Duration::from_secs(300),
            min_part_bytes: 5 * MIB,
            max_object_bytes: 5 * 1024 * 1024 * MIB,
            memory_bytes: 256 * MIB,
            max_total_bytes: 8 * 1024 * MIB,
        }
    }
}

/// Every limit the emulator knows, as written in a limits file.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Limits {
    pub kinesis: KinesisLimits,
    pub s3: S3Limits,
    pub sqs: crate::sqs::limits::SqsLimits,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct S3Spec {
    standard_writes_per_sec: Option<u32>,
    standard_reads_per_sec: Option<u32>,
    express_writes_per_sec: Option<u32>,
    express_reads_per_sec: Option<u32>,
    session_duration: Option<Dur>,
    min_part_bytes: Option<Bytes>,
    max_object_bytes: Option<Bytes>,
    memory_bytes: Option<Bytes>,
    max_total_bytes: Option<Bytes>,
}

/// The file form: every key optional, unknown keys rejected.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct KinesisSpec {
    get_records_calls_per_sec: Option<u32>,
    get_shard_iterator_calls_per_sec: Option<u32>,
    read_rate_window: Option<RateWindow>,
    read_bytes_per_sec: Option<Bytes>,
    get_records_max_records: Option<u32>,
    get_records_max_bytes: Option<Bytes>,
    large_read_penalty: Option<Dur>,
    iterator_expiry: Option<Dur>,
    write_records_per_sec: Option<u32>,
    write_bytes_per_sec: Option<Bytes>,
    max_record_bytes: Option<Bytes>,
    put_records_max_records: Option<u32>,
    put_records_max_bytes: Option<Bytes>,
    efo_bytes_per_sec: Option<Bytes>,
    subscribe_min_interval: Option<Dur>,
    subscribe_takeover_after: Option<Dur>,
    subscription_duration: Option<Dur>,
    efo_idle_event_interval: Option<Dur>,
    max_consumers_per_stream: Option<u32>,
    max_creating_consumers: Option<u32>,
    stream_activation: Option<Dur>,
    consumer_activation: Option<Dur>,
    max_shards: Option<u32>,
    retention: Option<Dur>,
    stream_max_bytes: Option<Bytes>,
    reshard_duration: Option<Dur>,
    max_scale_factor: Option<u32>,
    scalings_per_day: Option<u32>,
    update_shard_count_calls_per_sec: Option<u32>,
    split_merge_calls_per_sec: Option<u32>,
    max_shards_per_stream: Option<u32>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Spec {
    kinesis: Option<KinesisSpec>,
    s3: Option<S3Spec>,
    sqs: Option<crate::sqs::limits::SqsSpec>,
}

macro_rules! apply {
    ($dst:expr, $src:expr; plain: $($p:ident),*; wrapped: $($w:ident),*) => {
        $( if let Some(v) = $src.$p { $dst.$p = v; } )*
        $( if let Some(v) = $src.$w { $dst.$w = v.0; } )*
    };
}

impl Limits {
    /// Reads a limits file and then applies `key=value` overrides (keys as in the file, e.g.
    /// `kinesis.subscription_duration=30s`).
    pub fn load(file: Option<&std::path::Path>, overrides: &[String]) -> anyhow::Result<Limits> {
        let mut table = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read limits file {}", path.display()))?;
                text.parse::<toml::Table>().map_err(|e| {
                    anyhow::anyhow!("limits file {}: {}", path.display(), toml_error(&text, &e))
                })?
            }
            None => toml::Table::new(),
        };
        for o in overrides {
            let (key, value) = o.split_once('=').with_context(|| {
                format!("--limit '{o}' must be KEY=VALUE, e.g. kinesis.subscription_duration=30s")
            })?;
            let (section, key) = key
                .trim()
                .split_once('.')
                .unwrap_or(("kinesis", key.trim()));
            // A value is TOML when it parses as one (numbers, quoted strings); otherwise text.
            let value = format!("v = {value}")
                .parse::<toml::Table>()
                .ok()
                .and_then(|mut t| t.remove("v"))
                .unwrap_or_else(|| toml::Value::String(value.trim().to_string()));
            table
                .entry(section.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .with_context(|| format!("--limit {o}: '{section}' is not a section"))?
                .insert(key.to_string(), value);
        }
        let origin = match file {
            Some(p) => format!("limits file {}", p.display()),
            None => "--limit".to_string(),
        };
        Self::from_table(table).with_context(|| origin)
    }

    /// Parses the text of a limits file.
    pub fn from_toml(text: &str) -> anyhow::Result<Limits> {
        let table = text
            .parse::<toml::Table>()
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Self::from_table(table)
    }

    fn from_table(table: toml::Table) -> anyhow::Result<Limits> {
        let spec: Spec = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| anyhow::anyhow!("{}", one_line(&e.to_string())))?;
        let mut limits = Limits::default();
        if let Some(k) = spec.kinesis {
            let l = &mut limits.kinesis;
            apply!(l, k;
                plain: get_records_calls_per_sec, get_shard_iterator_calls_per_sec,
                    read_rate_window, get_records_max_records, write_records_per_sec,
                    put_records_max_records, max_consumers_per_stream, max_creating_consumers,
                    max_shards, max_scale_factor, scalings_per_day,
                    update_shard_count_calls_per_sec, split_merge_calls_per_sec,
                    max_shards_per_stream;
                wrapped: read_bytes_per_sec, get_records_max_bytes, large_read_penalty,
                    iterator_expiry, write_bytes_per_sec, max_record_bytes, put_records_max_bytes,
                    efo_bytes_per_sec, subscribe_min_interval, subscribe_takeover_after,
                    subscription_duration, efo_idle_event_interval, stream_activation,
                    consumer_activation, retention, stream_max_bytes, reshard_duration);
            limits.kinesis.validate()?;
        }
        if let Some(k) = spec.s3 {
            let l = &mut limits.s3;
            apply!(l, k;
                plain: standard_writes_per_sec, standard_reads_per_sec, express_writes_per_sec,
                    express_reads_per_sec;
                wrapped: session_duration, min_part_bytes, max_object_bytes, memory_bytes,
                    max_total_bytes);
            limits.s3.validate()?;
        }
        if let Some(spec) = spec.sqs {
            limits.sqs = crate::sqs::limits::SqsLimits::from_spec(spec)?;
        }
        Ok(limits)
    }
}

impl Limits {
    /// One limit as `--print-limits` writes it, by its key as `--limit` names it
    /// (`kinesis.get_records_calls_per_sec`).
    pub fn get(&self, key: &str) -> Option<String> {
        let (section, name) = key.split_once('.')?;
        self.sections()
            .into_iter()
            .find(|(s, _)| *s == section)?
            .1
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    /// Every section's limits as `key = value` lines (`latlab emulate --print-limits`), each
    /// section under its name.
    pub fn sections(&self) -> Vec<(&'static str, Vec<(&'static str, String)>)> {
        vec![
            ("kinesis", self.kinesis.describe()),
            ("s3", self.s3.describe()),
            ("sqs", self.sqs.describe()),
        ]
    }
}

impl S3Limits {
    fn validate(&self) -> anyhow::Result<()> {
        for (name, v) in [
            ("standard_writes_per_sec", self.standard_writes_per_sec),
            ("standard_reads_per_sec", self.standard_reads_per_sec),
            ("express_writes_per_sec", self.express_writes_per_sec),
            ("express_reads_per_sec", self.express_reads_per_sec),
        ] {
            if v == 0 {
                bail!("s3.{name} must be greater than 0");
            }
        }
        if self.session_duration < Duration::from_secs(1) {
            bail!("s3.session_duration must be at least 1s");
        }
        if self.max_total_bytes == 0 {
            bail!("s3.max_total_bytes must be greater than 0");
        }
        Ok(())
    }

    pub fn describe(&self) -> Vec<(&'static str, String)> {
        use latlab_core::units::format_duration as d;
        vec![
            (
                "standard_writes_per_sec",
                self.standard_writes_per_sec.to_string(),
            ),
            (
                "standard_reads_per_sec",
                self.standard_reads_per_sec.to_string(),
            ),
            (
                "express_writes_per_sec",
                self.express_writes_per_sec.to_string(),
            ),
            (
                "express_reads_per_sec",
                self.express_reads_per_sec.to_string(),
            ),
            (
                "session_duration",
                format!("\"{}\"", d(self.session_duration)),
            ),
            ("min_part_bytes", self.min_part_bytes.to_string()),
            ("max_object_bytes", self.max_object_bytes.to_string()),
            ("memory_bytes", self.memory_bytes.to_string()),
            ("max_total_bytes", self.max_total_bytes.to_string()),
        ]
    }
}

impl KinesisLimits {
    fn validate(&self) -> anyhow::Result<()> {
        let positive: [(&str, u64); 16] = [
            (
                "get_records_calls_per_sec",
                self.get_records_calls_per_sec.into(),
            ),
            (
                "get_shard_iterator_calls_per_sec",
                self.get_shard_iterator_calls_per_sec.into(),
            ),
            ("read_bytes_per_sec", self.read_bytes_per_sec),
            (
                "get_records_max_records",
                self.get_records_max_records.into(),
            ),
            ("get_records_max_bytes", self.get_records_max_bytes),
            ("write_records_per_sec", self.write_records_per_sec.into()),
            ("write_bytes_per_sec", self.write_bytes_per_sec),
            ("max_record_bytes", self.max_record_bytes),
            (
                "put_records_max_records",
                self.put_records_max_records.into(),
            ),
            ("efo_bytes_per_sec", self.efo_bytes_per_sec),
            ("max_shards", self.max_shards.into()),
            ("stream_max_bytes", self.stream_max_bytes),
            ("max_scale_factor", self.max_scale_factor.into()),
            (
                "update_shard_count_calls_per_sec",
                self.update_shard_count_calls_per_sec.into(),
            ),
            (
                "split_merge_calls_per_sec",
                self.split_merge_calls_per_sec.into(),
            ),
            ("max_shards_per_stream", self.max_shards_per_stream.into()),
        ];
        for (name, v) in positive {
            if v == 0 {
                bail!("kinesis.{name} must be greater than 0");
            }
        }
        for (name, d) in [
            ("iterator_expiry", self.iterator_expiry),
            ("subscription_duration", self.subscription_duration),
            ("efo_idle_event_interval", self.efo_idle_event_interval),
            ("retention", self.retention),
        ] {
            if d.is_zero() {
                bail!("kinesis.{name} must be longer than 0s");
            }
        }
        Ok(())
    }

    /// The limits as `key = value` lines, for `latlab emulate --print-limits` and the docs.
    pub fn describe(&self) -> Vec<(&'static str, String)> {
        use latlab_core::units::format_duration as d;
        vec![
            (
                "get_records_calls_per_sec",
                self.get_records_calls_per_sec.to_string(),
            ),
            (
                "get_shard_iterator_calls_per_sec",
                self.get_shard_iterator_calls_per_sec.to_string(),
            ),
            (
                "read_rate_window",
                format!("\"{}\"", self.read_rate_window.name()),
            ),
            ("read_bytes_per_sec", self.read_bytes_per_sec.to_string()),
            (
                "get_records_max_records",
                self.get_records_max_records.to_string(),
            ),
            (
                "get_records_max_bytes",
                self.get_records_max_bytes.to_string(),
            ),
            (
                "large_read_penalty",
                format!("\"{}\"", d(self.large_read_penalty)),
            ),
            (
                "iterator_expiry",
                format!("\"{}\"", d(self.iterator_expiry)),
            ),
            (
                "write_records_per_sec",
                self.write_records_per_sec.to_string(),
            ),
            ("write_bytes_per_sec", self.write_bytes_per_sec.to_string()),
            ("max_record_bytes", self.max_record_bytes.to_string()),
            (
                "put_records_max_records",
                self.put_records_max_records.to_string(),
            ),
            (
                "put_records_max_bytes",
                self.put_records_max_bytes.to_string(),
            ),
            ("efo_bytes_per_sec", self.efo_bytes_per_sec.to_string()),
            (
                "subscribe_min_interval",
                format!("\"{}\"", d(self.subscribe_min_interval)),
            ),
            (
                "subscribe_takeover_after",
                format!("\"{}\"", d(self.subscribe_takeover_after)),
            ),
            (
                "subscription_duration",
                format!("\"{}\"", d(self.subscription_duration)),
            ),
            (
                "efo_idle_event_interval",
                format!("\"{}\"", d(self.efo_idle_event_interval)),
            ),
            (
                "max_consumers_per_stream",
                self.max_consumers_per_stream.to_string(),
            ),
            (
                "max_creating_consumers",
                self.max_creating_consumers.to_string(),
            ),
            (
                "stream_activation",
                format!("\"{}\"", d(self.stream_activation)),
            ),
            (
                "consumer_activation",
                format!("\"{}\"", d(self.consumer_activation)),
            ),
            ("max_shards", self.max_shards.to_string()),
            ("retention", format!("\"{}\"", d(self.retention))),
            ("stream_max_bytes", self.stream_max_bytes.to_string()),
            (
                "reshard_duration",
                format!("\"{}\"", d(self.reshard_duration)),
            ),
            ("max_scale_factor", self.max_scale_factor.to_string()),
            ("scalings_per_day", self.scalings_per_day.to_string()),
            (
                "update_shard_count_calls_per_sec",
                self.update_shard_count_calls_per_sec.to_string(),
            ),
            (
                "split_merge_calls_per_sec",
                self.split_merge_calls_per_sec.to_string(),
            ),
            (
                "max_shards_per_stream",
                self.max_shards_per_stream.to_string(),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_documented_values() {
        let l = KinesisLimits::default();
        assert_eq!(l.get_records_calls_per_sec, 5);
        assert_eq!(l.read_bytes_per_sec, 2 * MIB);
        assert_eq!(l.iterator_expiry, Duration::from_secs(300));
        assert_eq!(l.subscription_duration, Duration::from_secs(300));
        assert_eq!(l.max_consumers_per_stream, 20);
    }

    #[test]
    fn file_and_flags_shorten_limits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("limits.toml");
        std::fs::write(&path, "[kinesis]\nsubscription_duration = \"30s\"\n").unwrap();
        let l = Limits::load(
            Some(&path),
            &[
                "iterator_expiry=20s".into(),
                "kinesis.write_bytes_per_sec=2MiB".into(),
            ],
        )
        .unwrap();
        assert_eq!(l.kinesis.subscription_duration, Duration::from_secs(30));
        assert_eq!(l.kinesis.iterator_expiry, Duration::from_secs(20));
        assert_eq!(l.kinesis.write_bytes_per_sec, 2 * MIB);
        assert_eq!(l.kinesis.get_records_calls_per_sec, 5);
    }

    #[test]
    fn unknown_keys_and_bad_values_are_named() {
        let e = format!(
            "{:#}",
            Limits::load(None, &["kinesis.subscripton_duration=30s".into()]).unwrap_err()
        );
        assert!(e.contains("unknown field `subscripton_duration`"), "{e}");
        assert!(e.contains("subscription_duration"), "{e}");
        let e = format!(
            "{:#}",
            Limits::load(None, &["iterator_expiry=soon".into()]).unwrap_err()
        );
        assert!(e.contains("'soon' is not a duration"), "{e}");
        let e = format!(
            "{:#}",
            Limits::load(None, &["read_rate_window=rolling".into()]).unwrap_err()
        );
        assert!(e.contains("sliding") && e.contains("token-bucket"), "{e}");
        let e = format!(
            "{:#}",
            Limits::load(None, &["get_records_calls_per_sec=0".into()]).unwrap_err()
        );
        assert!(
            e.contains("get_records_calls_per_sec must be greater than 0"),
            "{e}"
        );
        let e = format!(
            "{:#}",
            Limits::from_toml("[kinesis]\nmax_shards = \"many\"\n").unwrap_err()
        );
        assert!(e.contains("max_shards"), "{e}");
    }
}
