//! Keys change the running experiment: `+` gives the supervisor a second poller and the screen a new
//! row; `-` stops it without losing the other consumers' figures.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent};
use latlab::labs::kinesis::config::ConsumerKind;
use latlab::labs::{LabKind, kinesis, redis, s3};
use latlab::run::{Command, Run, TargetOptions};
use latlab::scenario::Scenario;
use latlab::theme::Theme;
use latlab::tui::app::{Action, App};
use latlab::tui::moment::Moment;
use latlab::tui::screenshot::render;

fn text(buf: &ratatui::buffer::Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// What the event loop does with a key: the app decides, the lab applies, the screen confirms.
async fn press(app: &mut App, lab: &Run, key: char) -> Action {
    let action = app.key(KeyEvent::from(KeyCode::Char(key)), || Moment::of(lab, 60));
    if let Action::Lab(cmd) = action {
        match lab.apply(cmd).await {
            Ok(msg) => app.say(msg, false),
            Err(e) => app.say(format!("{e:#}"), true),
        }
    }
    action
}

fn running_pollers(lab: &Run) -> Vec<String> {
    lab.kinesis()
        .unwrap()
        .ctx
        .shared
        .consumers
        .read()
        .iter()
        .filter(|c| c.kind == ConsumerKind::Poller && !c.is_stopped())
        .map(|c| c.name.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plus_adds_a_poller_and_minus_removes_it() {
    let mut scenario = Scenario::resolve("demo").unwrap();
    scenario
        .emulator_limits
        .push("kinesis.consumer_activation=0s".into());
    let opts = TargetOptions {
        latency_profile: Some("zero".into()),
        ..Default::default()
    };
    let lab = Run::start(scenario, &opts).await.unwrap();
    let mut app = App::new(Theme::dark());
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(running_pollers(&lab), ["get_records"]);

    assert_eq!(
        press(&mut app, &lab, '+').await,
        Action::Lab(Command::Kinesis(kinesis::Command::AddPoller))
    );
    assert_eq!(
        running_pollers(&lab),
        ["get_records", "get_records 2"],
        "the supervisor runs a second poller"
    );
    // The confirmation shows at once (for 8 s: a loaded machine's poller may take longer than
    // that to get its first records, so it is read now, not after the wait below).
    let screen = text(&render(&app, &Moment::of(&lab, 60), (140, 44)));
    assert!(
        screen.contains("✓ added poller get_records 2"),
        "the screen confirms: {screen}"
    );
    // The shard is now asked for more than 5 calls/s, so the new poller may first back off:
    // wait (bounded) until it has received something.
    for _ in 0..150 {
        let got = lab
            .snapshot(false)
            .kinesis
            .unwrap()
            .consumers
            .iter()
            .any(|c| c.name == "get_records 2" && c.counts.received > 0);
        if got {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let screen = text(&render(&app, &Moment::of(&lab, 60), (140, 44)));
    let row = screen
        .lines()
        .find(|l| l.contains("get_records 2") && !l.contains("added"))
        .expect("a row for the new poller");
    assert!(
        row.contains(" ms"),
        "the new poller has its own figures: {row}"
    );

    let efo_before = lab.snapshot(false).kinesis.unwrap().consumers[0]
        .counts
        .received;
    assert_eq!(
        press(&mut app, &lab, '-').await,
        Action::Lab(Command::Kinesis(kinesis::Command::RemovePoller))
    );
    assert_eq!(running_pollers(&lab), ["get_records"]);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let snap = lab.snapshot(false);
    let k = snap.kinesis.as_ref().unwrap();
    assert!(
        k.consumers[0].counts.received > efo_before,
        "the other consumers kept measuring"
    );
    let screen = text(&render(&app, &Moment::of(&lab, 60), (140, 44)));
    assert!(
        screen.contains("✓ removed poller get_records 2"),
        "{screen}"
    );

    // `[`/`]` step the payload; `r` resets the figures.
    press(&mut app, &lab, ']').await;
    assert_eq!(
        lab.kinesis().unwrap().ctx.shared.settings.lock().payload,
        256
    );
    press(&mut app, &lab, 'r').await;
    let k = lab.snapshot(false).kinesis.unwrap();
    assert!(
        k.consumers.iter().all(|c| c.counts.received < 10),
        "counts start again after r"
    );
    let _ = lab.finish().await;
}

#[test]
fn display_keys_change_only_the_display() {
    let mut app = App::new(Theme::dark());
    let moment = latlab::tui::fixture::lab_moment(LabKind::Kinesis);
    let k = |c| KeyEvent::from(KeyCode::Char(c));
    assert_eq!(app.key(k('z'), || moment.clone()), Action::Redraw);
    assert_eq!(app.window(), 30);
    assert_eq!(app.key(k('Z'), || moment.clone()), Action::Redraw);
    assert_eq!(app.key(k('Z'), || moment.clone()), Action::Redraw);
    assert_eq!(app.window(), 120);
    let before = app.theme().name.clone();
    app.key(k('t'), || moment.clone());
    assert_ne!(app.theme().name, before);
    app.key(k('p'), || moment.clone());
    assert!(app.paused.is_some());
    app.key(k('p'), || moment.clone());
    assert!(app.paused.is_none());
    assert_eq!(app.key(k('q'), || moment.clone()), Action::Quit);
    assert_eq!(
        app.key(KeyEvent::from(KeyCode::Esc), || moment.clone()),
        Action::Quit
    );
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), crossterm::event::KeyModifiers::CONTROL);
    assert_eq!(app.key(ctrl_c, || moment.clone()), Action::Quit);
}

#[test]
fn tab_keys_move_between_the_overview_and_each_lab() {
    use latlab::tui::app::Tab;
    let moment = latlab::tui::fixture::sample_tour_moment();
    let k = |c| KeyEvent::from(KeyCode::Char(c));
    let mut app = App::new(Theme::dark());
    app.sync_labs(&[LabKind::Kinesis, LabKind::S3, LabKind::Redis]);
    assert_eq!(app.tab, Tab::Overview);
    app.key(k('1'), || moment.clone());
    assert_eq!(app.tab, Tab::Lab(LabKind::Kinesis));
    app.key(KeyEvent::from(KeyCode::Tab), || moment.clone());
    assert_eq!(app.tab, Tab::Lab(LabKind::S3));
    app.key(KeyEvent::from(KeyCode::Tab), || moment.clone());
    assert_eq!(app.tab, Tab::Lab(LabKind::Redis));
    app.key(KeyEvent::from(KeyCode::Tab), || moment.clone());
    assert_eq!(app.tab, Tab::Overview, "Tab wraps round to the overview");
    app.key(KeyEvent::from(KeyCode::BackTab), || moment.clone());
    assert_eq!(app.tab, Tab::Lab(LabKind::Redis), "Shift-Tab goes back");
    app.key(k('0'), || moment.clone());
    assert_eq!(app.tab, Tab::Overview);
    // The labs' keys act from the overview and leave it on screen.
    assert_eq!(
        app.key(k('s'), || moment.clone()),
        Action::Lab(Command::S3(s3::Command::ToggleClass))
    );
    assert_eq!(
        app.key(k('v'), || moment.clone()),
        Action::Lab(Command::Redis(redis::Command::ValueNext))
    );
    assert_eq!(app.tab, Tab::Overview);
    // From a lab's own tab they bring that lab's tab up.
    app.key(k('1'), || moment.clone());
    app.key(k('s'), || moment.clone());
    assert_eq!(app.tab, Tab::Lab(LabKind::S3));
    let screen = text(&render(&app, &moment, (160, 50)));
    assert!(
        screen.contains(" 2 S3 ") && screen.contains("S3 GET"),
        "{screen}"
    );

    // A scenario with one lab has no overview, and says so.
    let mut one = App::new(Theme::dark());
    one.sync_labs(&[LabKind::Kinesis]);
    assert_eq!(one.tab, Tab::Lab(LabKind::Kinesis));
    one.key(k('0'), || moment.clone());
    assert_eq!(one.tab, Tab::Lab(LabKind::Kinesis));
    assert_eq!(
        one.current_message(),
        Some((
            "this scenario runs one lab: its tab is the whole picture",
            true
        ))
    );
}
