//! What the S3 tab shows, as data (`crate::lab_kit::view`): a pane for PUT and one for GET (both classes
//! on one time line, and a row per class), then the live settings and the buckets.

use super::snapshot::S3Snapshot;
use crate::lab_kit::view::{
    Block, Column, LabView, Line, Pane, Part, Series, Size, Spark, Style, Table, Text, brief_row,
};
use crate::metrics::Point;
use latlab_core::services::Service;
use latlab_core::services::s3::Class;
use latlab_core::units::{format_bytes, thousands};

const TEXT: Style = Style::plain("text");
const DIM: Style = Style::plain("dim");

/// The theme item a class's series and names are coloured by.
fn item(class: Class) -> &'static str {
    match class {
        Class::ExpressOneZone => "s3_express",
        Class::Standard => "s3_standard",
    }
}

/// The tab, as data (a `LabView`): `sparks` are each (class, operation)'s last seconds of total time.
pub fn tab(s3: &S3Snapshot, sparks: &[(Class, String, Vec<Point>)]) -> LabView {
    let mut blocks: Vec<(Size, Block)> = [
        (
            "PUT",
            "S3 PUT (upload; the answer follows the whole body)",
            "S3 PUT (upload)",
        ),
        ("GET", "S3 GET (download)", "S3 GET (download)"),
    ]
    .into_iter()
    .map(|(op, wide, narrow)| {
        (
            Size::Fill(1),
            Block::Pane(pane(s3, sparks, op, wide, narrow)),
        )
    })
    .collect();
    blocks.push((Size::Length(2), Block::Lines(info(s3))));
    LabView {
        blocks,
        cost_on: Some(1),
    }
}

fn pane(
    s3: &S3Snapshot,
    sparks: &[(Class, String, Vec<Point>)],
    op: &str,
    wide: &str,
    narrow: &str,
) -> Pane {
    let title = |text: &str| {
        vec![
            Text::new(format!(" {text} "), Style::strong("title")),
            Text::new(
                format!(
                    " {} {} ",
                    if op == "PUT" {
                        "writing to"
                    } else {
                        "reading from"
                    },
                    s3.class.storage_class()
                ),
                Style::strong(item(s3.class)),
            ),
        ]
    };
    // Why its last request failed (the class measured now), on the pane's bottom edge.
    let bottom = s3
        .ops
        .iter()
        .filter(|o| o.op == op && o.class == s3.class && o.errors > 0)
        .find_map(|o| o.last_error.as_deref())
        .map(Text::last_error);
    // Both classes on one time line, each second in the colour of the class measured then, so
    // a switch shows where it happened.
    let spark = Spark {
        series: sparks
            .iter()
            .filter(|(_, o, _)| o == op)
            .map(|(class, _, points)| Series::per_second(points, |p| p.p99_us, item(*class)))
            .collect(),
        item: "s3_express",
        metric: "p99/s",
        marks: Some(Service::S3),
    };
    // The total's max, the first byte's p99, the request count and SlowDown go first when the
    // pane is narrow.
    let columns = vec![
        Column::left("class", 17, 0),
        Column::right("requests", 8, 3),
        Column::right("first byte p50", 14, 0),
        Column::right("p99", 10, 4),
        Column::right("total p50", 10, 0),
        Column::right("p99", 10, 0),
        Column::right("max", 10, 5),
        Column::right("MB/s", 7, 0),
        Column::right("SlowDown", 8, 2),
        Column::right("errors", 6, 0),
    ];
    let txt = |v: String| Text::new(v, TEXT);
    let rows = [Class::ExpressOneZone, Class::Standard]
        .iter()
        .map(|class| {
            let o = s3.ops.iter().find(|o| o.class == *class && o.op == op);
            let active = *class == s3.class;
            let name = Text::new(
                format!(
                    "{}{}",
                    if active { "▶ " } else { "  " },
                    class.storage_class()
                ),
                if active {
                    Style::strong(item(*class))
                } else {
                    DIM
                },
            );
            match o {
                None => std::iter::once(name)
                    .chain((1..columns.len()).map(|_| txt("-".into())))
                    .collect(),
                Some(o) => vec![
                    name,
                    txt(thousands(o.requests)),
                    txt(o.first_byte.ms(o.first_byte.p50_us)),
                    txt(o.first_byte.ms(o.first_byte.p99_us)),
                    txt(o.total.ms(o.total.p50_us)),
                    txt(o.total.ms(o.total.p99_us)),
                    txt(o.total.ms(o.total.max_us)),
                    txt(format!("{:.1}", o.mb_per_sec)),
                    Text::new(
                        thousands(o.slow_downs),
                        if o.slow_downs > 0 {
                            Style::strong("warn")
                        } else {
                            TEXT
                        },
                    ),
                    Text::new(
                        thousands(o.errors),
                        if o.errors > 0 {
                            Style::strong("error")
                        } else {
                            TEXT
                        },
                    ),
                ],
            }
        })
        .collect();
    Pane {
        title: title(wide),
        narrow: (wide != narrow).then(|| (100, title(narrow))),
        bottom,
        parts: vec![
            (Size::Min(1), Part::Spark(spark)),
            (
                Size::Length(3),
                Part::Table(Table {
                    columns,
                    rows,
                    shrink: None,
                    fill_last: false,
                }),
            ),
        ],
        min_inner: 4,
    }
}

