//! Drawing one frame from a [`View`]. Pure: the same view, size and theme always draw the same
//! screen, which is what the snapshot tests and screenshots rely on.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Block, Borders, Cell, Clear, Paragraph, Row, Sparkline, SparklineBar, Table,
};

use super::app::{App, KEYS, Tab, window_label};
use super::theme::Theme;
use super::view::View;
use crate::lab::snapshot::{ConsumerSnapshot, KinesisSnapshot};
use crate::metrics::Point;
use crate::report::table::{ms, thousands};
use crate::scenario::ConsumerKind;

/// The smallest screen the lab is drawn on.
pub const MIN_SIZE: (u16, u16) = (80, 24);

/// The panes, one per consumer type, in screen order.
const PANES: &[(ConsumerKind, &str)] = &[
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

pub fn draw(f: &mut Frame, app: &App, view: &View) {
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
    draw_header(f, theme, app, view, header);
    // Tabs exist when the scenario runs several labs, which is when it has an overview.
    let body = if app.has(Tab::Overview) {
        let [bar, rest] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(body);
        draw_tabs(f, theme, app, bar);
        rest
    } else {
        body
    };
    let snap = &view.snapshot;
    match app.tab {
        Tab::Overview if app.has(Tab::Overview) => draw_overview(f, theme, app, view, body),
        Tab::S3 if snap.s3.is_some() => draw_s3(
            f,
            theme,
            app,
            view,
            snap.s3.as_ref().expect("checked"),
            body,
        ),
        Tab::Redis if snap.redis.is_some() => draw_redis(
            f,
            theme,
            app,
            view,
            snap.redis.as_ref().expect("checked"),
            body,
        ),
        _ => {
            if let Some(k) = &snap.kinesis {
                draw_kinesis(f, theme, app, view, k, body);
            } else if let Some(s3) = &snap.s3 {
                draw_s3(f, theme, app, view, s3, body);
            } else if let Some(r) = &snap.redis {
                draw_redis(f, theme, app, view, r, body);
            }
        }
    }
    draw_status(f, theme, app, view, status);
    draw_footer(f, theme, app, footer);
    if app.help {
        draw_help(f, theme, area);
    }
}

/// Every lab on one screen: Kinesis on the left and S3 above Redis on the right when the terminal
/// is wide enough, otherwise one above the other.
fn draw_overview(f: &mut Frame, theme: &Theme, app: &App, view: &View, area: Rect) {
    let snap = &view.snapshot;
    // S3 and Redis, one above the other, Redis (three panes) the taller.
    let side = |f: &mut Frame, r: Rect| {
        let parts = [snap.s3.is_some(), snap.redis.is_some()];
        let weights = [2, 3];
        let rects = Layout::vertical(
            parts
                .iter()
                .zip(weights)
                .filter(|(on, _)| **on)
                .map(|(_, w)| Constraint::Fill(w)),
        )
        .split(r);
        // One rectangle per lab present, in order.
        let mut rects = rects.iter().copied();
        if let Some(s3) = &snap.s3
            && let Some(rect) = rects.next()
        {
            draw_s3(f, theme, app, view, s3, rect);
        }
        if let Some(red) = &snap.redis
            && let Some(rect) = rects.next()
        {
            draw_redis(f, theme, app, view, red, rect);
        }
    };
    // Rows each lab needs to show its panes with at least one row of sparkline.
    let kinesis_rows: u16 = snap.kinesis.as_ref().map_or(0, |k| {
        PANES
            .iter()
            .map(|(kind, _)| k.consumers.iter().filter(|c| c.kind == *kind).count() as u16)
            .filter(|n| *n > 0)
            .map(|n| 2 + 1 + n + 1 + 1)
            .sum()
    });
    let s3_rows = if snap.s3.is_some() {
        2 * (2 + 1 + 3) + 2
    } else {
        0
    };
    let redis_rows = if snap.redis.is_some() {
        3 * (2 + 1 + 2) + 2
    } else {
        0
    };
    let side_by_side = area.width >= OVERVIEW_SIDE_BY_SIDE
        && area.height >= kinesis_rows.max(s3_rows + redis_rows);
    let stacked = area.height >= kinesis_rows + s3_rows + redis_rows;
    if !side_by_side && !stacked {
        draw_overview_table(f, theme, view, area);
        return;
    }
    let others = snap.s3.is_some() as u16 + snap.redis.is_some() as u16;
    match &snap.kinesis {
        Some(k) if side_by_side => {
            let right_w = (area.width * 2 / 5).max(80);
            let [left, right] =
                Layout::horizontal([Constraint::Fill(1), Constraint::Length(right_w)]).areas(area);
            draw_kinesis(f, theme, app, view, k, left);
            side(f, right);
        }
        Some(k) => {
            let [top, rest] =
                Layout::vertical([Constraint::Fill(4), Constraint::Fill(others * 3)]).areas(area);
            draw_kinesis(f, theme, app, view, k, top);
            side(f, rest);
        }
        None => side(f, area),
    }
}

/// The overview on a screen too small for every lab's panes: one table, a row per consumer, S3
/// operation and Redis method, with the figures that matter most.
fn draw_overview_table(f: &mut Frame, theme: &Theme, view: &View, area: Rect) {
    use crate::metrics::Summary;
    let snap = &view.snapshot;
    let txt = |v: String| right(Span::styled(v, theme.fg(theme.text)));
    let lat = |s: &Summary| {
        if s.count == 0 {
            vec![txt("-".into()), txt("-".into()), txt("-".into())]
        } else {
            vec![txt(ms(s.p50_us)), txt(ms(s.p99_us)), txt(ms(s.max_us))]
        }
    };
    let note = |text: String, bad: bool| {
        Cell::from(Span::styled(
            text,
            if bad {
                theme.fg(theme.warn)
            } else {
                theme.fg(theme.dim)
            },
        ))
    };
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    if let Some(k) = &snap.kinesis {
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
    }
    if let Some(s3) = &snap.s3 {
        for o in &s3.ops {
            let color = if o.class == crate::emulator::s3::Class::ExpressOneZone {
                theme.s3_express
            } else {
                theme.s3_standard
            };
            let mut cells = vec![
                Cell::from(Span::styled("S3", theme.strong(color))),
                Cell::from(Span::styled(
                    format!(
                        "{}{} {}",
                        if o.class == s3.class { "▶ " } else { "" },
                        o.op,
                        o.class.storage_class()
                    ),
                    theme.fg(theme.text),
                )),
            ];
            cells.extend(lat(&o.total));
            cells.push(txt(thousands(o.requests)));
            cells.push(note(
                format!(
                    "{:.1} MB/s · SlowDown {} · errors {}",
                    o.mb_per_sec,
                    thousands(o.slow_downs),
                    thousands(o.errors)
                ),
                o.slow_downs > 0 || o.errors > 0,
            ));
            rows.push(cells);
        }
    }
    if let Some(r) = &snap.redis {
        let label = Cell::from(Span::styled("Redis", theme.strong(theme.redis)));
        match &r.unavailable {
            Some(why) => rows.push(vec![
                label,
                Cell::from(Span::styled("not running", theme.strong(theme.error))),
                txt("-".into()),
                txt("-".into()),
                txt("-".into()),
                txt("-".into()),
                Cell::from(Span::styled(why.clone(), theme.strong(theme.error))),
            ]),
            None => {
                for m in &r.methods {
                    let mut cells = vec![
                        label.clone(),
                        Cell::from(Span::styled(
                            format!("lag: {}", m.method.short()),
                            theme.fg(theme.text),
                        )),
                    ];
                    cells.extend(lat(&m.lag));
                    cells.push(txt(thousands(m.tries)));
                    cells.push(note(
                        format!(
                            "errors {} · value {}",
                            thousands(m.errors),
                            crate::units::format_bytes(r.value_bytes)
                        ),
                        m.errors > 0,
                    ));
                    rows.push(cells);
                }
            }
        }
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.fg(theme.border))
        .title(Span::styled(
            " Every lab, in brief (a larger terminal shows their panes; 1-3 show one lab) ",
            theme.strong(theme.title),
        ));
    // Names as wide as the longest (consumer names are the scenario's); when narrow, max and the
    // count go first, then the names narrow.
    let longest = snap
        .kinesis
        .iter()
        .flat_map(|k| k.consumers.iter().map(|c| c.name.chars().count()))
        .chain([20])
        .max()
        .unwrap_or(20)
        .min(40) as u16;
    let (show, w) = fit(
        &[7, longest, 11, 11, 11, 7, 24],
        &[0, 0, 0, 0, 3, 2, 0],
        Some((1, 14, 1)),
        block.inner(area).width,
    );
    let head = shown(
        vec![
            Cell::from("lab"),
            Cell::from("what"),
            right(Span::raw("p50")),
            right(Span::raw("p99")),
            right(Span::raw("max")),
            right(Span::raw("count")),
            Cell::from("counts"),
        ],
        &show,
    );
    let head = Row::new(head).style(theme.strong(theme.table_header));
    let rows: Vec<Row> = rows
        .into_iter()
        .map(|cells| Row::new(shown(cells, &show)))
        .collect();
    let last = w.len() - 1;
    let widths: Vec<Constraint> = shown(
        w.iter()
            .enumerate()
            .map(|(i, w)| {
                if i == last {
                    Constraint::Fill(1)
                } else {
                    Constraint::Length(*w)
                }
            })
            .collect(),
        &show,
    );
    f.render_widget(
        Table::new(rows, widths)
            .header(head)
            .column_spacing(1)
            .block(block),
        area,
    );
}

/// The overview puts Kinesis beside the other labs from this width on.
const OVERVIEW_SIDE_BY_SIDE: u16 = 180;

/// Which columns of a table fit in `avail` cells at one cell of spacing. `drop` ranks each column:
/// 0 always stays, higher ranks go first. `shrink` (column, narrowest width, rank) lets a column
/// narrow at its rank before lower-ranked columns are dropped. Returns what to show and the widths.
fn fit(
    widths: &[u16],
    drop: &[u8],
    shrink: Option<(usize, u16, u8)>,
    avail: u16,
) -> (Vec<bool>, Vec<u16>) {
    let mut widths = widths.to_vec();
    let mut show = vec![true; widths.len()];
    let total = |show: &[bool], widths: &[u16]| -> u16 {
        let shown: Vec<u16> = widths
            .iter()
            .zip(show)
            .filter(|(_, s)| **s)
            .map(|(w, _)| *w)
            .collect();
        shown.iter().sum::<u16>() + shown.len().saturating_sub(1) as u16
    };
    let top = drop
        .iter()
        .copied()
        .chain(shrink.map(|s| s.2))
        .max()
        .unwrap_or(0);
    for rank in (1..=top).rev() {
        let over = total(&show, &widths).saturating_sub(avail);
        if over == 0 {
            break;
        }
        if let Some((col, min, r)) = shrink
            && r == rank
        {
            widths[col] = widths[col].saturating_sub(over).max(min);
            continue;
        }
        for (i, d) in drop.iter().enumerate() {
            if *d == rank {
                show[i] = false;
            }
        }
    }
    (show, widths)
}

/// Keeps the items whose column is shown.
fn shown<T>(items: Vec<T>, show: &[bool]) -> Vec<T> {
    items
        .into_iter()
        .zip(show)
        .filter(|(_, s)| **s)
        .map(|(x, _)| x)
        .collect()
}

fn draw_header(f: &mut Frame, theme: &Theme, app: &App, view: &View, area: Rect) {
    let s = &view.snapshot;
    let style = if theme.monochrome {
        Style::default().add_modifier(Modifier::REVERSED)
    } else {
        Style::default().fg(theme.header).bg(theme.header_bg)
    };
    let sep = Span::styled(" │ ", style.add_modifier(Modifier::DIM));
    // (text, style, drop order: 0 always stays, higher numbers go first when narrow).
    let mut parts: Vec<(String, Style, u8)> = vec![
        (" latlab".to_string(), style.add_modifier(Modifier::BOLD), 0),
        (s.scenario.clone(), style, 0),
        (s.backend.short(), style, 1),
        (clock(s.elapsed_secs), style, 0),
    ];
    if let Some(k) = &s.kinesis {
        parts.push((
            format!(
                "{} · {} shard{}",
                k.stream,
                k.shards,
                if k.shards == 1 { "" } else { "s" }
            ),
            style,
            3,
        ));
        let p = &k.producer;
        // Asked against achieved; a shortfall says its first cause (a second of production
        // before judging).
        let short = s.producing_secs >= 2.0 && !p.shortfall().is_empty();
        parts.push((
            format!(
                "{} rec/s asked · {} achieved{} · {}",
                fmt_rate(p.asked_rate),
                fmt_rate(p.achieved_rate),
                if short {
                    format!(" ({})", p.shortfall()[0])
                } else {
                    String::new()
                },
                crate::units::format_bytes(p.payload_bytes)
            ),
            if short {
                style.add_modifier(Modifier::BOLD)
            } else {
                style
            },
            2,
        ));
    }
    if app.paused.is_some() {
        parts.push((
            "PAUSED".to_string(),
            style.add_modifier(Modifier::BOLD | Modifier::REVERSED),
            0,
        ));
    }
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
    for (tab, label) in [
        (Tab::Overview, "0 Overview"),
        (Tab::Kinesis, "1 Kinesis"),
        (Tab::S3, "2 S3"),
        (Tab::Redis, "3 Redis"),
    ] {
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

fn draw_redis(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    view: &View,
    r: &crate::lab::snapshot::RedisSnapshot,
    area: Rect,
) {
    use crate::lab::redis::Method;
    if let Some(why) = &r.unavailable {
        let block = Block::bordered().title(Span::styled(
            " Redis replication lag: not running ",
            theme.strong(theme.title),
        ));
        let text = vec![
            Line::from(""),
            Line::from(Span::styled(format!(" {why}"), theme.strong(theme.error))),
        ];
        f.render_widget(
            Paragraph::new(text)
                .block(block)
                .wrap(ratatui::widgets::Wrap { trim: false }),
            area,
        );
        return;
    }
    let [a, b, c, info] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Fill(1),
        Constraint::Fill(1),
        Constraint::Length(2),
    ])
    .areas(area);
    for (method, rect) in [
        (Method::NewClients, a),
        (Method::Persistent, b),
        (Method::Offset, c),
    ] {
        let m = r.methods.iter().find(|x| x.method == method);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.fg(theme.border))
            .title(Span::styled(
                format!(" {} ", method.label()),
                theme.strong(theme.title),
            ));
        let inner = block.inner(rect);
        f.render_widget(block, rect);
        if inner.height < 3 {
            continue;
        }
        let [spark_area, table_area] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(2)]).areas(inner);
        let mut per_sec = vec![(0, theme.redis); app.window() as usize];
        if let Some((_, points)) = view.redis_sparks.iter().find(|(x, _)| *x == method) {
            merge_points(&mut per_sec, points, theme.redis, |p| p.max_us);
        }
        draw_sparkline(f, theme, app, &per_sec, "max/s", spark_area);
        // p99.9, the mean, p90 and the try count go first when the pane is narrow.
        let mut header = vec![
            "p50", "p90", "p99", "p99.9", "max", "mean", "tries", "errors",
        ];
        let mut widths = vec![11, 11, 11, 11, 11, 11, 7, 7];
        let mut drop = vec![0, 4, 0, 6, 0, 5, 3, 0];
        if method == Method::Offset {
            header.push("bytes behind p50");
            widths.push(17);
            drop.push(0);
        }
        let (show, widths) = fit(&widths, &drop, None, table_area.width);
        let head = Row::new(shown(
            header.iter().map(|h| right(Span::raw(*h))).collect(),
            &show,
        ))
        .style(theme.strong(theme.table_header));
        let txt = |v: String| right(Span::styled(v, theme.fg(theme.text)));
        let cells = match m {
            Some(m) if m.tries > 0 || m.errors > 0 => {
                let l = &m.lag;
                let mut cells = vec![
                    txt(ms(l.p50_us)),
                    txt(ms(l.p90_us)),
                    txt(ms(l.p99_us)),
                    txt(ms(l.p999_us)),
                    txt(ms(l.max_us)),
                    txt(ms(l.mean_us as u64)),
                    txt(thousands(m.tries)),
                    right(Span::styled(
                        thousands(m.errors),
                        if m.errors > 0 {
                            theme.strong(theme.error)
                        } else {
                            theme.fg(theme.text)
                        },
                    )),
                ];
                if method == Method::Offset {
                    cells.push(txt(m.behind_bytes.as_ref().map_or("-".to_string(), |b| {
                        crate::units::format_bytes(b.p50_bytes)
                    })));
                }
                cells
            }
            _ => header.iter().map(|_| txt("-".into())).collect(),
        };
        let widths: Vec<Constraint> =
            shown(widths.into_iter().map(Constraint::Length).collect(), &show);
        f.render_widget(
            Table::new(vec![Row::new(shown(cells, &show))], widths)
                .header(head)
                .column_spacing(1),
            table_area,
        );
    }
    let link = r.link.as_ref().map_or("a user's Redis".to_string(), |l| {
        format!("link {} (+{} ms each way)", l.link, l.latency_ms)
    });
    let on = |b: bool| if b { "on" } else { "off" };
    let text = vec![
        Line::from(vec![
            Span::styled(" v", theme.strong(theme.accent)),
            Span::styled(
                format!(" value {}   ", crate::units::format_bytes(r.value_bytes)),
                theme.fg(theme.dim),
            ),
            Span::styled("c", theme.strong(theme.accent)),
            Span::styled(
                format!(" CPU load {}   ", on(r.cpu_load)),
                if r.cpu_load {
                    theme.strong(theme.warn)
                } else {
                    theme.fg(theme.dim)
                },
            ),
            Span::styled("m", theme.strong(theme.accent)),
            Span::styled(
                format!(" memory full {}   ", on(r.memory_full)),
                if r.memory_full {
                    theme.strong(theme.warn)
                } else {
                    theme.fg(theme.dim)
                },
            ),
            Span::styled(format!("· {}", r.status), theme.fg(theme.dim)),
        ]),
        Line::from(Span::styled(
            format!(" primary {} → replica {} · {link}", r.primary, r.replica),
            theme.fg(theme.dim),
        )),
    ];
    f.render_widget(Paragraph::new(text), info);
}

