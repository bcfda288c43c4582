//! What a screen shows of a lab, as data: its panes (a title, a sparkline, a table with typed
//! columns and drop ranks, lines of text), the lines beside them and the pane whose edge carries
//! the cost. Each lab builds its `LabView` from its snapshot and history (in its folder); the TUI,
//! its SVG screenshots and the replay draw any lab's `LabView` with one renderer (`tui::render`),
//! so a lab needs no drawing code of its own.
//!
//! Beside its tab, a lab gives its parts of the header, its status line and its rows of the
//! overview's brief table (`HeaderPart`, `brief_row`).
//!
//! Colours are named by theme item (`text`, `dim`, `error`, `redis`, ...), so a theme file
//! colours every lab's `LabView` the same way it colours the rest of the screen. A lab's own items
//! (its series' colours) are declared in its folder ([`Colour`], `Facts::colours`).

/// The smallest screen a lab is drawn on (columns, rows): the TUI's, the screenshots', and
/// what `latlab doctor` asks of the terminal.
pub const MIN_SIZE: (u16, u16) = (80, 24);

pub mod keys;

use crate::metrics::{Point, Summary};
use latlab_core::services::Service;

/// A theme item of a lab's own: its name, what it colours, and its colour in the built-in dark
/// and light themes (`#rrggbb`; the mono theme has no colours). A theme file sets it as it sets
/// latlab's own items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Colour {
    pub item: &'static str,
    pub what: &'static str,
    pub dark: &'static str,
    pub light: &'static str,
}

/// How a piece of text is drawn: the theme item that colours it, and whether it is bold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Style {
    pub item: &'static str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub strong: bool,
    /// Struck through: what has stopped (a removed consumer).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub crossed: bool,
}

impl Style {
    pub const fn plain(item: &'static str) -> Style {
        Style {
            item,
            strong: false,
            crossed: false,
        }
    }

    pub const fn strong(item: &'static str) -> Style {
        Style {
            item,
            strong: true,
            crossed: false,
        }
    }

    pub const fn crossed(item: &'static str) -> Style {
        Style {
            item,
            strong: false,
            crossed: true,
        }
    }
}

/// A run of text in one style.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Text {
    pub text: String,
    pub style: Style,
}

impl Text {
    pub fn new(text: impl Into<String>, style: Style) -> Text {
        Text {
            text: text.into(),
            style,
        }
    }

    /// A count of failures: in the error colour when there was one.
    pub fn errors(n: u64) -> Text {
        let style = if n > 0 {
            Style::strong("error")
        } else {
            Style::plain("text")
        };
        Text::new(latlab_core::units::thousands(n), style)
    }

    /// Why the last request failed, for a pane's bottom edge.
    pub fn last_error(line: &str) -> Text {
        Text::new(format!(" last error: {line} "), Style::strong("error"))
    }
}

/// A line of text runs.
pub type Line = Vec<Text>;

/// How a column's cells line up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Align {
    Left,
    Right,
}

/// One column of a table: its head, its width, when it goes on a narrow screen (0 always stays;
/// higher ranks go first) and how its cells line up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Column {
    pub head: &'static str,
    pub width: u16,
    pub drop: u8,
    pub align: Align,
}

impl Column {
    pub const fn left(head: &'static str, width: u16, drop: u8) -> Column {
        Column {
            head,
            width,
            drop,
            align: Align::Left,
        }
    }

    pub const fn right(head: &'static str, width: u16, drop: u8) -> Column {
        Column {
            head,
            width,
            drop,
            align: Align::Right,
        }
    }
}

/// One column that narrows (to `min`, at rank `rank`) before columns of lower rank are dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Shrink {
    pub column: usize,
    pub min: u16,
    pub rank: u8,
}

/// A table: a head row and rows of one cell per column.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Text>>,
    pub shrink: Option<Shrink>,
    /// The last column (when shown) takes the width left over.
    pub fill_last: bool,
}

/// One series of a sparkline: a value per second, oldest first, ending now (None: nothing was
/// measured that second), in its theme item's colour.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Series {
    pub values: Vec<Option<u64>>,
    pub item: &'static str,
}

impl Series {
    /// One value a second from a series' points (`pick`: its p99, its max), None for a second
    /// that measured nothing.
    pub fn per_second(points: &[Point], pick: fn(&Point) -> u64, item: &'static str) -> Series {
        Series {
            values: points
                .iter()
                .map(|p| (p.count > 0).then(|| pick(p)))
                .collect(),
            item,
        }
    }
}

