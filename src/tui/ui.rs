//! Drawing one frame from a [`Moment`]. Pure: the same moment, size and theme always draw the same
//! screen, which is what the snapshot tests and screenshots rely on.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use super::app::{App, Tab};
use super::moment::Moment;
use crate::theme::Theme;
use latlab_core::units::clock;

use crate::lab_kit::view::MIN_SIZE;

pub fn draw(f: &mut Frame, app: &App, moment: &Moment) {
    let theme = app.theme();
    let area = f.area();
    f.render_widget(Block::default().style(theme.base_style()), area);
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        let msg = format!(
            "latlab needs at least {}x{}; this terminal is {}x{}. Enlarge it, or press q.",
            MIN_SIZE.0, MIN_SIZE.1, area.width, area.height
        );
        f.render_widget(
            Paragraph::new(msg)
                .style(theme.base_style())
                .wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return;
    }
    let [header, body, status, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_header(f, theme, app, moment, header);
    // Tabs exist when the scenario runs several labs, which is when it has an overview.
    let body = if app.has(Tab::Overview) {
        let [bar, rest] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(body);
        draw_tabs(f, theme, app, bar);
        rest
    } else {
        body
    };
    match app.tab.lab() {
        None if app.has(Tab::Overview) => super::panes::overview::draw(f, theme, app, moment, body),
        // The tab's lab, or the first the scenario runs.
        tab => {
            let labs = moment.snapshot.labs();
            if let Some(lab) = tab
                .filter(|l| labs.contains(l))
                .or_else(|| labs.first().copied())
            {
                super::panes::draw(lab, f, theme, app, moment, body);
            }
        }
    }
    draw_status(f, theme, app, moment, status);
    draw_footer(f, theme, app, footer);
    if app.help {
        draw_help(f, theme, area, app);
    }
    if app.fault_menu {
        draw_fault_menu(f, theme, app, area);
    }
}

fn draw_fault_menu(f: &mut Frame, theme: &Theme, app: &App, area: Rect) {
    let items = app.menu_faults();
    let widest = items
        .iter()
        .map(|(_, k)| 6 + 28 + k.describe().chars().count())
        .max()
        .unwrap_or(40) as u16;
    let mut lines = vec![Line::from("")];
    for (letter, kind) in &items {
        lines.push(Line::from(vec![
            Span::styled(format!("  {letter}  "), theme.strong(theme.accent)),
            Span::styled(format!("{:<28}", kind.name()), theme.fg(theme.text)),
            Span::styled(kind.describe().to_string(), theme.fg(theme.dim)),
        ]));
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        "  a letter injects it now, with its defaults; Esc closes",
        theme.fg(theme.dim),
    )));
    popup(f, theme, area, " inject a fault ", widest, lines);
}

/// A bordered box in the middle of the screen, `widest` columns of content wide (at most the
/// screen), as tall as its lines.
fn popup(f: &mut Frame, theme: &Theme, area: Rect, title: &str, widest: u16, lines: Vec<Line>) {
    let width = (widest + 4).min(area.width.saturating_sub(2));
    let height = (lines.len() as u16 + 2).min(area.height.saturating_sub(2));
    let rect = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    f.render_widget(Clear, rect);
    let bg = if theme.monochrome {
        Style::default()
    } else {
        Style::default().bg(theme.popup_bg)
    };
    let block = Block::bordered()
        .title(Span::styled(title.to_string(), theme.strong(theme.title)))
        .border_style(theme.fg(theme.accent))
        .style(bg);
    f.render_widget(Paragraph::new(lines).block(block).style(bg), rect);
}

