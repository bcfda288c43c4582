//! The SQS lab's keys: the long pollers' wait (down to short polling), consumers joining and
//! leaving, the FIFO queues' message groups, the producer's batching, the visibility timeout and
//! the consumers' processing time.

use super::Command;
use crate::lab_kit::view::keys::{KeyFooter, LabKey};

pub const KEYS: &[LabKey<Command>] = &[
    LabKey {
        keys: "w",
        what: "SQS long pollers' wait: 20, 10, 5, 1 s, 0 (short polling)",
        press: "w",
        footer: KeyFooter::Shown {
            tab: &[("w", "wait")],
            overview: &[("w", "SQS wait")],
        },
        send: true,
        bindings: &[('w', Command::WaitNext)],
    },
    LabKey {
        keys: "j / J",
        what: "an SQS long poller joins (on a queue of its own) / the last one joined leaves",
        press: "jJ",
        footer: KeyFooter::Shown {
            tab: &[("j/J", "consumers")],
            overview: &[],
        },
        send: false,
        bindings: &[('j', Command::AddConsumer), ('J', Command::RemoveConsumer)],
    },
    LabKey {
        keys: "g / G",
        what: "SQS FIFO message groups up / down (1, 2, 5, 10, 20, 50)",
        press: "gG",
        footer: KeyFooter::Shown {
            tab: &[("g/G", "groups")],
            overview: &[],
        },
        send: false,
        bindings: &[('g', Command::GroupsUp), ('G', Command::GroupsDown)],
    },
    LabKey {
        keys: "B",
        what: "SQS producer: SendMessage per message / SendMessageBatch (up to 10)",
        press: "B",
        footer: KeyFooter::Shown {
            tab: &[("B", "batching")],
            overview: &[],
        },
        send: false,
        bindings: &[('B', Command::Batching)],
    },
    LabKey {
        keys: "V",
        what: "SQS visibility timeout: 30, 10, 5, 2, 1 s",
        press: "V",
        footer: KeyFooter::Shown {
            tab: &[("V", "visibility")],
            overview: &[],
        },
        send: false,
        bindings: &[('V', Command::VisibilityNext)],
    },
    crate::lab_kit::view::keys::RATE.with(&[
        ('>', Command::RateUp),
        ('.', Command::RateUp),
        ('<', Command::RateDown),
        (',', Command::RateDown),
    ]),
    LabKey {
        keys: "k / K",
        what: "SQS processing time per message up / down (0 to 5 s)",
        press: "kK",
        footer: KeyFooter::Shown {
            tab: &[("k/K", "processing")],
            overview: &[],
        },
        send: false,
        bindings: &[('k', Command::ProcessingUp), ('K', Command::ProcessingDown)],
    },
];

#[cfg(test)]
mod tests {
    use crossterm::event::{KeyCode, KeyEvent};

    use super::super::Command;
    use crate::labs::LabKind;
    use crate::run::Command as RunCommand;
    use crate::tui::keys::{Does, binding};

    /// sqs-demo answered `>` with "this scenario has no Kinesis lab": the rate keys act on the
    /// lab of the tab in view, and in a run of SQS alone on SQS.
    #[test]
    fn the_rate_keys_change_the_sqs_producers_rate_on_its_tab() {
        let key = |c| KeyEvent::from(KeyCode::Char(c));
        let up = Does::Lab(RunCommand::Sqs(Command::RateUp));
        let down = Does::Lab(RunCommand::Sqs(Command::RateDown));
        assert_eq!(
            binding(&key('>'), false, Some(LabKind::Sqs), &[LabKind::Sqs]),
            Some((up, true))
        );
        assert_eq!(
            binding(&key('<'), false, None, &[LabKind::Sqs]),
            Some((down, true))
        );
        // In the tour, on the Kinesis tab: the Kinesis producer's.
        assert_eq!(
            binding(&key('>'), false, Some(LabKind::Kinesis), &LabKind::ALL),
            Some((
                Does::Lab(RunCommand::Kinesis(crate::labs::kinesis::Command::RateUp)),
                true
            ))
        );
        assert_eq!(
            binding(&key('>'), false, Some(LabKind::Sqs), &LabKind::ALL),
            Some((up, true))
        );
    }
}
