//! Colour themes: a flat, documented set of themable items, latlab's own and each lab's (its
//! series' colours, declared in its folder: `Facts::colours`, with their colours in the dark
//! and light themes). A theme file names only the items it changes (the rest come from the dark
//! default, which is compiled in); unknown items are errors naming the file, the line and the
//! key. Colours are names (`red`, `lightblue`), `#rrggbb`, or `reset`.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

use anyhow::{Context, bail};
use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

/// The built-in themes: (name, file text). `dark` is the default.
pub const BUILTIN: &[(&str, &str)] = &[
    ("dark", include_str!("../themes/dark.toml")),
    ("light", include_str!("../themes/light.toml")),
    ("mono", include_str!("../themes/mono.toml")),
];

macro_rules! items {
    ($( $name:ident : $doc:literal ),* $(,)?) => {
        /// Every themable item, with its colour.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Theme {
            pub name: String,
            /// No colours at all (NO_COLOR, or a theme that asks for it): emphasis only.
            pub monochrome: bool,
            $( #[doc = $doc] pub $name: Color, )*
            /// Each lab's own items, in the registry's order.
            pub labs: Vec<(&'static str, Color)>,
        }

        /// latlab's own items: (item, what it colours).
        const OWN: &[(&str, &str)] = &[ $( (stringify!($name), $doc), )* ];

        impl Theme {
            fn own_mut(&mut self, item: &str) -> Option<&mut Color> {
                match item {
                    $( stringify!($name) => Some(&mut self.$name), )*
                    _ => None,
                }
            }

            fn own(&self, item: &str) -> Option<Color> {
                match item {
                    $( stringify!($name) => Some(self.$name), )*
                    _ => None,
                }
            }

            fn reset() -> Theme {
                Theme {
                    name: "reset".into(),
                    monochrome: false,
                    $( $name: Color::Reset, )*
                    labs: lab_items().iter().map(|c| (c.item, Color::Reset)).collect(),
                }
            }
        }
    };
}

/// Every lab's own items, in the registry's order.
fn lab_items() -> Vec<crate::lab_kit::view::Colour> {
    crate::labs::LabKind::ALL
        .iter()
        .flat_map(|l| l.colours().iter().copied())
        .collect()
}

/// The item after which the labs' items are listed (latlab's own states, then the labs'
/// series, then the tables and gauges).
const LABS_AFTER: &str = "error";

/// Every themable item, latlab's own and each lab's, in the order listings show them, with what
/// it colours: for `latlab themes --items`.
pub fn items() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&'static str, &'static str)> = OWN.to_vec();
    let at = out
        .iter()
        .position(|(n, _)| *n == LABS_AFTER)
        .map_or(out.len(), |i| i + 1);
    out.splice(at..at, lab_items().into_iter().map(|c| (c.item, c.what)));
    out
}

items! {
    background: "the screen's background",
    text: "ordinary text",
    dim: "secondary text: units, hints, stopped consumers",
    border: "pane borders",
    title: "pane titles",
    header: "the header line's text",
    header_bg: "the header line's background",
    tab_active: "the selected tab",
    tab_inactive: "the other tabs",
    accent: "keys in the footer and help, highlighted figures",
    ok: "healthy states: subscribed, within limits",
    warn: "warnings: near a limit, retries",
    error: "throttles, escaped errors, lost records",
    table_header: "percentile table headers",
    gauge_ok: "the calls/s gauge within the shard's limit",
    gauge_over: "the calls/s gauge over the shard's limit",
    popup_bg: "the help overlay's background",
}