fn draw_s3(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    view: &View,
    s3: &crate::lab::snapshot::S3Snapshot,
    area: Rect,
) {
    use crate::emulator::s3::Class;
    let [put, get, info] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Fill(1),
        Constraint::Length(2),
    ])
    .areas(area);
    for (op, rect, title) in [
        (
            "PUT",
            put,
            if area.width >= 100 {
                "S3 PUT (upload; the answer follows the whole body)"
            } else {
                "S3 PUT (upload)"
            },
        ),
        ("GET", get, "S3 GET (download)"),
    ] {
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.fg(theme.border))
            .title(Line::from(vec![
                Span::styled(format!(" {title} "), theme.strong(theme.title)),
                Span::styled(
                    format!(
                        " {} {} ",
                        if op == "PUT" {
                            "writing to"
                        } else {
                            "reading from"
                        },
                        s3.class.storage_class()
                    ),
                    theme.strong(if s3.class == Class::ExpressOneZone {
                        theme.s3_express
                    } else {
                        theme.s3_standard
                    }),
                ),
            ]));
        let inner = block.inner(rect);
        f.render_widget(block, rect);
        if inner.height < 4 {
            continue;
        }
        let [spark_area, table_area] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(3)]).areas(inner);
        // Both classes on one time line, each second in the colour of the class measured then,
        // so a switch shows where it happened.
        let mut per_sec = vec![(0, theme.s3_express); app.window() as usize];
        for (class, _, points) in view.s3_sparks.iter().filter(|(_, o, _)| o == op) {
            let color = if *class == Class::ExpressOneZone {
                theme.s3_express
            } else {
                theme.s3_standard
            };
            merge_points(&mut per_sec, points, color, |p| p.p99_us);
        }
        draw_sparkline(f, theme, app, &per_sec, "p99/s", spark_area);
        // The total's max, the first byte's p99, the request count and SlowDown go first when the
        // pane is narrow.
        const HEAD: [&str; 10] = [
            "class",
            "requests",
            "first byte p50",
            "p99",
            "total p50",
            "p99",
            "max",
            "MB/s",
            "SlowDown",
            "errors",
        ];
        let (show, widths) = fit(
            &[17, 8, 14, 10, 10, 10, 10, 7, 8, 6],
            &[0, 3, 0, 4, 0, 0, 5, 0, 2, 0],
            None,
            table_area.width,
        );
        let head = Row::new(shown(
            HEAD.iter()
                .enumerate()
                .map(|(i, h)| {
                    if i == 0 {
                        Cell::from(*h)
                    } else {
                        right(Span::raw(*h))
                    }
                })
                .collect(),
            &show,
        ))
        .style(theme.strong(theme.table_header));
        let rows: Vec<Row> = [Class::ExpressOneZone, Class::Standard]
            .iter()
            .map(|class| {
                let o = s3.ops.iter().find(|o| o.class == *class && o.op == op);
                let active = *class == s3.class;
                let c = if *class == Class::ExpressOneZone {
                    theme.s3_express
                } else {
                    theme.s3_standard
                };
                let name = Span::styled(
                    format!(
                        "{}{}",
                        if active { "▶ " } else { "  " },
                        class.storage_class()
                    ),
                    if active {
                        theme.strong(c)
                    } else {
                        theme.fg(theme.dim)
                    },
                );
                let txt = |v: String| right(Span::styled(v, theme.fg(theme.text)));
                let cells = match o {
                    None => std::iter::once(Cell::from(name))
                        .chain((1..HEAD.len()).map(|_| txt("-".into())))
                        .collect(),
                    Some(o) => vec![
                        Cell::from(name),
                        txt(thousands(o.requests)),
                        txt(ms(o.first_byte.p50_us)),
                        txt(ms(o.first_byte.p99_us)),
                        txt(ms(o.total.p50_us)),
                        txt(ms(o.total.p99_us)),
                        txt(ms(o.total.max_us)),
                        txt(format!("{:.1}", o.mb_per_sec)),
                        right(Span::styled(
                            thousands(o.slow_downs),
                            if o.slow_downs > 0 {
                                theme.strong(theme.warn)
                            } else {
                                theme.fg(theme.text)
                            },
                        )),
                        right(Span::styled(
                            thousands(o.errors),
                            if o.errors > 0 {
                                theme.strong(theme.error)
                            } else {
                                theme.fg(theme.text)
                            },
                        )),
                    ],
                };
                Row::new(shown(cells, &show))
            })
            .collect();
        let widths: Vec<Constraint> =
            shown(widths.into_iter().map(Constraint::Length).collect(), &show);
        f.render_widget(
            Table::new(rows, widths).header(head).column_spacing(1),
            table_area,
        );
    }
    let text = vec![
        Line::from(vec![
            Span::styled(" s", theme.strong(theme.accent)),
            Span::styled(" switches the class   ", theme.fg(theme.dim)),
            Span::styled("[ ]", theme.strong(theme.accent)),
            Span::styled(
                format!(
                    " payload {} · {} loop(s) of PUT then GET",
                    crate::units::format_bytes(s3.payload_bytes),
                    s3.concurrency
                ),
                theme.fg(theme.dim),
            ),
        ]),
        Line::from(Span::styled(
            format!(
                " buckets {} and {} · CreateSession calls {}",
                s3.standard_bucket,
                s3.express_bucket,
                s3.create_sessions.map_or("n/a".to_string(), thousands)
            ),
            theme.fg(theme.dim),
        )),
    ];
    f.render_widget(Paragraph::new(text), info);
}

