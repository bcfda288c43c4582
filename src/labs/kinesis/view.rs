//! What the Kinesis tab shows, as data (`crate::lab_kit::view`): a pane per consumer type, each a
//! sparkline of the pane's p99 per second over a table of its consumers and a line of what
//! matters for that type, with the shard's GetRecords rate against its limit in the titles of
//! the panes that poll.

use super::config::ConsumerKind;
use super::snapshot::{ConsumerSnapshot, KinesisSnapshot};
use super::state::UNSUPPORTED;
use crate::lab_kit::view::{
    Block, Column, HeaderPart, LabView, Line, Pane, Part, Series, Shrink, Size, Spark, Style,
    Table, Text, brief_row,
};
use crate::metrics::Point;
use latlab_core::services::Service;
use latlab_core::units::{fmt_rate, format_bytes, ms, short_ms, thousands};

const TEXT: Style = Style::plain("text");
const DIM: Style = Style::plain("dim");

/// The panes, one per consumer type, in screen order.
pub const PANES: &[(ConsumerKind, &str)] = &[
    (ConsumerKind::Efo, "Enhanced fan-out: SDK SubscribeToShard"),
    (ConsumerKind::LambdaEfo, "Lambda on enhanced fan-out"),
    (
        ConsumerKind::Poller,
        "Shared throughput: GetRecords pollers",
    ),
    (
        ConsumerKind::Kcl,
        "Kinesis Client Library: GetRecords, then an idle time",
    ),
    (
        ConsumerKind::LambdaStandard,
        "Lambda on a standard iterator (polls GetRecords)",
    ),
];

/// The theme item a consumer kind's sparklines and names are coloured by.
pub fn kind_item(kind: ConsumerKind) -> &'static str {
    match kind {
        ConsumerKind::Efo => "fan_out",
        ConsumerKind::LambdaEfo | ConsumerKind::LambdaStandard => "lambda",
        ConsumerKind::Poller | ConsumerKind::Kcl => "poller",
    }
}

/// The tab, as data (a `LabView`): `sparks` are each consumer's last seconds (in snapshot order), `read_rate`
/// the shard's GetRecords calls each second.
pub fn tab(k: &KinesisSnapshot, sparks: &[Vec<Point>], read_rate: &[f64]) -> LabView {
    let blocks: Vec<(Size, Block)> = PANES
        .iter()
        .filter_map(|(kind, title)| {
            let members: Vec<usize> = k
                .consumers
                .iter()
                .enumerate()
                .filter(|(_, c)| c.kind == *kind)
                .map(|(i, _)| i)
                .collect();
            if members.is_empty() {
                return None;
            }
            // Its borders, a table header, a row per consumer and one extra line; the rows
            // left go to the sparklines.
            let fixed = 2 + 1 + members.len() as u16 + 1;
            Some((
                Size::Rows { fixed },
                Block::Pane(pane(k, sparks, read_rate, *kind, title, &members)),
            ))
        })
        .collect();
    let cost_on = blocks.len().checked_sub(1);
    LabView { blocks, cost_on }
}

fn pane(
    k: &KinesisSnapshot,
    sparks: &[Vec<Point>],
    read_rate: &[f64],
    kind: ConsumerKind,
    title: &str,
    members: &[usize],
) -> Pane {
    let item = kind_item(kind);
    let polls = kind.polls();
    let mut full = vec![Text::new(format!(" {title} "), Style::strong("title"))];
    // On a narrow screen the title's first words and a short gauge, so that OVER stays in view.
    let narrow = polls.then(|| {
        let short = title.split(':').next_back().unwrap_or(title).trim();
        let short = short.split(" (").next().unwrap_or(short);
        let line = vec![
            Text::new(format!(" {short} "), Style::strong("title")),
            read_rate_gauge(k, true),
        ];
        full.push(read_rate_gauge(k, false));
        // Its borders' corners and a cell beside them.
        let width = full.iter().map(|t| t.text.chars().count()).sum::<usize>() as u16 + 4;
        (width, line)
    });
    let title = full;
    // Per second: the highest p99 among the pane's consumers.
    let spark = Spark {
        series: members
            .iter()
            .filter_map(|&i| sparks.get(i))
            .map(|points| Series {
                values: points
                    .iter()
                    .map(|p| (p.count > 0).then_some(p.p99_us))
                    .collect(),
                item,
            })
            .collect(),
        item,
        metric: "p99/s",
        marks: Some(Service::Kinesis),
    };
    // One name width for every pane, so the columns line up down the screen.
    let name_w = k
        .consumers
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(8)
        .clamp(8, 28) as u16;
    let mut columns = CONSUMER_COLUMNS.to_vec();
    columns[0].width = name_w;
    let table = Table {
        columns,
        rows: members
            .iter()
            .map(|&i| consumer_cells(&k.consumers[i], item))
            .collect(),
        // The names narrow to 14 (so "get_records 2" stays whole) at rank 7.
        shrink: Some(Shrink {
            column: 0,
            min: 14,
            rank: 7,
        }),
        fill_last: true,
    };
    Pane {
        title,
        narrow,
        bottom: None,
        parts: vec![
            (Size::Spark, Part::Spark(spark)),
            (Size::Length(1 + members.len() as u16), Part::Table(table)),
            (
                Size::Min(0),
                Part::Lines(vec![extra_line(k, read_rate, kind, members)]),
            ),
        ],
        min_inner: 1,
    }
}

