//! The Redis lab's part of a run's plan (`latlab plan`): latlab's own redis-server pair (or the
//! pair the user names, which it only uses), the keys it writes under `latlab:RUN_ID:`, the
//! commands it sends, and the node-hours its node type stands for at list price. Its only
//! commands for the plan are reads: INFO replication on the pair given.

use super::config::RedisScenario;
use super::endpoints::Endpoints;
use crate::lab_kit::plan::{LabPlan, PlanContext, Resource};

/// Every command the lab sends the primary or the replica, with why; those only latlab's own
/// servers get (memory conditions, faults) are marked.
const COMMANDS: &[(&str, &str, bool)] = &[
    ("PING", "checks each server answers", false),
    (
        "INFO",
        "the replication offsets and the replica's link",
        false,
    ),
    ("SET", "the primary's writes, one per try and method", false),
    ("EXISTS", "the replica's polls for each write", false),
    ("WAIT", "the offset method's acknowledgement", false),
    ("SCAN", "finds the run's keys to delete at the end", false),
    ("DEL", "deletes the run's keys at the end", false),
    (
        "HSET",
        "the run's marker key (when it ran, which latlab)",
        false,
    ),
    (
        "CONFIG",
        "memory conditions, on latlab's own servers only",
        true,
    ),
    ("CLIENT", "faults, on latlab's own servers only", true),
    ("DEBUG", "faults, on latlab's own servers only", true),
];

impl crate::labs::Planned for super::RedisLab {
    async fn plan(
        cx: &PlanContext<'_>,
        r: &RedisScenario,
        target: &super::target::RedisTarget,
    ) -> LabPlan {
        let mut p = LabPlan::new("Redis", "Redis (ElastiCache's engine)");
        let prefix = super::key_prefix(cx.run_id);
        let given = match (&target.redis_primary, &target.redis_replica) {
            (Some(primary), Some(replica)) => Some((primary.clone(), replica.clone())),
            _ => None,
        };
        let label = match &given {
            Some((primary, _)) => super::local::redact(primary),
            None => "latlab's redis-server primary".into(),
        };
        match &given {
            None => p.creates.push(Resource {
                kind: "redis-server pair".into(),
                name: "primary and replica on 127.0.0.1".into(),
                detail: "latlab's own processes, stopped when the run ends".into(),
                billable: false,
                tags: Vec::new(),
                found: None,
            }),
            Some((primary, replica)) => {
                for (role, url) in [("primary", primary), ("replica", replica)] {
                    p.uses.push(Resource {
                        kind: format!("Redis {role}"),
                        name: super::local::redact(url),
                        detail: "given; latlab changes no setting of it".into(),
                        billable: true,
                        tags: Vec::new(),
                        found: None,
                    });
                }
            }
        }
        p.creates.push(Resource {
            kind: "Redis keys".into(),
            name: format!("{prefix}*"),
            detail: format!(
                "on {label} (and so its replica): values of {} each, and the marker {prefix}run; deleted when the run ends",
                latlab_core::units::format_bytes(r.value)
            ),
            billable: false,
            tags: Vec::new(),
            found: None,
        });
        for (cmd, why, local_only) in COMMANDS {
            if *local_only && given.is_some() {
                continue;
            }
            p.call(cmd, None, Vec::new(), why, false);
        }
        p.notes.push(format!(
            "ACL (Redis 6+): a user with `~{} +ping +info +set +exists +wait +scan +del +hset` is enough for the pair given",
            super::PREFIX.to_string() + "*"
        ));
        if let Some((primary, replica)) = &given {
            let found = match Endpoints::open(primary, replica, false) {
                Ok(ends) => match ends.check().await {
                    Ok(_) => "answers, and the replica replicates from the primary".to_string(),
                    Err(e) => {
                        p.problem = Some(format!("{e:#}"));
                        format!("could not check: {e:#}")
                    }
                },
                Err(e) => {
                    p.problem = Some(format!("{e:#}"));
                    format!("{e:#}")
                }
            };
            for u in p.uses.iter_mut() {
                u.found = Some(found.clone());
            }
        }
        p.cost = Some(super::cost::priced(
            &r.node_type,
            given.is_none(),
            cx.prices,
        ));
        p
    }
}
