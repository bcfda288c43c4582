//! Which operations an endpoint answers, read from one call each, and what each missing one
//! costs a lab: one line per service.
//!
//! An endpoint that implements an operation answers the probe's call with an AWS error
//! (ResourceNotFoundException, NoSuchBucket, a validation or access error: any error with a
//! code). One that lacks it answers something else (an HTML page, an unknown-operation code), as
//! `crate::aws::unsupported` reads it: the reading the labs make when they decide to stop a
//! consumer or measure S3 Standard only.

use std::time::Duration;

use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;

use super::{Check, Part};

/// How long one probe call may take, connecting included.
pub(super) const CALL_TIMEOUT: Duration = Duration::from_secs(3);

/// What one call came back with.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// An AWS answer: success, or an error with a code (the code).
    Answered(String),
    /// An answer that is not the operation's: what came back.
    Lacking(String),
    /// No answer at all: the transport's error, or a timeout.
    Silent(String),
}

/// Reads a call's result the way the labs read it.
pub(super) fn judge<T, E>(
    r: Result<T, SdkError<E, aws_smithy_runtime_api::http::Response>>,
) -> Outcome
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    let e = match r {
        Ok(_) => return Outcome::Answered("OK".into()),
        Err(e) => e,
    };
    if let Some(answered) = crate::aws::unsupported(&e) {
        return Outcome::Lacking(answered);
    }
    match &e {
        SdkError::ServiceError(s) if s.err().code().is_some() => {
            Outcome::Answered(s.err().code().unwrap_or_default().to_string())
        }
        SdkError::TimeoutError(_) => {
            Outcome::Silent(format!("no answer within {} s", CALL_TIMEOUT.as_secs()))
        }
        SdkError::DispatchFailure(_) => Outcome::Silent(crate::aws::error_line(&e)),
        _ => Outcome::Lacking(crate::aws::error_line(&e)),
    }
}

/// Which part of a lab needs an operation, and what happens without it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// The Kinesis lab finds its stream's shards with it.
    Setup,
    PutRecord,
    PutRecords,
    /// The GetRecords pollers and Lambda's standard-iterator consumers.
    Polling,
    /// Fan-out consumers (enhanced fan-out and Lambda on EFO), which stop without it
    /// (RegisterStreamConsumer, DescribeStreamConsumer for ACTIVE, SubscribeToShard).
    FanOut,
    Reshard,
    ConsumerCleanup,
    CreateStream,
    DeleteStream,
    /// The S3 lab's PUTs and GETs.
    Objects,
    /// The buckets given with --s3-bucket and --s3-express-bucket are checked with it.
    GivenBuckets,
    Multipart,
    ObjectCleanup,
    Session,
    CreateBucket,
    DeleteBucket,
}

impl Need {
    /// What is lost without it, and whether the lab can still run.
    fn effect(self, embedded: bool) -> (&'static str, bool) {
        match self {
            Need::Setup => ("the lab cannot list its stream's shards", false),
            Need::PutRecord => ("a producer in PutRecord mode stops", true),
            Need::PutRecords => ("a producer in PutRecords mode stops", true),
            Need::Polling => (
                "the GetRecords pollers and Lambda (standard) consumers stop; the others run",
                true,
            ),
            Need::FanOut => (
                "the fan-out and Lambda (EFO) consumers stop; the others run",
                true,
            ),
            Need::Reshard => ("resharding (its keys, a scenario's reshards) fails", true),
            Need::ConsumerCleanup => ("fan-out consumers stay registered after a run", true),
            Need::CreateStream => ("the lab cannot create its stream", false),
            Need::DeleteStream => ("the run's stream is left behind", true),
            Need::Objects => ("the lab cannot move objects", false),
            Need::GivenBuckets if embedded => (
                "the lab uses it only on buckets given with --s3-bucket",
                true,
            ),
            Need::GivenBuckets => ("the lab cannot check the buckets it is given", false),
            Need::Multipart => ("payloads of 8 MiB and over (multipart uploads) fail", true),
            Need::ObjectCleanup => ("the run's objects stay in the buckets", true),
            Need::Session => (
                "S3 Express One Zone is not measured (Standard is) and the S3 matrix does not start",
                true,
            ),
            Need::CreateBucket => ("the lab cannot create its buckets", false),
            Need::DeleteBucket => ("the run's buckets are left behind", true),
        }
    }
}

/// One operation's probe.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    pub op: &'static str,
    pub need: Need,
    pub outcome: Outcome,
}