/// "GetRecords 5.6/s of 5 per shard": the cause of throttling, on screen when it happens; a bar
/// whose mark is the limit, with a cell past the mark once the rate is over it. `short`: the
/// words a narrow title has room for (`reads 5.6/s of 5`).
fn read_rate_gauge(k: &KinesisSnapshot, short: bool) -> Text {
    let rate = k.get_records_calls_per_sec;
    let limit = k.get_records_limit_per_sec as f64;
    let over = rate > limit;
    let bar_len = 10usize;
    let mark = bar_len / 2;
    let mut filled = ((rate / (limit * 2.0)) * bar_len as f64)
        .round()
        .clamp(0.0, bar_len as f64) as usize;
    if over {
        // Over the limit by any amount: at least one cell past the mark.
        filled = filled.max(mark + 2);
    }
    let bar: String = (0..bar_len)
        .map(|i| {
            if i == mark {
                '│'
            } else if i < filled {
                '█'
            } else {
                '░'
            }
        })
        .collect();
    let over_text = if over { " OVER" } else { "" };
    let text = if short {
        format!(
            " reads {rate:.1}/s of {} {bar}{over_text} ",
            k.get_records_limit_per_sec
        )
    } else {
        format!(
            " GetRecords {rate:.1}/s of {} per shard {bar}{over_text} ",
            k.get_records_limit_per_sec
        )
    };
    Text::new(
        text,
        if over {
            Style::strong("gauge_over")
        } else {
            Style::plain("gauge_ok")
        },
    )
}

/// The consumer table's columns. What fits, at one cell of spacing: status, the retry quota,
/// p99.9, acked, behind and retries go first, then the names narrow, then p90, received, max,
/// dup, unread and lost go, each whole; the name, p50, p99, throttled and escaped (what
/// throttling is read by) always stay. acked = received + lost + unread; behind is the service's
/// MillisBehindLatest.
const CONSUMER_COLUMNS: [Column; 17] = [
    Column::left("consumer", 8, 0),
    Column::right("p50", 11, 0),
    Column::right("p90", 11, 6),
    Column::right("p99", 11, 0),
    Column::right("p99.9", 11, 11),
    Column::right("max", 11, 4),
    Column::right("acked", 8, 10),
    Column::right("received", 8, 5),
    Column::right("lost", 5, 1),
    Column::right("unread", 6, 2),
    Column::right("behind", 9, 9),
    Column::right("dup", 3, 3),
    Column::right("throttled", 9, 0),
    Column::right("retries", 7, 8),
    Column::right("escaped", 7, 0),
    Column::right("quota", 6, 12),
    Column::left("status", 13, 13),
];

