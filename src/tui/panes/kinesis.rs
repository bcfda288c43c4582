//! The Kinesis lab's parts of the header and status line and its brief rows for the overview's
//! table; its tab is its model (`labs/kinesis/view.rs`), drawn by `tui::render`.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::Cell;

use crate::labs::kinesis::config::ConsumerKind;
use crate::labs::kinesis::snapshot::KinesisSnapshot;
use crate::labs::kinesis::view::{PANES, kind_item};
use crate::tui::theme::Theme;
use crate::tui::widgets::*;
use crate::units::{fmt_rate, thousands};

/// Colour of a consumer kind's marks.
pub fn kind_color(theme: &Theme, kind: ConsumerKind) -> Color {
    theme.item(kind_item(kind)).unwrap_or(theme.text)
}

/// The lab's rows of the overview's brief table (lab, what, p50, p99, max, count, counts), for a
/// screen too small for its panes.
pub fn brief(theme: &Theme, k: &KinesisSnapshot) -> Vec<Vec<Cell<'static>>> {
    let txt = |v: String| right(Span::styled(v, theme.fg(theme.text)));
    let lat = |s: &crate::metrics::Summary| brief_latency(theme, s);
    let note = |text: String, bad: bool| brief_note(theme, text, bad);
    let mut rows: Vec<Vec<Cell<'static>>> = Vec::new();
    for c in &k.consumers {
        let sdk = &c.sdk.counters;
        let mut cells = vec![
            Cell::from(Span::styled(
                "Kinesis",
                theme.strong(kind_color(theme, c.kind)),
            )),
            Cell::from(Span::styled(c.name.clone(), theme.fg(theme.text))),
        ];
        cells.extend(lat(&c.arrival_to_receive));
        cells.push(txt(thousands(c.counts.received)));
        let bad = sdk.throttles > 0
            || c.counts.lost > 0
            || c.counts.duplicates > 0
            || c.counts.unread > 0;
        // A consumer behind says so first: the column is cut on small screens.
        let behind = if c.counts.unread > 0 {
            format!("unread {} · ", thousands(c.counts.unread))
        } else {
            String::new()
        };
        cells.push(note(
            format!(
                "{behind}throttled {} · escaped {} · lost {} · dup {}",
                thousands(sdk.throttles),
                thousands(sdk.escaped_total()),
                thousands(c.counts.lost),
                thousands(c.counts.duplicates),
            ),
            bad,
        ));
        rows.push(cells);
    }
    rows
}

/// Rows the tab needs to show every pane with at least one row of sparkline.
pub fn min_rows(k: &KinesisSnapshot) -> u16 {
    PANES
        .iter()
        .map(|(kind, _)| k.consumers.iter().filter(|c| c.kind == *kind).count() as u16)
        .filter(|n| *n > 0)
        .map(|n| 2 + 1 + n + 1 + 1)
        .sum()
}

/// The lab's parts of the header: the stream and its shards, and the producer's rate asked
/// against achieved (with the first cause of a shortfall).
pub fn header(k: &KinesisSnapshot, style: Style) -> Vec<(String, Style, u8)> {
    let mut parts = Vec::new();
    // While a reshard is under way the stream says so (the shard count is the open one).
    parts.push((
        format!(
            "{} · {} shard{}{}",
            k.stream,
            k.shards,
            if k.shards == 1 { "" } else { "s" },
            if k.updating { " · UPDATING" } else { "" }
        ),
        if k.updating {
            style.add_modifier(Modifier::BOLD)
        } else {
            style
        },
        3,
    ));
    let p = &k.producer;
    // Asked against achieved, over whole seconds; a shortfall the measurement can tell says
    // by how much and its first measured cause.
    let short = p.shortfall();
    let achieved = match &short {
        Some(s) => format!("{} achieved, {}", fmt_rate(p.achieved_rate), s.describe(1)),
        None if p.rate_resolution().is_none() => "achieved: measuring".to_string(),
        None => format!("{} achieved", fmt_rate(p.achieved_rate)),
    };
    parts.push((
        format!(
            "{} rec/s asked · {achieved} · {}",
            fmt_rate(p.asked_rate),
            crate::units::format_bytes(p.payload_bytes)
        ),
        if short.is_some() {
            style.add_modifier(Modifier::BOLD)
        } else {
            style
        },
        2,
    ));
    parts
}

/// What the tab's figures rest on: the SDK's retry settings.
pub fn status(k: &KinesisSnapshot) -> String {
    // A producer that cannot put says so first: without it, nothing below means anything.
    match &k.producer.unsupported {
        Some(why) => format!(" producer stopped: {why}"),
        None => format!(" SDK: {}", k.retry),
    }
}
