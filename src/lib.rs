//! latlab: a terminal lab for cloud latency.
//!
//! Data flows one way: probes -> samples -> metrics -> snapshots -> renderers (TUI or reports).
//! Control flows the other: key -> command -> supervisor -> probes. The emulator
//! (`latlab_emulator`) is the local cloud the probes measure when no real endpoint is given.

pub mod aws;
pub mod calibrate;
pub mod cli;
pub mod compare;
pub mod config;
pub mod doctor;
pub mod fleet;
pub mod lab_kit;
pub mod labs;
pub mod metrics;
pub mod prices;
pub mod record;
pub mod report;
pub mod run;
pub mod scenario;
pub mod share;
pub mod snapshot;
pub mod theme;
pub mod tui;
