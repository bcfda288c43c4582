//! `latlab replay DIR`: the TUI on a recording. The same panes, sparklines, tables and status
//! line as the live lab, drawn from the recording's frames; a time cursor plays, pauses, steps,
//! jumps to events and speeds up; keys that would change the experiment are refused.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crossterm::event::Event as TermEvent;
use tokio::sync::mpsc;

use super::app::{Action, App};
use super::cursor::Cursor;
use super::moment::Moment;
use super::{Event, ui};
use crate::record::Recording;
use crate::report::Report;
use crate::theme::Theme;
use latlab_core::units::clock;

pub struct ReplayOptions {
    pub recording: Recording,
    pub theme: Theme,
    pub fps: u32,
    /// Where to start, seconds from the run's start.
    pub at_secs: Option<f64>,
    pub speed: u32,
    /// `--share`: the replay, for browsers and `latlab attach` (bound already).
    pub share: Option<crate::share::ShareListener>,
}

/// When a recording was made, for the header: `2026-12-01 00:45 UTC`.
pub fn started_label(rfc3339: &str) -> String {
    match (rfc3339.get(..10), rfc3339.get(11..16)) {
        (Some(day), Some(time)) => format!("{day} {time} UTC"),
        _ => rfc3339.to_string(),
    }
}

/// A cursor over the recording, at its start (or `at_secs`), playing at `speed`.
pub fn cursor_of(rec: &Recording, at_secs: Option<f64>, speed: u32) -> Cursor {
    // An event before the first frame (a key pressed in the first second) can be jumped to: the
    // screen shows the first frame then.
    let first = rec
        .events
        .first()
        .map_or(rec.at_secs(0), |e| e.at_secs.min(rec.at_secs(0)));
    let mut c = Cursor::new(
        started_label(&rec.started),
        first,
        rec.at_secs(rec.len() - 1),
        rec.events.iter().map(|e| e.at_secs).collect(),
    );
    c.set_speed(speed);
    if let Some(at) = at_secs {
        c.at_secs = at.clamp(c.first_secs, c.last_secs);
    }
    c
}

/// The replay's screen at `at_secs` (default: the end), paused there, as an SVG image; the status
/// line shows the last event up to that second.
pub fn screenshot(
    rec: &Recording,
    theme: Theme,
    at_secs: Option<f64>,
    size: (u16, u16),
) -> anyhow::Result<String> {
    let mut app = App::new(theme.clone());
    let mut cursor = cursor_of(rec, at_secs.or(Some(f64::MAX)), 1);
    cursor.playing = false;
    let at = cursor.at_secs;
    app.replay = Some(cursor);
    if let Some((text, bad)) = passed(rec, f64::NEG_INFINITY, at) {
        app.say(text, bad);
    }
    let moment = Moment::of_recording(rec, rec.frame_at(at), app.window())?;
    app.sync_labs(&moment.snapshot.labs());
    let buffer = super::screenshot::render(&app, &moment, size);
    Ok(super::screenshot::svg(&buffer, &theme))
}

/// Plays the recording until the user quits; returns the report at the cursor.
pub fn run(opts: ReplayOptions) -> anyhow::Result<Report> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (mut terminal, guard) = super::enter_terminal()?;
    let result = rt.block_on(replay_loop(&mut terminal, opts));
    drop(terminal);
    drop(guard);
    result
}

/// The recorded event that the cursor's move from `from` to `to` passed last (moving back: the
/// event it landed on), as a status line.
fn passed(rec: &Recording, from: f64, to: f64) -> Option<(String, bool)> {
    let e = if to > from {
        rec.events
            .iter()
            .rfind(|e| e.at_secs > from && e.at_secs <= to)?
    } else if to < from {
        rec.events.iter().find(|e| (e.at_secs - to).abs() < 1e-6)?
    } else {
        return None;
    };
    let bad = matches!(
        e.event.as_str(),
        "refused" | "error" | "fault" | "throttle-burst"
    );
    Some((format!("{} {}", clock(e.at_secs), e.text), bad))
}

