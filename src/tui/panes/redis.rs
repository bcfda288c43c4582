//! The Redis tab: replication lag measured three ways, a pane per method.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Table};

use crate::tui::app::App;
use crate::tui::theme::Theme;
use crate::tui::view::View;
use crate::tui::widgets::*;
use crate::units::{ms, thousands};

pub fn draw(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    view: &View,
    r: &crate::labs::redis::snapshot::RedisSnapshot,
    area: Rect,
) {
    use crate::labs::redis::Method;
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
        let mut block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.fg(theme.border))
            .title(Span::styled(
                format!(" {} ", method.label()),
                theme.strong(theme.title),
            ));
        // Why its last try failed, on the pane's bottom edge.
        if let Some(line) = m
            .filter(|m| m.errors > 0)
            .and_then(|m| m.last_error.as_ref())
        {
            block = block.title_bottom(Span::styled(
                format!(" last error: {line} "),
                theme.strong(theme.error),
            ));
        }
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
        let marks = super::fault_marks(view, crate::faults::Service::Redis, app.window());
        draw_sparkline(f, theme, app, &per_sec, "max/s", &marks, spark_area);
        // p99.9, the mean, p90 and the try count go first when the pane is narrow.
        let mut columns = vec![
            Column::right("p50", 11, 0),
            Column::right("p90", 11, 4),
            Column::right("p99", 11, 0),
            Column::right("p99.9", 11, 6),
            Column::right("max", 11, 0),
            Column::right("mean", 11, 5),
            Column::right("tries", 7, 3),
            Column::right("errors", 7, 0),
        ];
        if method == Method::Offset {
            columns.push(Column::right("bytes behind p50", 17, 0));
        }
        let fitted = Fitted::new(&columns, None, table_area.width);
        let head = fitted.header(&columns, theme.strong(theme.table_header));
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
            _ => columns.iter().map(|_| txt("-".into())).collect(),
        };
        let widths: Vec<Constraint> = fitted.constraints();
        f.render_widget(
            Table::new(vec![fitted.row(cells)], widths)
                .header(head)
                .column_spacing(1),
            table_area,
        );
    }
    super::cost_edge(f, theme, app, view, crate::labs::LabKind::Redis, c);
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

/// The lab's rows of the overview's brief table (lab, what, p50, p99, max, count, counts), for a
/// screen too small for its panes.
pub fn brief(
    theme: &Theme,
    r: &crate::labs::redis::snapshot::RedisSnapshot,
) -> Vec<Vec<Cell<'static>>> {
    let txt = |v: String| right(Span::styled(v, theme.fg(theme.text)));
    let lat = |s: &crate::metrics::Summary| brief_latency(theme, s);
    let note = |text: String, bad: bool| brief_note(theme, text, bad);
    let mut rows: Vec<Vec<Cell<'static>>> = Vec::new();
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
    rows
}

/// Rows the tab needs: three panes (one per method) with a row of sparkline each, and the info
/// lines.
pub const MIN_ROWS: u16 = 3 * (2 + 1 + 2) + 2;

/// What the tab's figures rest on: what each method's lag includes.
pub fn status() -> String {
    " Redis lag: 1 includes connecting (the seed's way) · 2 from the SET's reply · 3 to the replica's offset ACK (WAIT)".to_string()
}
