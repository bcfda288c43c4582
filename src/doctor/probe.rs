//! The endpoint's checks: the embedded emulator (started here, as the labs start it), a given
//! endpoint or real AWS; the credentials and region for it; whether it answers at all; then the
//! operations (`calls.rs` makes the calls, `ops.rs` reads their answers). The stream and buckets
//! given are the labs' own checks (`Lab::doctor`), with the endpoint this returns.
//!
//! Every call is made once, without retries and within a short timeout, with the clients
//! `crate::aws` makes for the labs.

use std::time::{Duration, Instant};

use aws_credential_types::provider::ProvideCredentials;

use super::calls::{Names, kinesis_probes, run_probes, s3_probes};
use super::ops::{CALL_TIMEOUT, Outcome, judge, ops_check};
use super::{Check, Checks, Part};
use crate::aws::{Clients, QuotaPartition, RetrySettings, Target};
use crate::emulator::limits::Limits;
use crate::emulator::profile::LatencyProfile;
use crate::emulator::{Emulator, EmulatorConfig};
use crate::labs::check::Endpoint;
use crate::run::TargetOptions;
use crate::services::Service;

/// How long the SDK may take to find credentials (a profile's SSO or instance metadata).
const CREDENTIALS_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the probes go, for the endpoint line.
enum Place {
    Embedded(std::net::SocketAddr),
    Url(String),
    Aws(String),
}

/// The endpoint's checks: credentials and region (for an endpoint or AWS), the endpoint, the
/// Kinesis and S3 operations, and the stream and buckets given.
pub(super) async fn target_checks(
    target: &TargetOptions,
    out: &mut Checks,
) -> anyhow::Result<Option<Probed>> {
    let external = target.endpoint_url.is_some() || target.aws;
    if !external {
        let emulator = Emulator::start(EmulatorConfig {
            limits: Limits::load(target.limits_file.as_deref(), &target.limit_overrides)?,
            profile: LatencyProfile::resolve(target.latency_profile.as_deref().unwrap_or("zero"))?,
            lacking: target.lacking.clone(),
            ..EmulatorConfig::default()
        })
        .await?;
        out.push(Check::ok(
            "credentials",
            format!(
                "not needed: the embedded emulator takes latlab's fixed test credentials and region {}",
                crate::aws::EMULATOR_REGION
            ),
        ));
        let clients = Clients::connect(
            &Target::Emulator {
                url: emulator.endpoint_url(),
            },
            Instant::now(),
        )
        .await?;
        let names = Names::new(
            crate::aws::EMULATOR_REGION,
            "000000000000",
            Some("use1-az4"),
        );
        let endpoint = probe(
            &clients,
            &names,
            Place::Embedded(emulator.addr()),
            target,
            out,
        )
        .await;
        return Ok(endpoint.map(|endpoint| Probed {
            endpoint,
            _emulator: Some(emulator),
        }));
    }
    let Some((region, account)) = credentials_and_region(target, out).await else {
        return Ok(None);
    };
    let aws_target = Target::Aws {
        endpoint_url: target.endpoint_url.clone(),
        region: target.region.clone(),
    };
    let clients = match Clients::connect(&aws_target, Instant::now()).await {
        Ok(c) => c,
        Err(e) => {
            out.push(Check::fail(
                "endpoint",
                format!("{e:#}"),
                "see the credentials and region lines",
                &Part::served(),
            ));
            return Ok(None);
        }
    };
    // A directory bucket's zone must be one of the region's on AWS: the given bucket's, if any.
    let zone = target
        .s3_express_bucket
        .as_deref()
        .and_then(|b| b.strip_suffix("--x-s3"))
        .and_then(|b| b.rsplit_once("--"))
        .map(|(_, z)| z.to_string())
        .or_else(|| target.endpoint_url.as_ref().map(|_| "use1-az4".to_string()));
    let names = Names::new(&region, &account, zone.as_deref());
    let place = match &target.endpoint_url {
        Some(url) => Place::Url(url.clone()),
        None => Place::Aws(region),
    };
    let endpoint = probe(&clients, &names, place, target, out).await;
    Ok(endpoint.map(|endpoint| Probed {
        endpoint,
        _emulator: None,
    }))
}

