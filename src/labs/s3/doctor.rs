//! The S3 lab's doctor checks: every S3 operation it makes, called once on a bucket that does
//! not exist (`latlab-doctor-probe-<random hex>`), so that an endpoint that implements it
//! answers with an AWS error and nothing is created (CreateBucket and DeleteBucket only on the
//! embedded emulator, which is thrown away afterwards), with what each missing one costs the
//! lab; then, on an endpoint other than the embedded emulator, the buckets given (latlab creates
//! none there) answer HeadBucket.

use futures_util::FutureExt;

use crate::labs::check::{
    Call, Check, DoctorContext, Endpoint, Need, Outcome, Part, judge, ops_check, run_probes,
};
use crate::labs::{LabKind, TargetOptions};
use latlab_core::services::s3::{Class, Op};

/// The S3 lab's PUTs and GETs.
pub const OBJECTS: Need = Need::new("the lab cannot move objects", false);
/// The buckets given with --s3-bucket and --s3-express-bucket are checked with it.
pub const GIVEN_BUCKETS: Need = Need {
    lost: "the lab cannot check the buckets it is given",
    runs: false,
    embedded: Some((
        "the lab uses it only on buckets given with --s3-bucket",
        true,
    )),
};
pub const MULTIPART: Need = Need::new("payloads of 8 MiB and over (multipart uploads) fail", true);
pub const OBJECT_CLEANUP: Need = Need::new("the run's objects stay in the buckets", true);
pub const SESSION: Need = Need::new(
    "S3 Express One Zone is not measured (Standard is) and the S3 matrix does not start",
    true,
);
pub const CREATE_BUCKET: Need = Need::new("the lab cannot create its buckets", false);
pub const DELETE_BUCKET: Need = Need::new("the run's buckets are left behind", true);

const PROBE_KEY: &str = "latlab/doctor-probe";

/// Names that exist nowhere, for one run of the doctor.
struct Names {
    bucket: String,
    /// A directory bucket in the zone of the one given (or one the endpoint serves); None on
    /// AWS without one given: CreateSession is not called.
    directory_bucket: Option<String>,
}

impl Names {
    fn of(e: &Endpoint, target: &TargetOptions) -> Names {
        // A directory bucket's zone must be one of the region's on AWS: the given bucket's, if
        // any.
        let zone = if e.embedded {
            Some("use1-az4".to_string())
        } else {
            target
                .labs
                .s3
                .s3_express_bucket
                .as_deref()
                .and_then(|b| b.strip_suffix("--x-s3"))
                .and_then(|b| b.rsplit_once("--"))
                .map(|(_, z)| z.to_string())
                .or_else(|| target.endpoint_url.as_ref().map(|_| "use1-az4".to_string()))
        };
        Names {
            directory_bucket: zone.map(|z| format!("{}--{z}--x-s3", e.probe_name)),
            bucket: e.probe_name.clone(),
        }
    }
}

/// The IAM action an operation's call asks for: CreateSession's of a directory bucket, the
/// others' of S3 Standard.
fn action(op: &str) -> Option<String> {
    Op::parse(op).map(|op| {
        let class = if op == Op::CreateSession {
            Class::ExpressOneZone
        } else {
            Class::Standard
        };
        op.iam_action(class).to_string()
    })
}

/// The doctor's client: one attempt a call, within the probe's timeout.
fn client(e: &Endpoint) -> aws_sdk_s3::Client {
    super::client::client(
        &e.clients,
        &Endpoint::once(),
        &crate::aws::QuotaPartition::new("latlab-doctor"),
        Default::default(),
    )
}

