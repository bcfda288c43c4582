//! What a shared run (`--share`) publishes each second, built from the same moment the screen
//! draws: each lab's `LabView`, header parts, status line and cost line, and the recording's form
//! of the snapshot and sparkline points (`crate::share::frame`); and the keys viewers send,
//! answered as the host's own keys are.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::App;
use super::keys::{Does, Press};
use super::moment::Moment;
use crate::labs::LabKind;
use crate::record::frames::{Framer, Points};
use crate::run::{Command, Run};
use crate::share::frame::{
    FaultRow, KeyRow, Message, ReplayHead, RunHead, Screen, TabScreen, Tick,
};
use crate::theme::Theme;

/// Seconds of sparkline values each frame's `LabView`s carry.
pub const WINDOW: u64 = 120;

/// The page's colours: each theme item as a CSS custom property, for the dark theme (the
/// default), the light one (under `prefers-color-scheme: light`) and the host's.
pub fn theme_css(host: &Theme) -> String {
    let vars = |t: &Theme| {
        let (bg, fg) = ((15, 20, 25), (215, 218, 224));
        t.colors()
            .into_iter()
            .map(|(item, c)| {
                let fallback = if item == "background" || item.ends_with("_bg") {
                    bg
                } else {
                    fg
                };
                let (r, g, b) = if t.monochrome {
                    if item == "background" || item.ends_with("_bg") {
                        (255, 255, 255)
                    } else {
                        (0, 0, 0)
                    }
                } else {
                    crate::theme::rgb(c, fallback)
                };
                format!("--{item}:#{r:02x}{g:02x}{b:02x};")
            })
            .collect::<String>()
    };
    let dark = Theme::dark();
    let light = Theme::resolve("light").unwrap_or_else(|_| Theme::dark());
    format!(
        ":root{{{d}}}\n@media (prefers-color-scheme: light){{:root{{{l}}}}}\nhtml.theme-dark{{{d}}}\nhtml.theme-light{{{l}}}\nhtml.theme-host{{{h}}}\n",
        d = vars(&dark),
        l = vars(&light),
        h = vars(host),
    )
}

/// The keys' help, each with the characters a viewer may send for it when it changes the
/// experiment (none in a replay).
fn key_rows(replay: bool, labs: &[LabKind]) -> Vec<KeyRow> {
    super::keys::help_keys(replay, labs)
        .map(|k| KeyRow {
            keys: k.keys.clone(),
            what: k.what.clone(),
            send: if replay {
                String::new()
            } else {
                k.bindings
                    .iter()
                    .filter_map(|(press, does)| match (press, does) {
                        (Press::Char(c), Does::Lab(cmd) | Does::Send(cmd))
                            if cmd.lab().is_none_or(|l| labs.contains(&l)) =>
                        {
                            Some(*c)
                        }
                        _ => None,
                    })
                    .collect()
            },
        })
        .collect()
}

/// What the screen shows of `moment`, as data. `token`: the share's, left out of any message.
pub fn screen(app: &App, moment: &Moment, token: &str) -> Screen {
    let snap = &moment.snapshot;
    let labs = snap.labs();
    let message = match app.current_message() {
        Some((text, bad)) if !text.contains(token) => Some(Message {
            text: text.to_string(),
            bad,
        }),
        _ => super::ui::fault_line(moment).map(|(what, totals)| Message {
            text: format!("▼ fault {what}   {totals}"),
            bad: true,
        }),
    };
    let tabs = labs
        .iter()
        .filter_map(|lab| {
            let lab_view = super::panes::lab_view(*lab, moment)?;
            let marks = super::panes::fault_marks(moment, lab.service(), WINDOW);
            let (cost, cost_brief) =
                super::panes::cost_line(app.prices.as_ref(), snap, *lab).unzip();
            Some(TabScreen {
                lab: lab.key(),
                name: lab.name(),
                view: lab_view,
                status: super::panes::status(*lab, snap),
                cost,
                cost_brief,
                marks,
            })
        })
        .collect();
    Screen {
        header: super::ui::header_parts(snap, app)
            .into_iter()
            .map(|(p, _)| p)
            .collect(),
        message,
        tabs,
        keys: key_rows(app.replay.is_some(), &labs),
        faults: if app.replay.is_some() {
            Vec::new()
        } else {
            app.menu_faults()
                .into_iter()
                .map(|(_, k)| FaultRow {
                    name: k.name().to_string(),
                    what: k.describe().to_string(),
                })
                .collect()
        },
        window: WINDOW,
    }
}

