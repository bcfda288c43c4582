//! The table of every key: what it shows as, what it does, where the footer shows it and
//! which labs it belongs to, built once from each lab's rows (`Lab::KEYS`, in its folder: the
//! registry's order) and the TUI's own (the latency profile, tabs, faults, pause, reset, zoom,
//! theme, help, quit and the replay's cursor). The rest of the key handling (matching, the
//! footer, the help's selection) is in `mod.rs`.

use std::sync::LazyLock;

use super::{Does, Footer, Key, Press, When};
use crate::lab_kit::view::keys::{KeyFooter, LabKey};
use crate::labs::LabKind;
use crate::run::Command;
use crate::tui::app::Tab;
use Press::{Char, Code, Ctrl};
use crossterm::event::KeyCode;

/// Every key, in the help's order: each lab's, then the latency profile's and the tabs', then
/// the rest of the TUI's.
pub fn keys() -> &'static [Key] {
    static TABLE: LazyLock<Vec<Key>> = LazyLock::new(table);
    &TABLE
}

fn table() -> Vec<Key> {
    let mut keys: Vec<Key> = Vec::new();
    for row in lab_rows() {
        // A row another lab already has (the same keys and words) is that row, for one more lab.
        match keys
            .iter_mut()
            .find(|k| k.keys == row.keys && k.what == row.what)
        {
            Some(k) => {
                k.labs.extend(row.labs);
                k.bindings.extend(row.bindings);
            }
            None => keys.push(row),
        }
    }
    keys.push(profile());
    keys.push(tabs());
    keys.extend(RUN_KEYS.iter().map(RunKey::key));
    keys
}

/// A lab's row, its commands wrapped as the run's.
fn lab_row<C: Copy>(kind: LabKind, row: &LabKey<C>, command: fn(C) -> Command) -> Key {
    Key {
        keys: row.keys.into(),
        what: row.what.into(),
        press: row.press.into(),
        footer: match row.footer {
            KeyFooter::Hidden => Footer::Hidden,
            KeyFooter::Shown { tab, overview } => Footer::Lab { tab, overview },
        },
        when: When::Live,
        labs: vec![kind],
        bindings: row
            .bindings
            .iter()
            .map(|(c, cmd)| {
                let cmd = command(*cmd);
                (
                    Char(*c),
                    if row.send {
                        Does::Send(cmd)
                    } else {
                        Does::Lab(cmd)
                    },
                )
            })
            .collect(),
    }
}

macro_rules! lab_rows {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        /// Every lab's rows, in the registry's order.
        fn lab_rows() -> Vec<Key> {
            let mut out = Vec::new();
            $(for row in <crate::labs::$module::$ty as crate::labs::Shown>::KEYS {
                out.push(lab_row(LabKind::$kind, row, Command::$kind));
            })*
            out
        }
    };
}
crate::labs::for_each_lab!(lab_rows);

/// The emulator's latency profile: for the labs whose service the emulator serves.
fn profile() -> Key {
    Key {
        keys: "l".into(),
        what: "the emulator's latency profile: zero, same-region, seed-tokyo, profiles/*.toml"
            .into(),
        press: "l".into(),
        footer: Footer::Hidden,
        when: When::Live,
        labs: LabKind::ALL
            .into_iter()
            .filter(|l| l.service().is_some_and(|s| s.emulated()))
            .collect(),
        bindings: vec![(Char('l'), Does::Send(Command::Profile))],
    }
}

/// The tabs: 0 the overview, then each lab's, numbered in the registry's order.
fn tabs() -> Key {
    let digits: String = (0..=LabKind::ALL.len()).map(|i| i.to_string()).collect();
    let named: Vec<String> = LabKind::ALL
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{} {}", i + 1, l.name()))
        .collect();
    let mut bindings = vec![
        (Code(KeyCode::Tab), Does::NextTab),
        (Code(KeyCode::BackTab), Does::PreviousTab),
        (Char('0'), Does::Show(Tab::Overview)),
    ];
    for (c, l) in digits.chars().skip(1).zip(LabKind::ALL) {
        bindings.push((Char(c), Does::Show(Tab::Lab(l))));
    }
    Key {
        keys: format!("Tab, 0 - {}", LabKind::ALL.len()),
        what: format!("tabs: 0 overview (several labs), {}", named.join(", ")),
        press: digits,
        footer: Footer::Tabs(&[("Tab", "labs")]),
        when: When::Always,
        labs: Vec::new(),
        bindings,
    }
}

