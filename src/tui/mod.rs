//! The live lab in the terminal. One event type feeds the loop (keys, mouse, resize, frame ticks,
//! signals, command results); probes never touch the terminal, and the screen is drawn from a
//! frozen [`moment::Moment`] each frame. The terminal is restored on quit, on error, on panic and on
//! SIGTERM/SIGINT/SIGHUP; logs go to a file, never onto the screen.

pub mod app;
pub mod attach;
pub mod cursor;
pub mod fixture;
pub mod keys;
pub mod moment;
pub mod panes;
pub mod render;
pub mod replay;
pub mod screenshot;
pub mod shared;
pub mod ui;
pub mod widgets;

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event as TermEvent};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::{Constraint, Layout};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use tokio::sync::mpsc;

use crate::report::Report;
use crate::run::{Run, TargetOptions};
use crate::scenario::Scenario;
use crate::theme::Theme;
use app::{Action, App};
use moment::Moment;

/// Everything that reaches the UI loop.
#[derive(Debug)]
pub enum Event {
    Input(TermEvent),
    Tick,
    /// SIGTERM, SIGINT or SIGHUP.
    Signal(&'static str),
    /// A command finished: its confirmation, or its error.
    Done(Result<String, String>),
    /// A viewer of the shared run sent a key, or one it sent was answered.
    Viewers(shared::Viewers),
}

pub struct TuiOptions {
    pub scenario: Scenario,
    pub target: TargetOptions,
    pub theme: Theme,
    pub fps: u32,
    /// Keep the run in this directory (made ready by `Recorder::prepare`).
    pub record: Option<std::path::PathBuf>,
    /// Serve the live figures for Prometheus here (`--metrics-addr`, bound already).
    pub metrics: Option<crate::run::export::MetricsListener>,
    /// `--prices`: the cost lines and the report price with it, not the region's file.
    pub prices: Option<Arc<crate::lab_kit::cost::Prices>>,
    /// `--share`: the run, live, for browsers and `latlab attach` (bound already).
    pub share: Option<crate::share::ShareListener>,
    /// `--max-cost`: the run stops itself before its list-price cost would pass this.
    pub max_cost: Option<f64>,
    /// This host's name, for the recording.
    pub host: String,
}

/// Puts the terminal back however the program leaves: drop, error or panic.
struct TerminalGuard;

fn restore_terminal() {
    let _ = disable_raw_mode();
    let mut out = std::io::stdout();
    let _ = crossterm::execute!(
        out,
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = out.flush();
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// The terminal in raw mode on the alternate screen, and the guard that puts it back (on drop,
/// on error and, through the panic hook, on panic).
pub(crate) fn enter_terminal()
-> anyhow::Result<(Terminal<CrosstermBackend<std::io::Stdout>>, impl Drop)> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        previous(info);
    }));
    enable_raw_mode()?;
    let guard = TerminalGuard;
    crossterm::execute!(
        std::io::stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        crossterm::cursor::Hide
    )?;
    let terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    Ok((terminal, guard))
}

/// Runs the live lab until the user quits; returns the run's report.
pub fn run(opts: TuiOptions) -> anyhow::Result<Report> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (mut terminal, guard) = enter_terminal()?;
    let result = rt.block_on(event_loop(&mut terminal, opts));
    drop(terminal);
    drop(guard);
    result
}

pub(crate) fn spawn_input(tx: mpsc::Sender<Event>, stop: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match event::poll(Duration::from_millis(50)) {
                Ok(true) => match event::read() {
                    Ok(ev) => {
                        if tx.blocking_send(Event::Input(ev)).is_err() {
                            return;
                        }
                    }
                    Err(_) => return,
                },
                Ok(false) => {}
                Err(_) => return,
            }
        }
    });
}

/// A frame tick `fps` times a second (1-60) until the loop's receiver is gone; late ticks are
/// skipped, never bunched.
pub(crate) fn spawn_ticks(tx: mpsc::Sender<Event>, fps: u32) -> tokio::task::JoinHandle<()> {
    let period = Duration::from_secs_f64(1.0 / fps.clamp(1, 60) as f64);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tick.tick().await;
            if tx.send(Event::Tick).await.is_err() {
                return;
            }
        }
    })
}

pub(crate) fn spawn_signals(tx: mpsc::Sender<Event>) {
    #[cfg(unix)]
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        ) else {
            return;
        };
        let name = tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
            _ = hup.recv() => "SIGHUP",
        };
        let _ = tx.send(Event::Signal(name)).await;
    });
}

