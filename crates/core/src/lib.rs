//! latlab's shared primitives: the services' vocabulary, faults, units, clocks, call-rate and
//! delay shaping, parameter provenance, and HTTP written once. Both the emulator and the labs
//! stand on this crate; it imports neither (the compiler holds that line).
//!
//! The `latlab` crate re-exports each module at its old path (`latlab::units`, ...), so code and
//! users that name them there are unchanged.

pub mod clock;
pub mod faults;
pub mod http;
pub mod listen;
pub mod provenance;
pub mod services;
pub mod shaping;
pub mod units;
