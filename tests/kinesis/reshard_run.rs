//! A reshard on a scenario's schedule in a headless run (`latlab run --format json`, the binary):
//! the report shows the stream's shard counts and every consumer's accounting across them.

use crate::common;

const SCENARIO: &str = r#"
name = "reshard-schedule"
description = "1 -> 2 -> 1 shards on a schedule"
duration = "12s"
latency_profile = "zero"

[emulator]
limits = { stream_activation = "0s", consumer_activation = "0s", reshard_duration = "2s" }

[kinesis]
stream = "scheduled"
shards = 1
drain = "10s"

[kinesis.producer]
rate = 20
payload = "128B"

[[kinesis.reshards]]
at = "2s"
shards = 2

[[kinesis.reshards]]
at = "7s"
shards = 1

[[kinesis.consumers]]
kind = "efo"
name = "fan-out"

[[kinesis.consumers]]
kind = "poller"
name = "poller"
"#;

#[test]
fn a_scheduled_reshard_shows_in_the_json_report_with_every_record_accounted_for() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("reshard.toml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let out = dir.path().join("r.json");
    let run = common::latlab()
        .args([
            "run",
            scenario.to_str().unwrap(),
            "--format",
            "json",
            "--quiet",
        ])
        .args(["--output", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    common::assert_follows_report_schema(&json);
    let k = &json["snapshot"]["kinesis"];
    let counts: Vec<u64> = k["shard_counts"]
        .as_array()
        .unwrap_or_else(|| panic!("no shard_counts: {k}"))
        .iter()
        .map(|c| c["shards"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, [1, 2, 1], "{}", k["shard_counts"]);
    assert_eq!(k["shards"], 1);
    assert!(
        k.get("updating").is_none(),
        "no reshard under way at the end"
    );
    let acked = k["producer"]["acked"].as_u64().unwrap();
    assert!(acked >= 200, "{acked} records acknowledged in 12 s at 20/s");
    common::assert_every_record_counted(&json, acked);
    for c in k["consumers"].as_array().unwrap() {
        assert_eq!(c["out_of_order"], 0, "{}: {c}", c["name"]);
        assert!(
            c["events"]["shards read to their end"].as_u64() >= Some(3),
            "{}: the parent, then both children: {}",
            c["name"],
            c["events"]
        );
    }
}
