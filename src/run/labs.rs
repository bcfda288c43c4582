//! The labs a run has, generated from the registry (`crate::labs::for_each_lab`): the running
//! labs, the commands that reach them, and the history of each, so the supervisor walks every
//! lab (start, live loop, reset, snapshot, commands, faults, stop, clean up) without naming one.

use std::sync::Arc;
use std::time::Duration;

use crate::labs::{Lab, LabKind, RunContext, for_each_lab};
use latlab_core::faults::FaultSpec;
// Every lab's module, as the registry's lines name them (`kinesis::KinesisLab`): a new lab needs
// no line here.
use crate::labs::*;
use crate::scenario::Scenario;

use crate::snapshot::Snapshot;

macro_rules! per_lab {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        /// One running lab: each is made once and lives as long as the run.
        pub(super) enum Running {
            $($kind(Arc<$module::$ty>),)*
        }

        /// A command from the user, applied while the labs run: one of a lab's own, or one for
        /// all.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Command {
            $($kind(<$module::$ty as Lab>::Command),)*
            /// Every lab's histograms and counts start over.
            Reset,
            /// Inject one fault of this kind now, with its defaults (the TUI's fault menu).
            Fault(latlab_core::faults::Kind),
            /// The embedded emulator's next latency profile.
            Profile,
        }

        impl Command {
            /// What it does, in a few words: "adding a GetRecords poller".
            pub fn what(self) -> String {
                match self {
                    $(Command::$kind(c) => crate::labs::LabCommand::what(c).into(),)*
                    Command::Reset => "resetting the histograms and counts".into(),
                    Command::Fault(k) => format!("injecting {k}"),
                    Command::Profile => "switching the latency profile".into(),
                }
            }

            /// The lab the command is for (None: every lab).
            pub fn lab(self) -> Option<LabKind> {
                match self {
                    $(Command::$kind(_) => Some(LabKind::$kind),)*
                    Command::Fault(k) => LabKind::of_service(k.service()),
                    Command::Reset | Command::Profile => None,
                }
            }
        }

        /// The labs' last seconds, one value per second, oldest first, for the screen's
        /// sparklines: each lab's, when the run has it.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct History {
            $(pub $module: Option<<$module::$ty as Lab>::History>,)*
        }

        /// Puts a lab that could not start into the snapshot, saying why, if it can show that;
        /// false when it cannot (a lab that cannot start stops the run).
        pub(super) fn unavailable_into(kind: LabKind, why: &str, snap: Option<&mut Snapshot>) -> bool {
            match kind {
                $(LabKind::$kind => match <$module::$ty as crate::labs::Live>::unavailable(why) {
                    Some(s) => {
                        if let Some(snap) = snap {
                            snap.$module = Some(s);
                        }
                        true
                    }
                    None => false,
                },)*
            }
        }

        /// The scenario's labs, started on the run's context (those whose figures count from
        /// their start last). A lab that
        /// cannot start stops the run, except one whose failure `tolerated` accepts: its error
        /// is returned beside the labs that started.
        pub(super) async fn start_all(
            ctx: &Arc<RunContext>,
            scenario: &Scenario,
            tolerated: impl Fn(LabKind) -> bool,
        ) -> anyhow::Result<(Vec<Running>, Vec<(LabKind, anyhow::Error)>)> {
            let mut labs = Vec::new();
            let mut failed = Vec::new();
            let mut order = LabKind::ALL.to_vec();
            order.sort_by_key(|k| k.measures_from_start());
            for kind in order {
                let started = match kind {
                    $(LabKind::$kind => match &scenario.$module {
                        Some(section) => Some(
                            <$module::$ty as crate::labs::Live>::start(ctx, section, &ctx.target.labs.$module)
                                .await
                                .map(|l| Running::$kind(Arc::new(l))),
                        ),
                        None => None,
                    },)*
                };
                match started {
                    Some(Ok(lab)) => labs.push(lab),
                    Some(Err(e)) if tolerated(kind) => failed.push((kind, e)),
                    Some(Err(e)) => return Err(e),
                    None => {}
                }
            }
            labs.sort_by_key(Running::kind);
            Ok((labs, failed))
        }

        impl Running {
            pub(super) fn kind(&self) -> LabKind {
                match self {
                    $(Running::$kind(_) => LabKind::$kind,)*
                }
            }

            /// Starts the lab's live loop (S3's PUT and GET, Redis's tries).
            pub(super) fn start_live(&self) {
                match self {
                    $(Running::$kind(l) => crate::labs::Live::start_live(l.as_ref()),)*
                }
            }

            /// Applies what `scenario` (re-shaped by a new latency profile) changes of it.
            pub(super) fn reshape(&self, scenario: &crate::scenario::Scenario) -> Option<String> {
                match self {
                    $(Running::$kind(l) => scenario
                        .$module
                        .as_ref()
                        .and_then(|s| crate::labs::Live::reshape(l.as_ref(), s)),)*
                }
            }

            /// Its histograms and counts start over.
            pub(super) fn reset(&self) {
                match self {
                    $(Running::$kind(l) => crate::labs::Live::reset(l.as_ref()),)*
                }
            }

            /// Puts its figures into the run's snapshot.
            pub(super) fn snapshot_into(&self, complete: bool, snap: &mut Snapshot) {
                match self {
                    $(Running::$kind(l) => snap.$module = Some(crate::labs::Live::snapshot(l.as_ref(), complete)),)*
                }
            }

            /// Puts its last `window` seconds into the run's history.
            pub(super) fn history_into(&self, window: usize, history: &mut History) {
                match self {
                    $(Running::$kind(l) => history.$module = Some(crate::labs::Live::history(l.as_ref(), window)),)*
                }
            }

            /// Every series' whole histogram now.
            pub(super) fn histograms(&self) -> Vec<crate::labs::series::Histogrammed> {
                match self {
                    $(Running::$kind(l) => crate::labs::Live::histograms(l.as_ref()),)*
                }
            }

            /// Applies the command if it is this lab's; None when it is another's.
            pub(super) async fn apply(&self, cmd: Command) -> Option<anyhow::Result<String>> {
                match (self, cmd) {
                    $((Running::$kind(l), Command::$kind(c)) => Some(crate::labs::Live::apply(l.as_ref(), c).await),)*
                    _ => None,
                }
            }

            /// Sets a fault the lab injects itself.
            pub(super) fn add_fault(&self, spec: FaultSpec) -> anyhow::Result<()> {
                match self {
                    $(Running::$kind(l) => crate::labs::Live::add_fault(l, spec),)*
                }
            }

            /// How long it measured, when its figures are rates over a producing period.
            pub(super) fn measured_for(&self) -> Option<Duration> {
                match self {
                    $(Running::$kind(l) => crate::labs::Live::measured_for(l.as_ref()),)*
                }
            }

            /// Whether the scenario sets it an experiment that runs to its own end.
            pub(super) fn has_experiment(&self) -> bool {
                match self {
                    $(Running::$kind(l) => crate::labs::Live::has_experiment(l.as_ref()),)*
                }
            }

            /// Runs its set experiment to the end.
            pub(super) async fn run_experiment(
                &self,
                quick: bool,
                say: &(dyn Fn(String) + Send + Sync),
            ) -> anyhow::Result<()> {
                match self {
                    $(Running::$kind(l) => crate::labs::Live::run_experiment(l.as_ref(), quick, say).await,)*
                }
            }

            /// Stops its probes and lets them drain.
            pub(super) async fn stop(&self, hurry: &crate::labs::context::Hurry) {
                match self {
                    $(Running::$kind(l) => crate::labs::Live::stop(l.as_ref(), hurry).await,)*
                }
            }

            /// What it waits for while it stops: "Kinesis: the producer has stopped; ...".
            pub(super) fn stopping(&self) -> String {
                match self {
                    $(Running::$kind(_) => format!("{}: {}", LabKind::$kind.name(), <$module::$ty as crate::labs::Lab>::FACTS.stopping),)*
                }
            }

            /// Removes what it created; returns what could not be removed.
            pub(super) async fn cleanup(&self) -> Vec<String> {
                match self {
                    $(Running::$kind(l) => crate::labs::Live::cleanup(l.as_ref()).await,)*
                }
            }
        }
    };
}
for_each_lab!(per_lab);

macro_rules! accessors {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        impl super::Run {
            $(
                /// The lab, when the run has it (for tests and tools that reach into one).
                #[allow(unreachable_patterns)]
                pub fn $module(&self) -> Option<&$module::$ty> {
                    self.labs.iter().find_map(|l| match l {
                        Running::$kind(l) => Some(l.as_ref()),
                        _ => None,
                    })
                }
            )*
        }
    };
}
for_each_lab!(accessors);
