//! Setting the stream up: names on endpoints latlab does not own, waiting for ACTIVE, listing the
//! shards, and each consumer's settings in a few words.

use super::*;
use crate::labs::kinesis::config::{
    KclVersion, KinesisFile, KinesisSeed, lambda_retry, lambda_retry_provenance, parse,
};

/// Stream and consumer names on endpoints latlab does not own carry the run id.
pub(super) fn owned_name(base: &str, run: &str, embedded: bool) -> String {
    if embedded {
        base.to_string()
    } else {
        format!("{base}-latlab-{run}")
    }
}

/// Makes sure the stream carries latlab's tags: an endpoint that drops CreateStream's `Tags`
/// (moto does) gets them with AddTagsToStream, so `latlab cleanup` finds the stream if the run
/// dies. A failure is logged: the run goes on, and deletes the stream itself at its end.
pub(super) async fn ensure_tagged(admin: &Client, stream: &str, run_id: &str) {
    let tagged = admin
        .list_tags_for_stream()
        .stream_name(stream)
        .send()
        .await
        .is_ok_and(|out| {
            out.tags()
                .iter()
                .any(|t| t.key() == crate::lab_kit::plan::TAG_RUN_ID)
        });
    if tagged {
        return;
    }
    let created = crate::lab_kit::plan::now_rfc3339();
    let mut req = admin.add_tags_to_stream().stream_name(stream);
    for (k, v) in crate::lab_kit::plan::tags(run_id, &created) {
        req = req.tags(k, v);
    }
    match req.send().await {
        Ok(_) => tracing::info!(
            "tagged stream {stream} with AddTagsToStream: CreateStream's tags were not kept"
        ),
        Err(e) => tracing::warn!(
            "stream {stream} is not tagged ({}): `latlab cleanup` will not find it should this run die",
            error_line(&e)
        ),
    }
}

pub(super) fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

pub(super) fn describe(spec: &ConsumerSpec) -> String {
    use latlab_core::units::format_duration as d;
    let retry = match &spec.retry {
        Some(r) => format!(
            ", own retries: {}{} attempts, back-off {} .. {}",
            match r.mode {
                crate::aws::RetryMode::Adaptive => "adaptive, ",
                crate::aws::RetryMode::Standard => "",
            },
            r.max_attempts,
            d(r.initial_backoff.0),
            d(r.max_backoff.0)
        ),
        None => String::new(),
    };
    let what = match spec.kind {
        ConsumerKind::Efo => "SubscribeToShard, re-subscribing from the continuation".into(),
        ConsumerKind::LambdaEfo => format!(
            "batch size {}, window {}",
            spec.batch_size,
            d(spec.batching_window)
        ),
        ConsumerKind::Poller => format!(
            "every {} ({}), {}",
            d(spec.interval),
            match spec.interval_mode {
                crate::labs::kinesis::config::IntervalMode::SleepAfter => "sleep after each call",
                crate::labs::kinesis::config::IntervalMode::FixedRate => "fixed rate",
            },
            match spec.retry_quota {
                RetryQuota::Shared => "shared retry quota",
                RetryQuota::PerPoller => "own retry quota",
            }
        ),
        ConsumerKind::Kcl => format!(
            "{}: idle {} {}, {} records a call",
            spec.kcl_version.name(),
            d(spec.interval),
            match spec.kcl_version {
                crate::labs::kinesis::config::KclVersion::V1 => "between the Worker's passes",
                _ => "after each call returns",
            },
            latlab_core::units::thousands(spec.limit as u64)
        ),
        ConsumerKind::LambdaStandard => format!(
            "polls every {}, batch size {}, window {}",
            d(spec.poll_interval),
            spec.batch_size,
            d(spec.batching_window)
        ),
    };
    what + &retry
}

