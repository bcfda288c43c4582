//! What S3 runs left (`latlab cleanup`): the objects under `latlab/RUN_ID/` in the buckets the
//! user names (latlab creates buckets only on its embedded emulator, which goes with it).
//! Nothing outside a run's prefix is listed or deleted.

use std::time::SystemTime;

use super::PREFIX;
use crate::aws::{QuotaPartition, RetrySettings, error_line};
use crate::lab_kit::plan::leftovers::{CleanupContext, Found, Leftover, run_id_of};

fn client(cx: &CleanupContext<'_>) -> Option<aws_sdk_s3::Client> {
    cx.clients.map(|c| {
        super::client::client(
            c,
            &RetrySettings::default(),
            &QuotaPartition::new("latlab-cleanup"),
            Default::default(),
        )
    })
}

impl crate::labs::Cleanup for super::S3Lab {
    async fn leftovers(cx: &CleanupContext<'_>, target: &super::target::S3Target) -> Found {
        let mut found = Found::default();
        let Some(s3) = client(cx) else { return found };
        let buckets: Vec<&String> = [&target.s3_bucket, &target.s3_express_bucket]
            .into_iter()
            .flatten()
            .collect();
        if buckets.is_empty() {
            found.notes.push(
                "S3: no bucket named; pass --s3-bucket and --s3-express-bucket to look for objects runs left under latlab/".into(),
            );
            return found;
        }
        for bucket in buckets {
            // Every object under latlab/, one listing, counted by the run its key names.
            let mut runs: std::collections::BTreeMap<String, (u64, i64, Option<SystemTime>)> =
                Default::default();
            let mut token: Option<String> = None;
            for _ in 0..1_000_000 {
                let r = s3
                    .list_objects_v2()
                    .bucket(bucket)
                    .prefix(PREFIX)
                    .set_continuation_token(token.clone())
                    .send()
                    .await;
                match r {
                    Ok(page) => {
                        for o in page.contents() {
                            let Some(id) = o
                                .key()
                                .and_then(|k| k.strip_prefix(PREFIX))
                                .and_then(|k| k.split_once('/'))
                                .and_then(|(id, _)| run_id_of(id))
                            else {
                                continue;
                            };
                            let e = runs.entry(id.to_string()).or_default();
                            e.0 += 1;
                            e.1 += o.size().unwrap_or(0);
                            if let Some(t) = o
                                .last_modified()
                                .and_then(|t| SystemTime::try_from(*t).ok())
                            {
                                e.2 = Some(e.2.map_or(t, |o: SystemTime| o.min(t)));
                            }
                        }
                        token = page.next_continuation_token().map(str::to_string);
                        if token.is_none() {
                            break;
                        }
                    }
                    Err(e) => {
                        found
                            .notes
                            .push(format!("S3: cannot list {bucket}: {}", error_line(&e)));
                        found.incomplete = true;
                        break;
                    }
                }
            }
            for (run, (objects, bytes, oldest)) in runs {
                let prefix = super::object_prefix(&run);
                found.items.push(Leftover {
                    lab: "S3",
                    kind: "objects".into(),
                    name: format!("{bucket}/{prefix}"),
                    handle: format!("{bucket}\n{prefix}"),
                    run_id: run,
                    created: oldest,
                    detail: format!(
                        "{objects} object{}, {}",
                        if objects == 1 { "" } else { "s" },
                        latlab_core::units::format_bytes(bytes.max(0) as u64)
                    ),
                });
            }
        }
        found
    }

    /// Deletes a run's objects in one bucket (and nothing outside its prefix).
    async fn remove(
        cx: &CleanupContext<'_>,
        _target: &super::target::S3Target,
        item: &Leftover,
    ) -> Result<(), String> {
        let s3 = client(cx).ok_or("no S3 client")?;
        let (bucket, prefix) = item.handle.split_once('\n').ok_or("not an S3 leftover")?;
        super::buckets::clean(&s3, bucket, prefix)
            .await
            .map(|_| ())
            .map_err(|e| format!("{e:#}"))
    }
}
