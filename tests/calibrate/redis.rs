//! Calibrating Redis: latlab's own pair shaped by a made-up profile's `[links]` gives them back
//! within ±15%, a Redis run with the written profile plays them back, a pair the user names is
//! measured and left as it was, and another endpoint without a pair is told what it needs.

use crate::common::{latlab, output, require_redis_server, with_credentials};
use latlab_emulator::profile::LatencyProfile;

/// Links no built-in resembles, with spread, set at 6 ms and more one way: a round trip through
/// latlab's own pair on this 2-core machine carries about 0.1-0.3 ms of its shapers' and
/// servers' own time each way, which at 3 ms one way came back 1.04-1.19 of the delay set.
const LINKS: &str = r#"
name = "made-up-links"
[links]
redis-client = { min_ms = 2, median_ms = 6, p99_ms = 14 }
redis-replication = { min_ms = 4, median_ms = 12, p99_ms = 28 }
"#;

/// A Redis run of five tries of a 1 KB value, on latlab's own pair.
const PLAYBACK: &str = r#"
name = "links-playback"
description = "a calibrated profile's Redis links played back"
duration = "5s"
latency_profile = "zero"
[redis]
link = "t3-micro"
tries = 5
quick_tries = 5
conditions = [{ name = "1 KB", value = "1KB" }]
"#;

fn median(p: &LatencyProfile, link: &str) -> f64 {
    p.links
        .get(link)
        .unwrap_or_else(|| panic!("no links.{link}"))
        .median_ms()
}

