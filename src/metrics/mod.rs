//! Measurement: latency series, record accounting by sequence number, and the SDK's attempts.
//! Probes write here; the TUI and reports read snapshots. Everything has a fixed size.

pub mod cpu;
pub mod exposition;
pub mod json;
pub mod ledger;
pub mod order;
pub mod sdk;
pub mod series;

pub use ledger::{ConsumerId, Ledger, SeqCounts, SeqNo};
pub use order::KeyOrder;
pub use sdk::{SdkCounters, SdkStats};
pub use series::{BytesSummary, Point, Rate, Series, Summary};