fn probes<'a>(c: &'a aws_sdk_s3::Client, n: &'a Names, embedded: bool) -> Vec<Call<'a>> {
    use aws_sdk_s3::primitives::ByteStream;
    let body = || ByteStream::from_static(b"latlab doctor");
    let b = &n.bucket;
    let mut v: Vec<Call<'a>> = vec![
        (
            "HeadBucket",
            GIVEN_BUCKETS,
            action("HeadBucket"),
            async move { judge(c.head_bucket().bucket(b).send().await) }.boxed(),
        ),
        (
            "PutObject",
            OBJECTS,
            action("PutObject"),
            async move {
                judge(
                    c.put_object()
                        .bucket(b)
                        .key(PROBE_KEY)
                        .body(body())
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "GetObject",
            OBJECTS,
            action("GetObject"),
            async move { judge(c.get_object().bucket(b).key(PROBE_KEY).send().await) }.boxed(),
        ),
        (
            "CreateMultipartUpload",
            MULTIPART,
            action("CreateMultipartUpload"),
            async move {
                judge(
                    c.create_multipart_upload()
                        .bucket(b)
                        .key(PROBE_KEY)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "UploadPart",
            MULTIPART,
            action("UploadPart"),
            async move {
                judge(
                    c.upload_part()
                        .bucket(b)
                        .key(PROBE_KEY)
                        .upload_id("latlab-doctor-probe")
                        .part_number(1)
                        .body(body())
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "CompleteMultipartUpload",
            MULTIPART,
            action("CompleteMultipartUpload"),
            async move {
                judge(
                    c.complete_multipart_upload()
                        .bucket(b)
                        .key(PROBE_KEY)
                        .upload_id("latlab-doctor-probe")
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "ListObjectsV2",
            OBJECT_CLEANUP,
            action("ListObjectsV2"),
            async move { judge(c.list_objects_v2().bucket(b).prefix("latlab/").send().await) }
                .boxed(),
        ),
        (
            "DeleteObject",
            OBJECT_CLEANUP,
            action("DeleteObject"),
            async move { judge(c.delete_object().bucket(b).key(PROBE_KEY).send().await) }.boxed(),
        ),
    ];
    if let Some(dir) = &n.directory_bucket {
        v.push((
            "CreateSession",
            SESSION,
            action("CreateSession"),
            async move { judge(c.create_session().bucket(dir).send().await) }.boxed(),
        ));
    }
    if embedded {
        let created = move || format!("{b}-created");
        v.push((
            "CreateBucket",
            CREATE_BUCKET,
            action("CreateBucket"),
            async move { judge(c.create_bucket().bucket(created()).send().await) }.boxed(),
        ));
        v.push((
            "DeleteBucket",
            DELETE_BUCKET,
            action("DeleteBucket"),
            async move { judge(c.delete_bucket().bucket(created()).send().await) }.boxed(),
        ));
    }
    v
}

/// The buckets given for another endpoint (latlab creates none there): each answers HeadBucket.
/// Without S3 Express the lab measures Standard, as it does when it runs.
async fn buckets_check(c: &aws_sdk_s3::Client, target: &super::target::S3Target) -> Check {
    let fix = "give --s3-bucket NAME and --s3-express-bucket NAME--AZID--x-s3 (latlab writes only under their latlab/ prefix)";
    let (Some(standard), Some(express)) = (&target.s3_bucket, &target.s3_express_bucket) else {
        return Check::fail(
            "s3 buckets",
            "not given: on another endpoint the S3 lab needs a Standard bucket and a directory bucket (it creates none)",
            fix,
            &[Part::Lab(LabKind::S3)],
        );
    };
    if let Err(e) = c.head_bucket().bucket(standard).send().await {
        return Check::fail(
            "s3 buckets",
            format!("{standard}: {}", crate::aws::error_line(&e)),
            "check --s3-bucket, the region and the credentials' access to it",
            &[Part::Lab(LabKind::S3)],
        );
    }
    match c.head_bucket().bucket(express).send().await {
        Ok(_) => Check::ok("s3 buckets", format!("{standard} and {express} answer")),
        Err(e) => match crate::aws::unsupported(&e) {
            Some(answered) => Check::warn(
                "s3 buckets",
                format!(
                    "{standard} answers; {express} does not ({answered}): S3 Express One Zone is not measured"
                ),
                "an endpoint with directory buckets (AWS, `latlab emulate`) to measure S3 Express",
                &[Part::Lab(LabKind::S3)],
            ),
            None => Check::fail(
                "s3 buckets",
                format!("{express}: {}", crate::aws::error_line(&e)),
                "check --s3-express-bucket (NAME--AZID--x-s3), the region and the credentials' access to it",
                &[Part::Lab(LabKind::S3)],
            ),
        },
    }
}

impl crate::labs::Doctor for super::S3Lab {
    async fn ping(cx: &DoctorContext<'_>) -> Option<Outcome> {
        let e = cx.endpoint?;
        Some(judge(
            client(e).head_bucket().bucket(&e.probe_name).send().await,
        ))
    }

    async fn ops(
        cx: &DoctorContext<'_>,
        _target: &super::target::S3Target,
    ) -> Option<(Check, Vec<crate::labs::check::Probe>)> {
        let e = cx.endpoint?;
        let c = client(e);
        let names = Names::of(e, cx.target);
        let probes = run_probes(probes(&c, &names, e.embedded)).await;
        let note = if names.directory_bucket.is_none() {
            " (CreateSession not called: give --s3-express-bucket for its zone)"
        } else {
            ""
        };
        let line = ops_check(
            "s3 ops",
            Part::Lab(LabKind::S3),
            &probes,
            e.embedded,
            note,
            &[],
        );
        Some((line, probes))
    }

    /// Its checks: the buckets given, when another endpoint answered.
    async fn doctor(cx: &DoctorContext<'_>, target: &super::target::S3Target) -> Vec<Check> {
        match cx.endpoint {
            Some(e) if !e.embedded => vec![buckets_check(&client(e), target).await],
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;
    use crate::labs::check::Probe;

    #[test]
    fn head_bucket_matters_only_where_buckets_are_given() {
        let probes = [Probe {
            op: "HeadBucket",
            need: GIVEN_BUCKETS,
            outcome: Outcome::Lacking("HTTP 500, not an AWS response".into()),
            action: action("HeadBucket"),
        }];
        let lab = Part::Lab(LabKind::S3);
        assert_eq!(
            ops_check("s3 ops", lab, &probes, true, "", &[]).status,
            Status::Warn
        );
        assert_eq!(
            ops_check("s3 ops", lab, &probes, false, "", &[]).status,
            Status::Fail
        );
    }
}
