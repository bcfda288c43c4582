//! The S3 lab's part of a run's plan (`latlab plan`): the buckets it would create (on the
//! embedded emulator) or use (elsewhere: the user's, which latlab never creates or deletes), the
//! objects it writes under `latlab/RUN_ID/`, every operation it calls on each class, and its
//! configuration at list price. Its only calls are reads: HeadBucket on the buckets given.

use super::buckets::Buckets;
use super::config::S3Scenario;
use crate::lab_kit::plan::{LabPlan, PlanContext, Resource, Scope};
use latlab_core::services::s3::{Class, Op};

/// The latency the plan's request rates assume for one PUT or GET, in milliseconds, per class:
/// the middle of the published in-region first-byte figures (S3 Standard 20-30 ms, S3 Express
/// One Zone 5-6 ms; see WIRE-NOTES). An assumption, said on the cost: what the live loop really
/// reaches is measured while it runs.
pub const ASSUMED_MS: [(Class, f64); 2] = [(Class::Standard, 25.0), (Class::ExpressOneZone, 5.5)];

/// The plan's one read: HeadBucket on each bucket given (it must be there).
async fn check(cx: &PlanContext<'_>, p: &mut LabPlan) {
    let Some(clients) = cx.clients else { return };
    if p.uses.is_empty() || p.problem.is_some() {
        return;
    }
    debug_assert!(Op::HeadBucket.read_only());
    let client = super::client::client(
        clients,
        &crate::aws::RetrySettings::default(),
        &crate::aws::QuotaPartition::new("latlab-plan"),
        Default::default(),
    );
    let mut missing = Vec::new();
    for r in p.uses.iter_mut() {
        match client.head_bucket().bucket(&r.name).send().await {
            Ok(_) => r.found = Some("there".into()),
            Err(e) => {
                let line = crate::aws::error_line(&e);
                r.found = Some(format!("not reachable: {line}"));
                if crate::aws::unsupported(&e).is_none() {
                    missing.push(format!("{} ({line})", r.name));
                }
            }
        }
    }
    if !missing.is_empty() {
        p.problem = Some(format!("bucket not reachable: {}", missing.join(", ")));
    }
}

