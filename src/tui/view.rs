//! What one frame shows: a snapshot of the lab and the sparkline points of each consumer, taken
//! together so the whole frame describes one instant.

use crate::lab::Lab;
use crate::lab::snapshot::Snapshot;
use crate::metrics::Point;

#[derive(Clone, Debug, PartialEq)]
pub struct View {
    pub snapshot: Snapshot,
    /// Per consumer (in snapshot order): one point per second, oldest first.
    pub sparks: Vec<Vec<Point>>,
    /// GetRecords attempts per second per shard, one value per second, oldest first.
    pub read_rate: Vec<f64>,
    /// S3: per (class, PUT/GET), the total time's points, oldest first.
    pub s3_sparks: Vec<(crate::emulator::s3::Class, String, Vec<Point>)>,
    /// Redis: per method, the lag's points, oldest first.
    pub redis_sparks: Vec<(crate::lab::redis::Method, Vec<Point>)>,
}

impl View {
    /// The lab right now, with `window` seconds of sparkline history.
    pub fn of(lab: &Lab, window: u64) -> View {
        let snapshot = lab.snapshot(false);
        let shared = &lab.shared;
        let now = shared.second();
        let consumers = shared.consumers.read().clone();
        let sparks = consumers
            .iter()
            .map(|c| {
                c.metrics
                    .lock()
                    .arrival_to_receive
                    .points(now, window as usize)
            })
            .collect();
        let shards = snapshot.kinesis.as_ref().map_or(1, |k| k.shards.max(1));
        let mut read_rate = vec![0.0; window as usize];
        for c in consumers.iter().filter(|c| !c.kind.is_fan_out()) {
            let calls = c
                .sdk
                .attempts_of("GetRecords", now.saturating_sub(1), window as usize);
            for (slot, n) in read_rate.iter_mut().zip(calls) {
                *slot += f64::from(n) / shards as f64;
            }
        }
        let s3_sparks = match &lab.s3 {
            Some(s3) => {
                let now = s3.shared.start.elapsed().as_secs();
                s3.shared
                    .ops
                    .lock()
                    .iter()
                    .map(|((class, op), m)| {
                        (*class, op.to_string(), m.total.points(now, window as usize))
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        let redis_sparks = match &lab.redis {
            Some(r) => {
                let now = r.shared.start.elapsed().as_secs();
                r.shared
                    .methods
                    .lock()
                    .iter()
                    .map(|(m, x)| (*m, x.lag.points(now, window as usize)))
                    .collect()
            }
            None => Vec::new(),
        };
        View {
            snapshot,
            sparks,
            read_rate,
            s3_sparks,
            redis_sparks,
        }
    }
}
