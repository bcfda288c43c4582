//! The TUI's state and what each key does (the keys themselves are listed once, in
//! [`super::keys::KEYS`]). Keys never touch probes directly: they become a
//! [`crate::run::Command`] for the supervisor, or change only what is displayed.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};

use super::theme::Theme;
use super::view::View;
use crate::labs::{LabKind, kinesis, redis, s3};
use crate::run::Command;

/// Sparkline time windows the zoom keys step through, in seconds.
pub const ZOOMS: &[u64] = &[30, 60, 120, 300, 600];

/// What a key asks of the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    None,
    Redraw,
    Quit,
    Lab(Command),
}

/// The labs a scenario runs, one tab each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    /// Every lab the scenario runs, on one screen (when it runs more than one).
    Overview,
    Kinesis,
    S3,
    Redis,
}

impl Tab {
    pub const ALL: [Tab; 4] = [Tab::Overview, Tab::Kinesis, Tab::S3, Tab::Redis];

    /// The lab the tab shows (None: the overview).
    pub fn lab(self) -> Option<LabKind> {
        match self {
            Tab::Overview => None,
            Tab::Kinesis => Some(LabKind::Kinesis),
            Tab::S3 => Some(LabKind::S3),
            Tab::Redis => Some(LabKind::Redis),
        }
    }

    pub fn of(lab: LabKind) -> Tab {
        match lab {
            LabKind::Kinesis => Tab::Kinesis,
            LabKind::S3 => Tab::S3,
            LabKind::Redis => Tab::Redis,
        }
    }
}

pub struct App {
    pub tab: Tab,
    /// The labs the running scenario has, in screen order: the tabs that exist.
    pub labs: Vec<LabKind>,
    pub themes: Vec<Theme>,
    pub theme: usize,
    pub zoom: usize,
    pub paused: Option<View>,
    pub help: bool,
    /// Lines the help is scrolled by (when it is taller than the screen).
    pub help_scroll: u16,
    /// The fault menu is open.
    pub fault_menu: bool,
    /// A replay's time cursor (`latlab replay`); None in the live lab.
    pub replay: Option<super::cursor::Cursor>,
    /// The last confirmation or error, and when it came.
    pub message: Option<(String, bool, Instant)>,
    /// Whether the first tab has been chosen from the labs the scenario runs.
    chosen: bool,
    /// The prices the panes' cost lines use (`--prices`); None: the run's region's file.
    pub prices: Option<std::sync::Arc<crate::cost::Prices>>,
}

impl App {
    pub fn new(theme: Theme) -> App {
        let mut themes = vec![theme.clone()];
        for (name, _) in super::theme::BUILTIN {
            if *name != theme.name
                && let Ok(t) = Theme::resolve(name)
            {
                themes.push(t);
            }
        }
        App {
            tab: Tab::Kinesis,
            labs: vec![LabKind::Kinesis],
            themes,
            theme: 0,
            zoom: 1,
            paused: None,
            help: false,
            help_scroll: 0,
            fault_menu: false,
            replay: None,
            message: None,
            chosen: false,
            prices: None,
        }
    }

    pub fn theme(&self) -> &Theme {
        &self.themes[self.theme]
    }

    /// Follows the labs the view shows: the tab shown is always one the scenario has.
    /// A scenario with several labs opens on the overview.
    pub fn sync_labs(&mut self, labs: &[LabKind]) {
        self.labs = LabKind::ALL
            .into_iter()
            .filter(|l| labs.contains(l))
            .collect();
        if !self.chosen {
            self.chosen = true;
            if self.has(Tab::Overview) {
                self.tab = Tab::Overview;
            }
        }
        if !self.has(self.tab)
            && let Some(t) = Tab::ALL.into_iter().find(|t| self.has(*t))
        {
            self.tab = t;
        }
    }

    pub fn has(&self, tab: Tab) -> bool {
        match tab.lab() {
            None => self.labs.len() > 1,
            Some(lab) => self.labs.contains(&lab),
        }
    }

    fn switch(&mut self, tab: Tab) -> Action {
        if self.has(tab) {
            self.tab = tab;
        } else {
            let text = match tab.lab() {
                None => "this scenario runs one lab: its tab is the whole picture".to_string(),
                Some(lab) => format!("this scenario has no {} lab", lab.name()),
            };
            self.say(text, true);
        }
        Action::Redraw
    }