impl crate::labs::Planned for super::S3Lab {
    async fn plan(
        cx: &PlanContext<'_>,
        s: &S3Scenario,
        target: &super::target::S3Target,
    ) -> LabPlan {
        let mut p = LabPlan::new("S3", "Amazon S3 (Standard and Express One Zone)");
        let external = cx.external();
        let region = &cx.region;
        let prefix = super::object_prefix(cx.run_id);
        let buckets = match (&target.s3_bucket, &target.s3_express_bucket, external) {
            (Some(std), exp, _) => Some(Buckets {
                standard: std.clone(),
                express: exp.clone().unwrap_or_default(),
            }),
            (_, _, false) => None,
            _ => {
                p.problem = Some(
                    "on another endpoint the S3 lab needs --s3-bucket NAME (S3 Standard), and --s3-express-bucket NAME--AZID--x-s3 (a directory bucket) to measure S3 Express One Zone".into(),
                );
                Some(Buckets {
                    standard: "BUCKET".into(),
                    express: target
                        .s3_express_bucket
                        .clone()
                        .unwrap_or_else(|| "BUCKET--AZID--x-s3".into()),
                })
            }
        };
        let created = buckets.is_none();
        let b = buckets.unwrap_or_else(|| Buckets {
            standard: format!("latlab-standard-{}", cx.run_id),
            express: format!("latlab-express-{}--use1-az4--x-s3", cx.run_id),
        });
        let sizes: Vec<u64> = std::iter::once(s.payload)
            .chain(s.matrix.iter().map(|c| c.size))
            .collect();
        let multipart = sizes.iter().any(|z| *z >= s.transfer.threshold);
        for class in [Class::Standard, Class::ExpressOneZone] {
            let name = b.of(class).to_string();
            if name.is_empty() {
                p.notes.push(format!(
                    "S3 Express One Zone not measured: {}",
                    super::NO_EXPRESS_BUCKET
                ));
                continue;
            }
            let bucket = Resource {
                kind: match class {
                    Class::Standard => "bucket (S3 Standard)",
                    Class::ExpressOneZone => "directory bucket (S3 Express One Zone)",
                }
                .into(),
                name: name.clone(),
                detail: if created {
                    "in the embedded emulator; deleted when the run ends".into()
                } else {
                    "given; latlab never creates or deletes it".into()
                },
                billable: false,
                tags: Vec::new(),
                found: None,
            };
            if created {
                p.creates.push(bucket);
            } else {
                p.uses.push(bucket);
            }
            p.creates.push(Resource {
                kind: "objects".into(),
                name: format!("{name}/{prefix}"),
                detail: format!(
                    "{} loop(s) × {} keys of the payload on screen ({}){}; deleted when the run ends",
                    s.concurrency,
                    super::LIVE_KEYS_PER_LOOP,
                    latlab_core::units::format_bytes(s.payload),
                    if s.matrix.is_empty() {
                        String::new()
                    } else {
                        format!(", and the matrix's {} sets", s.matrix.len())
                    }
                ),
                billable: true,
                tags: Vec::new(),
                found: None,
            });
            let (bucket_arn, object_arn) = match class {
                Class::Standard => (
                    format!("arn:aws:s3:::{name}"),
                    format!("arn:aws:s3:::{name}/{}*", super::PREFIX),
                ),
                Class::ExpressOneZone => {
                    let arn = format!("arn:aws:s3express:{region}:*:bucket/{name}");
                    (arn.clone(), arn)
                }
            };
            let mut call = |op: Op, why: &str, asked: bool| {
                let on = if op.on_object() {
                    &object_arn
                } else {
                    &bucket_arn
                };
                p.call(
                    op.name(),
                    Some(op.iam_action(class).to_string()),
                    vec![Scope::Arn(on.clone())],
                    why,
                    asked,
                );
            };
            if created {
                call(Op::CreateBucket, "creates the bucket", false);
                call(Op::DeleteBucket, "deletes the bucket at the end", false);
            } else {
                call(Op::HeadBucket, "checks the bucket is there", false);
            }
            if class == Class::ExpressOneZone {
                call(
                    Op::CreateSession,
                    "the SDK's session for the directory bucket",
                    false,
                );
            }
            call(Op::PutObject, "the PUT/GET loop", false);
            call(Op::GetObject, "the PUT/GET loop", false);
            for op in [
                Op::CreateMultipartUpload,
                Op::UploadPart,
                Op::CompleteMultipartUpload,
            ] {
                call(
                    op,
                    if multipart {
                        "objects at or above the transfer threshold"
                    } else {
                        "a payload raised with ] to the transfer threshold"
                    },
                    !multipart,
                );
            }
            call(
                Op::ListObjectsV2,
                "lists the run's objects at the end",
                false,
            );
            call(
                Op::DeleteObject,
                "deletes the run's objects at the end",
                false,
            );
        }
        p.notes.push(format!(
            "objects go under {prefix} only: the clean-up and `latlab cleanup` delete nothing else"
        ));
        p.notes.push(
            "objects carry no object tags: their prefix names the run, and the PUT measured stays the plain PUT an application makes".into(),
        );
        check(cx, &mut p).await;
        let ms = ASSUMED_MS
            .iter()
            .find(|(c, _)| *c == s.class)
            .map_or(25.0, |(_, ms)| *ms);
        let per_loop = 1000.0 / (2.0 * ms);
        let rate = per_loop * s.concurrency as f64;
        p.cost = Some(super::cost::priced(
            &super::cost::Priced {
                class: s.class,
                payload_bytes: s.payload,
                concurrency: s.concurrency,
                put_per_sec: rate,
                get_per_sec: rate,
                rates: format!(
                    "assumed for the plan: {} loop(s), each a PUT then a GET of about {ms} ms (published in-region figures for {}), so {rate:.1}/s each; a run prices what it measures",
                    s.concurrency,
                    s.class.storage_class()
                ),
            },
            cx.prices,
        ));
        p
    }
}
