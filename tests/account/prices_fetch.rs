//! `latlab prices fetch` against a local server that serves small offer files in the Price
//! List's form, made here: the prices found (and counted verified, and used with --prices), a
//! missing SKU named with its filter, an interrupted download and an unknown region that write
//! nothing, and an offer file of hundreds of MB parsed with flat memory.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};

use common::latlab;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Whole,
    /// Kinesis's offer lacks the enhanced fan-out retrieval product.
    Missing,
    /// S3's offer file stops halfway through its declared length.
    Cut,
    /// S3's offer file has this many MB of other products before latlab's.
    Large(usize),
}

fn product(sku: &str, family: &str, attrs: &[(&str, &str)]) -> String {
    let a: Vec<String> = attrs.iter().map(|(k, v)| format!("{k:?}: {v:?}")).collect();
    format!(
        r#""{sku}": {{"sku": "{sku}", "productFamily": "{family}", "attributes": {{"regionCode": "us-east-1", {}}}}}"#,
        a.join(", ")
    )
}

fn term(sku: &str, usd: &str, unit: &str) -> String {
    format!(
        r#""{sku}": {{"{sku}.JRTCKXETXF": {{"offerTermCode": "JRTCKXETXF", "sku": "{sku}", "effectiveDate": "2026-11-01T00:00:00Z", "priceDimensions": {{"{sku}.JRTCKXETXF.6YS6EN2CT7": {{"rateCode": "{sku}.JRTCKXETXF.6YS6EN2CT7", "description": "{unit} for {sku}", "beginRange": "0", "endRange": "Inf", "unit": "{unit}", "pricePerUnit": {{"USD": "{usd}"}}, "appliesTo": []}}}}}}}}"#
    )
}

type Row<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>, &'a str, &'a str);

fn offer_head(code: &str) -> String {
    format!(
        r#"{{"formatVersion": "v1.0", "disclaimer": "test", "offerCode": "{code}", "version": "20261120000000", "publicationDate": "2026-11-20T00:00:00Z", "products": {{"#
    )
}

fn offer_tail(rows: &[Row]) -> String {
    let terms: Vec<String> = rows.iter().map(|r| term(r.0, r.3, r.4)).collect();
    format!(
        r#"}}, "terms": {{"OnDemand": {{{}}}, "Reserved": {{}}}}}}"#,
        terms.join(", ")
    )
}

fn products(rows: &[Row]) -> String {
    rows.iter()
        .map(|r| product(r.0, r.1, &r.2))
        .collect::<Vec<_>>()
        .join(", ")
}

fn kinesis(mode: Mode) -> Vec<Row<'static>> {
    let mut rows: Vec<Row> = vec![
        (
            "K1",
            "Kinesis Streams",
            vec![
                ("usagetype", "Storage-ShardHour"),
                ("operation", "shardHourStorage"),
            ],
            "0.0150000000",
            "ShardHour",
        ),
        (
            "K2",
            "Kinesis Streams",
            vec![
                ("usagetype", "PutRequestPayloadUnits"),
                ("operation", "PutRequest"),
            ],
            "0.0000000140",
            "PutRequest",
        ),
        (
            "K3",
            "Kinesis Streams",
            vec![
                ("usagetype", "EnhancedFanoutHour"),
                ("operation", "ConsumerHour"),
            ],
            "0.0150000000",
            "ConsumerShardHour",
        ),
        // The retention's reads: a ReadBytes usage type that is not enhanced fan-out's.
        (
            "K5",
            "Kinesis Streams",
            vec![
                ("usagetype", "LongTermRetention-ReadBytes"),
                ("operation", "LongTermRetrieval"),
            ],
            "0.0230000000",
            "GB",
        ),
    ];
    if mode != Mode::Missing {
        rows.push((
            "K4",
            "Kinesis Streams",
            vec![
                ("usagetype", "ReadBytes"),
                ("operation", "EnhancedFanoutDataRetrieval"),
            ],
            "0.0130000000",
            "GB",
        ));
    }
    rows
}