fn draw_status(f: &mut Frame, theme: &Theme, app: &App, view: &View, area: Rect) {
    let line = match app.current_message() {
        Some((text, true)) => {
            Line::from(Span::styled(format!(" {text}"), theme.strong(theme.error)))
        }
        Some((text, false)) => Line::from(vec![
            Span::styled(" ✓ ", theme.strong(theme.ok)),
            Span::styled(text.to_string(), theme.fg(theme.text)),
        ]),
        // Otherwise what the tab's figures rest on: the SDK's retries, or what each Redis method
        // includes.
        None => {
            let snap = &view.snapshot;
            let redis = || {
                " Redis lag: 1 includes connecting (the seed's way) · 2 from the SET's reply · 3 to the replica's offset ACK (WAIT)".to_string()
            };
            let s3 = || {
                format!(
                    " S3 SDK: {}",
                    crate::aws::RetrySettings::default().describe()
                )
            };
            let text = match app.tab {
                Tab::Redis if snap.redis.is_some() => redis(),
                Tab::S3 if snap.s3.is_some() => s3(),
                _ => match &snap.kinesis {
                    Some(k) => format!(" SDK: {}", k.retry),
                    None if snap.s3.is_some() => s3(),
                    None => redis(),
                },
            };
            Line::from(Span::styled(text, theme.fg(theme.dim)))
        }
    };
    f.render_widget(Paragraph::new(line), area);
}

