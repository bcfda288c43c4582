//! The labs, one folder each: its part of the scenario file (`config`), its probes and the state
//! they write, its commands (what its keys do while it runs) and its snapshot. The run's
//! supervisor (`crate::run`) starts, drives and stops them; the TUI and reports draw their
//! snapshots.

pub mod kinesis;
pub mod redis;
pub mod s3;

/// The labs latlab has, in the order screens and reports show them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LabKind {
    Kinesis,
    S3,
    Redis,
}

impl LabKind {
    pub const ALL: [LabKind; 3] = [LabKind::Kinesis, LabKind::S3, LabKind::Redis];

    pub fn name(self) -> &'static str {
        match self {
            LabKind::Kinesis => "Kinesis",
            LabKind::S3 => "S3",
            LabKind::Redis => "Redis",
        }
    }

    /// A built-in scenario that runs this lab alone, for messages that suggest one.
    pub fn demo(self) -> &'static str {
        match self {
            LabKind::Kinesis => "demo",
            LabKind::S3 => "s3-demo",
            LabKind::Redis => "redis-demo",
        }
    }
}

/// A new run's id: 8 random hex digits. It names what a run creates and writes (the Kinesis
/// lab's stream and consumers, the S3 lab's `latlab/RUN_ID/` prefix, the Redis lab's
/// `latlab:RUN_ID:` keys), so runs on several hosts sharing one target keep apart, and each run
/// cleans up only its own.
pub fn run_id() -> String {
    let v: u32 = rand::random();
    format!("{v:08x}")
}

/// The next step up (or down) from `current` in `steps`; the ends stay put.
pub fn step(steps: &[u64], current: u64, up: bool) -> u64 {
    if up {
        steps
            .iter()
            .copied()
            .find(|s| *s > current)
            .unwrap_or(current)
    } else {
        steps
            .iter()
            .rev()
            .copied()
            .find(|s| *s < current)
            .unwrap_or(current)
    }
}
