//! The Kinesis lab's doctor checks: every Kinesis operation it makes, called once on a stream
//! that does not exist (`latlab-doctor-probe-<random hex>`, its ARNs in the credentials' account
//! or 000000000000), so that an endpoint that implements it answers with an AWS error and
//! nothing is created (CreateStream and DeleteStream only on the embedded emulator, which is
//! thrown away afterwards), with what each missing one costs the lab; then the stream given with
//! --stream, found and ACTIVE (only read).

use futures_util::FutureExt;

use crate::labs::LabKind;
use crate::labs::check::{
    Call, Check, DoctorContext, Endpoint, Need, Outcome, Part, judge, ops_check, run_probes,
};
use latlab_core::services::kinesis::Op;

/// The lab finds its stream's shards with them.
pub const SETUP: Need = Need::new("the lab cannot list its stream's shards", false);
pub const PUT_RECORD: Need = Need::new("a producer in PutRecord mode stops", true);
pub const PUT_RECORDS: Need = Need::new("a producer in PutRecords mode stops", true);
/// The GetRecords pollers and Lambda's standard-iterator consumers.
pub const POLLING: Need = Need::new(
    "the GetRecords pollers and Lambda (standard) consumers stop; the others run",
    true,
);
/// Fan-out consumers (enhanced fan-out and Lambda on EFO), which stop without it
/// (RegisterStreamConsumer, DescribeStreamConsumer for ACTIVE, SubscribeToShard).
pub const FAN_OUT: Need = Need::new(
    "the fan-out and Lambda (EFO) consumers stop; the others run",
    true,
);
pub const RESHARD: Need = Need::new("resharding (its keys, a scenario's reshards) fails", true);
pub const CONSUMER_CLEANUP: Need = Need::new("fan-out consumers stay registered after a run", true);
pub const CREATE_STREAM: Need = Need::new("the lab cannot create its stream", false);
pub const DELETE_STREAM: Need = Need::new("the run's stream is left behind", true);

/// What the lab cannot do without every operation of a group.
const TOGETHER: &[(&[Need], &str)] = &[
    (&[PUT_RECORD, PUT_RECORDS], "no producer can write"),
    (&[POLLING, FAN_OUT], "no consumer can read"),
];

/// Names that exist nowhere, for one run of the doctor.
struct Names {
    stream: String,
    stream_arn: String,
    consumer_arn: String,
}

impl Names {
    fn of(e: &Endpoint) -> Names {
        let stream = e.probe_name.clone();
        let stream_arn = format!(
            "arn:{}:kinesis:{}:{}:stream/{stream}",
            e.partition(),
            e.region,
            e.account
        );
        Names {
            consumer_arn: format!("{stream_arn}/consumer/latlab-doctor-probe:1700000000"),
            stream_arn,
            stream,
        }
    }
}

/// The IAM action an operation's call asks for.
fn action(op: &str) -> Option<String> {
    Op::parse(op).map(Op::iam_action)
}

/// The doctor's client: one attempt a call, within the probe's timeout.
fn client(e: &Endpoint) -> aws_sdk_kinesis::Client {
    super::client::client(
        &e.clients,
        &Endpoint::once(),
        &crate::aws::QuotaPartition::new("latlab-doctor"),
        Default::default(),
    )
}

