//! What one frame shows: a snapshot of the lab and the sparkline points of each consumer, taken
//! together so the whole frame describes one instant.

use crate::metrics::Point;
use crate::run::Lab;
use crate::run::snapshot::Snapshot;

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
    pub redis_sparks: Vec<(crate::labs::redis::Method, Vec<Point>)>,
}

impl View {
    /// The lab right now, with `window` seconds of sparkline history.
    pub fn of(lab: &Lab, window: u64) -> View {
        let snapshot = lab.snapshot(false);
        let history = lab.history(window as usize);
        let (sparks, read_rate) = match history.kinesis {
            Some(h) => (h.consumers, h.read_rate),
            None => (Vec::new(), vec![0.0; window as usize]),
        };
        View {
            snapshot,
            sparks,
            read_rate,
            s3_sparks: history.s3,
            redis_sparks: history.redis,
        }
    }
}
