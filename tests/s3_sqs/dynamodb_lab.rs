//! The DynamoDB lab end to end, as a user runs it: `latlab run` of a scenario on the embedded
//! emulator, its report read back. A hot key throttles its partition while the table uses a
//! fraction of its capacity, and the same writes spread over the keys do not throttle; every
//! change is counted by each of the three change consumers, under faults too.

use crate::common;

use serde_json::Value;

/// Runs `scenario` (a file's text) headless for `secs`, with `extra` flags; its text report (as
/// `latlab report` prints the run's JSON report) and its JSON report.
fn run(scenario: &str, secs: u32, extra: &[&str]) -> (String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.toml");
    std::fs::write(&file, scenario).unwrap();
    let json = dir.path().join("r.json");
    let duration = format!("{secs}s");
    let mut args = vec![
        "run",
        file.to_str().unwrap(),
        "--duration",
        &duration,
        "--quiet",
        "--format",
        "json",
        "--output",
        json.to_str().unwrap(),
    ];
    args.extend(extra);
    let (ok, out, err) = common::latlab_output(&args);
    assert!(ok, "{err}\n{out}");
    let (ok, text, err) = common::latlab_output(&["report", json.to_str().unwrap()]);
    assert!(ok, "{err}");
    let report = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (text, report)
}

/// A provisioned table of five partitions (3,000 RCU, 4,000 WCU) and 400 writes a second of
/// 4 KB items: 1,600 write units a second, a partition's 1,000 past only if most go to one key.
fn table(skewed: bool) -> String {
    format!(
        "name = \"t\"\ndescription = \"d\"\nduration = \"1m\"\nlatency_profile = \"zero\"\n[dynamodb]\n\
         mode = \"provisioned\"\nread_capacity = 3000\nwrite_capacity = 4000\n\
         item_size = \"4KiB\"\nrate = 400\nkeys = 100\nhot_share = 0.9\nskewed = {skewed}\nreads = 10\n"
    )
}

#[test]
fn a_hot_key_throttles_its_partition_while_the_table_has_capacity_and_spread_keys_do_not() {
    let (text, r) = run(&table(true), 6, &[]);
    let d = &r["snapshot"]["dynamodb"];
    let throttled = d["writer"]["throttled"]["TableWriteKeyRangeThroughputExceeded"]
        .as_u64()
        .unwrap_or(0);
    assert!(throttled > 100, "the hot partition throttles: {d}");
    assert_eq!(
        d["writer"]["throttled"].as_object().unwrap().len(),
        1,
        "only the partition's limit refuses: {d}"
    );
    let parts = d["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), 5, "3,000/3,000 + 4,000/1,000 partitions");
    let hot: Vec<&Value> = parts
        .iter()
        .filter(|p| p["throttled"].as_u64().unwrap() > 0)
        .collect();
    assert_eq!(hot.len(), 1, "one partition takes the throttles: {parts:?}");
    let seconds = d["seconds"].as_f64().unwrap();
    let used = d["writer"]["units"].as_f64().unwrap() / seconds;
    println!(
        "hot key: {throttled} throttled attempts on p{}; the table used {used:.0} WCU/s of 4,000",
        hot[0]["index"]
    );
    assert!(
        used < 0.5 * 4000.0,
        "the table's capacity mostly idle: {used}"
    );
    let line = text
        .lines()
        .find(|l| l.contains("HOT"))
        .unwrap_or_else(|| panic!("the report names the hot partition:\n{text}"));
    assert!(line.starts_with(&format!("p{}", hot[0]["index"])), "{line}");
    assert!(
        text.contains("write attempts throttled (TableWriteKeyRangeThroughputExceeded"),
        "{text}"
    );

    // The same writes at the same rate, spread over the keys: nothing throttles.
    let (_, r) = run(&table(false), 6, &[]);
    let d = &r["snapshot"]["dynamodb"];
    assert_eq!(d["writer"]["throttled"], serde_json::json!({}), "{d}");
    assert_eq!(d["writer"]["failed"], 0, "{d}");
    assert!(d["writer"]["written"].as_u64().unwrap() > 1500, "{d}");
}

#[test]
fn every_change_is_counted_by_each_consumer_under_faults() {
    let scenario = "name = \"c\"\ndescription = \"d\"\nduration = \"1m\"\nlatency_profile = \"zero\"\n[dynamodb]\n\
         mode = \"provisioned\"\nread_capacity = 100\nwrite_capacity = 1000\n\
         item_size = \"256B\"\nrate = 50\nkeys = 20\nreads = 0\n\
         [[dynamodb.cdc]]\nname = \"streams-poller\"\nkind = \"streams-poller\"\ninterval = \"200ms\"\n\
         [[dynamodb.cdc]]\nname = \"lambda\"\nkind = \"lambda\"\n\
         [[dynamodb.cdc]]\nname = \"fan-out\"\nkind = \"fan-out\"\n\
         [[faults]]\nkind = \"dynamodb.reset-after\"\nevery = \"1s\"\nfirst = \"500ms\"\n\
         [[faults]]\nkind = \"dynamodb.internal-error\"\nevery = \"1s\"\nfirst = \"700ms\"\n\
         [[faults]]\nkind = \"dynamodb.streams-stall\"\nfor = \"500ms\"\nevery = \"2s\"\nfirst = \"1s\"\n";
    let (text, r) = run(scenario, 6, &[]);
    let d = &r["snapshot"]["dynamodb"];
    let written = d["writer"]["written"].as_u64().unwrap();
    assert!(written > 200, "{d}");
    for c in d["cdc"].as_array().unwrap() {
        let k = &c["counts"];
        let n = |f: &str| k[f].as_u64().unwrap();
        assert_eq!(n("written"), written, "{c}");
        assert_eq!(
            n("received") + n("lost") + n("unread"),
            n("written"),
            "the count adds up: {c}"
        );
        assert_eq!(n("lost"), 0, "{c}");
        assert_eq!(n("unread"), 0, "drained: {c}");
        println!(
            "{}: {} written, {} received, {} duplicates, {} unacknowledged",
            c["name"],
            n("written"),
            n("received"),
            n("duplicates"),
            n("unacknowledged")
        );
    }
    assert!(text.contains("every change counted (received + lost + unread = written)"));
    assert!(!text.contains(" NO "), "{text}");
    let faults = r["snapshot"]["faults"].to_string();
    assert!(faults.contains("dynamodb.reset-after"), "{faults}");
}

#[test]
fn bad_dynamodb_sections_are_named_with_what_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(
        &file,
        "name = \"b\"\ndescription = \"d\"\nduration = \"1m\"\n[dynamodb]\nmode = \"burst\"\n",
    )
    .unwrap();
    let (ok, _, err) = common::latlab_output(&["run", file.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("mode = 'burst': must be provisioned or on-demand"),
        "{err}"
    );
}
