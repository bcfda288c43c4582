//! The TUI's state and what a key's [`Does`] does (each key is bound once, in its row of
//! [`super::keys::KEYS`]). Keys never touch probes directly: they become a
//! [`crate::run::Command`] for the supervisor, or change only what is displayed.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};

use super::keys::Does;
use super::moment::Moment;
use crate::labs::LabKind;
use crate::run::Command;
use crate::theme::Theme;

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

/// The tabs: the overview and one per lab the scenario runs (the labs from the registry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    /// Every lab the scenario runs, on one screen (when it runs more than one).
    Overview,
    Lab(LabKind),
}

impl Tab {
    /// Every tab there can be, in order: the overview, then each lab's.
    pub fn all() -> impl Iterator<Item = Tab> {
        std::iter::once(Tab::Overview).chain(LabKind::ALL.into_iter().map(Tab::Lab))
    }

    /// The lab the tab shows (None: the overview).
    pub fn lab(self) -> Option<LabKind> {
        match self {
            Tab::Overview => None,
            Tab::Lab(l) => Some(l),
        }
    }
}

pub struct App {
    pub tab: Tab,
    /// A shared run's viewers now (`--share`): the header says `shared · N viewers`.
    pub shared: Option<usize>,
    /// The host this screen is attached to (`latlab attach`): the header says so.
    pub attached: Option<String>,
    /// The labs the running scenario has, in screen order: the tabs that exist.
    pub labs: Vec<LabKind>,
    pub themes: Vec<Theme>,
    pub theme: usize,
    pub zoom: usize,
    pub paused: Option<Moment>,
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
    pub prices: Option<std::sync::Arc<crate::lab_kit::cost::Prices>>,
    /// `--max-cost`: what the run has accrued against its cap (the header shows both).
    pub cap: Option<crate::lab_kit::cost::cap::Cap>,
}

impl App {
    pub fn new(theme: Theme) -> App {
        let mut themes = vec![theme.clone()];
        for (name, _) in crate::theme::BUILTIN {
            if *name != theme.name
                && let Ok(t) = Theme::resolve(name)
            {
                themes.push(t);
            }
        }
        App {
            tab: Tab::Lab(LabKind::ALL[0]),
            shared: None,
            attached: None,
            labs: vec![LabKind::ALL[0]],
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
            cap: None,
        }
    }

    pub fn theme(&self) -> &Theme {
        &self.themes[self.theme]
    }

    /// Follows the labs the moment shows: the tab shown is always one the scenario has.
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
            && let Some(t) = Tab::all().find(|t| self.has(*t))
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
                self.tab = Tab::Lab(lab);
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

    /// A key press. `live` is the moment right now (kept when the display is paused).
    pub fn key(&mut self, key: KeyEvent, live: impl FnOnce() -> Moment) -> Action {
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
        match super::keys::binding(&key, self.replay.is_some(), self.tab.lab(), &self.labs) {
            Some((does, true)) => self.act(does, live),
            Some((does, false)) => self.refuse_in_replay(does),
            None => Action::None,
        }
    }

    /// A key of the live lab pressed in a replay: refused, saying why (a recording plays back
    /// what was measured).
    fn refuse_in_replay(&mut self, does: Does) -> Action {
        let text = match self.command(does) {
            Some(cmd) => format!(
                "replay: {} would change the experiment; a recording plays back what was measured (run `latlab tui` to change it live)",
                cmd.what()
            ),
            None if does == Does::FaultMenu => {
                "replay: faults cannot be injected into a recording (run `latlab tui` to inject them live)".to_string()
            }
            None => return Action::None,
        };
        self.say(text, true);
        Action::Redraw
    }

    /// The command a key sends, on the tab shown.
    fn command(&self, does: Does) -> Option<Command> {
        match does {
            Does::Lab(cmd) | Does::Send(cmd) => Some(cmd),
            _ => None,
        }
    }

    /// What a key does, as its row in [`super::keys::KEYS`] binds it.
    fn act(&mut self, does: Does, live: impl FnOnce() -> Moment) -> Action {
        if let Some(cmd) = self.command(does) {
            return match does {
                Does::Lab(_) => self.lab_key(cmd),
                _ => Action::Lab(cmd),
            };
        }
        if let Some(cursor) = self.replay.as_mut() {
            let said = match does {
                Does::PlayPause => Some(cursor.toggle()),
                Does::Back => {
                    cursor.step(-1.0);
                    None
                }
                Does::On => {
                    cursor.step(1.0);
                    None
                }
                // The event jumped to is shown on the status line by the replay's loop.
                Does::NextEvent => cursor
                    .next_event()
                    .is_none()
                    .then(|| "no event after this point of the recording".to_string()),
                Does::PreviousEvent => cursor
                    .previous_event()
                    .is_none()
                    .then(|| "no event before this point of the recording".to_string()),
                Does::Faster => Some(format!("{}x", cursor.faster())),
                Does::Slower => Some(format!("{}x", cursor.slower())),
                Does::Start => {
                    cursor.start();
                    None
                }
                Does::End => {
                    cursor.end();
                    None
                }
                _ => None,
            };
            if let Some(text) = said {
                self.say(text, false);
            }
        }
        match does {
            Does::Quit => return Action::Quit,
            Does::NextTab | Does::PreviousTab => {
                let tabs: Vec<Tab> = Tab::all().collect();
                let at = tabs.iter().position(|t| *t == self.tab).unwrap_or(0);
                let n = tabs.len();
                let step = if does == Does::PreviousTab { n - 1 } else { 1 };
                let next = (1..=n)
                    .map(|k| tabs[(at + k * step) % n])
                    .find(|t| self.has(*t))
                    .unwrap_or(self.tab);
                return self.switch(next);
            }
            Does::Show(tab) => return self.switch(tab),
            Does::Pause => {
                if self.paused.take().is_some() {
                    self.say("display resumed", false);
                } else {
                    self.paused = Some(live());
                    self.say(
                        "display paused; the probes keep measuring (p resumes)",
                        false,
                    );
                }
            }
            Does::ZoomIn | Does::ZoomOut => {
                self.zoom = if does == Does::ZoomIn {
                    self.zoom.saturating_sub(1)
                } else {
                    (self.zoom + 1).min(ZOOMS.len() - 1)
                };
                self.say(
                    format!("sparklines show the last {}", window_label(self.window())),
                    false,
                );
            }
            Does::NextTheme => {
                self.theme = (self.theme + 1) % self.themes.len();
                self.say(format!("theme {}", self.theme().name), false);
            }
            Does::FaultMenu => self.fault_menu = true,
            Does::Help => {
                self.help = true;
                self.help_scroll = 0;
            }
            _ => {}
        }
        Action::Redraw
    }

    /// The faults the menu offers: those of the labs the scenario runs, lettered from `a`
    /// (skipping the keys that close the menu).
    pub fn menu_faults(&self) -> Vec<(char, latlab_core::faults::Kind)> {
        use latlab_core::faults::Kind;
        Kind::all()
            .filter(|k| LabKind::of_service(k.service()).is_some_and(|l| self.labs.contains(&l)))
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