fn probes<'a>(c: &'a aws_sdk_kinesis::Client, n: &'a Names, embedded: bool) -> Vec<Call<'a>> {
    use aws_sdk_kinesis::primitives::Blob;
    use aws_sdk_kinesis::types::{
        PutRecordsRequestEntry, ScalingType, ShardIteratorType, StartingPosition,
    };
    let data = || Blob::new(&b"latlab doctor"[..]);
    let mut v: Vec<Call<'a>> = vec![
        (
            "DescribeStreamSummary",
            SETUP,
            action("DescribeStreamSummary"),
            async move {
                judge(
                    c.describe_stream_summary()
                        .stream_name(&n.stream)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "ListShards",
            SETUP,
            action("ListShards"),
            async move { judge(c.list_shards().stream_name(&n.stream).send().await) }.boxed(),
        ),
        (
            "PutRecord",
            PUT_RECORD,
            action("PutRecord"),
            async move {
                judge(
                    c.put_record()
                        .stream_name(&n.stream)
                        .partition_key("doctor")
                        .data(data())
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "PutRecords",
            PUT_RECORDS,
            action("PutRecords"),
            async move {
                let entry = PutRecordsRequestEntry::builder()
                    .partition_key("doctor")
                    .data(data())
                    .build()
                    .expect("the entry's fields are set");
                judge(
                    c.put_records()
                        .stream_name(&n.stream)
                        .records(entry)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "GetShardIterator",
            POLLING,
            action("GetShardIterator"),
            async move {
                judge(
                    c.get_shard_iterator()
                        .stream_name(&n.stream)
                        .shard_id("shardId-000000000000")
                        .shard_iterator_type(ShardIteratorType::TrimHorizon)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "GetRecords",
            POLLING,
            action("GetRecords"),
            async move {
                judge(
                    c.get_records()
                        .shard_iterator("latlab-doctor-probe-not-an-iterator")
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "RegisterStreamConsumer",
            FAN_OUT,
            action("RegisterStreamConsumer"),
            async move {
                judge(
                    c.register_stream_consumer()
                        .stream_arn(&n.stream_arn)
                        .consumer_name("latlab-doctor-probe")
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "DescribeStreamConsumer",
            FAN_OUT,
            action("DescribeStreamConsumer"),
            async move {
                judge(
                    c.describe_stream_consumer()
                        .consumer_arn(&n.consumer_arn)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "SubscribeToShard",
            FAN_OUT,
            action("SubscribeToShard"),
            async move {
                let from = StartingPosition::builder()
                    .r#type(ShardIteratorType::Latest)
                    .build()
                    .expect("the type is set");
                judge(
                    c.subscribe_to_shard()
                        .consumer_arn(&n.consumer_arn)
                        .shard_id("shardId-000000000000")
                        .starting_position(from)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "DeregisterStreamConsumer",
            CONSUMER_CLEANUP,
            action("DeregisterStreamConsumer"),
            async move {
                judge(
                    c.deregister_stream_consumer()
                        .consumer_arn(&n.consumer_arn)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "UpdateShardCount",
            RESHARD,
            action("UpdateShardCount"),
            async move {
                judge(
                    c.update_shard_count()
                        .stream_name(&n.stream)
                        .target_shard_count(2)
                        .scaling_type(ScalingType::UniformScaling)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
    ];
    if embedded {
        let created = move || format!("{}-created", n.stream);
        v.push((
            "CreateStream",
            CREATE_STREAM,
            action("CreateStream"),
            async move {
                judge(
                    c.create_stream()
                        .stream_name(created())
                        .shard_count(1)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ));
        v.push((
            "DeleteStream",
            DELETE_STREAM,
            action("DeleteStream"),
            async move { judge(c.delete_stream().stream_name(created()).send().await) }.boxed(),
        ));
    }
    v
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

impl crate::labs::Doctor for super::KinesisLab {
    async fn ping(cx: &DoctorContext<'_>) -> Option<Outcome> {
        let e = cx.endpoint?;
        let c = client(e);
        let names = Names::of(e);
        Some(judge(
            c.describe_stream_summary()
                .stream_name(&names.stream)
                .send()
                .await,
        ))
    }

    async fn ops(
        cx: &DoctorContext<'_>,
        target: &super::target::KinesisTarget,
    ) -> Option<(Check, Vec<crate::labs::check::Probe>)> {
        let e = cx.endpoint?;
        let c = client(e);
        let names = Names::of(e);
        let probes = run_probes(probes(&c, &names, e.embedded)).await;
        let note = match (e.embedded, &target.stream) {
            (true, _) => "",
            (false, Some(_)) => {
                " (CreateStream and DeleteStream not called; with --stream the lab needs neither)"
            }
            (false, None) => {
                " (CreateStream and DeleteStream not called: they would create and delete a stream)"
            }
        };
        let line = ops_check(
            "kinesis ops",
            Part::Lab(LabKind::Kinesis),
            &probes,
            e.embedded,
            note,
            TOGETHER,
        );
        Some((line, probes))
    }

    /// Its checks: the stream given, when the endpoint answered.
    async fn doctor(cx: &DoctorContext<'_>, target: &super::target::KinesisTarget) -> Vec<Check> {
        match (cx.endpoint, &target.stream) {
            (Some(e), Some(stream)) => vec![stream_check(&client(e), stream, &e.at).await],
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;
    use crate::labs::check::Probe;

    /// The part a check limits is the one it is given.
    fn lab() -> Part {
        Part::Lab(LabKind::Kinesis)
    }

    fn p(op: &'static str, need: Need, outcome: Outcome) -> Probe {
        Probe {
            op,
            need,
            outcome,
            action: action(op),
        }
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

    fn check(probes: &[Probe], note: &str) -> Check {
        ops_check("kinesis ops", lab(), probes, false, note, TOGETHER)
    }

    #[test]
    fn every_operation_answering_is_ok() {
        let probes = [
            answered("ListShards", SETUP),
            answered("PutRecord", PUT_RECORD),
        ];
        let c = check(&probes, " (note)");
        assert_eq!(c.status, Status::Ok);
        assert_eq!(c.found, "2 of 2 answer (note)");
    }

    #[test]
    fn a_consumer_kind_lacking_is_a_warning_and_the_setup_lacking_a_failure() {
        let probes = [
            answered("ListShards", SETUP),
            lacking("RegisterStreamConsumer", FAN_OUT),
            lacking("SubscribeToShard", FAN_OUT),
        ];
        let c = check(&probes, "");
        assert_eq!(c.status, Status::Warn);
        assert!(
            c.found.starts_with("1 of 3 answer; RegisterStreamConsumer and SubscribeToShard do not answer (HTTP 500, not an AWS response): the fan-out"),
            "{}",
            c.found
        );
        assert_eq!(c.labs, vec![lab()]);
        let probes = [lacking("ListShards", SETUP)];
        assert_eq!(check(&probes, "").status, Status::Fail);
    }

    #[test]
    fn without_both_put_operations_or_every_consumer_kind_the_lab_cannot_run() {
        let one = [
            lacking("PutRecord", PUT_RECORD),
            answered("PutRecords", PUT_RECORDS),
        ];
        assert_eq!(check(&one, "").status, Status::Warn);
        let both = [
            lacking("PutRecord", PUT_RECORD),
            lacking("PutRecords", PUT_RECORDS),
        ];
        let c = check(&both, "");
        assert_eq!(c.status, Status::Fail);
        assert!(c.found.ends_with("no producer can write"), "{}", c.found);
        let readers = [
            lacking("GetRecords", POLLING),
            lacking("SubscribeToShard", FAN_OUT),
        ];
        assert_eq!(check(&readers, "").status, Status::Fail);
    }

    /// The permissions line, made of this lab's probes and another's.
    #[test]
    fn each_denied_action_is_named_with_the_policy_line_that_allows_it() {
        let scenario = crate::scenario::Scenario::resolve("tour").unwrap();
        let plan = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(crate::run::plan::offline(&scenario, &Default::default()))
            .unwrap();
        let need = crate::labs::check::Need::new("x", true);
        let p = |op: &'static str, action: &str, code: &str| Probe {
            op,
            need,
            outcome: crate::labs::check::Outcome::Answered(code.into()),
            action: Some(action.into()),
        };
        let k = vec![
            p("GetRecords", "kinesis:GetRecords", "AccessDeniedException"),
            p(
                "ListShards",
                "kinesis:ListShards",
                "ResourceNotFoundException",
            ),
        ];
        let s = vec![p("PutObject", "s3:PutObject", "AccessDenied")];
        let both = [(LabKind::Kinesis, k.clone()), (LabKind::S3, s)];
        let c = crate::doctor::ops::denied_check(&both, &plan).expect("a check");
        assert_eq!(c.status, Status::Fail);
        let policy = crate::lab_kit::plan::iam::policy_text(&plan);
        let line = policy
            .lines()
            .position(|l| l.contains("\"kinesis:GetRecords\""))
            .unwrap()
            + 1;
        // The statement it is in: the last Sid above its line.
        let sid = policy
            .lines()
            .take(line)
            .filter_map(|l| l.trim().strip_prefix("\"Sid\": \""))
            .last()
            .map(|s| s.trim_end_matches("\",").to_string())
            .unwrap();
        assert!(
            c.found.starts_with(&format!(
                "2 actions denied: kinesis:GetRecords (allowed by {sid} (line {line} of `latlab iam-policy tour`): \"kinesis:GetRecords\" on \"arn:aws:kinesis:*:*:stream/latlab-tour-latlab-*\")"
            )),
            "{}\n{policy}",
            c.found
        );
        assert!(c.found.contains("s3:PutObject (allowed by "), "{}", c.found);
        assert!(c.fix.unwrap().contains("latlab iam-policy tour"));
        assert_eq!(
            c.labs,
            vec![Part::Lab(LabKind::Kinesis), Part::Lab(LabKind::S3)]
        );
        // Nothing denied: no line.
        assert!(
            crate::doctor::ops::denied_check(&[(LabKind::Kinesis, k[1..].to_vec())], &plan)
                .is_none()
        );
    }
}
