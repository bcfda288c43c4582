//! The Redis lab's brief rows for the overview's table; its tab is its model
//! (`labs/redis/view.rs`), drawn by `tui::render`.

use ratatui::text::Span;
use ratatui::widgets::Cell;

use crate::tui::theme::Theme;
use crate::tui::widgets::*;
use crate::units::thousands;

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
