//! What one frame shows: a snapshot of the lab and the sparkline points of each consumer, taken
//! together so the whole frame describes one instant.

use crate::labs::LabKind;
use crate::run::{History, Run};
use crate::snapshot::Snapshot;

#[derive(Clone, Debug, PartialEq)]
pub struct Moment {
    pub snapshot: Snapshot,
    /// Each lab's last seconds, one value per second, oldest first, for the sparklines.
    pub history: History,
}

impl Moment {
    /// The lab right now, with `window` seconds of sparkline history.
    pub fn of(run: &Run, window: u64) -> Moment {
        Moment {
            snapshot: run.snapshot(false),
            history: run.history(window as usize),
        }
    }
}

macro_rules! of_sparks {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        impl Moment {
            /// What the screen showed of `snapshot`, with `window` seconds of sparkline history
            /// from `sparks` (each lab's ending at its last whole second, `upto`): each lab reads
            /// its own series back (`Measured::history_of_frames`).
            pub fn of_sparks(
                snapshot: Snapshot,
                sparks: &crate::record::read::Sparks,
                upto: &dyn Fn(&str) -> Option<u64>,
                window: u64,
            ) -> Moment {
                let history = History {
                    $($module: snapshot.$module.as_ref().map(|s| {
                        let lab = LabKind::$kind.key();
                        let upto = upto(lab);
                        let points = |key: &str| match upto {
                            Some(upto) => sparks.points(&format!("{lab} {key}"), upto, window),
                            None => Vec::new(),
                        };
                        let gauge = || match (upto, <crate::labs::$module::$ty as crate::labs::Lab>::FACTS.gauge) {
                            (Some(upto), Some(key)) => sparks.gauge(key, upto, window),
                            _ => vec![0.0; window as usize],
                        };
                        <crate::labs::$module::$ty as crate::labs::Measured>::history_of_frames(s, &points, &gauge)
                    }),)*
                };
                Moment { snapshot, history }
            }
        }
    };
}
crate::labs::for_each_lab!(of_sparks);

impl Moment {
    /// Frame `i` of a recording, with `window` seconds of sparkline history: what the screen
    /// showed at that second (the sparklines end at the last whole second).
    pub fn of_recording(
        rec: &crate::record::Recording,
        i: usize,
        window: u64,
    ) -> anyhow::Result<Moment> {
        let snapshot = rec.snapshot(i)?;
        Ok(Moment::of_sparks(
            snapshot,
            rec.sparks(),
            &|lab| rec.upto(i, lab),
            window,
        ))
    }
}
