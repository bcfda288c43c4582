//! S3's limits as the emulator enforces them: request rates per storage class, sessions, and the
//! emulator's own storage bounds. Defaults are the documented values (docs/emulator.md); a limits
//! file's `[s3]` table or `--limit s3.KEY=VALUE` changes them.

use std::time::Duration;

use anyhow::bail;
use serde::Deserialize;

use crate::service::ServiceLimits;
use latlab_core::units::{Bytes, Dur};

const MIB: u64 = 1024 * 1024;

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

/// The file form: every key optional, unknown keys rejected.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct S3Spec {
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

impl ServiceLimits for S3Limits {
    type Spec = S3Spec;

    fn from_spec(k: S3Spec) -> anyhow::Result<S3Limits> {
        let mut l = S3Limits::default();
        crate::limits::apply!(l, k;
            plain: standard_writes_per_sec, standard_reads_per_sec, express_writes_per_sec,
                express_reads_per_sec;
            wrapped: session_duration, min_part_bytes, max_object_bytes, memory_bytes,
                max_total_bytes);
        l.validate()?;
        Ok(l)
    }

    fn describe(&self) -> Vec<(&'static str, String)> {
        self.lines()
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

    fn lines(&self) -> Vec<(&'static str, String)> {
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
