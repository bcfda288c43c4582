//! The Kinesis lab's part of a run's plan (`latlab plan`): the stream it would create (or the
//! one it is given), each enhanced fan-out consumer it would register, every operation its
//! probes, keys and clean-up call, and its configuration at list price. Its only calls are
//! reads: DescribeStreamSummary on the stream it would create or use.

use super::config::{KinesisScenario, ProducerMode};
use super::setup::{owned_name, sanitize};
use crate::lab_kit::plan::{LabPlan, PlanContext, Resource, Scope};
use latlab_core::services::kinesis::Op;

/// The plan's one read: DescribeStreamSummary on the stream it would use (it must be there) or
/// create (its name must be free).
async fn check(cx: &PlanContext<'_>, p: &mut LabPlan, stream: &str, given: bool) {
    let Some(clients) = cx.clients else { return };
    debug_assert!(Op::DescribeStreamSummary.read_only());
    let client = super::client::client(
        clients,
        &crate::aws::RetrySettings::default(),
        &crate::aws::QuotaPartition::new("latlab-plan"),
        Default::default(),
    );
    let answer = client
        .describe_stream_summary()
        .stream_name(stream)
        .send()
        .await;
    let target = if given { &mut p.uses } else { &mut p.creates };
    let Some(r) = target.iter_mut().find(|r| r.kind == "stream") else {
        return;
    };
    match answer {
        Ok(out) => {
            let d = out.stream_description_summary();
            let found = match d {
                Some(d) => format!(
                    "{} with {} open shard{}",
                    d.stream_status().as_str(),
                    d.open_shard_count(),
                    if d.open_shard_count() == 1 { "" } else { "s" }
                ),
                None => "there".into(),
            };
            if !given {
                p.problem = Some(format!(
                    "a stream named {stream} is already there ({found}); the run would not create it"
                ));
            }
            r.found = Some(found);
        }
        Err(e) if crate::aws::error_code(&e) == "ResourceNotFoundException" => {
            r.found = Some("not there yet".into());
            if given {
                p.problem = Some(format!(
                    "the stream {stream} given with --stream is not there"
                ));
            }
        }
        Err(e) => {
            r.found = Some(format!("could not check: {}", crate::aws::error_line(&e)));
        }
    }
}

