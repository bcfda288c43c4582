//! The Kinesis tab: a pane per consumer type, each a sparkline of the pane's p99 per second
//! over a table of its consumers, and the shard's GetRecords rate against its limit.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};

use crate::labs::kinesis::config::ConsumerKind;
use crate::labs::kinesis::snapshot::{ConsumerSnapshot, KinesisSnapshot};
use crate::labs::kinesis::state::UNSUPPORTED;
use crate::tui::app::App;
use crate::tui::theme::Theme;
use crate::tui::view::View;
use crate::tui::widgets::*;
use crate::units::{fmt_rate, ms, short_ms, thousands};

/// The panes, one per consumer type, in screen order.
pub const PANES: &[(ConsumerKind, &str)] = &[
    (ConsumerKind::Efo, "Enhanced fan-out: SDK SubscribeToShard"),
    (ConsumerKind::LambdaEfo, "Lambda on enhanced fan-out"),
    (
        ConsumerKind::Poller,
        "Shared throughput: GetRecords pollers",
    ),
    (
        ConsumerKind::LambdaStandard,
        "Lambda on a standard iterator (polls GetRecords)",
    ),
];

/// Colour of a consumer kind's marks.
pub fn kind_color(theme: &Theme, kind: ConsumerKind) -> Color {
    match kind {
        ConsumerKind::Efo => theme.fan_out,
        ConsumerKind::LambdaEfo | ConsumerKind::LambdaStandard => theme.lambda,
        ConsumerKind::Poller => theme.poller,
    }
}

pub fn draw(f: &mut Frame, theme: &Theme, app: &App, view: &View, k: &KinesisSnapshot, area: Rect) {
    let panes: Vec<(ConsumerKind, &str, Vec<usize>)> = PANES
        .iter()
        .map(|(kind, title)| {
            let members = k
                .consumers
                .iter()
                .enumerate()
                .filter(|(_, c)| c.kind == *kind)
                .map(|(i, _)| i)
                .collect();
            (*kind, *title, members)
        })
        .filter(|(_, _, m): &(ConsumerKind, &str, Vec<usize>)| !m.is_empty())
        .collect();
    if panes.is_empty() {
        return;
    }
    // Each pane needs its borders, a table header, a row per consumer and one extra line; what is
    // left goes to the sparklines, shared evenly.
    let fixed: Vec<u16> = panes
        .iter()
        .map(|(_, _, m)| 2 + 1 + m.len() as u16 + 1)
        .collect();
    let spare = area.height.saturating_sub(fixed.iter().sum());
    let spark = (spare / panes.len() as u16).clamp(1, 8);
    let mut constraints: Vec<Constraint> = fixed
        .iter()
        .map(|h| Constraint::Length(h + spark))
        .collect();
    constraints.push(Constraint::Min(0));
    let rects = Layout::vertical(constraints).split(area);
    for (i, (kind, title, members)) in panes.iter().enumerate() {
        draw_pane(
            f, theme, app, view, k, *kind, title, members, spark, rects[i],
        );
    }
    let last = rects[panes.len() - 1];
    super::cost_edge(f, theme, app, view, crate::labs::LabKind::Kinesis, last);
}

#[allow(clippy::too_many_arguments)]
fn draw_pane(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    view: &View,
    k: &KinesisSnapshot,
    kind: ConsumerKind,
    title: &str,
    members: &[usize],
    spark_height: u16,
    area: Rect,
) {
    let color = kind_color(theme, kind);
    let mut title_spans = vec![Span::styled(
        format!(" {title} "),
        theme.strong(theme.title),
    )];
    if kind == ConsumerKind::Poller || kind == ConsumerKind::LambdaStandard {
        title_spans.push(read_rate_span(theme, k));
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.fg(theme.border))
        .title(Line::from(title_spans));
    let inner = block.inner(area);
    f.render_widget(block, area);
    if inner.height == 0 {
        return;
    }
    let [spark_area, table_area, extra_area] = Layout::vertical([
        Constraint::Length(spark_height.min(inner.height)),
        Constraint::Length(1 + members.len() as u16),
        Constraint::Min(0),
    ])
    .areas(inner);
    draw_spark(f, theme, app, view, members, color, spark_area);
    draw_table(f, theme, k, members, color, table_area);
    let extra = extra_line(theme, view, k, kind, members);
    f.render_widget(Paragraph::new(extra), extra_area);
}

