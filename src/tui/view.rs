//! What one frame shows: a snapshot of the lab and the sparkline points of each consumer, taken
//! together so the whole frame describes one instant.

use crate::metrics::Point;
use crate::run::Run;
use crate::run::snapshot::Snapshot;

#[derive(Clone, Debug, PartialEq)]
pub struct View {
    pub snapshot: Snapshot,
    /// Per consumer (in snapshot order): one point per second, oldest first.
    pub sparks: Vec<Vec<Point>>,
    /// GetRecords attempts per second per shard, one value per second, oldest first.
    pub read_rate: Vec<f64>,
    /// S3: per (class, PUT/GET), the total time's points, oldest first.
    pub s3_sparks: Vec<(crate::services::s3::Class, String, Vec<Point>)>,
    /// Redis: per method, the lag's points, oldest first.
    pub redis_sparks: Vec<(crate::labs::redis::Method, Vec<Point>)>,
}

impl View {
    /// The lab right now, with `window` seconds of sparkline history.
    pub fn of(lab: &Run, window: u64) -> View {
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
            s3_sparks: history.s3.unwrap_or_default(),
            redis_sparks: history.redis.unwrap_or_default(),
        }
    }
}

impl View {
    /// Frame `i` of a recording, with `window` seconds of sparkline history: what the screen
    /// showed at that second (the sparklines end at the last whole second).
    pub fn of_recording(
        rec: &crate::run::record::Recording,
        i: usize,
        window: u64,
    ) -> anyhow::Result<View> {
        use crate::run::record::frames::s3_key;
        let snapshot = rec.snapshot(i)?;
        let points = |lab: &str, name: &str| match rec.upto(i, lab) {
            Some(upto) => rec.points(&format!("{lab} {name}"), upto, window),
            None => Vec::new(),
        };
        let sparks = snapshot.kinesis.as_ref().map_or_else(Vec::new, |k| {
            k.consumers
                .iter()
                .map(|c| points("kinesis", &c.name))
                .collect()
        });
        let read_rate = match rec.upto(i, "kinesis") {
            Some(upto) => rec.read_rate(upto, window),
            None => vec![0.0; window as usize],
        };
        let s3_sparks = snapshot.s3.as_ref().map_or_else(Vec::new, |s| {
            s.ops
                .iter()
                .map(|o| (o.class, o.op.clone(), points("s3", &s3_key(o.class, &o.op))))
                .collect()
        });
        let redis_sparks = snapshot.redis.as_ref().map_or_else(Vec::new, |r| {
            r.methods
                .iter()
                .map(|m| (m.method, points("redis", m.method.key())))
                .collect()
        });
        Ok(View {
            snapshot,
            sparks,
            read_rate,
            s3_sparks,
            redis_sparks,
        })
    }
}
