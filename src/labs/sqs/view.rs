//! What the SQS tab shows, as data (`crate::lab_kit::view`): a pane per consumer (its send -> receive
//! each second, and a row of its figures: the percentiles, the count that adds up, empty
//! receives, redeliveries, throttles), then the producer and the live settings.

use super::History;
use super::config::ConsumerKind;
use super::snapshot::{ConsumerFigures, SqsSnapshot};
use crate::lab_kit::view::{
    Block, Column, LabView, Line, Pane, Series, Size, Spark, Style, Text, brief_row,
};
use crate::metrics::Point;
use latlab_core::services::Service;
use latlab_core::units::{ms, thousands};

const TEXT: Style = Style::plain("text");
const DIM: Style = Style::plain("dim");

/// The theme item a consumer's series and name are coloured by (the lab's own, `COLOURS`).
fn item(kind: ConsumerKind) -> &'static str {
    match kind {
        ConsumerKind::LongPoll { wait_secs: 0 } | ConsumerKind::ShortPoll { .. } => {
            "sqs_short_poll"
        }
        ConsumerKind::LongPoll { .. } => "sqs_long_poll",
        ConsumerKind::Fifo { .. } => "sqs_fifo",
        ConsumerKind::Lambda { .. } => "sqs_lambda",
    }
}

/// A consumer's kind as its pane names it.
fn title_of(c: &ConsumerFigures, wait_secs: u32) -> String {
    match c.kind {
        ConsumerKind::LongPoll { .. } if wait_secs == 0 => {
            format!("SQS {}: short poll, back to back (wait 0 s)", c.name)
        }
        ConsumerKind::LongPoll { .. } => format!("SQS {}: long poll, {wait_secs} s wait", c.name),
        kind => format!("SQS {}: {}", c.name, kind.describe()),
    }
}

/// The tab, as data (a `LabView`): `sparks` are each consumer's last seconds of send -> receive.
pub fn tab(s: &SqsSnapshot, sparks: &[(String, Vec<Point>)]) -> LabView {
    if let Some(why) = &s.unavailable {
        return LabView {
            blocks: vec![(
                Size::Fill(1),
                Block::Message {
                    title: Text::new(" SQS: not running ", Style::strong("title")),
                    lines: vec![
                        Vec::new(),
                        vec![Text::new(format!(" {why}"), Style::strong("error"))],
                    ],
                },
            )],
            cost_on: None,
        };
    }
    // Each pane: its borders, the table's head and row; the rows left go to the sparklines.
    let mut blocks: Vec<(Size, Block)> = s
        .consumers
        .iter()
        .map(|c| (Size::Rows { fixed: 4 }, Block::Pane(pane(s, c, sparks))))
        .collect();
    blocks.push((Size::Length(1), Block::Lines(info(s))));
    LabView {
        blocks,
        cost_on: (!s.consumers.is_empty()).then_some(0),
    }
}

/// The columns of a consumer's row; the counts that add up always stay.
fn columns() -> Vec<Column> {
    vec![
        Column::right("sent", 8, 0),
        Column::right("received", 8, 0),
        Column::right("in flight", 9, 0),
        Column::right("unread", 7, 0),
        Column::right("lost", 5, 0),
        Column::right("p50", 11, 3),
        Column::right("p99", 11, 1),
        Column::right("p99.9", 11, 5),
        Column::right("max", 11, 2),
        Column::right("empty rcv", 9, 4),
        Column::right("rcv/msg", 7, 6),
        Column::right("redeliv", 7, 1),
        Column::right("vis out", 7, 5),
        Column::right("throttled", 9, 2),
        Column::right("retries", 7, 6),
    ]
}

fn row(c: &ConsumerFigures) -> Vec<Text> {
    let txt = |v: String| Text::new(v, TEXT);
    let flag = |n: u64, item: &'static str| {
        Text::new(thousands(n), if n > 0 { Style::strong(item) } else { TEXT })
    };
    let lat = |us: u64| {
        if c.latency.count == 0 {
            "-".to_string()
        } else {
            ms(us)
        }
    };
    let k = c.counts;
    vec![
        txt(thousands(k.sent)),
        txt(thousands(k.received)),
        txt(thousands(k.in_flight)),
        txt(thousands(k.unread)),
        flag(k.lost, "error"),
        txt(lat(c.latency.p50_us)),
        txt(lat(c.latency.p99_us)),
        txt(lat(c.latency.p999_us)),
        txt(lat(c.latency.max_us)),
        flag(c.empty_receives, "warn"),
        txt(c
            .receives_per_message()
            .map_or("-".into(), |r| format!("{r:.2}"))),
        flag(k.redelivered, "warn"),
        flag(c.visibility_ran_out, "warn"),
        flag(c.sdk.counters.throttles, "warn"),
        txt(thousands(c.sdk.counters.retries)),
    ]
}

fn pane(s: &SqsSnapshot, c: &ConsumerFigures, sparks: &[(String, Vec<Point>)]) -> Pane {
    let style = if c.stopped {
        Style::crossed(item(c.kind))
    } else {
        Style::strong(item(c.kind))
    };
    let title = vec![
        Text::new(format!(" {} ", title_of(c, s.wait_secs)), style),
        Text::new(format!(" {} ", c.status), DIM),
    ];
    let narrow = vec![Text::new(format!(" SQS {} ", c.name), style)];
    let bottom = c.last_error.as_deref().map(Text::last_error);
    let points = sparks
        .iter()
        .find(|(n, _)| *n == c.name)
        .map_or(&[][..], |(_, points)| points.as_slice());
    let spark = Spark::of(
        Series::per_second(points, |p| p.p99_us, item(c.kind)),
        "p99/s",
        Some(Service::Sqs),
    );
    Pane {
        narrow: Some((110, narrow)),
        bottom,
        min_inner: 2,
        ..Pane::spark_over_row(title, (Size::Spark, spark), columns(), row(c))
    }
}

