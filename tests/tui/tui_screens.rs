//! The screen as a user sees it, drawn from fixed figures on ratatui's TestBackend and pinned with
//! insta snapshots: the main screen, the help overlay, each theme, a narrow terminal.

use latlab::labs::LabKind;
use latlab::tui::app::{App, Tab};

use latlab::theme::Theme;
use latlab::tui::screenshot::{render, svg};

/// The Kinesis lab's fixed view (round 2's set-up).
fn fixture() -> latlab::tui::moment::Moment {
    latlab::tui::fixture::lab_moment(LabKind::Kinesis)
}

/// The screen's characters, a line per row.
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

fn screen(app: &App, size: (u16, u16)) -> String {
    text(&render(app, &fixture(), size))
}

#[test]
fn the_main_screen() {
    let app = App::new(Theme::dark());
    let s = screen(&app, (140, 44));
    insta::assert_snapshot!("main_140x44", s);
    assert!(
        s.contains("GetRecords 9.0/s of 5 per shard"),
        "the cause of throttling is on screen"
    );
    assert!(s.contains("get_records 3"), "every poller has its own row");
}

#[test]
fn the_help_overlay() {
    let mut app = App::new(Theme::dark());
    app.help = true;
    insta::assert_snapshot!("help_120x40", screen(&app, (120, 40)));
}

/// The help of a run of the moment's labs, as `?` opens it.
fn help_of(moment: &latlab::tui::moment::Moment) -> String {
    let mut app = App::new(Theme::dark());
    app.sync_labs(&moment.snapshot.labs());
    app.help = true;
    text(&render(&app, moment, (120, 44)))
}

/// The keys' column of the help: the 16 characters after each line's left edge of the popup.
fn help_keys(screen: &str) -> Vec<String> {
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let (top, left) = lines
        .iter()
        .enumerate()
        .find_map(|(y, l)| {
            let s: String = l.iter().collect();
            s.find("┌ latlab keys")
                .map(|byte| (y, s[..byte].chars().count()))
        })
        .expect("the help is open");
    lines[top + 1..]
        .iter()
        .take_while(|l| l.get(left) == Some(&'│'))
        .map(|l| l.iter().skip(left + 3).take(16).collect::<String>())
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty() && !k.starts_with("any key") && !k.contains("keys left"))
        .collect()
}