/// The endpoint that answered, for the labs' own checks, and the embedded emulator it is (kept
/// running until they are done).
pub(super) struct Probed {
    pub endpoint: Endpoint,
    _emulator: Option<Emulator>,
}

/// The region line and the credentials line; the region and the account (or a stand-in) when
/// both resolve.
async fn credentials_and_region(
    target: &TargetOptions,
    out: &mut Checks,
) -> Option<(String, String)> {
    let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest());
    if let Some(r) = &target.region {
        loader = loader.region(aws_config::Region::new(r.clone()));
    }
    if let Some(u) = &target.endpoint_url {
        loader = loader.endpoint_url(u);
    }
    let Ok(config) = tokio::time::timeout(CREDENTIALS_TIMEOUT * 2, loader.load()).await else {
        out.push(Check::fail(
            "region",
            format!(
                "the SDK's configuration did not load within {} s",
                (CREDENTIALS_TIMEOUT * 2).as_secs()
            ),
            "pass --region and set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or check your profile",
            &Part::served(),
        ));
        return None;
    };
    let region_fix = "pass --region, set AWS_REGION, or set one in your profile (`aws configure`)";
    let region = match config.region().map(|r| r.to_string()) {
        None => {
            out.push(Check::fail(
                "region",
                "none found (not in --region, AWS_REGION, AWS_DEFAULT_REGION or the profile)",
                region_fix,
                &Part::served(),
            ));
            None
        }
        Some(r) if !crate::aws::valid_region(&r) => {
            out.push(Check::fail(
                "region",
                format!("'{r}' is not a region name (they look like us-east-1)"),
                region_fix,
                &Part::served(),
            ));
            None
        }
        Some(r) => {
            out.push(Check::ok(
                "region",
                format!("{r}, from {}", region_source(target.region.is_some())),
            ));
            Some(r)
        }
    };
    let creds_fix =
        "`aws configure`, set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY";
    let found = match config.credentials_provider() {
        None => Err("no credential provider".to_string()),
        Some(p) => match tokio::time::timeout(CREDENTIALS_TIMEOUT, p.provide_credentials()).await
        {
            Ok(Ok(c)) => Ok(c),
            Ok(Err(aws_credential_types::provider::error::CredentialsError::CredentialsNotLoaded(
                _,
            ))) => Err(
                "none in the SDK's chain: environment, profile, web identity, container, instance metadata"
                    .to_string(),
            ),
            Ok(Err(e)) => Err(crate::aws::error_chain(&e)),
            Err(_) => Err(format!(
                "none within {} s",
                CREDENTIALS_TIMEOUT.as_secs()
            )),
        },
    };
    let account = match found {
        Ok(c) => {
            out.push(Check::ok("credentials", describe_credentials(&c)));
            c.account_id()
                .map(|a| a.as_str().to_string())
                .unwrap_or_else(|| "000000000000".into())
        }
        Err(why) => {
            out.push(Check::fail(
                "credentials",
                format!("not found ({why})"),
                creds_fix,
                &Part::served(),
            ));
            return None;
        }
    };
    region.map(|r| (r, account))
}

/// Where the SDK took the region from, as far as can be told from outside its chain.
fn region_source(flag: bool) -> String {
    let set = |k: &str| std::env::var(k).is_ok_and(|v| !v.trim().is_empty());
    if flag {
        "--region".into()
    } else if set("AWS_REGION") {
        "AWS_REGION".into()
    } else if set("AWS_DEFAULT_REGION") {
        "AWS_DEFAULT_REGION".into()
    } else {
        let profile = std::env::var("AWS_PROFILE").unwrap_or_else(|_| "default".into());
        format!("the profile '{profile}' (or instance metadata)")
    }
}

