//! `latlab merge`: recordings of one scenario, made on several machines, made one recording.
//!
//! Per series, every interval is placed in the whole second (since the epoch) its start falls in,
//! and the intervals of one second are added: nothing is resampled or dropped, so the merged
//! counts are the sums of the inputs' and its percentiles those of all their values together.
//! Hosts' clocks that disagree shift which second an interval lands in, never the merged figures.
//!
//! Everything is read and checked before anything is written, and the merge is written in a
//! directory beside the target that is renamed to it at the end: a merge that fails leaves
//! nothing behind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use hdrhistogram::Histogram;
use serde_json::json;

use super::hlog::{self, Interval};
use super::input::{Input, Kind};
use crate::record::SCHEMA;

/// What a merge made.
pub struct Merged {
    pub dir: PathBuf,
    /// Per series: its name, its values, and its seconds.
    pub series: Vec<(String, u64, usize)>,
}

/// Checks that `out` can be the merge's directory: new or empty, its parent a directory.
fn check_output(out: &Path) -> anyhow::Result<PathBuf> {
    if out.exists() {
        if !out.is_dir() {
            anyhow::bail!(
                "-o {}: it is a file; name a new or empty directory",
                out.display()
            );
        }
        let mut entries = std::fs::read_dir(out)
            .with_context(|| format!("-o {}: cannot read the directory", out.display()))?;
        if entries.next().is_some() {
            anyhow::bail!(
                "-o {}: the directory is not empty; name a new or empty one",
                out.display()
            );
        }
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        anyhow::bail!(
            "-o {}: {} is not a directory; name a directory whose parent exists",
            out.display(),
            parent.display()
        );
    }
    Ok(parent)
}

/// Reads every input, checks they are recordings of one scenario, and writes their merge to
/// `out`.
pub fn merge(paths: &[PathBuf], out: &Path) -> anyhow::Result<Merged> {
    merge_labelled(paths, &[], out)
}

/// Whether two scenario files say the same but for `role` (what one host runs of a lab that
/// splits into a producer and consumers): the hosts of one run may differ in it.
fn same_scenario(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let parse = |t: &str| {
        t.parse::<toml::Table>().ok().map(|mut t| {
            t.remove("role");
            t
        })
    };
    matches!((parse(a), parse(b)), (Some(x), Some(y)) if x == y)
}

