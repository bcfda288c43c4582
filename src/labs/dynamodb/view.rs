//! What the DynamoDB tab shows, as data (`crate::lab_kit::view`): the writer's pane (its latency
//! each second, its units against the table's capacity, its throttles by reason and the SDK's
//! retries), the readers (strong against eventual), the partition heat strip (each partition's
//! units in the last second against its limit, the hot one marked), a pane per change consumer
//! with its count that adds up, and the live settings with their keys.

use super::History;
use super::config::{Billing, CdcKind};
use super::snapshot::{CdcFigures, DynamoSnapshot, PartitionFigures};
use crate::lab_kit::view::{
    Block, Colour, Column, HeaderPart, LabView, Line, Pane, Part, Series, Size, Spark, Style,
    Table, Text, brief_row,
};
use crate::metrics::Point;
use latlab_core::services::Service;
use latlab_core::units::{ms, thousands};

const TEXT: Style = Style::plain("text");
const DIM: Style = Style::plain("dim");
/// Partitions drawn one a line; more are drawn as one line of cells.
const LINES_OF_PARTITIONS: usize = 8;

fn item(kind: CdcKind) -> &'static str {
    match kind {
        CdcKind::StreamsPoller { .. } => "dynamodb_streams",
        CdcKind::Lambda { .. } => "dynamodb_lambda",
        CdcKind::FanOut => "dynamodb_fan_out",
    }
}

fn points<'a>(sparks: &'a [(String, Vec<Point>)], name: &str) -> &'a [Point] {
    sparks
        .iter()
        .find(|(n, _)| n == name)
        .map_or(&[][..], |(_, p)| p.as_slice())
}

/// The heat strip's rows: its borders, its two summary lines and a line a partition (when there
/// are few enough to list).
fn heat_rows(s: &DynamoSnapshot) -> u16 {
    let lines = if s.partitions.len() <= LINES_OF_PARTITIONS {
        s.partitions.len()
    } else {
        0
    };
    (2 + 2 + lines) as u16
}

/// The tab, as data.
pub fn tab(s: &DynamoSnapshot, sparks: &[(String, Vec<Point>)]) -> LabView {
    if let Some(why) = &s.unavailable {
        return LabView {
            blocks: vec![(
                Size::Fill(1),
                Block::Message {
                    title: Text::new(" DynamoDB: not running ", Style::strong("title")),
                    lines: vec![
                        Vec::new(),
                        vec![Text::new(format!(" {why}"), Style::strong("error"))],
                    ],
                },
            )],
            cost_on: None,
        };
    }
    let mut blocks = vec![
        (Size::Rows { fixed: 6 }, Block::Pane(writer(s, sparks))),
        (Size::Length(heat_rows(s)), Block::Pane(heat(s))),
    ];
    for c in &s.cdc {
        blocks.push((Size::Rows { fixed: 4 }, Block::Pane(cdc(c, sparks))));
    }
    blocks.push((Size::Length(1), Block::Lines(info(s))));
    LabView {
        blocks,
        cost_on: Some(0),
    }
}

fn flag(n: u64, item: &'static str) -> Text {
    Text::new(thousands(n), if n > 0 { Style::strong(item) } else { TEXT })
}

fn units(u: f64) -> String {
    thousands(u.round() as u64)
}

