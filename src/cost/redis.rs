//! The Redis lab's configuration, priced: the on-demand node-hours of an ElastiCache primary and
//! its replica of the scenario's node type. latlab measures its own redis-server pair (or yours),
//! so the node type is the scenario's assumption, and the figures say so.

use super::{LabCost, Prices, item, usd};
use crate::labs::LabKind;
use crate::labs::redis::snapshot::RedisSnapshot;

/// A primary and its replica.
pub const NODES: u32 = 2;

/// The lab's charges per hour, and the price keys they use.
pub fn cost(r: &RedisSnapshot, p: &Prices) -> (LabCost, Vec<String>) {
    let key = format!("elasticache.node_hour.{}", r.node_type);
    let mut notes = vec![format!(
        "the node type ({}) is the scenario's assumption: latlab measures {}, not ElastiCache",
        r.node_type,
        if r.local {
            "its own redis-server pair"
        } else {
            "the Redis you named"
        }
    )];
    let Some(price) = p.elasticache.node_hour.get(&r.node_type) else {
        notes.push(format!(
            "the price file lists {}",
            p.elasticache
                .node_hour
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
        return (
            LabCost {
                lab: LabKind::Redis,
                items: Vec::new(),
                notes,
                missing: Some(format!(
                    "no price for {} in the price file ({})",
                    r.node_type, p.origin
                )),
            },
            Vec::new(),
        );
    };
    let items = vec![item(
        p,
        &key,
        "ElastiCache node-hours",
        format!(
            "{NODES} nodes (primary + replica) × {} per {} node-hour, on demand",
            usd(*price),
            r.node_type
        ),
        f64::from(NODES) * price,
    )];
    (
        LabCost {
            lab: LabKind::Redis,
            items,
            notes,
            missing: None,
        },
        vec![key],
    )
}