/// The header's parts, in order: each with its drop rank (0 always stays, higher ranks go first
/// when narrow) and whether it is drawn reversed (a mark: REPLAY, PAUSED). `shared`: the
/// viewers of a shared run; `attached`: the host a viewer attached to.
pub fn header_parts(
    s: &crate::snapshot::Snapshot,
    app: &App,
) -> Vec<(crate::lab_kit::view::HeaderPart, bool)> {
    let part = |text: String, strong: bool, rank: u8| crate::lab_kit::view::HeaderPart {
        text,
        strong,
        rank,
    };
    let mut parts = vec![
        (part(" latlab".to_string(), true, 0), false),
        (part(s.scenario.clone(), false, 0), false),
        (part(s.backend.short(), false, 1), false),
    ];
    if let Some(host) = &app.attached {
        parts.push((part(format!("ATTACHED to {host}"), true, 0), true));
    }
    // A replay's position is in its REPLAY part.
    if app.replay.is_none() {
        parts.push((part(clock(s.elapsed_secs), false, 0), false));
    }
    for lab in s.labs() {
        parts.extend(super::panes::header(lab, s).into_iter().map(|p| (p, false)));
    }
    if let Some(c) = &app.replay {
        parts.push((
            part(
                format!(
                    "REPLAY of {} {} {}x {} / {}",
                    c.started,
                    if c.playing { "▶" } else { "⏸" },
                    c.speed(),
                    clock(c.at_secs),
                    clock(c.last_secs)
                ),
                true,
                0,
            ),
            true,
        ));
    }
    if let Some(cap) = &app.cap {
        parts.push((part(cap.header(), cap.near(), 0), false));
    }
    if let Some(n) = app.shared {
        parts.push((
            part(
                format!("shared · {n} viewer{}", if n == 1 { "" } else { "s" }),
                false,
                1,
            ),
            false,
        ));
    }
    if app.paused.is_some() {
        parts.push((part("PAUSED".to_string(), true, 0), true));
    }
    parts
}

fn draw_header(f: &mut Frame, theme: &Theme, app: &App, moment: &Moment, area: Rect) {
    let style = if theme.monochrome {
        Style::default().add_modifier(Modifier::REVERSED)
    } else {
        Style::default().fg(theme.header).bg(theme.header_bg)
    };
    let sep = Span::styled(" │ ", style.add_modifier(Modifier::DIM));
    // (text, style, drop order: 0 always stays, higher numbers go first when narrow).
    let mut parts: Vec<(String, Style, u8)> = header_parts(&moment.snapshot, app)
        .into_iter()
        .map(|(p, mark)| {
            let s = match (p.strong, mark) {
                (_, true) => style.add_modifier(Modifier::BOLD | Modifier::REVERSED),
                (true, false) => style.add_modifier(Modifier::BOLD),
                (false, false) => style,
            };
            (p.text, s, p.rank)
        })
        .collect();
    let width = |parts: &[(String, Style, u8)]| {
        parts
            .iter()
            .map(|(t, _, _)| t.chars().count() + 3)
            .sum::<usize>()
    };
    for level in [3, 2, 1] {
        if width(&parts) <= area.width as usize {
            break;
        }
        parts.retain(|(_, _, drop)| *drop != level);
    }
    let mut spans = Vec::new();
    for (i, (text, style, _)) in parts.into_iter().enumerate() {
        if i > 0 {
            spans.push(sep.clone());
        }
        spans.push(Span::styled(text, style));
    }
    f.render_widget(Paragraph::new(Line::from(spans)).style(style), area);
}