#[test]
fn latlabs_own_pair_recovers_the_links_set_and_a_run_plays_them_back() {
    require_redis_server();
    let _alone = crate::alone();
    let dir = tempfile::tempdir().unwrap();
    let set_file = dir.path().join("links.toml");
    std::fs::write(&set_file, LINKS).unwrap();
    let out_file = dir.path().join("measured.toml");
    let (ok, out, err) = output(
        latlab()
            .args(["calibrate", "--services", "redis", "--samples", "150"])
            .args(["--latency-profile", set_file.to_str().unwrap()])
            .args(["--output", out_file.to_str().unwrap()]),
    );
    assert!(ok, "calibrate failed:\n{out}\n{err}");
    assert!(err.contains("latlab's own redis-server pair"), "{err}");
    let text = std::fs::read_to_string(&out_file).unwrap();
    let measured = LatencyProfile::from_toml(&text).unwrap_or_else(|e| panic!("{e:#}\n{text}"));
    let set = LatencyProfile::from_toml(LINKS).unwrap();
    let mut table = String::from("parameter                    set   recovered   ratio\n");
    let mut off = Vec::new();
    for link in ["redis-client", "redis-replication"] {
        let (a, b) = (median(&set, link), median(&measured, link));
        let ratio = b / a;
        table.push_str(&format!(
            "links.{link:<20} {a:>6.2} {b:>11.3} {ratio:>7.3}\n"
        ));
        if !(0.85..=1.15).contains(&ratio) {
            off.push(link);
        }
    }
    eprintln!("{table}");
    assert!(off.is_empty(), "outside ±15%: {off:?}\n{table}");
    for p in measured.params() {
        if p.name.starts_with("links.") {
            assert_eq!(p.provenance.source.name(), "measurement", "{}", p.name);
            assert!(
                p.provenance.note.contains("split evenly"),
                "{}",
                p.provenance.note
            );
            assert!(
                p.provenance.note.contains("150 samples"),
                "{}",
                p.provenance.note
            );
        }
    }
    // The replica's PING is printed beside the primary's, and what was not measured is said.
    assert!(
        err.contains("PING round trips to the replica, median"),
        "{err}"
    );
    assert!(
        out.contains("not measured: the Redis links' bandwidths"),
        "{out}"
    );

    // Played back: a Redis run with the written profile shapes latlab's own pair with the
    // measured delays, and its model says where they come from.
    let scenario = dir.path().join("playback.toml");
    std::fs::write(&scenario, PLAYBACK).unwrap();
    let (ok, json, err) = output(
        latlab()
            .args(["run", scenario.to_str().unwrap(), "-q", "--format", "json"])
            .args(["--latency-profile", out_file.to_str().unwrap()]),
    );
    assert!(ok, "the run failed:\n{err}");
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let model = report["snapshot"]["backend"]["model"].as_array().unwrap();
    let link = model.iter().find(|p| p["name"] == "redis.link").unwrap();
    let name = measured.name.clone();
    assert!(
        link["value"]
            .as_str()
            .unwrap()
            .starts_with(&format!("t3-micro delayed as profile {name} (")),
        "{link}"
    );
    assert_eq!(link["provenance"]["source"], "measurement", "{link}");
    assert!(
        link["provenance"]["note"]
            .as_str()
            .unwrap()
            .contains("links.redis-replication"),
        "{link}"
    );
    // The persistent replica connection's lag is the replication link's one way delay and
    // more; on the pair's loopback it is a fraction of a millisecond.
    let persistent = report["snapshot"]["redis"]["conditions"][0]["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["method"] == "Persistent")
        .unwrap()["lag"]["p50_us"]
        .as_f64()
        .unwrap()
        / 1000.0;
    let one_way = median(&measured, "redis-replication");
    eprintln!("persistent lag p50 {persistent:.2} ms; replication link median {one_way:.2} ms");
    assert!(
        persistent >= 0.7 * one_way,
        "lag p50 {persistent} ms with a {one_way} ms link"
    );
}

#[test]
fn a_pair_the_user_names_is_measured_and_left_as_it_was() {
    require_redis_server();
    let _alone = crate::alone();
    use latlab::labs::redis::local::{LinkProfile, LocalRedis};
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Links of several milliseconds, as the recovery tests set: a PING round trip through the
    // shapers costs the client and the shapers some tenths of a millisecond besides, about 9%
    // of a 2 ms link (2.179 ms read in a local run) and 0.6 ms once in CI (2.605, 2026-12-06).
    let pair = rt
        .block_on(LocalRedis::start(
            LinkProfile::resolve("10ms").unwrap(),
            LinkProfile::resolve("5ms").unwrap(),
        ))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("pair.toml");
    // Another endpoint for the other services; Redis is the pair named.
    let (ok, out, err) = output(
        with_credentials(&mut latlab())
            .args(["calibrate", "--services", "redis", "--samples", "40"])
            .args(["--endpoint-url", "http://127.0.0.1:9"])
            .args(["--redis-primary", &pair.primary_url()])
            .args(["--redis-replica", &pair.replica_url()])
            .args(["--output", out_file.to_str().unwrap()]),
    );
    assert!(ok, "calibrate failed:\n{out}\n{err}");
    assert!(err.contains("your Redis pair redis://127.0.0.1:"), "{err}");
    assert!(err.contains("(nothing created)"), "{err}");
    let measured = LatencyProfile::from_toml(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    let (client, replication) = (
        median(&measured, "redis-client"),
        median(&measured, "redis-replication"),
    );
    eprintln!("client {client:.3} ms (set 5), replication {replication:.3} ms (set 10)");
    assert!(
        (4.25..=5.75).contains(&client),
        "client link {client} ms, set 5"
    );
    assert!(
        (8.5..=11.5).contains(&replication),
        "replication link {replication} ms, set 10"
    );
    // Its key is gone: the pair holds no key of latlab's.
    let keys: Vec<String> = rt.block_on(async {
        let c = redis::Client::open(pair.primary_url()).unwrap();
        let mut con = c.get_multiplexed_async_connection().await.unwrap();
        redis::cmd("KEYS")
            .arg("latlab:*")
            .query_async(&mut con)
            .await
            .unwrap()
    });
    assert!(keys.is_empty(), "left behind: {keys:?}");
}

#[test]
fn another_endpoint_without_a_pair_is_told_what_redis_needs() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = output(
        with_credentials(&mut latlab())
            .current_dir(dir.path())
            .args(["calibrate", "--services", "redis"])
            .args(["--endpoint-url", "http://127.0.0.1:9", "--output", "x.toml"]),
    );
    assert!(!ok);
    assert!(
        err.contains("--services redis: calibrating Redis on another endpoint or AWS measures a pair you name: --redis-primary URL and --redis-replica URL"),
        "{err}"
    );
}
