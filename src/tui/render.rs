//! The one renderer of a lab's `LabView` (`crate::lab_kit::view`): the TUI, its SVG screenshots and the replay
//! draw every lab's tab through it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Table, Wrap};

use super::app::App;
use super::moment::Moment;
use super::widgets::{Fitted, draw_sparkline, right};
use crate::lab_kit::view;
use crate::labs::LabKind;
use crate::theme::Theme;

/// The colour a `LabView`'s theme item names (ordinary text's, for an item the theme lacks: a test
/// checks every item the labs use is a theme's).
fn color(theme: &Theme, item: &str) -> Color {
    theme.item(item).unwrap_or(theme.text)
}

fn style(theme: &Theme, s: view::Style) -> ratatui::style::Style {
    let c = color(theme, s.item);
    let style = if s.strong {
        theme.strong(c)
    } else {
        theme.fg(c)
    };
    if s.crossed {
        style.add_modifier(ratatui::style::Modifier::CROSSED_OUT)
    } else {
        style
    }
}

fn span(theme: &Theme, t: &view::Text) -> Span<'static> {
    Span::styled(t.text.clone(), style(theme, t.style))
}

fn line(theme: &Theme, l: &view::Line) -> Line<'static> {
    Line::from(l.iter().map(|t| span(theme, t)).collect::<Vec<_>>())
}

/// `spark`: the sparkline rows each `Rows` block (and its `Spark` part) gets.
fn constraint(size: view::Size, spark: u16) -> Constraint {
    match size {
        view::Size::Fill(n) => Constraint::Fill(n),
        view::Size::Length(n) => Constraint::Length(n),
        view::Size::Min(n) => Constraint::Min(n),
        view::Size::Rows { fixed } => Constraint::Length(fixed + spark),
        view::Size::Spark => Constraint::Length(spark),
    }
}

/// Rows of a block it gives up first when the screen is short: a pane's lines at the foot
/// (`Lines` sized `Min(0)`: what matters for that consumer type, under its table).
fn optional_rows(block: &view::Block) -> u16 {
    match block {
        view::Block::Pane(p) => p
            .parts
            .iter()
            .map(|(size, part)| match (size, part) {
                (view::Size::Min(0), view::Part::Lines(lines)) => lines.len() as u16,
                _ => 0,
            })
            .sum(),
        _ => 0,
    }
}

/// How `Rows` blocks share `height`, block by block: the rows it is given beyond its fixed
/// ones for its sparkline (what the fixed rows leave, shared evenly, 1 to 8 each; when that is
/// less than a row each, a row to each of the first blocks it reaches), and the rows it gives up
/// (its optional rows, from the last block up, until the rest fits). A table's rows come first:
/// every consumer keeps its row, and the sparklines and the lines under the tables go before
/// it. Empty: it has no such block.
fn rows_share(lab_view: &view::LabView, height: u16) -> Vec<(u16, u16)> {
    let other: u16 = lab_view
        .blocks
        .iter()
        .map(|(size, _)| match size {
            view::Size::Length(n) => *n,
            _ => 0,
        })
        .sum();
    let blocks: Vec<(u16, u16)> = lab_view
        .blocks
        .iter()
        .filter_map(|(size, block)| match size {
            view::Size::Rows { fixed } => Some((*fixed, optional_rows(block).min(*fixed))),
            _ => None,
        })
        .collect();
    if blocks.is_empty() {
        return Vec::new();
    }
    let n = blocks.len() as u16;
    let avail = height.saturating_sub(other);
    let full: u16 = blocks.iter().map(|(fixed, _)| fixed).sum();
    if full + n <= avail {
        let each = ((avail - full) / n).clamp(1, 8);
        return vec![(each, 0); blocks.len()];
    }
    if full <= avail {
        let spare = avail - full;
        return (0..n).map(|i| (u16::from(i < spare), 0)).collect();
    }
    let mut over = full - avail;
    let mut share = vec![(0u16, 0u16); blocks.len()];
    for (i, (_, optional)) in blocks.iter().enumerate().rev() {
        let give = (*optional).min(over);
        share[i].1 = give;
        over -= give;
    }
    share
}

