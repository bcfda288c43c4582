//! Calibrating `latlab emulate --latency-profile FILE` recovers each median of the file.

use crate::common::{Kill, emulate, latlab, output, with_credentials};
use latlab_core::shaping::dist::Dist;
use latlab_emulator::profile::LatencyProfile;

/// A profile no built-in resembles: every delay several to tens of milliseconds. What the test
/// can hold calibrate to is set by two things, both measured:
/// - The client's and the emulator's own time. A call to this emulator at a fixed delay came
///   back 1.1-1.4 ms over it (`latlab calibrate` of S3, SQS and DynamoDB set at fixed 20-30 ms,
///   debug build, 2026-12-06), against 0.2-0.5 ms at the zero profile: a call after an idle
///   wait costs more than one in a busy loop, for a reason not verified. So single calls are set
///   at 22 ms or more, where 1.4 ms is under 7%.
/// - The median's sampling error, which grows with the spread. With 100 samples and this file's
///   spreads (floor about 0.55 of the median, p99 about 1.8 times it) it is about 2.5% (a
///   simulation of these shifted log-normals); with the p99 at 2-3 times the median, as this test
///   first had, it was 3.5-6%, and a run with 50 samples of a GET missed by 18% (CI, 2026-12-06).
///   A delay seen only as "there yet or not" rests on fewer, coarser probes: DynamoDB's stream
///   visibility, from about 110 probes, came back 0.89 and 0.93 in two runs with floor 20, median
///   60 and p99 150, where a simulation of its fit gives a spread of about 10%; at floor 35 and
///   p99 110, about 4.5%.
///
/// Read visibility is set moderately skewed (p99 1.75 times as far above the median as the floor
/// is below). Set more skewed (floor 15, median 45, p99 100) it had come back 0.78, 0.98 and
/// 0.86 of its median, and the moderate one here 0.88-1.03 (mean 0.96, eight runs). Two causes
/// were found.
/// The second pass of probes was centred by the delay asked for rather than the x it lands at:
/// a Kinesis look lands about 30 ms before its delay (the put's leg and commit come first), so
/// the pass sat 30 ms below the median (`lab_kit::calibrate::status`'s test). And the fit took
/// each read as reaching the service at the leg's median (`lab_kit::calibrate::fit`'s blur).
/// With both fixed the skewed profile came back 0.975, 1.035 and 0.993 (2026-12-06, three runs
/// of `latlab calibrate --services kinesis`); it is kept moderate here because a wider spread is
/// a wider sampling error (about 6% against 4.5%).
///
/// The two Kinesis legs are equal (calibrate splits a round trip evenly, and says so) and each
/// at a median of 15 ms: a leg gets half of a round trip's extra client time, and at 12 ms the
/// legs read 1.04-1.14 of their median in eight runs (mean 1.08, 2026-12-06). And each
/// S3 connection's rate is the same both ways (calibrate takes the upload at the download's
/// rate, and says so).
const MADE_UP: &str = r#"
name = "made-up"
[kinesis]
request = { min_ms = 9, median_ms = 15, p99_ms = 27 }
response = { min_ms = 9, median_ms = 15, p99_ms = 27 }
put_commit = { min_ms = 16, median_ms = 30, p99_ms = 56 }
read_visibility = { min_ms = 25, median_ms = 45, p99_ms = 80 }
efo_push = { min_ms = 20, median_ms = 50, p99_ms = 110 }
[s3]
create_session = { min_ms = 14, median_ms = 24, p99_ms = 44 }
[s3.standard]
put_first_byte = { min_ms = 18, median_ms = 32, p99_ms = 60 }
get_first_byte = { min_ms = 15, median_ms = 26, p99_ms = 48 }
put_first_byte_per_mib_ms = 25
get_first_byte_per_mib_ms = 10
connection_upload_mb_s = 60
connection_download_mb_s = 60
[s3.express]
put_first_byte = { min_ms = 14, median_ms = 24, p99_ms = 44 }
get_first_byte = { min_ms = 13, median_ms = 22, p99_ms = 40 }
put_first_byte_per_mib_ms = 20
get_first_byte_per_mib_ms = 5
connection_upload_mb_s = 120
connection_download_mb_s = 120
[sqs]
send = { min_ms = 14, median_ms = 26, p99_ms = 48 }
receive = { min_ms = 13, median_ms = 24, p99_ms = 44 }
delete = { min_ms = 13, median_ms = 22, p99_ms = 40 }
other = { min_ms = 13, median_ms = 22, p99_ms = 40 }
[dynamodb]
read = { min_ms = 13, median_ms = 22, p99_ms = 40 }
write = { min_ms = 14, median_ms = 24, p99_ms = 44 }
other = { min_ms = 14, median_ms = 26, p99_ms = 48 }
stream_visibility = { min_ms = 35, median_ms = 60, p99_ms = 110 }
"#;

