//! What SQS runs left (`latlab cleanup`): queues named with latlab's prefix whose
//! `latlab:run-id` tag names a run. A queue named like one without the tag is listed as not
//! latlab's and left alone.

use std::sync::Arc;

use crate::aws::{RetrySettings, error_line};
use crate::lab_kit::plan::leftovers::{CleanupContext, Found, Leftover, run_id_of};

fn client(cx: &CleanupContext<'_>) -> Option<aws_sdk_sqs::Client> {
    cx.clients.map(|c| {
        super::client::client(
            c,
            &RetrySettings::default(),
            "latlab-cleanup-sqs",
            Arc::new(Default::default()),
        )
    })
}

impl crate::labs::Cleanup for super::SqsLab {
    async fn leftovers(cx: &CleanupContext<'_>, _target: &crate::labs::target::Nothing) -> Found {
        let mut found = Found::default();
        let Some(sqs) = client(cx) else { return found };
        let mut token: Option<String> = None;
        let mut urls = Vec::new();
        for _ in 0..10_000 {
            match sqs
                .list_queues()
                .queue_name_prefix(super::config::DEFAULT_PREFIX)
                .max_results(1000)
                .set_next_token(token.clone())
                .send()
                .await
            {
                Ok(page) => {
                    urls.extend(page.queue_urls().iter().cloned());
                    token = page.next_token().map(str::to_string);
                    if token.is_none() {
                        break;
                    }
                }
                Err(e) => {
                    found
                        .notes
                        .push(format!("SQS: cannot list queues: {}", error_line(&e)));
                    found.incomplete = true;
                    break;
                }
            }
        }
        for url in urls {
            let name = url.rsplit('/').next().unwrap_or(&url).to_string();
            let tags = match sqs.list_queue_tags().queue_url(&url).send().await {
                Ok(t) => t.tags.unwrap_or_default(),
                Err(e) => {
                    found.notes.push(format!(
                        "SQS: cannot read {name}'s tags: {}",
                        error_line(&e)
                    ));
                    found.incomplete = true;
                    continue;
                }
            };
            let run = tags
                .get(crate::lab_kit::plan::TAG_RUN_ID)
                .and_then(|id| run_id_of(id));
            let Some(run) = run else {
                found.notes.push(format!(
                    "SQS: queue {name} is named like latlab's but has no {} tag: not latlab's, left alone",
                    crate::lab_kit::plan::TAG_RUN_ID
                ));
                continue;
            };
            let created = tags
                .get(crate::lab_kit::plan::TAG_CREATED)
                .and_then(|t| humantime::parse_rfc3339_weak(t).ok());
            found.items.push(Leftover {
                lab: "SQS",
                kind: "queue".into(),
                name: name.clone(),
                handle: url.clone(),
                run_id: run.to_string(),
                created,
                detail: "with whatever messages it holds".into(),
            });
        }
        found
    }

    /// Deletes a run's queue.
    async fn remove(
        cx: &CleanupContext<'_>,
        _target: &crate::labs::target::Nothing,
        item: &Leftover,
    ) -> Result<(), String> {
        let sqs = client(cx).ok_or("no SQS client")?;
        // Its tag read again just before: a queue that no longer names this run (re-created
        // untagged under the same name since it was listed) is not latlab's to delete.
        let tagged = match sqs.list_queue_tags().queue_url(&item.handle).send().await {
            Ok(t) => t
                .tags
                .unwrap_or_default()
                .get(crate::lab_kit::plan::TAG_RUN_ID)
                .is_some_and(|id| *id == item.run_id),
            Err(e) => {
                let code = aws_sdk_sqs::error::ProvideErrorMetadata::code(&e).unwrap_or_default();
                if code.contains("NonExistentQueue") || code == "QueueDoesNotExist" {
                    return Ok(());
                }
                return Err(error_line(&e));
            }
        };
        if !tagged {
            return Err(format!(
                "refusing to delete {}: its {} tag no longer names run {}",
                item.name,
                crate::lab_kit::plan::TAG_RUN_ID,
                item.run_id
            ));
        }
        match sqs.delete_queue().queue_url(&item.handle).send().await {
            Ok(_) => Ok(()),
            Err(e) => {
                let code = aws_sdk_sqs::error::ProvideErrorMetadata::code(&e).unwrap_or_default();
                if code.contains("NonExistentQueue") || code == "QueueDoesNotExist" {
                    // Gone already: cleanup is idempotent.
                    Ok(())
                } else {
                    Err(error_line(&e))
                }
            }
        }
    }
}
