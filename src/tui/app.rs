//! The TUI's state and what each key does. Keys never touch probes directly: they become a
//! [`crate::lab::Command`] for the supervisor, or change only what is displayed.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};

use super::theme::Theme;
use super::view::View;
use crate::lab::Command;

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

/// Every key, for the help overlay and the footer: (keys, what they do).
pub const KEYS: &[(&str, &str)] = &[
    ("+ / -", "add / remove a GetRecords poller"),
    ("[ / ]", "payload size down / up"),
    ("s", "toggle S3 storage class (S3 lab)"),
    ("p", "pause the display (probes keep running)"),
    ("r", "reset histograms and counts"),
    ("z / Z", "zoom the sparklines' time window in / out"),
    ("t", "next theme"),
    ("?", "this help"),
    ("q, Esc, Ctrl-C", "quit and print the summary tables"),
];

pub struct App {
    pub themes: Vec<Theme>,
    pub theme: usize,
    pub zoom: usize,
    pub paused: Option<View>,
    pub help: bool,
    /// The last confirmation or error, and when it came.
    pub message: Option<(String, bool, Instant)>,
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
            themes,
            theme: 0,
            zoom: 1,
            paused: None,
            help: false,
            message: None,
        }
    }

    pub fn theme(&self) -> &Theme {
        &self.themes[self.theme]
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
        if self.help && !matches!(key.code, KeyCode::Char('q') | KeyCode::Char('c')) {
            // Any key closes the help overlay.
            self.help = false;
            return Action::Redraw;
        }
        match (key.code, key.modifiers) {
            (KeyCode::Char('c'), m) if m.contains(KeyModifiers::CONTROL) => Action::Quit,
            (KeyCode::Char('q'), _) | (KeyCode::Esc, _) => Action::Quit,
            (KeyCode::Char('+'), _) | (KeyCode::Char('='), _) => Action::Lab(Command::AddPoller),
            (KeyCode::Char('-'), _) | (KeyCode::Char('_'), _) => Action::Lab(Command::RemovePoller),
            (KeyCode::Char(']'), _) => Action::Lab(Command::PayloadUp),
            (KeyCode::Char('['), _) => Action::Lab(Command::PayloadDown),
            (KeyCode::Char('r'), _) => Action::Lab(Command::Reset),
            (KeyCode::Char('s'), _) => {
                self.say(
                    "no S3 lab in this scenario: the S3 storage class applies to the S3 pane",
                    true,
                );
                Action::Redraw
            }
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
            (KeyCode::Char('?'), _) | (KeyCode::Char('h'), _) | (KeyCode::F(1), _) => {
                self.help = true;
                Action::Redraw
            }
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