fn draw_footer(f: &mut Frame, theme: &Theme, app: &App, area: Rect) {
    let mut keys = vec![("q", "quit"), ("?", "help")];
    if app.has(Tab::Overview) {
        keys.push(("Tab", "labs"));
    }
    match app.tab {
        // Each lab's main key, for the labs the scenario runs.
        Tab::Overview => keys.extend(
            [
                (app.has(Tab::Kinesis), ("+/-", "pollers")),
                (app.has(Tab::S3), ("s", "S3 class")),
                (app.has(Tab::Redis), ("v", "Redis value")),
            ]
            .into_iter()
            .filter_map(|(on, key)| on.then_some(key)),
        ),
        Tab::S3 => keys.extend([("s", "class"), ("[/]", "payload")]),
        Tab::Redis => keys.extend([("v", "value"), ("c", "CPU load"), ("m", "memory")]),
        Tab::Kinesis => keys.extend([("+/-", "pollers"), ("[/]", "payload")]),
    }
    keys.extend([
        ("p", "pause"),
        ("r", "reset"),
        ("z/Z", "zoom"),
        ("t", "theme"),
    ]);
    let mut spans = vec![Span::raw(" ")];
    for (k, what) in keys {
        spans.push(Span::styled(k, theme.strong(theme.accent)));
        spans.push(Span::styled(format!(" {what}   "), theme.fg(theme.dim)));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_help(f: &mut Frame, theme: &Theme, area: Rect) {
    let widest = KEYS
        .iter()
        .map(|(_, what)| 2 + 16 + what.chars().count())
        .max()
        .unwrap_or(40) as u16;
    let width = (widest + 4).min(area.width.saturating_sub(2));
    let height = (KEYS.len() as u16 + 6).min(area.height.saturating_sub(2));
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    f.render_widget(Clear, popup);
    let mut lines = vec![Line::from("")];
    for (k, what) in KEYS {
        lines.push(Line::from(vec![
            Span::styled(format!("  {k:<16}"), theme.strong(theme.accent)),
            Span::styled(what.to_string(), theme.fg(theme.text)),
        ]));
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        "  any key closes this help; the mouse wheel zooms too",
        theme.fg(theme.dim),
    )));
    let bg = if theme.monochrome {
        Style::default()
    } else {
        Style::default().bg(theme.popup_bg)
    };
    let block = Block::bordered()
        .title(Span::styled(" latlab keys ", theme.strong(theme.title)))
        .border_style(theme.fg(theme.accent))
        .style(bg);
    f.render_widget(Paragraph::new(lines).block(block).style(bg), popup);
}

