//! What a run would do, said before it does it (`latlab plan`, `latlab run --dry-run`): every
//! resource it would create and every one it only uses, every API action it would call, and its
//! configuration's list price per hour and for the scenario's duration, each price with where it
//! comes from. Each lab writes its part (`labs/X/plan.rs`, through `Planned::plan`); this module
//! puts them together, writes them as text or JSON, and makes the least-privilege IAM policy
//! the actions need (`iam.rs`). It names no lab.
//!
//! A plan changes nothing: the only calls a lab may make for it are reads (Describe, List,
//! Head), and `PlanContext::check` refuses any other.

pub mod iam;
pub mod leftovers;

use serde::Serialize;

use crate::lab_kit::cost::{Chosen, LabCost, RunCost, usd};

/// The tags every resource a run creates carries (where the service takes tags), and the names
/// of those that carry no tags (consumers, objects, Redis keys) carry the run id.
pub const TAG_RUN_ID: &str = "latlab:run-id";
pub const TAG_CREATED: &str = "latlab:created";
pub const TAG_VERSION: &str = "latlab:version";

/// The tags of a resource the run `run_id` creates at `created` (RFC 3339, UTC).
pub fn tags(run_id: &str, created: &str) -> Vec<(&'static str, String)> {
    vec![
        (TAG_RUN_ID, run_id.to_string()),
        (TAG_CREATED, created.to_string()),
        (TAG_VERSION, env!("CARGO_PKG_VERSION").to_string()),
    ]
}

/// Now as a tag writes it: `2026-12-01T22:45:52Z`.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// What a plan and a cleanup know of the target: whether it is another endpoint or AWS (not
/// the embedded emulator), and what the user named on it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Target {
    pub external: bool,
}

impl Target {
    pub fn external(&self) -> bool {
        self.external
    }
}

/// What a lab's plan is made from: the target, the run id its names would carry, the prices,
/// and a client for the read-only checks (None: nothing to check, the embedded emulator).
pub struct PlanContext<'a> {
    pub target: &'a Target,
    pub run_id: &'a str,
    pub region: String,
    pub prices: &'a crate::lab_kit::cost::Prices,
    pub clients: Option<&'a crate::aws::Clients>,
    /// The run's duration, for the scenario's total.
    pub duration: std::time::Duration,
}

impl PlanContext<'_> {
    /// Whether names carry the run id and resources are tagged: every target but the embedded
    /// emulator, which goes when latlab exits.
    pub fn external(&self) -> bool {
        self.target.external()
    }
}

/// One resource the run would create or use.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Resource {
    /// `stream`, `enhanced fan-out consumer`, `bucket`, `objects`, `Redis keys`, ...
    pub kind: String,
    pub name: String,
    /// What it is, in a few words: `1 shard, provisioned`.
    pub detail: String,
    /// Whether it is charged for while it exists or is used.
    pub billable: bool,
    /// The tags it would carry (created resources that take tags).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<(String, String)>,
    /// What a read-only call found of it (a used resource: whether it is there), when one was
    /// made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
}

/// What an IAM statement's resource is, for one call.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Scope {
    /// Any resource (`ListStreams`: an account's list).
    Any,
    /// An ARN (or pattern) the action is allowed on.
    Arn(String),
}

/// One API action the run would call.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Call {
    /// The service's API name for it: `PutRecord`.
    pub operation: String,
    /// The IAM action that allows it (`kinesis:PutRecord`); None where IAM does not apply
    /// (a Redis command).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// The resources it acts on, as the policy scopes them.
    pub resources: Vec<Scope>,
    /// Why: `the producer`, `a key that adds a fan-out consumer`.
    pub why: String,
    /// Only when the user presses a key (or a scenario's schedule asks), not in every run.
    pub when_asked: bool,
}

/// A lab's part of the plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LabPlan {
    pub lab: &'static str,
    /// The service, as a policy's comment names it: `Kinesis Data Streams`.
    pub service: &'static str,
    pub creates: Vec<Resource>,
    pub uses: Vec<Resource>,
    pub calls: Vec<Call>,
    /// What the lab's figures assume or leave out, and what a check could not say.
    pub notes: Vec<String>,
    /// Its configuration at list price, with the price keys it used.
    #[serde(skip)]
    pub cost: Option<(LabCost, Vec<String>)>,
    /// Why it could not be planned (a stream given that is not there): the run would stop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

