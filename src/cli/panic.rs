//! What a panic prints: which latlab it was (version and commit, so a report can be matched to
//! the code), where it panicked and why, how to get a backtrace from this build, and where to
//! take it. A panic is a bug in latlab, never the answer to bad input (that is an error naming
//! what is wrong), so the message says so.

use std::io::Write as _;

/// The variable that makes latlab panic on purpose at start, so its panic report can be checked
/// as a user would see it (tests/cli/setup.rs). Nothing else reads it.
pub(super) const PANIC_ENV: &str = "LATLAB_PANIC_FOR_TEST";

/// How to get a backtrace that names functions. The release profile strips symbols (the binary
/// is a third smaller), so a release backtrace holds only addresses; a debug build of the same
/// commit names the functions, files and lines.
const BACKTRACE_HINT: &str = if cfg!(debug_assertions) {
    "For a backtrace, run the same command again with RUST_BACKTRACE=1."
} else {
    "For a backtrace, run the same command again with RUST_BACKTRACE=1 from a checkout of the \
     commit above, as `RUST_BACKTRACE=1 cargo run -- ARGS` (this release build is stripped of \
     symbols, so its own backtrace holds only addresses)."
};

/// Replaces the default panic report with latlab's. The live lab's hook, set later, restores the
/// terminal first and then calls this one. A release build is compiled with `panic = "abort"`
/// (Cargo.toml says why): there the report ends the process with 101, the code an unwinding
/// build exits with, rather than let the abort that follows dump core.
pub(super) fn install() {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(a panic without a message)");
        let place = info
            .location()
            .map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()))
            .unwrap_or_default();
        let thread = std::thread::current();
        let thread = thread.name().unwrap_or("unnamed");
        let backtrace = std::backtrace::Backtrace::capture();
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "latlab {} panicked in thread '{thread}'{place}:\n{message}\n",
            env!("LATLAB_LONG_VERSION")
        );
        match backtrace.status() {
            std::backtrace::BacktraceStatus::Captured => {
                let _ = writeln!(err, "backtrace:\n{backtrace}");
            }
            _ => {
                let _ = writeln!(err, "{BACKTRACE_HINT}");
            }
        }
        let _ = writeln!(
            err,
            "This is a bug in latlab. Please report it with the command you ran and this whole \
             message."
        );
        drop(err);
        if cfg!(panic = "abort") {
            std::process::exit(101);
        }
    }));
}

/// Panics when [`PANIC_ENV`] is set, after [`install`]: the report a user would see.
pub(super) fn on_request() {
    if std::env::var_os(PANIC_ENV).is_some() {
        panic!("{PANIC_ENV} is set: latlab panicked on purpose to show its panic report");
    }
}