/// Colour of a consumer kind's marks.
fn kind_color(theme: &Theme, kind: ConsumerKind) -> Color {
    match kind {
        ConsumerKind::Efo => theme.fan_out,
        ConsumerKind::LambdaEfo | ConsumerKind::LambdaStandard => theme.lambda,
        ConsumerKind::Poller => theme.poller,
    }
}

fn draw_kinesis(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    view: &View,
    k: &KinesisSnapshot,
    area: Rect,
) {
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
    draw_sparkline(f, theme, app, &per_sec, "p99/s", area);
}

/// Folds `points` (one per second, oldest first, ending now) into `per_sec` (the window, ending
/// now): a second keeps the highest `value` measured in it, in the colour of where it came from.
fn merge_points(
    per_sec: &mut [(u64, Color)],
    points: &[Point],
    color: Color,
    value: impl Fn(&Point) -> u64,
) {
    let window = per_sec.len();
    let pts = &points[points.len().saturating_sub(window)..];
    let offset = window - pts.len();
    for (slot, p) in per_sec[offset..].iter_mut().zip(pts) {
        if p.count > 0 && value(p) >= slot.0 {
            *slot = (value(p), color);
        }
    }
}

/// A sparkline of per-second values, each second in its own colour, with its labels: the highest
/// value shown, what is plotted (`p99/s`) and the time window.
fn draw_sparkline(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    per_sec: &[(u64, Color)],
    metric: &str,
    area: Rect,
) {
    if area.height == 0 || area.width < 20 {
        return;
    }
    let [labels, chart] =
        Layout::horizontal([Constraint::Length(12), Constraint::Min(0)]).areas(area);
    let data = columns(per_sec, chart.width as usize);
    let top = data.iter().map(|(v, _)| *v).max().unwrap_or(0);
    // One colour (most panes): a plain sparkline, cheaper to draw than styling every bar.
    let one_colour = data.windows(2).all(|w| w[0].1 == w[1].1);
    let sparkline = if one_colour {
        Sparkline::default()
            .data(data.iter().map(|(v, _)| *v))
            .style(theme.fg(data.first().map_or(theme.text, |(_, c)| *c)))
    } else {
        Sparkline::default().data(
            data.iter()
                .map(|(v, c)| SparklineBar::from(*v).style(theme.fg(*c))),
        )
    };
    f.render_widget(sparkline.max(top.max(1)), chart);
    let mut lines = vec![Line::from(Span::styled(
        format!("{:>10}", short_ms(top)),
        theme.fg(theme.text),
    ))];
    if labels.height >= 2 {
        lines.push(Line::from(Span::styled(
            format!("{metric:>10}"),
            theme.fg(theme.dim),
        )));
    }
    if labels.height >= 3 {
        while (lines.len() as u16) < labels.height - 1 {
            lines.push(Line::from(""));
        }
        lines.push(Line::from(Span::styled(
            format!("{:>10}", window_label(app.window())),
            theme.fg(theme.dim),
        )));
    }
    f.render_widget(Paragraph::new(lines), labels);
}