/// Draws `lab`'s `LabView` in `area`.
pub fn draw_lab(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    moment: &Moment,
    lab: LabKind,
    lab_view: &view::LabView,
    area: Rect,
) {
    let share = rows_share(lab_view, area.height);
    let mut rows = share.iter();
    // Each block's sparkline rows (a `Rows` block's share; none for another block).
    let sparks: Vec<u16> = lab_view
        .blocks
        .iter()
        .map(|(size, _)| match size {
            view::Size::Rows { .. } => rows.next().map_or(0, |(spark, _)| *spark),
            _ => 0,
        })
        .collect();
    let mut rows = share.iter();
    let mut constraints: Vec<Constraint> = lab_view
        .blocks
        .iter()
        .map(|(size, _)| match size {
            view::Size::Rows { fixed } => {
                let (spark, given_up) = rows.next().copied().unwrap_or_default();
                Constraint::Length(fixed - given_up + spark)
            }
            _ => constraint(*size, 0),
        })
        .collect();
    if !share.is_empty() {
        // What the blocks leave stays empty below them.
        constraints.push(Constraint::Min(0));
    }
    let rects = Layout::vertical(constraints).split(area);
    for (((_, block), rect), spark) in lab_view.blocks.iter().zip(rects.iter()).zip(sparks) {
        match block {
            view::Block::Pane(p) => draw_pane(f, theme, app, moment, p, spark, *rect),
            view::Block::Lines(lines) => f.render_widget(
                Paragraph::new(lines.iter().map(|l| line(theme, l)).collect::<Vec<_>>()),
                *rect,
            ),
            view::Block::Message { title, lines } => f.render_widget(
                Paragraph::new(lines.iter().map(|l| line(theme, l)).collect::<Vec<_>>())
                    .block(Block::bordered().title(span(theme, title)))
                    .wrap(Wrap { trim: false }),
                *rect,
            ),
        }
    }
    if let Some(rect) = lab_view.cost_on.and_then(|i| rects.get(i)) {
        super::panes::cost_edge(f, theme, app, moment, lab, *rect);
    }
}

fn draw_pane(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    moment: &Moment,
    p: &view::Pane,
    spark: u16,
    area: Rect,
) {
    let title = match &p.narrow {
        Some((below, narrow)) if area.width < *below => narrow,
        _ => &p.title,
    };
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.fg(theme.border))
        .title(line(theme, title));
    if let Some(bottom) = &p.bottom {
        block = block.title_bottom(span(theme, bottom));
    }
    let inner = block.inner(area);
    f.render_widget(block, area);
    if inner.height < p.min_inner {
        return;
    }
    let spark = spark.min(inner.height);
    let rects =
        Layout::vertical(p.parts.iter().map(|(size, _)| constraint(*size, spark))).split(inner);
    for ((_, part), rect) in p.parts.iter().zip(rects.iter()) {
        match part {
            view::Part::Spark(s) => draw_spark(f, theme, app, moment, s, *rect),
            view::Part::Table(t) => draw_table(f, theme, t, *rect),
            view::Part::Lines(lines) => f.render_widget(
                Paragraph::new(
                    lines
                        .iter()
                        .map(|l| line(theme, &cut(l, rect.width)))
                        .collect::<Vec<_>>(),
                ),
                *rect,
            ),
        }
    }
}

/// A line cut to `width` cells, ending in `…` where it was cut: a pane's border never cuts a
/// word without saying so.
fn cut(l: &view::Line, width: u16) -> view::Line {
    let width = usize::from(width);
    let total: usize = l.iter().map(|t| t.text.chars().count()).sum();
    if total <= width || width == 0 {
        return l.clone();
    }
    let mut left = width - 1;
    let mut out = Vec::new();
    for t in l {
        if left == 0 {
            break;
        }
        let n = t.text.chars().count();
        if n <= left {
            out.push(t.clone());
            left -= n;
        } else {
            out.push(view::Text::new(
                t.text.chars().take(left).collect::<String>(),
                t.style,
            ));
            left = 0;
        }
    }
    let style = l.last().map_or(view::Style::plain("text"), |t| t.style);
    out.push(view::Text::new("…", style));
    out
}