fn s3() -> Vec<Row<'static>> {
    vec![
        (
            "S1",
            "API Request",
            vec![("usagetype", "Requests-Tier1"), ("group", "S3-API-Tier1")],
            "0.0000050000",
            "Requests",
        ),
        (
            "S2",
            "API Request",
            vec![("usagetype", "Requests-Tier2"), ("group", "S3-API-Tier2")],
            "0.0000004000",
            "Requests",
        ),
        (
            "S3",
            "Storage",
            vec![
                ("usagetype", "TimedStorage-ByteHrs"),
                ("volumeType", "Standard"),
            ],
            "0.0230000000",
            "GB-Mo",
        ),
        (
            "S4",
            "Storage",
            vec![
                ("usagetype", "TimedStorage-ByteHrs"),
                ("volumeType", "INTAAS3ObjectOverhead"),
            ],
            "0.0125000000",
            "GB-Mo",
        ),
        (
            "X1",
            "API Request",
            vec![("usagetype", "USE1-Requests-XZ-Tier1")],
            "0.0000011300",
            "Requests",
        ),
        (
            "X2",
            "API Request",
            vec![("usagetype", "USE1-Requests-XZ-Tier2")],
            "0.0000000300",
            "Requests",
        ),
        (
            "X3",
            "Storage",
            vec![("usagetype", "USE1-TimedStorage-XZ-ByteHrs")],
            "0.1100000000",
            "GB-Mo",
        ),
        (
            "X4",
            "Data Transfer",
            vec![("usagetype", "USE1-Upload-XZ")],
            "0.0032000000",
            "GB",
        ),
        (
            "X5",
            "Data Transfer",
            vec![("usagetype", "USE1-Retrieval-XZ")],
            "0.0006000000",
            "GB",
        ),
    ]
}

/// SQS's request products as us-east-1's offer file has them, with the two it must not pick: a
/// fair queue's requests and the monthly free tier (a product of its own).
fn sqs() -> Vec<Row<'static>> {
    let request = |sku, usage, queue, usd| -> Row {
        (
            sku,
            "API Request",
            vec![
                ("usagetype", usage),
                ("group", "SQS-APIRequest-Tier1"),
                ("queueType", queue),
            ],
            usd,
            "Requests",
        )
    };
    vec![
        request("Q1", "Requests-RBP", "Standard", "0.0000004000"),
        request(
            "Q2",
            "Requests-FIFO-RBP",
            "FIFO (first-in, first-out)",
            "0.0000005000",
        ),
        request("Q3", "Requests-Fair-RBP", "Fair", "0.0000001000"),
        request("Q4", "Global-Requests", "Any", "0.0000000000"),
    ]
}

fn elasticache() -> Vec<Row<'static>> {
    let node = |sku, t, usd, usage| -> Row {
        (
            sku,
            "Cache Instance",
            vec![
                ("instanceType", t),
                ("cacheEngine", "Redis"),
                ("usagetype", usage),
            ],
            usd,
            "Hrs",
        )
    };
    vec![
        node(
            "E1",
            "cache.t3.micro",
            "0.0170000000",
            "NodeUsage:cache.t3.micro",
        ),
        node(
            "E2",
            "cache.t3.small",
            "0.0340000000",
            "NodeUsage:cache.t3.small",
        ),
        node(
            "E3",
            "cache.t3.medium",
            "0.0680000000",
            "NodeUsage:cache.t3.medium",
        ),
        node(
            "E4",
            "cache.r7g.large",
            "0.2190000000",
            "NodeUsage:cache.r7g.large",
        ),
        // Extended support: another price for the same node type, not the one latlab wants.
        node(
            "E5",
            "cache.t3.micro",
            "0.9990000000",
            "ExtendedSupport:NodeUsage:cache.t3.micro",
        ),
    ]
}