#[test]
fn the_help_lists_the_keys_of_the_runs_labs_only() {
    let shared = ["f", "p", "r", "z / Z", "t", "?", "q, Esc, Ctrl-C"];
    let kinesis = ["+ / -", "e / E", "x / X", "b", "i", "a / o"];
    let cases = [
        (
            "demo",
            fixture(),
            "S3, Redis, SQS and DynamoDB keys left out",
        ),
        (
            "s3-demo",
            latlab::tui::fixture::lab_moment(LabKind::S3),
            "Kinesis, Redis, SQS and DynamoDB keys left out",
        ),
        (
            "redis-demo",
            latlab::tui::fixture::lab_moment(LabKind::Redis),
            "Kinesis, S3, SQS and DynamoDB keys left out",
        ),
        (
            "sqs-demo",
            latlab::tui::fixture::lab_moment(LabKind::Sqs),
            "Kinesis, S3, Redis and DynamoDB keys left out",
        ),
        (
            "dynamodb-demo",
            latlab::tui::fixture::lab_moment(LabKind::Dynamodb),
            "Kinesis, S3, Redis and SQS keys left out",
        ),
        ("tour", latlab::tui::fixture::sample_tour_moment(), ""),
    ];
    for (name, moment, left_out) in cases {
        let s = help_of(&moment);
        insta::assert_snapshot!(format!("help_{name}"), s);
        let keys = help_keys(&s);
        let has = |k: &str| keys.iter().any(|x| x == k);
        for k in shared {
            assert!(has(k), "{name}: the shared key {k} is listed: {keys:?}");
        }
        let labs = moment.snapshot.labs();
        for k in kinesis {
            assert_eq!(
                has(k),
                labs.contains(&LabKind::Kinesis),
                "{name}: {k}: {keys:?}"
            );
        }
        // The producer's rate: Kinesis's, SQS's and DynamoDB's writer's (sqs-demo answered it
        // with "no Kinesis lab").
        assert_eq!(
            has("< / >"),
            labs.contains(&LabKind::Kinesis)
                || labs.contains(&LabKind::Sqs)
                || labs.contains(&LabKind::Dynamodb),
            "{name}: < / >: {keys:?}"
        );
        assert_eq!(has("s"), labs.contains(&LabKind::S3), "{name}: s: {keys:?}");
        assert_eq!(has("C"), labs.contains(&LabKind::S3), "{name}: C: {keys:?}");
        assert_eq!(
            has("v / c / m"),
            labs.contains(&LabKind::Redis),
            "{name}: {keys:?}"
        );
        assert_eq!(
            has("L"),
            labs.contains(&LabKind::Redis),
            "{name}: L: {keys:?}"
        );
        for k in ["w", "j / J", "g / G", "B", "V", "k / K"] {
            assert_eq!(
                has(k),
                labs.contains(&LabKind::Sqs),
                "{name}: {k}: {keys:?}"
            );
        }
        for k in ["H", "M", "U / D", "y / Y", "d"] {
            assert_eq!(
                has(k),
                labs.contains(&LabKind::Dynamodb),
                "{name}: {k}: {keys:?}"
            );
        }
        assert_eq!(has("Tab, 0 - 5"), labs.len() > 1, "{name}: tabs: {keys:?}");
        let emulator_lab = labs
            .iter()
            .any(|l| l.service().is_some_and(|s| s.emulated()));
        assert_eq!(has("l"), emulator_lab, "{name}: l: {keys:?}");
        let payload_lab = labs.contains(&LabKind::Kinesis) || labs.contains(&LabKind::S3);
        assert_eq!(has("[ / ]"), payload_lab, "{name}: [ / ]: {keys:?}");
        if left_out.is_empty() {
            assert!(!s.contains("left out"), "{name}: every lab is in the run");
        } else {
            assert!(s.contains(left_out), "{name}: says what it left out: {s}");
        }
    }
}

#[test]
fn a_small_terminal_says_so() {
    let app = App::new(Theme::dark());
    let s = screen(&app, (60, 20));
    assert!(
        s.contains("latlab needs at least 80x24; this terminal is 60x20"),
        "{s}"
    );
}

#[test]
fn every_theme_colours_the_screen() {
    for name in ["dark", "light", "mono"] {
        let theme = Theme::resolve(name).unwrap();
        let app = App::new(theme.clone());
        let buf = render(&app, &fixture(), (120, 40));
        let doc = svg(&buf, &theme);
        insta::assert_snapshot!(format!("theme_{name}"), doc);
        assert!(doc.starts_with("<svg"));
    }
}

#[test]
fn the_s3_pane() {
    let mut app = App::new(Theme::dark());
    let moment = latlab::tui::fixture::lab_moment(LabKind::S3);
    app.sync_labs(&[LabKind::S3]);
    let buf = render(&app, &moment, (120, 40));
    let s = text(&buf);
    insta::assert_snapshot!("s3_120x40", s);
    assert!(s.contains("writing to STANDARD"));
    assert!(
        s.contains("▶ STANDARD") && s.contains("  EXPRESS_ONEZONE"),
        "both classes have rows, the active one marked"
    );
}