    /// A key of one lab: the command (and that lab's tab, unless the overview is shown), or a
    /// message when the scenario does not run the lab.
    fn lab_key(&mut self, cmd: Command) -> Action {
        let Some(lab) = cmd.lab() else {
            return Action::Lab(cmd);
        };
        if self.labs.contains(&lab) {
            if self.tab != Tab::Overview {
                self.tab = Tab::of(lab);
            }
            Action::Lab(cmd)
        } else {
            self.say(
                format!(
                    "this scenario has no {} lab: try `latlab tui {}`",
                    lab.name(),
                    lab.demo()
                ),
                true,
            );
            Action::Redraw
        }
    }

    pub fn window(&self) -> u64 {
        ZOOMS[self.zoom]
    }

    /// A confirmation (or, with `error`, a refusal) shown on the status line for a few seconds.
    pub fn say(&mut self, text: impl Into<String>, error: bool) {
        self.message = Some((text.into(), error, Instant::now()));
    }

    pub fn current_message(&self) -> Option<(&str, bool)> {
        self.message
            .as_ref()
            .filter(|(_, _, at)| at.elapsed() < Duration::from_secs(8))
            .map(|(t, e, _)| (t.as_str(), *e))
    }

    /// A key press. `live` is the view right now (kept when the display is paused).
    pub fn key(&mut self, key: KeyEvent, live: impl FnOnce() -> View) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::None;
        }
        if self.help
            && matches!(
                key.code,
                KeyCode::Up | KeyCode::Down | KeyCode::PageUp | KeyCode::PageDown
            )
        {
            // A help taller than the screen scrolls.
            self.help_scroll = match key.code {
                KeyCode::Up => self.help_scroll.saturating_sub(1),
                KeyCode::PageUp => self.help_scroll.saturating_sub(10),
                KeyCode::Down => self.help_scroll.saturating_add(1),
                _ => self.help_scroll.saturating_add(10),
            };
            return Action::Redraw;
        }
        if self.help && !matches!(key.code, KeyCode::Char('q') | KeyCode::Char('c')) {
            // Any key closes the help overlay.
            self.help = false;
            return Action::Redraw;
        }
        if self.fault_menu {
            return self.fault_menu_key(key);
        }
        if self.replay.is_some() {
            return self.replay_key(key, live);
        }
        self.live_key(key, live)
    }

    /// A key in a replay: the cursor's keys, the display's; a key that would change the
    /// experiment is refused (a recording shows what was measured).
    fn replay_key(&mut self, key: KeyEvent, live: impl FnOnce() -> View) -> Action {
        let cursor = self.replay.as_mut().expect("a replay");
        let said = match key.code {
            KeyCode::Char(' ') | KeyCode::Char('p') => Some(cursor.toggle()),
            KeyCode::Right => {
                cursor.step(1.0);
                None
            }
            KeyCode::Left => {
                cursor.step(-1.0);
                None
            }
            // The event jumped to is shown on the status line by the replay's loop.
            KeyCode::Char('n') => cursor
                .next_event()
                .is_none()
                .then(|| "no event after this point of the recording".to_string()),
            KeyCode::Char('N') => cursor
                .previous_event()
                .is_none()
                .then(|| "no event before this point of the recording".to_string()),
            KeyCode::Char('>') | KeyCode::Char('.') => Some(format!("{}x", cursor.faster())),
            KeyCode::Char('<') | KeyCode::Char(',') => Some(format!("{}x", cursor.slower())),
            KeyCode::Home => {
                cursor.start();
                None
            }
            KeyCode::End => {
                cursor.end();
                None
            }
            _ => {
                return match self.live_key(key, live) {
                    Action::Lab(cmd) => {
                        self.say(
                            format!(
                                "replay: {} would change the experiment; a recording plays back what was measured (run `latlab tui` to change it live)",
                                cmd.what()
                            ),
                            true,
                        );
                        Action::Redraw
                    }
                    other => {
                        if self.fault_menu {
                            self.fault_menu = false;
                            self.say(
                                "replay: faults cannot be injected into a recording (run `latlab tui` to inject them live)",
                                true,
                            );
                        }
                        other
                    }
                };
            }
        };
        if let Some(text) = said {
            self.say(text, false);
        }
        Action::Redraw
    }

    /// A key in the live lab (and, for the display's keys, in a replay).
    fn live_key(&mut self, key: KeyEvent, live: impl FnOnce() -> View) -> Action {
        match (key.code, key.modifiers) {
            (KeyCode::Char('c'), m) if m.contains(KeyModifiers::CONTROL) => Action::Quit,
            (KeyCode::Char('q'), _) | (KeyCode::Esc, _) => Action::Quit,
            (KeyCode::Char('+'), _) | (KeyCode::Char('='), _) => {
                Action::Lab(Command::Kinesis(kinesis::Command::AddPoller))
            }
            (KeyCode::Char('-'), _) | (KeyCode::Char('_'), _) => {
                Action::Lab(Command::Kinesis(kinesis::Command::RemovePoller))
            }
            (KeyCode::Char('>'), _) | (KeyCode::Char('.'), _) => {
                self.lab_key(Command::Kinesis(kinesis::Command::RateUp))
            }
            (KeyCode::Char('<'), _) | (KeyCode::Char(','), _) => {
                self.lab_key(Command::Kinesis(kinesis::Command::RateDown))
            }
            (KeyCode::Char('b'), _) => {
                self.lab_key(Command::Kinesis(kinesis::Command::ProducerMode))
            }
            (KeyCode::Char('i'), _) => {
                self.lab_key(Command::Kinesis(kinesis::Command::PollerInterval))
            }
            (KeyCode::Char('a'), _) => self.lab_key(Command::Kinesis(kinesis::Command::RetryMode)),
            (KeyCode::Char('o'), _) => self.lab_key(Command::Kinesis(kinesis::Command::RetryQuota)),
            (KeyCode::Char('e'), _) => self.lab_key(Command::Kinesis(kinesis::Command::AddFanOut)),
            (KeyCode::Char('E'), _) => {
                self.lab_key(Command::Kinesis(kinesis::Command::RemoveFanOut))
            }
            (KeyCode::Char('x'), _) => self.lab_key(Command::Kinesis(kinesis::Command::Reshard(
                kinesis::Scale::Double,
            ))),
            (KeyCode::Char('X'), _) => self.lab_key(Command::Kinesis(kinesis::Command::Reshard(
                kinesis::Scale::Halve,
            ))),
            (KeyCode::Char(']'), _) if self.tab == Tab::S3 => {
                Action::Lab(Command::S3(s3::Command::PayloadUp))
            }
            (KeyCode::Char('['), _) if self.tab == Tab::S3 => {
                Action::Lab(Command::S3(s3::Command::PayloadDown))
            }
            (KeyCode::Char(']'), _) => Action::Lab(Command::Kinesis(kinesis::Command::PayloadUp)),
            (KeyCode::Char('['), _) => Action::Lab(Command::Kinesis(kinesis::Command::PayloadDown)),
            (KeyCode::Char('r'), _) => Action::Lab(Command::Reset),
            (KeyCode::Char('s'), _) => self.lab_key(Command::S3(s3::Command::ToggleClass)),
            (KeyCode::Tab, _) | (KeyCode::BackTab, _) => {
                let at = Tab::ALL.iter().position(|t| *t == self.tab).unwrap_or(0);
                let n = Tab::ALL.len();
                let step = if key.code == KeyCode::BackTab {
                    n - 1
                } else {
                    1
                };
                let next = (1..=n)
                    .map(|k| Tab::ALL[(at + k * step) % n])
                    .find(|t| self.has(*t))
                    .unwrap_or(self.tab);
                self.switch(next)
            }
            (KeyCode::Char('0'), _) => self.switch(Tab::Overview),
            (KeyCode::Char('1'), _) => self.switch(Tab::Kinesis),
            (KeyCode::Char('2'), _) => self.switch(Tab::S3),
            (KeyCode::Char('3'), _) => self.switch(Tab::Redis),
            (KeyCode::Char('v'), _) => self.lab_key(Command::Redis(redis::Command::ValueNext)),
            (KeyCode::Char('c'), m) if !m.contains(KeyModifiers::CONTROL) => {
                self.lab_key(Command::Redis(redis::Command::CpuLoad))
            }
            (KeyCode::Char('m'), _) => self.lab_key(Command::Redis(redis::Command::MemoryFull)),
            (KeyCode::Char('L'), _) => self.lab_key(Command::Redis(redis::Command::LinkNext)),
            (KeyCode::Char('C'), _) => self.lab_key(Command::S3(s3::Command::Concurrency)),
            (KeyCode::Char('l'), _) => Action::Lab(Command::Profile),
            (KeyCode::Char('p'), _) => {
                if self.paused.take().is_some() {
                    self.say("display resumed", false);
                } else {
                    self.paused = Some(live());
                    self.say(
                        "display paused; the probes keep measuring (p resumes)",
                        false,
                    );
                }
                Action::Redraw
            }
            (KeyCode::Char('z'), _) => {
                self.zoom = self.zoom.saturating_sub(1);
                self.say(
                    format!("sparklines show the last {}", window_label(self.window())),
                    false,
                );
                Action::Redraw
            }
            (KeyCode::Char('Z'), _) => {
                self.zoom = (self.zoom + 1).min(ZOOMS.len() - 1);
                self.say(
                    format!("sparklines show the last {}", window_label(self.window())),
                    false,
                );
                Action::Redraw
            }
            (KeyCode::Char('t'), _) => {
                self.theme = (self.theme + 1) % self.themes.len();
                self.say(format!("theme {}", self.theme().name), false);
                Action::Redraw
            }
            (KeyCode::Char('f'), _) => {
                self.fault_menu = true;
                Action::Redraw
            }
            (KeyCode::Char('?'), _) | (KeyCode::Char('h'), _) | (KeyCode::F(1), _) => {
                self.help = true;
                self.help_scroll = 0;
                Action::Redraw
            }
            _ => Action::None,
        }
    }

    /// The faults the menu offers: those of the labs the scenario runs, lettered from `a`
    /// (skipping the keys that close the menu).
    pub fn menu_faults(&self) -> Vec<(char, crate::faults::Kind)> {
        use crate::faults::{Kind, Service};
        Kind::ALL
            .into_iter()
            .filter(|k| {
                self.labs.contains(&match k.service() {
                    Service::Kinesis => LabKind::Kinesis,
                    Service::S3 => LabKind::S3,
                    Service::Redis => LabKind::Redis,
                })
            })
            // Not f or q: in the menu they close it.
            .zip(('a'..='z').filter(|c| !matches!(c, 'f' | 'q')))
            .map(|(k, c)| (c, k))
            .collect()
    }

    /// A key while the fault menu is open: a letter injects that fault; Esc or f closes it.
    fn fault_menu_key(&mut self, key: KeyEvent) -> Action {
        match key.code {
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => Action::Quit,
            KeyCode::Esc | KeyCode::Char('f') | KeyCode::Char('q') => {
                self.fault_menu = false;
                Action::Redraw
            }
            KeyCode::Char(c) => match self.menu_faults().into_iter().find(|(l, _)| *l == c) {
                Some((_, kind)) => {
                    self.fault_menu = false;
                    Action::Lab(Command::Fault(kind))
                }
                None => {
                    self.say(
                        format!("'{c}' is not in the fault menu: press a letter from it, or Esc"),
                        true,
                    );
                    Action::Redraw
                }
            },
            _ => Action::None,
        }
    }

    /// The mouse wheel zooms the sparklines.
    pub fn mouse(&mut self, m: MouseEvent) -> Action {
        match m.kind {
            MouseEventKind::ScrollUp => {
                self.zoom = self.zoom.saturating_sub(1);
                Action::Redraw
            }
            MouseEventKind::ScrollDown => {
                self.zoom = (self.zoom + 1).min(ZOOMS.len() - 1);
                Action::Redraw
            }
            _ => Action::None,
        }
    }
}

pub fn window_label(secs: u64) -> String {
    if secs < 60 {
        format!("{secs} s")
    } else {
        format!("{} min", secs / 60)
    }
}
