//! The S3 lab's own doctor check: on an endpoint other than the embedded emulator, the buckets
//! given (latlab creates none there) answer HeadBucket. The endpoint's S3 operations are the
//! doctor's (`doctor/calls.rs`).

use crate::labs::check::{Check, DoctorContext, Part};
use crate::labs::{LabKind, TargetOptions};

/// Its checks: the buckets given, when another endpoint answered.
pub async fn checks(cx: &DoctorContext<'_>) -> Vec<Check> {
    match cx.endpoint {
        Some(e) if !e.embedded => vec![buckets_check(&e.s3, cx.target).await],
        _ => Vec::new(),
    }
}

/// The buckets given for another endpoint (latlab creates none there): each answers HeadBucket.
/// Without S3 Express the lab measures Standard, as it does when it runs.
pub async fn buckets_check(c: &aws_sdk_s3::Client, target: &TargetOptions) -> Check {
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
