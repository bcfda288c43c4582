//! The Kinesis lab's own doctor check: the stream given with --stream, found and ACTIVE (only
//! read). The endpoint's Kinesis operations are the doctor's (`doctor/calls.rs`).

use crate::labs::LabKind;
use crate::labs::check::{Check, DoctorContext, Part};

/// Its checks: the stream given, when the endpoint answered.
pub async fn checks(cx: &DoctorContext<'_>) -> Vec<Check> {
    match (cx.endpoint, &cx.target.stream) {
        (Some(e), Some(stream)) => vec![stream_check(&e.kinesis, stream, &e.at).await],
        _ => Vec::new(),
    }
}

/// The stream given with --stream: found, and its state.
pub async fn stream_check(c: &aws_sdk_kinesis::Client, stream: &str, at: &str) -> Check {
    match c.describe_stream_summary().stream_name(stream).send().await {
        Ok(out) => match out.stream_description_summary() {
            Some(s) if s.stream_status().as_str() == "ACTIVE" => Check::ok(
                "stream",
                format!(
                    "{stream} is ACTIVE with {} open shard(s)",
                    s.open_shard_count()
                ),
            ),
            Some(s) => Check::warn(
                "stream",
                format!(
                    "{stream} is {} (the lab waits until it is ACTIVE)",
                    s.stream_status().as_str()
                ),
                "wait for it to be ACTIVE",
                &[Part::Lab(LabKind::Kinesis)],
            ),
            None => Check::fail(
                "stream",
                format!("{stream}: DescribeStreamSummary answered no summary"),
                "an endpoint that answers DescribeStreamSummary",
                &[Part::Lab(LabKind::Kinesis)],
            ),
        },
        Err(e) => Check::fail(
            "stream",
            format!("{stream} at {at}: {}", crate::aws::error_line(&e)),
            "check --stream and the region; leave --stream out to have the lab create one",
            &[Part::Lab(LabKind::Kinesis)],
        ),
    }
}
