//! The overview: every lab the scenario runs on one screen, or one brief table when the
//! terminal is too small for their panes.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Cell, Row, Table};

use super::{kinesis, redis, s3};
use crate::labs::LabKind;
use crate::tui::app::App;
use crate::tui::theme::Theme;
use crate::tui::view::View;
use crate::tui::widgets::*;

/// Every lab on one screen: Kinesis on the left and S3 above Redis on the right when the terminal
/// is wide enough, otherwise one above the other.
pub fn draw(f: &mut Frame, theme: &Theme, app: &App, view: &View, area: Rect) {
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
            let model = crate::labs::s3::view::model(s3, &view.s3_sparks);
            crate::tui::render::draw_lab(f, theme, app, view, LabKind::S3, &model, rect);
        }
        if let Some(red) = &snap.redis
            && let Some(rect) = rects.next()
        {
            let model = crate::labs::redis::view::model(red, &view.redis_sparks);
            crate::tui::render::draw_lab(f, theme, app, view, LabKind::Redis, &model, rect);
        }
    };
    // Rows each lab needs to show its panes with at least one row of sparkline.
    let kinesis_rows = snap.kinesis.as_ref().map_or(0, kinesis::min_rows);
    let s3_rows = if snap.s3.is_some() { s3::MIN_ROWS } else { 0 };
    let redis_rows = if snap.redis.is_some() {
        redis::MIN_ROWS
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

fn draw_kinesis(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    view: &View,
    k: &crate::labs::kinesis::snapshot::KinesisSnapshot,
    area: Rect,
) {
    let model = crate::labs::kinesis::view::model(k, &view.sparks, &view.read_rate);
    crate::tui::render::draw_lab(f, theme, app, view, LabKind::Kinesis, &model, area);
}

/// The overview on a screen too small for every lab's panes: one table, a row per consumer, S3
/// operation and Redis method, with the figures that matter most.
fn draw_overview_table(f: &mut Frame, theme: &Theme, view: &View, area: Rect) {
    let snap = &view.snapshot;
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for lab in snap.labs() {
        match lab {
            LabKind::Kinesis => {
                if let Some(k) = &snap.kinesis {
                    rows.extend(kinesis::brief(theme, k));
                }
            }
            LabKind::S3 => {
                if let Some(s) = &snap.s3 {
                    rows.extend(s3::brief(theme, s));
                }
            }
            LabKind::Redis => {
                if let Some(r) = &snap.redis {
                    rows.extend(redis::brief(theme, r));
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
    let rows: Vec<Row> = rows.into_iter().map(|cells| fitted.row(cells)).collect();
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
