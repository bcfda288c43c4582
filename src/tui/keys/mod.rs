//! Every key the TUI answers, declared once: the help overlay, the footer and the keys
//! `latlab screenshot --press` accepts are all drawn from [`keys()`] (in `table.rs`: each lab's
//! rows from its folder, then the TUI's own), whose rows bind each key to what it does;
//! `App::act` in `app.rs` answers that.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::Tab;
use crate::labs::LabKind;
use crate::run::Command;

mod table;
pub use table::keys;

/// Where a key shows in the footer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Footer {
    /// Not in the footer (the help lists it).
    Hidden,
    /// First, on every tab.
    Lead(&'static [(&'static str, &'static str)]),
    /// First, after the leading keys, when the scenario has tabs.
    Tabs(&'static [(&'static str, &'static str)]),
    /// On the tabs of the key's labs; on the overview, `overview` when the scenario runs one
    /// of them.
    Lab {
        tab: &'static [(&'static str, &'static str)],
        overview: &'static [(&'static str, &'static str)],
    },
    /// Last, on every tab.
    Trail(&'static [(&'static str, &'static str)]),
    /// In a replay, after the tabs.
    Replay(&'static [(&'static str, &'static str)]),
}

/// One line of the help: the keys as shown, what they do, the characters `--press` may give
/// for them, and where the footer shows them.
#[derive(Clone, Debug)]
pub struct Key {
    pub keys: String,
    pub what: String,
    pub press: String,
    pub footer: Footer,
    /// Whether the key works live, in a replay, or in both.
    pub when: When,
    /// The labs whose experiment it changes: the help lists it only in a run with one of them
    /// (empty: every run).
    pub labs: Vec<LabKind>,
    /// What each of its keys does when pressed: the one place a key code is bound. A row several
    /// labs share binds a key once for each of them (see [`binding`]).
    pub bindings: Vec<(Press, Does)>,
}

/// A key as pressed: a character (Shift included), Ctrl with a character, or a named key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Press {
    Char(char),
    Ctrl(char),
    Code(KeyCode),
}

impl Press {
    pub fn matches(self, key: &KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match self {
            Press::Char(c) => key.code == KeyCode::Char(c) && !ctrl,
            Press::Ctrl(c) => key.code == KeyCode::Char(c) && ctrl,
            Press::Code(code) => key.code == code,
        }
    }
}

/// What pressing a key does: a command for the run, or a change to what is displayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Does {
    /// A lab's command: that lab's tab is shown (unless the overview is), or the status line
    /// says the run has no such lab.
    Lab(Command),
    /// A command sent as it is: the run answers it, whichever tab is shown.
    Send(Command),
    Show(Tab),
    NextTab,
    PreviousTab,
    FaultMenu,
    Pause,
    ZoomIn,
    ZoomOut,
    NextTheme,
    Help,
    Quit,
    /// A replay's cursor: play or pause, a second back or on, the next or previous event,
    /// slower or faster, the recording's start or end.
    PlayPause,
    Back,
    On,
    NextEvent,
    PreviousEvent,
    Slower,
    Faster,
    Start,
    End,
}

/// What a key does live (`replay` false) or in a replay, and whether that key works there: a
/// key of the live lab pressed in a replay is found, so that it can be refused with a reason.
/// A key several labs bind (the payload's) goes to the lab of the tab shown (`tab`), else to
/// the first of them the run has (`labs`), else to the first of them.
pub fn binding(
    key: &KeyEvent,
    replay: bool,
    tab: Option<LabKind>,
    labs: &[LabKind],
) -> Option<(Does, bool)> {
    let find = |works: bool| {
        let found: Vec<Does> = keys()
            .iter()
            .filter(|k| k.works(replay) == works)
            .flat_map(|k| &k.bindings)
            .filter(|(press, _)| press.matches(key))
            .map(|(_, does)| *does)
            .collect();
        let of = |lab: LabKind| found.iter().copied().find(|d| d.lab() == Some(lab));
        tab.and_then(of)
            .or_else(|| labs.iter().find_map(|l| of(*l)))
            .or_else(|| found.first().copied())
            .map(|does| (does, works))
    };
    find(true).or_else(|| find(false))
}

impl Does {
    /// The lab whose command it sends, if it sends one.
    pub fn lab(self) -> Option<LabKind> {
        match self {
            Does::Lab(cmd) | Does::Send(cmd) => cmd.lab(),
            _ => None,
        }
    }
}

/// When a key is answered: in the live lab, in a replay (`latlab replay`), or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    Always,
    /// It changes the experiment (or pauses the live display): a replay refuses it.
    Live,
    /// It moves a replay's time cursor.
    Replay,
}

