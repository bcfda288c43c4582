//! The S3 lab's brief rows for the overview's table; its tab is its model
//! (`labs/s3/view.rs`), drawn by `tui::render`.

use ratatui::text::Span;
use ratatui::widgets::Cell;

use crate::tui::theme::Theme;
use crate::tui::widgets::*;
use crate::units::thousands;

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