/// The producer and the live settings, with their keys.
fn info(s: &SqsSnapshot) -> Vec<Line> {
    let key = |k: &str| Text::new(k, Style::strong("accent"));
    let dim = |t: String| Text::new(t, DIM);
    let p = &s.producer;
    let short = p.behind + p.failed;
    // One line, so that the overview's column keeps a row for every consumer's pane: the
    // settings the keys change, then the producer.
    vec![vec![
        key(" w"),
        dim(format!(" wait {} s ", s.wait_secs)),
        key("g/G"),
        dim(format!(" {} groups ", s.groups)),
        key("V"),
        dim(format!(" visibility {} s ", s.visibility_secs)),
        key("k/K"),
        dim(format!(
            " processing {} ",
            latlab_core::units::format_duration(std::time::Duration::from_millis(s.processing_ms))
        )),
        key("B"),
        dim(format!(
            " {} · ",
            if s.batching {
                "SendMessageBatch"
            } else {
                "SendMessage"
            }
        )),
        Text::new(
            format!(
                "producer {}/s to each queue, sent {}, send p50 {} p99 {}, throttled {}",
                s.rate,
                thousands(p.acknowledged),
                p.send_latency.ms(p.send_latency.p50_us),
                p.send_latency.ms(p.send_latency.p99_us),
                thousands(p.sdk.counters.throttles)
            ),
            TEXT,
        ),
        Text::new(
            if short > 0 {
                format!(", not sent {}", thousands(short))
            } else {
                String::new()
            },
            Style::strong("error"),
        ),
    ]]
}

/// Its sparklines as a history.
pub type Sparks = History;

/// The long poller answers when a message is there, as the pushed consumers do; the short
/// poller samples, as the pollers do: their defaults are those colours.
pub(super) const COLOURS: &[crate::lab_kit::view::Colour] = &[
    crate::lab_kit::view::Colour {
        item: "sqs_long_poll",
        what: "sparklines and names of SQS long pollers",
        dark: "#56b6c2",
        light: "#0a7b83",
    },
    crate::lab_kit::view::Colour {
        item: "sqs_short_poll",
        what: "sparklines and names of SQS short pollers (and long pollers set to wait 0 s)",
        dark: "#e5a45c",
        light: "#bc4c00",
    },
    crate::lab_kit::view::Colour {
        item: "sqs_fifo",
        what: "sparklines and names of SQS FIFO consumers",
        dark: "#88c0d0",
        light: "#0969da",
    },
    crate::lab_kit::view::Colour {
        item: "sqs_lambda",
        what: "sparklines and names of Lambda on an SQS queue",
        dark: "#c678dd",
        light: "#8250df",
    },
];

impl crate::labs::Shown for super::SqsLab {
    const KEYS: &'static [crate::lab_kit::view::keys::LabKey<super::Command>] = super::keys::KEYS;

    fn view(snap: &SqsSnapshot, history: Option<&History>) -> LabView {
        tab(snap, history.map_or(&[][..], |h| h.as_slice()))
    }

    fn progress(s: &SqsSnapshot) -> Option<String> {
        let received: u64 = s.consumers.iter().map(|c| c.counts.received).sum();
        let empty: u64 = s.consumers.iter().map(|c| c.empty_receives).sum();
        Some(format!(
            "SQS sent {} | received {received} | empty receives {empty} | throttled {}",
            s.producer.acknowledged, s.producer.sdk.counters.throttles
        ))
    }

    /// Its rows of the overview's brief table (lab, what, p50, p99, max, count, counts): a row per
    /// consumer.
    fn brief(s: &SqsSnapshot) -> Vec<Vec<Text>> {
        s.consumers
            .iter()
            .map(|c| {
                let note = format!(
                    "empty {} · redelivered {} · throttled {}",
                    thousands(c.empty_receives),
                    thousands(c.counts.redelivered),
                    thousands(c.sdk.counters.throttles)
                );
                brief_row(
                    Text::new("SQS", Style::strong(item(c.kind))),
                    c.name.clone(),
                    &c.latency,
                    c.counts.received,
                    (note, c.counts.lost > 0 || c.counts.redelivered > 0),
                )
            })
            .collect()
    }

    /// Rows the tab needs: a pane per consumer (border, a row of sparkline, its table) and the info
    /// line.
    fn min_rows(s: &SqsSnapshot) -> u16 {
        s.consumers.len().max(1) as u16 * (2 + 1 + 2) + 1
    }

    /// What the tab's figures rest on.
    fn status(s: &SqsSnapshot) -> String {
        if let Some(why) = &s.unavailable {
            return format!(" SQS not running: {why}");
        }
        let lost: u64 = s.consumers.iter().map(|c| c.counts.lost).sum();
        format!(
            " SQS: each consumer on its own queue, every message counted by seq (received + lost + in flight + unread = sent){}; SDK {}",
            if lost > 0 {
                format!(", {} lost", thousands(lost))
            } else {
                String::new()
            },
            crate::aws::RetrySettings::default().describe()
        )
    }
}
