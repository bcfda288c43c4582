//! One module per lab's tab, and the overview that puts them together.

pub mod kinesis;
pub mod overview;
pub mod redis;
pub mod s3;
#[cfg(test)]
mod tests;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::app::App;
use super::theme::Theme;
use super::view::View;
use crate::labs::LabKind;
use crate::run::snapshot::Snapshot;

/// Draws one lab's tab in `area`, if the view has that lab.
pub fn draw(lab: LabKind, f: &mut Frame, theme: &Theme, app: &App, view: &View, area: Rect) {
    let snap = &view.snapshot;
    match lab {
        LabKind::Kinesis => {
            if let Some(k) = &snap.kinesis {
                let model = crate::labs::kinesis::view::model(k, &view.sparks, &view.read_rate);
                super::render::draw_lab(f, theme, app, view, lab, &model, area);
            }
        }
        LabKind::S3 => {
            if let Some(s) = &snap.s3 {
                let model = crate::labs::s3::view::model(s, &view.s3_sparks);
                super::render::draw_lab(f, theme, app, view, lab, &model, area);
            }
        }
        LabKind::Redis => {
            if let Some(r) = &snap.redis {
                let model = crate::labs::redis::view::model(r, &view.redis_sparks);
                super::render::draw_lab(f, theme, app, view, lab, &model, area);
            }
        }
    }
}

/// A lab's parts of the header: (text, style, drop rank: higher ranks go first when narrow).
pub fn header(lab: LabKind, snap: &Snapshot, style: Style) -> Vec<(String, Style, u8)> {
    match lab {
        LabKind::Kinesis => snap
            .kinesis
            .as_ref()
            .map_or_else(Vec::new, |k| kinesis::header(k, style)),
        LabKind::S3 | LabKind::Redis => Vec::new(),
    }
}

/// The status line when no message is shown: what the lab's figures rest on.
pub fn status(lab: LabKind, snap: &Snapshot) -> String {
    match lab {
        LabKind::Kinesis => snap
            .kinesis
            .as_ref()
            .map_or_else(String::new, kinesis::status),
        LabKind::S3 => match snap
            .s3
            .as_ref()
            .and_then(|s| s.express_unsupported.as_ref())
        {
            Some(why) => format!(" S3 Express One Zone {why}; measuring Standard"),
            None => s3::status(),
        },
        LabKind::Redis => redis::status(),
    }
}

/// The faults of `service` injected in the last `window` seconds, as seconds ago.
pub fn fault_marks(view: &View, service: crate::faults::Service, window: u64) -> Vec<u64> {
    let s = &view.snapshot;
    s.faults
        .events
        .iter()
        .rev()
        .filter(|e| e.kind.service() == service && e.failed.is_none())
        .map(|e| (s.elapsed_secs - e.at_secs).max(0.0) as u64)
        .take_while(|ago| *ago < window)
        .collect()
}

/// The lab's cost at list price on the bottom edge of `area`, right-aligned inside its corners:
/// figured each frame from the snapshot, so it follows every key that changes the configuration.
pub fn cost_edge(f: &mut Frame, theme: &Theme, app: &App, view: &View, lab: LabKind, area: Rect) {
    let snap = &view.snapshot;
    let Some(chosen) = crate::cost::Prices::choose(app.prices.as_ref(), &snap.backend.region)
    else {
        return;
    };
    let cost = crate::cost::of(snap, &chosen);
    let Some(lab_cost) = cost.lab(lab) else {
        return;
    };
    if area.height < 2 || area.width < 12 {
        return;
    }
    let stand_in = if chosen.note.is_some() {
        " (stand-in)"
    } else {
        ""
    };
    let full = format!(" {}{stand_in} ", lab_cost.line(&cost));
    let room = area.width.saturating_sub(4) as usize;
    let text = if full.chars().count() <= room || lab_cost.missing.is_some() {
        full
    } else {
        format!(
            " {}/h · {}/mo · {}{}{stand_in} ",
            crate::cost::usd(lab_cost.hourly()),
            crate::cost::usd(lab_cost.monthly()),
            cost.label(),
            if lab_cost.unverified() { "*" } else { "" }
        )
    };
    let text: String = text.chars().take(room).collect();
    let width = text.chars().count() as u16;
    let edge = Rect {
        x: area.right().saturating_sub(2 + width),
        y: area.bottom() - 1,
        width,
        height: 1,
    };
    f.render_widget(
        ratatui::widgets::Paragraph::new(ratatui::text::Span::styled(text, theme.fg(theme.dim))),
        edge,
    );
}