/// [`merge`], each input shown by its label where one is given (an `s3://` folder it was
/// downloaded from) rather than by its path.
pub fn merge_labelled(
    paths: &[PathBuf],
    labels: &[Option<String>],
    out: &Path,
) -> anyhow::Result<Merged> {
    let parent = check_output(out)?;
    let mut inputs = Vec::new();
    for p in paths {
        let input = Input::read(p)?;
        if input.kind == Kind::Report {
            anyhow::bail!(
                "{} is a report file: it has figures, not the per-second intervals a merge adds; latlab merge takes recordings (directories made with --record)",
                p.display()
            );
        }
        inputs.push(input);
    }
    let first = &inputs[0];
    for other in &inputs[1..] {
        if other.scenario != first.scenario {
            anyhow::bail!(
                "{} is a run of scenario '{}' and {} of '{}'; latlab merge combines runs of one scenario",
                first.path.display(),
                first.scenario,
                other.path.display(),
                other.scenario
            );
        }
        let same = match (&other.scenario_text, &first.scenario_text) {
            (Some(a), Some(b)) => same_scenario(a, b),
            (a, b) => a == b,
        };
        if !same {
            anyhow::bail!(
                "{} and {}: their scenario.toml files differ; latlab merge combines runs of one scenario as written",
                first.path.join("scenario.toml").display(),
                other.path.join("scenario.toml").display()
            );
        }
    }

    // Per series, per second since the epoch, the intervals added.
    let mut merged: BTreeMap<String, (String, BTreeMap<i64, Histogram<u64>>)> = BTreeMap::new();
    for input in &inputs {
        for (key, s) in &input.series {
            let entry = merged
                .entry(key.clone())
                .or_insert_with(|| (s.name.clone(), BTreeMap::new()));
            for i in s.intervals.iter().flatten() {
                let second = i.start_ms.div_euclid(1000);
                match entry.1.get_mut(&second) {
                    Some(h) => h.add(&i.hist).map_err(|e| {
                        anyhow::anyhow!(
                            "{}: an interval of {} cannot be added to the others ({e:?})",
                            input.path.display(),
                            s.name
                        )
                    })?,
                    None => {
                        let mut h = i.hist.clone();
                        h.auto(true);
                        entry.1.insert(second, h);
                    }
                }
            }
        }
    }
    let base_ms = merged
        .values()
        .filter_map(|(_, secs)| secs.keys().next())
        .min()
        .map_or(0, |s| s * 1000);

    let tmp = tempfile::Builder::new()
        .prefix(".latlab-merge-")
        .tempdir_in(&parent)
        .with_context(|| format!("-o {}: cannot write in {}", out.display(), parent.display()))?;
    std::fs::create_dir(tmp.path().join("hlog"))
        .with_context(|| format!("-o {}: cannot write in {}", out.display(), parent.display()))?;
    let note = format!(
        "merged by latlab merge from {} recordings: intervals of one second added",
        inputs.len()
    );
    let mut summary = Vec::new();
    for (key, (name, seconds)) in &merged {
        let intervals: Vec<Interval> = seconds
            .iter()
            .map(|(s, h)| Interval {
                start_ms: s * 1000,
                hist: h.clone(),
            })
            .collect();
        let path = tmp.path().join("hlog").join(format!("{key}.hlog"));
        hlog::write(&path, name, key, base_ms, &note, &intervals)?;
        let count = intervals.iter().map(|i| i.hist.len()).sum();
        summary.push((name.clone(), count, intervals.len()));
    }

    let mut backends: Vec<&str> = inputs.iter().map(|i| i.backend.as_str()).collect();
    backends.dedup();
    let mut faults: Vec<&String> = inputs.iter().flat_map(|i| &i.faults).collect();
    faults.sort();
    faults.dedup();
    let started = inputs
        .iter()
        .filter_map(|i| i.started.as_deref())
        .min()
        .unwrap_or_default();
    let sources: Vec<serde_json::Value> = inputs
        .iter()
        .enumerate()
        .map(|(n, i)| {
            let path = match labels.get(n).cloned().flatten() {
                Some(label) => label,
                None => std::fs::canonicalize(&i.path)
                    .unwrap_or_else(|_| i.path.clone())
                    .display()
                    .to_string(),
            };
            json!({
                "path": path,
                "kind": i.kind.name(),
                "backend": i.backend,
                "started": i.started,
                "faults": i.faults,
                "notes": i.notes,
            })
        })
        .collect();
    let info = json!({
        "schema": SCHEMA,
        "latlab_version": env!("CARGO_PKG_VERSION"),
        "scenario": first.scenario,
        "backend": if backends.len() == 1 {
            backends[0].to_string()
        } else {
            format!("merged: {}", backends.join("; "))
        },
        "faults": faults,
        "started": started,
        "merged_from": sources,
    });
    let write = |name: &str, text: &str| {
        std::fs::write(tmp.path().join(name), text)
            .with_context(|| format!("-o {}: cannot write {name}", out.display()))
    };
    write(
        "recording.json",
        &(serde_json::to_string_pretty(&info).expect("JSON") + "\n"),
    )?;
    if let Some(text) = &first.scenario_text {
        write("scenario.toml", text)?;
    }
    // An empty target is replaced by the finished merge in one rename.
    let kept = tmp.keep();
    std::fs::rename(&kept, out).map_err(|e| {
        let _ = std::fs::remove_dir_all(&kept);
        anyhow::anyhow!(
            "-o {}: cannot move the merge into place ({e})",
            out.display()
        )
    })?;
    Ok(Merged {
        dir: out.to_path_buf(),
        series: summary,
    })
}

#[cfg(test)]
mod tests {
    use super::same_scenario;

    #[test]
    fn hosts_may_differ_in_role_and_in_nothing_else() {
        let base = "name = \"demo\"\nduration = \"2m\"\n[kinesis]\nstream = \"s\"\n";
        let reader =
            "name = \"demo\"\nrole = \"consumers\"\nduration = \"2m\"\n[kinesis]\nstream = \"s\"\n";
        assert!(same_scenario(base, base));
        assert!(same_scenario(base, reader));
        assert!(!same_scenario(base, &reader.replace("2m", "3m")));
        assert!(!same_scenario(base, "not toml ["));
    }
}
