//! The table of every key: what it shows as, what it does, where the footer shows it and
//! which labs it belongs to. The rest of the key handling (matching, the footer, the help's
//! selection) is in `mod.rs`.

use super::{Does, Footer, Key, Press, When};
use crate::labs::{LabKind, kinesis, redis, s3};
use crate::run::Command;
use crate::tui::app::Tab;
use Command::{Kinesis as K, Redis as R, S3 as S};
use Press::{Char, Code, Ctrl};
use crossterm::event::KeyCode;

/// Every key, in the help's order.
pub const KEYS: &[Key] = &[
    Key {
        keys: "+ / -",
        what: "add / remove a GetRecords poller",
        press: "+-",
        footer: Footer::Lab {
            tab: &[("+/-", "pollers")],
            overview: &[("+/-", "pollers")],
        },
        when: When::Live,
        labs: &[LabKind::Kinesis],
        bindings: &[
            (Char('+'), Does::Send(K(kinesis::Command::AddPoller))),
            (Char('='), Does::Send(K(kinesis::Command::AddPoller))),
            (Char('-'), Does::Send(K(kinesis::Command::RemovePoller))),
            (Char('_'), Does::Send(K(kinesis::Command::RemovePoller))),
        ],
    },
    Key {
        keys: "< / >",
        what: "producer rate down / up (1, 2, 5, 10, 20, 50, ... records/s)",
        press: "<>",
        footer: Footer::Lab {
            tab: &[("</>", "rate")],
            overview: &[],
        },
        when: When::Live,
        labs: &[LabKind::Kinesis],
        bindings: &[
            (Char('>'), Does::Lab(K(kinesis::Command::RateUp))),
            (Char('.'), Does::Lab(K(kinesis::Command::RateUp))),
            (Char('<'), Does::Lab(K(kinesis::Command::RateDown))),
            (Char(','), Does::Lab(K(kinesis::Command::RateDown))),
        ],
    },
    Key {
        keys: "e / E",
        what: "add / remove an enhanced fan-out consumer (registered, subscribed; deregistered)",
        press: "eE",
        footer: Footer::Lab {
            tab: &[("e/E", "fan-out")],
            overview: &[],
        },
        when: When::Live,
        labs: &[LabKind::Kinesis],
        bindings: &[
            (Char('e'), Does::Lab(K(kinesis::Command::AddFanOut))),
            (Char('E'), Does::Lab(K(kinesis::Command::RemoveFanOut))),
        ],
    },
    Key {
        keys: "x / X",
        what: "double / halve the stream's shards (UpdateShardCount, uniform scaling)",
        press: "xX",
        footer: Footer::Hidden,
        when: When::Live,
        labs: &[LabKind::Kinesis],
        bindings: &[
            (
                Char('x'),
                Does::Lab(K(kinesis::Command::Reshard(kinesis::Scale::Double))),
            ),
            (
                Char('X'),
                Does::Lab(K(kinesis::Command::Reshard(kinesis::Scale::Halve))),
            ),
        ],
    },
    Key {
        keys: "b",
        what: "producer: PutRecord per record / PutRecords batches",
        press: "b",
        footer: Footer::Hidden,
        when: When::Live,
        labs: &[LabKind::Kinesis],
        bindings: &[(Char('b'), Does::Lab(K(kinesis::Command::ProducerMode)))],
    },
    Key {
        keys: "i",
        what: "pollers' interval: 200 ms, 500 ms, 1 s, 2 s",
        press: "i",
        footer: Footer::Hidden,
        when: When::Live,
        labs: &[LabKind::Kinesis],
        bindings: &[(Char('i'), Does::Lab(K(kinesis::Command::PollerInterval)))],
    },
    Key {
        keys: "a / o",
        what: "pollers' retries: standard / adaptive mode; one shared retry quota / one each",
        press: "ao",
        footer: Footer::Hidden,
        when: When::Live,
        labs: &[LabKind::Kinesis],
        bindings: &[
            (Char('a'), Does::Lab(K(kinesis::Command::RetryMode))),
            (Char('o'), Does::Lab(K(kinesis::Command::RetryQuota))),
        ],
    },
    Key {
        keys: "[ / ]",
        what: "payload size down / up (of the tab shown)",
        press: "[]",
        footer: Footer::Lab {
            tab: &[("[/]", "payload")],
            overview: &[],
        },
        when: When::Live,
        labs: &[LabKind::Kinesis, LabKind::S3],
        bindings: &[
            (
                Char(']'),
                Does::OfTab(
                    Tab::Lab(LabKind::S3),
                    S(s3::Command::PayloadUp),
                    K(kinesis::Command::PayloadUp),
                ),
            ),
            (
                Char('['),
                Does::OfTab(
                    Tab::Lab(LabKind::S3),
                    S(s3::Command::PayloadDown),
                    K(kinesis::Command::PayloadDown),
                ),
            ),
        ],
    },
    Key {
        keys: "s",
        what: "toggle the S3 storage class: Express One Zone / Standard",
        press: "s",
        footer: Footer::Lab {
            tab: &[("s", "class")],
            overview: &[("s", "S3 class")],
        },
        when: When::Live,
        labs: &[LabKind::S3],
        bindings: &[(Char('s'), Does::Lab(S(s3::Command::ToggleClass)))],
    },
    Key {
        keys: "v / c / m",
        what: "Redis: value size / CPU load / memory full",
        press: "vcm",
        footer: Footer::Lab {
            tab: &[("v", "value"), ("c", "CPU load"), ("m", "memory")],
            overview: &[("v", "Redis value")],
        },
        when: When::Live,
        labs: &[LabKind::Redis],
        bindings: &[
            (Char('v'), Does::Lab(R(redis::Command::ValueNext))),
            (Char('c'), Does::Lab(R(redis::Command::CpuLoad))),
            (Char('m'), Does::Lab(R(redis::Command::MemoryFull))),
        ],
    },
    Key {
        keys: "C",
        what: "S3: requests in flight at once: 1, 4, 16, 64",
        press: "C",
        footer: Footer::Lab {
            tab: &[("C", "in flight")],
            overview: &[],
        },
        when: When::Live,
        labs: &[LabKind::S3],
        bindings: &[(Char('C'), Does::Lab(S(s3::Command::Concurrency)))],
    },
    Key {
        keys: "L",
        what: "Redis: replication link: loopback, same-az, cross-az, t3-micro",
        press: "L",
        footer: Footer::Lab {
            tab: &[("L", "link")],
            overview: &[],
        },
        when: When::Live,
        labs: &[LabKind::Redis],
        bindings: &[(Char('L'), Does::Lab(R(redis::Command::LinkNext)))],
    },
    Key {
        keys: "l",
        what: "the emulator's latency profile: zero, same-region, seed-tokyo, profiles/*.toml",
        press: "l",
        footer: Footer::Hidden,
        when: When::Live,
        labs: &[LabKind::Kinesis, LabKind::S3],
        bindings: &[(Char('l'), Does::Send(Command::Profile))],
    },
    Key {
        keys: "Tab, 0 - 3",
        what: "tabs: 0 overview (several labs), 1 Kinesis, 2 S3, 3 Redis",
        press: "0123",
        footer: Footer::Tabs(&[("Tab", "labs")]),
        when: When::Always,
        labs: &[],
        bindings: &[
            (Code(KeyCode::Tab), Does::NextTab),
            (Code(KeyCode::BackTab), Does::PreviousTab),
            (Char('0'), Does::Show(Tab::Overview)),
            (Char('1'), Does::Show(Tab::Lab(LabKind::Kinesis))),
            (Char('2'), Does::Show(Tab::Lab(LabKind::S3))),
            (Char('3'), Does::Show(Tab::Lab(LabKind::Redis))),
        ],
    },
    Key {
        keys: "f",
        what: "fault menu: inject a fault now (a letter picks it)",
        press: "f",
        footer: Footer::Trail(&[("f", "fault")]),
        when: When::Live,
        labs: &[],
        bindings: &[(Char('f'), Does::FaultMenu)],
    },
    Key {
        keys: "p",
        what: "pause the display (probes keep running)",
        press: "",
        footer: Footer::Trail(&[("p", "pause")]),
        when: When::Live,
        labs: &[],
        bindings: &[(Char('p'), Does::Pause)],
    },
    Key {
        keys: "r",
        what: "reset histograms and counts",
        press: "r",
        footer: Footer::Trail(&[("r", "reset")]),
        when: When::Live,
        labs: &[],
        bindings: &[(Char('r'), Does::Send(Command::Reset))],
    },
    Key {
        keys: "z / Z",
        what: "zoom the sparklines' time window in / out",
        press: "zZ",
        footer: Footer::Trail(&[("z/Z", "zoom")]),
        when: When::Always,
        labs: &[],
        bindings: &[(Char('z'), Does::ZoomIn), (Char('Z'), Does::ZoomOut)],
    },
    Key {
        keys: "t",
        what: "next theme",
        press: "t",
        footer: Footer::Trail(&[("t", "theme")]),
        when: When::Always,
        labs: &[],
        bindings: &[(Char('t'), Does::NextTheme)],
    },
    Key {
        keys: "?",
        what: "this help",
        press: "",
        footer: Footer::Lead(&[("?", "help")]),
        when: When::Always,
        labs: &[],
        bindings: &[
            (Char('?'), Does::Help),
            (Char('h'), Does::Help),
            (Code(KeyCode::F(1)), Does::Help),
        ],
    },
    Key {
        keys: "q, Esc, Ctrl-C",
        what: "quit and print the summary tables",
        press: "",
        footer: Footer::Lead(&[("q", "quit")]),
        when: When::Always,
        labs: &[],
        bindings: &[
            (Char('q'), Does::Quit),
            (Code(KeyCode::Esc), Does::Quit),
            (Ctrl('c'), Does::Quit),
        ],
    },
    Key {
        keys: "Space, p",
        what: "replay: play / pause",
        press: "",
        footer: Footer::Replay(&[("Space", "play/pause")]),
        when: When::Replay,
        labs: &[],
        bindings: &[(Char(' '), Does::PlayPause), (Char('p'), Does::PlayPause)],
    },
    Key {
        keys: "← / →",
        what: "replay: one second back / on (pauses)",
        press: "",
        footer: Footer::Replay(&[("←/→", "step")]),
        when: When::Replay,
        labs: &[],
        bindings: &[
            (Code(KeyCode::Left), Does::Back),
            (Code(KeyCode::Right), Does::On),
        ],
    },
    Key {
        keys: "n / N",
        what: "replay: jump to the next / previous event (key, fault, throttle burst, error)",
        press: "",
        footer: Footer::Replay(&[("n/N", "event")]),
        when: When::Replay,
        labs: &[],
        bindings: &[
            (Char('n'), Does::NextEvent),
            (Char('N'), Does::PreviousEvent),
        ],
    },
    Key {
        keys: "< / >",
        what: "replay: slower / faster (1x 2x 5x 10x 30x 60x)",
        press: "",
        footer: Footer::Replay(&[("</>", "speed")]),
        when: When::Replay,
        labs: &[],
        bindings: &[
            (Char('>'), Does::Faster),
            (Char('.'), Does::Faster),
            (Char('<'), Does::Slower),
            (Char(','), Does::Slower),
        ],
    },
    Key {
        keys: "Home / End",
        what: "replay: the recording's start / end",
        press: "",
        footer: Footer::Hidden,
        when: When::Replay,
        labs: &[],
        bindings: &[
            (Code(KeyCode::Home), Does::Start),
            (Code(KeyCode::End), Does::End),
        ],
    },
];
