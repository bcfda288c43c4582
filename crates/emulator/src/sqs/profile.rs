//! The delays the SQS emulator adds, per call: a latency profile's `[sqs]` legs, with where each
//! built-in value comes from.

use serde::Deserialize;

use crate::service::{Builtin, ServiceProfile};
use latlab_core::provenance::{Provenance, Source};
use latlab_core::shaping::dist::{Dist, DistSpec};

/// Each leg is the time a call of that kind adds, request to answer (both network legs and the
/// service's own work), sampled per call. A long poll's wait for a message is not in it: that is
/// the queue's own behaviour, added on top.
#[derive(Clone, Debug, PartialEq)]
pub struct SqsProfile {
    /// SendMessage and SendMessageBatch.
    pub send: Dist,
    /// ReceiveMessage.
    pub receive: Dist,
    /// DeleteMessage, DeleteMessageBatch, and ChangeMessageVisibility (and its batch).
    pub delete: Dist,
    /// Every other call (queue management).
    pub other: Dist,
}

/// The legs' names in a profile, in order.
pub const LEGS: [&str; 4] = ["sqs.send", "sqs.receive", "sqs.delete", "sqs.other"];

impl SqsProfile {
    /// A client in the service's region. The send leg rests on two independent public
    /// measurements; a receive and a delete on AWS's FAQ's range (no measurement of either alone
    /// was found); the other calls are an assumption of the same size.
    fn same_region() -> (SqsProfile, Vec<(&'static str, Provenance)>) {
        let p = SqsProfile {
            send: Dist::lognormal_ms(4.0, 16.0, 50.0),
            receive: Dist::lognormal_ms(4.0, 14.0, 45.0),
            delete: Dist::lognormal_ms(4.0, 14.0, 45.0),
            other: Dist::lognormal_ms(4.0, 14.0, 45.0),
        };
        let assumed = Provenance::new(
            Source::Assumption,
            "no published measurement of this call alone was found: assumed the size of a send \
             (a round trip in the region plus the service's work)",
        );
        let faq = Provenance::new(
            Source::AwsDoc,
            "AWS, Amazon SQS FAQs: 'Typical latencies for SendMessage, ReceiveMessage, and \
             DeleteMessage API requests are in the tens or low hundreds of milliseconds'; the \
             median is taken at the low end of that range, beside the send's measured 16 ms \
             (where in the range it sits is assumed; no measurement of this call alone was found)",
        );
        let prov = vec![
            (
                "sqs.send",
                Provenance::new(
                    Source::Measurement,
                    "median 16 ms: Amazon's own figure for sending a 1 KB message from an EC2 \
                     instance in us-east-1, printed in the July 2012 revision of Stony Brook's \
                     Cloud Performance Benchmark Series (SQS), whose authors say they did not \
                     verify it and do not name its statistic (read here as the median); p99 \
                     50 ms: SoftwareMill's mqperf (2020, refreshed July 2021, eu-west-1, Java SDK \
                     1.11, batches of 1 to 10) measured a p95 send latency of 48-50 ms at every \
                     load, read here as the tail of a single send; both inside AWS's FAQ's 'tens \
                     or low hundreds of milliseconds'",
                ),
            ),
            ("sqs.receive", faq.clone()),
            ("sqs.delete", faq),
            ("sqs.other", assumed),
        ];
        (p, prov)
    }
}

impl ServiceProfile for SqsProfile {
    type Spec = SqsSpec;

    fn zero() -> SqsProfile {
        SqsProfile {
            send: Dist::ZERO,
            receive: Dist::ZERO,
            delete: Dist::ZERO,
            other: Dist::ZERO,
        }
    }

    /// Every leg's name and value in words.
    fn values(&self) -> Vec<(String, String)> {
        [&self.send, &self.receive, &self.delete, &self.other]
            .into_iter()
            .zip(LEGS)
            .map(|(d, n)| (n.to_string(), d.describe()))
            .collect()
    }

    /// Applies a profile file's `[sqs]` table; returns the legs it set.
    fn apply(&mut self, spec: SqsSpec) -> anyhow::Result<Vec<String>> {
        let mut set = Vec::new();
        for (slot, s, name) in [
            (&mut self.send, spec.send, LEGS[0]),
            (&mut self.receive, spec.receive, LEGS[1]),
            (&mut self.delete, spec.delete, LEGS[2]),
            (&mut self.other, spec.other, LEGS[3]),
        ] {
            if let Some(s) = s {
                *slot = s.build(name)?;
                set.push(name.to_string());
            }
        }
        Ok(set)
    }

    /// The seed measured no SQS: `seed-tokyo`'s legs are the same-region profile's, with their
    /// sources.
    fn builtin(profile: Builtin) -> (Self, Vec<(String, Provenance)>) {
        let (p, prov) = SqsProfile::same_region();
        let prov = prov.into_iter().map(|(k, mut v)| {
            if profile == Builtin::SeedTokyo {
                v.note = format!("the seed measured no SQS; as in same-region: {}", v.note);
            }
            (k.to_string(), v)
        });
        (p, prov.collect())
    }
}

/// A profile file's `[sqs]` table.
#[derive(Deserialize, Default, Debug)]
#[serde(deny_unknown_fields)]
pub struct SqsSpec {
    send: Option<DistSpec>,
    receive: Option<DistSpec>,
    delete: Option<DistSpec>,
    other: Option<DistSpec>,
}
