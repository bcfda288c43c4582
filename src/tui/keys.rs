//! Every key the TUI answers, declared once: the help overlay, the footer and the keys
//! `latlab screenshot --press` accepts are all drawn from [`KEYS`]. What a key does is in
//! `app.rs`; a test below checks that every key listed here is answered there.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::Tab;
use crate::labs::{LabKind, kinesis, redis, s3};
use crate::run::Command;
// The lab commands, briefly, for the table below.
use Command::{Kinesis as K, Redis as R, S3 as S};
use Press::{Char, Code, Ctrl};

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
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub keys: &'static str,
    pub what: &'static str,
    pub press: &'static str,
    pub footer: Footer,
    /// Whether the key works live, in a replay, or in both.
    pub when: When,
    /// The labs whose experiment it changes: the help lists it only in a run with one of them
    /// (empty: every run).
    pub labs: &'static [LabKind],
    /// What each of its keys does when pressed: the one place a key code is bound.
    pub bindings: &'static [(Press, Does)],
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
    /// On `tab`, the first command; on any other, the second (sent as they are).
    OfTab(Tab, Command, Command),
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
pub fn binding(key: &KeyEvent, replay: bool) -> Option<(Does, bool)> {
    let find = |works: bool| {
        KEYS.iter()
            .filter(|k| k.works(replay) == works)
            .flat_map(|k| k.bindings)
            .find(|(press, _)| press.matches(key))
            .map(|(_, does)| (*does, works))
    };
    find(true).or_else(|| find(false))
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

/// Every key, in the help's order.
pub const KEYS: &[Key] = &[
    Key {
        keys: "+ / -",
        what: "add / remove a GetRecords poller",
        press: "+-",
        footer: Footer::Lab {
            tab: &[("+/-", "pollers")],
            overview: &[("+/-", "pollers")],
        },
        when: When::Live,
        labs: &[LabKind::Kinesis],
        bindings: &[
            (Char('+'), Does::Send(K(kinesis::Command::AddPoller))),
            (Char('='), Does::Send(K(kinesis::Command::AddPoller))),
            (Char('-'), Does::Send(K(kinesis::Command::RemovePoller))),
            (Char('_'), Does::Send(K(kinesis::Command::RemovePoller))),
        ],
    },
    Key {
        keys: "< / >",
        what: "producer rate down / up (1, 2, 5, 10, 20, 50, ... records/s)",
        press: "<>",
        footer: Footer::Lab {
            tab: &[("</>", "rate")],
            overview: &[],
        },
        when: When::Live,
        labs: &[LabKind::Kinesis],
        bindings: &[
            (Char('>'), Does::Lab(K(kinesis::Command::RateUp))),
            (Char('.'), Does::Lab(K(kinesis::Command::RateUp))),
            (Char('<'), Does::Lab(K(kinesis::Command::RateDown))),
            (Char(','), Does::Lab(K(kinesis::Command::RateDown))),
        ],
    },
    Key {
        keys: "e / E",
        what: "add / remove an enhanced fan-out consumer (registered, subscribed; deregistered)",
        press: "eE",
        footer: Footer::Lab {
            tab: &[("e/E", "fan-out")],
            overview: &[],
        },
        when: When::Live,
        labs: &[LabKind::Kinesis],
        bindings: &[
            (Char('e'), Does::Lab(K(kinesis::Command::AddFanOut))),
            (Char('E'), Does::Lab(K(kinesis::Command::RemoveFanOut))),
        ],
    },
    Key {
        keys: "x / X",
        what: "double / halve the stream's shards (UpdateShardCount, uniform scaling)",
        press: "xX",
        footer: Footer::Hidden,
        when: When::Live,
        labs: &[LabKind::Kinesis],
        bindings: &[
            (
                Char('x'),
                Does::Lab(K(kinesis::Command::Reshard(kinesis::Scale::Double))),
            ),
            (
                Char('X'),
                Does::Lab(K(kinesis::Command::Reshard(kinesis::Scale::Halve))),
            ),
        ],
    },
    Key {
        keys: "b",
        what: "producer: PutRecord per record / PutRecords batches",
        press: "b",
        footer: Footer::Hidden,
        when: When::Live,
        labs: &[LabKind::Kinesis],
        bindings: &[(Char('b'), Does::Lab(K(kinesis::Command::ProducerMode)))],
    },
    Key {
        keys: "i",
        what: "pollers' interval: 200 ms, 500 ms, 1 s, 2 s",
        press: "i",
        footer: Footer::Hidden,
        when: When::Live,
        labs: &[LabKind::Kinesis],
        bindings: &[(Char('i'), Does::Lab(K(kinesis::Command::PollerInterval)))],
    },
    Key {
        keys: "a / o",
        what: "pollers' retries: standard / adaptive mode; one shared retry quota / one each",
        press: "ao",
        footer: Footer::Hidden,
        when: When::Live,
        labs: &[LabKind::Kinesis],
        bindings: &[
            (Char('a'), Does::Lab(K(kinesis::Command::RetryMode))),
            (Char('o'), Does::Lab(K(kinesis::Command::RetryQuota))),
        ],
    },
    Key {
        keys: "[ / ]",
        what: "payload size down / up (of the tab shown)",
        press: "[]",
        footer: Footer::Lab {
            tab: &[("[/]", "payload")],
            overview: &[],
        },
        when: When::Live,
        labs: &[LabKind::Kinesis, LabKind::S3],
        bindings: &[
            (
                Char(']'),
                Does::OfTab(
                    Tab::S3,
                    S(s3::Command::PayloadUp),
                    K(kinesis::Command::PayloadUp),
                ),
            ),
            (
                Char('['),
                Does::OfTab(
                    Tab::S3,
                    S(s3::Command::PayloadDown),
                    K(kinesis::Command::PayloadDown),
                ),
            ),
        ],
    },
    Key {
        keys: "s",
        what: "toggle the S3 storage class: Express One Zone / Standard",
        press: "s",
        footer: Footer::Lab {
            tab: &[("s", "class")],
            overview: &[("s", "S3 class")],
        },
        when: When::Live,
        labs: &[LabKind::S3],
        bindings: &[(Char('s'), Does::Lab(S(s3::Command::ToggleClass)))],
    },
    Key {
        keys: "v / c / m",
        what: "Redis: value size / CPU load / memory full",
        press: "vcm",
        footer: Footer::Lab {
            tab: &[("v", "value"), ("c", "CPU load"), ("m", "memory")],
            overview: &[("v", "Redis value")],
        },
        when: When::Live,
        labs: &[LabKind::Redis],
        bindings: &[
            (Char('v'), Does::Lab(R(redis::Command::ValueNext))),
            (Char('c'), Does::Lab(R(redis::Command::CpuLoad))),
            (Char('m'), Does::Lab(R(redis::Command::MemoryFull))),
        ],
    },
    Key {
        keys: "C",
        what: "S3: requests in flight at once: 1, 4, 16, 64",
        press: "C",
        footer: Footer::Lab {
            tab: &[("C", "in flight")],
            overview: &[],
        },
        when: When::Live,
        labs: &[LabKind::S3],
        bindings: &[(Char('C'), Does::Lab(S(s3::Command::Concurrency)))],
    },
    Key {
        keys: "L",
        what: "Redis: replication link: loopback, same-az, cross-az, t3-micro",
        press: "L",
        footer: Footer::Lab {
            tab: &[("L", "link")],
            overview: &[],
        },
        when: When::Live,
        labs: &[LabKind::Redis],
        bindings: &[(Char('L'), Does::Lab(R(redis::Command::LinkNext)))],
    },
    Key {
        keys: "l",
        what: "the emulator's latency profile: zero, same-region, seed-tokyo, profiles/*.toml",
        press: "l",
        footer: Footer::Hidden,
        when: When::Live,
        labs: &[LabKind::Kinesis, LabKind::S3],
        bindings: &[(Char('l'), Does::Send(Command::Profile))],
    },
    Key {
        keys: "Tab, 0 - 3",
        what: "tabs: 0 overview (several labs), 1 Kinesis, 2 S3, 3 Redis",
        press: "0123",
        footer: Footer::Tabs(&[("Tab", "labs")]),
        when: When::Always,
        labs: &[],
        bindings: &[
            (Code(KeyCode::Tab), Does::NextTab),
            (Code(KeyCode::BackTab), Does::PreviousTab),
            (Char('0'), Does::Show(Tab::Overview)),
            (Char('1'), Does::Show(Tab::Kinesis)),
            (Char('2'), Does::Show(Tab::S3)),
            (Char('3'), Does::Show(Tab::Redis)),
        ],
    },
    Key {
        keys: "f",
        what: "fault menu: inject a fault now (a letter picks it)",
        press: "f",
        footer: Footer::Trail(&[("f", "fault")]),
        when: When::Live,
        labs: &[],
        bindings: &[(Char('f'), Does::FaultMenu)],
    },
    Key {
        keys: "p",
        what: "pause the display (probes keep running)",
        press: "",
        footer: Footer::Trail(&[("p", "pause")]),
        when: When::Live,
        labs: &[],
        bindings: &[(Char('p'), Does::Pause)],
    },
    Key {
        keys: "r",
        what: "reset histograms and counts",
        press: "r",
        footer: Footer::Trail(&[("r", "reset")]),
        when: When::Live,
        labs: &[],
        bindings: &[(Char('r'), Does::Send(Command::Reset))],
    },
    Key {
        keys: "z / Z",
        what: "zoom the sparklines' time window in / out",
        press: "zZ",
        footer: Footer::Trail(&[("z/Z", "zoom")]),
        when: When::Always,
        labs: &[],
        bindings: &[(Char('z'), Does::ZoomIn), (Char('Z'), Does::ZoomOut)],
    },
    Key {
        keys: "t",
        what: "next theme",
        press: "t",
        footer: Footer::Trail(&[("t", "theme")]),
        when: When::Always,
        labs: &[],
        bindings: &[(Char('t'), Does::NextTheme)],
    },
    Key {
        keys: "?",
        what: "this help",
        press: "",
        footer: Footer::Lead(&[("?", "help")]),
        when: When::Always,
        labs: &[],
        bindings: &[
            (Char('?'), Does::Help),
            (Char('h'), Does::Help),
            (Code(KeyCode::F(1)), Does::Help),
        ],
    },
    Key {
        keys: "q, Esc, Ctrl-C",
        what: "quit and print the summary tables",
        press: "",
        footer: Footer::Lead(&[("q", "quit")]),
        when: When::Always,
        labs: &[],
        bindings: &[
            (Char('q'), Does::Quit),
            (Code(KeyCode::Esc), Does::Quit),
            (Ctrl('c'), Does::Quit),
        ],
    },
    Key {
        keys: "Space, p",
        what: "replay: play / pause",
        press: "",
        footer: Footer::Replay(&[("Space", "play/pause")]),
        when: When::Replay,
        labs: &[],
        bindings: &[(Char(' '), Does::PlayPause), (Char('p'), Does::PlayPause)],
    },
    Key {
        keys: "← / →",
        what: "replay: one second back / on (pauses)",
        press: "",
        footer: Footer::Replay(&[("←/→", "step")]),
        when: When::Replay,
        labs: &[],
        bindings: &[
            (Code(KeyCode::Left), Does::Back),
            (Code(KeyCode::Right), Does::On),
        ],
    },
    Key {
        keys: "n / N",
        what: "replay: jump to the next / previous event (key, fault, throttle burst, error)",
        press: "",
        footer: Footer::Replay(&[("n/N", "event")]),
        when: When::Replay,
        labs: &[],
        bindings: &[
            (Char('n'), Does::NextEvent),
            (Char('N'), Does::PreviousEvent),
        ],
    },
    Key {
        keys: "< / >",
        what: "replay: slower / faster (1x 2x 5x 10x 30x 60x)",
        press: "",
        footer: Footer::Replay(&[("</>", "speed")]),
        when: When::Replay,
        labs: &[],
        bindings: &[
            (Char('>'), Does::Faster),
            (Char('.'), Does::Faster),
            (Char('<'), Does::Slower),
            (Char(','), Does::Slower),
        ],
    },
    Key {
        keys: "Home / End",
        what: "replay: the recording's start / end",
        press: "",
        footer: Footer::Hidden,
        when: When::Replay,
        labs: &[],
        bindings: &[
            (Code(KeyCode::Home), Does::Start),
            (Code(KeyCode::End), Does::End),
        ],
    },
];

/// The characters `latlab screenshot --press` accepts: the keys that change the experiment or
/// the display, never one that quits or waits for another key.
pub fn pressable() -> String {
    KEYS.iter().flat_map(|k| k.press.chars()).collect()
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
    for k in KEYS.iter().rev() {
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
    KEYS.iter().filter(move |k| {
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
    use crate::tui::app::{Action, App, Tab};
    use crate::tui::theme::Theme;
    use crossterm::event::{KeyCode, KeyEvent};

    #[test]
    fn every_listed_key_is_answered() {
        for k in KEYS {
            for c in k.press.chars() {
                let mut app = App::new(Theme::dark());
                app.sync_labs(&LabKind::ALL);
                let action = app.key(KeyEvent::from(KeyCode::Char(c)), || {
                    crate::tui::fixture::sample_tour_view()
                });
                assert_ne!(action, Action::None, "'{c}' ({}) does nothing", k.keys);
            }
        }
        assert_eq!(pressable(), "+-<>eExXbiao[]svcmCLl0123frzZt");
    }

    #[test]
    fn no_key_is_bound_twice_where_it_works_and_every_pressable_key_is_bound() {
        for replay in [false, true] {
            let mut seen: Vec<(Press, &str)> = Vec::new();
            for k in KEYS.iter().filter(|k| k.works(replay)) {
                for (press, _) in k.bindings {
                    if let Some((_, other)) = seen.iter().find(|(p, _)| p == press) {
                        panic!("{press:?} is bound by both '{other}' and '{}'", k.keys);
                    }
                    seen.push((*press, k.keys));
                }
            }
        }
        for k in KEYS {
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
    fn a_key_of_the_live_lab_is_found_in_a_replay_to_be_refused() {
        let key = |c| KeyEvent::from(KeyCode::Char(c));
        assert_eq!(
            binding(&key('+'), true),
            Some((
                Does::Send(Command::Kinesis(kinesis::Command::AddPoller)),
                false
            ))
        );
        assert_eq!(binding(&key('>'), true), Some((Does::Faster, true)));
        assert_eq!(
            binding(&key('>'), false),
            Some((Does::Lab(Command::Kinesis(kinesis::Command::RateUp)), true))
        );
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(binding(&ctrl_c, false), Some((Does::Quit, true)));
        assert_eq!(
            binding(&key('c'), false),
            Some((Does::Lab(Command::Redis(redis::Command::CpuLoad)), true))
        );
        assert_eq!(binding(&key('w'), false), None);
    }

    #[test]
    fn the_footer_shows_each_tab_its_own_keys_first() {
        let names = |tab: Tab, labs: &[LabKind]| {
            footer(tab.lab(), labs, labs.len() > 1, false)
                .into_iter()
                .map(|(k, _)| k)
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            names(Tab::Kinesis, &[LabKind::Kinesis]),
            "q ? +/- </> e/E [/] f p r z/Z t"
        );
        assert_eq!(names(Tab::S3, &[LabKind::S3]), "q ? s C [/] f p r z/Z t");
        assert_eq!(
            names(Tab::Redis, &[LabKind::Redis]),
            "q ? v c m L f p r z/Z t"
        );
        assert_eq!(
            names(Tab::Overview, &[LabKind::Kinesis, LabKind::Redis]),
            "q ? Tab +/- v f p r z/Z t"
        );
    }
}
