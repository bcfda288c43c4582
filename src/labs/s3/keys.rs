//! The S3 lab's keys: the storage class, the payload and the requests in flight.

use super::Command;
use crate::lab_kit::view::keys::{KeyFooter, LabKey};

pub const KEYS: &[LabKey<Command>] = &[
    crate::lab_kit::view::keys::PAYLOAD
        .with(&[('[', Command::PayloadDown), (']', Command::PayloadUp)]),
    LabKey {
        keys: "s",
        what: "toggle the S3 storage class: Express One Zone / Standard",
        press: "s",
        footer: KeyFooter::Shown {
            tab: &[("s", "class")],
            overview: &[("s", "S3 class")],
        },
        send: false,
        bindings: &[('s', Command::ToggleClass)],
    },
    LabKey {
        keys: "C",
        what: "S3: requests in flight at once: 1, 4, 16, 64",
        press: "C",
        footer: KeyFooter::Shown {
            tab: &[("C", "in flight")],
            overview: &[],
        },
        send: false,
        bindings: &[('C', Command::Concurrency)],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labs::LabKind;
    use crate::run::Command as RunCommand;
    use crate::tui::keys::{Does, binding, footer};
    use crossterm::event::{KeyCode, KeyEvent};

    #[test]
    fn its_tab_shows_its_own_keys_then_the_payload_it_shares() {
        let keys: Vec<&str> = footer(Some(LabKind::S3), &[LabKind::S3], false, false)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys.join(" "), "q ? s C [/] f p r z/Z t");
    }

    #[test]
    fn the_payload_keys_are_its_own_on_its_tab_and_in_a_run_of_it_alone() {
        let key = |c| KeyEvent::from(KeyCode::Char(c));
        let up = Some((Does::Send(RunCommand::S3(Command::PayloadUp)), true));
        assert_eq!(
            binding(&key(']'), false, Some(LabKind::S3), &LabKind::ALL),
            up
        );
        assert_eq!(
            binding(&key(']'), false, None, &[LabKind::S3, LabKind::Redis]),
            up
        );
    }
}