async fn event_loop<B: ratatui::backend::Backend>(
    terminal: &mut Terminal<B>,
    opts: TuiOptions,
) -> anyhow::Result<Report>
where
    B::Error: Send + Sync + 'static,
{
    let (tx, mut rx) = mpsc::channel::<Event>(256);
    let stop = Arc::new(AtomicBool::new(false));
    spawn_input(tx.clone(), stop.clone());
    spawn_signals(tx.clone());
    let mut app = App::new(opts.theme.clone());
    app.prices = opts.prices.clone();
    let scenario = opts.scenario.clone();

    if let Some(l) = &opts.metrics {
        // Standard error is behind the screen: the status line says where the figures are.
        app.say(
            format!("serving the live figures at http://{}/metrics", l.addr()),
            false,
        );
    }
    let metrics = crate::run::export::Metrics::start(opts.metrics)?;
    let mut host = match opts.share {
        Some(l) => {
            let h = shared::Host::start(l, &opts.theme, &scenario.description)?;
            app.say(
                format!(
                    "sharing at {}{}",
                    h.share.url(),
                    if h.share.control() {
                        " (viewers may change the experiment)"
                    } else {
                        " (read-only)"
                    }
                ),
                false,
            );
            app.shared = Some(0);
            Some(h)
        }
        None => None,
    };
    // The first frame comes at once; the lab starts behind it.
    let mut starting = tokio::spawn({
        let (s, t) = (opts.scenario.clone(), opts.target.clone());
        async move { Run::start(s, &t).await }
    });
    let lab = loop {
        terminal.draw(|f| {
            draw_starting(
                f,
                app.theme(),
                &scenario,
                "creating the stream and registering consumers",
            )
        })?;
        tokio::select! {
            started = &mut starting => break started??,
            ev = rx.recv() => match ev {
                Some(Event::Input(TermEvent::Key(k))) if is_quit(&k) => {
                    starting.abort();
                    stop.store(true, Ordering::Relaxed);
                    anyhow::bail!("quit before the lab started");
                }
                Some(Event::Signal(name)) => {
                    starting.abort();
                    stop.store(true, Ordering::Relaxed);
                    anyhow::bail!("{name} before the lab started");
                }
                _ => {}
            },
        }
    };
    lab.start_live();
    let mut recorder = match &opts.record {
        Some(dir) => Some(crate::record::Recorder::create(
            dir,
            &lab,
            &scenario.source,
            &opts.host,
        )?),
        None => None,
    };
    let mut recorded = std::time::Instant::now();
    let lab = Arc::new(lab);
    metrics.attach(&lab);
    let tick_task = spawn_ticks(tx.clone(), opts.fps);
    let chosen = crate::lab_kit::cost::Prices::choose(opts.prices.as_ref(), &lab.backend().region);
    app.cap = opts.max_cost.map(crate::lab_kit::cost::cap::Cap::new);
    let mut capped: Option<String> = None;
    let mut redraw = true;
    loop {
        if redraw {
            let moment = match &app.paused {
                Some(v) => v.clone(),
                None => Moment::of(&lab, app.window()),
            };
            app.sync_labs(&moment.snapshot.labs());
            terminal.draw(|f| ui::draw(f, &app, &moment))?;
            redraw = false;
        }
        let ev = tokio::select! {
            ev = rx.recv() => match ev {
                Some(ev) => ev,
                None => break,
            },
            v = viewers(&mut host) => Event::Viewers(v),
        };
        let action = match ev {
            Event::Tick => {
                if recorded.elapsed() >= Duration::from_secs(1) {
                    recorded = std::time::Instant::now();
                    if let Some(why) = lab.check_cap(app.cap.as_mut(), chosen.as_ref()) {
                        capped = Some(why);
                        break;
                    }
                    if let Some(r) = recorder.as_mut()
                        && let Err(e) = r.tick(&lab)
                    {
                        app.say(format!("recording stopped: {e:#}"), true);
                        recorder = None;
                    }
                    if let Some(h) = host.as_mut() {
                        h.tick(&mut app, &lab);
                    }
                }
                Action::Redraw
            }
            Event::Viewers(v) => {
                if let Some(h) = host.as_mut() {
                    h.heard(v, &lab, &mut app, recorder.as_mut());
                }
                Action::Redraw
            }
            Event::Input(TermEvent::Key(k)) => app.key(k, || Moment::of(&lab, 600)),
            Event::Input(TermEvent::Mouse(m)) => app.mouse(m),
            Event::Input(TermEvent::Resize(_, _)) => Action::Redraw,
            Event::Input(_) => Action::None,
            Event::Signal(_) => Action::Quit,
            Event::Done(result) => {
                if let Some(r) = recorder.as_mut() {
                    let (what, text) = match &result {
                        Ok(msg) => ("confirmed", msg),
                        Err(msg) => ("refused", msg),
                    };
                    r.note(what, text);
                }
                match result {
                    Ok(msg) => app.say(msg, false),
                    Err(msg) => app.say(msg, true),
                }
                Action::Redraw
            }
        };
        match action {
            Action::None => {}
            Action::Redraw => redraw = true,
            Action::Quit => break,
            Action::Lab(cmd) => {
                if let Some(r) = recorder.as_mut() {
                    r.note("command", &cmd.what());
                }
                // Applied off the UI loop, so a slow command never freezes the screen.
                let (lab, tx) = (lab.clone(), tx.clone());
                tokio::spawn(async move {
                    let r = lab.apply(cmd).await.map_err(|e| format!("{e:#}"));
                    let _ = tx.send(Event::Done(r)).await;
                });
                redraw = true;
            }
        }
    }
    tick_task.abort();
    let stopping = match &capped {
        Some(why) => format!("{why}; stopping and cleaning up"),
        None => format!("{} (q again: stop now)", lab.stopping()),
    };
    terminal.draw(|f| draw_starting(f, app.theme(), &scenario, &stopping))?;
    // A second q, Esc, Ctrl-C or signal while it stops cuts the drain short.
    spawn_signals(tx.clone());
    let theme = app.theme().clone();
    metrics.stop().await;
    // A viewer's key being applied finishes first: the run is then the screen's alone again.
    if let Some(h) = host.as_mut() {
        h.settle(&mut app, recorder.as_mut()).await;
    }
    let lab =
        Arc::try_unwrap(lab).map_err(|_| anyhow::anyhow!("a command was still running at quit"));
    let lab = match lab {
        Ok(l) => l,
        Err(e) => {
            stop.store(true, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(500)).await;
            return Err(e);
        }
    };
    // The recording's last second is taken once the consumers have drained.
    let mut last_tick: anyhow::Result<()> = Ok(());
    let mut last = |l: &Run| {
        if let Some(r) = recorder.as_mut() {
            last_tick = r.tick(l);
        }
        if let Some(h) = host.as_mut() {
            h.tick(&mut app, l);
        }
    };
    // A second q, Esc or Ctrl-C (or a signal) while it stops.
    let again = async {
        loop {
            match rx.recv().await {
                Some(Event::Input(TermEvent::Key(k))) if is_quit(&k) => return,
                Some(Event::Signal(_)) | None => return,
                Some(_) => {}
            }
        }
    };
    let (snap, problems) = lab
        .finish_or_hurry(&mut last, again, || {
            let _ = terminal.draw(|f| {
                draw_starting(
                    f,
                    &theme,
                    &scenario,
                    "stopping now: what was not drained counts as unread; cleaning up",
                )
            });
        })
        .await;
    stop.store(true, Ordering::Relaxed);
    if let Some(h) = host {
        h.end("the run ended: the host quit").await;
    }
    let mut problems = problems;
    if let Some(why) = &capped {
        problems.insert(0, why.clone());
        if let Some(r) = recorder.as_mut() {
            r.note("cost-cap", why);
        }
    }
    let report = Report::new(&scenario, snap, crate::report::Ending::Quit, problems)
        .with_prices(opts.prices.clone());
    if let Some(r) = recorder {
        last_tick?;
        r.finish_logs(&report)?;
    }
    Ok(report)
}