/// A colour by name, `#rrggbb`, an indexed colour number, or `reset`.
pub fn parse_color(text: &str) -> anyhow::Result<Color> {
    Color::from_str(text.trim()).map_err(|_| {
        anyhow::anyhow!(
            "'{text}' is not a colour: use a name (black, red, green, yellow, blue, magenta, cyan, gray, darkgray, lightred, ..., white), #rrggbb, an index 0-255, or reset"
        )
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    #[serde(default)]
    monochrome: bool,
    /// Each item's colour by name: latlab's own and the labs' (checked against both).
    #[serde(default)]
    colors: BTreeMap<String, toml::Spanned<String>>,
}

impl Theme {
    /// The compiled-in default.
    pub fn dark() -> Theme {
        Theme::builtin(BUILTIN[0].0, BUILTIN[0].1, None)
    }

    /// A built-in theme: its file, then each lab's colours for it.
    fn builtin(name: &str, text: &str, base: Option<&Theme>) -> Theme {
        let mut t = Theme::parse(text, base).expect("the built-in themes are valid");
        let labs = lab_items();
        for (item, c) in t.labs.iter_mut() {
            let colour = labs.iter().find(|l| l.item == *item);
            *c = match (name, colour) {
                ("dark", Some(l)) => parse_color(l.dark).expect("a lab's dark colour"),
                ("light", Some(l)) => parse_color(l.light).expect("a lab's light colour"),
                _ => Color::Reset,
            };
        }
        t
    }

    /// A built-in theme by name, or a theme file.
    pub fn resolve(name_or_path: &str) -> anyhow::Result<Theme> {
        if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Ok(Theme::builtin(name, text, Some(&Theme::base())));
        }
        let path = Path::new(name_or_path);
        if path.exists() || name_or_path.ends_with(".toml") {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read theme file {}", path.display()))?;
            return Theme::parse(&text, Some(&Theme::base()))
                .with_context(|| format!("theme file {}", path.display()));
        }
        bail!(
            "unknown theme '{name_or_path}': valid names are {}, or a path to a .toml file",
            BUILTIN
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        )
    }

    /// The theme for `--theme`, honouring NO_COLOR (any non-empty value) unless a theme is named,
    /// with its colours fitted to what the terminal shows (`Depth::of_terminal`).
    pub fn for_terminal(requested: Option<&str>) -> anyhow::Result<Theme> {
        Ok(Theme::requested(requested)?.fit(Depth::of_terminal()))
    }

    /// The theme for `--theme`, honouring NO_COLOR (any non-empty value) unless a theme is named,
    /// with its own colours (not fitted to a terminal).
    pub fn requested(requested: Option<&str>) -> anyhow::Result<Theme> {
        Ok(match requested {
            Some(name) => Theme::resolve(name)?,
            None if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) => {
                Theme::resolve("mono")?
            }
            None => Theme::dark(),
        })
    }

    /// The theme with each `#rrggbb` colour replaced by the nearest one the terminal can show:
    /// an index of the 256-colour palette, or one of the 16 basic colours.
    pub fn fit(mut self, depth: Depth) -> Theme {
        if depth == Depth::TrueColor {
            return self;
        }
        let names: Vec<&str> = self.colors().iter().map(|(n, _)| *n).collect();
        for name in names {
            if let Some(c) = self.item_mut(name) {
                *c = nearest(*c, depth);
            }
        }
        self
    }

    /// What a theme file starts from: the dark default, whose colours it changes.
    fn base() -> Theme {
        Theme::dark()
    }

    fn item_mut(&mut self, item: &str) -> Option<&mut Color> {
        if self.own(item).is_some() {
            return self.own_mut(item);
        }
        self.labs
            .iter_mut()
            .find(|(n, _)| *n == item)
            .map(|(_, c)| c)
    }

    /// The colour of a themable item, by its name.
    pub fn item(&self, name: &str) -> Option<Color> {
        self.own(name)
            .or_else(|| self.labs.iter().find(|(n, _)| *n == name).map(|(_, c)| *c))
    }

    /// (item, colour) pairs, in the order [`items`] lists them, for listings and SVG output.
    pub fn colors(&self) -> Vec<(&'static str, Color)> {
        items()
            .into_iter()
            .filter_map(|(n, _)| Some((n, self.item(n)?)))
            .collect()
    }

    /// A theme from its file text; with `base`, keys the text leaves out come from it.
    pub fn parse(text: &str, base: Option<&Theme>) -> anyhow::Result<Theme> {
        let file: File = toml::from_str(text)
            .map_err(|e| anyhow::anyhow!("{}", latlab_core::units::toml_error(text, &e)))?;
        let mut theme = match base {
            Some(b) => b.clone(),
            None => Theme::reset(),
        };
        theme.name = file.name;
        theme.monochrome = file.monochrome;
        for (item, value) in &file.colors {
            let line = latlab_core::units::line_of(text, value.span().start);
            let Some(c) = theme.item_mut(item) else {
                let valid: Vec<String> = items().iter().map(|(n, _)| format!("`{n}`")).collect();
                bail!(
                    "line {line}: unknown field `{item}`, expected one of {}",
                    valid.join(", ")
                );
            };
            *c = parse_color(value.get_ref())
                .with_context(|| format!("line {line}, colors.{item}"))?;
        }
        Ok(theme)
    }

    /// A style with this item's colour as foreground (no colour when monochrome).
    pub fn fg(&self, color: Color) -> Style {
        if self.monochrome {
            Style::default()
        } else {
            Style::default().fg(color)
        }
    }

    /// The base style of the screen.
    pub fn base_style(&self) -> Style {
        if self.monochrome {
            Style::default()
        } else {
            Style::default().fg(self.text).bg(self.background)
        }
    }

    /// Emphasis that survives monochrome: bold for errors and highlights.
    pub fn strong(&self, color: Color) -> Style {
        self.fg(color).add_modifier(Modifier::BOLD)
    }

    /// The themable items as a listing: `item  colour  what a terminal of `depth` draws  what
    /// it colours`; the colour is the theme's own (`#0f1419`), and beside it the nearest one such
    /// a terminal shows (`233` on a 256-colour terminal, `#0f1419` on a 24-bit one).
    pub fn listing(&self, depth: Depth) -> String {
        let docs: BTreeMap<&str, &str> = items().into_iter().collect();
        let rows: Vec<(&str, String, String)> = self
            .colors()
            .iter()
            .map(|(item, color)| {
                let own = color_name(*color);
                let here = format!("here {}", color_name(nearest(*color, depth)));
                (*item, own, here)
            })
            .collect();
        // Each column as wide as its widest cell: a long colour name never pushes the next
        // column out of line.
        let width =
            |f: &dyn Fn(&(&str, String, String)) -> usize| rows.iter().map(f).max().unwrap_or(0);
        let (w0, w1, w2) = (
            width(&|r| r.0.chars().count()),
            width(&|r| r.1.chars().count()),
            width(&|r| r.2.chars().count()),
        );
        rows.iter()
            .map(|(item, own, here)| {
                format!("{item:<w0$}  {own:<w1$}  {here:<w2$}  {}\n", docs[item])
            })
            .collect()
    }
}

