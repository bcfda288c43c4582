//! A comparison written out: text for terminals, Markdown for write-ups (the tables of latlab's
//! reports), and JSON (`latlab-compare/1`) for scripts.

use serde_json::json;

use super::bootstrap::{CONFIDENCE, MIN_INTERVALS, RESAMPLES};
use super::{Comparison, FIGURES, Input, Presence, Row, Verdict, lab_order, label};
use crate::report::table::Table;
use latlab_core::units::{ms, thousands};

/// The JSON form's schema name.
pub const SCHEMA: &str = "latlab-compare/1";

/// `x1.03`.
fn ratio_text(r: f64) -> String {
    format!("x{r:.2}")
}

/// A figure's value: a count, or microseconds as milliseconds.
fn value(figure: &str, v: u64) -> String {
    if figure == "count" {
        thousands(v)
    } else {
        ms(v)
    }
}

fn heading(out: &mut String, md: bool, text: &str) {
    if md {
        out.push_str(&format!("\n### {text}\n\n"));
    } else {
        out.push_str(&format!("\n{text}\n"));
    }
}

/// The title of a lab's table, and the name of its subject column (each lab's own,
/// `Facts::compared`).
fn lab_title(lab: &str) -> (&'static str, &'static str) {
    crate::labs::LabKind::of_key(lab).map_or(("Other series", "series"), |l| l.compared())
}

/// The text or Markdown document.
pub fn document(inputs: &[Input], comparisons: &[Comparison], md: bool) -> String {
    let mut out = String::new();
    let mut scenarios: Vec<&str> = inputs.iter().map(|i| i.scenario.as_str()).collect();
    scenarios.dedup();
    let title = format!("latlab compare: {}", scenarios.join(" vs "));
    if md {
        out.push_str(&format!("## {title}\n\n"));
    } else {
        out.push_str(&format!("{title}\n\n"));
    }
    let mut t = Table::new(&[
        "input", "kind", "scenario", "backend", "started", "path", "ran",
    ])
    .labels(6);
    for (i, input) in inputs.iter().enumerate() {
        t.row(vec![
            label(i),
            input.kind.name(),
            input.scenario.clone(),
            input.backend.clone(),
            input
                .started
                .clone()
                .unwrap_or_else(|| "(a report does not say)".into()),
            input.path.display().to_string(),
            input
                .ran
                .map_or("?".into(), |(s, _)| latlab_core::units::format_secs(s)),
        ]);
    }
    out.push_str(&if md { t.markdown() } else { t.text() });
    let mut facts = vec![(
        "noise".to_string(),
        format!(
            "bootstrap over each run's per-second intervals, {} seeded resamples: a difference is larger than noise \
             when the {:.0}% interval of the ratio excludes x1.00 (not estimated below {MIN_INTERVALS} intervals a run)",
            thousands(RESAMPLES as u64),
            CONFIDENCE * 100.0
        ),
    )];
    for (i, input) in inputs.iter().enumerate() {
        if !input.faults.is_empty() {
            facts.push((format!("{} faults", label(i)), input.faults.join("; ")));
        }
        for note in &input.notes {
            facts.push((label(i), note.clone()));
        }
    }
    out.push('\n');
    for (k, v) in facts {
        if md {
            out.push_str(&format!("- **{k}**: {v}\n"));
        } else {
            out.push_str(&format!("{k:<8} {v}\n"));
        }
    }
    for c in comparisons {
        write_comparison(&mut out, inputs, c, md);
    }
    out
}