/// What viewers did next, when the run is shared.
pub(crate) async fn viewers(host: &mut Option<shared::Host>) -> shared::Viewers {
    match host {
        Some(h) => h.next().await,
        None => std::future::pending().await,
    }
}

/// q, Esc or Ctrl-C.
pub(crate) fn is_quit(k: &crossterm::event::KeyEvent) -> bool {
    use crossterm::event::{KeyCode, KeyEventKind, KeyModifiers};
    k.kind != KeyEventKind::Release
        && (matches!(k.code, KeyCode::Char('q') | KeyCode::Esc)
            || (k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL)))
}

fn draw_starting(f: &mut ratatui::Frame, theme: &Theme, scenario: &Scenario, what: &str) {
    let area = f.area();
    f.render_widget(Block::default().style(theme.base_style()), area);
    let [top, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(" latlab │ ", theme.strong(theme.header)),
            Span::styled(
                format!("{} │ {}", scenario.name, scenario.description),
                theme.fg(theme.header),
            ),
        ]))
        .style(if theme.monochrome {
            ratatui::style::Style::default()
        } else {
            ratatui::style::Style::default().bg(theme.header_bg)
        }),
        top,
    );
    f.render_widget(
        Paragraph::new(vec![
            Line::from(""),
            Line::from(Span::styled(format!("  {what} ..."), theme.fg(theme.text))),
        ]),
        body,
    );
}
