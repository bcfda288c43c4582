//! The built-in profiles (`zero`, `same-region`, `seed-tokyo`) with the source of every number,
//! and the S3 fit of `seed-tokyo` to the seed's calibration sets.

use super::*;

// Sources named by more than one parameter.
const DOC_EFO: &str = "AWS, Kinesis Data Streams Developer Guide, 'Reading data': enhanced fan-out \
    propagation is 'typically an average of 70 ms' (the mean); min and p99";
const DOC_CONNECTION: &str = "AWS, Amazon S3 performance guidelines, 'Horizontal scaling of \
    storage connections': about one concurrent request per 85-90 MB/s of network throughput";
const DOC_NIC: &str = "AWS, EC2 instance types: t3.medium (the seed's client) has 'up to 5 \
    Gigabit' of network bandwidth";
const MEASURED_STANDARD: &str = "published in-region measurements put S3 Standard's first byte \
    at about 20-30 ms (WIRE-NOTES.md); the spread (min, p99) is assumed";
const MEASURED_EXPRESS: &str = "AWS: 'single-digit millisecond' first-byte latency; published \
    in-region measurements about 5-6 ms (WIRE-NOTES.md); the spread (min, p99) is assumed";
const SEED_100KB: &str = "the seed's mean time per object of its 10,000 x 100 KB set, less the \
    100 KB transfer at 88 MB/s and latlab's own time per request; shape assumed (min half, p99 \
    three times the median)";
const SEED_1GB: &str = "the seed's 1 x 1 GB set (ten 8 MiB parts or ranges at once, so the class's \
    rate for one client binds, not one connection's): the rate that gives its time";

/// The S3 part of `seed-tokyo`, fitted to the seed's 10,000 x 100 KB set (first-byte medians, ms)
/// and its 1 x 1 GB set (each class's rate for one client, MB/s). docs/latency-profiles.md shows
/// the arithmetic; the 100 x 10 MB set was not used and is a prediction.
struct S3Fit {
    standard_put: f64,
    standard_get: f64,
    express_put: f64,
    express_get: f64,
    standard_up: f64,
    standard_down: f64,
    express_up: f64,
    express_down: f64,
}

const S3_FIT: S3Fit = S3Fit {
    standard_put: 51.76,
    standard_get: 88.59,
    express_put: 8.26,
    express_get: 9.24,
    standard_up: 34.9,
    standard_down: 88.5,
    express_up: 99.8,
    express_down: 141.3,
};

impl S3Fit {
    /// A fitted first byte: the seed gives means only, so the shape is assumed (the minimum half
    /// the median, the p99 three times it: the mean is then 1.135 times the median).
    fn first_byte(median_ms: f64) -> Dist {
        Dist::lognormal_ms(median_ms / 2.0, median_ms, median_ms * 3.0)
    }

    /// A class with fitted first bytes and rates (MB/s) and AWS's 88 MB/s per connection.
    fn class(&self, put_ms: f64, get_ms: f64, up: f64, down: f64) -> S3ClassProfile {
        S3ClassProfile {
            put_first_byte: S3Fit::first_byte(put_ms),
            get_first_byte: S3Fit::first_byte(get_ms),
            connection_upload: CONNECTION,
            connection_download: CONNECTION,
            aggregate_upload: up * MB,
            aggregate_download: down * MB,
        }
    }
}

/// One S3 connection's throughput (AWS: about 85-90 MB/s per concurrent request).
const CONNECTION: f64 = 88.0 * MB;

impl LatencyProfile {
    /// Nothing added: every figure measured is the emulator's own cost plus the client's.
    pub fn zero() -> Self {
        let mut p = LatencyProfile {
            name: "zero".into(),
            description: "nothing added: the emulator's own cost only".into(),
            kinesis: KinesisProfile::zero(),
            s3: S3Profile::zero(),
            sqs: crate::sqs::profile::SqsProfile::zero(),
            provenance: BTreeMap::new(),
        };
        for (name, _) in p.values() {
            p.provenance.insert(
                name,
                Provenance::new(Source::Nothing, "nothing added (0 ms; unlimited bandwidth)"),
            );
        }
        p
    }

