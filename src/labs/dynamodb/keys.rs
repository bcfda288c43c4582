//! The DynamoDB lab's keys: the hot key, the writer's rate, the table's billing mode and
//! provisioned capacity, DynamoDB Streams readers joining and leaving, and the reads' consistency.

use super::Command;
use crate::lab_kit::view::keys::{KeyFooter, LabKey};

pub const KEYS: &[LabKey<Command>] = &[
    LabKey {
        keys: "H",
        what: "DynamoDB: skew the keys towards one hot partition key / spread them again",
        press: "H",
        footer: KeyFooter::Shown {
            tab: &[("H", "hot key")],
            overview: &[("H", "DynamoDB hot key")],
        },
        send: true,
        bindings: &[('H', Command::Skew)],
    },
    crate::lab_kit::view::keys::RATE.with(&[
        ('>', Command::RateUp),
        ('.', Command::RateUp),
        ('<', Command::RateDown),
        (',', Command::RateDown),
    ]),
    LabKey {
        keys: "M",
        what: "DynamoDB table: provisioned / on-demand (UpdateTable)",
        press: "M",
        footer: KeyFooter::Shown {
            tab: &[("M", "mode")],
            overview: &[],
        },
        send: false,
        bindings: &[('M', Command::Mode)],
    },
    LabKey {
        keys: "U / D",
        what: "DynamoDB provisioned write capacity up / down (100 to 16,000 WCU)",
        press: "UD",
        footer: KeyFooter::Shown {
            tab: &[("U/D", "capacity")],
            overview: &[],
        },
        send: false,
        bindings: &[('U', Command::CapacityUp), ('D', Command::CapacityDown)],
    },
    LabKey {
        keys: "y / Y",
        what: "a DynamoDB Streams reader joins (a third on a shard is throttled) / the last one leaves",
        press: "yY",
        footer: KeyFooter::Shown {
            tab: &[("y/Y", "stream readers")],
            overview: &[],
        },
        send: false,
        bindings: &[('y', Command::AddReader), ('Y', Command::RemoveReader)],
    },
    LabKey {
        keys: "d",
        what: "DynamoDB reads: eventually / strongly consistent",
        press: "d",
        footer: KeyFooter::Shown {
            tab: &[("d", "consistency")],
            overview: &[],
        },
        send: false,
        bindings: &[('d', Command::Consistency)],
    },
];
