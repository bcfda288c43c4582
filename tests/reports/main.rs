//! What a run leaves: reports compared, recordings, and faults with every record counted, in one
//! test binary.

#[path = "../common/mod.rs"]
mod common;
mod compare;
mod faults;
mod record;