impl crate::labs::Planned for super::KinesisLab {
    async fn plan(
        cx: &PlanContext<'_>,
        s: &KinesisScenario,
        target: &super::target::KinesisTarget,
    ) -> LabPlan {
        let mut p = LabPlan::new("Kinesis", "Kinesis Data Streams");
        let external = cx.external();
        let region = &cx.region;
        let given = target.stream.clone();
        let stream = given
            .clone()
            .unwrap_or_else(|| owned_name(&s.stream, cx.run_id, !external));
        // What the policy allows: the stream given, or any stream a run of this scenario names.
        let pattern = match &given {
            Some(name) => name.clone(),
            None if external => format!("{}-latlab-*", s.stream),
            None => s.stream.clone(),
        };
        let stream_arn = Scope::Arn(format!("arn:aws:kinesis:{region}:*:stream/{pattern}"));
        let consumer_arn = Scope::Arn(format!(
            "arn:aws:kinesis:{region}:*:stream/{pattern}/consumer/*-latlab-*:*"
        ));
        let consumer_arn = if external {
            consumer_arn
        } else {
            Scope::Arn(format!(
                "arn:aws:kinesis:{region}:*:stream/{pattern}/consumer/*"
            ))
        };
        let call = |p: &mut LabPlan, op: Op, on: &Scope, why: &str, asked: bool| {
            p.call(
                op.name(),
                Some(op.iam_action()),
                vec![on.clone()],
                why,
                asked,
            );
        };
        let created = crate::lab_kit::plan::now_rfc3339();
        match &given {
            None => {
                p.creates.push(Resource {
                    kind: "stream".into(),
                    name: stream.clone(),
                    detail: format!(
                        "{} shard{}, provisioned; deleted when the run ends",
                        s.shards,
                        if s.shards == 1 { "" } else { "s" }
                    ),
                    billable: true,
                    tags: if external {
                        crate::lab_kit::plan::tags(cx.run_id, &created)
                            .into_iter()
                            .map(|(k, v)| (k.to_string(), v))
                            .collect()
                    } else {
                        Vec::new()
                    },
                    found: None,
                });
                call(
                    &mut p,
                    Op::CreateStream,
                    &stream_arn,
                    "creates the stream",
                    false,
                );
                if external {
                    // CreateStream with tags needs AddTagsToStream too (the API reference says so).
                    call(
                        &mut p,
                        Op::AddTagsToStream,
                        &stream_arn,
                        "tags the stream as it is created",
                        false,
                    );
                    call(
                        &mut p,
                        Op::ListTagsForStream,
                        &stream_arn,
                        "checks the tags were kept",
                        false,
                    );
                }
                call(
                    &mut p,
                    Op::DeleteStream,
                    &stream_arn,
                    "deletes the stream at the end",
                    false,
                );
            }
            Some(_) => p.uses.push(Resource {
                kind: "stream".into(),
                name: stream.clone(),
                detail: "given with --stream; never deleted".into(),
                billable: true,
                tags: Vec::new(),
                found: None,
            }),
        }
        call(
            &mut p,
            Op::DescribeStreamSummary,
            &stream_arn,
            "waits for the stream to be ACTIVE",
            false,
        );
        call(
            &mut p,
            Op::ListShards,
            &stream_arn,
            "lists its shards",
            false,
        );
        match s.producer.mode {
            ProducerMode::PutRecord => {
                call(&mut p, Op::PutRecord, &stream_arn, "the producer", false);
                call(
                    &mut p,
                    Op::PutRecords,
                    &stream_arn,
                    "the producer's mode key (b)",
                    true,
                );
            }
            ProducerMode::PutRecords { .. } => {
                call(&mut p, Op::PutRecords, &stream_arn, "the producer", false);
                call(
                    &mut p,
                    Op::PutRecord,
                    &stream_arn,
                    "the producer's mode key (b)",
                    true,
                );
            }
        }
        let specs: Vec<_> = s.consumers.iter().flat_map(|c| c.expand()).collect();
        let polls = specs.iter().any(|c| c.kind.polls());
        for op in [Op::GetShardIterator, Op::GetRecords] {
            call(
                &mut p,
                op,
                &stream_arn,
                if polls {
                    "the GetRecords pollers"
                } else {
                    "a GetRecords poller added with +"
                },
                !polls,
            );
        }
        let fan_out: Vec<_> = specs.iter().filter(|c| c.kind.is_fan_out()).collect();
        for c in &fan_out {
            p.creates.push(Resource {
                kind: "enhanced fan-out consumer".into(),
                name: owned_name(&sanitize(&c.name), cx.run_id, !external),
                detail: format!(
                    "{} on {stream}, one subscription per shard; deregistered when the run ends",
                    c.kind.name()
                ),
                billable: true,
                tags: Vec::new(),
                found: None,
            });
        }
        let why = if fan_out.is_empty() {
            "a fan-out consumer added with e"
        } else {
            "the enhanced fan-out consumers"
        };
        let asked = fan_out.is_empty();
        call(&mut p, Op::RegisterStreamConsumer, &stream_arn, why, asked);
        call(
            &mut p,
            Op::DescribeStreamConsumer,
            &consumer_arn,
            why,
            asked,
        );
        call(&mut p, Op::SubscribeToShard, &consumer_arn, why, asked);
        call(
            &mut p,
            Op::DeregisterStreamConsumer,
            &consumer_arn,
            why,
            asked,
        );
        let scheduled = !s.reshards.is_empty();
        call(
            &mut p,
            Op::UpdateShardCount,
            &stream_arn,
            if scheduled {
                "the scenario's reshards"
            } else {
                "a reshard asked with x or X"
            },
            !scheduled,
        );
        // `latlab cleanup` finds what runs left by their tags.
        call(&mut p, Op::ListStreams, &Scope::Any, "latlab cleanup", true);
        call(
            &mut p,
            Op::ListTagsForStream,
            &stream_arn,
            "latlab cleanup",
            true,
        );
        call(
            &mut p,
            Op::ListStreamConsumers,
            &stream_arn,
            "latlab cleanup",
            true,
        );
        if external {
            p.notes.push(format!(
                "names carry the run id: the stream {stream}, each consumer NAME-latlab-{}",
                cx.run_id
            ));
        } else {
            p.notes.push(
                "on the embedded emulator: nothing is created on any account, and it all goes when latlab exits".into(),
            );
        }
        check(cx, &mut p, &stream, given.is_some()).await;
        p.cost = Some(super::cost::priced(
            &super::cost::Priced::of_scenario(s),
            cx.prices,
        ));
        p
    }
}
