//! The Redis lab on real redis-server processes: the three methods, faults' cleanup, and no server
//! left behind, in one test binary.

#[path = "../common/mod.rs"]
mod common;
mod redis_cleanup;
mod redis_lab;