const STANDARD: &str = "calibrate-standard";
const EXPRESS: &str = "calibrate--use1-az4--x-s3";

fn median(d: &Dist) -> f64 {
    match *d {
        Dist::Fixed(ms) => ms,
        Dist::LogNormal { median, .. } => median,
    }
}

/// Every figure a calibration writes, by name: a delay's median, a slope, a rate (MB/s).
fn figures(p: &LatencyProfile) -> Vec<(String, f64)> {
    let mut out = vec![
        ("kinesis.request".to_string(), median(&p.kinesis.request)),
        ("kinesis.response".into(), median(&p.kinesis.response)),
        ("kinesis.put_commit".into(), median(&p.kinesis.put_commit)),
        (
            "kinesis.read_visibility".into(),
            median(&p.kinesis.read_visibility),
        ),
        ("kinesis.efo_push".into(), median(&p.kinesis.efo_push)),
        ("s3.create_session".into(), median(&p.s3.create_session)),
    ];
    for (name, c) in [("standard", &p.s3.standard), ("express", &p.s3.express)] {
        out.extend([
            (
                format!("s3.{name}.put_first_byte"),
                median(&c.put_first_byte),
            ),
            (
                format!("s3.{name}.get_first_byte"),
                median(&c.get_first_byte),
            ),
            (
                format!("s3.{name}.put_first_byte_per_mib_ms"),
                c.put_first_byte_per_mib_ms,
            ),
            (
                format!("s3.{name}.get_first_byte_per_mib_ms"),
                c.get_first_byte_per_mib_ms,
            ),
            (
                format!("s3.{name}.connection_upload_mb_s"),
                c.connection_upload / 1e6,
            ),
            (
                format!("s3.{name}.connection_download_mb_s"),
                c.connection_download / 1e6,
            ),
        ]);
    }
    out.extend([
        ("sqs.send".to_string(), median(&p.sqs.send)),
        ("sqs.receive".into(), median(&p.sqs.receive)),
        ("sqs.delete".into(), median(&p.sqs.delete)),
        ("sqs.other".into(), median(&p.sqs.other)),
        ("dynamodb.read".into(), median(&p.dynamodb.read)),
        ("dynamodb.write".into(), median(&p.dynamodb.write)),
        ("dynamodb.other".into(), median(&p.dynamodb.other)),
        (
            "dynamodb.stream_visibility".into(),
            median(&p.dynamodb.stream_visibility),
        ),
    ]);
    out
}

/// `latlab emulate` with a profile, its two S3 buckets made (a Standard bucket and a directory
/// bucket, as a user names them for the S3 lab), and `latlab calibrate` of it; the profile it
/// wrote and what it printed.
fn calibrate_emulator(profile: &str, samples: &str) -> (LatencyProfile, String, String) {
    let _alone = crate::alone();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("set.toml");
    std::fs::write(&file, profile).unwrap();
    let (_emulator, url): (Kill, String) = emulate(&["--latency-profile", file.to_str().unwrap()]);
    make_buckets(&url);
    let out_file = dir.path().join("measured.toml");
    let (ok, out, err) = output(
        with_credentials(&mut latlab())
            .args(["calibrate", "--endpoint-url", &url, "--samples", samples])
            .args(["--s3-bucket", STANDARD, "--s3-express-bucket", EXPRESS])
            .args(["--output", out_file.to_str().unwrap()]),
    );
    assert!(ok, "calibrate failed:\n{out}\n{err}");
    let text = std::fs::read_to_string(&out_file).unwrap();
    let measured = LatencyProfile::from_toml(&text).unwrap_or_else(|e| panic!("{e:#}\n{text}"));
    (measured, out, err)
}