/// A consumer's cells, one per column of the consumer table.
fn consumer_cells(c: &ConsumerSnapshot, item: &'static str) -> Vec<Text> {
    let a = &c.arrival_to_receive;
    let stopped = c.stopped_at_secs.is_some();
    let name_style = if stopped {
        Style::crossed("dim")
    } else {
        Style::strong(item)
    };
    let num = |v: u64, bad: bool| {
        Text::new(
            thousands(v),
            if bad { Style::strong("error") } else { TEXT },
        )
    };
    let lat = |us: u64| {
        Text::new(
            if a.count == 0 {
                "-".to_string()
            } else {
                ms(us)
            },
            TEXT,
        )
    };
    let warn = |v: u64| {
        Text::new(
            thousands(v),
            if v > 0 { Style::plain("warn") } else { TEXT },
        )
    };
    let sdk = &c.sdk.counters;
    let quota = match sdk.quota_left {
        Some(q) => Text::new(
            thousands(q),
            if q < 100 { Style::strong("error") } else { DIM },
        ),
        None => Text::new("none", DIM),
    };
    let status = if stopped {
        "stopped".to_string()
    } else {
        c.status.clone()
    };
    vec![
        Text::new(c.name.clone(), name_style),
        lat(a.p50_us),
        lat(a.p90_us),
        lat(a.p99_us),
        lat(a.p999_us),
        lat(a.max_us),
        num(c.counts.acknowledged, false),
        num(c.counts.received, false),
        num(c.counts.lost, c.counts.lost > 0),
        warn(c.counts.unread),
        Text::new(
            c.millis_behind
                .map_or("-".into(), |b| short_ms(b.max(0) as u64 * 1000)),
            if c.millis_behind.unwrap_or(0) > 1000 {
                Style::plain("warn")
            } else {
                TEXT
            },
        ),
        num(c.counts.duplicates, c.counts.duplicates > 0),
        warn(sdk.throttles),
        warn(sdk.retries),
        num(sdk.escaped_total(), sdk.escaped_total() > 0),
        quota,
        Text::new(status, DIM),
    ]
}

/// The line under a pane's table: what matters most for its consumer type.
fn extra_line(
    k: &KinesisSnapshot,
    read_rate: &[f64],
    kind: ConsumerKind,
    members: &[usize],
) -> Line {
    // A consumer the endpoint cannot serve says so here, whatever width cuts the status column.
    if let Some(c) = members
        .iter()
        .map(|&i| &k.consumers[i])
        .find(|c| c.status.starts_with(UNSUPPORTED))
    {
        return vec![Text::new(
            format!(" {}: {}", c.name, c.status),
            Style::strong("error"),
        )];
    }
    match kind {
        ConsumerKind::Poller | ConsumerKind::Kcl => {
            let recent: Vec<u64> = read_rate
                .iter()
                .rev()
                .take(30)
                .rev()
                .map(|r| (r * 10.0) as u64)
                .collect();
            let over = recent
                .iter()
                .filter(|r| **r > k.get_records_limit_per_sec as u64 * 10)
                .count();
            let first = &k.consumers[members[0]];
            let held: u64 = members
                .iter()
                .map(|&i| k.consumers[i].sdk.counters.client_waits)
                .sum();
            // The figures first, the settings after: a narrow screen cuts the settings.
            let mut line = vec![Text::new(
                format!(
                    " shard over {} calls/s in {over} of the last {} s",
                    k.get_records_limit_per_sec,
                    recent.len()
                ),
                if over > 0 { Style::plain("warn") } else { DIM },
            )];
            if held > 0 {
                line.push(Text::new(
                    format!(" · {} held back by the SDK's rate limiter", thousands(held)),
                    Style::plain("accent"),
                ));
            }
            line.push(Text::new(format!(" · {}", first.detail), DIM));
            line
        }
        ConsumerKind::LambdaStandard | ConsumerKind::LambdaEfo => {
            let c = &k.consumers[members[0]];
            vec![Text::new(
                format!(" {} · batches {}", c.detail, super::snapshot::batch_line(c)),
                DIM,
            )]
        }
        ConsumerKind::Efo => {
            let c = &k.consumers[members[0]];
            let subs = c.events.get("subscriptions").copied().unwrap_or(0);
            vec![Text::new(
                format!(" {} · {subs} subscription(s) · {}", c.detail, c.status),
                DIM,
            )]
        }
    }
}

pub(super) const COLOURS: &[crate::lab_kit::view::Colour] = &[
    crate::lab_kit::view::Colour {
        item: "fan_out",
        what: "sparklines and marks of enhanced fan-out consumers",
        dark: "#56b6c2",
        light: "#0a7b83",
    },
    crate::lab_kit::view::Colour {
        item: "poller",
        what: "sparklines and marks of GetRecords pollers",
        dark: "#e5a45c",
        light: "#bc4c00",
    },
    crate::lab_kit::view::Colour {
        item: "lambda",
        what: "sparklines and marks of Lambda consumers",
        dark: "#c678dd",
        light: "#8250df",
    },
];

impl crate::labs::Shown for super::KinesisLab {
    const KEYS: &'static [crate::lab_kit::view::keys::LabKey<super::Command>] = super::keys::KEYS;

    fn view(snap: &KinesisSnapshot, history: Option<&super::KinesisHistory>) -> LabView {
        match history {
            Some(h) => tab(snap, &h.consumers, &h.read_rate),
            None => tab(snap, &[], &[]),
        }
    }

