//! `latlab attach URL`: the TUI on another host's shared run, drawn from its stream with the
//! renderer the live lab and the replay use (each frame's snapshot and sparkline points, as a
//! recording holds them). The header says `ATTACHED to HOST`; pause, zoom, tab and theme are
//! this screen's own; a key that changes the experiment is sent to the host when the share
//! grants control, and refused on the status line otherwise.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{Event as TermEvent, KeyCode};
use ratatui::layout::{Constraint, Layout};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use tokio::sync::mpsc;

use super::app::{Action, App};
use super::moment::Moment;
use super::{Event, ui};
use crate::record::read::Sparks;
use crate::run::Command;
use crate::share::client::{Incoming, Target};
use crate::share::frame::{KEPT_SECONDS, RunHead};
use crate::theme::Theme;
use latlab_core::units::clock;

pub struct AttachOptions {
    pub target: Target,
    pub theme: Theme,
    pub fps: u32,
}

/// What this screen knows of the host's run, from the frames it took.
#[derive(Default)]
pub struct Attached {
    snapshot: Option<crate::snapshot::Snapshot>,
    sparks: Sparks,
    upto: BTreeMap<String, u64>,
    run: RunHead,
    viewer: Option<u64>,
    ended: Option<String>,
}

impl Attached {
    /// Takes a frame: its snapshot, and its points into the sparklines kept.
    pub fn take(&mut self, f: crate::share::frame::Received) {
        if f.kind == "full" {
            self.sparks = Sparks::default();
            self.viewer = f.viewer.or(self.viewer);
        }
        self.sparks.add(&f.points);
        self.upto.extend(f.points.upto.clone());
        if let Some(newest) = self.upto.values().max() {
            self.sparks
                .keep_from(newest.saturating_sub(KEPT_SECONDS - 1));
        }
        self.snapshot = Some(f.snapshot.into());
        self.run = f.run;
    }

    /// What the screen draws, with `window` seconds of sparklines (None before a frame).
    pub fn view(&self, window: u64) -> Option<Moment> {
        let snap = self.snapshot.clone()?;
        Some(Moment::of_sparks(
            snap,
            &self.sparks,
            &|lab| self.upto.get(lab).copied(),
            window,
        ))
    }

    /// The host, for the header's `ATTACHED to HOST`, with its replay cursor when it replays.
    fn mark(&self) -> String {
        let mut m = self.run.host.clone();
        if let Some(r) = &self.run.replay {
            m.push_str(&format!(
                " · REPLAY {} {} / {}",
                if r.playing { "▶" } else { "⏸" },
                clock(r.at_secs),
                clock(r.last_secs)
            ));
        }
        if self.ended.is_some() {
            m.push_str(" · ENDED");
        }
        m
    }
}

/// Attaches until the user quits.
pub fn run(opts: AttachOptions) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (mut terminal, guard) = super::enter_terminal()?;
    let result = rt.block_on(attach_loop(&mut terminal, opts));
    drop(terminal);
    drop(guard);
    result
}

