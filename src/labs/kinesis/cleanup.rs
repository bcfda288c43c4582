//! What Kinesis runs left (`latlab cleanup`): streams tagged `latlab:run-id` (with their
//! consumers), and enhanced fan-out consumers named `NAME-latlab-RUN_ID` on streams latlab did
//! not create (a run given `--stream`). A stream merely named like latlab's, without the tag, is
//! listed as left alone. Deleting a stream takes its consumers with it
//! (`EnforceConsumerDeletion`).

use std::time::SystemTime;

use crate::aws::{QuotaPartition, RetrySettings, error_code, error_line};
use crate::lab_kit::plan::leftovers::{CleanupContext, Found, LeftAlone, Leftover, run_id_in_name};
use crate::lab_kit::plan::{TAG_CREATED, TAG_RUN_ID};

/// The tag older runs put on their streams, read as `latlab:run-id` is.
const LEGACY_TAG: &str = "latlab-run";

fn client(cx: &CleanupContext<'_>) -> Option<aws_sdk_kinesis::Client> {
    cx.clients.map(|c| {
        super::client::client(
            c,
            &RetrySettings::default(),
            &QuotaPartition::new("latlab-cleanup"),
            Default::default(),
        )
    })
}

/// A stream's consumers: (name, ARN, created).
async fn consumers(
    k: &aws_sdk_kinesis::Client,
    stream: &str,
    found: &mut Found,
) -> Vec<(String, String, Option<SystemTime>)> {
    let arn = match k.describe_stream_summary().stream_name(stream).send().await {
        Ok(out) => match out.stream_description_summary() {
            Some(d) => d.stream_arn().to_string(),
            None => return Vec::new(),
        },
        Err(e) => {
            found.notes.push(format!(
                "Kinesis: cannot describe {stream}: {}",
                error_line(&e)
            ));
            found.incomplete = true;
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..1000 {
        let mut req = k.list_stream_consumers().stream_arn(&arn);
        if let Some(t) = &token {
            req = req.next_token(t);
        }
        match req.send().await {
            Ok(page) => {
                for c in page.consumers() {
                    let created = SystemTime::try_from(*c.consumer_creation_timestamp()).ok();
                    out.push((
                        c.consumer_name().to_string(),
                        c.consumer_arn().to_string(),
                        created,
                    ));
                }
                token = page.next_token().map(str::to_string);
                if token.is_none() {
                    break;
                }
            }
            Err(e) => {
                found.notes.push(format!(
                    "Kinesis: cannot list the consumers of {stream}: {}",
                    error_line(&e)
                ));
                found.incomplete = true;
                break;
            }
        }
    }
    out
}

impl crate::labs::Cleanup for super::KinesisLab {
    async fn leftovers(cx: &CleanupContext<'_>, _target: &super::target::KinesisTarget) -> Found {
        let mut found = Found::default();
        let Some(k) = client(cx) else { return found };
        // Every stream's name, a page at a time.
        let mut names: Vec<String> = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..10_000 {
            let mut req = k.list_streams().limit(100);
            if let Some(t) = &token {
                req = req.next_token(t);
            }
            match req.send().await {
                Ok(out) => {
                    names.extend(out.stream_names().iter().cloned());
                    token = out.next_token().map(str::to_string);
                    if !out.has_more_streams() || token.is_none() {
                        break;
                    }
                }
                Err(e) => {
                    found
                        .notes
                        .push(format!("Kinesis: cannot list streams: {}", error_line(&e)));
                    found.incomplete = true;
                    return found;
                }
            }
        }
        for name in names {
            let tags = match k.list_tags_for_stream().stream_name(&name).send().await {
                Ok(out) => out
                    .tags()
                    .iter()
                    .map(|t| (t.key().to_string(), t.value().unwrap_or("").to_string()))
                    .collect::<Vec<_>>(),
                Err(e) if error_code(&e) == "ResourceNotFoundException" => continue,
                Err(e) => {
                    found.notes.push(format!(
                        "Kinesis: cannot read the tags of {name}: {}",
                        error_line(&e)
                    ));
                    found.incomplete = true;
                    continue;
                }
            };
            let tag = |key: &str| tags.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
            let consumers = consumers(&k, &name, &mut found).await;
            match tag(TAG_RUN_ID).or_else(|| tag(LEGACY_TAG)) {
                Some(run) => {
                    let created = tag(TAG_CREATED)
                        .and_then(|c| humantime::parse_rfc3339_weak(&c).ok())
                        .or_else(|| consumers.iter().filter_map(|c| c.2).min());
                    let list: Vec<&str> = consumers.iter().map(|c| c.0.as_str()).collect();
                    found.items.push(Leftover {
                        lab: "Kinesis",
                        kind: "stream".into(),
                        name: name.clone(),
                        handle: name.clone(),
                        run_id: run,
                        created,
                        detail: if list.is_empty() {
                            "no consumers".into()
                        } else {
                            format!(
                                "with {} consumer{} ({}), deleted with it",
                                list.len(),
                                if list.len() == 1 { "" } else { "s" },
                                list.join(", ")
                            )
                        },
                    });
                }
                None => {
                    if name.contains("latlab") {
                        found.alone.push(LeftAlone {
                            lab: "Kinesis",
                            kind: "stream".into(),
                            name: name.clone(),
                            why: format!("named like latlab's but without the {TAG_RUN_ID} tag: not latlab's, left alone"),
                        });
                    }
                    // A run given this stream registers its consumers as NAME-latlab-RUN_ID.
                    for (consumer, arn, created) in consumers {
                        match run_id_in_name(&consumer) {
                            Some(run) => found.items.push(Leftover {
                                lab: "Kinesis",
                                kind: "enhanced fan-out consumer".into(),
                                name: format!("{consumer} on {name}"),
                                handle: arn,
                                run_id: run.to_string(),
                                created,
                                detail: "on a stream latlab did not create".into(),
                            }),
                            None if consumer.contains("latlab") => found.alone.push(LeftAlone {
                                lab: "Kinesis",
                                kind: "enhanced fan-out consumer".into(),
                                name: format!("{consumer} on {name}"),
                                why: "named like latlab's but not NAME-latlab-RUN_ID: not latlab's, left alone".into(),
                            }),
                            None => {}
                        }
                    }
                }
            }
        }
        found
    }

    /// Deletes one leftover: a stream with its consumers, or one consumer.
    async fn remove(
        cx: &CleanupContext<'_>,
        _target: &super::target::KinesisTarget,
        item: &Leftover,
    ) -> Result<(), String> {
        let k = client(cx).ok_or("no Kinesis client")?;
        let r = if item.kind == "stream" {
            k.delete_stream()
                .stream_name(&item.handle)
                .enforce_consumer_deletion(true)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| (error_code(&e), error_line(&e)))
        } else {
            k.deregister_stream_consumer()
                .consumer_arn(&item.handle)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| (error_code(&e), error_line(&e)))
        };
        match r {
            Ok(()) => Ok(()),
            // Gone already (another cleanup, or the run's own): nothing left to do.
            Err((code, _)) if code == "ResourceNotFoundException" => Ok(()),
            Err((_, line)) => Err(line),
        }
    }
}