#[test]
fn the_sqs_pane() {
    let mut app = App::new(Theme::dark());
    let moment = latlab::tui::fixture::lab_moment(LabKind::Sqs);
    app.sync_labs(&[LabKind::Sqs]);
    let buf = render(&app, &moment, (160, 44));
    let s = text(&buf);
    insta::assert_snapshot!("sqs_160x44", s);
    for pane in [
        "SQS long-poll: long poll, 20 s wait",
        "SQS short-poll: short poll every 200ms",
        "SQS fifo: FIFO queue, long poll 20 s",
        "SQS lambda: 5 pollers, batch 10, window 0ms",
    ] {
        assert!(s.contains(pane), "pane {pane:?}:\n{s}");
    }
    assert!(
        s.contains("in flight") && s.contains("empty rcv") && s.contains("redeliv"),
        "each consumer's count and what the queue did to it:\n{s}"
    );
    assert!(s.contains("producer 10/s to each queue"), "{s}");
}

/// The DynamoDB tab: the writer and reader, the partition heat strip with the hot partition
/// marked and its throttles by reason, and a pane per change consumer with its count.
#[test]
fn the_dynamodb_pane_marks_the_hot_partition() {
    let mut app = App::new(Theme::dark());
    let moment = latlab::tui::fixture::lab_moment(LabKind::Dynamodb);
    app.sync_labs(&[LabKind::Dynamodb]);
    let buf = render(&app, &moment, (160, 50));
    let s = text(&buf);
    insta::assert_snapshot!("dynamodb_160x50", s);
    for pane in [
        "DynamoDB writer: 300/s, 90% to key 'hot'",
        "Partitions (5, latlab's model)",
        "DynamoDB streams-poller: DynamoDB Streams GetRecords every 500ms",
        "DynamoDB lambda: Lambda on DynamoDB Streams",
        "DynamoDB fan-out: fan-out on the Kinesis destination",
    ] {
        assert!(s.contains(pane), "pane {pane:?}:\n{s}");
    }
    assert!(
        s.contains("p2 HOT: 1,000/1,000 WCU in the last second, 190 throttled attempts"),
        "{s}"
    );
    assert!(s.contains("◀ HOT"), "the hot partition's own line: {s}");
    assert!(
        s.contains("TableWriteKeyRangeThroughputExceeded 9,400"),
        "throttles by reason: {s}"
    );
    assert!(
        s.contains("GetItem eventual ◀"),
        "the reads' consistency: {s}"
    );
    assert!(
        s.contains("latlab-5e3d0a1b · partition p2 HOT"),
        "the header: {s}"
    );
}

#[test]
fn the_overview_shows_every_lab_at_once() {
    let mut app = App::new(Theme::dark());
    let moment = latlab::tui::fixture::sample_tour_moment();
    app.sync_labs(&LabKind::ALL);
    assert_eq!(
        app.tab,
        Tab::Overview,
        "a scenario with several labs opens on the overview"
    );
    let buf = render(&app, &moment, (200, 60));
    let s = text(&buf);
    insta::assert_snapshot!("overview_200x60", s);
    for pane in [
        "Enhanced fan-out: SDK SubscribeToShard",
        "Lambda on enhanced fan-out",
        "Shared throughput: GetRecords pollers",
        "Lambda on a standard iterator",
        "S3 PUT",
        "S3 GET",
        "1. seed's method: new clients",
        "2. persistent connection",
        "3. offset: WAIT",
        "SQS long-poll",
        "SQS lambda",
        "DynamoDB writer",
        "Partitions (5, latlab's model)",
    ] {
        assert!(s.contains(pane), "pane {pane:?} on the overview:\n{s}");
    }
    assert!(s.contains(" 0 Overview "), "the tab bar names the overview");
    assert!(s.contains("get_records 3"), "every poller keeps its row");
    assert!(s.contains("▶ STANDARD"), "the S3 class is marked");
    assert!(
        s.contains("bytes behind p50"),
        "the offset method keeps its bytes behind"
    );

    // Narrower than side by side but tall enough: the labs stack.
    let s = text(&render(&app, &moment, (120, 130)));
    assert!(
        s.contains("S3 GET")
            && s.contains("Lambda on enhanced fan-out")
            && s.contains("2. persistent")
            && s.contains("SQS short-poll"),
        "{s}"
    );
    // The smallest screen draws without overflowing, every lab still on it.
    let s = text(&render(&app, &moment, (80, 24)));
    assert_eq!(s.lines().count(), 24);
    assert!(s.lines().all(|l| l.chars().count() == 80));
    assert!(
        s.contains("Every lab, in brief"),
        "too small for the panes: one table instead:\n{s}"
    );
    for row in [
        "get_records 3",
        "Lambda standard itera",
        "unread 7 · throttled 214",
        "▶ PUT STANDARD",
        "GET EXPRESS_ONEZONE",
        "lag: offset (WAIT)",
    ] {
        assert!(s.contains(row), "{row}:\n{s}");
    }

    // Without an S3 lab the overview neither draws one nor offers its key.
    let mut no_s3 = latlab::tui::fixture::sample_tour_moment();
    no_s3.snapshot.s3 = None;
    let mut app = App::new(Theme::dark());
    app.sync_labs(&[LabKind::Kinesis, LabKind::Redis]);
    let s = text(&render(&app, &no_s3, (200, 60)));
    assert!(!s.contains("S3 PUT") && !s.contains("S3 class"), "{s}");
    assert!(
        s.contains("v Redis value") && s.contains("+/- pollers"),
        "{s}"
    );
}

