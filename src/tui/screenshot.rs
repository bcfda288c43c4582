//! Screenshots: the lab run headless for a while, drawn into an in-memory terminal of the asked
//! size, and written as SVG in the theme's colours: the same pixels a user would see, without a
//! terminal.

use std::fmt::Write;
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

use super::app::App;
use super::moment::Moment;
use super::ui;
use crate::run::{Run, TargetOptions};
use crate::scenario::Scenario;
use crate::theme::{Theme, rgb};

/// Cell size in pixels at a 14 px monospace font.
const CELL_W: f64 = 8.4;
const CELL_H: f64 = 18.0;

/// Parses `COLSxROWS`, e.g. `120x40`.
pub fn parse_size(text: &str) -> Result<(u16, u16), String> {
    let bad = || {
        format!(
            "'{text}' is not a size: write COLSxROWS, e.g. 120x40 (at least {}x{})",
            crate::lab_kit::view::MIN_SIZE.0,
            crate::lab_kit::view::MIN_SIZE.1
        )
    };
    let (c, r) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let (c, r): (u16, u16) = (
        c.trim().parse().map_err(|_| bad())?,
        r.trim().parse().map_err(|_| bad())?,
    );
    if c < crate::lab_kit::view::MIN_SIZE.0
        || r < crate::lab_kit::view::MIN_SIZE.1
        || c > 500
        || r > 200
    {
        return Err(bad());
    }
    Ok((c, r))
}

/// Draws a moment into a buffer of the given size.
pub fn render(app: &App, moment: &Moment, size: (u16, u16)) -> Buffer {
    let mut terminal =
        Terminal::new(TestBackend::new(size.0, size.1)).expect("an in-memory terminal");
    terminal
        .draw(|f| ui::draw(f, app, moment))
        .expect("drawing into memory cannot fail");
    terminal.backend().buffer().clone()
}

/// Keys for `--press`, in order.
#[derive(Clone, Debug, Default)]
pub struct Keys(pub Vec<char>);

/// Checks `--press`: every key one the TUI answers, and not one that quits.
pub fn parse_press(text: &str) -> Result<Keys, String> {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| {
            let pressable = super::keys::pressable();
            if pressable.contains(c) {
                Ok(c)
            } else {
                Err(format!(
                    "'{c}' is not a key --press can give: use any of {} (see `?` in the TUI)",
                    pressable
                        .chars()
                        .map(String::from)
                        .collect::<Vec<_>>()
                        .join(" ")
                ))
            }
        })
        .collect::<Result<Vec<char>, String>>()
        .map(Keys)
}

/// Runs the lab for `after`, pressing `press` on the way (spread evenly, as a user would, each
/// applied to the running lab as the TUI applies it), then draws it.
pub async fn capture(
    scenario: Scenario,
    target: &TargetOptions,
    theme: Theme,
    after: Duration,
    size: (u16, u16),
    press: &[char],
) -> anyhow::Result<String> {
    use crossterm::event::{KeyCode, KeyEvent};
    let lab = Run::start(scenario, target).await?;
    lab.start_live();
    let mut app = App::new(theme.clone());
    let sync = |app: &mut App, moment: &Moment| app.sync_labs(&moment.snapshot.labs());
    let first = Moment::of(&lab, app.window());
    sync(&mut app, &first);
    let step = after / (press.len() as u32 + 1);
    for key in press {
        tokio::time::sleep(step).await;
        let action = app.key(KeyEvent::from(KeyCode::Char(*key)), || Moment::of(&lab, 60));
        if let super::app::Action::Lab(cmd) = action {
            match lab.apply(cmd).await {
                Ok(msg) => app.say(msg, false),
                Err(e) => app.say(format!("{e:#}"), true),
            }
        }
    }
    tokio::time::sleep(after.saturating_sub(step * press.len() as u32)).await;
    let moment = match &app.paused {
        Some(v) => v.clone(),
        None => Moment::of(&lab, app.window()),
    };
    sync(&mut app, &moment);
    let buffer = render(&app, &moment, size);
    let _ = lab.finish().await;
    Ok(svg(&buffer, &theme))
}