/// DynamoDB's products: the Standard table class's, and the Standard-IA class's with the same
/// usage type endings (`IA-WriteCapacityUnit-Hrs`), which the `group` attribute tells apart.
fn dynamodb() -> Vec<Row<'static>> {
    vec![
        (
            "D1",
            "Provisioned IOPS",
            vec![
                ("usagetype", "WriteCapacityUnit-Hrs"),
                ("group", "DDB-WriteUnits"),
            ],
            "0.0006500000",
            "WriteCapacityUnit-Hrs",
        ),
        (
            "D2",
            "Provisioned IOPS",
            vec![
                ("usagetype", "ReadCapacityUnit-Hrs"),
                ("group", "DDB-ReadUnits"),
            ],
            "0.0001300000",
            "ReadCapacityUnit-Hrs",
        ),
        (
            "D3",
            "Amazon DynamoDB PayPerRequest Throughput",
            vec![
                ("usagetype", "WriteRequestUnits"),
                ("group", "DDB-WriteUnits"),
            ],
            "0.0000006250",
            "WriteRequestUnits",
        ),
        (
            "D4",
            "Amazon DynamoDB PayPerRequest Throughput",
            vec![
                ("usagetype", "ReadRequestUnits"),
                ("group", "DDB-ReadUnits"),
            ],
            "0.0000001250",
            "ReadRequestUnits",
        ),
        (
            "D5",
            "API Request",
            vec![
                ("usagetype", "USE1-Streams-Requests"),
                ("group", "DDB-StreamsReadRequests"),
            ],
            "0.0000002000",
            "Count",
        ),
        (
            "D6",
            "Amazon DynamoDB Change Data Capture",
            vec![
                ("usagetype", "ChangeDataCaptureUnits-Kinesis"),
                ("group", "DDB-Kinesis"),
            ],
            "0.0000001000",
            "CDC Units",
        ),
        // Standard-IA: another price for the same usage type ending, not the one latlab wants.
        (
            "D7",
            "Provisioned IOPS",
            vec![
                ("usagetype", "IA-WriteCapacityUnit-Hrs"),
                ("group", "DDB-WriteUnitsIA"),
            ],
            "0.0008100000",
            "WriteCapacityUnit-Hrs",
        ),
    ]
}

/// Serves the region indexes and offer files until the test ends.
fn serve(mode: Mode) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            std::thread::spawn(move || answer(conn, mode, addr.to_string()));
        }
    });
    format!("http://{addr}")
}

fn answer(mut conn: TcpStream, mode: Mode, _host: String) {
    let mut line = String::new();
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    if reader.read_line(&mut line).is_err() {
        return;
    }
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).is_err() || h == "\r\n" || h.is_empty() {
            break;
        }
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let offer = path.split('/').nth(4).unwrap_or("").to_string();
    let ok = |conn: &mut TcpStream, len: Option<usize>| {
        let len = len.map_or(String::new(), |l| format!("content-length: {l}\r\n"));
        let _ = write!(
            conn,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{len}connection: close\r\n\r\n"
        );
    };
    if path.ends_with("/current/region_index.json") {
        let body = format!(
            r#"{{"formatVersion": "v1.0", "disclaimer": "test", "publicationDate": "2026-11-20T00:00:00Z", "regions": {{"us-east-1": {{"regionCode": "us-east-1", "currentVersionUrl": "/offers/v1.0/aws/{offer}/20261120000000/us-east-1/index.json"}}}}}}"#
        );
        ok(&mut conn, Some(body.len()));
        let _ = conn.write_all(body.as_bytes());
        return;
    }
    let rows = match offer.as_str() {
        "AmazonKinesis" => kinesis(mode),
        "AmazonS3" => s3(),
        "AmazonElastiCache" => elasticache(),
        "AWSQueueService" => sqs(),
        "AmazonDynamoDB" => dynamodb(),
        _ => {
            let _ = write!(conn, "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
            return;
        }
    };
    let (head, middle, tail) = (offer_head(&offer), products(&rows), offer_tail(&rows));
    match (mode, offer.as_str()) {
        (Mode::Cut, "AmazonS3") => {
            let body = format!("{head}{middle}{tail}");
            ok(&mut conn, Some(body.len()));
            let _ = conn.write_all(&body.as_bytes()[..body.len() / 2]);
            // The connection drops with half the declared length unsent.
        }
        (Mode::Large(mb), "AmazonS3") => {
            ok(&mut conn, None);
            let _ = conn.write_all(head.as_bytes());
            let filler = |i: usize| {
                product(
                    &format!("F{i:09}"),
                    "Storage",
                    &[
                        ("usagetype", "TimedStorage-GlacierByteHrs"),
                        ("volumeType", "Amazon Glacier"),
                        ("storageClass", "Archive"),
                        (
                            "description",
                            "a product latlab does not price, there to make the file large",
                        ),
                    ],
                ) + ", "
            };
            let one = filler(0).len();
            let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut conn);
            for i in 0..(mb << 20) / one {
                if w.write_all(filler(i).as_bytes()).is_err() {
                    return;
                }
            }
            let _ = w.write_all(middle.as_bytes());
            let _ = w.write_all(tail.as_bytes());
        }
        _ => {
            let body = format!("{head}{middle}{tail}");
            ok(&mut conn, Some(body.len()));
            let _ = conn.write_all(body.as_bytes());
        }
    }
}