    /// What is sent, the shard's GetRecords calls against its limit, and the readers' throttles
    /// and escaped errors.
    fn progress(k: &KinesisSnapshot) -> Option<String> {
        let throttled: u64 = k.consumers.iter().map(|c| c.sdk.counters.throttles).sum();
        let escaped: u64 = k
            .consumers
            .iter()
            .map(|c| c.sdk.counters.escaped_total())
            .sum();
        Some(format!(
            "sent {} | GetRecords {:.1}/s of {} | throttled {throttled} | escaped {escaped}",
            k.producer.acked, k.get_records_calls_per_sec, k.get_records_limit_per_sec
        ))
    }

    /// Its rows of the overview's brief table (lab, what, p50, p99, max, count, counts): a row per
    /// consumer.
    fn brief(k: &KinesisSnapshot) -> Vec<Vec<Text>> {
        let mut rows = Vec::new();
        for c in &k.consumers {
            let sdk = &c.sdk.counters;
            let bad = sdk.throttles > 0
                || c.counts.lost > 0
                || c.counts.duplicates > 0
                || c.counts.unread > 0;
            // A consumer behind says so first: the column is cut on small screens.
            let behind = if c.counts.unread > 0 {
                format!("unread {} · ", thousands(c.counts.unread))
            } else {
                String::new()
            };
            let note = format!(
                "{behind}throttled {} · escaped {} · lost {} · dup {}",
                thousands(sdk.throttles),
                thousands(sdk.escaped_total()),
                thousands(c.counts.lost),
                thousands(c.counts.duplicates),
            );
            rows.push(brief_row(
                Text::new("Kinesis", Style::strong(kind_item(c.kind))),
                c.name.clone(),
                &c.arrival_to_receive,
                c.counts.received,
                (note, bad),
            ));
        }
        rows
    }

    /// Rows the tab needs to show every pane with at least one row of sparkline.
    fn min_rows(k: &KinesisSnapshot) -> u16 {
        PANES
            .iter()
            .map(|(kind, _)| k.consumers.iter().filter(|c| c.kind == *kind).count() as u16)
            .filter(|n| *n > 0)
            .map(|n| 2 + 1 + n + 1 + 1)
            .sum()
    }

    /// Its parts of the header: the stream and its shards, and the producer's rate asked against
    /// achieved (with the first cause of a shortfall).
    fn header(k: &KinesisSnapshot) -> Vec<HeaderPart> {
        let mut parts = Vec::new();
        // While a reshard is under way the stream says so (the shard count is the open one).
        parts.push(HeaderPart {
            text: format!(
                "{} · {} shard{}{}",
                k.stream,
                k.shards,
                if k.shards == 1 { "" } else { "s" },
                if k.updating { " · UPDATING" } else { "" }
            ),
            strong: k.updating,
            rank: 3,
        });
        let p = &k.producer;
        // A reading host asks for no rate: what it reads comes from another host's producer.
        if p.elsewhere.is_some() {
            let foreign: u64 = k
                .consumers
                .iter()
                .map(|c| c.foreign_records)
                .max()
                .unwrap_or(0);
            parts.push(HeaderPart {
                text: format!("producer on another host · {} rec read", thousands(foreign)),
                strong: false,
                rank: 2,
            });
            return parts;
        }
        // Asked against achieved, over whole seconds; a shortfall the measurement can tell says
        // by how much and its first measured cause.
        let short = p.shortfall();
        let achieved = match &short {
            Some(s) => format!("{} achieved, {}", fmt_rate(p.achieved_rate), s.describe(1)),
            None if p.rate_resolution().is_none() => "achieved: measuring".to_string(),
            None => format!("{} achieved", fmt_rate(p.achieved_rate)),
        };
        parts.push(HeaderPart {
            text: format!(
                "{} rec/s asked · {achieved} · {}",
                fmt_rate(p.asked_rate),
                format_bytes(p.payload_bytes)
            ),
            strong: short.is_some(),
            rank: 2,
        });
        parts
    }

    /// What the tab's figures rest on: the SDK's retry settings.
    fn status(k: &KinesisSnapshot) -> String {
        // A producer that cannot put says so first: without it, nothing below means anything.
        match (&k.producer.unsupported, &k.producer.elsewhere) {
            (Some(why), _) => format!(" producer stopped: {why}"),
            (None, Some(_)) => format!(
                " producer on another host (--no-producer) · SDK: {}",
                k.retry
            ),
            (None, None) => format!(" SDK: {}", k.retry),
        }
    }
}

/// Its panes as a person sees them: rendered from its fixed sample and read back as text.
#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