fn draw_tabs(f: &mut Frame, theme: &Theme, app: &App, area: Rect) {
    let mut spans = vec![Span::raw(" ")];
    // The overview is tab 0; each lab's tab is numbered in screen order from 1.
    for (i, tab) in Tab::all().enumerate() {
        let label = match tab.lab() {
            None => format!("{i} Overview"),
            Some(lab) => format!("{i} {}", lab.name()),
        };
        if !app.has(tab) {
            continue;
        }
        if app.tab == tab {
            spans.push(Span::styled(
                format!(" {label} "),
                theme
                    .strong(theme.tab_active)
                    .add_modifier(Modifier::REVERSED),
            ));
        } else {
            spans.push(Span::styled(
                format!(" {label} "),
                theme.fg(theme.tab_inactive),
            ));
        }
        spans.push(Span::raw(" "));
    }
    spans.push(Span::styled("  Tab switches", theme.fg(theme.dim)));
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_status(f: &mut Frame, theme: &Theme, app: &App, moment: &Moment, area: Rect) {
    let line = match app.current_message() {
        Some((text, true)) => {
            Line::from(Span::styled(format!(" {text}"), theme.strong(theme.error)))
        }
        Some((text, false)) => Line::from(vec![
            Span::styled(" ✓ ", theme.strong(theme.ok)),
            Span::styled(text.to_string(), theme.fg(theme.text)),
        ]),
        // A fault injected in the last few seconds.
        None if let Some((what, totals)) = fault_line(moment) => Line::from(vec![
            Span::styled(" ▼ fault ", theme.strong(theme.error)),
            Span::styled(what, theme.fg(theme.text)),
            Span::styled(format!("   {totals}"), theme.fg(theme.dim)),
        ]),
        // Otherwise what the tab's figures rest on: the SDK's retries, or what each Redis method
        // includes.
        None => {
            let snap = &moment.snapshot;
            let labs = snap.labs();
            let lab = app
                .tab
                .lab()
                .filter(|l| labs.contains(l))
                .or_else(|| labs.first().copied());
            let text = lab.map_or_else(String::new, |l| super::panes::status(l, snap));
            Line::from(Span::styled(text, theme.fg(theme.dim)))
        }
    };
    f.render_widget(Paragraph::new(line), area);
}

/// The status line of a fault injected in the last 5 seconds: what and when, and the run's
/// totals.
pub fn fault_line(moment: &Moment) -> Option<(String, String)> {
    let (e, fired, recovered) = recent_fault(moment)?;
    let after = match (&e.failed, e.recovered_secs) {
        (Some(why), _) => format!("not injected: {why}"),
        (None, Some(s)) => format!("recovered after {}", latlab_core::units::ms_f(s * 1000.0)),
        (None, None) => "not recovered yet".into(),
    };
    Some((
        format!("{} {}: {} · {after}", clock(e.at_secs), e.kind, e.target),
        format!("{fired} injected, {recovered} recovered"),
    ))
}

/// The newest fault, when it fired in the last 5 seconds, with the run's totals.
fn recent_fault(moment: &Moment) -> Option<(&crate::snapshot::FaultRow, u64, u64)> {
    let s = &moment.snapshot;
    let e = s.faults.events.last()?;
    (s.elapsed_secs - e.at_secs < 5.0).then(|| (e, s.faults.fired(), s.faults.recovered()))
}

fn draw_footer(f: &mut Frame, theme: &Theme, app: &App, area: Rect) {
    let keys = super::keys::footer(
        app.tab.lab(),
        &app.labs,
        app.has(Tab::Overview),
        app.replay.is_some(),
    );
    let mut spans = vec![Span::raw(" ")];
    for (k, what) in keys {
        spans.push(Span::styled(k, theme.strong(theme.accent)));
        spans.push(Span::styled(format!(" {what}   "), theme.fg(theme.dim)));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_help(f: &mut Frame, theme: &Theme, area: Rect, app: &App) {
    let (replay, labs) = (app.replay.is_some(), &app.labs);
    let widest = super::keys::help_keys(replay, labs)
        .map(|k| 2 + 16 + k.what.chars().count())
        .max()
        .unwrap_or(40) as u16;
    let mut lines = vec![Line::from("")];
    for k in super::keys::help_keys(replay, labs) {
        lines.push(Line::from(vec![
            Span::styled(format!("  {:<16}", k.keys), theme.strong(theme.accent)),
            Span::styled(k.what.to_string(), theme.fg(theme.text)),
        ]));
    }
    let absent = super::keys::absent_labs(labs);
    if !absent.is_empty() {
        let names: Vec<&str> = absent.iter().map(|l| l.name()).collect();
        lines.push(Line::from(""));
        lines.push(Line::from(Span::styled(
            format!("  {} keys left out: not in this run", and_list(&names)),
            theme.fg(theme.dim),
        )));
    }
    lines.push(Line::from(""));
    // Taller than the screen: it scrolls, and says so.
    let room = area.height.saturating_sub(4) as usize;
    let overflow = (lines.len() + 2).saturating_sub(room);
    lines.push(Line::from(Span::styled(
        "  any key closes this help; the mouse wheel zooms too",
        theme.fg(theme.dim),
    )));
    lines.push(Line::from(""));
    let skip = (app.help_scroll as usize).min(overflow);
    let lines: Vec<Line> = lines.into_iter().skip(skip).collect();
    let title = if overflow > 0 {
        " latlab keys · ↑/↓ PgUp/PgDn scroll "
    } else {
        " latlab keys "
    };
    popup(f, theme, area, title, widest, lines);
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