#[test]
fn the_redis_pane() {
    let mut app = App::new(Theme::dark());
    let moment = latlab::tui::fixture::lab_moment(LabKind::Redis);
    app.sync_labs(&[LabKind::Redis]);
    assert_eq!(app.tab, Tab::Lab(LabKind::Redis));
    let buf = render(&app, &moment, (120, 40));
    let s = text(&buf);
    insta::assert_snapshot!("redis_120x40", s);
    for method in [
        "1. seed's method: new clients, EXISTS loop",
        "2. persistent connection, EXISTS loop",
        "3. offset: WAIT for the replica's ACK",
    ] {
        assert!(s.contains(method), "{method}:\n{s}");
    }
    assert!(
        s.contains("bytes behind p50") && s.contains("1.1 KB"),
        "{s}"
    );
    assert!(s.contains("link t3-micro"), "the link profile is named");
    assert!(
        s.contains("Redis lag: 1 includes connecting"),
        "the status line says what each method measures, not the AWS SDK's retries:\n{s}"
    );
    assert!(!s.contains("SDK:"), "{s}");
}

#[test]
fn a_redis_pane_without_redis_server_says_how_to_fix_it() {
    let mut app = App::new(Theme::dark());
    let mut moment = latlab::tui::fixture::sample_tour_moment();
    moment.snapshot.redis = Some(latlab::labs::redis::snapshot::RedisSnapshot::unavailable(
        "redis-server is not installed: install it with `sudo apt-get install -y redis-server`",
    ));
    app.sync_labs(&[LabKind::Kinesis, LabKind::S3, LabKind::Redis]);
    app.tab = Tab::Lab(LabKind::Redis);
    let buf = render(&app, &moment, (120, 40));
    let s = text(&buf);
    assert!(s.contains("Redis replication lag: not running"), "{s}");
    assert!(s.contains("sudo apt-get install -y redis-server"), "{s}");
}

#[test]
fn the_header_shows_what_a_capped_run_has_accrued_beside_its_cap() {
    let mut app = App::new(Theme::dark());
    let moment = fixture();
    app.sync_labs(&moment.snapshot.labs());
    let mut cap = latlab::lab_kit::cost::cap::Cap::new(0.05);
    cap.accrued = 0.0123;
    app.cap = Some(cap);
    let s = text(&render(&app, &moment, (160, 40)));
    let header = s.lines().next().unwrap();
    assert!(header.contains("cost $0.0123 of $0.0500 cap"), "{header}");
    // And on a shared run's page, from the same parts.
    let parts = latlab::tui::ui::header_parts(&moment.snapshot, &app);
    assert!(
        parts
            .iter()
            .any(|(p, _)| p.text == "cost $0.0123 of $0.0500 cap" && p.rank == 0)
    );
}
