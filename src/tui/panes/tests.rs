//! The panes as a person sees them: rendered from fixed views and read back as text.

use crate::tui::app::App;
use crate::tui::screenshot::render;
use crate::tui::theme::Theme;

#[test]
fn a_consumer_the_endpoint_cannot_serve_is_named_in_its_pane_at_any_width() {
    let mut view = crate::tui::fixture::sample_view();
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
        let buffer = render(&app, &view, (width, 50));
        let screen: String = (0..buffer.area.height)
            .map(|y| {
                (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            screen.contains(&format!(
                "{name}: not supported by this endpoint: SubscribeToShard"
            )),
            "at {width} columns:\n{screen}"
        );
    }
}

fn screen(app: &App, view: &crate::tui::view::View, size: (u16, u16)) -> String {
    let buffer = render(app, view, size);
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_fault_is_marked_on_the_sparklines_and_said_on_the_status_line() {
    use crate::faults::{Kind, KindCounts};
    use crate::run::snapshot::FaultRow;
    let mut view = crate::tui::fixture::sample_view();
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
    let view = crate::tui::fixture::sample_view();
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
