//! The soak's CI form: `latlab run soak --duration 60s` (every lab, every fault kind every
//! 10 s) must account for every record and see every fault kind fire. The hour-long form is
//! `LATLAB_SOAK_SECS=3600 cargo bench --bench soak`.

mod common;

#[test]
fn a_minute_of_soak_counts_every_record_and_fires_every_fault_kind() {
    common::require_redis_server();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("soak.json");
    let status = common::latlab()
        .args([
            "run",
            "soak",
            "-q",
            "--duration",
            "60s",
            "--format",
            "json",
            "-o",
        ])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let summary = latlab::report::soak::summary(&report);
    println!("{summary}");
    let s = &report["snapshot"];
    let n = |v: &serde_json::Value| v.as_u64().unwrap();
    // 50 records/s for 60 s, every one acknowledged and accounted for by every consumer.
    let consumers = s["kinesis"]["consumers"].as_array().unwrap();
    assert_eq!(consumers.len(), 4);
    for c in consumers {
        let x = &c["counts"];
        assert_eq!(
            n(&x["received"]) + n(&x["lost"]) + n(&x["unread"]),
            n(&x["acknowledged"]),
            "{}: {x}",
            c["name"]
        );
        assert_eq!(n(&x["acknowledged"]), 3000, "{}: {x}", c["name"]);
        assert_eq!(n(&x["lost"]), 0, "{}: {x}", c["name"]);
    }
    assert!(summary.contains("0 records lost: met"), "{summary}");
    // 20 messages/s to each SQS consumer's queue: every one sent is counted once, none lost.
    let sqs = s["sqs"]["consumers"].as_array().unwrap();
    assert_eq!(sqs.len(), 4);
    for c in sqs {
        assert_eq!(
            n(&c["received"]) + n(&c["lost"]) + n(&c["in_flight"]) + n(&c["unread"]),
            n(&c["sent"]),
            "{}: {c}",
            c["name"]
        );
        assert!(n(&c["sent"]) > 1000, "{}: {c}", c["name"]);
        assert_eq!(n(&c["lost"]), 0, "{}: {c}", c["name"]);
    }
    // Every kind fired, and none was refused.
    let counts = s["faults"]["counts"].as_array().unwrap();
    for kind in latlab_core::faults::Kind::all() {
        let c = counts
            .iter()
            .find(|c| c["kind"] == kind.name())
            .unwrap_or_else(|| panic!("{} never fired:\n{summary}", kind.name()));
        assert!(n(&c["fired"]) >= 1, "{}", kind.name());
        assert_eq!(
            n(&c["failed"]),
            0,
            "{} not injected:\n{summary}",
            kind.name()
        );
    }
    // The process was sampled at the start and the end.
    assert!(n(&s["process"]["last"]["rss_bytes"]) > 0);
    assert!(n(&s["process"]["last"]["tasks"]) > 0);
}
