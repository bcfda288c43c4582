//! What the echo lab's tab shows, as data: one pane of its round trips each second and their
//! percentiles; and its made-up sample for the screen tests.

use super::{Command, EchoLab, EchoSnapshot, History};
use crate::metrics::{Point, Summary};
use crate::view::keys::{KeyFooter, LabKey};
use crate::view::{
    Block, Colour, Column, LabView, Pane, Part, Series, Size, Spark, Style, Table, Text,
    brief_latency, brief_note,
};
use latlab_core::units::thousands;

const TEXT: Style = Style::plain("text");

/// Its one key.
const KEYS: &[LabKey<Command>] = &[LabKey {
    keys: "u",
    what: "echo: double the payload",
    press: "u",
    footer: KeyFooter::Shown {
        tab: &[("u", "payload")],
        overview: &[],
    },
    send: false,
    bindings: &[('u', Command::PayloadUp)],
}];

pub(super) const COLOURS: &[Colour] = &[Colour {
    item: "echo",
    what: "the echo lab's round trips",
    dark: "#98c379",
    light: "#116329",
}];

impl crate::labs::Shown for EchoLab {
    const KEYS: &'static [LabKey<Command>] = KEYS;

    fn view(s: &EchoSnapshot, history: Option<&History>) -> LabView {
        let values = history
            .map(|h| {
                h.iter()
                    .map(|p| (p.count > 0).then_some(p.max_us))
                    .collect()
            })
            .unwrap_or_default();
        let r = &s.rtt;
        let cells = if r.count == 0 {
            (0..5).map(|_| Text::new("-", TEXT)).collect()
        } else {
            vec![
                Text::new(r.ms(r.p50_us), TEXT),
                Text::new(r.ms(r.p99_us), TEXT),
                Text::new(r.ms(r.max_us), TEXT),
                Text::new(thousands(r.count), TEXT),
                Text::new(
                    thousands(s.errors),
                    if s.errors > 0 {
                        Style::strong("error")
                    } else {
                        TEXT
                    },
                ),
            ]
        };
        let pane = Pane {
            title: vec![Text::new(
                format!(" Echo: round trip of {} B on 127.0.0.1 ", s.payload),
                Style::strong("title"),
            )],
            narrow: None,
            bottom: None,
            parts: vec![
                (
                    Size::Min(1),
                    Part::Spark(Spark {
                        series: vec![Series {
                            values,
                            item: "echo",
                        }],
                        item: "echo",
                        metric: "max/s",
                        marks: None,
                    }),
                ),
                (
                    Size::Length(2),
                    Part::Table(Table {
                        columns: vec![
                            Column::right("p50", 11, 0),
                            Column::right("p99", 11, 0),
                            Column::right("max", 11, 0),
                            Column::right("round trips", 12, 0),
                            Column::right("errors", 7, 0),
                        ],
                        rows: vec![cells],
                        shrink: None,
                        fill_last: false,
                    }),
                ),
            ],
            min_inner: 3,
        };
        LabView {
            blocks: vec![(Size::Fill(1), Block::Pane(pane))],
            cost_on: None,
        }
    }

    fn status(s: &EchoSnapshot) -> String {
        format!(
            " Echo: {} round trips to latlab's own echo server, {} failed",
            thousands(s.sent),
            thousands(s.errors)
        )
    }

    fn brief(s: &EchoSnapshot) -> Vec<Vec<Text>> {
        let mut cells = vec![
            Text::new("Echo", Style::strong("echo")),
            Text::new("round trip", TEXT),
        ];
        cells.extend(brief_latency(&s.rtt));
        cells.push(Text::new(thousands(s.rtt.count), TEXT));
        cells.push(brief_note(
            format!("errors {}", thousands(s.errors)),
            s.errors > 0,
        ));
        vec![cells]
    }

    fn progress(s: &EchoSnapshot) -> Option<String> {
        Some(format!("echo {} | errors {}", s.sent, s.errors))
    }
}

impl crate::labs::Fixture for EchoLab {
    /// Made up: 600 round trips of about a tenth of a millisecond.
    fn sample() -> (&'static str, EchoSnapshot, History) {
        let history = (0..60)
            .map(|second| Point {
                second,
                count: 10,
                p50_us: 90,
                p99_us: 180 + second % 7 * 10,
                max_us: 200 + second % 7 * 10,
            })
            .collect();
        (
            "echo-demo",
            EchoSnapshot {
                payload: 64,
                sent: 600,
                errors: 0,
                rtt: Summary::sample(0.09, 0.18, 0.26, 600),
            },
            history,
        )
    }
}