    /// A client in the same region as the service, from AWS's documents and independent public
    /// measurements only: no parameter is derived from a seed figure, so a seed scenario run
    /// with it is an out-of-sample check.
    pub fn same_region() -> Self {
        let mut p = LatencyProfile {
            name: "same-region".into(),
            description: "client and service in one region (AWS documents and public measurements; no seed figure)".into(),
            kinesis: KinesisProfile {
                request: Dist::lognormal_ms(0.5, 2.0, 8.0),
                response: Dist::lognormal_ms(0.5, 2.0, 8.0),
                put_commit: Dist::lognormal_ms(5.0, 20.0, 60.0),
                read_visibility: Dist::lognormal_ms(5.0, 25.0, 80.0),
                efo_push: Dist::lognormal_mean_ms(20.0, 70.0, 110.0),
            },
            s3: S3Profile {
                standard: S3ClassProfile {
                    put_first_byte: Dist::lognormal_ms(10.0, 30.0, 120.0),
                    get_first_byte: Dist::lognormal_ms(8.0, 22.0, 90.0),
                    connection_upload: CONNECTION,
                    connection_download: CONNECTION,
                    aggregate_upload: 0.0,
                    aggregate_download: 0.0,
                },
                express: S3ClassProfile {
                    put_first_byte: Dist::lognormal_ms(2.0, 6.0, 15.0),
                    get_first_byte: Dist::lognormal_ms(2.0, 5.0, 12.0),
                    connection_upload: CONNECTION,
                    connection_download: CONNECTION,
                    aggregate_upload: 0.0,
                    aggregate_download: 0.0,
                },
                nic_bandwidth: 625.0 * MB,
                create_session: Dist::lognormal_ms(2.0, 6.0, 15.0),
            },
            sqs: crate::sqs::profile::SqsProfile::same_region().0,
            provenance: BTreeMap::new(),
        };
        let leg = Provenance::new(
            Source::Assumption,
            "one network leg between a client and the service in one region: a few ms; AWS \
             publishes no figure and latlab has not measured one",
        );
        let unlimited = Provenance::new(
            Source::Assumption,
            "no cap for the class as a whole: a client gets what its connections and NIC carry",
        );
        let prov = [
            ("kinesis.request", leg.clone()),
            ("kinesis.response", leg),
            (
                "kinesis.put_commit",
                Provenance::new(
                    Source::Assumption,
                    "the service's write before it stamps ApproximateArrivalTimestamp: tens of \
                     ms; AWS publishes no figure",
                ),
            ),
            (
                "kinesis.read_visibility",
                Provenance::new(
                    Source::Assumption,
                    "from arrival until GetRecords returns a record: AWS documents ~200 ms average \
                     propagation for one shared-throughput consumer, which includes the \
                     consumer's polling wait; the part after arrival is assumed small",
                ),
            ),
            (
                "kinesis.efo_push",
                Provenance::new(Source::AwsDoc, &format!("{DOC_EFO} are assumed")),
            ),
            (
                "s3.standard.put_first_byte",
                Provenance::new(Source::Measurement, MEASURED_STANDARD),
            ),
            (
                "s3.standard.get_first_byte",
                Provenance::new(Source::Measurement, MEASURED_STANDARD),
            ),
            (
                "s3.express.put_first_byte",
                Provenance::new(Source::Measurement, MEASURED_EXPRESS),
            ),
            (
                "s3.express.get_first_byte",
                Provenance::new(Source::Measurement, MEASURED_EXPRESS),
            ),
            (
                "s3.create_session",
                Provenance::new(Source::Measurement, MEASURED_EXPRESS),
            ),
            (
                "s3.nic_bandwidth_mb_s",
                Provenance::new(Source::AwsDoc, DOC_NIC),
            ),
        ];
        for class in ["standard", "express"] {
            for dir in ["upload", "download"] {
                p.provenance.insert(
                    format!("s3.{class}.connection_{dir}_mb_s"),
                    Provenance::new(Source::AwsDoc, DOC_CONNECTION),
                );
                p.provenance.insert(
                    format!("s3.{class}.aggregate_{dir}_mb_s"),
                    unlimited.clone(),
                );
            }
        }
        p.provenance
            .extend(prov.into_iter().map(|(k, v)| (k.to_string(), v)));
        p.provenance.extend(
            crate::sqs::profile::SqsProfile::same_region()
                .1
                .into_iter()
                .map(|(k, v)| (k.to_string(), v)),
        );
        p
    }

