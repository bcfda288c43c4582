//! The SQS lab's part of a run's plan (`latlab plan`): the queues it would create (one per
//! consumer, named with the run id and tagged), every operation it calls, and its configuration
//! at list price for the scenario's rate. It calls nothing: the queues do not exist before the
//! run.

use super::config::SqsScenario;
use crate::lab_kit::plan::{LabPlan, PlanContext, Resource, Scope};
use latlab_core::services::sqs::Op;

impl crate::labs::Planned for super::SqsLab {
    async fn plan(
        cx: &PlanContext<'_>,
        s: &SqsScenario,
        _target: &crate::labs::target::Nothing,
    ) -> LabPlan {
        let mut p = LabPlan::new("SQS", "Amazon SQS");
        let region = &cx.region;
        let queues = super::queues::Queues::names(cx.run_id, &s.queue_prefix, s);
        let tags: Vec<(String, String)> = crate::lab_kit::plan::tags(cx.run_id, "WHEN-CREATED")
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        for (name, how) in &queues {
            p.creates.push(Resource {
                kind: if name.ends_with(latlab_core::services::sqs::FIFO_SUFFIX) {
                    "FIFO queue".into()
                } else {
                    "queue".into()
                },
                name: name.clone(),
                detail: format!("{how}; deleted when the run ends"),
                billable: true,
                tags: if cx.external() {
                    tags.clone()
                } else {
                    Vec::new()
                },
                found: None,
            });
        }
        let arn = format!("arn:aws:sqs:{region}:*:{}-{}-*", s.queue_prefix, cx.run_id);
        let mut call = |op: Op, why: &str, asked: bool| {
            p.call(
                op.name(),
                Some(op.iam_action()),
                vec![Scope::Arn(arn.clone())],
                why,
                asked,
            );
        };
        call(Op::CreateQueue, "creates each consumer's queue", false);
        call(
            Op::ListQueueTags,
            "checks each queue carries the run's tag",
            false,
        );
        call(
            Op::TagQueue,
            "tags a queue whose creation dropped its tags",
            true,
        );
        call(Op::DeleteQueue, "deletes the queues at the end", false);
        call(
            Op::SendMessage,
            if s.batching {
                "the producer (SendMessageBatch, a key switches to SendMessage)"
            } else {
                "the producer"
            },
            false,
        );
        call(
            Op::SendMessageBatch,
            "the producer with batching on",
            !s.batching,
        );
        call(Op::ReceiveMessage, "every consumer", false);
        call(
            Op::DeleteMessageBatch,
            "every consumer, after its work",
            false,
        );
        p.call(
            Op::ListQueues.name(),
            Some(Op::ListQueues.iam_action()),
            vec![Scope::Any],
            "latlab cleanup lists queues by latlab's prefix",
            true,
        );
        p.call(
            Op::ListQueueTags.name(),
            Some(Op::ListQueueTags.iam_action()),
            vec![Scope::Arn(format!(
                "arn:aws:sqs:{region}:*:{}-*",
                s.queue_prefix
            ))],
            "latlab cleanup reads a queue's run tag",
            true,
        );
        // The configuration at list price: the scenario's rate, each message sent once to each queue,
        // received and deleted in batches of up to 10 (a long poll's empty answers aside).
        let snap = super::snapshot::SqsSnapshot::planned(s);
        let (mut cost, keys) = super::cost::cost(&snap, cx.prices);
        cost.notes = vec![format!(
            "requests at the scenario's rate: each message sent ({}), received and deleted in \
             batches of {}; the free tier's first million requests a month is not subtracted",
            if s.batching {
                "in batches of up to 10"
            } else {
                "one SendMessage each"
            },
            super::snapshot::PLANNED_BATCH
        )];
        p.cost = Some((cost, keys));
        p.notes.push(format!(
            "the cost assumes {}/s to each queue, each message received once and deleted in batches \
             of {}; empty receives (short polling's, a long poll's wait ending) come on top",
            s.rate,
            super::snapshot::PLANNED_BATCH
        ));
        p
    }
}
