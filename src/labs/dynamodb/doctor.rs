//! The DynamoDB lab's doctor: every DynamoDB and DynamoDB Streams operation the lab calls, each
//! called once on a table (or stream) that exists nowhere, so nothing is created on an endpoint
//! latlab does not own. An endpoint that answers with an AWS error (ResourceNotFoundException, a
//! validation or access error) serves the operation; one that answers anything else lacks it.

use futures_util::FutureExt;

use crate::labs::LabKind;
use crate::labs::check::{
    Call, Check, DoctorContext, Endpoint, Need, Outcome, Part, judge, ops_check, run_probes,
};
use latlab_core::services::dynamodb::Op;

const SETUP: Need = Need::new("the lab cannot create or find its table", false);
const WRITE: Need = Need::new("the writer cannot write", false);
const READ: Need = Need::new("the reader cannot read", true);
const KNOBS: Need = Need::new("the mode and capacity keys fail", true);
const CLEANUP: Need = Need::new("the run's table is left behind", true);
const STREAMS: Need = Need::new(
    "the Streams poller and Lambda cannot read the table's changes",
    true,
);
const DESTINATION: Need = Need::new("the fan-out consumer has no Kinesis destination", true);

fn client(e: &Endpoint) -> aws_sdk_dynamodb::Client {
    super::client::dynamodb(
        &e.clients,
        &Endpoint::once(),
        "latlab-doctor-dynamodb",
        std::sync::Arc::new(Default::default()),
    )
}

fn streams(e: &Endpoint) -> aws_sdk_dynamodbstreams::Client {
    super::client::streams(
        &e.clients,
        &Endpoint::once(),
        "latlab-doctor-dynamodbstreams",
        std::sync::Arc::new(Default::default()),
    )
}

fn action(op: Op) -> Option<String> {
    Some(op.iam_action())
}

fn probes<'a>(
    c: &'a aws_sdk_dynamodb::Client,
    s: &'a aws_sdk_dynamodbstreams::Client,
    e: &'a Endpoint,
) -> Vec<Call<'a>> {
    use aws_sdk_dynamodb::types::AttributeValue;
    let table = e.probe_name.as_str();
    let table_arn = format!(
        "arn:{}:dynamodb:{}:{}:table/{table}",
        e.partition(),
        e.region,
        e.account
    );
    let stream_arn = format!("{table_arn}/stream/2026-01-01T00:00:00.000");
    let kinesis_arn = format!(
        "arn:{}:kinesis:{}:{}:stream/{table}",
        e.partition(),
        e.region,
        e.account
    );
    let key = || AttributeValue::S("doctor".into());
    vec![
        (
            "DescribeTable",
            SETUP,
            action(Op::DescribeTable),
            async move { judge(c.describe_table().table_name(table).send().await) }.boxed(),
        ),
        (
            "ListTables",
            CLEANUP,
            action(Op::ListTables),
            async move { judge(c.list_tables().limit(1).send().await) }.boxed(),
        ),
        (
            "ListTagsOfResource",
            CLEANUP,
            action(Op::ListTagsOfResource),
            {
                let arn = table_arn.clone();
                async move { judge(c.list_tags_of_resource().resource_arn(arn).send().await) }
                    .boxed()
            },
        ),
        (
            "PutItem",
            WRITE,
            action(Op::PutItem),
            async move {
                judge(
                    c.put_item()
                        .table_name(table)
                        .item(super::table::KEY, key())
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "GetItem",
            READ,
            action(Op::GetItem),
            async move {
                judge(
                    c.get_item()
                        .table_name(table)
                        .key(super::table::KEY, key())
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "UpdateTable",
            KNOBS,
            action(Op::UpdateTable),
            async move {
                judge(
                    c.update_table()
                        .table_name(table)
                        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "DeleteTable",
            CLEANUP,
            action(Op::DeleteTable),
            async move { judge(c.delete_table().table_name(table).send().await) }.boxed(),
        ),
        (
            "DescribeKinesisStreamingDestination",
            DESTINATION,
            action(Op::DescribeKinesisStreamingDestination),
            async move {
                judge(
                    c.describe_kinesis_streaming_destination()
                        .table_name(table)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "EnableKinesisStreamingDestination",
            DESTINATION,
            action(Op::EnableKinesisStreamingDestination),
            async move {
                judge(
                    c.enable_kinesis_streaming_destination()
                        .table_name(table)
                        .stream_arn(kinesis_arn)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        ("DescribeStream", STREAMS, action(Op::DescribeStream), {
            let arn = stream_arn.clone();
            async move { judge(s.describe_stream().stream_arn(arn).send().await) }.boxed()
        }),
        (
            "GetShardIterator",
            STREAMS,
            action(Op::GetShardIterator),
            async move {
                judge(
                    s.get_shard_iterator()
                        .stream_arn(stream_arn)
                        .shard_id("shardId-00000000000000000000-00000000")
                        .shard_iterator_type(
                            aws_sdk_dynamodbstreams::types::ShardIteratorType::TrimHorizon,
                        )
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
    ]
}

/// The lab cannot run when it can neither find its table nor write.
const TOGETHER: &[(&[Need], &str)] = &[(&[SETUP, WRITE], "the lab cannot write to a table")];

impl crate::labs::Doctor for super::DynamoLab {
    async fn ping(cx: &DoctorContext<'_>) -> Option<Outcome> {
        let e = cx.endpoint?;
        Some(judge(
            client(e)
                .describe_table()
                .table_name(&e.probe_name)
                .send()
                .await,
        ))
    }

    async fn ops(
        cx: &DoctorContext<'_>,
        _target: &crate::labs::target::Nothing,
    ) -> Option<(Check, Vec<crate::labs::check::Probe>)> {
        let e = cx.endpoint?;
        let (c, s) = (client(e), streams(e));
        let probes = run_probes(probes(&c, &s, e)).await;
        let note = if e.embedded {
            ""
        } else {
            " (CreateTable not called: it would create a table)"
        };
        let line = ops_check(
            "dynamodb ops",
            Part::Lab(LabKind::Dynamodb),
            &probes,
            e.embedded,
            note,
            TOGETHER,
        );
        Some((line, probes))
    }
}
