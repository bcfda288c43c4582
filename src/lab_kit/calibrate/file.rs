//! The profile file a calibration writes: the form `--latency-profile FILE` reads (`base` for
//! what was not measured, a table per service, and each measured parameter's provenance), with
//! the target, the date, the samples and the statistic in every parameter's note.

use std::collections::BTreeMap;

use super::{Calibration, Value};

/// The file's text. `target` names where it was measured (an endpoint, `AWS (us-east-1)`).
pub fn profile_toml(cal: &Calibration, name: &str, target: &str, date: &str, run: &str) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "# Written by `latlab calibrate` (run {run}) on {date}, measured on {target}.\n\
         # Every parameter below was measured; its provenance says how. Any other parameter is\n\
         # the base profile's, with the base's source.\n"
    ));
    for n in &cal.notes {
        out.push_str(&format!("# {n}\n"));
    }
    for l in &cal.left {
        out.push_str(&format!("# not measured: {l}\n"));
    }
    out.push_str(&format!(
        "name = {}\ndescription = {}\nbase = \"same-region\"\n",
        quoted(name),
        quoted(&format!(
            "measured by latlab calibrate on {target} on {date}"
        ))
    ));
    // Parameters by table: `kinesis.request` -> [kinesis] request; `s3.standard.x` ->
    // [s3.standard] x; `s3.create_session` -> [s3] create_session.
    let mut tables: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for p in &cal.params {
        let (table, key) = p.name.rsplit_once('.').unwrap_or(("", &p.name));
        let value = match p.value {
            Value::Delay(s) => s.toml(),
            Value::Number(v) => format!("{v}"),
        };
        tables
            .entry(table.to_string())
            .or_default()
            .push((key.to_string(), value));
    }
    for (table, keys) in &tables {
        out.push_str(&format!("\n[{table}]\n"));
        for (k, v) in keys {
            out.push_str(&format!("{k} = {v}\n"));
        }
    }
    for p in &cal.params {
        out.push_str(&format!(
            "\n[provenance.{}]\nsource = \"measurement\"\nnote = {}\n",
            quoted(&p.name),
            quoted(&format!(
                "measured on {target} on {date} (latlab calibrate, run {run}): {}; {} samples",
                p.how, p.samples
            ))
        ));
    }
    out
}

fn quoted(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if c.is_control() => o.push(' '),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab_kit::calibrate::fit::Shape;

    #[test]
    fn the_file_reads_back_as_a_profile_with_every_parameter_measured() {
        let mut cal = Calibration::default();
        cal.delay(
            "kinesis.request",
            Shape::from_quantiles(1.0, 2.0, 5.0),
            60,
            "half of each quantile of 60 round trips \"split evenly\"".into(),
        );
        cal.number(
            "s3.standard.get_first_byte_per_mib_ms",
            3.5,
            40,
            "a slope".into(),
        );
        cal.delay(
            "s3.create_session",
            Shape::from_quantiles(1.0, 3.0, 9.0),
            20,
            "round trips".into(),
        );
        cal.notes
            .push("the clock offset is between -1 and +2 ms".into());
        let text = profile_toml(&cal, "mine", "http://127.0.0.1:1", "2026-12-06", "0a1b2c3d");
        let p = latlab_emulator::profile::LatencyProfile::from_toml(&text).expect(&text);
        assert_eq!(p.name, "mine");
        let params = p.params();
        let find = |n: &str| params.iter().find(|x| x.name == n).unwrap().clone();
        let req = find("kinesis.request");
        assert_eq!(req.value, "min 1 ms, median 2 ms, p99 5 ms (mean 2.19 ms)");
        assert_eq!(req.provenance.source.name(), "measurement");
        assert!(
            req.provenance
                .note
                .contains("on http://127.0.0.1:1 on 2026-12-06")
        );
        assert!(req.provenance.note.contains("60 samples"));
        assert!(req.provenance.note.contains("split evenly"));
        assert_eq!(
            find("s3.standard.get_first_byte_per_mib_ms").value,
            "3.5 ms/MiB"
        );
        // What was not measured is the base's, with the base's source.
        assert_eq!(find("kinesis.efo_push").provenance.source.name(), "aws-doc");
    }
}