impl LabPlan {
    pub fn new(lab: &'static str, service: &'static str) -> LabPlan {
        LabPlan {
            lab,
            service,
            creates: Vec::new(),
            uses: Vec::new(),
            calls: Vec::new(),
            notes: Vec::new(),
            cost: None,
            problem: None,
        }
    }

    /// Adds a call, or the resources and reasons of one already listed.
    pub fn call(
        &mut self,
        operation: &str,
        action: Option<String>,
        resources: Vec<Scope>,
        why: &str,
        when_asked: bool,
    ) {
        if let Some(c) = self
            .calls
            .iter_mut()
            .find(|c| c.operation == operation && c.action == action)
        {
            for r in resources {
                if !c.resources.contains(&r) {
                    c.resources.push(r);
                }
            }
            if !c.why.split("; ").any(|w| w == why) {
                c.why = format!("{}; {why}", c.why);
            }
            c.when_asked &= when_asked;
            return;
        }
        self.calls.push(Call {
            operation: operation.into(),
            action,
            resources,
            why: why.into(),
            when_asked,
        });
    }
}

/// The whole plan of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub scenario: String,
    /// Where it would run: `AWS us-east-1 (account billed)`, `endpoint URL`, `the embedded
    /// emulator`.
    pub target: String,
    /// Whether the target is a real AWS account, billed for what the run creates.
    pub billed: bool,
    pub region: String,
    /// The id the run's names and tags would carry (a run makes its own; `run --dry-run`
    /// names the one it would have used).
    pub run_id: String,
    pub duration: std::time::Duration,
    pub labs: Vec<LabPlan>,
    pub cost: RunCost,
    /// Each price the cost uses, with where it comes from.
    pub provenance: Vec<PriceSource>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PriceSource {
    pub key: String,
    pub value: f64,
    pub verified: bool,
    pub source: String,
}

impl Plan {
    pub fn new(
        scenario: &str,
        (target, billed): (String, bool),
        cx: &PlanContext<'_>,
        labs: Vec<LabPlan>,
        chosen: &Chosen,
    ) -> Plan {
        let parts: Vec<(LabCost, Vec<String>)> =
            labs.iter().filter_map(|l| l.cost.clone()).collect();
        let mut keys: Vec<String> = parts.iter().flat_map(|(_, k)| k.clone()).collect();
        keys.sort();
        keys.dedup();
        let p = &chosen.prices;
        let provenance = keys
            .iter()
            .map(|k| PriceSource {
                key: k.clone(),
                value: p.value(k).unwrap_or(f64::NAN),
                verified: !p.is_unverified(k),
                source: p.source_of(k),
            })
            .collect();
        Plan {
            scenario: scenario.into(),
            target,
            billed,
            region: cx.region.clone(),
            run_id: cx.run_id.into(),
            duration: cx.duration,
            cost: RunCost::of(chosen, parts),
            labs,
            provenance,
        }
    }

    /// The list price of the run's configuration for its whole duration.
    pub fn total(&self) -> f64 {
        self.cost.hourly() * self.duration.as_secs_f64() / 3600.0
    }

    /// Whether it would create anything billed on a real account.
    pub fn creates_billable(&self) -> bool {
        self.billed
            && self
                .labs
                .iter()
                .any(|l| l.creates.iter().any(|r| r.billable))
    }

    /// Why the run could not go as planned (a lab's problem), if one could not.
    pub fn problems(&self) -> Vec<String> {
        self.labs
            .iter()
            .filter_map(|l| l.problem.as_ref().map(|p| format!("{}: {p}", l.lab)))
            .collect()
    }

    /// `cost: $0.0621/h at list price (us-east-1, 2026-12-01); $0.0021 for the scenario's 2m`.
    pub fn cost_line(&self) -> String {
        format!(
            "cost: {}/h at list price ({}, {}{}); {} for the scenario's {}",
            usd(self.cost.hourly()),
            self.cost.region,
            self.cost.taken,
            if self.cost.unverified.is_empty() {
                ""
            } else {
                ", some prices unverified"
            },
            usd(self.total()),
            latlab_core::units::format_duration(self.duration)
        )
    }