/// A sparkline of per-second values (microseconds): each second shows the highest of its
/// series, in that series' colour.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Spark {
    pub series: Vec<Series>,
    /// The colour of a second no series measured.
    pub item: &'static str,
    /// What is plotted, under the top value: `max/s`.
    pub metric: &'static str,
    /// The service whose injected faults are marked over the seconds they fired in (in a shared
    /// frame, whether it shows the marks its tab gives as seconds ago).
    #[serde(serialize_with = "marked")]
    pub marks: Option<Service>,
}

fn marked<S: serde::Serializer>(marks: &Option<Service>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(marks.is_some())
}

impl Spark {
    /// The sparkline of one series, in its colour.
    pub fn of(series: Series, metric: &'static str, marks: Option<Service>) -> Spark {
        Spark {
            item: series.item,
            series: vec![series],
            metric,
            marks,
        }
    }
}

/// How much room a part takes: a share of what is left, a fixed height, or at least a height.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Size {
    Fill(u16),
    Length(u16),
    Min(u16),
    /// A block of `fixed` rows plus its sparkline's: the rows the lab's `Rows` blocks leave are
    /// shared evenly among their sparklines, 1 to 8 rows each, and what is still left stays
    /// empty below them.
    Rows {
        fixed: u16,
    },
    /// Inside a `Rows` block's pane: its sparkline's share.
    Spark,
}

/// What a pane holds, top to bottom.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "type", content = "part", rename_all = "snake_case")]
pub enum Part {
    Spark(Spark),
    Table(Table),
    Lines(Vec<Line>),
}

/// A bordered pane.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Pane {
    pub title: Line,
    /// The title on a pane narrower than the width given.
    pub narrow: Option<(u16, Line)>,
    /// On the bottom edge: why its last request failed, for one.
    pub bottom: Option<Text>,
    pub parts: Vec<(Size, Part)>,
    /// Below this inner height the pane shows its border and titles only.
    pub min_inner: u16,
}

impl Pane {
    /// The pane of one series: its sparkline (taking `spark_size`) above a table of one row;
    /// below an inner height of 3 it shows its border and title only. Its bottom edge and narrow
    /// title are the caller's to set.
    pub fn spark_over_row(
        title: Line,
        (spark_size, spark): (Size, Spark),
        columns: Vec<Column>,
        row: Vec<Text>,
    ) -> Pane {
        let table = Table {
            columns,
            rows: vec![row],
            shrink: None,
            fill_last: false,
        };
        Pane {
            title,
            narrow: None,
            bottom: None,
            parts: vec![
                (spark_size, Part::Spark(spark)),
                (Size::Length(2), Part::Table(table)),
            ],
            min_inner: 3,
        }
    }
}

/// One piece of a lab's screen, stacked top to bottom.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "type", content = "block", rename_all = "snake_case")]
pub enum Block {
    Pane(Pane),
    /// Lines with no border (the lab's settings and what it measures).
    Lines(Vec<Line>),
    /// A bordered box of wrapped lines: a lab that is not running, and why.
    Message {
        title: Text,
        lines: Vec<Line>,
    },
}

/// Everything a screen shows of one lab.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LabView {
    pub blocks: Vec<(Size, Block)>,
    /// The block (a pane) whose bottom edge carries the lab's cost at list price.
    pub cost_on: Option<usize>,
}

/// A lab's part of the header: its text, whether it is bold (something needs attention), and its
/// drop rank (higher ranks go first when the line is narrow).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HeaderPart {
    pub text: String,
    pub strong: bool,
    pub rank: u8,
}

/// A row of the overview's brief table: the lab, what the row measures, its latency's p50, p99
/// and max (dashes before the first sample), its count, and a note of its counts, warm when
/// `bad` (something is wrong).
pub fn brief_row(
    lab: Text,
    what: impl Into<String>,
    latency: &Summary,
    count: u64,
    (note, bad): (String, bool),
) -> Vec<Text> {
    let txt = |v: String| Text::new(v, Style::plain("text"));
    let s = latency;
    vec![
        lab,
        txt(what.into()),
        txt(s.ms(s.p50_us)),
        txt(s.ms(s.p99_us)),
        txt(s.ms(s.max_us)),
        txt(latlab_core::units::thousands(count)),
        Text::new(note, Style::plain(if bad { "warn" } else { "dim" })),
    ]
}