/// Eighths of the cell a lower block element fills (`▁` 1 ... `█` 8).
fn block_eighths(symbol: &str) -> Option<u8> {
    match symbol {
        "▁" => Some(1),
        "▂" => Some(2),
        "▃" => Some(3),
        "▄" => Some(4),
        "▅" => Some(5),
        "▆" => Some(6),
        "▇" => Some(7),
        "█" => Some(8),
        _ => None,
    }
}

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The buffer as an SVG document: a rectangle per run of background colour, a text span per run
/// of style.
pub fn svg(buffer: &Buffer, theme: &Theme) -> String {
    let area = buffer.area;
    let default_bg = if theme.monochrome {
        (255, 255, 255)
    } else {
        rgb(theme.background, (15, 20, 25))
    };
    let default_fg = if theme.monochrome {
        (0, 0, 0)
    } else {
        rgb(theme.text, (215, 218, 224))
    };
    let (w, h) = (area.width as f64 * CELL_W, area.height as f64 * CELL_H);
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.1} {h:.1}" font-family="'DejaVu Sans Mono','Menlo','Consolas',monospace" font-size="14">"#
    );
    let _ = writeln!(
        out,
        r#"<rect width="100%" height="100%" fill="{}"/>"#,
        hex(default_bg)
    );
    for y in 0..area.height {
        let cells: Vec<_> = (0..area.width).map(|x| &buffer[(x, y)]).collect();
        let resolve = |c: Color, fallback| {
            if theme.monochrome {
                fallback
            } else {
                rgb(c, fallback)
            }
        };
        // Backgrounds (reversed cells swap colours).
        let mut x = 0usize;
        while x < cells.len() {
            let c = cells[x];
            let reversed = c.modifier.contains(Modifier::REVERSED);
            let bg = if reversed {
                resolve(c.fg, default_fg)
            } else {
                resolve(c.bg, default_bg)
            };
            let start = x;
            while x < cells.len() {
                let d = cells[x];
                let r = d.modifier.contains(Modifier::REVERSED);
                let b = if r {
                    resolve(d.fg, default_fg)
                } else {
                    resolve(d.bg, default_bg)
                };
                if b != bg {
                    break;
                }
                x += 1;
            }
            if bg != default_bg {
                let _ = writeln!(
                    out,
                    r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{CELL_H}" fill="{}"/>"#,
                    start as f64 * CELL_W,
                    y as f64 * CELL_H,
                    (x - start) as f64 * CELL_W,
                    hex(bg)
                );
            }
        }
        // Block elements (sparklines, gauges) are drawn as rectangles: fonts leave gaps between
        // lines that a terminal does not.
        for (x, c) in cells.iter().enumerate() {
            if let Some(eighths) = block_eighths(c.symbol()) {
                let reversed = c.modifier.contains(Modifier::REVERSED);
                let fg = if reversed {
                    resolve(c.bg, default_bg)
                } else {
                    resolve(c.fg, default_fg)
                };
                let h = CELL_H * eighths as f64 / 8.0;
                let _ = writeln!(
                    out,
                    r#"<rect x="{:.1}" y="{:.2}" width="{CELL_W}" height="{h:.2}" fill="{}"/>"#,
                    x as f64 * CELL_W,
                    (y + 1) as f64 * CELL_H - h,
                    hex(fg)
                );
            }
        }
        // Text runs.
        let baseline = y as f64 * CELL_H + CELL_H * 0.75;
        let mut x = 0usize;
        while x < cells.len() {
            let c = cells[x];
            let key = |d: &ratatui::buffer::Cell| {
                (d.fg, d.bg, d.modifier, block_eighths(d.symbol()).is_some())
            };
            let start = x;
            let mut text = String::new();
            while x < cells.len() && key(cells[x]) == key(c) {
                text.push_str(cells[x].symbol());
                x += 1;
            }
            if block_eighths(c.symbol()).is_some() {
                continue;
            }
            if text.trim().is_empty() {
                continue;
            }
            let reversed = c.modifier.contains(Modifier::REVERSED);
            let fg = if reversed {
                resolve(c.bg, default_bg)
            } else {
                resolve(c.fg, default_fg)
            };
            let mut attrs = String::new();
            if c.modifier.contains(Modifier::BOLD) {
                attrs.push_str(r#" font-weight="bold""#);
            }
            if c.modifier.contains(Modifier::DIM) {
                attrs.push_str(r#" opacity="0.7""#);
            }
            if c.modifier.contains(Modifier::CROSSED_OUT) {
                attrs.push_str(r#" text-decoration="line-through""#);
            }
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{baseline:.1}" fill="{}" xml:space="preserve" textLength="{:.1}" lengthAdjust="spacingAndGlyphs"{attrs}>{}</text>"#,
                start as f64 * CELL_W,
                hex(fg),
                (x - start) as f64 * CELL_W,
                escape(&text)
            );
        }
    }
    out.push_str("</svg>\n");
    out
}
