//! What the echo lab needs of an account: nothing. It creates nothing, calls no service,
//! leaves nothing behind and costs nothing; its plan, cleanup, cost and doctor say so.

use super::{EchoLab, EchoScenario, EchoSnapshot};
use crate::cost::{LabCost, Prices, Section};
use crate::labs::check::{Check, DoctorContext};
use crate::labs::target::Nothing;
use crate::plan::leftovers::{CleanupContext, Found, Leftover};
use crate::plan::{LabPlan, PlanContext};

impl crate::labs::Plan for EchoLab {
    async fn plan(_cx: &PlanContext<'_>, s: &EchoScenario, _t: &Nothing) -> LabPlan {
        let mut p = LabPlan::new("Echo", "an echo server on 127.0.0.1");
        p.notes.push(format!(
            "round trips of {} B every {}, to latlab's own server: nothing on any account",
            s.payload,
            latlab_core::units::format_duration(s.interval)
        ));
        p
    }
}

impl crate::labs::Cleanup for EchoLab {
    async fn leftovers(_cx: &CleanupContext<'_>, _t: &Nothing) -> Found {
        Found::default()
    }

    async fn remove(_cx: &CleanupContext<'_>, _t: &Nothing, item: &Leftover) -> Result<(), String> {
        Err(format!(
            "the echo lab leaves nothing behind, not {}",
            item.name
        ))
    }
}

impl crate::labs::Cost for EchoLab {
    const PRICES: &'static [Section] = &[];

    /// Its own server on the host: no list price.
    fn cost(_s: &EchoSnapshot, _complete: bool, _p: &Prices) -> Option<(LabCost, Vec<String>)> {
        None
    }
}

impl crate::labs::Doctor for EchoLab {
    async fn doctor(_cx: &DoctorContext<'_>) -> Vec<Check> {
        match std::net::TcpListener::bind("127.0.0.1:0") {
            Ok(_) => vec![Check::ok("echo", "127.0.0.1 takes a listener")],
            Err(e) => vec![Check::fail(
                "echo",
                format!("127.0.0.1 takes no listener: {e}"),
                "a loopback interface",
                &[crate::labs::check::Part::Lab(crate::labs::LabKind::Echo)],
            )],
        }
    }
}