async fn attach_loop<B: ratatui::backend::Backend>(
    terminal: &mut ratatui::Terminal<B>,
    opts: AttachOptions,
) -> anyhow::Result<()>
where
    B::Error: Send + Sync + 'static,
{
    let (tx, mut rx) = mpsc::channel::<Event>(256);
    let stop = Arc::new(AtomicBool::new(false));
    super::spawn_input(tx.clone(), stop.clone());
    super::spawn_signals(tx.clone());
    let (frames_tx, mut frames) = mpsc::channel::<Incoming>(4);
    let follow = tokio::spawn(crate::share::client::follow(opts.target.clone(), frames_tx));
    let mut app = App::new(opts.theme.clone());
    let mut state = Attached::default();
    let mut waiting = format!("attaching to http://{} ...", opts.target.addr);
    let tick_task = super::spawn_ticks(tx.clone(), opts.fps);
    let mut redraw = true;
    let result = loop {
        if redraw {
            let moment = match &app.paused {
                Some(v) => Some(v.clone()),
                None => state.view(app.window()),
            };
            match moment {
                Some(moment) => {
                    app.attached = Some(state.mark());
                    app.sync_labs(&moment.snapshot.labs());
                    terminal.draw(|f| ui::draw(f, &app, &moment))?;
                }
                None => {
                    terminal.draw(|f| waiting_screen(f, app.theme(), &waiting))?;
                }
            }
            redraw = false;
        }
        let ev = tokio::select! {
            ev = rx.recv() => match ev {
                Some(ev) => ev,
                None => break Ok(()),
            },
            incoming = frames.recv() => {
                match incoming {
                    Some(Incoming::Frame(f)) => state.take(*f),
                    Some(Incoming::End(e)) => {
                        app.say(format!("{} (q quits)", e.text), false);
                        state.ended = Some(e.text);
                    }
                    Some(Incoming::Lost(why)) => {
                        waiting = format!("connection lost, retrying: {why}");
                        if state.snapshot.is_some() {
                            app.say(format!("connection lost, retrying ({why})"), true);
                        }
                    }
                    Some(Incoming::Refused(why)) => {
                        if state.snapshot.is_none() {
                            break Err(anyhow::anyhow!("attach: {why}"));
                        }
                        app.say(why, true);
                    }
                    None => {}
                }
                redraw = true;
                continue;
            }
        };
        let action = match ev {
            Event::Tick => Action::Redraw,
            // Before the first frame there is nothing to pause, zoom or switch: q quits.
            Event::Input(TermEvent::Key(k)) if state.snapshot.is_none() => {
                if super::is_quit(&k) {
                    Action::Quit
                } else {
                    Action::None
                }
            }
            Event::Input(TermEvent::Key(k)) => {
                let current = state.view(600);
                let action = app.key(k, move || current.expect("a frame was drawn"));
                match (action, k.code) {
                    (Action::Lab(cmd), KeyCode::Char(c)) => {
                        send(&mut app, &state, &opts, &tx, cmd, c)
                    }
                    (Action::Lab(_), _) => {
                        app.say(
                            "faults are injected on the host: its fault menu (f) is the host's",
                            true,
                        );
                        Action::Redraw
                    }
                    (a, _) => a,
                }
            }
            Event::Input(TermEvent::Mouse(m)) => app.mouse(m),
            Event::Input(TermEvent::Resize(_, _)) => Action::Redraw,
            Event::Input(_) => Action::None,
            Event::Signal(_) => Action::Quit,
            Event::Done(r) => {
                match r {
                    Ok(text) => app.say(format!("host: {text}"), false),
                    Err(text) => app.say(format!("host: {text}"), true),
                }
                Action::Redraw
            }
            Event::Viewers(_) => Action::None,
        };
        match action {
            Action::None => {}
            Action::Redraw | Action::Lab(_) => redraw = true,
            Action::Quit => break Ok(()),
        }
    };
    tick_task.abort();
    follow.abort();
    stop.store(true, Ordering::Relaxed);
    result
}

/// A key that changes the experiment: sent to the host when the share grants control (its
/// answer comes back as `Event::Done`), refused here otherwise.
fn send(
    app: &mut App,
    state: &Attached,
    opts: &AttachOptions,
    tx: &mpsc::Sender<Event>,
    cmd: Command,
    key: char,
) -> Action {
    if state.ended.is_some() {
        app.say("the run has ended: nothing changes it now", true);
        return Action::Redraw;
    }
    if state.run.replay.is_some() {
        app.say(
            format!(
                "refused: the host replays a recording; {} would change nothing",
                cmd.what()
            ),
            true,
        );
        return Action::Redraw;
    }
    if !state.run.control {
        app.say(
            format!(
                "refused: this share is read-only; {} is the host's to change (the host grants control with --share-control)",
                cmd.what()
            ),
            true,
        );
        return Action::Redraw;
    }
    let (target, viewer, tab, tx) = (
        opts.target.clone(),
        state.viewer,
        app.tab.lab().map(|l| l.key()),
        tx.clone(),
    );
    app.say(format!("sent to the host: {}", cmd.what()), false);
    tokio::spawn(async move {
        let r = crate::share::client::send_key(&target, key, viewer, tab).await;
        let _ = tx.send(Event::Done(r)).await;
    });
    Action::Redraw
}

fn waiting_screen(f: &mut ratatui::Frame, theme: &Theme, what: &str) {
    let area = f.area();
    f.render_widget(Block::default().style(theme.base_style()), area);
    let [top, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    f.render_widget(
        Paragraph::new(Line::from(Span::styled(
            " latlab │ attach",
            theme.strong(theme.header),
        ))),
        top,
    );
    f.render_widget(
        Paragraph::new(vec![
            Line::from(""),
            Line::from(Span::styled(format!("  {what}"), theme.fg(theme.text))),
            Line::from(""),
            Line::from(Span::styled("  q quits", theme.fg(theme.dim))),
        ])
        .wrap(Wrap { trim: false }),
        body,
    );
}
