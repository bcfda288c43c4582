//! Resharding while the lab runs: the `x` and `X` keys double and halve the stream's open shards
//! with UpdateShardCount (uniform scaling), and a scenario's `[[kinesis.reshards]]` asks for a
//! shard count at set times. Each answer is the service's: an accepted reshard sets the stream
//! UPDATING until it takes effect (a watcher then lists the new shards), a refusal
//! (LimitExceededException, ResourceInUseException while UPDATING, ...) is shown as it came.

use aws_sdk_kinesis::types::ScalingType;
use serde::Deserialize;
use toml::Spanned;

use super::*;
use latlab_core::units::{Dur, line_of};

/// What the `x` and `X` keys ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Double,
    Halve,
}

/// A scheduled reshard: `shards` open shards, asked `at` after the producer started.
#[derive(Clone, Debug, PartialEq)]
pub struct ReshardAt {
    pub at: Duration,
    pub shards: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReshardFile {
    at: Dur,
    shards: u32,
}

/// How often the watcher asks whether an UPDATING stream is ACTIVE again.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// Checks a scenario's schedule against the stream's starting `shards`: times in order, and each
/// count within what one UpdateShardCount may ask (at most double, at least half, of the count
/// before it, and different from it).
pub(crate) fn schedule(
    list: Vec<Spanned<ReshardFile>>,
    shards: u32,
    text: &str,
) -> anyhow::Result<Vec<ReshardAt>> {
    let mut out: Vec<ReshardAt> = Vec::new();
    let mut before = shards;
    for (i, spanned) in list.into_iter().enumerate() {
        let line = line_of(text, spanned.span().start);
        let r = spanned.into_inner();
        let at = r.at.0;
        let whose = format!("line {line}, kinesis.reshards[{i}]");
        if let Some(prev) = out.last()
            && at <= prev.at
        {
            bail!(
                "{whose}: at = \"{}\" must come after the reshard before it (at {})",
                latlab_core::units::format_duration(at),
                latlab_core::units::format_duration(prev.at)
            );
        }
        if r.shards == 0 || r.shards > 500 {
            bail!(
                "{whose}: shards must be between 1 and 500, got {}",
                r.shards
            );
        }
        if r.shards == before {
            bail!(
                "{whose}: {} shards is the count before it; a reshard must change it",
                r.shards
            );
        }
        if r.shards > before * 2 || r.shards * 2 < before {
            bail!(
                "{whose}: {} shards from {before}: UpdateShardCount allows at most double or half the open shards in one call",
                r.shards
            );
        }
        before = r.shards;
        out.push(ReshardAt {
            at,
            shards: r.shards,
        });
    }
    Ok(out)
}

impl KinesisLab {
    /// Doubles or halves the open shards (the `x` and `X` keys).
    pub(super) async fn reshard(&self, scale: Scale) -> anyhow::Result<String> {
        let open = open_shards(&self.admin, &self.ctx.stream).await?;
        let target = match scale {
            Scale::Double => open * 2,
            Scale::Halve => (open / 2).max(1),
        };
        if target == open {
            return Ok(format!(
                "the stream has {open} shard; half of it is still 1: no UpdateShardCount sent"
            ));
        }
        let watcher = reshard_to(&self.admin, &self.ctx, open, target).await?;
        let line = watcher.0;
        self.background.lock().push(watcher.1);
        Ok(line)
    }

    /// Starts the scenario's scheduled reshards, timed from now (the producer's start).
    pub(super) fn schedule_reshards(&self) {
        if self.scenario.reshards.is_empty() {
            return;
        }
        let plan = self.scenario.reshards.clone();
        let (admin, ctx) = (self.admin.clone(), self.ctx.clone());
        let background = self.background.clone();
        let started = Instant::now();
        let task = tokio::spawn(async move {
            for step in plan {
                tokio::time::sleep_until((started + step.at).into()).await;
                let open = match open_shards(&admin, &ctx.stream).await {
                    Ok(n) => n,
                    Err(e) => {
                        ctx.shared.log(format!("scheduled reshard: {e:#}"));
                        continue;
                    }
                };
                if let Ok((_, watch)) = reshard_to(&admin, &ctx, open, step.shards as usize).await {
                    background.lock().push(watch);
                }
            }
        });
        self.background.lock().push(task);
    }
}

/// DescribeStreamSummary's OpenShardCount.
async fn open_shards(admin: &Client, stream: &str) -> anyhow::Result<usize> {
    let out = admin
        .describe_stream_summary()
        .stream_name(stream)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("DescribeStreamSummary: {}", error_line(&e)))?;
    let s = out
        .stream_description_summary()
        .context("DescribeStreamSummary answered no summary")?;
    Ok(s.open_shard_count().max(0) as usize)
}