    /// Calibrated on the seed experiments: Kinesis on round 1 only (all of round 2 is then a
    /// prediction), S3 on the 1 x 1 GB and 10,000 x 100 KB sets (the 100 x 10 MB set is a
    /// prediction). Each parameter names the seed cells it was derived from; those cells are
    /// `calibrated` in every report of a run with this profile.
    pub fn seed_tokyo() -> Self {
        let mut p = LatencyProfile {
            name: "seed-tokyo".into(),
            description: "calibrated on the seed experiments (ap-northeast-1): Kinesis round 1, S3's 1 GB and 100 KB sets".into(),
            kinesis: KinesisProfile {
                request: Dist::lognormal_ms(3.0, 11.0, 40.0),
                response: Dist::lognormal_ms(3.0, 11.0, 40.0),
                put_commit: Dist::lognormal_ms(25.0, 52.0, 100.0),
                read_visibility: Dist::lognormal_ms(5.0, 25.0, 90.0),
                efo_push: Dist::lognormal_mean_ms(12.0, 70.0, 119.1),
            },
            s3: S3Profile {
                standard: S3_FIT.class(
                    S3_FIT.standard_put,
                    S3_FIT.standard_get,
                    S3_FIT.standard_up,
                    S3_FIT.standard_down,
                ),
                express: S3_FIT.class(
                    S3_FIT.express_put,
                    S3_FIT.express_get,
                    S3_FIT.express_up,
                    S3_FIT.express_down,
                ),
                nic_bandwidth: 625.0 * MB,
                create_session: S3Fit::first_byte(S3_FIT.express_put),
            },
            sqs: crate::sqs::profile::SqsProfile::same_region().0,
            provenance: BTreeMap::new(),
        };
        let leg = Provenance::seed(
            "chosen so that a GetRecords call takes 20-50 ms end to end: the reading \
             (SEED-FIGURES.md) under which a poller sleeping 200 ms after each call makes about \
             4.4 calls/s and, with Lambda's one poll a second, round 1's 12-24 throttles a minute",
            &["kinesis-round1/read_throttles_per_minute/shard/value"],
        );
        // A class's time for a set in one direction, and the ratio of the two classes' times.
        let class_cells = |class: &str, dir: &str, set: &str| -> Vec<String> {
            vec![
                format!("s3/{dir}/{set}/{class}"),
                format!("s3/{dir}/{set}/ratio"),
            ]
        };
        let seed_owned = |note: String, cells: Vec<String>| Provenance {
            source: Source::Seed,
            note,
            seed_cells: cells,
        };
        let mut prov: Vec<(String, Provenance)> = vec![
            ("kinesis.request".into(), leg.clone()),
            ("kinesis.response".into(), leg),
            (
                "kinesis.put_commit".into(),
                Provenance::seed(
                    "round 1's send -> arrival (p50 71.1 ms, p99 122.2 ms) less the request leg",
                    &["kinesis-round1/send_to_arrival/all/*"],
                ),
            ),
            (
                "kinesis.read_visibility".into(),
                Provenance::seed(
                    "round 1's Lambda standard iterator p50 (525 ms) less half of Lambda's 1 s \
                     polling period",
                    &["kinesis-round1/arrival_to_receive/Lambda standard iterator/p50"],
                ),
            ),
            (
                "kinesis.efo_push".into(),
                Provenance::seed(
                    &format!("{DOC_EFO} from round 1's Lambda EFO (lowest 13.7 ms, p99 119.1 ms)"),
                    &["kinesis-round1/arrival_to_receive/Lambda EFO/p99"],
                ),
            ),
            (
                "s3.nic_bandwidth_mb_s".into(),
                Provenance::new(Source::AwsDoc, DOC_NIC),
            ),
        ];
        for (class, name) in [("standard", "standard"), ("express", "express")] {
            for (op, dir) in [("put", "upload"), ("get", "download")] {
                prov.push((
                    format!("s3.{name}.{op}_first_byte"),
                    seed_owned(
                        format!("{SEED_100KB}: {class} {dir}"),
                        class_cells(class, dir, "10,000 x 100 KB"),
                    ),
                ));
                prov.push((
                    format!("s3.{name}.connection_{dir}_mb_s"),
                    Provenance::new(Source::AwsDoc, DOC_CONNECTION),
                ));
                prov.push((
                    format!("s3.{name}.aggregate_{dir}_mb_s"),
                    seed_owned(
                        format!("{SEED_1GB}: {class} {dir}"),
                        class_cells(class, dir, "1 x 1 GB"),
                    ),
                ));
            }
        }
        prov.push((
            "s3.create_session".into(),
            seed_owned(
                "a zonal request like any other: taken as s3.express.put_first_byte".into(),
                class_cells("express", "upload", "10,000 x 100 KB"),
            ),
        ));
        p.provenance.extend(prov);
        // The seed measured no SQS: its legs are the same-region profile's, with their sources.
        p.provenance.extend(
            crate::sqs::profile::SqsProfile::same_region()
                .1
                .into_iter()
                .map(|(k, mut v)| {
                    v.note = format!("the seed measured no SQS; as in same-region: {}", v.note);
                    (k.to_string(), v)
                }),
        );
        p
    }
}