/// How many colours a terminal shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// 24-bit `#rrggbb`: COLORTERM says truecolor or 24bit.
    TrueColor,
    /// The 256-colour palette: TERM names a 256color terminal.
    Palette256,
    /// The 16 basic colours: any other terminal.
    Basic,
}

impl Depth {
    /// As the terminal's environment says, the way bat and other terminal tools read it:
    /// 24-bit only when COLORTERM says so, since a terminal that cannot show it draws other
    /// colours instead.
    pub fn from_env(colorterm: Option<&str>, term: Option<&str>) -> Depth {
        if matches!(colorterm, Some("truecolor" | "24bit")) {
            Depth::TrueColor
        } else if term.is_some_and(|t| t.contains("256color")) {
            Depth::Palette256
        } else {
            Depth::Basic
        }
    }

    pub fn of_terminal() -> Depth {
        let var = |k: &str| std::env::var(k).ok();
        Depth::from_env(var("COLORTERM").as_deref(), var("TERM").as_deref())
    }
}

/// The colour nearest to `c` (by RGB distance) that a terminal of `depth` shows; colours that
/// are not `#rrggbb` are left as they are.
fn nearest(c: Color, depth: Depth) -> Color {
    let Color::Rgb(r, g, b) = c else {
        return c;
    };
    let distance = |(x, y, z): (u8, u8, u8)| {
        let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).pow(2);
        d(x, r) + d(y, g) + d(z, b)
    };
    match depth {
        Depth::TrueColor => c,
        // The colour cube and the grey ramp: the first 16 are the terminal's own and vary.
        Depth::Palette256 => Color::Indexed(
            (16..=255u8)
                .min_by_key(|i| distance(indexed(*i)))
                .expect("a palette"),
        ),
        Depth::Basic => BASIC
            .into_iter()
            .min_by_key(|b| distance(rgb(*b, (0, 0, 0))))
            .expect("16 colours"),
    }
}