/// The live settings (with their keys) and the buckets measured.
fn info(s3: &S3Snapshot) -> Vec<Line> {
    let key = |k: &str| Text::new(k, Style::strong("accent"));
    vec![
        vec![
            key(" s"),
            Text::new(" switches the class   ", DIM),
            key("[ ]"),
            Text::new(
                format!(
                    " payload {} · {} loop(s) of PUT then GET",
                    format_bytes(s3.payload_bytes),
                    s3.concurrency
                ),
                DIM,
            ),
        ],
        vec![Text::new(
            format!(
                " buckets {} and {} · CreateSession calls {}",
                s3.standard_bucket,
                s3.express_bucket,
                s3.create_sessions.map_or("n/a".to_string(), thousands)
            ),
            DIM,
        )],
    ]
}

/// Rows the tab needs: two panes (PUT, GET) with a row of sparkline each, and the info lines.
pub const MIN_ROWS: u16 = 2 * (2 + 1 + 3) + 2;

pub(super) const COLOURS: &[crate::lab_kit::view::Colour] = &[
    crate::lab_kit::view::Colour {
        item: "s3_express",
        what: "S3 Express One Zone series",
        dark: "#61afef",
        light: "#0550ae",
    },
    crate::lab_kit::view::Colour {
        item: "s3_standard",
        what: "S3 Standard series",
        dark: "#d19a66",
        light: "#953800",
    },
];

impl crate::labs::Shown for super::S3Lab {
    const KEYS: &'static [crate::lab_kit::view::keys::LabKey<super::Command>] = super::keys::KEYS;

    fn view(snap: &S3Snapshot, history: Option<&super::History>) -> LabView {
        tab(snap, history.map_or(&[][..], |h| h.as_slice()))
    }

    fn min_rows(_snap: &S3Snapshot) -> u16 {
        MIN_ROWS
    }

    /// Its rows of the overview's brief table (lab, what, p50, p99, max, count, counts): a row per
    /// class and operation.
    fn brief(s3: &S3Snapshot) -> Vec<Vec<Text>> {
        let mut rows = Vec::new();
        for o in &s3.ops {
            let what = format!(
                "{}{} {}",
                if o.class == s3.class { "▶ " } else { "" },
                o.op,
                o.class.storage_class()
            );
            let note = format!(
                "{:.1} MB/s · SlowDown {} · errors {}",
                o.mb_per_sec,
                thousands(o.slow_downs),
                thousands(o.errors)
            );
            rows.push(brief_row(
                Text::new("S3", Style::strong(item(o.class))),
                what,
                &o.total,
                o.requests,
                (note, o.slow_downs > 0 || o.errors > 0),
            ));
        }
        rows
    }

    /// What the tab's figures rest on: the S3 SDK's retry settings, or that Express cannot be
    /// measured here.
    fn status(s3: &S3Snapshot) -> String {
        match &s3.express_unsupported {
            Some(why) => format!(" S3 Express One Zone {why}; measuring Standard"),
            None => format!(
                " S3 SDK: {}",
                crate::aws::RetrySettings::default().describe()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::labs::LabKind;
    use crate::theme::Theme;
    use crate::tui::app::{App, Tab};
    use crate::tui::fixture::{lab_moment, screen};

    /// Its tab's pane carries the configuration's cost at list price on its edge (worked by hand
    /// in `cost.rs`).
    #[test]
    fn its_pane_shows_its_cost() {
        let mut app = App::new(Theme::dark());
        app.tab = Tab::Lab(LabKind::S3);
        let s = screen(&app, &lab_moment(LabKind::S3), (160, 50));
        assert!(s.contains("cost $0.0389/h"), "{s}");
    }
}
