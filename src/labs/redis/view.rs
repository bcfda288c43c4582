//! What the Redis tab shows, as data (`crate::lab_kit::view`): a pane per method (its lag's sparkline
//! and percentiles), the live settings and the pair measured; or, when the lab could not start,
//! why.

use super::Method;
use super::snapshot::RedisSnapshot;
use crate::lab_kit::view::{
    Block, Column, LabView, Line, Pane, Series, Size, Spark, Style, Text, brief_row,
};
use crate::metrics::Point;
use latlab_core::services::Service;
use latlab_core::units::{format_bytes, ms, thousands};

const TEXT: Style = Style::plain("text");
const DIM: Style = Style::plain("dim");

/// The tab, as data (a `LabView`): `sparks` are each method's last seconds of lag.
pub fn tab(r: &RedisSnapshot, sparks: &[(Method, Vec<Point>)]) -> LabView {
    if let Some(why) = &r.unavailable {
        return LabView {
            blocks: vec![(
                Size::Fill(1),
                Block::Message {
                    title: Text::new(
                        " Redis replication lag: not running ",
                        Style::strong("title"),
                    ),
                    lines: vec![
                        Vec::new(),
                        vec![Text::new(format!(" {why}"), Style::strong("error"))],
                    ],
                },
            )],
            cost_on: None,
        };
    }
    let mut blocks: Vec<(Size, Block)> = [Method::NewClients, Method::Persistent, Method::Offset]
        .into_iter()
        .map(|method| (Size::Fill(1), Block::Pane(pane(r, sparks, method))))
        .collect();
    blocks.push((Size::Length(2), Block::Lines(info(r))));
    LabView {
        blocks,
        cost_on: Some(2),
    }
}

/// One method's pane: its lag each second and its percentiles since the start.
fn pane(r: &RedisSnapshot, sparks: &[(Method, Vec<Point>)], method: Method) -> Pane {
    let m = r.methods.iter().find(|x| x.method == method);
    // Why its last try failed, on the pane's bottom edge.
    let bottom = m
        .filter(|m| m.errors > 0)
        .and_then(|m| m.last_error.as_deref())
        .map(Text::last_error);
    let points = sparks
        .iter()
        .find(|(x, _)| *x == method)
        .map_or(&[][..], |(_, points)| points.as_slice());
    let spark = Spark::of(
        Series::per_second(points, |p| p.max_us, "redis"),
        "max/s",
        Some(Service::Redis),
    );
    // p99.9, the mean, p90 and the try count go first when the pane is narrow.
    let mut columns = vec![
        Column::right("p50", 11, 0),
        Column::right("p90", 11, 4),
        Column::right("p99", 11, 0),
        Column::right("p99.9", 11, 6),
        Column::right("max", 11, 0),
        Column::right("mean", 11, 5),
        Column::right("tries", 7, 3),
        Column::right("errors", 7, 0),
    ];
    if method == Method::Offset {
        columns.push(Column::right("bytes behind p50", 17, 0));
    }
    let txt = |v: String| Text::new(v, TEXT);
    let cells = match m {
        Some(m) if m.tries > 0 || m.errors > 0 => {
            let l = &m.lag;
            let mut cells = vec![
                txt(l.ms(l.p50_us)),
                txt(l.ms(l.p90_us)),
                txt(l.ms(l.p99_us)),
                txt(l.ms(l.p999_us)),
                txt(l.ms(l.max_us)),
                txt(ms(l.mean_us as u64)),
                txt(thousands(m.tries)),
                Text::errors(m.errors),
            ];
            if method == Method::Offset {
                cells.push(txt(m
                    .behind_bytes
                    .as_ref()
                    .map_or("-".to_string(), |b| format_bytes(b.p50_bytes))));
            }
            cells
        }
        _ => columns.iter().map(|_| txt("-".into())).collect(),
    };
    let title = vec![Text::new(
        format!(" {} ", method.label()),
        Style::strong("title"),
    )];
    Pane {
        bottom,
        ..Pane::spark_over_row(title, (Size::Min(1), spark), columns, cells)
    }
}

