//! The Kinesis tab as a person sees it: rendered from its fixed sample and read back as text.

use crate::labs::LabKind;
use crate::theme::Theme;
use crate::tui::app::{App, Tab};
use crate::tui::fixture::screen;

#[test]
fn a_consumer_the_endpoint_cannot_serve_is_named_in_its_pane_at_any_width() {
    let mut view = crate::tui::fixture::lab_moment(LabKind::Kinesis);
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
    use crate::snapshot::FaultRow;
    use latlab_core::faults::KindCounts;
    use latlab_core::services::kinesis::faults::STALL;
    let mut view = crate::tui::fixture::lab_moment(LabKind::Kinesis);
    let now = view.snapshot.elapsed_secs;
    view.snapshot.faults.events.push(FaultRow {
        at_secs: now - 2.0,
        kind: STALL,
        target: "GetRecords on shardId-000000000000".into(),
        recovered_secs: Some(3.0),
        failed: None,
    });
    view.snapshot.faults.counts = vec![(
        STALL,
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
    let view = crate::tui::fixture::lab_moment(LabKind::Kinesis);
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
    assert_eq!(items.len(), latlab_core::faults::Kind::all().count());
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
    let mut view = crate::tui::fixture::lab_moment(LabKind::Kinesis);
    app.tab = Tab::Lab(LabKind::Kinesis);
    let s = screen(&app, &view, (160, 50));
    assert!(
        s.contains("cost $0.0453/h · $33.07/mo (730 h) · list price, us-east-1, 2026-12-01"),
        "{s}"
    );
    view.snapshot.kinesis.as_mut().unwrap().shards = 2;
    assert!(screen(&app, &view, (160, 50)).contains("cost $0.0903/h"));
    // A price file of the user's changes the figure and says its region and date.
    let text = crate::prices::BUILTIN[0]
        .1
        .replace("\nshard_hour = 0.015", "\nshard_hour = 0.1")
        .replace("taken = \"2026-12-01\"", "taken = \"2030-01-01\"");
    app.prices = Some(std::sync::Arc::new(
        crate::lab_kit::cost::Prices::parse(&text, "mine.toml").unwrap(),
    ));
    // 2 × 0.1 + 0.000252 + 0.06 + 0.0000558 = $0.2603 an hour.
    let s = screen(&app, &view, (160, 50));
    assert!(
        s.contains("cost $0.2603/h") && s.contains("2030-01-01"),
        "{s}"
    );
}
