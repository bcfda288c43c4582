//! The Redis kinds of [`latlab_core::faults`], on real processes: the replica killed and restarted, the
//! primary paused (`CLIENT PAUSE`) or asleep (`DEBUG SLEEP`), the replication link partitioned
//! by its shaper. A fault's recovery is the first try after it ends in which every method
//! measured the lag again.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::RedisLab;
use super::endpoints::connect;
use latlab_core::faults::{FaultLog, FaultSpec, Node, Trigger};
use latlab_core::services::redis::faults as redis_faults;

impl RedisLab {
    /// Sets a Redis fault: now, or on its schedule until the lab stops.
    pub fn set_fault(self: &Arc<Self>, spec: FaultSpec) -> anyhow::Result<()> {
        if spec.kind.service() != latlab_core::faults::Service::Redis {
            anyhow::bail!("{} is injected by the emulator, not on Redis", spec.kind);
        }
        let local_only = matches!(
            spec.kind,
            redis_faults::REPLICA_RESTART | redis_faults::LINK_PARTITION
        );
        if local_only && self.local.is_none() {
            anyhow::bail!(
                "{} needs latlab's own redis-server pair: it cannot be done to {}",
                spec.kind,
                self.ends.replica_label
            );
        }
        let lab = Arc::downgrade(self);
        let cancel = self.cancel.clone();
        let task = tokio::spawn(async move {
            let (first, period) = match spec.trigger {
                Trigger::Every { period, first } => (first, Some(period)),
                _ => (Duration::ZERO, None),
            };
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep(first) => {}
            }
            loop {
                let Some(lab) = lab.upgrade() else {
                    return;
                };
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = lab.inject(&spec) => {}
                }
                drop(lab);
                let Some(period) = period else {
                    return;
                };
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = tokio::time::sleep(period) => {}
                }
            }
        });
        self.tasks.lock().push(task);
        Ok(())
    }

    /// One firing: the fault is done (or refused) and logged; it ends after its duration.
    async fn inject(&self, spec: &FaultSpec) {
        let log: &FaultLog = &self.fault_log;
        let secs = spec.duration.as_secs_f64();
        let (id, result, after): (u64, anyhow::Result<()>, Instant) = match spec.kind {
            redis_faults::REPLICA_RESTART => {
                let local = self.local.as_ref().expect("checked when set");
                let id = log.fired(spec.kind, "the replica's redis-server".into());
                let r = local.restart_replica().await;
                self.await_recovery(id, Instant::now());
                match r {
                    Ok((old, new)) => {
                        tracing::info!("fault {id}: replica restarted, pid {old} -> {new}");
                        return;
                    }
                    Err(e) => {
                        log.failed(id, format!("{e:#}"));
                        return;
                    }
                }
            }
            redis_faults::LINK_PARTITION => {
                let local = self.local.as_ref().expect("checked when set");
                local.shaper.partition(spec.duration);
                let id = log.fired(
                    spec.kind,
                    format!(
                        "the replication link for {}",
                        latlab_core::units::format_duration(spec.duration)
                    ),
                );
                self.await_recovery(id, Instant::now() + spec.duration);
                return;
            }
            redis_faults::CLIENT_PAUSE => {
                let id = log.fired(
                    spec.kind,
                    format!(
                        "the primary's writes for {}",
                        latlab_core::units::format_duration(spec.duration)
                    ),
                );
                let r: anyhow::Result<()> = async {
                    let mut p = connect(&self.ends.primary).await?;
                    let _: () = redis::cmd("CLIENT")
                        .arg("PAUSE")
                        .arg(spec.duration.as_millis() as u64)
                        .arg("WRITE")
                        .query_async(&mut p)
                        .await?;
                    Ok(())
                }
                .await;
                (id, r, Instant::now() + spec.duration)
            }
            redis_faults::DEBUG_SLEEP => {
                let (client, label) = match spec.node {
                    Node::Primary => (&self.ends.primary, "the primary"),
                    Node::Replica => (&self.ends.replica, "the replica"),
                };
                let id = log.fired(
                    spec.kind,
                    format!(
                        "{label}, asleep for {}",
                        latlab_core::units::format_duration(spec.duration)
                    ),
                );
                // DEBUG SLEEP answers when the server wakes (or at once, to refuse).
                let r: anyhow::Result<()> = async {
                    let mut c = connect(client).await?;
                    tokio::time::timeout(
                        spec.duration + Duration::from_secs(10),
                        redis::cmd("DEBUG")
                            .arg("SLEEP")
                            .arg(secs)
                            .query_async::<()>(&mut c),
                    )
                    .await
                    .map_err(|_| anyhow::anyhow!("DEBUG SLEEP did not answer"))??;
                    Ok(())
                }
                .await;
                (id, r, Instant::now())
            }
            other => {
                tracing::warn!("{other} is not a Redis fault");
                return;
            }
        };
        match result {
            Ok(()) => self.await_recovery(id, after),
            Err(e) => log.failed(id, one_line(&e)),
        }
    }

    fn await_recovery(&self, id: u64, after: Instant) {
        let mut awaiting = self.shared.awaiting.lock();
        // Bounded: faults that never recover (a server gone for good) stay unrecovered.
        if awaiting.len() >= 1_000 {
            awaiting.remove(0);
        }
        awaiting.push((id, after));
    }
}

/// A Redis error as the endpoint said it, on one line.
fn one_line(e: &anyhow::Error) -> String {
    format!("{e:#}")
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}
