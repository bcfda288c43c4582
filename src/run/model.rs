//! The model a run measures against: every parameter of the latency profile, the emulator's
//! limits, Lambda's retry model and the Redis lab's shaped links, each with its provenance.

use crate::emulator::limits::Limits;
use crate::emulator::profile::LatencyProfile;
use crate::scenario::Scenario;

/// The model in effect for a run, every parameter with its provenance: the latency profile and
/// the emulator's limits (emulator runs), Lambda's retry model, and the Redis lab's shaped links.
pub fn model_params(
    scenario: &Scenario,
    emulated: Option<(&LatencyProfile, &Limits)>,
) -> Vec<crate::provenance::Param> {
    use crate::emulator::limits::RateWindow;
    use crate::provenance::{Param, Provenance, Source};
    let mut params = Vec::new();
    if let Some((profile, _)) = emulated {
        // Only the labs the scenario runs: an S3 run's figures owe nothing to Kinesis's model.
        params.extend(profile.params().into_iter().filter(|p| {
            (scenario.kinesis.is_some() && p.name.starts_with("kinesis."))
                || (scenario.s3.is_some() && p.name.starts_with("s3."))
        }));
    }
    if let (Some((_, limits)), Some(_)) = (emulated, &scenario.kinesis) {
        let window = limits.kinesis.read_rate_window;
        params.push(Param::new(
            "emulator.read_rate_window",
            window.name().into(),
            if window == RateWindow::TokenBucket {
                Provenance::seed(
                    "how 'five reads per second' is counted is not documented; the token bucket \
                     was chosen because a sliding window gave about 51 throttles a minute on round \
                     1's set-up where the seed's CloudWatch showed 12-24 (docs/emulator.md)",
                    &["kinesis-round1/read_throttles_per_minute/shard/value"],
                )
            } else {
                Provenance::new(
                    Source::User,
                    "chosen in the scenario or on the command line",
                )
            },
        ));
    }
    if let Some((_, limits)) = emulated {
        let documented = Limits::default();
        let given = |a: Vec<(&'static str, String)>,
                     b: Vec<(&'static str, String)>,
                     section: &str| {
            a.into_iter()
                .zip(b)
                .filter(|((k, v), (_, d))| v != d && *k != "read_rate_window")
                .map(|((k, v), (_, d))| {
                    Param::new(
                        &format!("emulator.{section}.{k}"),
                        v,
                        Provenance::new(
                            Source::User,
                            &format!("set in the scenario or on the command line; the documented value is {d}"),
                        ),
                    )
                })
                .collect::<Vec<_>>()
        };
        params.extend(given(
            limits.kinesis.describe(),
            documented.kinesis.describe(),
            "kinesis",
        ));
        params.extend(given(limits.s3.describe(), documented.s3.describe(), "s3"));
    }
    if let Some(k) = &scenario.kinesis {
        let lambda_default = k.consumers.iter().any(|c| {
            matches!(
                c.kind,
                crate::labs::kinesis::config::ConsumerKind::LambdaStandard
                    | crate::labs::kinesis::config::ConsumerKind::LambdaEfo
            ) && c.retry.as_ref() == Some(&crate::labs::kinesis::config::lambda_retry())
        });
        if lambda_default {
            params.push(Param::new(
                "lambda.retry",
                format!(
                    "{}, no retry quota",
                    crate::labs::kinesis::config::lambda_retry().describe()
                ),
                crate::labs::kinesis::config::lambda_retry_provenance(),
            ));
        }
    }
    if let Some(r) = &scenario.redis {
        for (name, link) in [
            ("redis.link", &r.link),
            ("redis.client_link", &r.client_link),
        ] {
            if let Ok(l) = crate::labs::redis::local::LinkProfile::resolve(link) {
                params.push(Param::new(
                    name,
                    format!("{} ({})", l.name, l.describe()),
                    l.provenance(),
                ));
            }
        }
    }
    params
}