/// One line for a service's operations: how many answer, and for those that do not, what they
/// answered and what that costs the lab. FAIL when the lab cannot run without them.
pub fn ops_check(
    name: &'static str,
    lab: Part,
    probes: &[Probe],
    embedded: bool,
    note: &str,
) -> Check {
    let answering = probes
        .iter()
        .filter(|p| matches!(p.outcome, Outcome::Answered(_)))
        .count();
    let counted = format!("{answering} of {} answer", probes.len());
    let missing: Vec<&Probe> = probes
        .iter()
        .filter(|p| !matches!(p.outcome, Outcome::Answered(_)))
        .collect();
    if missing.is_empty() {
        return Check::ok(name, format!("{counted}{note}"));
    }
    // Operations that cost the same, named together.
    let mut groups: Vec<(Need, Vec<&Probe>)> = Vec::new();
    for p in &missing {
        match groups.iter_mut().find(|(n, _)| *n == p.need) {
            Some((_, list)) => list.push(p),
            None => groups.push((p.need, vec![p])),
        }
    }
    let lacks = |n: Need| groups.iter().any(|(g, _)| *g == n);
    let mut runs = groups.iter().all(|(n, _)| n.effect(embedded).1);
    let mut parts: Vec<String> = groups
        .iter()
        .map(|(need, list)| {
            let ops: Vec<&str> = list.iter().map(|p| p.op).collect();
            let verb = if ops.len() == 1 { "does" } else { "do" };
            let answered = match &list[0].outcome {
                Outcome::Lacking(a) | Outcome::Silent(a) | Outcome::Answered(a) => a,
            };
            format!(
                "{} {verb} not answer ({answered}): {}",
                ops.join(" and "),
                need.effect(embedded).0
            )
        })
        .collect();
    if lacks(Need::PutRecord) && lacks(Need::PutRecords) {
        runs = false;
        parts.push("no producer can write".into());
    }
    if lacks(Need::Polling) && lacks(Need::FanOut) {
        runs = false;
        parts.push("no consumer can read".into());
    }
    let found = format!("{counted}; {}", parts.join("; "));
    let fix = if embedded {
        "leave out --lacking (it makes the embedded emulator answer as an endpoint without them)"
    } else {
        "an endpoint that implements them (`latlab emulate` does), or a scenario without what needs them"
    };
    if runs {
        Check::warn(name, found, fix, &[lab])
    } else {
        Check::fail(name, found, fix, &[lab])
    }
}

/// Whether an answer's code says the caller is not allowed.
fn denied(code: &str) -> bool {
    matches!(
        code,
        "AccessDenied" | "AccessDeniedException" | "UnauthorizedOperation" | "NotAuthorized"
    )
}

