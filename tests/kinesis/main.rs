//! The Kinesis lab end to end: its consumers, live knobs, a reshard's lineage, and the SDK's
//! attempts as the observer counts them, in one test binary.

#[path = "../common/mod.rs"]
mod common;
mod kcl;
mod kinesis_knobs;
mod kinesis_lab;
mod kinesis_lineage;
mod reshard_run;
mod sdk_observer;