/// A sparkline over the app's window: each second keeps the highest value of its series, in
/// that series' colour.
fn draw_spark(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    moment: &Moment,
    s: &view::Spark,
    area: Rect,
) {
    let window = app.window() as usize;
    let mut per_sec = vec![(0, color(theme, s.item)); window];
    for series in &s.series {
        let colour = color(theme, series.item);
        let values = &series.values[series.values.len().saturating_sub(window)..];
        let offset = window - values.len();
        for (slot, v) in per_sec[offset..].iter_mut().zip(values) {
            if let Some(v) = v
                && *v >= slot.0
            {
                *slot = (*v, colour);
            }
        }
    }
    let marks = s.marks.map_or_else(Vec::new, |service| {
        super::panes::fault_marks(moment, Some(service), app.window())
    });
    draw_sparkline(f, theme, app, &per_sec, s.metric, &marks, area);
}

/// A row's cells, each lined up as its column.
pub fn cells(theme: &Theme, row: &[view::Text], columns: &[view::Column]) -> Vec<Cell<'static>> {
    row.iter()
        .zip(columns)
        .map(|(c, col)| match col.align {
            view::Align::Left => Cell::from(span(theme, c)),
            view::Align::Right => right(span(theme, c)),
        })
        .collect()
}

fn draw_table(f: &mut Frame, theme: &Theme, t: &view::Table, area: Rect) {
    let mut fitted = Fitted::new(&t.columns, t.shrink, area.width);
    if t.fill_last {
        fitted = fitted.fill_last();
    }
    let head = fitted.header(&t.columns, theme.strong(theme.table_header));
    let rows: Vec<ratatui::widgets::Row> = t
        .rows
        .iter()
        .map(|row| fitted.row(cells(theme, row, &t.columns)))
        .collect();
    f.render_widget(
        Table::new(rows, fitted.constraints())
            .header(head)
            .column_spacing(1),
        area,
    );
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Every theme item a `LabView` names, with the texts that name it.
    fn items(lab_view: &view::LabView) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mut texts = |l: &[view::Text]| {
            for t in l {
                out.push((t.style.item, t.text.clone()));
            }
        };
        for (_, block) in &lab_view.blocks {
            match block {
                view::Block::Pane(p) => {
                    texts(&p.title);
                    if let Some((_, narrow)) = &p.narrow {
                        texts(narrow);
                    }
                    texts(p.bottom.as_slice());
                    for (_, part) in &p.parts {
                        match part {
                            view::Part::Spark(s) => {
                                texts(&[view::Text::new("spark", view::Style::plain(s.item))]);
                                for series in &s.series {
                                    texts(&[view::Text::new(
                                        "series",
                                        view::Style::plain(series.item),
                                    )]);
                                }
                            }
                            view::Part::Table(t) => t.rows.iter().for_each(|r| texts(r)),
                            view::Part::Lines(lines) => lines.iter().for_each(|l| texts(l)),
                        }
                    }
                }
                view::Block::Lines(lines) => lines.iter().for_each(|l| texts(l)),
                view::Block::Message { title, lines } => {
                    texts(std::slice::from_ref(title));
                    lines.iter().for_each(|l| texts(l));
                }
            }
        }
        out
    }

    /// That a `LabView` names some theme items, and only those the dark theme has (every theme
    /// has the same items): for a lab's own tests of the `LabView`s it draws in other states.
    pub(crate) fn assert_every_item_is_a_theme_item(lab_view: &view::LabView) {
        let theme = Theme::dark();
        let named = items(lab_view);
        assert!(!named.is_empty());
        for (item, text) in named {
            assert!(
                theme.item(item).is_some(),
                "{text:?} is coloured by {item:?}, which no theme has"
            );
        }
    }

    #[test]
    fn every_colour_a_lab_model_names_is_a_theme_item() {
        let labs = LabKind::ALL.map(crate::tui::fixture::lab_moment);
        let lab_views: Vec<view::LabView> = labs
            .iter()
            .flat_map(|v| {
                LabKind::ALL
                    .into_iter()
                    .filter_map(|l| crate::tui::panes::lab_view(l, v))
            })
            .collect();
        assert_eq!(lab_views.len(), LabKind::ALL.len(), "every lab's fixture");
        for lab_view in &lab_views {
            assert_every_item_is_a_theme_item(lab_view);
        }
    }
}
