//! A frozen view of a run: what the TUI draws each frame and what reports print, one part per
//! lab (each built by its lab from its shared state); nothing here is measured, only read. It
//! sits below both the run (which takes it) and the report (which prints it), so the two stand
//! side by side; `process.rs` is latlab's own process as a snapshot carries it.

pub mod process;

use crate::labs::{Lab, LabKind};

/// Where the figures came from; every screen and report shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Backend {
    /// `emulator` (embedded), `endpoint` (any URL) or `aws` (the SDK's default endpoints).
    pub kind: String,
    /// One line for headers: "embedded emulator, latency profile seed-tokyo".
    pub label: String,
    pub latency_profile: Option<String>,
    pub endpoint: Option<String>,
    pub region: String,
    /// The model in effect (emulator runs, and the Redis lab's shaped links): every parameter
    /// with its source and the seed figures it was derived from.
    pub model: Vec<latlab_core::provenance::Param>,
}

impl Backend {
    /// A few words for the screen's header: "emulator · seed-tokyo", "AWS ap-northeast-1".
    pub fn short(&self) -> String {
        match (self.kind.as_str(), &self.latency_profile, &self.endpoint) {
            ("emulator", Some(p), _) => format!("emulator · {p} profile"),
            ("endpoint", _, Some(url)) => format!("endpoint {url}"),
            ("fixture", _, _) => "fixture · not measured".into(),
            // A lab's own target (the Redis pair), or latlab's own processes.
            (kind, _, _) if kind == "local" || crate::labs::LabKind::of_key(kind).is_some() => self
                .label
                .split(" (")
                .next()
                .unwrap_or(&self.label)
                .to_string(),
            _ => format!("AWS {}", self.region),
        }
    }
}

macro_rules! snapshot {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        /// The run at one moment: its header figures, each lab's part (from the registry, one
        /// field per lab, named as its folder), the faults and latlab's own process.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Snapshot {
            pub scenario: String,
            pub backend: Backend,
            pub elapsed_secs: f64,
            /// How long the producer ran: the measured period.
            pub producing_secs: f64,
            /// Taken after the run ended and the consumers drained: lost counts are final.
            pub complete: bool,
            $(pub $module: Option<<crate::labs::$module::$ty as Lab>::Snapshot>,)*
            /// The faults set on the run and those that fired.
            pub faults: FaultsSnapshot,
            /// latlab's own process over the run.
            pub process: crate::snapshot::process::ProcessSnapshot,
        }

        impl Snapshot {
            /// A snapshot of no lab yet, its figures zero: each lab puts its part in (a new lab
            /// needs no line where snapshots are made).
            pub fn empty(scenario: String, backend: Backend) -> Snapshot {
                Snapshot {
                    scenario,
                    backend,
                    elapsed_secs: 0.0,
                    producing_secs: 0.0,
                    complete: false,
                    $($module: None,)*
                    faults: FaultsSnapshot::default(),
                    process: Default::default(),
                }
            }

            /// The labs the run has, in screen order.
            pub fn labs(&self) -> Vec<LabKind> {
                LabKind::ALL
                    .into_iter()
                    .filter(|l| match l {
                        $(LabKind::$kind => self.$module.is_some(),)*
                    })
                    .collect()
            }

            /// Every lab's configuration at `chosen`'s list prices, in screen order.
            pub fn cost(&self, chosen: &crate::lab_kit::cost::Chosen) -> crate::lab_kit::cost::RunCost {
                let mut parts = Vec::new();
                $(
                    if let Some(s) = &self.$module {
                        parts.extend(<crate::labs::$module::$ty as crate::labs::Priced>::cost(s, self.complete, &chosen.prices));
                    }
                )*
                crate::lab_kit::cost::RunCost::of(chosen, parts)
            }

            /// Every lab's series with its summary, in screen order.
            pub fn summaries(&self) -> Vec<(crate::labs::series::SeriesId, &crate::metrics::Summary)> {
                let mut out = Vec::new();
                $(if let Some(s) = &self.$module {
                    out.extend(<crate::labs::$module::$ty as crate::labs::Measured>::summaries(s));
                })*
                out
            }

            /// What a recording watches of every lab's parts, in screen order.
            pub fn watched(&self) -> Vec<crate::labs::series::Watched> {
                let mut out = Vec::new();
                $(if let Some(s) = &self.$module {
                    out.extend(<crate::labs::$module::$ty as crate::labs::Measured>::watched(s));
                })*
                out
            }

            /// The labs' parts of a headless run's progress line, joined.
            pub fn progress(&self) -> Option<String> {
                let mut parts: Vec<String> = Vec::new();
                $(if let Some(s) = &self.$module {
                    parts.extend(<crate::labs::$module::$ty as crate::labs::Shown>::progress(s));
                })*
                (!parts.is_empty()).then(|| parts.join(" | "))
            }

            /// Every lab's trade-off table (a lab not in the run gives its table empty).
            pub fn unit_costs(&self, prices: &crate::lab_kit::cost::Prices) -> Vec<crate::lab_kit::cost::UnitCosts> {
                let mut out = Vec::new();
                $(out.extend(<crate::labs::$module::$ty as crate::labs::Priced>::unit_costs(self.$module.as_ref(), prices));)*
                out
            }
        }
    };
}
crate::labs::for_each_lab!(snapshot);

/// One fault that fired, timed from the run's start.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultRow {
    pub at_secs: f64,
    pub kind: latlab_core::faults::Kind,
    pub target: String,
    /// Seconds until the target answered correctly again; None: it has not (yet).
    pub recovered_secs: Option<f64>,
    /// Why it could not be injected.
    pub failed: Option<String>,
}

/// The run's faults: what is set, what fired (the newest kept), and counts of every one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultsSnapshot {
    /// The faults set, as they read (`kinesis.stall GetRecords for 3s every 10s`).
    pub set: Vec<String>,
    pub events: Vec<FaultRow>,
    pub counts: Vec<(latlab_core::faults::Kind, latlab_core::faults::KindCounts)>,
}

impl FaultsSnapshot {
    pub fn fired(&self) -> u64 {
        self.counts.iter().map(|(_, c)| c.fired).sum()
    }

    pub fn recovered(&self) -> u64 {
        self.counts.iter().map(|(_, c)| c.recovered).sum()
    }

    /// Takes the log's view, timed from `start`.
    pub fn of(
        log: &latlab_core::faults::FaultLog,
        set: Vec<String>,
        start: std::time::Instant,
    ) -> Self {
        FaultsSnapshot {
            set,
            events: log
                .events()
                .into_iter()
                .map(|e| FaultRow {
                    at_secs: e.at.saturating_duration_since(start).as_secs_f64(),
                    kind: e.kind,
                    target: e.target,
                    recovered_secs: e.recovered.map(|d| d.as_secs_f64()),
                    failed: e.failed,
                })
                .collect(),
            counts: log.counts().into_iter().collect(),
        }
    }
}
