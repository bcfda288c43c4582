//! Helpers of the emulator's tests: an emulator on an ephemeral port, the real SDK clients for it
//! (plain HTTP to 127.0.0.1, as a user's client is pointed at `latlab emulate`), a raw HTTP client
//! for requests no SDK would send, and the property tests' settings.
#![allow(dead_code)]

use std::time::Duration;

use aws_credential_types::Credentials;
use aws_smithy_runtime_api::client::http::SharedHttpClient;
use aws_smithy_types::retry::RetryConfig;
use latlab_emulator::limits::Limits;
use latlab_emulator::profile::LatencyProfile;
use latlab_emulator::{Emulator, EmulatorConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The region every client signs for.
const REGION: &str = "us-east-1";

/// Made-up credentials: the emulator checks a request's signature's form, not its secret.
fn credentials() -> Credentials {
    Credentials::new(
        "EMULATORTESTS",
        "emulator-tests-secret",
        None,
        None,
        "emulator-tests",
    )
}

/// The SDK's own hyper client, with rustls on ring as latlab's (it speaks plain HTTP to an
/// `http://` endpoint such as the emulator's).
fn http_client() -> SharedHttpClient {
    use aws_smithy_http_client::tls::{Provider, rustls_provider::CryptoMode};
    aws_smithy_http_client::Builder::new()
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .build_https()
}

/// A Kinesis client for an emulator.
pub fn kinesis_client(url: &str, retry: RetryConfig) -> aws_sdk_kinesis::Client {
    let config = aws_sdk_kinesis::Config::builder()
        .behavior_version(aws_sdk_kinesis::config::BehaviorVersion::latest())
        .region(aws_sdk_kinesis::config::Region::new(REGION))
        .credentials_provider(credentials())
        .endpoint_url(url)
        .retry_config(retry)
        .http_client(http_client())
        .build();
    aws_sdk_kinesis::Client::from_conf(config)
}

/// An S3 client for an emulator (path-style; directory buckets use CreateSession as on AWS).
pub fn s3_client(url: &str, retry: RetryConfig) -> aws_sdk_s3::Client {
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
        .region(aws_sdk_s3::config::Region::new(REGION))
        .credentials_provider(credentials())
        .endpoint_url(url)
        .force_path_style(true)
        .retry_config(retry)
        .http_client(http_client())
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

/// An SQS client for an emulator, with the SDK's retries off so that every answer is seen as
/// the emulator gave it.
pub fn sqs_client(url: &str) -> aws_sdk_sqs::Client {
    let config = aws_sdk_sqs::Config::builder()
        .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
        .region(aws_sdk_sqs::config::Region::new(REGION))
        .credentials_provider(credentials())
        .endpoint_url(url)
        .retry_config(RetryConfig::disabled())
        .http_client(http_client())
        .build();
    aws_sdk_sqs::Client::from_conf(config)
}

/// An emulator on 127.0.0.1 with the `zero` profile and the given `--limit` overrides.
pub async fn emulator(limits: &[&str]) -> Emulator {
    emulator_with(limits, LatencyProfile::zero()).await
}

pub async fn emulator_with(limits: &[&str], profile: LatencyProfile) -> Emulator {
    let overrides: Vec<String> = limits.iter().map(|s| s.to_string()).collect();
    let config = EmulatorConfig {
        limits: Limits::load(None, &overrides).expect("valid limits"),
        profile,
        ..EmulatorConfig::default()
    };
    Emulator::start(config).await.expect("emulator starts")
}

/// A client that makes exactly one HTTP request per call (no SDK retries).
pub fn client_no_retry(emu: &Emulator) -> aws_sdk_kinesis::Client {
    kinesis_client(&emu.endpoint_url(), RetryConfig::disabled())
}

/// A client with the SDK's standard retries.
pub fn client(emu: &Emulator) -> aws_sdk_kinesis::Client {
    kinesis_client(&emu.endpoint_url(), RetryConfig::standard())
}

/// Creates a stream and waits until it is ACTIVE.
pub async fn create_stream(c: &aws_sdk_kinesis::Client, name: &str, shards: i32) {
    c.create_stream()
        .stream_name(name)
        .shard_count(shards)
        .send()
        .await
        .expect("create");
    for _ in 0..200 {
        let d = c
            .describe_stream_summary()
            .stream_name(name)
            .send()
            .await
            .expect("describe");
        if d.stream_description_summary()
            .unwrap()
            .stream_status()
            .as_str()
            == "ACTIVE"
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("stream {name} never became ACTIVE");
}

/// The error code of an SDK error (`ProvideErrorMetadata::code`).
pub fn code<E, R>(e: &aws_sdk_kinesis::error::SdkError<E, R>) -> String
where
    E: aws_sdk_kinesis::error::ProvideErrorMetadata,
{
    use aws_sdk_kinesis::error::ProvideErrorMetadata;
    e.code().unwrap_or("<no code>").to_string()
}

pub fn message<E, R>(e: &aws_sdk_kinesis::error::SdkError<E, R>) -> String
where
    E: aws_sdk_kinesis::error::ProvideErrorMetadata,
{
    use aws_sdk_kinesis::error::ProvideErrorMetadata;
    e.message().unwrap_or("<no message>").to_string()
}

/// Sends one raw HTTP/1.1 request and returns (status, body).
pub async fn raw(
    emu: &Emulator,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(emu.addr()).await.unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8_lossy(&out).to_string();
    let status = text[9..12].parse().unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// A raw Kinesis call: POST / with the target header.
pub async fn raw_kinesis(emu: &Emulator, target: &str, body: &str) -> (u16, serde_json::Value) {
    let (status, body) = raw(
        emu,
        "POST",
        "/",
        &[
            ("Content-Type", "application/x-amz-json-1.1"),
            ("X-Amz-Target", target),
        ],
        body.as_bytes(),
    )
    .await;
    (
        status,
        serde_json::from_str(&body).unwrap_or(serde_json::Value::String(body)),
    )
}

/// Registers an enhanced fan-out consumer and waits until it is ACTIVE; returns its ARN.
pub async fn register_active(c: &aws_sdk_kinesis::Client, stream_arn: &str, name: &str) -> String {
    let arn = c
        .register_stream_consumer()
        .stream_arn(stream_arn)
        .consumer_name(name)
        .send()
        .await
        .unwrap()
        .consumer
        .unwrap()
        .consumer_arn;
    for _ in 0..200 {
        let d = c
            .describe_stream_consumer()
            .consumer_arn(&arn)
            .send()
            .await
            .unwrap();
        if d.consumer_description().unwrap().consumer_status().as_str() == "ACTIVE" {
            return arn;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("consumer never became ACTIVE");
}

/// A SubscribeToShard starting position.
pub fn starting(
    kind: aws_sdk_kinesis::types::ShardIteratorType,
    seq: Option<String>,
) -> aws_sdk_kinesis::types::StartingPosition {
    aws_sdk_kinesis::types::StartingPosition::builder()
        .r#type(kind)
        .set_sequence_number(seq)
        .build()
        .unwrap()
}

/// Asserts an SDK error's code, and that its message says `says`.
pub fn assert_error<E, R>(e: &aws_sdk_kinesis::error::SdkError<E, R>, want: &str, says: &str)
where
    E: aws_sdk_kinesis::error::ProvideErrorMetadata,
{
    assert_eq!(code(e), want, "{}", message(e));
    assert!(message(e).contains(says), "{want}: {}", message(e));
}

/// The property tests' settings: 512 cases each in CI; `LATLAB_PROPTEST_CASES=100000` for a long
/// run. No failure files: a failure is printed with its minimal input.
pub fn proptest_config() -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases: std::env::var("LATLAB_PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(512),
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}

/// A private certificate authority and a server certificate it signed, made with `openssl` in
/// `dir`: `ca.pem` (the authority), `server.pem` and `server.key` (for `names`, DNS names or IP
/// addresses). A missing `openssl` fails the test with a clear message.
pub fn test_ca(dir: &std::path::Path, names: &[&str]) {
    let run = |args: &[&str]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap_or_else(|e| {
                panic!("`openssl` makes this test's certificates and could not be run: {e}; install openssl")
            });
        assert!(
            out.status.success(),
            "openssl {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=latlab test authority",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    run(&ca);
    let mut req = vec!["req"];
    req.extend(ec);
    req.extend([
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=latlab emulator",
    ]);
    run(&req);
    let sans: Vec<String> = names
        .iter()
        .map(|n| match n.parse::<std::net::IpAddr>() {
            Ok(_) => format!("IP:{n}"),
            Err(_) => format!("DNS:{n}"),
        })
        .collect();
    std::fs::write(
        dir.join("server.ext"),
        format!(
            "subjectAltName={}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
            sans.join(",")
        ),
    )
    .unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "server.ext",
    ]);
}

/// A resolver that answers every name with 127.0.0.1, as a resolver inside a test's own network
/// would: for clients that address AWS's host names (a bucket in the host) at a local emulator.
#[derive(Clone, Debug, Default)]
pub struct Loopback {
    /// Every name asked, in order.
    pub asked: std::sync::Arc<parking_lot::Mutex<Vec<String>>>,
}

impl aws_smithy_runtime_api::client::dns::ResolveDns for Loopback {
    fn resolve_dns<'a>(
        &'a self,
        name: &'a str,
    ) -> aws_smithy_runtime_api::client::dns::DnsFuture<'a> {
        self.asked.lock().push(name.to_string());
        aws_smithy_runtime_api::client::dns::DnsFuture::ready(Ok(vec![std::net::IpAddr::from([
            127, 0, 0, 1,
        ])]))
    }
}

/// The SDK's hyper client trusting only `ca_pem`, resolving every name through `dns`.
pub fn tls_client(ca_pem: &[u8], dns: Loopback) -> SharedHttpClient {
    use aws_smithy_http_client::tls::{
        Provider, TlsContext, TrustStore, rustls_provider::CryptoMode,
    };
    let trust = TrustStore::empty().with_pem_certificate(ca_pem.to_vec());
    aws_smithy_http_client::Builder::new()
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .tls_context(
            TlsContext::builder()
                .with_trust_store(trust)
                .build()
                .unwrap(),
        )
        .build_with_resolver(dns)
}

/// An S3 client that addresses buckets as AWS's SDK does by default: in the host
/// (`BUCKET.s3.us-east-1.amazonaws.com`), not the path.
pub fn s3_virtual_hosted(url: &str, http: SharedHttpClient) -> aws_sdk_s3::Client {
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
        .region(aws_sdk_s3::config::Region::new(REGION))
        .credentials_provider(credentials())
        .endpoint_url(url)
        .retry_config(RetryConfig::disabled())
        .http_client(http)
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

/// A Kinesis client over `http`.
pub fn kinesis_over(url: &str, http: SharedHttpClient) -> aws_sdk_kinesis::Client {
    let config = aws_sdk_kinesis::Config::builder()
        .behavior_version(aws_sdk_kinesis::config::BehaviorVersion::latest())
        .region(aws_sdk_kinesis::config::Region::new(REGION))
        .credentials_provider(credentials())
        .endpoint_url(url)
        .retry_config(RetryConfig::disabled())
        .http_client(http)
        .build();
    aws_sdk_kinesis::Client::from_conf(config)
}

/// An emulator on 127.0.0.1 serving TLS with `dir`'s `server.pem` and `server.key`.
pub async fn tls_emulator(dir: &std::path::Path) -> Emulator {
    let tls = latlab_core::http::tls::server_tls(&dir.join("server.pem"), &dir.join("server.key"))
        .expect("the test's certificate");
    Emulator::start(EmulatorConfig {
        tls: Some(tls),
        ..EmulatorConfig::default()
    })
    .await
    .expect("emulator starts")
}

/// A DynamoDB client for an emulator, with the SDK's retries off so that every answer is seen as
/// the emulator gave it.
pub fn dynamodb_client(url: &str) -> aws_sdk_dynamodb::Client {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .region(aws_sdk_dynamodb::config::Region::new(REGION))
        .credentials_provider(credentials())
        .endpoint_url(url)
        .retry_config(RetryConfig::disabled())
        .http_client(http_client())
        .build();
    aws_sdk_dynamodb::Client::from_conf(config)
}

/// The emulator's stats document (`GET /_latlab/stats`).
pub async fn raw_stats(emu: &Emulator) -> serde_json::Value {
    let (status, body) = raw(emu, "GET", latlab_emulator::STATS_PATH, &[], b"").await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("the stats document is JSON")
}