/// "shard reads 5.6/s of 5": the cause of throttling, on screen when it happens.
fn read_rate_span(theme: &Theme, k: &KinesisSnapshot) -> Span<'static> {
    let rate = k.get_records_calls_per_sec;
    let limit = k.get_records_limit_per_sec as f64;
    let over = rate > limit;
    let style = if over {
        theme.strong(theme.gauge_over)
    } else {
        theme.fg(theme.gauge_ok)
    };
    let bar_len = 10usize;
    let filled = ((rate / (limit * 2.0)) * bar_len as f64)
        .round()
        .clamp(0.0, bar_len as f64) as usize;
    let mark = bar_len / 2;
    let bar: String = (0..bar_len)
        .map(|i| {
            if i == mark {
                '│'
            } else if i < filled {
                '█'
            } else {
                '░'
            }
        })
        .collect();
    Span::styled(
        format!(
            " GetRecords {rate:.1}/s of {} per shard {bar}{} ",
            k.get_records_limit_per_sec,
            if over { " OVER" } else { "" }
        ),
        style,
    )
}

fn draw_spark(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    view: &View,
    members: &[usize],
    color: Color,
    area: Rect,
) {
    // Per second: the highest p99 among the pane's consumers.
    let mut per_sec = vec![(0, color); app.window() as usize];
    for &i in members {
        if let Some(points) = view.sparks.get(i) {
            merge_points(&mut per_sec, points, color, |p| p.p99_us);
        }
    }
    let marks = super::fault_marks(view, crate::faults::Service::Kinesis, app.window());
    draw_sparkline(f, theme, app, &per_sec, "p99/s", &marks, area);
}

fn draw_table(
    f: &mut Frame,
    theme: &Theme,
    k: &KinesisSnapshot,
    members: &[usize],
    color: Color,
    area: Rect,
) {
    // One name width for every pane, so the columns line up down the screen.
    let name_w = k
        .consumers
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(8)
        .clamp(8, 28) as u16;
    let mut columns = CONSUMER_COLUMNS;
    columns[0].width = name_w;
    // The names narrow to 14 (so "get_records 2" stays whole) at rank 4.
    let fitted = Fitted::new(
        &columns,
        Some(Shrink {
            column: 0,
            min: 14,
            rank: 4,
        }),
        area.width,
    )
    .fill_last();
    let rows: Vec<Row> = members
        .iter()
        .map(|&i| fitted.row(consumer_cells(theme, &k.consumers[i], color)))
        .collect();
    f.render_widget(
        Table::new(rows, fitted.constraints())
            .header(fitted.header(&columns, theme.strong(theme.table_header)))
            .column_spacing(1),
        area,
    );
}

/// The consumer table's columns. What fits, at one cell of spacing: status, the retry quota,
/// p99.9, acked, behind and retries go first, then the names narrow, then p90 and received go.
/// acked = received + lost + unread; behind is the service's MillisBehindLatest.
const CONSUMER_COLUMNS: [Column; 17] = [
    Column::left("consumer", 8, 0),
    Column::right("p50", 11, 0),
    Column::right("p90", 11, 3),
    Column::right("p99", 11, 0),
    Column::right("p99.9", 11, 8),
    Column::right("max", 11, 0),
    Column::right("acked", 8, 7),
    Column::right("received", 8, 2),
    Column::right("lost", 5, 0),
    Column::right("unread", 6, 0),
    Column::right("behind", 9, 6),
    Column::right("dup", 3, 0),
    Column::right("throttled", 9, 0),
    Column::right("retries", 7, 5),
    Column::right("escaped", 7, 0),
    Column::right("quota", 6, 9),
    Column::left("status", 13, 10),
];

