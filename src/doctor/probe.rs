//! The endpoint's checks: the embedded emulator (started here, as the labs start it), a given
//! endpoint or real AWS; the credentials and region for it; whether it answers at all (each
//! lab's `Doctor::ping`); then each lab's operations (`Doctor::ops`, in its folder) and the
//! permissions any of them was refused (`ops.rs`). The stream and buckets given are the labs'
//! own checks (`Doctor::doctor`), with the endpoint this returns.
//!
//! Every call is made once, without retries and within a short timeout, with the clients
//! `crate::aws` makes for the labs.

use std::time::{Duration, Instant};

use aws_credential_types::provider::ProvideCredentials;

use super::{Check, Checks, Part};
use crate::aws::{Clients, Target};
use crate::labs::check::{CALL_TIMEOUT, DoctorContext, Endpoint, Outcome};
use crate::run::TargetOptions;
use latlab_emulator::limits::Limits;
use latlab_emulator::profile::LatencyProfile;
use latlab_emulator::{Emulator, EmulatorConfig};

/// How long the SDK may take to find credentials (a profile's SSO or instance metadata).
const CREDENTIALS_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the probes go, for the endpoint line.
enum Place {
    Embedded(std::net::SocketAddr),
    Url(String),
    Aws(String),
}

/// The endpoint's checks: credentials and region (for an endpoint or AWS), the endpoint, the
/// labs' operations, and what each lab was given (a stream, buckets, a Redis pair).
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
        let endpoint = probe(
            &clients,
            (crate::aws::EMULATOR_REGION, "000000000000"),
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
    let place = match &target.endpoint_url {
        Some(url) => Place::Url(url.clone()),
        None => Place::Aws(region.clone()),
    };
    let endpoint = probe(&clients, (&region, &account), place, target, out).await;
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
    let bundle = match crate::aws::CaBundle::load().await {
        Ok(b) => b,
        Err(e) => {
            out.push(Check::fail(
                "trust",
                format!("{e:#}"),
                "point AWS_CA_BUNDLE (or the profile's ca_bundle) at a PEM file of the certificate authorities to trust",
                &Part::served(),
            ));
            return None;
        }
    };
    if let Some(b) = &bundle {
        out.push(Check::ok(
            "trust",
            format!("the platform's certificate authorities and {}", b.from),
        ));
    }
    let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .http_client(crate::aws::https_client_trusting(bundle));
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
        Ok(c) if crate::aws::expired(&c).is_some() => {
            out.push(Check::fail(
                "credentials",
                crate::aws::expired(&c).unwrap_or_default(),
                creds_fix,
                &Part::served(),
            ));
            return None;
        }
        Ok(c) => {
            out.push(Check::ok("credentials", describe_credentials(&c)));
            let known = c.account_id().map(|a| a.as_str().to_string());
            match caller_identity(&config).await {
                Ok((arn, account)) => {
                    out.push(Check::ok(
                        "identity",
                        format!("{arn} (account {account}), from STS GetCallerIdentity"),
                    ));
                    account
                }
                Err(why) if target.endpoint_url.is_some() => {
                    out.push(Check::warn(
                        "identity",
                        format!("STS GetCallerIdentity did not answer ({why})"),
                        "another endpoint may not serve STS; on AWS it always answers valid credentials",
                        &[],
                    ));
                    known.unwrap_or_else(|| "000000000000".into())
                }
                Err(why) => {
                    out.push(Check::fail(
                        "identity",
                        format!("STS GetCallerIdentity refused the credentials ({why})"),
                        creds_fix,
                        &Part::served(),
                    ));
                    return None;
                }
            }
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

/// Who the credentials are, by STS GetCallerIdentity (which needs no permission): their ARN
/// and account.
async fn caller_identity(config: &aws_config::SdkConfig) -> Result<(String, String), String> {
    let sts = aws_sdk_sts::Client::new(config);
    let call = sts.get_caller_identity().send();
    match tokio::time::timeout(CREDENTIALS_TIMEOUT, call).await {
        Err(_) => Err(format!(
            "no answer within {} s",
            CREDENTIALS_TIMEOUT.as_secs()
        )),
        Ok(Err(e)) => Err(crate::aws::error_line(&e)),
        Ok(Ok(id)) => Ok((
            id.arn().unwrap_or("(no ARN)").to_string(),
            id.account().unwrap_or("(no account)").to_string(),
        )),
    }
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
    let source = crate::aws::provider_name(c);
    let expiry = match c
        .expiry()
        .and_then(|t| t.duration_since(std::time::SystemTime::now()).ok())
    {
        Some(left) => format!(
            ", temporary: expire in {}",
            latlab_core::units::format_duration(Duration::from_secs(left.as_secs()))
        ),
        None => String::new(),
    };
    format!("access key ...{tail} from {source}{expiry}")
}

/// Probes the endpoint: first whether it answers at all (one call of each lab's), then every
/// lab's operations at once, and the permissions any was refused.
async fn probe(
    clients: &Clients,
    (region, account): (&str, &str),
    place: Place,
    target: &TargetOptions,
    out: &mut Checks,
) -> Option<Endpoint> {
    let embedded = matches!(place, Place::Embedded(_));
    let where_ = match &place {
        Place::Embedded(addr) => format!("the embedded emulator on {addr}"),
        Place::Url(url) => url.clone(),
        Place::Aws(region) => format!("AWS in {region} (the SDK's endpoints)"),
    };
    let endpoint = Endpoint {
        clients: clients.probing(CALL_TIMEOUT),
        at: where_.clone(),
        embedded,
        probe_name: format!("latlab-doctor-probe-{}", crate::labs::run_id()),
        region: region.to_string(),
        account: account.to_string(),
    };
    let cx = DoctorContext {
        target,
        endpoint: Some(&endpoint),
    };
    // One call each first: an endpoint that answers none is one line, not thirty.
    let pings = super::lab_pings(&cx).await;
    let silent = pings.iter().all(|p| matches!(p, Outcome::Silent(_)));
    if let (true, Some(Outcome::Silent(why))) = (silent, pings.first()) {
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
    let ops = super::lab_ops(&cx).await;
    let mut probes = Vec::new();
    for (lab, (line, lab_probes)) in ops {
        out.push(line);
        probes.push((lab, lab_probes));
    }
    if !embedded
        && let Ok(plan) =
            crate::run::plan::offline(&crate::scenario::Scenario::resolve("tour").ok()?, target)
                .await
        && let Some(c) = super::ops::denied_check(&probes, &plan)
    {
        out.push(c);
    }
    Some(endpoint)
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
