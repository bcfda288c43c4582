//! The queues a run creates: one per consumer, named `PREFIX-RUNID-CONSUMER` (a FIFO queue's with
//! `.fifo`), tagged with latlab's run tags at creation, and deleted at the end of the run.

use std::time::Duration;

use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::QueueAttributeName;
use parking_lot::Mutex;

/// How long a queue keeps a message: set on every queue the lab creates (SQS's default, 4 days),
/// so the ledger can tell a message the queue dropped (lost) from one still in it (unread).
pub const RETENTION: Duration = Duration::from_secs(4 * 24 * 3600);

/// A queue's name: `PREFIX-RUN-CONSUMER`, with `.fifo` for a FIFO queue.
fn name(prefix: &str, run: &str, consumer: &str, fifo: bool) -> String {
    format!(
        "{prefix}-{run}-{consumer}{}",
        if fifo {
            latlab_core::services::sqs::FIFO_SUFFIX
        } else {
            ""
        }
    )
}

pub struct Queues {
    client: Client,
    run: String,
    prefix: String,
    /// The URLs created, in order.
    created: Mutex<Vec<String>>,
}

impl Queues {
    pub fn new(client: Client, run: &str, prefix: &str) -> Queues {
        Queues {
            client,
            run: run.to_string(),
            prefix: prefix.to_string(),
            created: Mutex::new(Vec::new()),
        }
    }

    /// The name of `consumer`'s queue in this run.
    pub fn name_of(&self, consumer: &str, fifo: bool) -> String {
        name(&self.prefix, &self.run, consumer, fifo)
    }

    /// Every queue a scenario's run `run` would create, with how its consumer reads it.
    pub fn names(run: &str, prefix: &str, s: &super::config::SqsScenario) -> Vec<(String, String)> {
        s.consumers
            .iter()
            .map(|c| {
                (
                    name(prefix, run, &c.name, c.kind.fifo()),
                    format!("{}: {}", c.name, c.kind.describe()),
                )
            })
            .collect()
    }

    /// Creates a queue (tagged with the run) and returns its URL.
    pub async fn create(
        &self,
        name: &str,
        fifo: bool,
        visibility: Duration,
    ) -> anyhow::Result<String> {
        let mut req = self
            .client
            .create_queue()
            .queue_name(name)
            .attributes(
                QueueAttributeName::VisibilityTimeout,
                visibility.as_secs().to_string(),
            )
            .attributes(
                QueueAttributeName::MessageRetentionPeriod,
                RETENTION.as_secs().to_string(),
            );
        if fifo {
            req = req.attributes(QueueAttributeName::FifoQueue, "true");
        }
        for (k, v) in crate::lab_kit::plan::tags(&self.run, &crate::lab_kit::plan::now_rfc3339()) {
            req = req.tags(k, v);
        }
        let out = req.send().await.map_err(|e| {
            anyhow::anyhow!("creating SQS queue {name}: {}", crate::aws::error_line(&e))
        })?;
        let url = out
            .queue_url
            .ok_or_else(|| anyhow::anyhow!("CreateQueue for {name} answered no QueueUrl"))?;
        self.created.lock().push(url.clone());
        // An endpoint may drop CreateQueue's tags (as moto drops CreateStream's): `latlab
        // cleanup` finds a run's queues by its tag, so a queue without it is tagged now.
        let tagged = self
            .client
            .list_queue_tags()
            .queue_url(&url)
            .send()
            .await
            .ok()
            .and_then(|t| t.tags)
            .is_some_and(|t| t.contains_key(crate::lab_kit::plan::TAG_RUN_ID));
        if !tagged {
            let mut req = self.client.tag_queue().queue_url(&url);
            for (k, v) in
                crate::lab_kit::plan::tags(&self.run, &crate::lab_kit::plan::now_rfc3339())
            {
                req = req.tags(k, v);
            }
            req.send().await.map_err(|e| {
                anyhow::anyhow!(
                    "tagging SQS queue {name} with the run's id: {}",
                    crate::aws::error_line(&e)
                )
            })?;
        }
        Ok(url)
    }

    /// Deletes every queue created; what could not be deleted, with the service's reason.
    pub async fn delete_all(&self) -> Vec<String> {
        let urls: Vec<String> = std::mem::take(&mut *self.created.lock());
        let mut left = Vec::new();
        for url in urls {
            if let Err(e) = self.client.delete_queue().queue_url(&url).send().await {
                left.push(format!("SQS queue {url}: {}", crate::aws::error_line(&e)));
            }
        }
        left
    }
}