const BASIC: [Color; 16] = [
    Color::Black,
    Color::Red,
    Color::Green,
    Color::Yellow,
    Color::Blue,
    Color::Magenta,
    Color::Cyan,
    Color::Gray,
    Color::DarkGray,
    Color::LightRed,
    Color::LightGreen,
    Color::LightYellow,
    Color::LightBlue,
    Color::LightMagenta,
    Color::LightCyan,
    Color::White,
];

/// A colour as a theme file writes it.
pub fn color_name(c: Color) -> String {
    match c {
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Indexed(i) => i.to_string(),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// The RGB a colour is drawn with in screenshots (terminal defaults for named colours).
pub fn rgb(c: Color, fallback: (u8, u8, u8)) -> (u8, u8, u8) {
    match c {
        Color::Reset => fallback,
        Color::Black => (0, 0, 0),
        Color::Red => (205, 49, 49),
        Color::Green => (13, 188, 121),
        Color::Yellow => (229, 229, 16),
        Color::Blue => (36, 114, 200),
        Color::Magenta => (188, 63, 188),
        Color::Cyan => (17, 168, 205),
        Color::Gray => (204, 204, 204),
        Color::DarkGray => (118, 118, 118),
        Color::LightRed => (241, 76, 76),
        Color::LightGreen => (35, 209, 139),
        Color::LightYellow => (245, 245, 67),
        Color::LightBlue => (59, 142, 234),
        Color::LightMagenta => (214, 112, 214),
        Color::LightCyan => (41, 184, 219),
        Color::White => (242, 242, 242),
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Indexed(i) => indexed(i),
    }
}

fn indexed(i: u8) -> (u8, u8, u8) {
    match i {
        0..=15 => rgb(BASIC[i as usize], (0, 0, 0)),
        16..=231 => {
            let i = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            (level(i / 36), level((i / 6) % 6), level(i % 6))
        }
        _ => {
            let v = 8 + (i - 232) * 10;
            (v, v, v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_fit_the_terminals_depth() {
        assert_eq!(
            Depth::from_env(Some("truecolor"), Some("xterm")),
            Depth::TrueColor
        );
        assert_eq!(Depth::from_env(Some("24bit"), None), Depth::TrueColor);
        assert_eq!(
            Depth::from_env(None, Some("tmux-256color")),
            Depth::Palette256
        );
        assert_eq!(Depth::from_env(Some("yes"), Some("xterm")), Depth::Basic);
        assert_eq!(Depth::from_env(None, None), Depth::Basic);
        // Exact palette colours map to themselves; others to the nearest.
        assert_eq!(
            nearest(Color::Rgb(255, 0, 0), Depth::Palette256),
            Color::Indexed(196)
        );
        assert_eq!(
            nearest(Color::Rgb(0, 0, 0), Depth::Palette256),
            Color::Indexed(16)
        );
        assert_eq!(
            nearest(Color::Rgb(128, 128, 128), Depth::Palette256),
            Color::Indexed(244)
        );
        assert_eq!(
            nearest(Color::Rgb(0, 95, 135), Depth::Palette256),
            Color::Indexed(24)
        );
        assert_eq!(
            nearest(Color::Rgb(250, 60, 60), Depth::Basic),
            Color::LightRed
        );
        assert_eq!(nearest(Color::Blue, Depth::Palette256), Color::Blue);
        let dark = Theme::dark();
        assert_eq!(dark.clone().fit(Depth::TrueColor), dark);
        let fitted = dark.clone().fit(Depth::Palette256);
        for ((item, before), (_, after)) in dark.colors().into_iter().zip(fitted.colors()) {
            match before {
                Color::Rgb(..) => assert!(matches!(after, Color::Indexed(16..=255)), "{item}"),
                other => assert_eq!(after, other, "{item}"),
            }
        }
        assert!(
            dark.fit(Depth::Basic)
                .colors()
                .iter()
                .all(|(_, c)| !matches!(c, Color::Rgb(..) | Color::Indexed(_)))
        );
    }

    #[test]
    fn builtin_themes_parse_and_differ() {
        let dark = Theme::resolve("dark").unwrap();
        let light = Theme::resolve("light").unwrap();
        let mono = Theme::resolve("mono").unwrap();
        assert_ne!(dark.background, light.background);
        assert!(mono.monochrome);
        assert_eq!(mono.fg(Color::Red), Style::default());
    }

    #[test]
    fn a_partial_theme_overrides_only_what_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mine.toml");
        std::fs::write(&p, "name = \"mine\"\n[colors]\nerror = \"#ff00ff\"\n").unwrap();
        let t = Theme::resolve(p.to_str().unwrap()).unwrap();
        assert_eq!(t.error, Color::Rgb(255, 0, 255));
        assert_eq!(t.ok, Theme::dark().ok);
    }

    #[test]
    fn bad_theme_files_name_the_file_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.toml");
        std::fs::write(&p, "name = \"bad\"\n[colors]\neror = \"red\"\n").unwrap();
        let e = format!("{:#}", Theme::resolve(p.to_str().unwrap()).unwrap_err());
        assert!(e.contains(&format!("theme file {}", p.display())), "{e}");
        assert!(
            e.contains("line 3") && e.contains("unknown field `eror`"),
            "{e}"
        );
        std::fs::write(&p, "name = \"bad\"\n[colors]\nerror = \"blurple\"\n").unwrap();
        let e = format!("{:#}", Theme::resolve(p.to_str().unwrap()).unwrap_err());
        assert!(e.contains("colors.error: 'blurple' is not a colour"), "{e}");
        // The line too (the colour's error named none).
        assert!(e.contains("line 3, colors.error"), "{e}");
        std::fs::write(&p, "name = \"bad\"\nmonochrome = \"yes\"\n").unwrap();
        let e = format!("{:#}", Theme::resolve(p.to_str().unwrap()).unwrap_err());
        assert!(
            e.contains("line 2, column 14: monochrome: \"yes\" is not true or false"),
            "{e}"
        );
        let e = format!("{:#}", Theme::resolve("neon").unwrap_err());
        assert!(e.contains("valid names are dark, light, mono"), "{e}");
    }

    /// A listing row's description: what follows its third column.
    fn docs_of(line: &str) -> String {
        let item = line.split_whitespace().next().unwrap();
        items()
            .into_iter()
            .find(|(n, _)| *n == item)
            .map(|(_, d)| d.to_string())
            .unwrap()
    }

    #[test]
    fn the_listing_names_every_item() {
        let l = Theme::dark().listing(Depth::TrueColor);
        assert_eq!(l.lines().count(), items().len());
        assert!(l.contains("gauge_over"));
    }

    /// `themes --items` showed the dark theme's `#0f1419` as `233` or `black`, rounded to the
    /// terminal's palette: the theme's own value first, and what each terminal draws beside it,
    /// each in a column of its own width (a long colour name misaligned the rest).
    #[test]
    fn the_listing_shows_the_themes_own_colours_and_what_a_terminal_draws() {
        let dark = Theme::dark();
        let own = |l: &str| {
            l.lines()
                .find(|l| l.starts_with("background "))
                .unwrap()
                .split_whitespace()
                .take(4)
                .collect::<Vec<_>>()
                .join(" ")
        };
        let background = color_name(dark.background);
        assert!(background.starts_with('#'), "{background}");
        assert_eq!(
            own(&dark.listing(Depth::TrueColor)),
            format!("background {background} here {background}")
        );
        let palette = color_name(nearest(dark.background, Depth::Palette256));
        assert_eq!(
            own(&dark.listing(Depth::Palette256)),
            format!("background {background} here {palette}")
        );
        let basic = color_name(nearest(dark.background, Depth::Basic));
        let listing = dark.listing(Depth::Basic);
        assert_eq!(
            own(&listing),
            format!("background {background} here {basic}")
        );
        // Every row's description starts in one column.
        let starts: Vec<usize> = listing
            .lines()
            .map(|l| {
                let doc = &docs_of(l);
                l.find(doc.as_str()).unwrap()
            })
            .collect();
        assert!(starts.windows(2).all(|w| w[0] == w[1]), "{listing}");
    }
}