/// The characters `latlab screenshot --press` accepts: the keys that change the experiment or
/// the display, never one that quits or waits for another key.
pub fn pressable() -> String {
    keys().iter().flat_map(|k| k.press.chars()).collect()
}

/// The footer's keys for a screen: `tab` is the lab shown (None: the overview), `labs` the labs
/// the scenario runs, `tabs` whether it has tabs, `replay` whether it is a replay (its keys
/// replace those that change the experiment).
pub fn footer(
    tab: Option<LabKind>,
    labs: &[LabKind],
    tabs: bool,
    replay: bool,
) -> Vec<(&'static str, &'static str)> {
    let mut lead = Vec::new();
    let mut tab_keys = Vec::new();
    let mut lab_keys = Vec::new();
    let mut trail = Vec::new();
    // The leading keys in reverse help order: quit, then help.
    for k in keys().iter().rev() {
        if let Footer::Lead(items) = k.footer {
            lead.extend_from_slice(items);
        }
    }
    let mut shared_keys = Vec::new();
    for k in help_keys(replay, labs) {
        match k.footer {
            Footer::Tabs(items) if tabs => tab_keys.extend_from_slice(items),
            Footer::Replay(items) => lab_keys.extend_from_slice(items),
            // On a lab's tab its own keys come first, then those it shares with other labs.
            Footer::Lab {
                tab: on_tab,
                overview,
            } => match tab {
                Some(t) if k.labs == [t] => lab_keys.extend_from_slice(on_tab),
                Some(t) if k.labs.contains(&t) => shared_keys.extend_from_slice(on_tab),
                None => lab_keys.extend_from_slice(overview),
                _ => {}
            },
            Footer::Trail(items) => trail.extend_from_slice(items),
            _ => {}
        }
    }
    lead.into_iter()
        .chain(tab_keys)
        .chain(lab_keys)
        .chain(shared_keys)
        .chain(trail)
        .collect()
}

/// The keys the help lists for a run of `labs`: those of its labs and those every run has (the
/// tab keys only when it has several labs); in a replay, those that work there.
pub fn help_keys(replay: bool, labs: &[LabKind]) -> impl Iterator<Item = &'static Key> {
    keys().iter().filter(move |k| {
        let tabs = !matches!(k.footer, Footer::Tabs(_)) || labs.len() > 1;
        k.works(replay) && k.in_run(labs) && tabs
    })
}

/// The labs whose keys the help leaves out: those the run does not have.
pub fn absent_labs(labs: &[LabKind]) -> Vec<LabKind> {
    LabKind::ALL
        .into_iter()
        .filter(|l| !labs.contains(l))
        .collect()
}

impl Key {
    /// Whether it belongs to a run of `labs`: a key of no lab belongs to every run.
    pub fn in_run(&self, labs: &[LabKind]) -> bool {
        self.labs.is_empty() || self.labs.iter().any(|l| labs.contains(l))
    }

