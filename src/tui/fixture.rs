//! Fixed views: each lab's fixed sample (`Fixture::sample`: made-up but plausible figures, never a
//! measurement) as the screen shows it, its backend labelled as a fixture (never as the emulator
//! or a measurement). The snapshot tests and the render benchmark draw them, since a live lab
//! never draws the same screen twice.

use super::moment::Moment;
use crate::labs::LabKind;
use crate::snapshot::{Backend, Snapshot};

/// A moment of no lab yet, named `scenario`: the header's figures.
fn base(scenario: &str) -> Moment {
    Moment {
        snapshot: Snapshot {
            elapsed_secs: 300.0,
            producing_secs: 298.0,
            ..Snapshot::empty(
                scenario.into(),
                Backend {
                    kind: "fixture".into(),
                    label:
                        "test fixture: made-up figures in the shape of the seed's round 2, not measured"
                            .into(),
                    latency_profile: None,
                    endpoint: None,
                    region: "us-east-1".into(),
                    model: Vec::new(),
                },
            )
        },
        history: Default::default(),
    }
}

macro_rules! samples {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        /// Puts `lab`'s sample into `moment` (its full sample, every optional part filled, when
        /// `full`); returns the scenario a screen of it alone is named after.
        fn add(moment: &mut Moment, lab: LabKind, full: bool) -> &'static str {
            match lab {
                $(LabKind::$kind => {
                    let (scenario, snapshot, history) =
                        <crate::labs::$module::$ty as crate::labs::Fixture>::sample();
                    moment.snapshot.$module = Some(if full {
                        <crate::labs::$module::$ty as crate::labs::Fixture>::sample_full()
                    } else {
                        snapshot
                    });
                    moment.history.$module = Some(history);
                    scenario
                })*
            }
        }
    };
}
crate::labs::for_each_lab!(samples);

/// A fixed moment of one lab, as its scenario run alone shows it.
pub fn lab_moment(lab: LabKind) -> Moment {
    let mut moment = base("");
    moment.snapshot.scenario = add(&mut moment, lab, false).into();
    moment
}

/// A fixed moment of the `tour` scenario: every lab at once, as the overview shows them.
pub fn sample_tour_moment() -> Moment {
    tour(false)
}

/// The tour's moment with every optional part of every lab filled in (a headless run's results):
/// what the report schema's test writes.
pub fn full_tour_moment() -> Moment {
    tour(true)
}

fn tour(full: bool) -> Moment {
    let mut moment = base("tour");
    for lab in LabKind::ALL {
        add(&mut moment, lab, full);
    }
    moment
}

/// What `moment` looks like at `size`, as text (one line per row), for the screen tests.
pub fn screen(app: &super::app::App, moment: &Moment, size: (u16, u16)) -> String {
    let buffer = super::screenshot::render(app, moment, size);
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
