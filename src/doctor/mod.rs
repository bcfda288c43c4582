//! `latlab doctor`: what each lab needs, checked here and now. One line per check (its mark,
//! its name, what was found and, when it is not ok, the fix), then one line per lab saying
//! whether it can run. The exit status is 1 when a lab cannot run.
//!
//! The checks: the endpoint, the credentials and region for it, whether it answers (`probe.rs`)
//! and which of each lab's operations it answers (`Doctor::ops`, in the lab's folder: each
//! called once, creating nothing on an endpoint latlab does not own), the permissions any was
//! refused (`ops.rs`), then each lab's own (`Doctor::doctor`: the stream or buckets given,
//! redis-server or the given Redis pair), then the terminal, its colours and the log file
//! (`local.rs`). The check itself (`Check`, `Part`, a probe's reading) is `labs::check`, so that
//! labs write theirs.

mod local;
pub(crate) mod ops;
mod probe;

use std::path::PathBuf;
use std::process::ExitCode;

pub use crate::labs::check::{Check, Part, Status};
use crate::run::TargetOptions;

/// The width of the name column: the longest check name and two spaces.
const NAME_WIDTH: usize = 15;

/// A check as one line: `ok    redis-server   /usr/bin/redis-server, version 7.0.15`. With
/// `colour`, the mark is green, yellow or red.
pub fn line(c: &Check, colour: bool) -> String {
    let mark = format!("{:<6}", c.status.mark());
    let mark = if colour {
        let code = match c.status {
            Status::Ok => "32",
            Status::Warn => "33",
            Status::Fail => "1;31",
        };
        let (word, pad) = mark.split_at(c.status.mark().len());
        format!("\x1b[{code}m{word}\x1b[0m{pad}")
    } else {
        mark
    };
    let fix = c
        .fix
        .as_ref()
        .map(|f| format!(". Fix: {f}"))
        .unwrap_or_default();
    format!("{mark}{:<NAME_WIDTH$}{}{fix}", c.name, c.found)
}

/// Whether a lab can run, by the checks that name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Runs,
    /// It runs; these checks warned about it.
    Limited(Vec<&'static str>),
    /// These checks failed for it.
    Cannot(Vec<&'static str>),
}

pub fn verdict(lab: Part, checks: &[Check]) -> Verdict {
    let names = |status: Status| -> Vec<&'static str> {
        let mut v: Vec<&'static str> = Vec::new();
        for c in checks
            .iter()
            .filter(|c| c.status == status && c.labs.contains(&lab))
        {
            if !v.contains(&c.name) {
                v.push(c.name);
            }
        }
        v
    };
    let failed = names(Status::Fail);
    if !failed.is_empty() {
        return Verdict::Cannot(failed);
    }
    let warned = names(Status::Warn);
    if warned.is_empty() {
        Verdict::Runs
    } else {
        Verdict::Limited(warned)
    }
}

/// The closing lines, one per lab: `redis lab: cannot run (redis-server)`.
pub fn summary(checks: &[Check]) -> Vec<String> {
    Part::all()
        .map(|lab| {
            let said = match verdict(lab, checks) {
                Verdict::Runs => "can run".to_string(),
                Verdict::Limited(w) => format!("can run, with limits ({})", w.join(", ")),
                Verdict::Cannot(f) => format!("cannot run ({})", f.join(", ")),
            };
            format!("{}: {said}", lab.label())
        })
        .collect()
}

/// Whether any lab cannot run: the exit status.
pub fn any_cannot_run(checks: &[Check]) -> bool {
    Part::all().any(|lab| matches!(verdict(lab, checks), Verdict::Cannot(_)))
}

/// The checks so far, each printed as it is made (a slow probe shows what came before it).
pub(crate) struct Checks {
    list: Vec<Check>,
    colour: bool,
}

impl Checks {
    pub(crate) fn push(&mut self, c: Check) {
        say(&line(&c, self.colour));
        self.list.push(c);
    }
}

/// One line on standard output; a reader that went away (`| head`) is no error.
fn say(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stdout(), "{text}");
}

