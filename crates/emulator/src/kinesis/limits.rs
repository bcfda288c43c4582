//! Kinesis Data Streams' limits as the emulator enforces them: per shard unless a name says
//! otherwise. Defaults are the documented values (docs/emulator.md); a limits file's `[kinesis]`
//! table or `--limit kinesis.KEY=VALUE` shortens them for demos and tests.

use std::time::Duration;

use anyhow::bail;
use serde::Deserialize;

use crate::service::ServiceLimits;
use latlab_core::provenance::{Param, Provenance, Source};
use latlab_core::units::{Bytes, Dur};

pub use latlab_core::shaping::RateWindow;

const MIB: u64 = 1024 * 1024;

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

/// The file form: every key optional, unknown keys rejected.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct KinesisSpec {
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

impl ServiceLimits for KinesisLimits {
    type Spec = KinesisSpec;

    fn from_spec(k: KinesisSpec) -> anyhow::Result<KinesisLimits> {
        let mut l = KinesisLimits::default();
        crate::limits::apply!(l, k;
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
        l.validate()?;
        Ok(l)
    }

    fn describe(&self) -> Vec<(&'static str, String)> {
        self.lines()
    }

    /// How the read rate is counted: not documented, so a model with its reason.
    fn modelled(&self) -> Vec<Param> {
        let window = self.read_rate_window;
        vec![Param::new(
            "emulator.read_rate_window",
            window.name().into(),
            if window == RateWindow::TokenBucket {
                Provenance::seed(
                    "how 'five reads per second' is counted is not documented; the token bucket \
                     was chosen because a sliding window gave about 51 throttles a minute on round \
                     1's set-up where the seed's CloudWatch showed 12-24 (docs/emulator.md)",
                    &["kinesis-round1/read_throttles_per_minute/shard/value"],
                )
            } else {
                Provenance::new(
                    Source::User,
                    "chosen in the scenario or on the command line",
                )
            },
        )]
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
    fn lines(&self) -> Vec<(&'static str, String)> {
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
        let l = crate::limits::Limits::load(
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
            crate::limits::Limits::load(None, &["kinesis.subscripton_duration=30s".into()])
                .unwrap_err()
        );
        assert!(e.contains("unknown field `subscripton_duration`"), "{e}");
        assert!(e.contains("subscription_duration"), "{e}");
        let e = format!(
            "{:#}",
            crate::limits::Limits::load(None, &["iterator_expiry=soon".into()]).unwrap_err()
        );
        assert!(e.contains("'soon' is not a duration"), "{e}");
        let e = format!(
            "{:#}",
            crate::limits::Limits::load(None, &["read_rate_window=rolling".into()]).unwrap_err()
        );
        assert!(e.contains("sliding") && e.contains("token-bucket"), "{e}");
        let e = format!(
            "{:#}",
            crate::limits::Limits::load(None, &["get_records_calls_per_sec=0".into()]).unwrap_err()
        );
        assert!(
            e.contains("get_records_calls_per_sec must be greater than 0"),
            "{e}"
        );
        let e = format!(
            "{:#}",
            crate::limits::Limits::from_toml("[kinesis]\nmax_shards = \"many\"\n").unwrap_err()
        );
        assert!(e.contains("max_shards"), "{e}");
    }
}