/// One of the TUI's own rows, as written.
struct RunKey {
    keys: &'static str,
    what: &'static str,
    press: &'static str,
    footer: Footer,
    when: When,
    bindings: &'static [(Press, Does)],
}

impl RunKey {
    fn key(&self) -> Key {
        Key {
            keys: self.keys.into(),
            what: self.what.into(),
            press: self.press.into(),
            footer: self.footer,
            when: self.when,
            labs: Vec::new(),
            bindings: self.bindings.to_vec(),
        }
    }
}

/// The TUI's own rows after the tabs, in the help's order.
const RUN_KEYS: &[RunKey] = &[
    RunKey {
        keys: "f",
        what: "fault menu: inject a fault now (a letter picks it)",
        press: "f",
        footer: Footer::Trail(&[("f", "fault")]),
        when: When::Live,
        bindings: &[(Char('f'), Does::FaultMenu)],
    },
    RunKey {
        keys: "p",
        what: "pause the display (probes keep running)",
        press: "",
        footer: Footer::Trail(&[("p", "pause")]),
        when: When::Live,
        bindings: &[(Char('p'), Does::Pause)],
    },
    RunKey {
        keys: "r",
        what: "reset histograms and counts",
        press: "r",
        footer: Footer::Trail(&[("r", "reset")]),
        when: When::Live,
        bindings: &[(Char('r'), Does::Send(Command::Reset))],
    },
    RunKey {
        keys: "z / Z",
        what: "zoom the sparklines' time window in / out",
        press: "zZ",
        footer: Footer::Trail(&[("z/Z", "zoom")]),
        when: When::Always,
        bindings: &[(Char('z'), Does::ZoomIn), (Char('Z'), Does::ZoomOut)],
    },
    RunKey {
        keys: "t",
        what: "next theme",
        press: "t",
        footer: Footer::Trail(&[("t", "theme")]),
        when: When::Always,
        bindings: &[(Char('t'), Does::NextTheme)],
    },
    RunKey {
        keys: "?",
        what: "this help",
        press: "",
        footer: Footer::Lead(&[("?", "help")]),
        when: When::Always,
        bindings: &[
            (Char('?'), Does::Help),
            (Char('h'), Does::Help),
            (Code(KeyCode::F(1)), Does::Help),
        ],
    },
    RunKey {
        keys: "q, Esc, Ctrl-C",
        what: "quit and print the summary tables",
        press: "",
        footer: Footer::Lead(&[("q", "quit")]),
        when: When::Always,
        bindings: &[
            (Char('q'), Does::Quit),
            (Code(KeyCode::Esc), Does::Quit),
            (Ctrl('c'), Does::Quit),
        ],
    },
    RunKey {
        keys: "Space, p",
        what: "replay: play / pause",
        press: "",
        footer: Footer::Replay(&[("Space", "play/pause")]),
        when: When::Replay,
        bindings: &[(Char(' '), Does::PlayPause), (Char('p'), Does::PlayPause)],
    },
    RunKey {
        keys: "← / →",
        what: "replay: one second back / on (pauses)",
        press: "",
        footer: Footer::Replay(&[("←/→", "step")]),
        when: When::Replay,
        bindings: &[
            (Code(KeyCode::Left), Does::Back),
            (Code(KeyCode::Right), Does::On),
        ],
    },
    RunKey {
        keys: "n / N",
        what: "replay: jump to the next / previous event (key, fault, throttle burst, error)",
        press: "",
        footer: Footer::Replay(&[("n/N", "event")]),
        when: When::Replay,
        bindings: &[
            (Char('n'), Does::NextEvent),
            (Char('N'), Does::PreviousEvent),
        ],
    },
    RunKey {
        keys: "< / >",
        what: "replay: slower / faster (1x 2x 5x 10x 30x 60x)",
        press: "",
        footer: Footer::Replay(&[("</>", "speed")]),
        when: When::Replay,
        bindings: &[
            (Char('>'), Does::Faster),
            (Char('.'), Does::Faster),
            (Char('<'), Does::Slower),
            (Char(','), Does::Slower),
        ],
    },
    RunKey {
        keys: "Home / End",
        what: "replay: the recording's start / end",
        press: "",
        footer: Footer::Hidden,
        when: When::Replay,
        bindings: &[
            (Code(KeyCode::Home), Does::Start),
            (Code(KeyCode::End), Does::End),
        ],
    },
];
