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
    // With a change consumer, so that its count is checked under throttles too, and recorded.
    let rec = tempfile::tempdir().unwrap();
    let record = rec.path().join("rec");
    let poller = "[[dynamodb.cdc]]\nname = \"streams-poller\"\nkind = \"streams-poller\"\ninterval = \"200ms\"\n";
    let (text, r) = run(
        &format!("{}{poller}", table(true)),
        6,
        &["--record", record.to_str().unwrap()],
    );
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
    // Every acknowledged write counted by the change consumer: throttled writes were never
    // written, so they are in no count.
    let k = &d["cdc"][0]["counts"];
    let n = |f: &str| k[f].as_u64().unwrap();
    assert_eq!(
        n("written"),
        d["writer"]["written"].as_u64().unwrap(),
        "{k}"
    );
    assert_eq!(n("received") + n("lost") + n("unread"), n("written"), "{k}");
    assert_eq!((n("lost"), n("unread")), (0, 0), "{k}");
    // The recording replays to the same tables.
    let (ok, replayed, err) =
        common::latlab_output(&["replay", record.to_str().unwrap(), "--headless"]);
    assert!(ok, "{err}");
    assert!(
        replayed.contains(line),
        "the replay names the hot partition: {replayed}"
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

/// On another endpoint (`latlab emulate`, standing for an account): the plan names the table, its
/// tags and its calls and creates nothing; a run killed with SIGKILL leaves its table, which
/// `latlab cleanup` finds by its run tag and deletes, leaving tables only named like latlab's
/// alone.
#[test]
fn a_killed_runs_table_is_found_by_its_tag_and_deleted_and_look_alikes_are_left() {
    use aws_sdk_dynamodb::types::{
        AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ScalarAttributeType,
    };
    use common::{Kill, emulate, latlab, with_credentials};
    use std::time::{Duration, Instant};

    let (_emu, url) = emulate(&[]);
    let on = |args: &[&str]| {
        common::output(
            with_credentials(&mut latlab())
                .args(args)
                .args(["--endpoint-url", &url]),
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ddb-acct.toml");
    std::fs::write(&file, table(false)).unwrap();
    let scenario = file.to_str().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let c = common::dynamodb_client(&url);
    let tables = || -> Vec<String> {
        rt.block_on(c.list_tables().send())
            .unwrap()
            .table_names()
            .to_vec()
    };

    let (ok, plan, err) = on(&["plan", "--scenario", scenario]);
    assert!(ok, "{err}");
    for line in [
        "table latlab-",
        "provisioned 3,000 RCU, 4,000 WCU",
        "latlab:run-id",
        "dynamodb:CreateTable",
        "dynamodb:PutItem",
        "dynamodb:DeleteTable",
        "provisioned write capacity",
    ] {
        assert!(plan.contains(line), "{line}:\n{plan}");
    }
    assert!(tables().is_empty(), "a plan creates nothing");

    // A look-alike: named as a run's table would be, without the tag.
    rt.block_on(
        c.create_table()
            .table_name("latlab-0a1b2c3d")
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name("pk")
                    .attribute_type(ScalarAttributeType::S)
                    .build()
                    .unwrap(),
            )
            .key_schema(
                KeySchemaElement::builder()
                    .attribute_name("pk")
                    .key_type(KeyType::Hash)
                    .build()
                    .unwrap(),
            )
            .billing_mode(BillingMode::PayPerRequest)
            .send(),
    )
    .unwrap();
    let mut run = Kill(
        with_credentials(&mut latlab())
            .args(["run", scenario, "--duration", "5m", "--quiet", "--yes"])
            .args(["--endpoint-url", &url])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let ours = loop {
        let ours: Vec<String> = tables()
            .into_iter()
            .filter(|t| t != "latlab-0a1b2c3d")
            .collect();
        if !ours.is_empty() {
            break ours[0].clone();
        }
        assert!(Instant::now() < deadline, "the run's table");
        std::thread::sleep(Duration::from_millis(200));
    };
    run.0.kill().unwrap();
    run.0.wait().unwrap();

    let (ok, text, err) = on(&["cleanup"]);
    assert!(ok, "{err}");
    assert!(text.contains(&ours), "{ours}:\n{text}");
    assert!(
        text.contains("table latlab-0a1b2c3d is named like latlab's but has no latlab:run-id tag"),
        "{text}"
    );
    assert_eq!(tables().len(), 2, "listing deletes nothing");
    let (ok, text, err) = on(&["cleanup", "--yes"]);
    assert!(ok, "{text}{err}");
    assert_eq!(tables(), ["latlab-0a1b2c3d"], "{text}");
    // Idempotent: nothing more to find.
    let (ok, text, err) = on(&["cleanup", "--yes"]);
    assert!(ok, "{text}{err}");
    assert!(!text.contains(&ours), "{text}");
}
