//! The DynamoDB lab's part of a run's plan (`latlab plan`): the table it would create (tagged,
//! its stream on when a consumer reads it), the Kinesis data stream and fan-out consumers of its
//! Kinesis destination, every operation it calls with its IAM action and resource, and its
//! configuration at list price for the scenario's rates. It calls nothing: the table does not
//! exist before the run.

use super::config::{Billing, CdcKind, DynamoScenario};
use super::snapshot::{CdcCounts, CdcFigures, DynamoSnapshot, ReaderFigures};
use crate::lab_kit::plan::{LabPlan, PlanContext, Resource, Scope};
use latlab_core::services::dynamodb::Op;

/// What an hour of the scenario would look like, for its plan's cost: its rates held for an hour,
/// each write one unit per KB, each change consumer's GetRecords at its polling rate on one shard.
pub fn planned(s: &DynamoScenario, table: &str) -> DynamoSnapshot {
    let mut snap = DynamoSnapshot::planned(s, table);
    snap.seconds = 3600.0;
    let writes = u64::from(s.rate) * 3600;
    snap.writer.written = writes;
    snap.writer.units = (writes * s.item_size.div_ceil(1024)) as f64;
    let read_units = if s.consistent { 1.0 } else { 0.5 } * s.item_size.div_ceil(4096) as f64;
    snap.readers = vec![ReaderFigures {
        consistency: if s.consistent { "strong" } else { "eventual" }.into(),
        reads: u64::from(s.reads) * 3600,
        units: f64::from(s.reads) * 3600.0 * read_units,
        ..ReaderFigures::default()
    }];
    snap.cdc = s
        .cdc
        .iter()
        .map(|c| CdcFigures {
            name: c.name.clone(),
            how: c.kind,
            counts: CdcCounts::default(),
            latency: Default::default(),
            calls: match c.kind {
                CdcKind::StreamsPoller { interval_ms } => 3_600_000 / interval_ms.max(1),
                CdcKind::Lambda { .. } => 4 * 3600,
                CdcKind::FanOut => 0,
            },
            empty: 0,
            invocations: 0,
            sdk: Default::default(),
            status: String::new(),
            last_error: None,
            added: false,
            stopped: false,
        })
        .collect();
    snap
}

