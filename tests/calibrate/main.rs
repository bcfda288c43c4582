//! `latlab calibrate` against `latlab emulate`: a made-up profile's medians recovered, the zero
//! profile's floor, and what a calibration leaves behind after Ctrl-C. Its figures are timings to
//! a millisecond, so `scripts/run-tests` runs this binary alone, after the others.

#[path = "../common/mod.rs"]
mod common;
mod recovery;
mod redis;
mod safety;

/// One test at a time: a calibration beside another test would measure its load.
pub fn alone() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}
