//! The Redis lab's configuration, priced: the on-demand node-hours of an ElastiCache primary and
//! its replica of the scenario's node type. latlab measures its own redis-server pair (or yours),
//! so the node type is the scenario's assumption, and the figures say so.

use std::collections::BTreeMap;

use crate::lab_kit::cost::prices::{Named, Section};
use crate::lab_kit::cost::{LabCost, Prices, item, usd};
use crate::labs::LabKind;
use crate::labs::redis::snapshot::RedisSnapshot;

/// A primary and its replica.
pub const NODES: u32 = 2;

/// Its section of a price file, `[elasticache]`: the on-demand node-hour of each node type
/// (`[elasticache.node_hour]`), Redis OSS's (on-demand prices differ by engine). The Price List
/// products: as infracost's elasticache_cluster.go filters them (productFamily `Cache
/// Instance`, cacheEngine `Redis`), without the extended-support, sync-durability and Outposts
/// variants.
pub const PRICES: &[Section] = &[Section {
    table: "elasticache",
    offer: "AmazonElastiCache",
    prices: &[],
    sizes: &[],
    named: Some(Named {
        table: "node_hour",
        unit: "per node-hour",
        // The built-in files' and the scenarios' default.
        required: &["cache.t3.micro", "cache.t3.small", "cache.t3.medium"],
        of_product: node_type,
        filter: "an AmazonElastiCache product with productFamily = 'Cache Instance', cacheEngine = 'Redis', instanceType = '{name}', usagetype containing 'NodeUsage:'",
    }),
    optional: false,
}];

/// The ElastiCache node type a Price List product prices the on-demand hour of, for Redis.
fn node_type(family: Option<&str>, a: &BTreeMap<String, String>) -> Option<String> {
    let usage = a.get("usagetype")?;
    (family == Some("Cache Instance")
        && a.get("cacheEngine").is_some_and(|e| e == "Redis")
        && usage.contains("NodeUsage:")
        && !["ExtendedSupport", "SyncDurability", "Outpost"]
            .iter()
            .any(|x| usage.contains(x)))
    .then(|| a.get("instanceType").cloned())
    .flatten()
}

/// The lab's charges per hour, and the price keys they use.
pub fn cost(r: &RedisSnapshot, p: &Prices) -> (LabCost, Vec<String>) {
    priced(&r.node_type, r.local, p)
}

/// The charges per hour of a primary and replica of `node_type` (`local`: latlab's own pair
/// stands for them), and the price keys they use.
pub fn priced(node_type: &str, local: bool, p: &Prices) -> (LabCost, Vec<String>) {
    let key = format!("elasticache.node_hour.{node_type}");
    let mut notes = vec![format!(
        "the node type ({}) is the scenario's assumption: latlab measures {}, not ElastiCache",
        node_type,
        if local {
            "its own redis-server pair"
        } else {
            "the Redis you named"
        }
    )];
    let Some(price) = p.value(&key) else {
        notes.push(format!(
            "the price file lists {}",
            p.named("elasticache.node_hour")
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ));
        return (
            LabCost {
                lab: LabKind::Redis.name(),
                items: Vec::new(),
                notes,
                missing: Some(format!(
                    "no price for {} in the price file ({})",
                    node_type, p.origin
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
            usd(price),
            node_type
        ),
        f64::from(NODES) * price,
    )];
    (
        LabCost {
            lab: LabKind::Redis.name(),
            items,
            notes,
            missing: None,
        },
        vec![key],
    )
}

impl crate::labs::Priced for super::RedisLab {
    /// An unavailable pair (redis-server missing) costs nothing: it is not priced.
    fn cost(
        snap: &RedisSnapshot,
        _complete: bool,
        prices: &Prices,
    ) -> Option<(LabCost, Vec<String>)> {
        snap.unavailable.is_none().then(|| cost(snap, prices))
    }
}

#[cfg(test)]
mod tests {
    //! The arithmetic against examples worked by hand from the built-in us-east-1 file (see
    //! `crate::lab_kit::cost::testing`).
    use super::*;
    use crate::lab_kit::cost::testing::{close, us_east_1};
    use crate::tui::fixture;

    #[test]
    fn redis_node_hours_of_the_scenarios_node_type() {
        // 2 nodes (primary + replica) × 0.017 = 0.034 $/h; × 730 = 24.82 $/month.
        let mut view = fixture::lab_moment(LabKind::Redis);
        let cost = view.snapshot.cost(&us_east_1());
        let r = cost.lab(LabKind::Redis.name()).unwrap();
        close(r.hourly(), 0.034);
        close(r.monthly(), 24.82);
        assert!(
            r.notes[0].contains("scenario's assumption"),
            "{:?}",
            r.notes
        );
        // A node type the file does not price: said, not guessed.
        view.snapshot.redis.as_mut().unwrap().node_type = "cache.r7g.large".into();
        let cost = view.snapshot.cost(&us_east_1());
        let r = cost.lab(LabKind::Redis.name()).unwrap();
        assert!(r.items.is_empty());
        assert_eq!(
            r.line(&cost),
            "cost: no price for cache.r7g.large in the price file (built-in)"
        );
    }
}
