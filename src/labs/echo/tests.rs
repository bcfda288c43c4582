//! The fifth lab, registered by one line of the test build's registry, as a person meets it:
//! run headless on a real socket and reported, on the TUI's tab and overview, in a comparison
//! of two runs, and in a shared run's frame.

use crate::labs::LabKind;
use crate::report::{Ending, Format, Report};
use crate::scenario::Scenario;
use crate::tui::app::{App, Tab};
use crate::tui::fixture::{lab_moment, sample_tour_moment, screen};

/// A run of its demo, headless, for `secs`: its snapshot, as the run took it at the end.
fn run(secs: f64) -> crate::snapshot::Snapshot {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut scenario = Scenario::resolve("echo-demo").unwrap();
        scenario.duration = std::time::Duration::from_secs_f64(secs);
        let run = crate::run::Run::start(scenario, &Default::default())
            .await
            .unwrap();
        run.start_live();
        tokio::time::sleep(std::time::Duration::from_secs_f64(secs)).await;
        let (snap, problems) = run.finish().await;
        assert!(problems.is_empty(), "{problems:?}");
        snap
    })
}

#[test]
fn the_lab_runs_headless_and_its_report_has_its_section() {
    let snap = run(1.0);
    assert_eq!(snap.labs(), [LabKind::Echo]);
    let echo = snap.echo.as_ref().unwrap();
    // Every 20 ms for a second: about 50 round trips, each measured.
    assert!(
        echo.sent >= 10 && echo.rtt.count + echo.errors == echo.sent,
        "{echo:?}"
    );
    assert_eq!(echo.errors, 0);
    // A run of no emulated service measures no endpoint and says so.
    assert_eq!(snap.backend.kind, "local");
    let scenario = Scenario::resolve("echo-demo").unwrap();
    let report = Report::new(&scenario, snap.clone(), Ending::Completed, vec![]);
    let text = report.render(Format::Text);
    assert!(
        text.contains("Echo: round trip to an echo server on 127.0.0.1")
            && text.contains(&format!("over {} round trips", echo.rtt.count)),
        "{text}"
    );
    let csv = report.render(Format::Csv);
    assert!(csv.contains("echo,tcp,round_trip_count,"), "{csv}");
    // Its part of the JSON report, and back.
    let json = report.render(Format::Json);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["snapshot"]["echo"]["sent"], echo.sent);
    let back: crate::report::json::RunReport = serde_json::from_str(&json).unwrap();
    let back = crate::snapshot::Snapshot::from(back.snapshot);
    assert_eq!(back.echo.unwrap().rtt.count, echo.rtt.count);
}

#[test]
fn its_tab_and_its_pane_of_the_overview_are_on_the_screen() {
    let mut app = App::new(crate::theme::Theme::dark());
    let moment = lab_moment(LabKind::Echo);
    app.sync_labs(&[LabKind::Echo]);
    app.tab = Tab::Lab(LabKind::Echo);
    let tab = screen(&app, &moment, (100, 30));
    assert!(
        tab.contains("Echo: round trip of 64 B on 127.0.0.1") && tab.contains("600"),
        "{tab}"
    );
    // Its key, in the footer of its tab.
    assert!(tab.contains("payload"), "{tab}");
    // The overview of every lab has its brief row and its pane.
    let mut app = App::new(crate::theme::Theme::dark());
    app.sync_labs(&LabKind::ALL);
    app.tab = Tab::Overview;
    let all = screen(&app, &sample_tour_moment(), (200, 70));
    assert!(all.contains("Echo"), "{all}");
    assert!(all.contains("round trip"), "{all}");
}

#[test]
fn two_runs_of_it_are_compared_under_its_own_title() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = Scenario::resolve("echo-demo").unwrap();
    let mut paths = Vec::new();
    for (i, secs) in [0.6, 0.6].into_iter().enumerate() {
        let report = Report::new(&scenario, run(secs), Ending::Completed, vec![]);
        let path = dir.path().join(format!("run{i}.json"));
        std::fs::write(&path, report.render(Format::Json)).unwrap();
        paths.push(path);
    }
    let inputs: Vec<crate::compare::Input> = paths
        .iter()
        .map(|p| crate::compare::Input::read(p).unwrap())
        .collect();
    let comparisons = crate::compare::compare(&inputs, false).unwrap();
    let text = crate::compare::render::document(&inputs, &comparisons, false);
    assert!(text.contains("Echo: round trip on 127.0.0.1"), "{text}");
    assert!(!text.contains("Other series"), "{text}");
}

#[test]
fn a_shared_runs_frame_carries_its_tab() {
    let moment = lab_moment(LabKind::Echo);
    let mut app = App::new(crate::theme::Theme::dark());
    app.sync_labs(&[LabKind::Echo]);
    let frame = crate::tui::shared::screen(&app, &moment, "token");
    let json = serde_json::to_value(&frame).unwrap();
    let tabs = json["tabs"].as_array().unwrap();
    let echo = tabs.iter().find(|t| t["lab"] == "echo").expect("its tab");
    assert_eq!(echo["name"], "Echo");
    let text = echo["view"].to_string();
    assert!(
        text.contains("Echo: round trip of 64 B on 127.0.0.1"),
        "{text}"
    );
}