/// Runs every check, prints a line each and the labs' summary; exit status 1 when a lab cannot
/// run. `log` is the log file the live lab would write.
/// Runs every check; `config` is the config file's line, made by the command line that read it.
pub async fn run(target: TargetOptions, log: PathBuf, config: Check) -> anyhow::Result<ExitCode> {
    let env = local::TermEnv::from_env();
    let tty = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let mut checks = Checks {
        list: Vec::new(),
        colour: tty && !env.no_color(),
    };
    checks.push(config);
    let probed = probe::target_checks(&target, &mut checks).await?;
    let cx = crate::labs::check::DoctorContext {
        target: &target,
        endpoint: probed.as_ref().map(|p| &p.endpoint),
    };
    for c in lab_checks(&cx).await {
        checks.push(c);
    }
    let size = if tty {
        Some(crossterm::terminal::size().map_err(|e| e.to_string()))
    } else {
        None
    };
    checks.push(local::terminal(size));
    checks.push(local::colours(&env));
    checks.push(local::log(&log));
    say("");
    for l in summary(&checks.list) {
        say(&l);
    }
    Ok(if any_cannot_run(&checks.list) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

macro_rules! lab_checks {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        /// Every lab's own checks, in the registry's order.
        async fn lab_checks(cx: &crate::labs::check::DoctorContext<'_>) -> Vec<Check> {
            let mut out = Vec::new();
            $(out.extend(<crate::labs::$module::$ty as crate::labs::Doctor>::doctor(cx, &cx.target.labs.$module).await);)*
            out
        }

        /// Each lab's first call on the endpoint, at once, in the registry's order (those that
        /// make one).
        async fn lab_pings(
            cx: &crate::labs::check::DoctorContext<'_>,
        ) -> Vec<crate::labs::check::Outcome> {
            type Ping<'a> = std::pin::Pin<
                Box<dyn std::future::Future<Output = Option<crate::labs::check::Outcome>> + Send + 'a>,
            >;
            let pings: Vec<Ping<'_>> = vec![
                $(Box::pin(<crate::labs::$module::$ty as crate::labs::Doctor>::ping(cx)),)*
            ];
            let pings = futures_util::future::join_all(pings).await;
            pings.into_iter().flatten().collect()
        }

        /// Each lab's operations on the endpoint, every lab's at once: its line and its probes,
        /// in the registry's order (those that call any).
        async fn lab_ops(
            cx: &crate::labs::check::DoctorContext<'_>,
        ) -> Vec<(
            crate::labs::LabKind,
            (Check, Vec<crate::labs::check::Probe>),
        )> {
            type Ops<'a> = std::pin::Pin<
                Box<
                    dyn std::future::Future<
                            Output = Option<(Check, Vec<crate::labs::check::Probe>)>,
                        > + Send
                        + 'a,
                >,
            >;
            let kinds = [$(crate::labs::LabKind::$kind,)*];
            let ops: Vec<Ops<'_>> = vec![
                $(Box::pin(<crate::labs::$module::$ty as crate::labs::Doctor>::ops(cx, &cx.target.labs.$module)),)*
            ];
            kinds
                .into_iter()
                .zip(futures_util::future::join_all(ops).await)
                .filter_map(|(k, o)| Some((k, o?)))
                .collect()
        }
    };
}
crate::labs::for_each_lab!(lab_checks);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labs::LabKind;

    /// Three labs of the registry: one limited, one that runs, one that cannot.
    fn labs() -> (LabKind, LabKind, LabKind) {
        (LabKind::ALL[0], LabKind::ALL[1], LabKind::ALL[2])
    }

    fn checks() -> Vec<Check> {
        let (limited, _, cannot) = labs();
        vec![
            Check::ok("endpoint", "answered"),
            Check::warn("some ops", "x", "y", &[Part::Lab(limited)]),
            Check::fail(
                "a server",
                "not on PATH",
                "install it",
                &[Part::Lab(cannot)],
            ),
            Check::warn("terminal", "not a terminal", "use one", &[Part::Live]),
            Check::fail("log", "cannot open", "--log", &[Part::Live]),
        ]
    }

    #[test]
    fn a_failed_check_stops_only_the_labs_it_names() {
        let c = checks();
        let (limited, runs, cannot) = labs();
        assert_eq!(verdict(Part::Lab(runs), &c), Verdict::Runs);
        assert_eq!(
            verdict(Part::Lab(limited), &c),
            Verdict::Limited(vec!["some ops"])
        );
        assert_eq!(
            verdict(Part::Lab(cannot), &c),
            Verdict::Cannot(vec!["a server"])
        );
        // A failure outweighs a warning for the same lab.
        assert_eq!(verdict(Part::Live, &c), Verdict::Cannot(vec!["log"]));
        assert!(any_cannot_run(&c));
        assert!(!any_cannot_run(&c[..2]));
    }

    #[test]
    fn the_summary_has_a_line_per_lab() {
        let (limited, _, cannot) = labs();
        let expected: Vec<String> = LabKind::ALL
            .into_iter()
            .map(|l| match l {
                l if l == limited => format!("{} lab: can run, with limits (some ops)", l.key()),
                l if l == cannot => format!("{} lab: cannot run (a server)", l.key()),
                l => format!("{} lab: can run", l.key()),
            })
            .chain(["live lab (TUI): cannot run (log)".to_string()])
            .collect();
        assert_eq!(summary(&checks()), expected);
        assert!(summary(&[]).iter().all(|l| l.ends_with(": can run")));
    }

    #[test]
    fn a_line_is_aligned_and_carries_its_fix() {
        let c = checks();
        assert_eq!(line(&c[0], false), "ok    endpoint       answered");
        assert_eq!(
            line(&c[2], false),
            "FAIL  a server       not on PATH. Fix: install it"
        );
        // Colour wraps the mark only: the columns after it stay where they were.
        let coloured = line(&c[2], true);
        assert!(coloured.starts_with("\x1b[1;31mFAIL\x1b[0m  a server"));
    }
}
