//! The soak: `latlab run soak` (all three labs, every fault kind every 10 s) for
//! `LATLAB_SOAK_SECS` seconds (default 120; 3600 for the hour the goals are stated for), then its
//! figures: per consumer acknowledged, received, lost, duplicates and unread; the faults injected
//! and recovered; RSS at the start, at 10 minutes and at the end, open fds and tokio tasks; and
//! whether each goal was met.
//!
//! `cargo bench --bench soak`, or `LATLAB_SOAK_SECS=3600 cargo bench --bench soak`; or, for a
//! soak already run (`latlab run soak --format json -o FILE`), `LATLAB_SOAK_REPORT=FILE cargo
//! bench --bench soak` prints its figures without running another.

use std::process::Command;

fn main() {
    if let Ok(file) = std::env::var("LATLAB_SOAK_REPORT") {
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("LATLAB_SOAK_REPORT={file}: {e}"));
        let report: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("LATLAB_SOAK_REPORT={file} is not a JSON report: {e}"));
        print!("{}", latlab::report::soak::summary(&report));
        return;
    }
    let secs: u64 = std::env::var("LATLAB_SOAK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(120);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("soak.json");
    eprintln!("soak: running `latlab run soak --duration {secs}s` (LATLAB_SOAK_SECS to change)");
    let status = Command::new(env!("CARGO_BIN_EXE_latlab"))
        .args(["run", "soak", "--format", "json", "-o"])
        .arg(&out)
        .args(["--duration", &format!("{secs}s")])
        .status()
        .expect("latlab runs");
    assert!(status.success(), "latlab run soak failed");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("the report")).expect("JSON");
    print!("{}", latlab::report::soak::summary(&report));
}