    /// Whether the key is answered live (`replay` false) or in a replay.
    pub fn works(&self, replay: bool) -> bool {
        match self.when {
            When::Always => true,
            When::Live => !replay,
            When::Replay => replay,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theme::Theme;
    use crate::tui::app::{Action, App};
    use crossterm::event::{KeyCode, KeyEvent};

    #[test]
    fn every_listed_key_is_answered() {
        for k in keys() {
            for c in k.press.chars() {
                let mut app = App::new(Theme::dark());
                app.sync_labs(&LabKind::ALL);
                let action = app.key(KeyEvent::from(KeyCode::Char(c)), || {
                    crate::tui::fixture::sample_tour_moment()
                });
                assert_ne!(action, Action::None, "'{c}' ({}) does nothing", k.keys);
            }
        }
        // Each lab's keys in the registry's order, then the TUI's own.
        // (The library's test build has a sixth lab, `labs/echo/`: its key u and its tab 6.)
        assert_eq!(
            pressable(),
            "+-*/<>eExXbiao[]sCvcmLwjJgGBVkKHMUDyYdul0123456frzZt"
        );
    }

    #[test]
    fn no_key_is_bound_twice_where_it_works_and_every_pressable_key_is_bound() {
        for replay in [false, true] {
            let mut seen: Vec<(Press, &str)> = Vec::new();
            for k in keys().iter().filter(|k| k.works(replay)) {
                // A row several labs share binds each of its keys once per lab.
                let mut mine: Vec<(Press, Option<LabKind>)> = Vec::new();
                for (press, does) in &k.bindings {
                    if let Some((_, other)) = seen.iter().find(|(p, _)| p == press) {
                        panic!("{press:?} is bound by both '{other}' and '{}'", k.keys);
                    }
                    assert!(
                        !mine.contains(&(*press, does.lab())),
                        "{press:?} is bound twice in '{}'",
                        k.keys
                    );
                    mine.push((*press, does.lab()));
                }
                seen.extend(mine.into_iter().map(|(p, _)| (p, k.keys.as_str())));
            }
        }
        for k in keys() {
            for c in k.press.chars() {
                assert!(
                    k.bindings.iter().any(|(p, _)| *p == Press::Char(c)),
                    "'{c}' is pressable for '{}' but not bound by it",
                    k.keys
                );
            }
        }
    }

    #[test]
    fn a_key_several_labs_bind_goes_to_the_tab_shown_else_to_the_first_lab_of_the_run() {
        // Rows of several labs' commands (not the latency profile, which is the run's).
        let shared: Vec<&Key> = keys()
            .iter()
            .filter(|k| k.labs.len() > 1 && k.bindings.iter().all(|(_, d)| d.lab().is_some()))
            .collect();
        assert!(!shared.is_empty(), "some key is shared by labs");
        for k in shared {
            let Some((Press::Char(c), _)) = k.bindings.first() else {
                continue;
            };
            let key = KeyEvent::from(KeyCode::Char(*c));
            for lab in &k.labs {
                let (does, works) = binding(&key, false, Some(*lab), &LabKind::ALL).unwrap();
                assert!(works);
                assert_eq!(does.lab(), Some(*lab), "'{c}' on the tab of {lab:?}");
                // On the overview, the first of them the run has.
                let (does, _) = binding(&key, false, None, &[*lab]).unwrap();
                assert_eq!(
                    does.lab(),
                    Some(*lab),
                    "'{c}' on the overview of a {lab:?} run"
                );
            }
            let (does, _) = binding(&key, false, None, &LabKind::ALL).unwrap();
            assert_eq!(does.lab(), Some(k.labs[0]));
        }
    }

    #[test]
    fn a_key_of_the_live_lab_is_found_in_a_replay_to_be_refused_and_the_replay_keys_win_there() {
        let key = |c| KeyEvent::from(KeyCode::Char(c));
        for k in keys().iter().filter(|k| k.when == When::Live) {
            for (press, does) in &k.bindings {
                let Press::Char(c) = press else { continue };
                let replayed = binding(&key(*c), true, None, &LabKind::ALL);
                match replayed {
                    Some((_, false)) => {}
                    // The replay's own key of the same character ('>' is faster there).
                    Some((other, true)) => assert!(
                        keys().iter().any(|r| r.when == When::Replay
                            && r.bindings.iter().any(|(p, d)| p == press && *d == other)),
                        "'{c}' ({does:?}) works in a replay as {other:?}"
                    ),
                    None => panic!("'{c}' is not found in a replay"),
                }
            }
        }
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(binding(&ctrl_c, false, None, &[]), Some((Does::Quit, true)));
        assert_eq!(binding(&key('Q'), false, None, &LabKind::ALL), None);
    }

    #[test]
    fn the_tab_keys_number_the_labs_in_the_registrys_order() {
        let tabs = keys()
            .iter()
            .find(|k| matches!(k.footer, Footer::Tabs(_)))
            .unwrap();
        for (i, lab) in LabKind::ALL.into_iter().enumerate() {
            let c = char::from_digit(i as u32 + 1, 10).unwrap();
            assert!(
                tabs.bindings
                    .contains(&(Press::Char(c), Does::Show(Tab::Lab(lab))))
            );
            assert!(
                tabs.what.contains(&format!("{} {}", i + 1, lab.name())),
                "{}",
                tabs.what
            );
        }
    }
}