/// The run's head.
pub fn head(app: &App, moment: &Moment, description: &str) -> RunHead {
    let s = &moment.snapshot;
    RunHead {
        host: crate::share::hostname(),
        scenario: s.scenario.clone(),
        description: description.to_string(),
        backend: s.backend.short(),
        theme: app.theme().name.clone(),
        replay: app.replay.as_ref().map(|c| ReplayHead {
            started: c.started.clone(),
            at_secs: c.at_secs,
            last_secs: c.last_secs,
            playing: c.playing,
            speed: c.speed(),
        }),
        ..RunHead::default()
    }
}

/// A live run's frames: the points of each second once, as a recording writes them.
pub struct Publisher {
    framer: Framer,
    description: String,
}

impl Publisher {
    /// For a run of the scenario `description` says.
    pub fn new(description: &str) -> Publisher {
        Publisher {
            framer: Framer::default(),
            description: description.to_string(),
        }
    }

    /// This second of the live run, sent to every viewer.
    pub fn publish(&mut self, share: &crate::share::Share, app: &App, run: &Run) {
        let moment = Moment::of(run, WINDOW);
        // The points that became whole, from the history the screen's `LabView`s are drawn from.
        let points = self.framer.points_of(&moment.snapshot, &moment.history);
        share.publish(tick(app, &moment, points, &self.description, share.token()));
    }
}

/// A tick of `moment` with `points`.
pub fn tick(app: &App, moment: &Moment, points: Points, description: &str, token: &str) -> Tick {
    let mut snapshot = moment.snapshot.clone();
    crate::record::frames::trim_faults(&mut snapshot);
    Tick {
        at_secs: moment.snapshot.elapsed_secs,
        run: head(app, moment, description),
        snapshot: crate::report::json::Snapshot::from(&snapshot),
        points,
        screen: screen(app, moment, token),
    }
}

/// The command a viewer's key sends, as the host's own key would on `tab` (a lab's key, for a
/// key several labs bind); a key that does not change the experiment is refused, saying why.
pub fn viewer_command(key: char, tab: Option<&str>, labs: &[LabKind]) -> Result<Command, String> {
    let tab = tab.and_then(|t| LabKind::ALL.into_iter().find(|l| l.key() == t));
    let event = KeyEvent::new(KeyCode::Char(key), KeyModifiers::NONE);
    match super::keys::binding(&event, false, tab, labs) {
        Some((Does::Lab(cmd) | Does::Send(cmd), true))
            if cmd.lab().is_none_or(|l| labs.contains(&l)) =>
        {
            Ok(cmd)
        }
        Some((Does::Lab(cmd) | Does::Send(cmd), true)) => Err(format!(
            "'{key}' is a key of the {} lab, which this run does not have",
            cmd.lab().map_or("", |l| l.name())
        )),
        Some(_) => Err(format!(
            "'{key}' does not change the experiment: a viewer's pause, zoom, tab and theme are its own"
        )),
        None => Err(format!(
            "'{key}' is not one of latlab's keys; the page's ? lists them"
        )),
    }
}

/// The fault a viewer asks for, as the fault menu injects it (with its defaults), when the run
/// has the lab of its service.
pub fn viewer_fault(name: &str, labs: &[LabKind]) -> Result<Command, String> {
    let kind = latlab_core::faults::Kind::parse(name)?;
    match LabKind::of_service(kind.service()) {
        Some(lab) if labs.contains(&lab) => Ok(Command::Fault(kind)),
        _ => Err(format!(
            "{name} is a fault of a service this run does not measure"
        )),
    }
}

/// What viewers did.
#[derive(Debug)]
pub enum Viewers {
    Key(crate::share::ViewerKey),
    /// A key's answer: the line said, and the command's result.
    Done((String, Result<String, String>)),
}

/// A run's share, as its host loop drives it: a frame a second, the keys viewers send, and
/// the last event when the run ends.
pub struct Host {
    pub share: crate::share::Share,
    publisher: Publisher,
    keys: Option<tokio::sync::mpsc::Receiver<crate::share::ViewerKey>>,
    /// Viewers' keys being applied.
    pub applying: tokio::task::JoinSet<(String, Result<String, String>)>,
}

