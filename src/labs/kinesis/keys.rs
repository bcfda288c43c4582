//! The Kinesis lab's keys: pollers, the producer's rate, put mode and payload, fan-out
//! consumers, resharding and the pollers' interval and retries.

use super::{Command, Scale};
use crate::lab_kit::view::keys::{KeyFooter, LabKey};

pub const KEYS: &[LabKey<Command>] = &[
    LabKey {
        keys: "+ / -",
        what: "add / remove a GetRecords poller",
        press: "+-",
        footer: KeyFooter::Shown {
            tab: &[("+/-", "pollers")],
            overview: &[("+/-", "pollers")],
        },
        send: true,
        bindings: &[
            ('+', Command::AddPoller),
            ('=', Command::AddPoller),
            ('-', Command::RemovePoller),
            ('_', Command::RemovePoller),
        ],
    },
    LabKey {
        keys: "* and /",
        what: "add / remove a KCL consumer (the Kinesis Client Library's polling loop)",
        press: "*/",
        footer: KeyFooter::Hidden,
        send: false,
        bindings: &[('*', Command::AddKcl), ('/', Command::RemoveKcl)],
    },
    crate::lab_kit::view::keys::RATE.with(&[
        ('>', Command::RateUp),
        ('.', Command::RateUp),
        ('<', Command::RateDown),
        (',', Command::RateDown),
    ]),
    LabKey {
        keys: "e / E",
        what: "add / remove an enhanced fan-out consumer (registered, subscribed; deregistered)",
        press: "eE",
        footer: KeyFooter::Shown {
            tab: &[("e/E", "fan-out")],
            overview: &[],
        },
        send: false,
        bindings: &[('e', Command::AddFanOut), ('E', Command::RemoveFanOut)],
    },
    LabKey {
        keys: "x / X",
        what: "double / halve the stream's shards (UpdateShardCount, uniform scaling)",
        press: "xX",
        footer: KeyFooter::Hidden,
        send: false,
        bindings: &[
            ('x', Command::Reshard(Scale::Double)),
            ('X', Command::Reshard(Scale::Halve)),
        ],
    },
    LabKey {
        keys: "b",
        what: "producer: PutRecord per record / PutRecords batches",
        press: "b",
        footer: KeyFooter::Hidden,
        send: false,
        bindings: &[('b', Command::ProducerMode)],
    },
    LabKey {
        keys: "i",
        what: "pollers' interval: 200 ms, 500 ms, 1 s, 2 s",
        press: "i",
        footer: KeyFooter::Hidden,
        send: false,
        bindings: &[('i', Command::PollerInterval)],
    },
    LabKey {
        keys: "a / o",
        what: "pollers' retries: standard / adaptive mode; one shared retry quota / one each",
        press: "ao",
        footer: KeyFooter::Hidden,
        send: false,
        bindings: &[('a', Command::RetryMode), ('o', Command::RetryQuota)],
    },
    crate::lab_kit::view::keys::PAYLOAD
        .with(&[('[', Command::PayloadDown), (']', Command::PayloadUp)]),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labs::LabKind;
    use crate::run::Command as RunCommand;
    use crate::tui::keys::{Does, binding, footer};
    use crossterm::event::{KeyCode, KeyEvent};

    fn names(tab: Option<LabKind>, labs: &[LabKind]) -> String {
        let keys: Vec<&str> = footer(tab, labs, labs.len() > 1, false)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        keys.join(" ")
    }

    #[test]
    fn its_tab_shows_its_own_keys_first_and_the_overview_its_pollers() {
        let k = LabKind::Kinesis;
        // The rate and the payload are rows it shares (with SQS, with S3): after its own.
        assert_eq!(names(Some(k), &[k]), "q ? +/- e/E </> [/] f p r z/Z t");
        assert_eq!(
            names(None, &[k, LabKind::Redis]),
            "q ? Tab +/- v f p r z/Z t"
        );
    }

    #[test]
    fn a_poller_key_is_sent_whichever_tab_and_refused_in_a_replay() {
        let key = |c| KeyEvent::from(KeyCode::Char(c));
        let all = LabKind::ALL;
        let add = Does::Send(RunCommand::Kinesis(Command::AddPoller));
        assert_eq!(binding(&key('+'), true, None, &all), Some((add, false)));
        assert_eq!(
            binding(&key('+'), false, Some(LabKind::S3), &all),
            Some((add, true))
        );
        // '>' is the producer's rate live, the replay's speed in a replay.
        let rate_up = Does::Lab(RunCommand::Kinesis(Command::RateUp));
        assert_eq!(binding(&key('>'), false, None, &all), Some((rate_up, true)));
        assert_eq!(
            binding(&key('>'), true, None, &all),
            Some((Does::Faster, true))
        );
    }
}