    /// The plan as text, for a terminal or a write-up.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let mut o = String::new();
        let _ = writeln!(
            o,
            "plan: {} on {} (run id {})",
            self.scenario, self.target, self.run_id
        );
        let _ = writeln!(
            o,
            "nothing has been created: the plan's only calls are reads (Describe, List, Head)"
        );
        for lab in &self.labs {
            let _ = writeln!(o, "\n{} ({})", lab.lab, lab.service);
            if let Some(p) = &lab.problem {
                let _ = writeln!(o, "  cannot run: {p}");
            }
            section(&mut o, "creates", &lab.creates, self.billed);
            section(&mut o, "uses, does not create", &lab.uses, self.billed);
            let _ = writeln!(o, "  calls:");
            for c in &lab.calls {
                let _ = writeln!(
                    o,
                    "    {:<26} {:<40} {}{}",
                    c.operation,
                    c.action.as_deref().unwrap_or("(not IAM)"),
                    c.why,
                    if c.when_asked { " (when asked)" } else { "" }
                );
            }
            if let Some((cost, _)) = &lab.cost {
                match &cost.missing {
                    Some(why) => {
                        let _ = writeln!(o, "  cost: {why}");
                    }
                    None => {
                        let _ = writeln!(o, "  cost: {}/h", usd(cost.hourly()));
                        for i in &cost.items {
                            let _ = writeln!(
                                o,
                                "    {:<38} {:>10}/h  {}{}",
                                i.what,
                                usd(i.hourly),
                                i.how,
                                if i.unverified { " (unverified)" } else { "" }
                            );
                        }
                    }
                }
                for n in &cost.notes {
                    let _ = writeln!(o, "    note: {n}");
                }
            }
            for n in &lab.notes {
                let _ = writeln!(o, "  note: {n}");
            }
        }
        let _ = writeln!(o, "\n{}", self.cost_line());
        let _ = writeln!(o, "prices ({}):", self.cost.origin);
        for p in &self.provenance {
            let _ = writeln!(
                o,
                "  {:<42} {:<12} {}: {}",
                p.key,
                trim(p.value),
                if p.verified { "verified" } else { "unverified" },
                p.source
            );
        }
        if let Some(n) = &self.cost.note {
            let _ = writeln!(o, "  {n}");
        }
        o
    }

    /// The plan as data (`latlab-plan/1`).
    pub fn json(&self) -> serde_json::Value {
        let labs: Vec<serde_json::Value> = self
            .labs
            .iter()
            .map(|l| {
                let mut v = serde_json::to_value(l).unwrap_or_default();
                if let Some((cost, _)) = &l.cost {
                    v["cost"] = serde_json::json!({
                        "hourly_usd": cost.hourly(),
                        "missing": cost.missing,
                        "items": cost.items.iter().map(|i| serde_json::json!({
                            "what": i.what, "how": i.how, "hourly_usd": i.hourly,
                            "unverified": i.unverified,
                        })).collect::<Vec<_>>(),
                        "notes": cost.notes,
                    });
                }
                v
            })
            .collect();
        serde_json::json!({
            "format": "latlab-plan/1",
            "scenario": self.scenario,
            "target": self.target,
            "billed": self.billed,
            "region": self.region,
            "run_id": self.run_id,
            "duration_s": self.duration.as_secs_f64(),
            "labs": labs,
            "cost": {
                "hourly_usd": self.cost.hourly(),
                "total_usd": self.total(),
                "region": self.cost.region,
                "taken": self.cost.taken,
                "origin": self.cost.origin,
                "prices": self.provenance,
            },
            "actions": iam::actions(self),
        })
    }
}

fn section(o: &mut String, title: &str, list: &[Resource], billed: bool) {
    use std::fmt::Write;
    if list.is_empty() {
        let _ = writeln!(o, "  {title}: nothing");
        return;
    }
    let _ = writeln!(o, "  {title}:");
    for r in list {
        let _ = writeln!(
            o,
            "    {} {}: {}{}",
            r.kind,
            r.name,
            r.detail,
            match (r.billable, billed) {
                (false, _) => "",
                (true, true) => " (billed)",
                (true, false) => " (charged for on AWS)",
            }
        );
        if !r.tags.is_empty() {
            let tags: Vec<String> = r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = writeln!(o, "      tags: {}", tags.join(", "));
        }
        if let Some(f) = &r.found {
            let _ = writeln!(o, "      found: {f}");
        }
    }
}

/// A price as the price file writes it: `0.015`, `0.00000014`.
fn trim(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    let s = format!("{x:.10}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}
