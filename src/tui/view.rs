//! What one frame shows: a snapshot of the lab and the sparkline points of each consumer, taken
//! together so the whole frame describes one instant.

use crate::labs::kinesis::KinesisHistory;
use crate::run::snapshot::Snapshot;
use crate::run::{History, Run};

#[derive(Clone, Debug, PartialEq)]
pub struct View {
    pub snapshot: Snapshot,
    /// Each lab's last seconds, one value per second, oldest first, for the sparklines.
    pub history: History,
}

impl View {
    /// The lab right now, with `window` seconds of sparkline history.
    pub fn of(lab: &Run, window: u64) -> View {
        View {
            snapshot: lab.snapshot(false),
            history: lab.history(window as usize),
        }
    }
}

impl View {
    /// Frame `i` of a recording, with `window` seconds of sparkline history: what the screen
    /// showed at that second (the sparklines end at the last whole second).
    pub fn of_recording(
        rec: &crate::record::Recording,
        i: usize,
        window: u64,
    ) -> anyhow::Result<View> {
        use crate::record::frames::s3_key;
        let snapshot = rec.snapshot(i)?;
        let points = |lab: &str, name: &str| match rec.upto(i, lab) {
            Some(upto) => rec.points(&format!("{lab} {name}"), upto, window),
            None => Vec::new(),
        };
        let history = History {
            kinesis: snapshot.kinesis.as_ref().map(|k| KinesisHistory {
                consumers: k
                    .consumers
                    .iter()
                    .map(|c| points("kinesis", &c.name))
                    .collect(),
                read_rate: match rec.upto(i, "kinesis") {
                    Some(upto) => rec.read_rate(upto, window),
                    None => vec![0.0; window as usize],
                },
            }),
            s3: snapshot.s3.as_ref().map(|s| {
                s.ops
                    .iter()
                    .map(|o| (o.class, o.op.clone(), points("s3", &s3_key(o.class, &o.op))))
                    .collect()
            }),
            redis: snapshot.redis.as_ref().map(|r| {
                r.methods
                    .iter()
                    .map(|m| (m.method, points("redis", m.method.key())))
                    .collect()
            }),
        };
        Ok(View { snapshot, history })
    }
}
