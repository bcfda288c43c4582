//! The delays the DynamoDB emulator adds, per call: a latency profile's `[dynamodb]` legs, with
//! where each built-in value comes from.

use serde::Deserialize;

use crate::service::{Builtin, ServiceProfile};
use latlab_core::provenance::{Provenance, Source};
use latlab_core::shaping::dist::{Dist, DistSpec};

/// Each leg is the time a call of that kind adds, request to answer (both network legs and the
/// service's own work), sampled per call.
#[derive(Clone, Debug, PartialEq)]
pub struct DynamoProfile {
    /// GetItem, Query and BatchGetItem.
    pub read: Dist,
    /// PutItem, UpdateItem, DeleteItem and BatchWriteItem.
    pub write: Dist,
    /// Every other call (table management).
    pub other: Dist,
    /// From a write's answer to its stream record being readable by GetRecords.
    pub stream_visibility: Dist,
    /// From a write's answer to its change being put into the table's Kinesis data stream
    /// (Kinesis Data Streams for DynamoDB).
    pub kinesis_push: Dist,
}

/// The legs' names in a profile, in order.
pub const LEGS: [&str; 5] = [
    "dynamodb.read",
    "dynamodb.write",
    "dynamodb.other",
    "dynamodb.stream_visibility",
    "dynamodb.kinesis_push",
];

impl DynamoProfile {
    /// A client in the table's region. AWS states only "single-digit millisecond" latency
    /// (Amazon DynamoDB's product page and developer guide); no independent measurement of one
    /// call was found, so each leg is an assumption within that statement.
    fn same_region() -> (DynamoProfile, Vec<(&'static str, Provenance)>) {
        let p = DynamoProfile {
            read: Dist::lognormal_ms(1.5, 3.0, 9.0),
            write: Dist::lognormal_ms(2.0, 4.5, 12.0),
            other: Dist::lognormal_ms(2.0, 6.0, 20.0),
            stream_visibility: Dist::lognormal_ms(20.0, 100.0, 500.0),
            kinesis_push: Dist::lognormal_ms(50.0, 300.0, 1000.0),
        };
        let within = |what: &str| {
            Provenance::new(
                Source::Assumption,
                &format!(
                    "AWS states \"single-digit millisecond\" latency for DynamoDB and publishes no \
                     distribution; assumed a {what} inside it (a round trip in the region plus the \
                     service's work), its p99 just past 9 ms"
                ),
            )
        };
        let prov = vec![
            ("dynamodb.read", within("median of 3 ms for a read")),
            (
                "dynamodb.write",
                within("median of 4.5 ms for a write (replicated to a quorum)"),
            ),
            (
                "dynamodb.other",
                Provenance::new(
                    Source::Assumption,
                    "table management has no published latency: assumed a little slower than a write",
                ),
            ),
            (
                "dynamodb.stream_visibility",
                Provenance::new(
                    Source::Assumption,
                    "AWS says DynamoDB Streams captures changes \"in near-real time\" and \
                     publishes no figure; assumed a median of 100 ms and a p99 of 500 ms",
                ),
            ),
            (
                "dynamodb.kinesis_push",
                Provenance::new(
                    Source::Assumption,
                    "AWS publishes no latency for Kinesis Data Streams for DynamoDB; assumed a \
                     median of 300 ms and a p99 of 1 s from a write to its record in the data \
                     stream (the record then takes the Kinesis profile's read visibility)",
                ),
            ),
        ];
        (p, prov)
    }
}

impl ServiceProfile for DynamoProfile {
    type Spec = DynamoSpec;

    fn zero() -> DynamoProfile {
        DynamoProfile {
            read: Dist::ZERO,
            write: Dist::ZERO,
            other: Dist::ZERO,
            stream_visibility: Dist::ZERO,
            kinesis_push: Dist::ZERO,
        }
    }

    fn values(&self) -> Vec<(String, String)> {
        [
            &self.read,
            &self.write,
            &self.other,
            &self.stream_visibility,
            &self.kinesis_push,
        ]
        .into_iter()
        .zip(LEGS)
        .map(|(d, n)| (n.to_string(), d.describe()))
        .collect()
    }

    fn apply(&mut self, spec: DynamoSpec) -> anyhow::Result<Vec<String>> {
        let mut set = Vec::new();
        for (slot, s, name) in [
            (&mut self.read, spec.read, LEGS[0]),
            (&mut self.write, spec.write, LEGS[1]),
            (&mut self.other, spec.other, LEGS[2]),
            (&mut self.stream_visibility, spec.stream_visibility, LEGS[3]),
            (&mut self.kinesis_push, spec.kinesis_push, LEGS[4]),
        ] {
            if let Some(s) = s {
                *slot = s.build(name)?;
                set.push(name.to_string());
            }
        }
        Ok(set)
    }

    /// The seed measured no DynamoDB: `seed-tokyo`'s legs are the same-region profile's, with
    /// their sources.
    fn builtin(profile: Builtin) -> (Self, Vec<(String, Provenance)>) {
        let (p, prov) = DynamoProfile::same_region();
        let prov = prov.into_iter().map(|(k, mut v)| {
            if profile == Builtin::SeedTokyo {
                v.note = format!(
                    "the seed measured no DynamoDB; as in same-region: {}",
                    v.note
                );
            }
            (k.to_string(), v)
        });
        (p, prov.collect())
    }
}

/// A profile file's `[dynamodb]` table.
#[derive(Deserialize, Default, Debug)]
#[serde(deny_unknown_fields)]
pub struct DynamoSpec {
    read: Option<DistSpec>,
    write: Option<DistSpec>,
    other: Option<DistSpec>,
    stream_visibility: Option<DistSpec>,
    kinesis_push: Option<DistSpec>,
}
