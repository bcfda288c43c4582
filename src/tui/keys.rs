//! Every key the TUI answers, declared once: the help overlay, the footer and the keys
//! `latlab screenshot --press` accepts are all drawn from [`KEYS`]. What a key does is in
//! `app.rs`; a test below checks that every key listed here is answered there.

use crate::labs::LabKind;

/// Where a key shows in the footer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Footer {
    /// Not in the footer (the help lists it).
    Hidden,
    /// First, on every tab.
    Lead(&'static [(&'static str, &'static str)]),
    /// First, after the leading keys, when the scenario has tabs.
    Tabs(&'static [(&'static str, &'static str)]),
    /// On the tabs of `labs`; on the overview, `overview` for the labs the scenario runs.
    Lab {
        labs: &'static [LabKind],
        tab: &'static [(&'static str, &'static str)],
        overview: &'static [(&'static str, &'static str)],
    },
    /// Last, on every tab.
    Trail(&'static [(&'static str, &'static str)]),
}

/// One line of the help: the keys as shown, what they do, the characters `--press` may give
/// for them, and where the footer shows them.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub keys: &'static str,
    pub what: &'static str,
    pub press: &'static str,
    pub footer: Footer,
}

/// Every key, in the help's order.
pub const KEYS: &[Key] = &[
    Key {
        keys: "+ / -",
        what: "add / remove a GetRecords poller",
        press: "+-",
        footer: Footer::Lab {
            labs: &[LabKind::Kinesis],
            tab: &[("+/-", "pollers")],
            overview: &[("+/-", "pollers")],
        },
    },
    Key {
        keys: "[ / ]",
        what: "payload size down / up (of the tab shown)",
        press: "[]",
        footer: Footer::Lab {
            labs: &[LabKind::Kinesis, LabKind::S3],
            tab: &[("[/]", "payload")],
            overview: &[],
        },
    },
    Key {
        keys: "s",
        what: "toggle the S3 storage class: Express One Zone / Standard",
        press: "s",
        footer: Footer::Lab {
            labs: &[LabKind::S3],
            tab: &[("s", "class")],
            overview: &[("s", "S3 class")],
        },
    },
    Key {
        keys: "v / c / m",
        what: "Redis: value size / CPU load / memory full",
        press: "vcm",
        footer: Footer::Lab {
            labs: &[LabKind::Redis],
            tab: &[("v", "value"), ("c", "CPU load"), ("m", "memory")],
            overview: &[("v", "Redis value")],
        },
    },
    Key {
        keys: "Tab, 0 - 3",
        what: "tabs: 0 overview (several labs), 1 Kinesis, 2 S3, 3 Redis",
        press: "0123",
        footer: Footer::Tabs(&[("Tab", "labs")]),
    },
    Key {
        keys: "f",
        what: "fault menu: inject a fault now (a letter picks it)",
        press: "f",
        footer: Footer::Trail(&[("f", "fault")]),
    },
    Key {
        keys: "p",
        what: "pause the display (probes keep running)",
        press: "",
        footer: Footer::Trail(&[("p", "pause")]),
    },
    Key {
        keys: "r",
        what: "reset histograms and counts",
        press: "r",
        footer: Footer::Trail(&[("r", "reset")]),
    },
    Key {
        keys: "z / Z",
        what: "zoom the sparklines' time window in / out",
        press: "zZ",
        footer: Footer::Trail(&[("z/Z", "zoom")]),
    },
    Key {
        keys: "t",
        what: "next theme",
        press: "t",
        footer: Footer::Trail(&[("t", "theme")]),
    },
    Key {
        keys: "?",
        what: "this help",
        press: "",
        footer: Footer::Lead(&[("?", "help")]),
    },
    Key {
        keys: "q, Esc, Ctrl-C",
        what: "quit and print the summary tables",
        press: "",
        footer: Footer::Lead(&[("q", "quit")]),
    },
];

/// The characters `latlab screenshot --press` accepts: the keys that change the experiment or
/// the display, never one that quits or waits for another key.
pub fn pressable() -> String {
    KEYS.iter().flat_map(|k| k.press.chars()).collect()
}

/// The footer's keys for a screen: `tab` is the lab shown (None: the overview), `labs` the labs
/// the scenario runs, `tabs` whether it has tabs.
pub fn footer(
    tab: Option<LabKind>,
    labs: &[LabKind],
    tabs: bool,
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
    for k in KEYS {
        match k.footer {
            Footer::Tabs(items) if tabs => tab_keys.extend_from_slice(items),
            // On a lab's tab its own keys come first, then those it shares with other labs.
            Footer::Lab {
                labs: of,
                tab: on_tab,
                overview,
            } => match tab {
                Some(t) if of == [t] => lab_keys.extend_from_slice(on_tab),
                Some(t) if of.contains(&t) => shared_keys.extend_from_slice(on_tab),
                None if of.iter().any(|l| labs.contains(l)) => lab_keys.extend_from_slice(overview),
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
        assert_eq!(pressable(), "+-[]svcm0123frzZt");
    }

    #[test]
    fn the_footer_shows_each_tab_its_own_keys_first() {
        let names = |tab: Tab, labs: &[LabKind]| {
            footer(tab.lab(), labs, labs.len() > 1)
                .into_iter()
                .map(|(k, _)| k)
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            names(Tab::Kinesis, &[LabKind::Kinesis]),
            "q ? +/- [/] f p r z/Z t"
        );
        assert_eq!(names(Tab::S3, &[LabKind::S3]), "q ? s [/] f p r z/Z t");
        assert_eq!(
            names(Tab::Redis, &[LabKind::Redis]),
            "q ? v c m f p r z/Z t"
        );
        assert_eq!(
            names(Tab::Overview, &[LabKind::Kinesis, LabKind::Redis]),
            "q ? Tab +/- v f p r z/Z t"
        );
    }
}
