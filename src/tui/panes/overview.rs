//! The overview: every lab the scenario runs on one screen, or one brief table when the
//! terminal is too small for their panes.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Row, Table};

use crate::labs::LabKind;
use crate::theme::Theme;
use crate::tui::app::App;
use crate::tui::moment::Moment;
use crate::tui::widgets::*;

/// Every lab on one screen: the lead lab (the one whose panes are tallest) on the left and the
/// others above one another on the right when the terminal is wide enough (those the right column
/// has no room for go under the lead lab, last first, while the left has room), otherwise all one
/// above the other; each lab's share of its column is its weight.
pub fn draw(f: &mut Frame, theme: &Theme, app: &App, moment: &Moment, area: Rect) {
    let snap = &moment.snapshot;
    let labs = snap.labs();
    let lead = labs.iter().copied().find(|l| l.overview_lead());
    let side: Vec<LabKind> = labs.iter().copied().filter(|l| Some(*l) != lead).collect();
    let column = |f: &mut Frame, labs: &[LabKind], r: Rect| {
        let rects =
            Layout::vertical(labs.iter().map(|l| Constraint::Fill(l.overview_weight()))).split(r);
        for (lab, rect) in labs.iter().zip(rects.iter()) {
            super::draw(*lab, f, theme, app, moment, *rect);
        }
    };
    // Rows each lab needs to show its panes with at least one row of sparkline.
    let rows = |labs: &[LabKind]| -> u16 { labs.iter().map(|l| super::min_rows(*l, snap)).sum() };
    let lead_rows = lead.map_or(0, |l| super::min_rows(l, snap));
    // Side by side: the right column's labs, and those moved under the lead lab.
    let mut right = side.clone();
    let mut under: Vec<LabKind> = Vec::new();
    while lead.is_some() && rows(&right) > area.height && right.len() > 1 {
        let last = right[right.len() - 1];
        if lead_rows + rows(&under) + super::min_rows(last, snap) > area.height {
            break;
        }
        right.pop();
        under.insert(0, last);
    }
    let side_by_side = area.width >= OVERVIEW_SIDE_BY_SIDE
        && area.height >= (lead_rows + rows(&under)).max(rows(&right));
    let stacked = area.height >= lead_rows + rows(&side);
    if !side_by_side && !stacked {
        draw_overview_table(f, theme, moment, area);
        return;
    }
    match lead {
        Some(l) if side_by_side => {
            let right_w = (area.width * 2 / 5).max(80);
            let [left, right_area] =
                Layout::horizontal([Constraint::Fill(1), Constraint::Length(right_w)]).areas(area);
            if under.is_empty() {
                super::draw(l, f, theme, app, moment, left);
            } else {
                let [top, rest] = Layout::vertical([
                    Constraint::Min(lead_rows),
                    Constraint::Length(rows(&under)),
                ])
                .areas(left);
                super::draw(l, f, theme, app, moment, top);
                column(f, &under, rest);
            }
            column(f, &right, right_area);
        }
        Some(l) => {
            let others = side.len() as u16;
            let [top, rest] = Layout::vertical([
                Constraint::Fill(l.overview_weight()),
                Constraint::Fill(others * 3),
            ])
            .areas(area);
            super::draw(l, f, theme, app, moment, top);
            column(f, &side, rest);
        }
        None => column(f, &side, area),
    }
}

/// The overview on a screen too small for every lab's panes: one table, a row per consumer, S3
/// operation and Redis method, with the figures that matter most.
fn draw_overview_table(f: &mut Frame, theme: &Theme, moment: &Moment, area: Rect) {
    let snap = &moment.snapshot;
    let labs = snap.labs();
    let rows: Vec<Vec<crate::lab_kit::view::Text>> =
        labs.iter().flat_map(|l| super::brief(*l, snap)).collect();
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.fg(theme.border))
        .title(Span::styled(
            format!(
                " Every lab, in brief (a larger terminal shows their panes; 1-{} show one lab) ",
                crate::labs::LabKind::ALL.len()
            ),
            theme.strong(theme.title),
        ));
    // Names as wide as the longest the scenario gave (the lead lab's: consumer names); when
    // narrow, max and the count go first, then the names narrow.
    let lead = labs.iter().copied().find(|l| l.overview_lead());
    let longest = lead
        .map_or_else(Vec::new, |l| super::brief(l, snap))
        .iter()
        .filter_map(|row| row.get(1).map(|t| t.text.chars().count()))
        .chain([20])
        .max()
        .unwrap_or(20)
        .min(40) as u16;
    let columns = [
        Column::left("lab", 7, 0),
        Column::left("what", longest, 0),
        Column::right("p50", 11, 0),
        Column::right("p99", 11, 0),
        Column::right("max", 11, 3),
        Column::right("count", 7, 2),
        Column::left("counts", 24, 0),
    ];
    let fitted = Fitted::new(
        &columns,
        Some(Shrink {
            column: 1,
            min: 14,
            rank: 1,
        }),
        block.inner(area).width,
    )
    .fill_last();
    let head = fitted.header(&columns, theme.strong(theme.table_header));
    let rows: Vec<Row> = rows
        .iter()
        .map(|cells| fitted.row(crate::tui::render::cells(theme, cells, &columns)))
        .collect();
    let widths = fitted.constraints();
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
