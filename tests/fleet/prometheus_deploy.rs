//! deploy/prometheus/ as a user runs it: `promtool` accepts the scrape config and the recording
//! rules, and the rules' unit tests (two hosts' bucket counters, the fleet quantiles worked out by
//! hand) pass. Without promtool: the unit tests' buckets are the exporter's own, and the rules
//! name only families and labels latlab exports.
//!
//! promtool comes from Debian's `prometheus` package (scripts/test and .ci/run install it); a
//! missing one fails the test with a message saying so.

use crate::common;

use std::path::{Path, PathBuf};

use latlab::metrics::exposition::BOUNDS;

/// A file of deploy/prometheus/.
fn deploy(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join("prometheus")
        .join(file)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `promtool ARGS FILE`: fails the test, with everything promtool printed, unless it succeeds;
/// its standard output.
fn promtool(args: &[&str], file: &str) -> String {
    let path = deploy(file);
    let out = common::prometheus_tool("promtool")
        .args(args)
        .arg(&path)
        .output()
        .expect("promtool runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "promtool {} {} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        args.join(" "),
        path.display(),
        out.status
    );
    stdout
}

/// The recording rules' names, in the file's order.
fn rule_names() -> Vec<String> {
    read(&deploy("latlab-rules.yml"))
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- record:"))
        .map(|n| n.trim().to_string())
        .collect()
}

#[test]
fn promtool_accepts_the_scrape_config() {
    let said = promtool(&["check", "config"], "prometheus.yml");
    assert!(
        said.contains("is valid prometheus config file syntax"),
        "{said}"
    );
    // The config's rule file is found and checked along with it.
    assert!(said.contains("latlab-rules.yml"), "{said}");
}

#[test]
fn promtool_accepts_the_recording_rules() {
    let said = promtool(&["check", "rules"], "latlab-rules.yml");
    let n = rule_names().len();
    assert!(n > 0, "no `- record:` in latlab-rules.yml");
    assert!(
        said.contains(&format!("SUCCESS: {n} rules found")),
        "{n} rules in the file:\n{said}"
    );
}

#[test]
fn the_recording_rules_pass_their_unit_tests() {
    let said = promtool(&["test", "rules"], "latlab-rules.test.yml");
    assert!(said.contains("SUCCESS"), "{said}");
}

#[test]
fn every_quantile_rule_has_a_unit_test() {
    let tests = read(&deploy("latlab-rules.test.yml"));
    let quantiles: Vec<String> = rule_names()
        .into_iter()
        .filter(|n| n.ends_with(":p50_1m") || n.ends_with(":p99_1m"))
        .collect();
    assert_eq!(quantiles.len(), 8, "{quantiles:?}");
    for name in quantiles {
        assert!(
            tests.contains(&format!("expr: round({name}, 0.000001)")),
            "latlab-rules.test.yml does not test {name}"
        );
    }
}

#[test]
fn the_unit_tests_buckets_are_the_exporters() {
    // Every histogram series of the unit tests has the exporter's bounds, each `le` written as
    // the exporter writes it, in its order.
    let tests = read(&deploy("latlab-rules.test.yml"));
    let les: Vec<&str> = tests
        .split("le=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap_or_default())
        .collect();
    let bounds: Vec<&str> = BOUNDS.iter().map(|(_, le)| *le).collect();
    assert!(!les.is_empty(), "no bucket series in latlab-rules.test.yml");
    assert_eq!(
        les.len() % bounds.len(),
        0,
        "{} `le` labels, not a whole number of histograms of {} buckets",
        les.len(),
        bounds.len()
    );
    for (i, series) in les.chunks(bounds.len()).enumerate() {
        assert_eq!(series, bounds.as_slice(), "histogram series {i}");
    }
}

/// The labels of `expr`'s `by (...)`, but `le`.
fn grouped_by(expr: &str) -> Vec<String> {
    let Some((_, rest)) = expr.split_once("by (") else {
        return Vec::new();
    };
    let inside = rest.split(')').next().unwrap_or_default();
    inside
        .split(',')
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty() && l != "le")
        .collect()
}

#[test]
fn the_rules_name_only_families_and_labels_latlab_exports() {
    let rules = read(&deploy("latlab-rules.yml"));
    let exprs: Vec<&str> = rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("expr:"))
        .collect();
    assert_eq!(exprs.len(), rule_names().len());
    let mut checked = 0;
    for expr in exprs {
        let names: Vec<&str> = expr
            .match_indices("latlab_")
            .map(|(at, _)| {
                let rest = &expr[at..];
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                &rest[..end]
            })
            .collect();
        if names.is_empty() {
            // `up`, Prometheus's own.
            assert!(expr.contains("up{job=\"latlab\"}"), "{expr}");
            continue;
        }
        assert_eq!(names.len(), 1, "one latlab family per rule: {expr}");
        let sample = names[0];
        // A histogram's buckets, or a counter's samples: the family is named without the suffix.
        let (family, histogram) = match sample.strip_suffix("_bucket") {
            Some(f) => (f, true),
            None => (
                sample
                    .strip_suffix("_total")
                    .unwrap_or_else(|| panic!("neither buckets nor a counter: {expr}")),
                false,
            ),
        };
        let lab = family
            .strip_prefix("latlab_")
            .and_then(|f| f.split('_').next())
            .unwrap_or_default();
        let source_path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/labs")
            .join(lab)
            .join("metrics.rs");
        let source = read(&source_path);
        let quoted = format!("\"{family}\"");
        let at = source
            .find(&quoted)
            .unwrap_or_else(|| panic!("{} exports no {family}: {expr}", source_path.display()));
        // A histogram's labels are pushed right after its family is made, before the next one;
        // counters share their labels further down.
        let labels_of = if histogram {
            let after = &source[at..];
            let end = after.find("Family::new(").unwrap_or(after.len());
            &after[..end]
        } else {
            source.as_str()
        };
        for label in grouped_by(expr) {
            assert!(
                labels_of.contains(&format!("(\"{label}\",")),
                "{family} has no label {label} in {}: {expr}",
                source_path.display()
            );
        }
        checked += 1;
    }
    assert!(checked >= 8, "{checked} rules checked");
}
