//! Pieces every pane draws with: sparklines of per-second values, and tables whose columns
//! fit the screen.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Sparkline, SparklineBar};

use crate::theme::Theme;
use crate::tui::app::{App, window_label};
use latlab_core::units::short_ms;

pub use crate::lab_kit::view::{Align, Column, Shrink};

/// The columns of a table that fit a width, and their widths.
pub struct Fitted {
    show: Vec<bool>,
    widths: Vec<u16>,
    /// The last column takes whatever width is left.
    fill_last: bool,
}

impl Fitted {
    pub fn new(columns: &[Column], shrink: Option<Shrink>, avail: u16) -> Fitted {
        let widths: Vec<u16> = columns.iter().map(|c| c.width).collect();
        let drop: Vec<u8> = columns.iter().map(|c| c.drop).collect();
        let (show, widths) = fit(
            &widths,
            &drop,
            shrink.map(|s| (s.column, s.min, s.rank)),
            avail,
        );
        Fitted {
            show,
            widths,
            fill_last: false,
        }
    }

    /// The last column (when shown) takes the width left over.
    pub fn fill_last(mut self) -> Fitted {
        self.fill_last = true;
        self
    }

    /// The header row: each head aligned as its column.
    pub fn header(&self, columns: &[Column], style: Style) -> Row<'static> {
        Row::new(
            self.cells(
                columns
                    .iter()
                    .map(|c| match c.align {
                        Align::Left => Cell::from(c.head),
                        Align::Right => right(Span::raw(c.head)),
                    })
                    .collect(),
            ),
        )
        .style(style)
    }

    /// A row of every column's cell, keeping those shown.
    pub fn row<'a>(&self, cells: Vec<Cell<'a>>) -> Row<'a> {
        Row::new(self.cells(cells))
    }

    fn cells<'a>(&self, cells: Vec<Cell<'a>>) -> Vec<Cell<'a>> {
        shown(cells, &self.show)
    }

    /// The shown columns' widths.
    pub fn constraints(&self) -> Vec<Constraint> {
        let last = self.widths.len().saturating_sub(1);
        shown(
            self.widths
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    if self.fill_last && i == last {
                        Constraint::Fill(1)
                    } else {
                        Constraint::Length(*w)
                    }
                })
                .collect(),
            &self.show,
        )
    }
}

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

/// A sparkline of per-second values, each second in its own colour, with its labels: the highest
/// value shown, what is plotted (`p99/s`) and the time window. `marks` are the faults injected
/// in the window (seconds ago): a `▼` over the second each fired in.
pub fn draw_sparkline(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    per_sec: &[(u64, Color)],
    metric: &str,
    marks: &[u64],
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
    let window = per_sec.len().max(1) as u64;
    let cols = u64::from(chart.width);
    for ago in marks.iter().filter(|a| **a < window) {
        // The column of the second `ago` seconds before the newest (the rightmost).
        let col = ((window - 1 - ago) * cols / window).min(cols.saturating_sub(1));
        let cell = Rect {
            x: chart.x + col as u16,
            y: chart.y,
            width: 1,
            height: 1,
        };
        f.render_widget(
            Paragraph::new(Span::styled("▼", theme.strong(theme.error))),
            cell,
        );
    }
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
pub fn columns<T: Copy>(values: &[(u64, T)], cols: usize) -> Vec<(u64, T)> {
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

/// A right-aligned cell, for figures.
pub fn right(span: Span<'static>) -> Cell<'static> {
    Cell::from(Line::from(span).alignment(ratatui::layout::Alignment::Right))
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
    }
}
