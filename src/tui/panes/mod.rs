//! What the screens take from each lab, generated from the registry: its tab's `LabView` (drawn by
//! `tui::render`), its header parts, its status line, its brief rows and the rows its tab
//! needs; the overview that puts the labs together; and the cost on a pane's edge.

pub mod overview;

use ratatui::Frame;
use ratatui::layout::Rect;

use super::app::App;
use super::moment::Moment;
use crate::lab_kit::view::{HeaderPart, LabView, Text};
use crate::labs::LabKind;
use crate::snapshot::Snapshot;
use crate::theme::Theme;

macro_rules! screens {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        /// A lab's `LabView`, if the moment has that lab.
        pub fn lab_view(lab: LabKind, moment: &Moment) -> Option<LabView> {
            match lab {
                $(LabKind::$kind => moment.snapshot.$module.as_ref().map(|s| {
                    <crate::labs::$module::$ty as crate::labs::Shown>::view(s, moment.history.$module.as_ref())
                }),)*
            }
        }

        /// A lab's parts of the header.
        pub fn header(lab: LabKind, snap: &Snapshot) -> Vec<HeaderPart> {
            match lab {
                $(LabKind::$kind => snap
                    .$module
                    .as_ref()
                    .map_or_else(Vec::new, <crate::labs::$module::$ty as crate::labs::Shown>::header),)*
            }
        }

        /// The status line when no message is shown: what the lab's figures rest on.
        pub fn status(lab: LabKind, snap: &Snapshot) -> String {
            match lab {
                $(LabKind::$kind => snap
                    .$module
                    .as_ref()
                    .map_or_else(String::new, <crate::labs::$module::$ty as crate::labs::Shown>::status),)*
            }
        }

        /// A lab's rows of the overview's brief table.
        pub fn brief(lab: LabKind, snap: &Snapshot) -> Vec<Vec<Text>> {
            match lab {
                $(LabKind::$kind => snap
                    .$module
                    .as_ref()
                    .map_or_else(Vec::new, <crate::labs::$module::$ty as crate::labs::Shown>::brief),)*
            }
        }

        /// Rows a lab's tab needs (0: the moment does not have it).
        pub fn min_rows(lab: LabKind, snap: &Snapshot) -> u16 {
            match lab {
                $(LabKind::$kind => snap
                    .$module
                    .as_ref()
                    .map_or(0, <crate::labs::$module::$ty as crate::labs::Shown>::min_rows),)*
            }
        }
    };
}
crate::labs::for_each_lab!(screens);

/// Draws one lab's tab in `area`, if the moment has that lab.
pub fn draw(lab: LabKind, f: &mut Frame, theme: &Theme, app: &App, moment: &Moment, area: Rect) {
    if let Some(lab_view) = lab_view(lab, moment) {
        super::render::draw_lab(f, theme, app, moment, lab, &lab_view, area);
    }
}

/// The faults of `service` injected in the last `window` seconds, as seconds ago (none for a lab
/// of no service latlab knows).
pub fn fault_marks(
    moment: &Moment,
    service: Option<latlab_core::faults::Service>,
    window: u64,
) -> Vec<u64> {
    let Some(service) = service else {
        return Vec::new();
    };
    let s = &moment.snapshot;
    s.faults
        .events
        .iter()
        .rev()
        .filter(|e| e.kind.service() == service && e.failed.is_none())
        .map(|e| (s.elapsed_secs - e.at_secs).max(0.0) as u64)
        .take_while(|ago| *ago < window)
        .collect()
}

/// A lab's cost at list price as its pane's edge says it, in full and in brief (for a narrow
/// pane): figured from the snapshot, so it follows every key that changes the configuration.
/// None when the run's region has no prices or the run lacks the lab.
pub fn cost_line(
    prices: Option<&std::sync::Arc<crate::lab_kit::cost::Prices>>,
    snap: &Snapshot,
    lab: LabKind,
) -> Option<(String, String)> {
    let chosen = crate::lab_kit::cost::Prices::choose(prices, &snap.backend.region)?;
    let cost = snap.cost(&chosen);
    let lab_cost = cost.lab(lab.name())?;
    let stand_in = if chosen.note.is_some() {
        " (stand-in)"
    } else {
        ""
    };
    let full = format!("{}{stand_in}", lab_cost.line(&cost));
    let brief = if lab_cost.missing.is_some() {
        full.clone()
    } else {
        format!(
            "{}/h · {}/mo · {}{}{stand_in}",
            crate::lab_kit::cost::usd(lab_cost.hourly()),
            crate::lab_kit::cost::usd(lab_cost.monthly()),
            cost.label(),
            if lab_cost.unverified() { "*" } else { "" }
        )
    };
    Some((full, brief))
}

/// The lab's cost at list price on the bottom edge of `area`, right-aligned inside its corners.
pub fn cost_edge(
    f: &mut Frame,
    theme: &Theme,
    app: &App,
    moment: &Moment,
    lab: LabKind,
    area: Rect,
) {
    let Some((full, brief)) = cost_line(app.prices.as_ref(), &moment.snapshot, lab) else {
        return;
    };
    if area.height < 2 || area.width < 12 {
        return;
    }
    let full = format!(" {full} ");
    let room = area.width.saturating_sub(4) as usize;
    let text = if full.chars().count() <= room {
        full
    } else {
        format!(" {brief} ")
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
