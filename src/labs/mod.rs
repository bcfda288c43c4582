//! The labs, one folder each: its part of the scenario file (`config`), its probes and the state
//! they write, its commands (what its keys do while it runs) and its snapshot. The run's
//! supervisor (`crate::run`) starts, drives and stops them; the TUI and reports draw their
//! snapshots.

pub mod check;
pub mod context;
pub mod dynamodb;
#[cfg(test)]
pub mod echo;
mod facts;
pub mod hosts;
pub mod kinesis;
mod lab;
pub mod redis;
pub mod s3;
pub mod series;
pub mod sqs;
pub mod target;

pub use context::{Hurry, Role, RunContext, TargetOptions};
pub use facts::Facts;
pub use lab::{
    Calibrated, Cleanup, Doctor, Fixture, Lab, LabCommand, LabTarget, Live, Measured, NoSeed,
    Planned, Priced, Registered, ReportJson, ReportPart, Reported, Setup, Shown, from_json,
    left_out, to_json,
};

/// The registry: every lab latlab has, written once, in the order screens and reports show
/// them. Each line is the lab's kind, its folder (which is also its key in scenario files,
/// snapshots and reports) and its type, which implements [`Lab`].
///
/// `for_each_lab!(callback)` hands the list to `callback!`, so the run, the snapshot and the
/// screens generate their per-lab parts from it: a lab missing from one is a compile error, not a
/// silent gap.
macro_rules! for_each_lab {
    ($callback:ident) => {
        $crate::labs::with_test_lab! {
            $callback,
            Kinesis: kinesis::KinesisLab,
            S3: s3::S3Lab,
            Redis: redis::RedisLab,
            Sqs: sqs::SqsLab,
            Dynamodb: dynamodb::DynamoLab,
        }
    };
}
pub(crate) use for_each_lab;

/// The registry as it is.
#[cfg(not(test))]
macro_rules! with_test_lab {
    ($callback:ident, $($labs:tt)*) => {
        $callback! { $($labs)* }
    };
}

/// The registry of the library's own test build: with a fifth lab from a test-only folder
/// (`labs/echo/`), registered by this one line, so the tests show a new lab reaching every part
/// of latlab with nothing outside its folder changed.
#[cfg(test)]
macro_rules! with_test_lab {
    ($callback:ident, $($labs:tt)*) => {
        $callback! { $($labs)* Echo: echo::EchoLab, }
    };
}
pub(crate) use with_test_lab;

