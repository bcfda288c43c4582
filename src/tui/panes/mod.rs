//! One module per lab's tab, and the overview that puts them together.

pub mod kinesis;
pub mod overview;
pub mod redis;
pub mod s3;

use ratatui::Frame;
use ratatui::layout::Rect;

use super::app::App;
use super::theme::Theme;
use super::view::View;
use crate::labs::LabKind;

/// Draws one lab's tab in `area`, if the view has that lab.
pub fn draw(lab: LabKind, f: &mut Frame, theme: &Theme, app: &App, view: &View, area: Rect) {
    let snap = &view.snapshot;
    match lab {
        LabKind::Kinesis => {
            if let Some(k) = &snap.kinesis {
                kinesis::draw(f, theme, app, view, k, area);
            }
        }
        LabKind::S3 => {
            if let Some(s) = &snap.s3 {
                s3::draw(f, theme, app, view, s, area);
            }
        }
        LabKind::Redis => {
            if let Some(r) = &snap.redis {
                redis::draw(f, theme, app, view, r, area);
            }
        }
    }
}