/// Asks for `target` open shards. Accepted: the stream is UPDATING, and a watcher (returned)
/// lists the shards once it is ACTIVE again. Refused: the service's answer, logged.
async fn reshard_to(
    admin: &Client,
    ctx: &Ctx,
    open: usize,
    target: usize,
) -> anyhow::Result<(String, JoinHandle<()>)> {
    let answer = admin
        .update_shard_count()
        .stream_name(&ctx.stream)
        .target_shard_count(target.min(i32::MAX as usize) as i32)
        .scaling_type(ScalingType::UniformScaling)
        .send()
        .await;
    match answer {
        Ok(out) => {
            ctx.shared.shards.set_updating();
            let line = format!(
                "UpdateShardCount accepted: {} -> {} shards; the stream is UPDATING until it takes effect",
                out.current_shard_count().unwrap_or(open as i32),
                out.target_shard_count().unwrap_or(target as i32)
            );
            ctx.shared.log(&line);
            let watch = tokio::spawn(watch(admin.clone(), ctx.clone()));
            Ok((line, watch))
        }
        Err(e) => {
            let line = format!(
                "UpdateShardCount {open} -> {target} shards refused: {}",
                error_line(&e)
            );
            ctx.shared.log(&line);
            bail!(line)
        }
    }
}

/// Waits until the stream is ACTIVE again, then lists its shards: the children join the lab's
/// shard list (consumers reach them through their parents' ChildShards either way).
async fn watch(admin: Client, ctx: Ctx) {
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        let Ok(out) = admin
            .describe_stream_summary()
            .stream_name(&ctx.stream)
            .send()
            .await
        else {
            continue;
        };
        let Some(s) = out.stream_description_summary() else {
            continue;
        };
        if s.stream_status().as_str() != "ACTIVE" {
            continue;
        }
        if let Ok(listed) = list_shards(&admin, &ctx.stream).await {
            ctx.shared.shards.listed(&listed);
        }
        let open = s.open_shard_count().max(0) as usize;
        ctx.shared.shards.set_active(open, ctx.shared.elapsed());
        ctx.shared.log(format!(
            "stream {} is ACTIVE again with {open} open shard{}",
            ctx.stream,
            if open == 1 { "" } else { "s" }
        ));
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct File {
        reshards: Vec<Spanned<ReshardFile>>,
    }

    fn parse(shards: u32, body: &str) -> anyhow::Result<Vec<ReshardAt>> {
        let f: File = toml::from_str(body).unwrap();
        schedule(f.reshards, shards, body)
    }

    #[test]
    fn a_schedule_is_checked_against_what_update_shard_count_allows() {
        let ok = parse(
            1,
            "[[reshards]]\nat = \"3s\"\nshards = 2\n[[reshards]]\nat = \"8s\"\nshards = 1\n",
        )
        .unwrap();
        assert_eq!(
            ok,
            vec![
                ReshardAt {
                    at: Duration::from_secs(3),
                    shards: 2
                },
                ReshardAt {
                    at: Duration::from_secs(8),
                    shards: 1
                }
            ]
        );
        let e = |shards, body| format!("{:#}", parse(shards, body).unwrap_err());
        let err = e(2, "[[reshards]]\nat = \"3s\"\nshards = 8\n");
        assert!(
            err.contains("line 1, kinesis.reshards[0]: 8 shards from 2"),
            "{err}"
        );
        assert!(err.contains("at most double or half"), "{err}");
        let err = e(
            1,
            "[[reshards]]\nat = \"5s\"\nshards = 2\n[[reshards]]\nat = \"5s\"\nshards = 1\n",
        );
        assert!(
            err.contains("line 4, kinesis.reshards[1]: at = \"5s\" must come after"),
            "{err}"
        );
        let err = e(1, "[[reshards]]\nat = \"5s\"\nshards = 1\n");
        assert!(err.contains("is the count before it"), "{err}");
        let err = e(1, "[[reshards]]\nat = \"5s\"\nshards = 0\n");
        assert!(err.contains("between 1 and 500"), "{err}");
    }
}