/// Squeezes (or stretches) per-second values into `cols` columns, keeping each column's maximum
/// and the tag (colour) that came with it.
fn columns<T: Copy>(values: &[(u64, T)], cols: usize) -> Vec<(u64, T)> {
    if cols == 0 || values.is_empty() {
        return Vec::new();
    }
    (0..cols)
        .map(|c| {
            let lo = c * values.len() / cols;
            let hi = ((c + 1) * values.len() / cols)
                .max(lo + 1)
                .min(values.len());
            values[lo..hi]
                .iter()
                .copied()
                .fold(values[lo], |m, v| if v.0 > m.0 { v } else { m })
        })
        .collect()
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
    // What fits, at one cell of spacing: status, the retry quota, p99.9, acked (received + lost +
    // unread), behind and retries go first, then the names narrow (to 14, so "get_records 2"
    // stays whole), then p90 and received go.
    // acked = received + lost + unread; behind is the service's MillisBehindLatest.
    const HEAD: [&str; 17] = [
        "consumer",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "max",
        "acked",
        "received",
        "lost",
        "unread",
        "behind",
        "dup",
        "throttled",
        "retries",
        "escaped",
        "quota",
        "status",
    ];
    let (show, widths) = fit(
        &[name_w, 11, 11, 11, 11, 11, 8, 8, 5, 6, 9, 3, 9, 7, 7, 6, 13],
        &[0, 0, 3, 0, 8, 0, 7, 2, 0, 0, 6, 0, 0, 5, 0, 9, 10],
        Some((0, 14, 4)),
        area.width,
    );
    let head = Row::new(shown(
        HEAD.iter()
            .map(|h| {
                if *h == "consumer" || *h == "status" {
                    Cell::from(*h)
                } else {
                    right(Span::raw(*h))
                }
            })
            .collect(),
        &show,
    ))
    .style(theme.strong(theme.table_header));
    let rows: Vec<Row> = members
        .iter()
        .map(|&i| Row::new(shown(consumer_cells(theme, &k.consumers[i], color), &show)))
        .collect();
    let last = HEAD.len() - 1;
    let widths: Vec<Constraint> = shown(
        widths
            .iter()
            .enumerate()
            .map(|(i, w)| {
                if i == last {
                    Constraint::Fill(1)
                } else {
                    Constraint::Length(*w)
                }
            })
            .collect(),
        &show,
    );
    f.render_widget(
        Table::new(rows, widths).header(head).column_spacing(1),
        area,
    );
}

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