macro_rules! lab_kinds {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        /// The labs latlab has, in the order screens and reports show them (from the registry).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum LabKind {
            $($kind,)*
        }

        // Every lab of the registry has every part a lab has: one missing is an error here.
        const _: fn() = || {
            fn registered<L: Registered>() {}
            $(registered::<$module::$ty>();)*
        };

        impl LabKind {
            pub const ALL: [LabKind; [$(LabKind::$kind),*].len()] = [$(LabKind::$kind),*];

            /// What it is: its name, demo, scenarios, service and the rest ([`Facts`]), read by
            /// reference (the screen asks for its parts many times a frame).
            pub fn facts(self) -> &'static Facts {
                match self {
                    $(LabKind::$kind => {
                        static FACTS: Facts = <$module::$ty as Lab>::FACTS;
                        &FACTS
                    })*
                }
            }

            /// As screens name it: "Kinesis".
            pub fn name(self) -> &'static str {
                self.facts().name
            }

            /// Its key in scenario files, snapshots and reports: "kinesis".
            pub fn key(self) -> &'static str {
                match self {
                    $(LabKind::$kind => stringify!($module),)*
                }
            }

            /// A built-in scenario that runs this lab alone, for messages that suggest one.
            pub fn demo(self) -> &'static str {
                self.facts().demo
            }

            /// How many parts the subject of one of its series has (see [`series::SeriesId`]).
            pub fn subject_parts(self) -> usize {
                self.facts().subject_parts
            }

            /// The quantities its series measure.
            pub fn quantities(self) -> &'static [&'static str] {
                self.facts().quantities
            }

            /// Its sections of a price file.
            pub fn prices(self) -> &'static [crate::lab_kit::cost::Section] {
                self.facts().prices
            }

            /// Its lines of the soak's summary, from its part of a run's JSON report; the
            /// records it lost.
            pub fn soak(self, part: &serde_json::Value, out: &mut String) -> u64 {
                match self {
                    $(LabKind::$kind => <$module::$ty as Reported>::soak(part, out),)*
                }
            }

            /// Its part of the report's JSON schema, when it keeps it in its folder.
            pub fn schema(self) -> Option<&'static str> {
                self.facts().schema
            }

            /// Its own theme items (its series' colours).
            pub fn colours(self) -> &'static [crate::lab_kit::view::Colour] {
                self.facts().colours
            }

            /// The title of its table in `latlab compare`, and the name of its subject column.
            pub fn compared(self) -> (&'static str, &'static str) {
                self.facts().compared
            }

            /// The lab whose key (`kinesis`) this is, if latlab has one.
            pub fn of_key(key: &str) -> Option<LabKind> {
                LabKind::ALL.into_iter().find(|l| l.key() == key)
            }

            /// Whether its figures count from the moment it starts (a producer's period).
            pub fn measures_from_start(self) -> bool {
                self.facts().measures_from_start
            }

            /// Its share of its column on the overview.
            pub fn overview_weight(self) -> u16 {
                self.facts().overview_weight
            }

            /// Whether it leads the overview (the left, on a wide screen).
            pub fn overview_lead(self) -> bool {
                self.facts().overview_lead
            }

            /// The service it measures (the one its faults are injected into), when it is one
            /// latlab knows.
            pub fn service(self) -> Option<latlab_core::services::Service> {
                self.facts().service
            }

            /// The lab that measures `service`, if one does.
            pub fn of_service(service: latlab_core::services::Service) -> Option<LabKind> {
                LabKind::ALL.into_iter().find(|l| l.service() == Some(service))
            }
        }
    };
}
for_each_lab!(lab_kinds);

/// A new run's id: 8 random hex digits. It names what a run creates and writes (the Kinesis
/// lab's stream and consumers, the S3 lab's `latlab/RUN_ID/` prefix, the Redis lab's
/// `latlab:RUN_ID:` keys), so runs on several hosts sharing one target keep apart, and each run
/// cleans up only its own.
pub fn run_id() -> String {
    let v: u32 = rand::random();
    format!("{v:08x}")
}

/// The next step up (or down) from `current` in `steps`; the ends stay put.
pub fn step(steps: &[u64], current: u64, up: bool) -> u64 {
    if up {
        steps
            .iter()
            .copied()
            .find(|s| *s > current)
            .unwrap_or(current)
    } else {
        steps
            .iter()
            .rev()
            .copied()
            .find(|s| *s < current)
            .unwrap_or(current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_gives_each_lab_one_of_everything() {
        let mut keys = std::collections::BTreeSet::new();
        let mut services = std::collections::BTreeSet::new();
        let mut demos = std::collections::BTreeSet::new();
        for lab in LabKind::ALL {
            assert!(keys.insert(lab.key()), "{lab:?}'s key is another lab's");
            if let Some(service) = lab.service() {
                assert!(
                    services.insert(service),
                    "{lab:?} measures another lab's service"
                );
                assert_eq!(LabKind::of_service(service), Some(lab));
            }
            assert!(demos.insert(lab.demo()), "{lab:?}'s demo is another lab's");
            assert_eq!(lab.key(), lab.name().to_lowercase());
            assert!(lab.subject_parts() >= 1 && !lab.quantities().is_empty());
            assert!(lab.overview_weight() > 0);
            // Its demo is a built-in scenario that runs it alone.
            let demo = crate::scenario::Scenario::resolve(lab.demo()).expect("a built-in");
            assert_eq!(crate::run::scenario_labs(&demo), [lab], "{}", lab.demo());
        }
        // One lab leads the overview (on a wide screen, the left).
        assert_eq!(LabKind::ALL.iter().filter(|l| l.overview_lead()).count(), 1);
        // Every service latlab measures has its lab.
        for s in [
            latlab_core::services::Service::Kinesis,
            latlab_core::services::Service::S3,
            latlab_core::services::Service::Redis,
        ] {
            assert!(LabKind::of_service(s).is_some(), "{s:?} has no lab");
        }
    }
}
