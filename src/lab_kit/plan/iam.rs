//! The least-privilege IAM policy a plan's calls need (`latlab iam-policy SCENARIO`): one
//! statement per set of resources, each allowing exactly the actions called on them. The
//! actions come from the labs' calls, which come from the services' typed operation lists
//! (`services::kinesis::Op`, `services::s3::Op`), so a call a lab adds is in its plan or the
//! test that runs the scenario against the emulator fails.

use std::collections::BTreeMap;

use super::{Plan, Scope};

/// Every IAM action the plan's calls need, sorted, each once.
pub fn actions(plan: &Plan) -> Vec<String> {
    let mut all: Vec<String> = plan
        .labs
        .iter()
        .flat_map(|l| l.calls.iter().filter_map(|c| c.action.clone()))
        .collect();
    all.sort();
    all.dedup();
    all
}

/// The policy document (IAM's JSON, version 2012-10-17).
pub fn policy(plan: &Plan) -> serde_json::Value {
    // Resources -> actions: calls on the same resources share a statement.
    let mut by_resources: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    for lab in &plan.labs {
        for call in &lab.calls {
            let Some(action) = &call.action else { continue };
            let mut resources: Vec<String> = call
                .resources
                .iter()
                .map(|r| match r {
                    Scope::Any => "*".to_string(),
                    Scope::Arn(a) => a.clone(),
                })
                .collect();
            resources.sort();
            resources.dedup();
            let actions = by_resources.entry(resources).or_default();
            if !actions.contains(action) {
                actions.push(action.clone());
            }
        }
    }
    let statements: Vec<serde_json::Value> = by_resources
        .into_iter()
        .enumerate()
        .map(|(i, (resources, mut actions))| {
            actions.sort();
            serde_json::json!({
                "Sid": format!("Latlab{}", i + 1),
                "Effect": "Allow",
                "Action": actions,
                "Resource": if resources.len() == 1 {
                    serde_json::Value::String(resources[0].clone())
                } else {
                    serde_json::json!(resources)
                },
            })
        })
        .collect();
    serde_json::json!({
        "Version": "2012-10-17",
        "Statement": statements,
    })
}

/// The policy as IAM's console and CLI write it: `Version` first, each statement's `Sid`,
/// `Effect`, `Action` and `Resource` in that order.
pub fn policy_text(plan: &Plan) -> String {
    let doc = policy(plan);
    let q = |v: &serde_json::Value| serde_json::to_string(v).unwrap_or_default();
    let mut o = String::from("{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [\n");
    let statements = doc["Statement"].as_array().cloned().unwrap_or_default();
    for (i, st) in statements.iter().enumerate() {
        o.push_str("    {\n");
        o.push_str(&format!("      \"Sid\": {},\n", q(&st["Sid"])));
        o.push_str(&format!("      \"Effect\": {},\n", q(&st["Effect"])));
        o.push_str("      \"Action\": [\n");
        let actions = st["Action"].as_array().cloned().unwrap_or_default();
        for (j, a) in actions.iter().enumerate() {
            o.push_str(&format!(
                "        {}{}\n",
                q(a),
                if j + 1 < actions.len() { "," } else { "" }
            ));
        }
        o.push_str("      ],\n");
        match &st["Resource"] {
            serde_json::Value::Array(list) => {
                o.push_str("      \"Resource\": [\n");
                for (j, r) in list.iter().enumerate() {
                    o.push_str(&format!(
                        "        {}{}\n",
                        q(r),
                        if j + 1 < list.len() { "," } else { "" }
                    ));
                }
                o.push_str("      ]\n");
            }
            r => o.push_str(&format!("      \"Resource\": {}\n", q(r))),
        }
        o.push_str(if i + 1 < statements.len() {
            "    },\n"
        } else {
            "    }\n"
        });
    }
    o.push_str("  ]\n}\n");
    o
}

/// What the policy leaves to other means (a Redis command is allowed by Redis's ACL, not
/// IAM), said on standard error beside the policy.
pub fn outside(plan: &Plan) -> Vec<String> {
    plan.labs
        .iter()
        .filter_map(|l| {
            let ops: Vec<&str> = l
                .calls
                .iter()
                .filter(|c| c.action.is_none())
                .map(|c| c.operation.as_str())
                .collect();
            (!ops.is_empty()).then(|| {
                format!(
                    "{}: {} are not IAM actions; allow them on the server ({})",
                    l.lab,
                    ops.join(", "),
                    l.notes
                        .iter()
                        .find(|n| n.starts_with("ACL"))
                        .map_or("its ACL", |n| n.as_str())
                )
            })
        })
        .collect()
}

/// The policy's statement and line that would allow `action` (for the doctor's denied
/// actions): `Statement Latlab2: "kinesis:GetRecords" on arn:...`.
pub fn allowing(plan: &Plan, action: &str) -> Option<String> {
    let doc = policy(plan);
    let text = policy_text(plan);
    let statements = doc["Statement"].as_array()?;
    let st = statements.iter().find(|s| {
        s["Action"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == action))
    })?;
    let line = text
        .lines()
        .position(|l| l.trim().trim_end_matches(',') == format!("\"{action}\""))
        .map(|i| i + 1)?;
    Some(format!(
        "{} (line {line} of `latlab iam-policy {}`): \"{action}\" on {}",
        st["Sid"].as_str().unwrap_or("?"),
        plan.scenario,
        st["Resource"]
    ))
}
