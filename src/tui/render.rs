//! The one renderer of a lab's model (`crate::view`): the TUI, its SVG screenshots and the replay
//! draw every lab's tab through it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Table, Wrap};

use super::app::App;
use super::theme::Theme;
use super::view::View;
use super::widgets::{Fitted, draw_sparkline, right};
use crate::labs::LabKind;
use crate::view;

/// The colour a model's theme item names (ordinary text's, for an item the theme lacks: a test
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

/// The sparkline rows of each `Rows` block in `height`: what their fixed rows leave, shared
/// evenly, 1 to 8 each (None: the model has no such block).
fn spark_share(model: &view::LabView, height: u16) -> Option<u16> {
    let fixed: Vec<u16> = model
        .blocks
        .iter()
        .filter_map(|(size, _)| match size {
            view::Size::Rows { fixed } => Some(*fixed),
            _ => None,
        })
        .collect();
    if fixed.is_empty() {
        return None;
    }
    let spare = height.saturating_sub(fixed.iter().sum());
    Some((spare / fixed.len() as u16).clamp(1, 8))
}

/// Draws `lab`'s model in `area`.
pub fn draw_lab(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    view: &View,
    lab: LabKind,
    model: &view::LabView,
    area: Rect,
) {
    let share = spark_share(model, area.height);
    let spark = share.unwrap_or(0);
    let mut constraints: Vec<Constraint> = model
        .blocks
        .iter()
        .map(|(size, _)| constraint(*size, spark))
        .collect();
    if share.is_some() {
        // What the blocks leave stays empty below them.
        constraints.push(Constraint::Min(0));
    }
    let rects = Layout::vertical(constraints).split(area);
    for ((_, block), rect) in model.blocks.iter().zip(rects.iter()) {
        match block {
            view::Block::Pane(p) => draw_pane(f, theme, app, view, p, spark, *rect),
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
    if let Some(rect) = model.cost_on.and_then(|i| rects.get(i)) {
        super::panes::cost_edge(f, theme, app, view, lab, *rect);
    }
}

fn draw_pane(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    view: &View,
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
            view::Part::Spark(s) => draw_spark(f, theme, app, view, s, *rect),
            view::Part::Table(t) => draw_table(f, theme, t, *rect),
            view::Part::Lines(lines) => f.render_widget(
                Paragraph::new(lines.iter().map(|l| line(theme, l)).collect::<Vec<_>>()),
                *rect,
            ),
        }
    }
}

/// A sparkline over the app's window: each second keeps the highest value of its series, in
/// that series' colour.
fn draw_spark(f: &mut Frame, theme: &Theme, app: &App, view: &View, s: &view::Spark, area: Rect) {
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
        super::panes::fault_marks(view, Some(service), app.window())
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

    /// Every theme item a model names, with the texts that name it.
    fn items(model: &view::LabView) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mut texts = |l: &[view::Text]| {
            for t in l {
                out.push((t.style.item, t.text.clone()));
            }
        };
        for (_, block) in &model.blocks {
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

    /// That a model names some theme items, and only those the dark theme has (every theme
    /// has the same items): for a lab's own tests of the models it draws in other states.
    pub(crate) fn assert_every_item_is_a_theme_item(model: &view::LabView) {
        let theme = Theme::dark();
        let named = items(model);
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
        let labs = LabKind::ALL.map(crate::tui::fixture::lab_view);
        let models: Vec<view::LabView> = labs
            .iter()
            .flat_map(|v| {
                LabKind::ALL
                    .into_iter()
                    .filter_map(|l| crate::tui::panes::model(l, v))
            })
            .collect();
        assert_eq!(models.len(), LabKind::ALL.len(), "every lab's fixture");
        for model in &models {
            assert_every_item_is_a_theme_item(model);
        }
    }
}