/// A consumer's cells, one per column of the consumer table.
fn consumer_cells(theme: &Theme, c: &ConsumerSnapshot, color: Color) -> Vec<Cell<'static>> {
    let a = &c.arrival_to_receive;
    let stopped = c.stopped_at_secs.is_some();
    let name_style = if stopped {
        theme.fg(theme.dim).add_modifier(Modifier::CROSSED_OUT)
    } else {
        theme.strong(color)
    };
    let num = |v: u64, bad: bool| {
        let style = if bad {
            theme.strong(theme.error)
        } else {
            theme.fg(theme.text)
        };
        right(Span::styled(thousands(v), style))
    };
    let lat = |us: u64| {
        right(Span::styled(
            if a.count == 0 {
                "-".to_string()
            } else {
                ms(us)
            },
            theme.fg(theme.text),
        ))
    };
    let warn = |v: u64| {
        right(Span::styled(
            thousands(v),
            if v > 0 {
                theme.fg(theme.warn)
            } else {
                theme.fg(theme.text)
            },
        ))
    };
    let sdk = &c.sdk.counters;
    let quota = match sdk.quota_left {
        Some(q) => Span::styled(
            thousands(q),
            if q < 100 {
                theme.strong(theme.error)
            } else {
                theme.fg(theme.dim)
            },
        ),
        None => Span::styled("none", theme.fg(theme.dim)),
    };
    let status = if stopped {
        "stopped".to_string()
    } else {
        c.status.clone()
    };
    vec![
        Cell::from(Span::styled(c.name.clone(), name_style)),
        lat(a.p50_us),
        lat(a.p90_us),
        lat(a.p99_us),
        lat(a.p999_us),
        lat(a.max_us),
        num(c.counts.acknowledged, false),
        num(c.counts.received, false),
        num(c.counts.lost, c.counts.lost > 0),
        warn(c.counts.unread),
        right(Span::styled(
            c.millis_behind
                .map_or("-".into(), |b| short_ms(b.max(0) as u64 * 1000)),
            if c.millis_behind.unwrap_or(0) > 1000 {
                theme.fg(theme.warn)
            } else {
                theme.fg(theme.text)
            },
        )),
        num(c.counts.duplicates, c.counts.duplicates > 0),
        warn(sdk.throttles),
        warn(sdk.retries),
        num(sdk.escaped_total(), sdk.escaped_total() > 0),
        right(quota),
        Cell::from(Span::styled(status, theme.fg(theme.dim))),
    ]
}

fn extra_line(
    theme: &Theme,
    view: &View,
    k: &KinesisSnapshot,
    kind: ConsumerKind,
    members: &[usize],
) -> Line<'static> {
    let dim = theme.fg(theme.dim);
    // A consumer the endpoint cannot serve says so here, whatever width cuts the status column.
    if let Some(c) = members
        .iter()
        .map(|&i| &k.consumers[i])
        .find(|c| c.status.starts_with(UNSUPPORTED))
    {
        return Line::from(Span::styled(
            format!(" {}: {}", c.name, c.status),
            theme.strong(theme.error),
        ));
    }
    match kind {
        ConsumerKind::Poller => {
            let recent: Vec<u64> = view
                .read_rate
                .iter()
                .rev()
                .take(30)
                .rev()
                .map(|r| (r * 10.0) as u64)
                .collect();
            let over = recent
                .iter()
                .filter(|r| **r > k.get_records_limit_per_sec as u64 * 10)
                .count();
            let first = &k.consumers[members[0]];
            let held: u64 = members
                .iter()
                .map(|&i| k.consumers[i].sdk.counters.client_waits)
                .sum();
            // The figures first, the settings after: a narrow screen cuts the settings.
            let mut spans = vec![Span::styled(
                format!(
                    " shard over {} calls/s in {over} of the last {} s",
                    k.get_records_limit_per_sec,
                    recent.len()
                ),
                if over > 0 { theme.fg(theme.warn) } else { dim },
            )];
            if held > 0 {
                spans.push(Span::styled(
                    format!(" · {} held back by the SDK's rate limiter", thousands(held)),
                    theme.fg(theme.accent),
                ));
            }
            spans.push(Span::styled(format!(" · {}", first.detail), dim));
            Line::from(spans)
        }
        ConsumerKind::LambdaStandard | ConsumerKind::LambdaEfo => {
            let c = &k.consumers[members[0]];
            Line::from(Span::styled(
                format!(" {} · batches {}", c.detail, crate::report::batch_line(c)),
                dim,
            ))
        }
        ConsumerKind::Efo => {
            let c = &k.consumers[members[0]];
            let subs = c.events.get("subscriptions").copied().unwrap_or(0);
            Line::from(Span::styled(
                format!(" {} · {subs} subscription(s) · {}", c.detail, c.status),
                dim,
            ))
        }
    }
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
