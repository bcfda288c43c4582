//! Colour themes: a flat, documented set of themable items. A theme file names only the items it
//! changes (the rest come from the dark default, which is compiled in); unknown items are errors
//! naming the file and the key. Colours are names (`red`, `lightblue`), `#rrggbb`, or `reset`.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

use anyhow::{Context, bail};
use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

/// The built-in themes: (name, file text). `dark` is the default.
pub const BUILTIN: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    ("mono", include_str!("../../themes/mono.toml")),
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
        }

        #[derive(Deserialize, Default)]
        #[serde(deny_unknown_fields)]
        struct Colors {
            $( $name: Option<String>, )*
        }

        /// (item, what it colours) for `latlab themes --items`.
        pub const ITEMS: &[(&str, &str)] = &[ $( (stringify!($name), $doc), )* ];

        impl Theme {
            fn apply(&mut self, colors: Colors) -> anyhow::Result<()> {
                $(
                    if let Some(text) = colors.$name {
                        self.$name = parse_color(&text)
                            .with_context(|| format!("colors.{}", stringify!($name)))?;
                    }
                )*
                Ok(())
            }

            /// (item, colour) pairs, for listings and SVG output.
            pub fn colors(&self) -> Vec<(&'static str, Color)> {
                vec![ $( (stringify!($name), self.$name), )* ]
            }
        }
    };
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
    fan_out: "sparklines and marks of enhanced fan-out consumers",
    poller: "sparklines and marks of GetRecords pollers",
    lambda: "sparklines and marks of Lambda consumers",
    s3_express: "S3 Express One Zone series",
    s3_standard: "S3 Standard series",
    redis: "Redis replication lag series",
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
    #[serde(default)]
    colors: Colors,
}

impl Theme {
    /// The compiled-in default.
    pub fn dark() -> Theme {
        Theme::parse(BUILTIN[0].1, None).expect("the built-in dark theme is valid")
    }

    /// A built-in theme by name, or a theme file.
    pub fn resolve(name_or_path: &str) -> anyhow::Result<Theme> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Theme::parse(text, Some(&Theme::base()));
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

    /// The theme for `--theme`, honouring NO_COLOR (any non-empty value) unless a theme is named.
    pub fn for_terminal(requested: Option<&str>) -> anyhow::Result<Theme> {
        match requested {
            Some(name) => Theme::resolve(name),
            None if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) => {
                Theme::resolve("mono")
            }
            None => Ok(Theme::dark()),
        }
    }

    /// Every item reset: what a file starts from before the default's colours are applied.
    fn base() -> Theme {
        Theme::parse(BUILTIN[0].1, None).expect("the built-in dark theme is valid")
    }

    /// A theme from its file text; with `base`, keys the text leaves out come from it.
    pub fn parse(text: &str, base: Option<&Theme>) -> anyhow::Result<Theme> {
        let file: File = toml::from_str(text)
            .map_err(|e| anyhow::anyhow!("{}", crate::units::toml_error(text, &e)))?;
        let mut theme = match base {
            Some(b) => b.clone(),
            None => Theme::reset(),
        };
        theme.name = file.name;
        theme.monochrome = file.monochrome;
        theme.apply(file.colors)?;
        Ok(theme)
    }

    fn reset() -> Theme {
        let mut t = Theme {
            name: String::new(),
            monochrome: false,
            background: Color::Reset,
            text: Color::Reset,
            dim: Color::Reset,
            border: Color::Reset,
            title: Color::Reset,
            header: Color::Reset,
            header_bg: Color::Reset,
            tab_active: Color::Reset,
            tab_inactive: Color::Reset,
            accent: Color::Reset,
            ok: Color::Reset,
            warn: Color::Reset,
            error: Color::Reset,
            fan_out: Color::Reset,
            poller: Color::Reset,
            lambda: Color::Reset,
            s3_express: Color::Reset,
            s3_standard: Color::Reset,
            redis: Color::Reset,
            table_header: Color::Reset,
            gauge_ok: Color::Reset,
            gauge_over: Color::Reset,
            popup_bg: Color::Reset,
        };
        t.name = "reset".into();
        t
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

    /// The themable items as a listing: `item  colour  what it colours`.
    pub fn listing(&self) -> String {
        let docs: BTreeMap<&str, &str> = ITEMS.iter().copied().collect();
        self.colors()
            .iter()
            .map(|(item, color)| format!("{item:<14} {:<10} {}\n", color_name(*color), docs[item]))
            .collect()
    }
}

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
    const BASE: [Color; 16] = [
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
    match i {
        0..=15 => rgb(BASE[i as usize], (0, 0, 0)),
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
        let e = format!("{:#}", Theme::resolve("neon").unwrap_err());
        assert!(e.contains("valid names are dark, light, mono"), "{e}");
    }

    #[test]
    fn the_listing_names_every_item() {
        let l = Theme::dark().listing();
        assert_eq!(l.lines().count(), ITEMS.len());
        assert!(l.contains("gauge_over"));
    }
}
