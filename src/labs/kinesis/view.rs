//! What the Kinesis tab shows, as data (`crate::view`): a pane per consumer type, each a
//! sparkline of the pane's p99 per second over a table of its consumers and a line of what
//! matters for that type, with the shard's GetRecords rate against its limit in the titles of
//! the panes that poll.

use super::config::ConsumerKind;
use super::snapshot::{ConsumerSnapshot, KinesisSnapshot};
use super::state::UNSUPPORTED;
use crate::metrics::Point;
use crate::services::Service;
use crate::units::{fmt_rate, format_bytes, ms, short_ms, thousands};
use crate::view::{
    Block, Column, HeaderPart, LabView, Line, Pane, Part, Series, Shrink, Size, Spark, Style,
    Table, Text, brief_latency, brief_note,
};

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
        ConsumerKind::LambdaStandard,
        "Lambda on a standard iterator (polls GetRecords)",
    ),
];

/// The theme item a consumer kind's sparklines and names are coloured by.
pub fn kind_item(kind: ConsumerKind) -> &'static str {
    match kind {
        ConsumerKind::Efo => "fan_out",
        ConsumerKind::LambdaEfo | ConsumerKind::LambdaStandard => "lambda",
        ConsumerKind::Poller => "poller",
    }
}

/// The tab's model: `sparks` are each consumer's last seconds (in snapshot order), `read_rate`
/// the shard's GetRecords calls each second.
pub fn model(k: &KinesisSnapshot, sparks: &[Vec<Point>], read_rate: &[f64]) -> LabView {
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
    let mut title = vec![Text::new(format!(" {title} "), Style::strong("title"))];
    if kind == ConsumerKind::Poller || kind == ConsumerKind::LambdaStandard {
        title.push(read_rate_gauge(k));
    }
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
        // The names narrow to 14 (so "get_records 2" stays whole) at rank 4.
        shrink: Some(Shrink {
            column: 0,
            min: 14,
            rank: 4,
        }),
        fill_last: true,
    };
    Pane {
        title,
        narrow: None,
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

/// "shard reads 5.6/s of 5": the cause of throttling, on screen when it happens.
fn read_rate_gauge(k: &KinesisSnapshot) -> Text {
    let rate = k.get_records_calls_per_sec;
    let limit = k.get_records_limit_per_sec as f64;
    let over = rate > limit;
    let bar_len = 10usize;
    let filled = ((rate / (limit * 2.0)) * bar_len as f64)
        .round()
        .clamp(0.0, bar_len as f64) as usize;
    let mark = bar_len / 2;
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
    Text::new(
        format!(
            " GetRecords {rate:.1}/s of {} per shard {bar}{} ",
            k.get_records_limit_per_sec,
            if over { " OVER" } else { "" }
        ),
        if over {
            Style::strong("gauge_over")
        } else {
            Style::plain("gauge_ok")
        },
    )
}

/// The consumer table's columns. What fits, at one cell of spacing: status, the retry quota,
/// p99.9, acked, behind and retries go first, then the names narrow, then p90 and received go.
/// acked = received + lost + unread; behind is the service's MillisBehindLatest.
const CONSUMER_COLUMNS: [Column; 17] = [
    Column::left("consumer", 8, 0),
    Column::right("p50", 11, 0),
    Column::right("p90", 11, 3),
    Column::right("p99", 11, 0),
    Column::right("p99.9", 11, 8),
    Column::right("max", 11, 0),
    Column::right("acked", 8, 7),
    Column::right("received", 8, 2),
    Column::right("lost", 5, 0),
    Column::right("unread", 6, 0),
    Column::right("behind", 9, 6),
    Column::right("dup", 3, 0),
    Column::right("throttled", 9, 0),
    Column::right("retries", 7, 5),
    Column::right("escaped", 7, 0),
    Column::right("quota", 6, 9),
    Column::left("status", 13, 10),
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
        ConsumerKind::Poller => {
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

/// Its rows of the overview's brief table (lab, what, p50, p99, max, count, counts): a row per
/// consumer.
pub fn brief(k: &KinesisSnapshot) -> Vec<Vec<Text>> {
    let mut rows = Vec::new();
    for c in &k.consumers {
        let sdk = &c.sdk.counters;
        let mut cells = vec![
            Text::new("Kinesis", Style::strong(kind_item(c.kind))),
            Text::new(c.name.clone(), TEXT),
        ];
        cells.extend(brief_latency(&c.arrival_to_receive));
        cells.push(Text::new(thousands(c.counts.received), TEXT));
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
        cells.push(brief_note(
            format!(
                "{behind}throttled {} · escaped {} · lost {} · dup {}",
                thousands(sdk.throttles),
                thousands(sdk.escaped_total()),
                thousands(c.counts.lost),
                thousands(c.counts.duplicates),
            ),
            bad,
        ));
        rows.push(cells);
    }
    rows
}

/// Rows the tab needs to show every pane with at least one row of sparkline.
pub fn min_rows(k: &KinesisSnapshot) -> u16 {
    PANES
        .iter()
        .map(|(kind, _)| k.consumers.iter().filter(|c| c.kind == *kind).count() as u16)
        .filter(|n| *n > 0)
        .map(|n| 2 + 1 + n + 1 + 1)
        .sum()
}

/// Its parts of the header: the stream and its shards, and the producer's rate asked against
/// achieved (with the first cause of a shortfall).
pub fn header(k: &KinesisSnapshot) -> Vec<HeaderPart> {
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
pub fn status(k: &KinesisSnapshot) -> String {
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

/// Its panes as a person sees them: rendered from its fixed sample and read back as text.
#[cfg(test)]
mod tests {
    use crate::labs::LabKind;
    use crate::tui::app::{App, Tab};
    use crate::tui::fixture::screen;
    use crate::tui::theme::Theme;

    #[test]
    fn a_consumer_the_endpoint_cannot_serve_is_named_in_its_pane_at_any_width() {
        let mut view = crate::tui::fixture::lab_view(LabKind::Kinesis);
        let k = view.snapshot.kinesis.as_mut().unwrap();
        let efo = k
            .consumers
            .iter_mut()
            .find(|c| c.kind == crate::labs::kinesis::config::ConsumerKind::Efo)
            .unwrap();
        efo.status = format!(
            "{}: SubscribeToShard answered HTTP 500, not an AWS response",
            crate::labs::kinesis::state::UNSUPPORTED
        );
        let name = efo.name.clone();
        let app = App::new(Theme::dark());
        for width in [100u16, 200] {
            let screen = screen(&app, &view, (width, 50));
            assert!(
                screen.contains(&format!(
                    "{name}: not supported by this endpoint: SubscribeToShard"
                )),
                "at {width} columns:\n{screen}"
            );
        }
    }

    #[test]
    fn a_fault_is_marked_on_the_sparklines_and_said_on_the_status_line() {
        use crate::faults::{Kind, KindCounts};
        use crate::run::snapshot::FaultRow;
        let mut view = crate::tui::fixture::lab_view(LabKind::Kinesis);
        let now = view.snapshot.elapsed_secs;
        view.snapshot.faults.events.push(FaultRow {
            at_secs: now - 2.0,
            kind: Kind::KinesisStall,
            target: "GetRecords on shardId-000000000000".into(),
            recovered_secs: Some(3.0),
            failed: None,
        });
        view.snapshot.faults.counts = vec![(
            Kind::KinesisStall,
            KindCounts {
                fired: 1,
                recovered: 1,
                failed: 0,
            },
        )];
        let app = App::new(Theme::dark());
        let text = screen(&app, &view, (150, 40));
        assert!(text.contains("▼"), "{text}");
        assert!(
            text.contains(
                "kinesis.stall: GetRecords on shardId-000000000000 · recovered after 3,000.0 ms"
            ),
            "{text}"
        );
        assert!(text.contains("1 injected, 1 recovered"), "{text}");
        // A fault older than the sparklines' window leaves no marker; nor a line once it is old.
        view.snapshot.faults.events[0].at_secs = now - 500.0;
        let text = screen(&app, &view, (150, 40));
        assert!(!text.contains("▼"), "{text}");
    }

    #[test]
    fn the_fault_menu_offers_the_faults_of_the_labs_the_scenario_runs() {
        let view = crate::tui::fixture::lab_view(LabKind::Kinesis);
        let mut app = App::new(Theme::dark());
        app.sync_labs(&view.snapshot.labs());
        app.fault_menu = true;
        let text = screen(&app, &view, (120, 40));
        assert!(text.contains("inject a fault"), "{text}");
        assert!(text.contains("a  kinesis.reset-before"), "{text}");
        assert!(text.contains("j  kinesis.expire-iterators"), "{text}");
        assert!(
            !text.contains("s3.slow-down") && !text.contains("redis."),
            "{text}"
        );
        // With every lab, every kind has a letter of its own, and none is a key that closes the
        // menu.
        app.sync_labs(&crate::labs::LabKind::ALL);
        let items = app.menu_faults();
        assert_eq!(items.len(), crate::faults::Kind::ALL.len());
        let mut letters: Vec<char> = items.iter().map(|(c, _)| *c).collect();
        assert!(
            !letters.contains(&'f') && !letters.contains(&'q'),
            "{letters:?}"
        );
        letters.dedup();
        assert_eq!(letters.len(), items.len());
    }

    #[test]
    fn its_pane_shows_its_cost_and_follows_the_snapshot_and_the_prices() {
        let mut app = App::new(Theme::dark());
        // The demo stream, 1 shard: $0.0453 an hour at us-east-1's prices (cost.rs works it by
        // hand); at 2 shards one more shard-hour and one more consumer-shard-hour per fan-out
        // consumer: 0.0453078 + 0.015 + 2 × 0.015 = $0.0903 an hour.
        let mut view = crate::tui::fixture::lab_view(LabKind::Kinesis);
        app.tab = Tab::Lab(LabKind::Kinesis);
        let s = screen(&app, &view, (160, 50));
        assert!(
            s.contains("cost $0.0453/h · $33.07/mo (730 h) · list price, us-east-1, 2026-12-01"),
            "{s}"
        );
        view.snapshot.kinesis.as_mut().unwrap().shards = 2;
        assert!(screen(&app, &view, (160, 50)).contains("cost $0.0903/h"));
        // A price file of the user's changes the figure and says its region and date.
        let text = crate::cost::prices::BUILTIN[0]
            .1
            .replace("\nshard_hour = 0.015", "\nshard_hour = 0.1")
            .replace("taken = \"2026-12-01\"", "taken = \"2030-01-01\"");
        app.prices = Some(std::sync::Arc::new(
            crate::cost::Prices::parse(&text, "mine.toml").unwrap(),
        ));
        // 2 × 0.1 + 0.000252 + 0.06 + 0.0000558 = $0.2603 an hour.
        let s = screen(&app, &view, (160, 50));
        assert!(
            s.contains("cost $0.2603/h") && s.contains("2030-01-01"),
            "{s}"
        );
    }
}