impl crate::labs::Planned for super::DynamoLab {
    async fn plan(
        cx: &PlanContext<'_>,
        s: &DynamoScenario,
        _target: &crate::labs::target::Nothing,
    ) -> LabPlan {
        let mut p = LabPlan::new("DynamoDB", "Amazon DynamoDB");
        let region = &cx.region;
        let table = super::table::table_name(&s.table_prefix, cx.run_id);
        let tags: Vec<(String, String)> = if cx.external() {
            crate::lab_kit::plan::tags(cx.run_id, "WHEN-CREATED")
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect()
        } else {
            Vec::new()
        };
        let streams = s.cdc.iter().any(|c| c.kind.reads_stream());
        let fan_out = s.cdc.iter().any(|c| c.kind == CdcKind::FanOut);
        p.creates.push(Resource {
            kind: "table".into(),
            name: table.clone(),
            detail: format!(
                "{}{}; deleted when the run ends",
                s.billing.describe(),
                if streams {
                    ", stream on (new images)"
                } else {
                    ""
                }
            ),
            billable: true,
            tags: tags.clone(),
            found: None,
        });
        let kinesis = super::table::stream_name(&s.table_prefix, cx.run_id);
        if fan_out {
            p.creates.push(Resource {
                kind: "Kinesis data stream".into(),
                name: kinesis.clone(),
                detail: "1 shard, provisioned: the table's Kinesis destination; deleted when the run ends".into(),
                billable: true,
                tags: tags.clone(),
                found: None,
            });
            for c in s.cdc.iter().filter(|c| c.kind == CdcKind::FanOut) {
                p.creates.push(Resource {
                    kind: "enhanced fan-out consumer".into(),
                    name: format!("latlab-{}-{}", cx.run_id, c.name),
                    detail: "on the destination stream; deregistered with it".into(),
                    billable: true,
                    tags: Vec::new(),
                    found: None,
                });
            }
        }
        let arn = format!("arn:aws:dynamodb:{region}:*:table/{table}");
        let stream_arn = format!("{arn}/stream/*");
        let mut call = |op: Op, scope: &str, why: &str, asked: bool| {
            p.call(
                op.name(),
                Some(op.iam_action()),
                vec![Scope::Arn(scope.to_string())],
                why,
                asked,
            );
        };
        call(
            Op::CreateTable,
            &arn,
            "creates the run's table, tagged",
            false,
        );
        call(Op::TagResource, &arn, "CreateTable's tags", false);
        call(
            Op::DescribeTable,
            &arn,
            "waits until the table is ACTIVE",
            false,
        );
        call(Op::PutItem, &arn, "the writer", false);
        call(Op::GetItem, &arn, "the reader", s.reads == 0);
        call(
            Op::UpdateTable,
            &arn,
            "keys that switch the billing mode or change capacity",
            true,
        );
        call(Op::DeleteTable, &arn, "deletes the table at the end", false);
        if streams {
            for (op, why) in [
                (Op::DescribeStream, "each stream reader finds the shards"),
                (Op::GetShardIterator, "each stream reader, per shard"),
                (Op::GetRecords, "the Streams poller and Lambda"),
            ] {
                call(op, &stream_arn, why, false);
            }
        }
        if fan_out {
            for (op, why) in [
                (
                    Op::EnableKinesisStreamingDestination,
                    "streams the table's changes to the Kinesis data stream",
                ),
                (
                    Op::DescribeKinesisStreamingDestination,
                    "waits until the destination is ACTIVE",
                ),
                (
                    Op::DisableKinesisStreamingDestination,
                    "ends the destination at the end",
                ),
            ] {
                call(op, &arn, why, false);
            }
            let k = format!("arn:aws:kinesis:{region}:*:stream/{kinesis}");
            for (op, scope, why) in [
                ("CreateStream", k.clone(), "the destination stream"),
                ("AddTagsToStream", k.clone(), "CreateStream's tags"),
                (
                    "DescribeStreamSummary",
                    k.clone(),
                    "waits until it is ACTIVE",
                ),
                ("ListShards", k.clone(), "the fan-out consumer's shards"),
                (
                    "PutRecords",
                    k.clone(),
                    "DynamoDB writes the changes (EnableKinesisStreamingDestination asks it of the caller)",
                ),
                ("RegisterStreamConsumer", k.clone(), "the fan-out consumer"),
                (
                    "DescribeStreamConsumer",
                    format!("{k}/consumer/*"),
                    "waits until it is ACTIVE",
                ),
                (
                    "SubscribeToShard",
                    format!("{k}/consumer/*"),
                    "the fan-out consumer",
                ),
                (
                    "DeregisterStreamConsumer",
                    format!("{k}/consumer/*"),
                    "at the end",
                ),
                (
                    "DeleteStream",
                    k,
                    "deletes the destination stream at the end",
                ),
            ] {
                p.call(
                    op,
                    Some(format!("kinesis:{op}")),
                    vec![Scope::Arn(scope)],
                    why,
                    false,
                );
            }
        }
        p.call(
            Op::ListTables.name(),
            Some(Op::ListTables.iam_action()),
            vec![Scope::Any],
            "latlab cleanup lists tables by latlab's prefix",
            true,
        );
        p.call(
            Op::ListTagsOfResource.name(),
            Some(Op::ListTagsOfResource.iam_action()),
            vec![Scope::Arn(format!(
                "arn:aws:dynamodb:{region}:*:table/{}-*",
                s.table_prefix
            ))],
            "latlab cleanup reads a table's run tag",
            true,
        );
        let snap = planned(s, &table);
        let (mut cost, keys) = super::cost::cost(&snap, cx.prices);
        cost.notes = vec![match s.billing {
            Billing::Provisioned { .. } => {
                "the provisioned capacity by the hour, whatever the writer uses of it".into()
            }
            Billing::OnDemand => format!(
                "request units at the scenario's rates: {}/s writes of {} B, {}/s reads",
                s.rate, s.item_size, s.reads
            ),
        }];
        p.cost = Some((cost, keys));
        p.notes.push(
            "keys pressed while it runs change the cost: M switches the billing mode, U/D the \
             provisioned capacity, y adds a DynamoDB Streams reader"
                .into(),
        );
        p
    }
}