/// The throttle reasons, shortest first, as one line: `KeyRange 312 · Provisioned 4`.
pub fn reasons(r: &std::collections::BTreeMap<String, u64>) -> String {
    if r.is_empty() {
        return "none".into();
    }
    r.iter()
        .map(|(k, n)| format!("{k} {}", thousands(*n)))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn writer(s: &DynamoSnapshot, sparks: &[(String, Vec<Point>)]) -> Pane {
    let w = &s.writer;
    let t = &s.table_use;
    let of = |u: f64, cap: Option<u64>| match cap {
        Some(c) => format!("{} / {}", units(u), thousands(c)),
        None => format!("{} / on-demand", units(u)),
    };
    let lat = |l: &crate::metrics::Summary, us: u64| {
        if l.count == 0 {
            "-".to_string()
        } else {
            ms(us)
        }
    };
    let mut rows = vec![vec![
        Text::new(format!("PutItem {} B", s.item_size), TEXT),
        Text::new(thousands(w.written), TEXT),
        Text::new(lat(&w.latency, w.latency.p50_us), TEXT),
        Text::new(lat(&w.latency, w.latency.p99_us), TEXT),
        Text::new(lat(&w.latency, w.latency.max_us), TEXT),
        Text::new(of(t.write_units, t.write_capacity), TEXT),
        flag(w.throttled_attempts(), "warn"),
        Text::new(thousands(w.sdk.counters.retries), TEXT),
        flag(w.failed, "error"),
        flag(w.behind, "error"),
    ]];
    for r in &s.readers {
        let now = (r.consistency == "strong") == s.consistent;
        rows.push(vec![
            Text::new(
                format!("GetItem {}{}", r.consistency, if now { " ◀" } else { "" }),
                if now {
                    Style::strong("dynamodb_reader")
                } else {
                    TEXT
                },
            ),
            Text::new(thousands(r.reads), TEXT),
            Text::new(lat(&r.latency, r.latency.p50_us), TEXT),
            Text::new(lat(&r.latency, r.latency.p99_us), TEXT),
            Text::new(lat(&r.latency, r.latency.max_us), TEXT),
            Text::new(
                if now {
                    of(t.read_units, t.read_capacity)
                } else {
                    "-".into()
                },
                TEXT,
            ),
            flag(r.throttled.values().sum(), "warn"),
            Text::new("", TEXT),
            flag(r.failed, "error"),
            Text::new("", TEXT),
        ]);
    }
    let columns = vec![
        Column::left("call", 20, 0),
        Column::right("calls", 9, 0),
        Column::right("p50", 10, 0),
        Column::right("p99", 10, 0),
        Column::right("max", 10, 2),
        Column::right("units/s of table", 18, 1),
        Column::right("throttled", 9, 0),
        Column::right("retries", 8, 3),
        Column::right("failed", 7, 0),
        Column::right("behind", 7, 4),
    ];
    let keys = if s.skewed {
        format!("{:.0}% to key 'hot'", s.hot_share * 100.0)
    } else {
        format!("uniform over {} keys", thousands(u64::from(s.keys)))
    };
    let title = vec![
        Text::new(
            format!(
                " DynamoDB writer: {}/s, {keys} · reader {}/s ",
                thousands(u64::from(s.rate)),
                s.reads
            ),
            Style::strong(if s.skewed { "warn" } else { "dynamodb_writer" }),
        ),
        Text::new(format!(" {} ", w.status), DIM),
    ];
    let spark = Spark::of(
        Series::per_second(points(sparks, "writer"), |p| p.p99_us, "dynamodb_writer"),
        "p99/s",
        Some(Service::Dynamodb),
    );
    let table = Table {
        columns,
        rows,
        shrink: None,
        fill_last: false,
    };
    // On the bottom edge: the throttles by reason once there are any (the last error is then
    // one of them), else the last error; a small screen keeps the table's rows.
    let bottom = if w.throttled.is_empty() {
        w.last_error.as_deref().map(Text::last_error)
    } else {
        Some(Text::new(
            format!(" throttled by reason: {} ", reasons(&w.throttled)),
            Style::strong("warn"),
        ))
    };
    Pane {
        title,
        narrow: Some((
            100,
            vec![Text::new(
                " DynamoDB writer ",
                Style::strong("dynamodb_writer"),
            )],
        )),
        bottom,
        parts: vec![
            (Size::Spark, Part::Spark(spark)),
            (Size::Length(4), Part::Table(table)),
        ],
        min_inner: 2,
    }
}

/// A bar of `width` cells, `used` of `limit` filled.
fn bar(used: f64, limit: u64, width: usize) -> String {
    let filled = ((used / limit.max(1) as f64) * width as f64)
        .round()
        .clamp(0.0, width as f64) as usize;
    format!("{}{}", "█".repeat(filled), "░".repeat(width - filled))
}

fn heat_line(p: &PartitionFigures, hot: bool) -> Line {
    let style = if hot {
        Style::strong("error")
    } else {
        Style::plain("dynamodb_writer")
    };
    let mut line = vec![
        Text::new(format!(" p{:<2} ", p.index), if hot { style } else { DIM }),
        Text::new(bar(p.write_units, p.write_limit, 20), style),
        Text::new(
            format!(
                " {:>6}/{} WCU  {:>6}/{} RCU  throttled {}",
                units(p.write_units),
                thousands(p.write_limit),
                units(p.read_units),
                thousands(p.read_limit),
                thousands(p.throttled_last_second)
            ),
            TEXT,
        ),
    ];
    if hot {
        line.push(Text::new("  ◀ HOT", Style::strong("error")));
    }
    line
}

fn heat(s: &DynamoSnapshot) -> Pane {
    let hot = s.hot();
    // First a cell a partition, its shade its write units against its limit (the hot one in the
    // error colour), and what is hot; then a line a partition, where there is room.
    let mut strip = vec![Text::new(" ", DIM)];
    for p in &s.partitions {
        let f = p.write_units / p.write_limit.max(1) as f64;
        let cell = match f {
            f if f >= 0.95 => "██",
            f if f >= 0.6 => "▓▓",
            f if f >= 0.3 => "▒▒",
            _ => "░░",
        };
        let style = if hot == Some(p.index) {
            Style::strong("error")
        } else {
            Style::plain("dynamodb_writer")
        };
        strip.push(Text::new(cell, style));
        strip.push(Text::new(" ", DIM));
    }
    let t = &s.table_use;
    let of = |u: f64, cap: Option<u64>| match cap {
        Some(c) => format!(
            "{} of {} ({:.0}%)",
            units(u),
            thousands(c),
            100.0 * u / c.max(1) as f64
        ),
        None => format!("{} (on-demand)", units(u)),
    };
    strip.push(Text::new(
        format!(
            " table {} WCU/s, {} RCU/s",
            of(t.write_units, t.write_capacity),
            of(t.read_units, t.read_capacity)
        ),
        DIM,
    ));
    let summary = match hot.and_then(|i| s.partitions.get(i)) {
        Some(p) => Text::new(
            format!(
                " p{} HOT: {}/{} WCU in the last second, {} throttled attempts ({} in all)",
                p.index,
                units(p.write_units),
                thousands(p.write_limit),
                thousands(p.throttled_last_second),
                thousands(p.throttled)
            ),
            Style::strong("error"),
        ),
        None => Text::new(" no partition is hot", DIM),
    };
    let mut lines: Vec<Line> = vec![strip, vec![summary]];
    if s.partitions.len() <= LINES_OF_PARTITIONS {
        lines.extend(
            s.partitions
                .iter()
                .map(|p| heat_line(p, hot == Some(p.index))),
        );
    }
    Pane {
        title: vec![Text::new(
            format!(" Partitions ({}, latlab's model) ", s.partitions.len()),
            Style::strong("title"),
        )],
        narrow: Some((90, vec![Text::new(" Partitions ", Style::strong("title"))])),
        bottom: None,
        parts: vec![(Size::Fill(1), Part::Lines(lines))],
        min_inner: 1,
    }
}

fn cdc(c: &CdcFigures, sparks: &[(String, Vec<Point>)]) -> Pane {
    let style = if c.stopped {
        Style::crossed(item(c.how))
    } else {
        Style::strong(item(c.how))
    };
    let l = &c.latency;
    let lat = |us: u64| {
        if l.count == 0 {
            "-".to_string()
        } else {
            ms(us)
        }
    };
    let k = c.counts;
    let row = vec![
        Text::new(thousands(k.written), TEXT),
        Text::new(thousands(k.received), TEXT),
        Text::new(thousands(k.unread), TEXT),
        flag(k.lost, "error"),
        Text::new(lat(l.p50_us), TEXT),
        Text::new(lat(l.p99_us), TEXT),
        Text::new(lat(l.max_us), TEXT),
        Text::new(thousands(c.calls), TEXT),
        flag(c.sdk.counters.throttles, "warn"),
        Text::new(thousands(c.sdk.counters.retries), TEXT),
        flag(k.duplicates, "warn"),
    ];
    let columns = vec![
        Column::right("written", 9, 0),
        Column::right("received", 9, 0),
        Column::right("unread", 8, 0),
        Column::right("lost", 5, 0),
        Column::right("p50", 10, 0),
        Column::right("p99", 10, 0),
        Column::right("max", 10, 2),
        Column::right("calls", 8, 3),
        Column::right("throttled", 9, 1),
        Column::right("retries", 8, 4),
        Column::right("dup", 5, 5),
    ];
    let title = vec![
        Text::new(
            format!(" DynamoDB {}: {} ", c.name, c.how.describe()),
            style,
        ),
        Text::new(format!(" {} ", c.status), DIM),
    ];
    let spark = Spark::of(
        Series::per_second(points(sparks, &c.name), |p| p.p99_us, item(c.how)),
        "p99/s",
        Some(Service::Dynamodb),
    );
    Pane {
        narrow: Some((
            100,
            vec![Text::new(format!(" DynamoDB {} ", c.name), style)],
        )),
        bottom: c.last_error.as_deref().map(Text::last_error),
        min_inner: 2,
        ..Pane::spark_over_row(title, (Size::Spark, spark), columns, row)
    }
}

fn info(s: &DynamoSnapshot) -> Vec<Line> {
    let key = |k: &str| Text::new(k, Style::strong("accent"));
    let dim = |t: String| Text::new(t, DIM);
    vec![vec![
        key(" H"),
        dim(format!(
            " {} ",
            if s.skewed { "hot key" } else { "uniform" }
        )),
        key("</>"),
        dim(format!(" {}/s ", thousands(u64::from(s.rate)))),
        key("M"),
        dim(format!(
            " {} ",
            match s.billing {
                Billing::OnDemand => "on-demand",
                Billing::Provisioned { .. } => "provisioned",
            }
        )),
        key("U/D"),
        dim(" capacity ".into()),
        key("y/Y"),
        dim(" stream readers ".into()),
        key("d"),
        dim(format!(
            " {} reads · ",
            if s.consistent { "strong" } else { "eventual" }
        )),
        Text::new(
            format!("table {} · {}", s.table, s.billing.describe()),
            TEXT,
        ),
    ]]
}

pub(super) const COLOURS: &[Colour] = &[
    Colour {
        item: "dynamodb_writer",
        what: "the DynamoDB writer's sparkline and the partition heat strip",
        dark: "#61afef",
        light: "#0550ae",
    },
    Colour {
        item: "dynamodb_reader",
        what: "the DynamoDB reader's pane",
        dark: "#98c379",
        light: "#116329",
    },
    Colour {
        item: "dynamodb_streams",
        what: "sparklines and names of DynamoDB Streams pollers",
        dark: "#e5a45c",
        light: "#bc4c00",
    },
    Colour {
        item: "dynamodb_lambda",
        what: "sparklines and names of Lambda on a DynamoDB stream",
        dark: "#c678dd",
        light: "#8250df",
    },
    Colour {
        item: "dynamodb_fan_out",
        what: "sparklines and names of fan-out consumers on the table's Kinesis destination",
        dark: "#56b6c2",
        light: "#0a7b83",
    },
];

impl crate::labs::Shown for super::DynamoLab {
    const KEYS: &'static [crate::lab_kit::view::keys::LabKey<super::Command>] = super::keys::KEYS;

    fn view(snap: &DynamoSnapshot, history: Option<&History>) -> LabView {
        tab(snap, history.map_or(&[][..], |h| h.as_slice()))
    }

    fn header(s: &DynamoSnapshot) -> Vec<HeaderPart> {
        if s.unavailable.is_some() {
            return Vec::new();
        }
        let hot = s.hot();
        vec![HeaderPart {
            text: match hot {
                Some(i) => format!("{} · partition p{i} HOT", s.table),
                None => format!("{} · {} partitions", s.table, s.partitions.len()),
            },
            strong: hot.is_some(),
            rank: 3,
        }]
    }

    fn status(s: &DynamoSnapshot) -> String {
        if let Some(why) = &s.unavailable {
            return format!(" DynamoDB not running: {why}");
        }
        format!(
            " DynamoDB: partitions as latlab models them, units as DynamoDB answered them; every change counted by seq (received + lost + unread = written); SDK {}",
            crate::aws::RetrySettings::default().describe()
        )
    }

    fn brief(s: &DynamoSnapshot) -> Vec<Vec<Text>> {
        let lab = |kind: &'static str| Text::new("DynamoDB", Style::strong(kind));
        let w = &s.writer;
        let mut rows = vec![brief_row(
            lab("dynamodb_writer"),
            "PutItem",
            &w.latency,
            w.written,
            (
                format!(
                    "throttled {} · failed {}",
                    thousands(w.throttled_attempts()),
                    thousands(w.failed)
                ),
                w.failed > 0 || w.throttled_attempts() > 0,
            ),
        )];
        for c in &s.cdc {
            rows.push(brief_row(
                lab(item(c.how)),
                c.name.clone(),
                &c.latency,
                c.counts.received,
                (
                    format!(
                        "unread {} · lost {}",
                        thousands(c.counts.unread),
                        thousands(c.counts.lost)
                    ),
                    c.counts.lost > 0,
                ),
            ));
        }
        rows
    }

    fn min_rows(s: &DynamoSnapshot) -> u16 {
        // The writer's pane (borders, a row of sparkline, its table), the heat strip's two
        // lines, a pane per change consumer, the settings.
        (2 + 1 + 4) + (2 + 2) + s.cdc.len() as u16 * (2 + 1 + 2) + 1
    }

    fn progress(s: &DynamoSnapshot) -> Option<String> {
        Some(format!(
            "DynamoDB written {} | throttled {} | hot {}",
            s.writer.written,
            s.writer.throttled_attempts(),
            s.hot().map_or("-".to_string(), |i| format!("p{i}"))
        ))
    }
}