async fn replay_loop<B: ratatui::backend::Backend>(
    terminal: &mut ratatui::Terminal<B>,
    opts: ReplayOptions,
) -> anyhow::Result<Report>
where
    B::Error: Send + Sync + 'static,
{
    let (tx, mut rx) = mpsc::channel::<Event>(256);
    let stop = Arc::new(AtomicBool::new(false));
    super::spawn_input(tx.clone(), stop.clone());
    super::spawn_signals(tx.clone());
    let rec = opts.recording;
    let mut app = App::new(opts.theme);
    app.replay = Some(cursor_of(&rec, opts.at_secs, opts.speed));
    if let Some(cut) = &rec.cut {
        app.say(format!("replay: {cut}"), true);
    }
    let mut host = match opts.share {
        Some(l) => {
            let h = super::shared::Host::start(l, app.theme(), &rec.description)?;
            app.say(
                format!("sharing the replay at {} (read-only)", h.share.url()),
                false,
            );
            app.shared = Some(0);
            Some(h)
        }
        None => None,
    };
    let mut published: Option<Instant> = None;
    let tick_task = super::spawn_ticks(tx.clone(), opts.fps);
    let mut last_tick = Instant::now();
    // The moment drawn, by frame and window: a frame is read from the file once.
    let mut shown: Option<(usize, u64, Moment)> = None;
    let mut redraw = true;
    loop {
        let at = app.replay.as_ref().map_or(0.0, |c| c.at_secs);
        if redraw {
            let i = rec.frame_at(at);
            let window = app.window();
            let moment = match shown.take() {
                Some((j, w, v)) if j == i && w == window => v,
                _ => Moment::of_recording(&rec, i, window)?,
            };
            app.sync_labs(&moment.snapshot.labs());
            terminal.draw(|f| ui::draw(f, &app, &moment))?;
            shown = Some((i, window, moment));
            redraw = false;
        }
        // Viewers follow the cursor: its frame, once a second.
        if let Some(h) = host.as_mut()
            && published.is_none_or(|p| p.elapsed() >= std::time::Duration::from_secs(1))
        {
            published = Some(Instant::now());
            app.shared = Some(h.share.viewers());
            let moment = Moment::of_recording(&rec, rec.frame_at(at), super::shared::WINDOW)?;
            let points = crate::record::frames::Framer::default()
                .points_of(&moment.snapshot, &moment.history);
            let token = h.share.token().to_string();
            h.share.publish(super::shared::tick(
                &app,
                &moment,
                points,
                &rec.description,
                &token,
            ));
        }
        let ev = tokio::select! {
            ev = rx.recv() => match ev {
                Some(ev) => ev,
                None => break,
            },
            v = super::viewers(&mut host) => Event::Viewers(v),
        };
        let action = match ev {
            Event::Tick => {
                let dt = last_tick.elapsed().as_secs_f64();
                last_tick = Instant::now();
                if let Some(c) = app.replay.as_mut() {
                    c.advance(dt);
                }
                Action::Redraw
            }
            Event::Input(TermEvent::Key(k)) => {
                let current = shown.as_ref().map(|(_, _, v)| v.clone());
                app.key(k, move || current.expect("a frame was drawn"))
            }
            Event::Input(TermEvent::Mouse(m)) => app.mouse(m),
            Event::Input(TermEvent::Resize(_, _)) => Action::Redraw,
            Event::Input(_) => Action::None,
            Event::Signal(_) => Action::Quit,
            Event::Done(_) => Action::None,
            // A replay changes no experiment: a viewer's key is refused, saying so.
            Event::Viewers(super::shared::Viewers::Key(vk)) => {
                let said = format!(
                    "{}: refused, a replay changes nothing (its keys are the cursor's)",
                    vk.who()
                );
                let _ = vk.reply.send(Err(
                    "this is a replay: it changes nothing; only its host moves the cursor".into(),
                ));
                app.say(said, true);
                Action::Redraw
            }
            Event::Viewers(super::shared::Viewers::Done(_)) => Action::None,
        };
        let now = app.replay.as_ref().map_or(0.0, |c| c.at_secs);
        if let Some((text, bad)) = passed(&rec, at, now) {
            app.say(text, bad);
        }
        match action {
            Action::None => {}
            Action::Redraw => redraw = true,
            Action::Quit => break,
            // A replay's keys never reach a lab (App refuses them); nothing to apply.
            Action::Lab(_) => redraw = true,
        }
    }
    tick_task.abort();
    stop.store(true, Ordering::Relaxed);
    if let Some(h) = host {
        h.end("the replay ended: the host quit").await;
    }
    let at = app.replay.as_ref().map_or(0.0, |c| c.at_secs);
    rec.report(rec.frame_at(at))
}
