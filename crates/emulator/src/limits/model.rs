//! The limits' part of a run's model: how the read rate is counted, and every limit set away
//! from its documented value, each with its provenance.

use super::{Limits, RateWindow};
use latlab_core::services::Service;

impl Limits {
    /// The limits' part of a run's model, each with its provenance: how the read rate is counted
    /// (when the run reads Kinesis), and every limit set away from its documented value.
    pub fn model_params(&self, services: &[Service]) -> Vec<latlab_core::provenance::Param> {
        use latlab_core::provenance::{Param, Provenance, Source};
        let mut params = Vec::new();
        if services.contains(&Service::Kinesis) {
            let window = self.kinesis.read_rate_window;
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
        if services.contains(&Service::Sqs) {
            // Short polling's sample of servers: modelled as the guide describes it, at sizes no
            // document gives (a user's values are listed below as set).
            let d = crate::sqs::limits::SqsLimits::default();
            for (name, value, default, note) in [
                (
                    "short_poll_servers",
                    self.sqs.short_poll_servers,
                    d.short_poll_servers,
                    "the servers a queue's messages are spread over, each message on one: the SQS \
                     Developer Guide says a short poll 'queries only a subset of the servers (based \
                     on a weighted random distribution)' but gives no number; assumed",
                ),
                (
                    "short_poll_sampled",
                    self.sqs.short_poll_sampled,
                    d.short_poll_sampled,
                    "the servers one short poll asks, those the previous one missed first (the guide: \
                     a subsequent request returns messages a poll missed); no number is published; \
                     assumed",
                ),
            ] {
                if value == default {
                    params.push(Param::new(
                        &format!("emulator.sqs.{name}"),
                        value.to_string(),
                        Provenance::new(Source::Assumption, note),
                    ));
                }
            }
        }
        {
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
                self.kinesis.describe(),
                documented.kinesis.describe(),
                "kinesis",
            ));
            params.extend(given(self.s3.describe(), documented.s3.describe(), "s3"));
            params.extend(given(self.sqs.describe(), documented.sqs.describe(), "sqs"));
        }
        params
    }
}