/// One line for the permissions the probes were refused: each denied action with the line of
/// the policy (`plan`'s, `latlab iam-policy SCENARIO`) that would allow it. None when no call
/// was denied.
pub fn denied_check(kinesis: &[Probe], s3: &[Probe], plan: &crate::plan::Plan) -> Option<Check> {
    use crate::services::{kinesis::Op as K, s3::Class, s3::Op as S};
    let is_denied = |p: &&Probe| matches!(&p.outcome, Outcome::Answered(c) if denied(c));
    let mut actions: Vec<String> = kinesis
        .iter()
        .filter(is_denied)
        .filter_map(|p| K::parse(p.op).map(K::iam_action))
        .collect();
    actions.extend(s3.iter().filter(is_denied).filter_map(|p| {
        S::parse(p.op).map(|op| {
            let class = if op == S::CreateSession {
                Class::ExpressOneZone
            } else {
                Class::Standard
            };
            op.iam_action(class).to_string()
        })
    }));
    actions.sort();
    actions.dedup();
    if actions.is_empty() {
        return None;
    }
    let lines: Vec<String> = actions
        .iter()
        .map(|a| match crate::plan::iam::allowing(plan, a) {
            Some(line) => format!("{a} (allowed by {line})"),
            None => format!(
                "{a} (not in the policy: no lab of `{}` calls it)",
                plan.scenario
            ),
        })
        .collect();
    let mut labs = Vec::new();
    if kinesis.iter().any(|p| is_denied(&p)) {
        labs.push(Part::of(crate::services::Service::Kinesis));
    }
    if s3.iter().any(|p| is_denied(&p)) {
        labs.push(Part::of(crate::services::Service::S3));
    }
    Some(Check::fail(
        "permissions",
        format!(
            "{} action{} denied: {}",
            actions.len(),
            if actions.len() == 1 { "" } else { "s" },
            lines.join("; ")
        ),
        format!(
            "attach the policy `latlab iam-policy {}` prints to these credentials' user or role",
            plan.scenario
        ),
        &labs,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;
    use crate::labs::LabKind;

    /// The part a check limits is the one it is given: any lab will do.
    fn lab() -> Part {
        Part::Lab(LabKind::ALL[0])
    }

    fn p(op: &'static str, need: Need, outcome: Outcome) -> Probe {
        Probe { op, need, outcome }
    }

    fn answered(op: &'static str, need: Need) -> Probe {
        p(
            op,
            need,
            Outcome::Answered("ResourceNotFoundException".into()),
        )
    }

    fn lacking(op: &'static str, need: Need) -> Probe {
        p(
            op,
            need,
            Outcome::Lacking("HTTP 500, not an AWS response".into()),
        )
    }

    #[test]
    fn every_operation_answering_is_ok() {
        let probes = [
            answered("ListShards", Need::Setup),
            answered("PutRecord", Need::PutRecord),
        ];
        let c = ops_check("kinesis ops", lab(), &probes, false, " (note)");
        assert_eq!(c.status, Status::Ok);
        assert_eq!(c.found, "2 of 2 answer (note)");
    }

    #[test]
    fn a_consumer_kind_lacking_is_a_warning_and_the_setup_lacking_a_failure() {
        let probes = [
            answered("ListShards", Need::Setup),
            lacking("RegisterStreamConsumer", Need::FanOut),
            lacking("SubscribeToShard", Need::FanOut),
        ];
        let c = ops_check("kinesis ops", lab(), &probes, false, "");
        assert_eq!(c.status, Status::Warn);
        assert!(
            c.found.starts_with("1 of 3 answer; RegisterStreamConsumer and SubscribeToShard do not answer (HTTP 500, not an AWS response): the fan-out"),
            "{}",
            c.found
        );
        assert_eq!(c.labs, vec![lab()]);
        let probes = [lacking("ListShards", Need::Setup)];
        assert_eq!(
            ops_check("kinesis ops", lab(), &probes, false, "").status,
            Status::Fail
        );
    }

    #[test]
    fn without_both_put_operations_or_every_consumer_kind_the_lab_cannot_run() {
        let one = [
            lacking("PutRecord", Need::PutRecord),
            answered("PutRecords", Need::PutRecords),
        ];
        assert_eq!(ops_check("k", lab(), &one, false, "").status, Status::Warn);
        let both = [
            lacking("PutRecord", Need::PutRecord),
            lacking("PutRecords", Need::PutRecords),
        ];
        let c = ops_check("k", lab(), &both, false, "");
        assert_eq!(c.status, Status::Fail);
        assert!(c.found.ends_with("no producer can write"), "{}", c.found);
        let readers = [
            lacking("GetRecords", Need::Polling),
            lacking("SubscribeToShard", Need::FanOut),
        ];
        assert_eq!(
            ops_check("k", lab(), &readers, false, "").status,
            Status::Fail
        );
    }

    #[test]
    fn each_denied_action_is_named_with_the_policy_line_that_allows_it() {
        let scenario = crate::scenario::Scenario::resolve("tour").unwrap();
        let plan = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(crate::run::plan::offline(&scenario, &Default::default()))
            .unwrap();
        let denied = |op| {
            p(
                op,
                Need::Polling,
                Outcome::Answered("AccessDeniedException".into()),
            )
        };
        let k = [denied("GetRecords"), answered("ListShards", Need::Setup)];
        let s = [p(
            "PutObject",
            Need::Objects,
            Outcome::Answered("AccessDenied".into()),
        )];
        let c = denied_check(&k, &s, &plan).expect("a check");
        assert_eq!(c.status, Status::Fail);
        let policy = crate::plan::iam::policy_text(&plan);
        let line = policy
            .lines()
            .position(|l| l.contains("\"kinesis:GetRecords\""))
            .unwrap()
            + 1;
        assert!(
            c.found.starts_with(&format!(
                "2 actions denied: kinesis:GetRecords (allowed by Latlab2 (line {line} of `latlab iam-policy tour`): \"kinesis:GetRecords\" on \"arn:aws:kinesis:*:*:stream/latlab-tour-latlab-*\")"
            )),
            "{}\n{policy}",
            c.found
        );
        assert!(c.found.contains("s3:PutObject (allowed by "), "{}", c.found);
        assert!(c.fix.unwrap().contains("latlab iam-policy tour"));
        // Nothing denied: no line.
        assert!(denied_check(&k[1..], &[], &plan).is_none());
    }

    #[test]
    fn head_bucket_matters_only_where_buckets_are_given() {
        let probes = [lacking("HeadBucket", Need::GivenBuckets)];
        assert_eq!(
            ops_check("s3 ops", lab(), &probes, true, "").status,
            Status::Warn
        );
        assert_eq!(
            ops_check("s3 ops", lab(), &probes, false, "").status,
            Status::Fail
        );
    }
}