fn write_comparison(out: &mut String, inputs: &[Input], c: &Comparison, md: bool) {
    let (la, lb) = (label(c.a), label(c.b));
    let ratio_head = format!("{lb}/{la}");
    let interval_head = format!("{:.0}% interval", CONFIDENCE * 100.0);
    let mut labs: Vec<&str> = c.rows.iter().map(Row::lab).collect();
    labs.dedup();
    if c.rows.is_empty() {
        heading(out, md, &format!("{lb} against {la}"));
        out.push_str("Neither input has a series to compare.\n");
    }
    for lab in labs {
        let (title, subject) = lab_title(lab);
        heading(out, md, &format!("{title}: {lb} against {la}"));
        let mut t = Table::new(&[
            subject,
            "figure",
            &la,
            &lb,
            &ratio_head,
            &interval_head,
            "verdict",
        ])
        .labels(2);
        for row in c.rows.iter().filter(|r| r.lab() == lab) {
            let (count_a, count_b) = (row.figures[0].a.unwrap_or(0), row.figures[0].b.unwrap_or(0));
            for (k, f) in row.figures.iter().enumerate() {
                // A series with no values has a count and nothing else.
                if k > 0 && count_a == 0 && count_b == 0 {
                    continue;
                }
                let side = |v: Option<u64>, count: u64| match v {
                    Some(v) if k == 0 || count > 0 => value(f.name, v),
                    _ => "-".into(),
                };
                let verdict = match row.presence {
                    Presence::OnlyA if k == 0 => format!("only in {la}"),
                    Presence::OnlyB if k == 0 => format!("only in {lb}"),
                    Presence::Both if k == 0 && count_a == 0 => format!("no values in {la}"),
                    Presence::Both if k == 0 && count_b == 0 => format!("no values in {lb}"),
                    // The whole comparison's reason is said once, below its tables.
                    _ if c.unknown.is_some() && matches!(f.verdict, Verdict::Unknown(_)) => {
                        "noise unknown".into()
                    }
                    _ => f.verdict.text(),
                };
                t.row(vec![
                    if k == 0 { row.subject() } else { String::new() },
                    f.name.into(),
                    side(f.a, count_a),
                    side(f.b, count_b),
                    f.ratio.map_or(String::new(), ratio_text),
                    f.interval.map_or(String::new(), |(lo, hi)| {
                        format!("{} .. {}", ratio_text(lo), ratio_text(hi))
                    }),
                    verdict,
                ]);
            }
        }
        out.push_str(&if md { t.markdown() } else { t.text() });
    }
    if let Some(why) = &c.unknown {
        let which: Vec<String> = [c.a, c.b]
            .into_iter()
            .filter(|&i| !inputs[i].has_intervals())
            .map(|i| format!("{} is a report file", label(i)))
            .collect();
        out.push_str(&format!(
            "{lb} against {la}: noise unknown ({why}); {}.\n",
            which.join(" and ")
        ));
    }
}

/// The JSON form: the inputs, how noise is estimated, and each comparison, figures in µs.
pub fn json(inputs: &[Input], comparisons: &[Comparison]) -> String {
    let inputs_json: Vec<serde_json::Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            json!({
                "label": label(i),
                "path": input.path.display().to_string(),
                "kind": match input.kind {
                    super::Kind::Recording => "recording",
                    super::Kind::Merged(_) => "merged_recording",
                    super::Kind::Report => "report",
                },
                "merged_from": match input.kind {
                    super::Kind::Merged(n) => Some(n),
                    _ => None,
                },
                "scenario": input.scenario,
                "backend": input.backend,
                "started": input.started,
                "ran_secs": input.ran.map(|(s, _)| s),
                "ran_from": input.ran.map(|(_, from)| from),
                "faults": input.faults,
                "per_second_intervals": input.has_intervals(),
                "notes": input.notes,
            })
        })
        .collect();
    let comparisons_json: Vec<serde_json::Value> = comparisons
        .iter()
        .map(|c| {
            let mut rows: Vec<&Row> = c.rows.iter().collect();
            rows.sort_by_key(|r| lab_order(r.lab()));
            json!({
                "a": label(c.a),
                "b": label(c.b),
                "noise_unknown": c.unknown,
                "series": rows.iter().map(|r| json!({
                    "series": r.name,
                    "lab": r.lab(),
                    "subject": r.subject(),
                    "presence": match r.presence {
                        Presence::Both => "both",
                        Presence::OnlyA => "only_a",
                        Presence::OnlyB => "only_b",
                    },
                    "figures": r.figures.iter().map(|f| json!({
                        "figure": f.name,
                        "unit": if f.name == "count" { "values" } else { "us" },
                        "a": f.a,
                        "b": f.b,
                        "ratio": f.ratio,
                        "interval": f.interval.map(|(lo, hi)| [lo, hi]),
                        "verdict": f.verdict.id(),
                        "why_unknown": match &f.verdict {
                            Verdict::Unknown(why) => Some(why.clone()),
                            _ => None,
                        },
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let doc = json!({
        "schema": SCHEMA,
        "latlab_version": env!("CARGO_PKG_VERSION"),
        "figures": FIGURES,
        "noise": {
            "method": "bootstrap over per-second intervals",
            "resamples": RESAMPLES,
            "confidence": CONFIDENCE,
            "min_intervals": MIN_INTERVALS,
        },
        "inputs": inputs_json,
        "comparisons": comparisons_json,
    });
    serde_json::to_string_pretty(&doc).expect("JSON") + "\n"
}