/// The key's last four characters, where the SDK found it, and when it expires: never the
/// secret.
pub fn describe_credentials(c: &aws_credential_types::Credentials) -> String {
    let key = c.access_key_id();
    let tail: String = key
        .chars()
        .rev()
        .take(4)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    // The provider's name shows only in the credentials' Debug text (which redacts the secret).
    let debug = format!("{c:?}");
    let source = debug
        .split("provider_name: \"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or("the SDK's chain");
    let expiry = match c
        .expiry()
        .and_then(|t| t.duration_since(std::time::SystemTime::now()).ok())
    {
        Some(left) => format!(
            ", temporary: expire in {}",
            crate::units::format_duration(Duration::from_secs(left.as_secs()))
        ),
        None => String::new(),
    };
    format!("access key ...{tail} from {source}{expiry}")
}

/// Probes the endpoint: first whether it answers at all, then every operation at once; then the
/// stream and buckets given.
async fn probe(
    clients: &Clients,
    names: &Names,
    place: Place,
    target: &TargetOptions,
    out: &mut Checks,
) -> Option<Endpoint> {
    let embedded = matches!(place, Place::Embedded(_));
    let probing = clients.probing(CALL_TIMEOUT);
    let once = RetrySettings {
        max_attempts: 1,
        ..RetrySettings::default()
    };
    let quota = QuotaPartition::new("latlab-doctor");
    let kinesis = probing.kinesis(&once, &quota, Default::default());
    let s3 = probing.s3(&once, &quota, Default::default());
    // One call each first: an endpoint that answers neither is one line, not thirty.
    let (k, s) = futures_util::join!(
        kinesis
            .describe_stream_summary()
            .stream_name(&names.stream)
            .send(),
        s3.head_bucket().bucket(&names.bucket).send()
    );
    let (k, s) = (judge(k), judge(s));
    let where_ = match &place {
        Place::Embedded(addr) => format!("the embedded emulator on {addr}"),
        Place::Url(url) => url.clone(),
        Place::Aws(region) => format!("AWS in {region} (the SDK's endpoints)"),
    };
    if let (Outcome::Silent(why), Outcome::Silent(_)) = (&k, &s) {
        let fix = match &place {
            Place::Url(_) => {
                "check the URL and that the endpoint runs there (`latlab emulate`, LocalStack)"
            }
            _ => "check the network (a proxy, HTTPS_PROXY) and the region",
        };
        out.push(Check::fail(
            "endpoint",
            format!("{where_} does not answer: {why}"),
            fix,
            &Part::served(),
        ));
        return None;
    }
    out.push(Check::ok(
        "endpoint",
        match &place {
            Place::Embedded(_) => format!("{where_} answered"),
            _ => format!("{where_} answers"),
        },
    ));
    let (kinesis_probes, s3_probes) = futures_util::join!(
        run_probes(kinesis_probes(&kinesis, names, embedded)),
        run_probes(s3_probes(&s3, names, embedded))
    );
    let kinesis_note = match (embedded, &target.stream) {
        (true, _) => "",
        (false, Some(_)) => {
            " (CreateStream and DeleteStream not called; with --stream the lab needs neither)"
        }
        (false, None) => {
            " (CreateStream and DeleteStream not called: they would create and delete a stream)"
        }
    };
    out.push(ops_check(
        "kinesis ops",
        Part::of(Service::Kinesis),
        &kinesis_probes,
        embedded,
        kinesis_note,
    ));
    let s3_note = if names.directory_bucket.is_none() {
        " (CreateSession not called: give --s3-express-bucket for its zone)"
    } else {
        ""
    };
    out.push(ops_check(
        "s3 ops",
        Part::of(Service::S3),
        &s3_probes,
        embedded,
        s3_note,
    ));
    if !embedded
        && let Ok(plan) =
            crate::run::plan::offline(&crate::scenario::Scenario::resolve("tour").ok()?, target)
                .await
        && let Some(c) = super::ops::denied_check(&kinesis_probes, &s3_probes, &plan)
    {
        out.push(c);
    }
    Some(Endpoint {
        kinesis,
        s3,
        clients: probing.clone(),
        at: where_,
        embedded,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_show_the_keys_end_and_never_the_secret() {
        let c = aws_credential_types::Credentials::new(
            "AKIAEXAMPLEKEY1234",
            "very-secret-value",
            None,
            None,
            "EnvironmentVariable",
        );
        let line = describe_credentials(&c);
        assert_eq!(line, "access key ...1234 from EnvironmentVariable");
        assert!(!line.contains("secret"));
    }
}
