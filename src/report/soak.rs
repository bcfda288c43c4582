//! The soak's figures, from a run's JSON report: per consumer the record accounting, the faults
//! injected and recovered by kind, and latlab's own memory, descriptors and tasks, with the soak's
//! goals beside them. `cargo bench --bench soak` prints it; tests/soak.rs checks its short form.

use serde_json::Value;

/// The soak's summary of a report, as text.
pub fn summary(report: &Value) -> String {
    let s = &report["snapshot"];
    let mut out = String::new();
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    out.push_str(&format!(
        "soak: {} s of records produced ({} s with set-up and drain)\n\n",
        s["producing_secs"].as_f64().unwrap_or(0.0).round(),
        s["elapsed_secs"].as_f64().unwrap_or(0.0).round()
    ));
    // Each lab's counts, from its part of the report, in the registry's order.
    let mut lost_total = 0;
    for lab in crate::labs::LabKind::ALL {
        lost_total += lab.soak(&s[lab.key()], &mut out);
    }
    let counts = s["faults"]["counts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let fired: u64 = counts.iter().map(|c| n(&c["fired"])).sum();
    let recovered: u64 = counts.iter().map(|c| n(&c["recovered"])).sum();
    out.push_str(&format!(
        "\nfaults: {fired} injected, {recovered} recovered\n"
    ));
    for c in &counts {
        out.push_str(&format!(
            "  {:<30}{:>6} injected{:>6} recovered{:>4} not injected\n",
            c["kind"].as_str().unwrap_or("?"),
            n(&c["fired"]),
            n(&c["recovered"]),
            n(&c["failed"])
        ));
    }
    let pr = &s["process"];
    let mb = |v: &Value| {
        v.as_u64()
            .map_or("?".to_string(), |b| format!("{:.1} MB", b as f64 / 1e6))
    };
    let at = |key: &str| -> String {
        let x = &pr[key];
        if x.is_null() {
            return format!("{key}: not reached");
        }
        format!(
            "{key} ({} s): RSS {}, {} open fds, {} tokio tasks",
            x["at_secs"].as_f64().unwrap_or(0.0).round(),
            mb(&x["rss_bytes"]),
            n(&x["open_fds"]),
            n(&x["tasks"])
        )
    };
    out.push_str(&format!(
        "\nprocess:\n  {}\n  {}\n  {}\n  peak RSS {}\n",
        at("start"),
        at("at_10_min"),
        at("last"),
        mb(&pr["peak_rss_bytes"])
    ));
    let ten = &pr["at_10_min"];
    out.push_str("\ngoals:\n");
    out.push_str(&format!(
        "  0 records lost: {} ({lost_total} lost)\n",
        if lost_total == 0 { "met" } else { "NOT MET" }
    ));
    if ten.is_null() {
        out.push_str(
            "  RSS, fds and tasks after 10 minutes: the run was shorter than 10 minutes\n",
        );
    } else {
        let (a, b) = (
            n(&ten["rss_bytes"]) as f64,
            n(&pr["last"]["rss_bytes"]) as f64,
        );
        let growth = if a > 0.0 { (b - a) / a * 100.0 } else { 0.0 };
        out.push_str(&format!(
            "  RSS growth after 10 minutes under 10%: {} ({growth:+.1}%)\n",
            if growth < 10.0 { "met" } else { "NOT MET" }
        ));
        // Connections and tasks come and go with each request: a sample is one moment of that,
        // so growth is counted beyond a tolerance of 10% + 5.
        for (what, key) in [("open fds", "open_fds"), ("tokio tasks", "tasks")] {
            let (a, b) = (n(&ten[key]), n(&pr["last"][key]));
            let limit = a + a / 10 + 5;
            out.push_str(&format!(
                "  no growth in {what} after 10 minutes (beyond 10% + 5): {} ({a} -> {b})\n",
                if b <= limit { "met" } else { "NOT MET" }
            ));
        }
    }
    out
}