/// `latlab prices fetch ARGS`, with its peak resident memory (sampled every 10 ms).
fn fetch(url: &str, args: &[&str]) -> (bool, String, u64) {
    use std::io::Read;
    // Reaped below by wait4, which std's wait cannot stand in for: it gives no rusage.
    #[allow(clippy::zombie_processes)]
    let mut child = latlab()
        .args(["prices", "fetch", "--price-list-url", url])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    // The kernel's own peak resident set of this child (ru_maxrss, kB on Linux), taken when it
    // is reaped: exact, where sampling /proc every few ms missed a short run's peak.
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is this test's own child, not reaped elsewhere; both pointers are to locals.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    (ok, reader.join().unwrap(), usage.ru_maxrss.max(0) as u64)
}

#[test]
fn the_prices_found_are_written_verified_with_their_sku_and_used() {
    let url = serve(Mode::Whole);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("us-east-1.toml");
    let (ok, err, _) = fetch(&url, &["-o", file.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(err.contains(&format!("wrote {}", file.display())), "{err}");
    let text = std::fs::read_to_string(&file).unwrap();
    for line in [
        "shard_hour = 0.015\n",
        "put_payload_units_per_million = 0.014\n",
        "efo_retrieval_per_gb = 0.013\n",
        "put_per_1000 = 0.005\n",
        "put_per_1000 = 0.00113\n",
        "\"cache.r7g.large\" = 0.219\n",
        "\"cache.t3.micro\" = 0.017\n",
        "[sqs]\n",
        "standard_requests_per_million = 0.4\n",
        "fifo_requests_per_million = 0.5\n",
        "[dynamodb]\n",
        "wcu_hour = 0.00065\n",
        "rcu_hour = 0.00013\n",
        "write_request_units_per_million = 0.625\n",
        "read_request_units_per_million = 0.125\n",
        "streams_read_requests_per_million = 0.2\n",
        "cdc_units_per_million = 0.1\n",
        "[sqs.fetched.fifo_requests_per_million]\nsource = \"AWS Price List API\"\noffer = \"AWSQueueService\"\nversion = \"20261120000000\"\npublication_date = \"2026-11-20T00:00:00Z\"\nsku = \"Q2\"\n",
        "[kinesis.fetched.efo_retrieval_per_gb]\nsource = \"AWS Price List API\"\noffer = \"AmazonKinesis\"\nversion = \"20261120000000\"\npublication_date = \"2026-11-20T00:00:00Z\"\nsku = \"K4\"\n",
        "[elasticache.fetched.\"cache.t3.micro\"]\nsource = \"AWS Price List API\"\noffer = \"AmazonElastiCache\"\nversion = \"20261120000000\"\npublication_date = \"2026-11-20T00:00:00Z\"\nsku = \"E1\"\n",
    ] {
        assert!(text.contains(line), "{line}\n---\n{text}");
    }
    // `latlab prices FILE` counts them verified, each with its offer and SKU.
    let (ok, listing, err) = common::latlab_output(&["prices", file.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(listing.contains("24 of 24 verified"), "{listing}");
    assert!(
        listing.contains("kinesis.shard_hour: AWS Price List API: AmazonKinesis offer 20261120000000 (published 2026-11-20T00:00:00Z), SKU K1"),
        "{listing}"
    );
    assert!(!listing.contains("unverified:"), "{listing}");
    // And --prices prices a plan with them, each price's provenance its SKU.
    let (ok, plan, err) =
        common::latlab_output(&["plan", "demo", "--prices", file.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(
        plan.contains("kinesis.shard_hour                         0.015        verified: AWS Price List API: AmazonKinesis offer 20261120000000"),
        "{plan}"
    );
    assert!(!plan.contains("some prices unverified"), "{plan}");
}

fn old_file(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let file = dir.path().join("prices.toml");
    std::fs::write(&file, "the old file\n").unwrap();
    file
}

#[test]
fn a_missing_sku_is_named_with_its_filter_and_nothing_is_written() {
    let url = serve(Mode::Missing);
    let dir = tempfile::tempdir().unwrap();
    let file = old_file(&dir);
    let (ok, err, _) = fetch(&url, &["-o", file.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("us-east-1: 1 price not found in AWS's price list, so nothing was written: kinesis.efo_retrieval_per_gb (no on-demand USD price of a product matching AmazonKinesis with usagetype ending 'ReadBytes', operation = 'EnhancedFanoutDataRetrieval')"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "the old file\n");
}

#[test]
fn an_interrupted_download_or_an_unknown_region_writes_nothing() {
    let url = serve(Mode::Cut);
    let dir = tempfile::tempdir().unwrap();
    let file = old_file(&dir);
    let (ok, err, _) = fetch(&url, &["-o", file.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("AmazonS3's offer file"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "the old file\n");
    let (ok, err, _) = fetch(
        &url,
        &["--region", "eu-nowhere-9", "-o", file.to_str().unwrap()],
    );
    assert!(!ok);
    assert!(
        err.contains("unknown region 'eu-nowhere-9': AmazonKinesis's price list has us-east-1"),
        "{err}"
    );
    let (ok, err, _) = fetch(&url, &["--region", "Mars", "-o", file.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("'Mars' is not a region name"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "the old file\n");
    let (ok, _, err) = common::latlab_output(&[
        "prices",
        "fetch",
        "--price-list-url",
        "ftp://x",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(err.contains("is not an http:// or https:// URL"), "{err}");
}

#[test]
fn a_large_offer_file_is_parsed_with_flat_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, err, small) = fetch(
        &serve(Mode::Whole),
        &["-o", dir.path().join("a.toml").to_str().unwrap()],
    );
    assert!(ok, "{err}");
    let (ok, err, large) = fetch(
        &serve(Mode::Large(256)),
        &["-o", dir.path().join("b.toml").to_str().unwrap()],
    );
    assert!(ok, "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.toml"))
            .unwrap()
            .lines()
            .filter(|l| l.contains(" = 0."))
            .count(),
        std::fs::read_to_string(dir.path().join("b.toml"))
            .unwrap()
            .lines()
            .filter(|l| l.contains(" = 0."))
            .count(),
    );
    println!("peak RSS: {small} kB with small offer files, {large} kB with a 256 MB S3 offer file");
    // 256 MB went through; what stayed resident grew by far less than a tenth of it.
    assert!(large < small + 24 * 1024, "{small} kB -> {large} kB");
}