/// The live settings (with their keys) and the pair measured.
fn info(r: &RedisSnapshot) -> Vec<Line> {
    let link = r.link.as_ref().map_or("a user's Redis".to_string(), |l| {
        format!("link {} (+{} ms each way)", l.link, l.latency_ms)
    });
    let on = |b: bool| if b { "on" } else { "off" };
    let key = |k: &str| Text::new(k, Style::strong("accent"));
    let warm = |b: bool| if b { Style::strong("warn") } else { DIM };
    vec![
        vec![
            key(" v"),
            Text::new(format!(" value {}   ", format_bytes(r.value_bytes)), DIM),
            key("c"),
            Text::new(format!(" CPU load {}   ", on(r.cpu_load)), warm(r.cpu_load)),
            key("m"),
            Text::new(
                format!(" memory full {}   ", on(r.memory_full)),
                warm(r.memory_full),
            ),
            Text::new(format!("· {}", r.status), DIM),
        ],
        vec![Text::new(
            format!(" primary {} → replica {} · {link}", r.primary, r.replica),
            DIM,
        )],
    ]
}

/// Rows the tab needs: three panes (one per method) with a row of sparkline each, and the info
/// lines.
pub const MIN_ROWS: u16 = 3 * (2 + 1 + 2) + 2;

pub(super) const COLOURS: &[crate::lab_kit::view::Colour] = &[crate::lab_kit::view::Colour {
    item: "redis",
    what: "Redis replication lag series",
    dark: "#e06c75",
    light: "#a40e26",
}];

impl crate::labs::Shown for super::RedisLab {
    const KEYS: &'static [crate::lab_kit::view::keys::LabKey<super::Command>] = super::keys::KEYS;

    fn view(snap: &RedisSnapshot, history: Option<&super::History>) -> LabView {
        tab(snap, history.map_or(&[][..], |h| h.as_slice()))
    }

    fn min_rows(_snap: &RedisSnapshot) -> u16 {
        MIN_ROWS
    }

    /// Its rows of the overview's brief table (lab, what, p50, p99, max, count, counts): a row per
    /// method, or one saying why the lab is not running.
    fn brief(r: &RedisSnapshot) -> Vec<Vec<Text>> {
        let label = Text::new("Redis", Style::strong("redis"));
        let txt = |v: String| Text::new(v, TEXT);
        match &r.unavailable {
            Some(why) => vec![vec![
                label,
                Text::new("not running", Style::strong("error")),
                txt("-".into()),
                txt("-".into()),
                txt("-".into()),
                txt("-".into()),
                Text::new(why.clone(), Style::strong("error")),
            ]],
            None => r
                .methods
                .iter()
                .map(|m| {
                    let note = format!(
                        "errors {} · value {}",
                        thousands(m.errors),
                        format_bytes(r.value_bytes)
                    );
                    brief_row(
                        label.clone(),
                        format!("lag: {}", m.method.short()),
                        &m.lag,
                        m.tries,
                        (note, m.errors > 0),
                    )
                })
                .collect(),
        }
    }

    /// What the tab's figures rest on: what each method's lag includes.
    fn status(_snap: &RedisSnapshot) -> String {
        " Redis lag: 1 includes connecting (the seed's way) · 2 from the SET's reply · 3 to the replica's offset ACK (WAIT)".to_string()
    }
}

#[cfg(test)]
mod tests {
    use crate::labs::LabKind;
    use crate::theme::Theme;
    use crate::tui::app::{App, Tab};
    use crate::tui::fixture::{lab_moment, screen};

    /// Its tab without a redis-server to run colours only what a theme has, as every lab's
    /// fixture does (`tui::render`'s test).
    #[test]
    fn its_model_without_redis_server_is_coloured_by_theme_items() {
        crate::tui::render::tests::assert_every_item_is_a_theme_item(&super::tab(
            &crate::labs::redis::snapshot::RedisSnapshot::unavailable("no redis-server"),
            &[],
        ));
    }

    /// Its tab's pane carries the configuration's cost at list price on its edge (worked by hand
    /// in `cost.rs`).
    #[test]
    fn its_pane_shows_its_cost() {
        let mut app = App::new(Theme::dark());
        app.tab = Tab::Lab(LabKind::Redis);
        let s = screen(&app, &lab_moment(LabKind::Redis), (160, 50));
        assert!(s.contains("cost $0.0340/h · $24.82/mo"), "{s}");
    }
}
