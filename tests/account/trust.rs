//! Trust as users have it: `latlab emulate --tls-cert/--tls-key` serves HTTPS with a certificate
//! of the test's own authority, and latlab reaches it only when that authority is trusted the way
//! the AWS CLI takes one (`AWS_CA_BUNDLE`, or `ca_bundle` in the profile); otherwise every failure
//! is one line that names `AWS_CA_BUNDLE`. boto3 reaches it by name, the bucket in the host.

use crate::common::{self, emulate, latlab, output, with_credentials};

const BUCKET: &str = "trust-standard";
const EXPRESS: &str = "trust--use1-az4--x-s3";

struct Tls {
    dir: tempfile::TempDir,
}

impl Tls {
    fn new() -> Tls {
        let dir = tempfile::tempdir().unwrap();
        common::test_ca(
            dir.path(),
            &[
                "127.0.0.1",
                "s3.us-east-1.amazonaws.com",
                "*.s3.us-east-1.amazonaws.com",
            ],
        );
        Tls { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }
}

/// `latlab emulate` over TLS, with the two buckets made (through a client that trusts the
/// test's authority).
fn tls_endpoint(tls: &Tls) -> (common::Kill, String) {
    let (kill, url) = emulate(&[
        "--tls-cert",
        &tls.path("server.pem"),
        "--tls-key",
        &tls.path("server.key"),
    ]);
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let ca = std::fs::read(tls.path("ca.pem")).unwrap();
    let s3 = common::s3_virtual_hosted(&url, common::tls_client(&ca, common::Loopback::default()));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        s3.create_bucket().bucket(BUCKET).send().await.unwrap();
        s3.create_bucket()
            .bucket(EXPRESS)
            .create_bucket_configuration(
                aws_sdk_s3::types::CreateBucketConfiguration::builder()
                    .location(
                        aws_sdk_s3::types::LocationInfo::builder()
                            .r#type(aws_sdk_s3::types::LocationType::AvailabilityZone)
                            .name("use1-az4")
                            .build(),
                    )
                    .bucket(
                        aws_sdk_s3::types::BucketInfo::builder()
                            .data_redundancy(
                                aws_sdk_s3::types::DataRedundancy::SingleAvailabilityZone,
                            )
                            .r#type(aws_sdk_s3::types::BucketType::Directory)
                            .build(),
                    )
                    .build(),
            )
            .send()
            .await
            .unwrap();
    });
    (kill, url)
}

/// `latlab run s3-demo` for 2 s on `url` with `env` set.
fn s3_run(url: &str, env: &[(&str, &str)]) -> (bool, String, String) {
    let mut c = latlab();
    with_credentials(&mut c).env_remove("AWS_CA_BUNDLE");
    for (k, v) in env {
        c.env(k, v);
    }
    output(c.args([
        "run",
        "s3-demo",
        "--duration",
        "2s",
        "--quiet",
        "--endpoint-url",
        url,
        "--s3-bucket",
        BUCKET,
        "--s3-express-bucket",
        EXPRESS,
    ]))
}

#[test]
fn an_endpoint_signed_by_an_authority_in_aws_ca_bundle_is_measured_and_without_it_refused_in_one_line()
 {
    let tls = Tls::new();
    let (_emu, url) = tls_endpoint(&tls);

    // Not trusted: one line, naming AWS_CA_BUNDLE.
    let (ok, out, err) = s3_run(&url, &[]);
    assert!(!ok, "{out}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    println!("untrusted: {}", lines.join(" | "));
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("invalid peer certificate") && lines[0].contains("AWS_CA_BUNDLE"),
        "{err}"
    );

    // AWS_CA_BUNDLE names the authority: measured.
    let ca = tls.path("ca.pem");
    let (ok, out, err) = s3_run(&url, &[("AWS_CA_BUNDLE", &ca)]);
    assert!(ok, "{err}");
    assert!(out.contains("S3") && out.contains("PUT"), "{out}");
    assert!(!out.contains("\n  errors"), "{out}");

    // A profile's ca_bundle, as the AWS CLI reads it.
    let config = tls.path("aws-config");
    std::fs::write(&config, format!("[default]\nca_bundle = {ca}\n")).unwrap();
    let (ok, _, err) = s3_run(&url, &[("AWS_CONFIG_FILE", &config)]);
    assert!(ok, "{err}");
    let mut c = latlab();
    with_credentials(&mut c)
        .env_remove("AWS_CA_BUNDLE")
        .env("AWS_CONFIG_FILE", &config);
    let (_, doctor, _) = output(c.args(["doctor", "--endpoint-url", &url]));
    println!("{doctor}");
    assert!(
        doctor.contains(&format!("ca_bundle = {ca} (profile default)")),
        "{doctor}"
    );

    // A bundle that cannot be read, or holds no certificate: one line naming it.
    for (bundle, says) in [
        ("/nonexistent/ca.pem".to_string(), "cannot read it"),
        (tls.path("server.key"), "no PEM certificate in it"),
    ] {
        let (ok, _, err) = s3_run(&url, &[("AWS_CA_BUNDLE", &bundle)]);
        assert!(!ok);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("AWS_CA_BUNDLE={bundle}")) && err.contains(says),
            "{err}"
        );
    }
}

#[test]
fn boto3_addresses_buckets_in_the_host_over_tls() {
    common::require_boto3();
    let tls = Tls::new();
    let (_emu, url) = emulate(&[
        "--tls-cert",
        &tls.path("server.pem"),
        "--tls-key",
        &tls.path("server.key"),
    ]);
    let port = url.rsplit(':').next().unwrap().to_string();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/boto3_s3_hosts.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .args([&port, &tls.path("ca.pem")])
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("names: boto3-hosted.s3.us-east-1.amazonaws.com"),
        "{stdout}"
    );
}