fn make_buckets(url: &str) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let s3 = latlab::aws::emulator_s3_client(
            url,
            aws_sdk_s3::config::retry::RetryConfig::standard(),
        );
        s3.create_bucket().bucket(STANDARD).send().await.unwrap();
        use aws_sdk_s3::types::*;
        s3.create_bucket()
            .bucket(EXPRESS)
            .create_bucket_configuration(
                CreateBucketConfiguration::builder()
                    .location(
                        LocationInfo::builder()
                            .r#type(LocationType::AvailabilityZone)
                            .name("use1-az4")
                            .build(),
                    )
                    .bucket(
                        BucketInfo::builder()
                            .r#type(BucketType::Directory)
                            .data_redundancy(DataRedundancy::SingleAvailabilityZone)
                            .build(),
                    )
                    .build(),
            )
            .send()
            .await
            .unwrap();
    });
}

#[test]
fn calibrating_latlab_emulate_recovers_each_median_of_a_made_up_profile() {
    let set = LatencyProfile::from_toml(MADE_UP).unwrap();
    let (measured, out, err) = calibrate_emulator(MADE_UP, "100");
    assert!(out.contains("wrote "), "{out}");
    // Every service with a probe but Redis, which on another endpoint needs a pair named.
    assert!(
        err.contains("not calibrating redis: calibrating Redis on another endpoint or AWS measures a pair you name"),
        "{err}"
    );
    let want = figures(&set);
    let got = figures(&measured);
    let mut table =
        String::from("parameter                                  set   recovered   ratio\n");
    let mut off = Vec::new();
    for ((name, a), (_, b)) in want.iter().zip(&got) {
        let ratio = b / a;
        table.push_str(&format!("{name:<38} {a:>8.2} {b:>11.2} {ratio:>7.3}\n"));
        if !(0.85..=1.15).contains(&ratio) {
            off.push(name.clone());
        }
    }
    eprintln!("{table}");
    assert!(off.is_empty(), "outside ±15%: {off:?}\n{table}");
    // Every parameter it set says how it was measured: the target, the date, the samples.
    for p in measured.params() {
        if p.provenance.source.name() == "measurement"
            && p.provenance.note.contains("latlab calibrate")
        {
            assert!(
                p.provenance.note.contains("measured on http://127.0.0.1:"),
                "{}",
                p.provenance.note
            );
            assert!(
                p.provenance.note.contains(" samples"),
                "{}",
                p.provenance.note
            );
        }
    }
    let legs = measured
        .params()
        .into_iter()
        .find(|p| p.name == "kinesis.request")
        .unwrap();
    assert!(
        legs.provenance.note.contains("split evenly"),
        "{}",
        legs.provenance.note
    );
    assert_eq!(legs.provenance.source.name(), "measurement");
    // Each first byte has the samples asked for (the larger sizes, which only place the growth
    // line, half as many), and the plan counted them.
    for class in ["standard", "express"] {
        let get = measured
            .params()
            .into_iter()
            .find(|p| p.name == format!("s3.{class}.get_first_byte"))
            .unwrap();
        assert!(
            get.provenance
                .note
                .contains("quantiles of 100 GETs of a 1 KiB object"),
            "{}",
            get.provenance.note
        );
    }
    assert!(err.contains("250 PUT and 250 GET requests"), "{err}");
}

#[test]
fn the_zero_profile_calibrates_to_delays_under_a_millisecond() {
    let zero = "name = \"zero-file\"\n";
    let (measured, _, err) = calibrate_emulator(zero, "20");
    let mut table = String::new();
    let mut over = Vec::new();
    for (name, v) in figures(&measured) {
        if name.ends_with("_mb_s") {
            continue;
        }
        table.push_str(&format!("{name:<38} {v:>8.3}\n"));
        // A delay under 1 ms; a growth by size (ms per MiB: the emulator's own checksums of a
        // PUT's body) under 3.
        let limit = if name.ends_with("_per_mib_ms") {
            3.0
        } else {
            1.0
        };
        if v >= limit {
            over.push(format!("{name} {v:.3}"));
        }
    }
    eprintln!("{table}");
    assert!(
        over.is_empty(),
        "1 ms or more with nothing added: {over:?}\n{table}\n{err}"
    );
    // The clock bound is printed: each arrival lies between its send and its answer.
    assert!(
        err.contains("the client's clock offset from the service's is between"),
        "{err}"
    );
}