impl Host {
    /// Starts serving `listener` (on the current runtime) for a run of `scenario`, the page
    /// coloured as `theme` asks when it asks for the host's.
    pub fn start(
        listener: crate::share::ShareListener,
        theme: &Theme,
        description: &str,
    ) -> anyhow::Result<Host> {
        let mut share = crate::share::Share::start(listener, &theme_css(theme))?;
        let keys = share.take_keys();
        Ok(Host {
            share,
            publisher: Publisher::new(description),
            keys,
            applying: tokio::task::JoinSet::new(),
        })
    }

    /// This second of the run, to every viewer; `app` is the host's screen (its message, the
    /// prices), and learns how many viewers there are.
    pub fn tick(&mut self, app: &mut App, run: &Run) {
        app.shared = Some(self.share.viewers());
        self.publisher.publish(&self.share, app, run);
    }

    /// What viewers did next: a key sent, or the answer to one being applied (never, when the
    /// share takes no keys and none is being applied).
    pub async fn next(&mut self) -> Viewers {
        let keys = async {
            match self.keys.as_mut() {
                Some(k) => match k.recv().await {
                    Some(vk) => vk,
                    None => std::future::pending().await,
                },
                None => std::future::pending().await,
            }
        };
        let applied = async {
            if self.applying.is_empty() {
                return std::future::pending().await;
            }
            match self.applying.join_next().await {
                Some(Ok(done)) => done,
                // A command that panicked has said so in the log; nothing else is waited for.
                _ => std::future::pending().await,
            }
        };
        tokio::select! {
            vk = keys => Viewers::Key(vk),
            done = applied => Viewers::Done(done),
        }
    }

    /// Takes a viewer's key: a key that changes the experiment is applied off the host's loop
    /// (its answer comes from [`Host::applying`], and goes to the viewer too); any other is
    /// refused at once. Returns what the status line and the recording say now: `viewer 2
    /// (127.0.0.1:51234): adding a GetRecords poller`, and whether it was refused.
    fn take(
        &mut self,
        run: &Arc<Run>,
        vk: crate::share::ViewerKey,
        labs: &[LabKind],
    ) -> (String, bool) {
        let who = vk.who();
        let command = match &vk.fault {
            Some(name) => viewer_fault(name, labs),
            None => viewer_command(vk.key, vk.tab.as_deref(), labs),
        };
        match command {
            Ok(cmd) => {
                let run = run.clone();
                let said = format!("{who}: {}", cmd.what());
                self.applying.spawn(async move {
                    let result = run.apply(cmd).await.map_err(|e| format!("{e:#}"));
                    let _ = vk.reply.send(result.clone());
                    let (Ok(text) | Err(text)) = &result;
                    (format!("{who}: {text}"), result)
                });
                (said, false)
            }
            Err(why) => {
                let said = format!("{who}: {why}");
                let _ = vk.reply.send(Err(why));
                (said, true)
            }
        }
    }

    /// What a viewer did, answered: a key taken (applied or refused) or a key's answer, said on
    /// the host's status line (`app`) and in its recording's events (`command`, then `confirmed`
    /// or `refused`). Returns the line said.
    pub fn heard(
        &mut self,
        v: Viewers,
        run: &Arc<Run>,
        app: &mut App,
        recorder: Option<&mut crate::record::Recorder>,
    ) -> String {
        let (said, event, bad) = match v {
            Viewers::Key(vk) => {
                let labs = app.labs.clone();
                let (said, refused) = self.take(run, vk, &labs);
                (said, if refused { "refused" } else { "command" }, refused)
            }
            Viewers::Done((said, result)) => {
                let bad = result.is_err();
                (said, if bad { "refused" } else { "confirmed" }, bad)
            }
        };
        if let Some(r) = recorder {
            r.note(event, &said);
        }
        app.say(said.clone(), bad);
        said
    }

    /// Waits for the viewers' keys being applied (so the run is its host's alone again), and
    /// answers each as [`Host::heard`] does; returns the lines said.
    pub async fn settle(
        &mut self,
        app: &mut App,
        mut recorder: Option<&mut crate::record::Recorder>,
    ) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(r) = self.applying.join_next().await {
            if let Ok((said, result)) = r {
                let bad = result.is_err();
                if let Some(r) = recorder.as_deref_mut() {
                    r.note(if bad { "refused" } else { "confirmed" }, &said);
                }
                app.say(said.clone(), bad);
                out.push(said);
            }
        }
        out
    }

    /// Ends every viewer's stream with the run's last event.
    pub async fn end(self, text: &str) {
        self.share.end(text).await;
    }
}
