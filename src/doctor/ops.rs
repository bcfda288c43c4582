//! The permissions line: which actions an endpoint refused any lab's probe (each lab's
//! operations are its own, `Doctor::ops` in its folder, read with `labs::check`), each with the
//! line of latlab's policy that allows it.

use super::{Check, Part};
use crate::labs::LabKind;
use crate::labs::check::{Outcome, Probe};

/// Whether an answer's code says the caller is not allowed.
fn denied(code: &str) -> bool {
    matches!(
        code,
        "AccessDenied" | "AccessDeniedException" | "UnauthorizedOperation" | "NotAuthorized"
    )
}

/// One line for the permissions the probes were refused, every lab's together: each denied
/// action with the line of the policy (`plan`'s, `latlab iam-policy SCENARIO`) that would allow
/// it. None when no call was denied.
pub fn denied_check(
    probes: &[(LabKind, Vec<Probe>)],
    plan: &crate::lab_kit::plan::Plan,
) -> Option<Check> {
    let is_denied = |p: &&Probe| matches!(&p.outcome, Outcome::Answered(c) if denied(c));
    let mut actions: Vec<String> = probes
        .iter()
        .flat_map(|(_, list)| list.iter().filter(is_denied))
        .filter_map(|p| p.action.clone())
        .collect();
    actions.sort();
    actions.dedup();
    if actions.is_empty() {
        return None;
    }
    let lines: Vec<String> = actions
        .iter()
        .map(|a| match crate::lab_kit::plan::iam::allowing(plan, a) {
            Some(line) => format!("{a} (allowed by {line})"),
            None => format!(
                "{a} (not in the policy: no lab of `{}` calls it)",
                plan.scenario
            ),
        })
        .collect();
    let labs: Vec<Part> = probes
        .iter()
        .filter(|(_, list)| list.iter().any(|p| is_denied(&p)))
        .map(|(lab, _)| Part::Lab(*lab))
        .collect();
    Some(Check::fail(
        "permissions",
        format!(
            "{} action{} denied: {}",
            actions.len(),
            if actions.len() == 1 { "" } else { "s" },
            lines.join("; ")
        ),
        format!(
            "attach the policy `latlab iam-policy {}` prints to these credentials' user or role",
            plan.scenario
        ),
        &labs,
    ))
}
