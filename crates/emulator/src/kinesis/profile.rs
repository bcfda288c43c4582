//! The delays the Kinesis emulator adds: a latency profile's `[kinesis]` legs, with where each
//! built-in value comes from. See `docs/latency-profiles.md` for what each models.

use serde::Deserialize;

use crate::service::{Builtin, ServiceProfile};
use latlab_core::provenance::{Provenance, Source};
use latlab_core::shaping::dist::{Dist, DistSpec};

/// AWS's figure for enhanced fan-out, named by both built-in profiles.
const DOC_EFO: &str = "AWS, Kinesis Data Streams Developer Guide, 'Reading data': enhanced fan-out \
    propagation is 'typically an average of 70 ms' (the mean); min and p99";

/// Delays the Kinesis emulator adds.
#[derive(Clone, Debug, PartialEq)]
pub struct KinesisProfile {
    /// Client -> service leg of every request, before the service handles it.
    pub request: Dist,
    /// Service -> client leg of every response (and of the first frame of SubscribeToShard).
    pub response: Dist,
    /// A put's time inside the service before the record is stored and stamped with its
    /// ApproximateArrivalTimestamp (durable write across zones).
    pub put_commit: Dist,
    /// Delay from a record's arrival until GetRecords can return it (shared-throughput propagation).
    pub read_visibility: Dist,
    /// Delay from a record's arrival until an enhanced fan-out subscription pushes it (per consumer).
    pub efo_push: Dist,
}

/// A profile file's `[kinesis]` table.
#[derive(Deserialize, Default, Debug)]
#[serde(deny_unknown_fields)]
pub struct KinesisSpec {
    request: Option<DistSpec>,
    response: Option<DistSpec>,
    put_commit: Option<DistSpec>,
    read_visibility: Option<DistSpec>,
    efo_push: Option<DistSpec>,
}

/// The legs' names in a profile, in order.
const LEGS: [&str; 5] = [
    "kinesis.request",
    "kinesis.response",
    "kinesis.put_commit",
    "kinesis.read_visibility",
    "kinesis.efo_push",
];

impl KinesisProfile {
    fn legs(&self) -> [&Dist; 5] {
        [
            &self.request,
            &self.response,
            &self.put_commit,
            &self.read_visibility,
            &self.efo_push,
        ]
    }
}

impl ServiceProfile for KinesisProfile {
    type Spec = KinesisSpec;

    fn zero() -> Self {
        KinesisProfile {
            request: Dist::ZERO,
            response: Dist::ZERO,
            put_commit: Dist::ZERO,
            read_visibility: Dist::ZERO,
            efo_push: Dist::ZERO,
        }
    }

    fn values(&self) -> Vec<(String, String)> {
        self.legs()
            .into_iter()
            .zip(LEGS)
            .map(|(d, n)| (n.to_string(), d.describe()))
            .collect()
    }

    fn apply(&mut self, spec: KinesisSpec) -> anyhow::Result<Vec<String>> {
        let mut set = Vec::new();
        for (slot, s, name) in [
            (&mut self.request, spec.request, LEGS[0]),
            (&mut self.response, spec.response, LEGS[1]),
            (&mut self.put_commit, spec.put_commit, LEGS[2]),
            (&mut self.read_visibility, spec.read_visibility, LEGS[3]),
            (&mut self.efo_push, spec.efo_push, LEGS[4]),
        ] {
            if let Some(s) = s {
                *slot = s.build(name)?;
                set.push(name.to_string());
            }
        }
        Ok(set)
    }

    fn builtin(profile: Builtin) -> (Self, Vec<(String, Provenance)>) {
        match profile {
            Builtin::SameRegion => same_region(),
            Builtin::SeedTokyo => seed_tokyo(),
        }
    }
}

/// A client in the same region: AWS's documents where they give a figure, assumptions (said so)
/// where they do not; no seed figure.
fn same_region() -> (KinesisProfile, Vec<(String, Provenance)>) {
    let p = KinesisProfile {
        request: Dist::lognormal_ms(0.45, 2.0, 8.0),
        response: Dist::lognormal_ms(0.45, 2.0, 8.0),
        put_commit: Dist::lognormal_ms(5.0, 20.0, 60.0),
        read_visibility: Dist::lognormal_ms(5.0, 25.0, 80.0),
        efo_push: Dist::lognormal_mean_ms(20.0, 70.0, 110.0),
    };
    let leg = Provenance::new(
        Source::Assumption,
        "one network leg between a client and the service in one region: a median of 2 ms \
         assumed (AWS publishes no figure and no independent measurement of Kinesis's legs was \
         found); its floor, 0.45 ms, is half a round trip across zones as published EC2 pings \
         measure it (orensol.com, 2009, us-east-1: 0.94-1.13 ms; Lukas Liesis, 2022, eu-west-1: \
         0.82-0.83 ms), a regional endpoint being in another zone two times in three",
    );
    let prov = vec![
        (LEGS[0], leg.clone()),
        (LEGS[1], leg),
        (
            LEGS[2],
            Provenance::new(
                Source::Assumption,
                "the service's write before it stamps ApproximateArrivalTimestamp: tens of \
                 ms; AWS publishes no figure",
            ),
        ),
        (
            LEGS[3],
            Provenance::new(
                Source::Assumption,
                "from arrival until GetRecords returns a record: AWS documents ~200 ms average \
                 propagation for one shared-throughput consumer, which includes the \
                 consumer's polling wait; the part after arrival is assumed small",
            ),
        ),
        (
            LEGS[4],
            Provenance::new(Source::AwsDoc, &format!("{DOC_EFO} are assumed")),
        ),
    ];
    (p, named(prov))
}

