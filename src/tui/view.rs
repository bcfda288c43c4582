//! What one frame shows: a snapshot of the lab and the sparkline points of each consumer, taken
//! together so the whole frame describes one instant.

use crate::labs::{Lab, LabKind};
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

macro_rules! of_recording {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        impl View {
            /// Frame `i` of a recording, with `window` seconds of sparkline history: what the
            /// screen showed at that second (the sparklines end at the last whole second). Each
            /// lab reads its own series back (`Lab::history_of_frames`).
            pub fn of_recording(
                rec: &crate::record::Recording,
                i: usize,
                window: u64,
            ) -> anyhow::Result<View> {
                let snapshot = rec.snapshot(i)?;
                let history = History {
                    $($module: snapshot.$module.as_ref().map(|s| {
                        let lab = LabKind::$kind.key();
                        let upto = rec.upto(i, lab);
                        let points = |key: &str| match upto {
                            Some(upto) => rec.points(&format!("{lab} {key}"), upto, window),
                            None => Vec::new(),
                        };
                        let gauge = || match (upto, <crate::labs::$module::$ty as Lab>::GAUGE) {
                            (Some(upto), Some(key)) => rec.gauge(key, upto, window),
                            _ => vec![0.0; window as usize],
                        };
                        <crate::labs::$module::$ty as Lab>::history_of_frames(s, &points, &gauge)
                    }),)*
                };
                Ok(View { snapshot, history })
            }
        }
    };
}
crate::labs::for_each_lab!(of_recording);
