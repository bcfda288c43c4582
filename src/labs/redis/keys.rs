//! The Redis lab's keys: the value size, CPU load and a nearly full memory on the primary, and
//! the replication link's profile.

use super::Command;
use crate::lab_kit::view::keys::{KeyFooter, LabKey};

pub const KEYS: &[LabKey<Command>] = &[
    LabKey {
        keys: "v / c / m",
        what: "Redis: value size / CPU load / memory full",
        press: "vcm",
        footer: KeyFooter::Shown {
            tab: &[("v", "value"), ("c", "CPU load"), ("m", "memory")],
            overview: &[("v", "Redis value")],
        },
        send: false,
        bindings: &[
            ('v', Command::ValueNext),
            ('c', Command::CpuLoad),
            ('m', Command::MemoryFull),
        ],
    },
    LabKey {
        keys: "L",
        what: "Redis: replication link: loopback, same-az, cross-az, t3-micro",
        press: "L",
        footer: KeyFooter::Shown {
            tab: &[("L", "link")],
            overview: &[],
        },
        send: false,
        bindings: &[('L', Command::LinkNext)],
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
    fn its_tab_shows_its_own_keys_first() {
        let keys: Vec<&str> = footer(Some(LabKind::Redis), &[LabKind::Redis], false, false)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys.join(" "), "q ? v c m L f p r z/Z t");
    }

    #[test]
    fn c_is_cpu_load_and_ctrl_c_still_quits() {
        let c = KeyEvent::from(KeyCode::Char('c'));
        assert_eq!(
            binding(&c, false, None, &LabKind::ALL),
            Some((Does::Lab(RunCommand::Redis(Command::CpuLoad)), true))
        );
    }
}
