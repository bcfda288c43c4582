//! What DynamoDB runs left (`latlab cleanup`): tables named with latlab's prefix whose
//! `latlab:run-id` tag names a run. A table named like one without the tag is listed as not
//! latlab's and left alone. (A run's Kinesis destination stream is a Kinesis stream, tagged the
//! same way: the Kinesis lab's cleanup finds it.)

use std::sync::Arc;

use crate::aws::{RetrySettings, error_line};
use crate::lab_kit::plan::leftovers::{CleanupContext, Found, Leftover, run_id_of};

fn client(cx: &CleanupContext<'_>) -> Option<aws_sdk_dynamodb::Client> {
    cx.clients.map(|c| {
        super::client::dynamodb(
            c,
            &RetrySettings::default(),
            "latlab-cleanup-dynamodb",
            Arc::new(Default::default()),
        )
    })
}

/// A table's ARN and its run tag (None: it has none).
async fn run_tag(
    ddb: &aws_sdk_dynamodb::Client,
    name: &str,
) -> Result<(String, Option<String>, Option<String>), String> {
    let d = ddb
        .describe_table()
        .table_name(name)
        .send()
        .await
        .map_err(|e| error_line(&e))?;
    let arn = d
        .table
        .and_then(|t| t.table_arn)
        .ok_or("DescribeTable answered no ARN")?;
    let tags = ddb
        .list_tags_of_resource()
        .resource_arn(&arn)
        .send()
        .await
        .map_err(|e| error_line(&e))?;
    let get = |k: &str| {
        tags.tags()
            .iter()
            .find(|t| t.key() == k)
            .map(|t| t.value().to_string())
    };
    Ok((
        arn,
        get(crate::lab_kit::plan::TAG_RUN_ID),
        get(crate::lab_kit::plan::TAG_CREATED),
    ))
}

fn gone(code: &str) -> bool {
    code == "ResourceNotFoundException"
}

impl crate::labs::Cleanup for super::DynamoLab {
    async fn leftovers(cx: &CleanupContext<'_>, _target: &crate::labs::target::Nothing) -> Found {
        let mut found = Found::default();
        let Some(ddb) = client(cx) else { return found };
        let prefix = format!("{}-", super::config::DEFAULT_PREFIX);
        let mut start: Option<String> = None;
        let mut names = Vec::new();
        for _ in 0..10_000 {
            match ddb
                .list_tables()
                .set_exclusive_start_table_name(start.clone())
                .send()
                .await
            {
                Ok(page) => {
                    names.extend(
                        page.table_names()
                            .iter()
                            .filter(|n| n.starts_with(&prefix))
                            .cloned(),
                    );
                    start = page.last_evaluated_table_name;
                    if start.is_none() {
                        break;
                    }
                }
                Err(e) => {
                    found
                        .notes
                        .push(format!("DynamoDB: cannot list tables: {}", error_line(&e)));
                    found.incomplete = true;
                    break;
                }
            }
        }
        for name in names {
            let (arn, run, created) = match run_tag(&ddb, &name).await {
                Ok(t) => t,
                Err(why) => {
                    found
                        .notes
                        .push(format!("DynamoDB: cannot read {name}'s tags: {why}"));
                    found.incomplete = true;
                    continue;
                }
            };
            let Some(run) = run.as_deref().and_then(run_id_of) else {
                found.notes.push(format!(
                    "DynamoDB: table {name} is named like latlab's but has no {} tag: not latlab's, left alone",
                    crate::lab_kit::plan::TAG_RUN_ID
                ));
                continue;
            };
            found.items.push(Leftover {
                lab: "DynamoDB",
                kind: "table".into(),
                name: name.clone(),
                handle: arn,
                run_id: run.to_string(),
                created: created.and_then(|t| humantime::parse_rfc3339_weak(&t).ok()),
                detail: "with its items and stream".into(),
            });
        }
        found
    }

    /// Deletes a run's table, its tag read again just before.
    async fn remove(
        cx: &CleanupContext<'_>,
        _target: &crate::labs::target::Nothing,
        item: &Leftover,
    ) -> Result<(), String> {
        let ddb = client(cx).ok_or("no DynamoDB client")?;
        match run_tag(&ddb, &item.name).await {
            Ok((_, Some(run), _)) if run == item.run_id => {}
            Ok(_) => {
                return Err(format!(
                    "refusing to delete {}: its {} tag no longer names run {}",
                    item.name,
                    crate::lab_kit::plan::TAG_RUN_ID,
                    item.run_id
                ));
            }
            Err(why) if why.starts_with("ResourceNotFoundException") => return Ok(()),
            Err(why) => return Err(why),
        }
        match ddb.delete_table().table_name(&item.name).send().await {
            Ok(_) => Ok(()),
            Err(e) if gone(&crate::aws::error_code(&e)) => Ok(()),
            Err(e) => Err(error_line(&e)),
        }
    }
}
