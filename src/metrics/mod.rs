//! Measurement: latency series, per-second rates and the SDK's attempts (a lab's own accounting,
//! such as the Kinesis lab's record ledger, is in its folder).
//! Probes write here; the TUI and reports read snapshots. Everything has a fixed size.

pub mod cpu;
pub mod exposition;
pub mod json;
pub mod sdk;
pub mod series;

pub use sdk::{SdkCounters, SdkStats};
pub use series::{BytesSummary, Point, Rate, Series, Summary};