/// A right-aligned cell, for figures.
fn right(span: Span<'static>) -> Cell<'static> {
    Cell::from(Line::from(span).alignment(ratatui::layout::Alignment::Right))
}

fn extra_line(
    theme: &Theme,
    view: &View,
    k: &KinesisSnapshot,
    kind: ConsumerKind,
    members: &[usize],
) -> Line<'static> {
    let dim = theme.fg(theme.dim);
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
            Line::from(vec![
                Span::styled(format!(" {}", first.detail), dim),
                Span::styled(
                    format!(
                        " · shard over {} calls/s in {over} of the last {} s",
                        k.get_records_limit_per_sec,
                        recent.len()
                    ),
                    if over > 0 { theme.fg(theme.warn) } else { dim },
                ),
            ])
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

fn clock(secs: f64) -> String {
    let s = secs as u64;
    format!("{}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
}

fn fmt_rate(r: f64) -> String {
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// Compact milliseconds for axis labels: `850 ms`, `12.3 s`.
fn short_ms(us: u64) -> String {
    if us >= 10_000_000 {
        format!("{:.1} s", us as f64 / 1e6)
    } else {
        format!("{} ms", thousands((us as f64 / 1000.0).round() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_keep_maxima() {
        let plain = |v: &[u64]| v.iter().map(|x| (*x, ())).collect::<Vec<_>>();
        assert_eq!(columns(&plain(&[1, 5, 2, 2]), 2), plain(&[5, 2]));
        assert_eq!(columns(&plain(&[3, 1]), 4), plain(&[3, 3, 1, 1]));
        assert_eq!(
            columns(&[(1, 'a'), (5, 'b'), (2, 'a'), (2, 'b')], 2),
            vec![(5, 'b'), (2, 'a')]
        );
        assert_eq!(short_ms(1_234_000), "1,234 ms");
        assert_eq!(short_ms(12_340_000), "12.3 s");
    }
}