/// Waits until the stream is ACTIVE; returns its ARN. A missing stream is one clear error.
pub(super) async fn wait_active(
    admin: &Client,
    stream: &str,
    endpoint: &str,
) -> anyhow::Result<String> {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let out = admin
            .describe_stream_summary()
            .stream_name(stream)
            .send()
            .await
            .map_err(|e| {
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_not_found_exception())
                {
                    anyhow::anyhow!(
                        "stream {stream} not found at {endpoint}: {}",
                        error_line(&e)
                    )
                } else {
                    anyhow::anyhow!(
                        "cannot describe stream {stream} at {endpoint}: {}",
                        error_line(&e)
                    )
                }
            })?;
        let s = out
            .stream_description_summary()
            .context("DescribeStreamSummary answered no summary")?;
        if s.stream_status().as_str() == "ACTIVE" {
            return Ok(s.stream_arn().to_string());
        }
        if Instant::now() > deadline {
            bail!(
                "stream {stream} is still {} after 5 minutes",
                s.stream_status().as_str()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The children of `shard`: the listed shards that name it as a parent.
pub(super) async fn children_of(
    client: &Client,
    stream: &str,
    shard: &str,
) -> anyhow::Result<Vec<lineage::Child>> {
    Ok(list_shards(client, stream)
        .await?
        .into_iter()
        .filter(|s| s.parents.iter().any(|p| p == shard))
        .map(|s| lineage::Child {
            id: s.id,
            parents: s.parents,
        })
        .collect())
}

/// Every shard ListShards lists (open and closed, not expired), with parents and state.
pub(super) async fn list_shards(
    admin: &Client,
    stream: &str,
) -> anyhow::Result<Vec<shards::ShardInfo>> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let req = match &token {
            Some(t) => admin.list_shards().next_token(t),
            None => admin.list_shards().stream_name(stream),
        };
        let page = req
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("cannot list shards of {stream}: {}", error_line(&e)))?;
        out.extend(page.shards().iter().map(|s| {
            shards::ShardInfo {
                id: s.shard_id().to_string(),
                rank: shards::rank_of(s.shard_id()).unwrap_or(0),
                parents: s
                    .parent_shard_id()
                    .into_iter()
                    .chain(s.adjacent_parent_shard_id())
                    .map(str::to_string)
                    .collect(),
                closed: s
                    .sequence_number_range()
                    .is_some_and(|r| r.ending_sequence_number().is_some()),
            }
        }));
        token = page.next_token().map(str::to_string);
        if token.is_none() {
            return Ok(out);
        }
    }
}

/// The Kinesis part of a scenario, as the run reads it: its parse, the seed's check, the model
/// parameters its consumers add, and a headless run's length.
impl crate::labs::Setup for super::KinesisLab {
    fn parse(file: KinesisFile, text: &str) -> anyhow::Result<KinesisScenario> {
        parse(file, text)
    }

    /// Every seed row names a consumer the scenario has.
    fn check_seed(seed: &KinesisSeed, k: &KinesisScenario) -> anyhow::Result<()> {
        for row in &seed.arrival_to_receive {
            if !k.consumer_names().contains(&row.consumer) {
                anyhow::bail!(
                    "seed.kinesis.arrival_to_receive names consumer '{}', which the scenario does not have; its consumers are {}",
                    row.consumer,
                    k.consumer_names().join(", ")
                );
            }
        }
        Ok(())
    }

    /// Lambda's retry model, when a Lambda consumer keeps it.
    fn model(k: &KinesisScenario) -> Vec<latlab_core::provenance::Param> {
        let mut params = Vec::new();
        let lambda_default = k.consumers.iter().any(|c| {
            matches!(
                c.kind,
                ConsumerKind::LambdaStandard | ConsumerKind::LambdaEfo
            ) && c.retry.as_ref() == Some(&lambda_retry())
        });
        if lambda_default {
            params.push(latlab_core::provenance::Param::new(
                "lambda.retry",
                format!("{}, no retry quota", lambda_retry().describe()),
                lambda_retry_provenance(),
            ));
        }
        let mut versions: Vec<KclVersion> = k
            .consumers
            .iter()
            .filter(|c| c.kind == ConsumerKind::Kcl)
            .map(|c| c.kcl_version)
            .collect();
        versions.dedup();
        for v in versions {
            params.push(kcl::provenance(v));
        }
        params
    }

    /// The producer stops by itself after the run's length: exactly rate x duration records.
    fn for_duration(k: &mut KinesisScenario, duration: std::time::Duration) {
        k.producer.stop_after = Some(duration);
    }
}
