//! The SQS lab's own doctor check: the endpoint answers SQS's JSON protocol. ListQueues and
//! GetQueueUrl of a queue that is not there are called once each (nothing is created): an
//! endpoint that answers neither cannot run the lab.

use std::sync::Arc;

use crate::aws::RetrySettings;
use crate::labs::LabKind;
use crate::labs::check::{Check, DoctorContext, Part};

impl crate::labs::Doctor for super::SqsLab {
    /// Its checks, once the endpoint answered.
    async fn doctor(cx: &DoctorContext<'_>, _target: &crate::labs::target::Nothing) -> Vec<Check> {
        let Some(e) = cx.endpoint else {
            return Vec::new();
        };
        let once = RetrySettings {
            max_attempts: 1,
            ..RetrySettings::default()
        };
        let c = super::client::client(
            &e.clients,
            &once,
            "latlab-doctor-sqs",
            Arc::new(Default::default()),
        );
        let list = c.list_queues().queue_name_prefix("latlab-").send().await;
        let missing = c
            .get_queue_url()
            .queue_name("latlab-doctor-not-a-queue")
            .send()
            .await;
        let fails = |what: String| {
            Check::fail(
                "sqs ops",
                what,
                "an endpoint that serves SQS's JSON protocol (AWS, `latlab emulate`, or one whose SDK support is current)",
                &[Part::Lab(LabKind::Sqs)],
            )
        };
        match (list, missing) {
            (Ok(_), Err(err))
                if aws_sdk_sqs::error::ProvideErrorMetadata::code(&err).is_some_and(|c| {
                    c.contains("NonExistentQueue") || c == "QueueDoesNotExist"
                }) =>
            {
                vec![Check::ok(
                    "sqs ops",
                    format!(
                        "{} answers ListQueues and GetQueueUrl (JSON protocol)",
                        e.at
                    ),
                )]
            }
            (Ok(_), Ok(_)) => vec![Check::ok(
                "sqs ops",
                format!("{} answers ListQueues and GetQueueUrl", e.at),
            )],
            (Ok(_), Err(err)) => vec![fails(format!(
                "GetQueueUrl answered {}",
                crate::aws::error_line(&err)
            ))],
            (Err(err), _) => vec![fails(format!(
                "ListQueues answered {}",
                crate::aws::error_line(&err)
            ))],
        }
    }
}
