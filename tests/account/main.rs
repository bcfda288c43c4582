//! Running on an account: plans, confirmation, cleanup, cost and prices, against the emulator and
//! moto, in one test binary.

mod account;
#[path = "../common/mod.rs"]
mod common;
mod cost;
mod moto;
mod prices_fetch;
mod rehearsal;
mod trust;
