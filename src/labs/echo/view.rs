//! What the echo lab's tab shows, as data: one pane of its round trips each second and their
//! percentiles; and its made-up sample for the screen tests.

use super::{Command, EchoLab, EchoSnapshot, History};
use crate::lab_kit::view::keys::{KeyFooter, LabKey};
use crate::lab_kit::view::{
    Block, Colour, Column, LabView, Pane, Series, Size, Spark, Style, Text, brief_row,
};
use crate::metrics::{Point, Summary};
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
        let points = history.map_or(&[][..], Vec::as_slice);
        let spark = Spark::of(
            Series::per_second(points, |p| p.max_us, "echo"),
            "max/s",
            None,
        );
        let r = &s.rtt;
        let txt = |v: String| Text::new(v, TEXT);
        let row = if s.sent == 0 {
            (0..5).map(|_| txt("-".into())).collect()
        } else {
            let (p50, p99, max) = (r.ms(r.p50_us), r.ms(r.p99_us), r.ms(r.max_us));
            vec![
                txt(p50),
                txt(p99),
                txt(max),
                txt(thousands(r.count)),
                Text::errors(s.errors),
            ]
        };
        let title = format!(" Echo: round trip of {} B on 127.0.0.1 ", s.payload);
        let pane = Pane::spark_over_row(
            vec![Text::new(title, Style::strong("title"))],
            (Size::Min(1), spark),
            vec![
                Column::right("p50", 11, 0),
                Column::right("p99", 11, 0),
                Column::right("max", 11, 0),
                Column::right("round trips", 12, 0),
                Column::right("errors", 7, 0),
            ],
            row,
        );
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
        let lab = Text::new("Echo", Style::strong("echo"));
        let note = (format!("errors {}", thousands(s.errors)), s.errors > 0);
        vec![brief_row(lab, "round trip", &s.rtt, s.rtt.count, note)]
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
