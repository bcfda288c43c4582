//! The S3 tab: PUT and GET of each storage class, their sparklines and percentiles.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};

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
    s3: &crate::labs::s3::snapshot::S3Snapshot,
    area: Rect,
) {
    use crate::services::s3::Class;
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
        // Why its last request failed (the class measured now), on the pane's bottom edge.
        let last = s3
            .ops
            .iter()
            .filter(|o| o.op == op && o.class == s3.class && o.errors > 0)
            .find_map(|o| o.last_error.as_ref());
        let block = match last {
            Some(line) => block.title_bottom(Span::styled(
                format!(" last error: {line} "),
                theme.strong(theme.error),
            )),
            None => block,
        };
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
        let marks = super::fault_marks(view, crate::faults::Service::S3, app.window());
        draw_sparkline(f, theme, app, &per_sec, "p99/s", &marks, spark_area);
        // The total's max, the first byte's p99, the request count and SlowDown go first when the
        // pane is narrow.
        let columns = [
            Column::left("class", 17, 0),
            Column::right("requests", 8, 3),
            Column::right("first byte p50", 14, 0),
            Column::right("p99", 10, 4),
            Column::right("total p50", 10, 0),
            Column::right("p99", 10, 0),
            Column::right("max", 10, 5),
            Column::right("MB/s", 7, 0),
            Column::right("SlowDown", 8, 2),
            Column::right("errors", 6, 0),
        ];
        let fitted = Fitted::new(&columns, None, table_area.width);
        let head = fitted.header(&columns, theme.strong(theme.table_header));
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
                        .chain((1..columns.len()).map(|_| txt("-".into())))
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
                fitted.row(cells)
            })
            .collect();
        f.render_widget(
            Table::new(rows, fitted.constraints())
                .header(head)
                .column_spacing(1),
            table_area,
        );
    }
    super::cost_edge(f, theme, app, view, crate::labs::LabKind::S3, get);
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

/// The lab's rows of the overview's brief table (lab, what, p50, p99, max, count, counts), for a
/// screen too small for its panes.
pub fn brief(theme: &Theme, s3: &crate::labs::s3::snapshot::S3Snapshot) -> Vec<Vec<Cell<'static>>> {
    let txt = |v: String| right(Span::styled(v, theme.fg(theme.text)));
    let lat = |s: &crate::metrics::Summary| brief_latency(theme, s);
    let note = |text: String, bad: bool| brief_note(theme, text, bad);
    let mut rows: Vec<Vec<Cell<'static>>> = Vec::new();
    for o in &s3.ops {
        let color = if o.class == crate::services::s3::Class::ExpressOneZone {
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
    rows
}

/// Rows the tab needs: two panes (PUT, GET) with a row of sparkline each, and the info lines.
pub const MIN_ROWS: u16 = 2 * (2 + 1 + 3) + 2;

/// What the tab's figures rest on: the S3 SDK's retry settings.
pub fn status() -> String {
    format!(
        " S3 SDK: {}",
        crate::aws::RetrySettings::default().describe()
    )
}