/// Calibrated on the seed's round 1 only (all of round 2 is then a prediction); each parameter
/// names the seed cells it was derived from.
fn seed_tokyo() -> (KinesisProfile, Vec<(String, Provenance)>) {
    let p = KinesisProfile {
        request: Dist::lognormal_ms(3.0, 11.0, 40.0),
        response: Dist::lognormal_ms(3.0, 11.0, 40.0),
        put_commit: Dist::lognormal_ms(25.0, 52.0, 100.0),
        read_visibility: Dist::lognormal_ms(5.0, 25.0, 90.0),
        efo_push: Dist::lognormal_mean_ms(12.0, 70.0, 119.1),
    };
    let leg = Provenance::seed(
        "chosen so that a GetRecords call takes 20-50 ms end to end: the reading \
         (SEED-FIGURES.md) under which a poller sleeping 200 ms after each call makes about \
         4.4 calls/s and, with Lambda's one poll a second, round 1's 12-24 throttles a minute",
        &["kinesis-round1/read_throttles_per_minute/shard/value"],
    );
    let prov = vec![
        (LEGS[0], leg.clone()),
        (LEGS[1], leg),
        (
            LEGS[2],
            Provenance::seed(
                "round 1's send -> arrival (p50 71.1 ms, p99 122.2 ms) less the request leg",
                &["kinesis-round1/send_to_arrival/all/*"],
            ),
        ),
        (
            LEGS[3],
            Provenance::seed(
                "round 1's Lambda standard iterator p50 (525 ms) less half of Lambda's 1 s \
                 polling period",
                &["kinesis-round1/arrival_to_receive/Lambda standard iterator/p50"],
            ),
        ),
        (
            LEGS[4],
            Provenance::seed(
                &format!("{DOC_EFO} from round 1's Lambda EFO (lowest 13.7 ms, p99 119.1 ms)"),
                &["kinesis-round1/arrival_to_receive/Lambda EFO/p99"],
            ),
        ),
    ];
    (p, named(prov))
}

fn named(prov: Vec<(&str, Provenance)>) -> Vec<(String, Provenance)> {
    prov.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

#[cfg(test)]
mod tests {
    use crate::profile::LatencyProfile;
    use latlab_core::provenance::Source;
    use latlab_core::shaping::dist::Dist;

    #[test]
    fn profile_file_overrides_a_base() {
        let p = LatencyProfile::from_toml(
            "name = \"fixed\"\nbase = \"seed-tokyo\"\n[kinesis]\nefo_push = { fixed_ms = 50 }\n",
        )
        .unwrap();
        assert_eq!(p.kinesis.efo_push, Dist::Fixed(50.0));
        assert_eq!(
            p.kinesis.put_commit,
            LatencyProfile::seed_tokyo().kinesis.put_commit
        );
    }

    #[test]
    fn a_profile_file_overriding_a_parameter_takes_over_its_provenance() {
        let p = LatencyProfile::from_toml(
            "name = \"mine\"\nbase = \"seed-tokyo\"\n[kinesis]\nefo_push = { mean_ms = 60, p99_ms = 100, min_ms = 10 }\nput_commit = { fixed_ms = 30 }\n\
             [provenance.\"kinesis.efo_push\"]\nsource = \"measurement\"\nnote = \"our own in-region test\"\n",
        )
        .unwrap();
        let by = |n: &str| {
            p.params()
                .into_iter()
                .find(|x| x.name == n)
                .unwrap()
                .provenance
        };
        assert_eq!(by("kinesis.efo_push").source, Source::Measurement);
        assert!(by("kinesis.efo_push").seed_cells.is_empty());
        assert_eq!(
            by("kinesis.put_commit").source,
            Source::User,
            "set, with no source given"
        );
        assert_eq!(
            by("kinesis.read_visibility").source,
            Source::Seed,
            "the base's, untouched"
        );
        let e = LatencyProfile::from_toml(
            "name = \"x\"\n[provenance.\"kinesis.efo_pushh\"]\nsource = \"seed\"\nnote = \"n\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("'kinesis.efo_pushh', which is not a parameter"),
            "{e}"
        );
        let e = LatencyProfile::from_toml("name = \"x\"\n[kinesis]\nefo_push = { mean_ms = 60 }\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("mean_ms needs p99_ms"), "{e}");
    }

    #[test]
    fn profile_file_errors_name_the_field() {
        let e =
            LatencyProfile::from_toml("name = \"x\"\n[kinesis]\nefo_pushh = { fixed_ms = 5 }\n")
                .unwrap_err()
                .to_string();
        assert!(e.contains("efo_pushh") && e.contains("efo_push"), "{e}");
        let e = LatencyProfile::from_toml(
            "name = \"x\"\n[kinesis]\nefo_push = { median_ms = 50, p99_ms = 20 }\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("kinesis.efo_push must satisfy"), "{e}");
        let e = LatencyProfile::resolve("nope").unwrap_err().to_string();
        assert!(e.contains("zero, same-region, seed-tokyo"), "{e}");
    }
}
