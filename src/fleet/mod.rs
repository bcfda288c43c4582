//! Many hosts, one picture: what latlab knows of the host it runs on, and what `latlab merge`
//! says of several hosts' runs of one scenario taken together. The recordings travel through
//! S3 (`--record-to s3://BUCKET/PREFIX/`, [`s3`]); each lab says what its parts add up to
//! across hosts ([`crate::labs::Reported::fleet`]).

pub mod s3;

pub use crate::labs::hosts::{HostPart, Line};

/// This host's name in recordings, uploads and merges: `--host-name`, else the system's.
pub fn host_name(given: Option<&str>) -> String {
    if let Some(name) = given {
        return name.to_string();
    }
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its whole length, which is what gethostname is given.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let name = if rc == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        String::new()
    };
    if name.is_empty() {
        "host".to_string()
    } else {
        name
    }
}

/// Checks a `--host-name`: it names a folder in S3 and a line in a merge.
pub fn check_host_name(name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !ok {
        anyhow::bail!(
            "--host-name '{name}': use 1 to 63 letters, digits, '-', '_' or '.' (it names the host's folder under --record-to and its lines in a merge)"
        );
    }
    Ok(())
}

/// One host's recording as a merge reads it: its host and run (from `recording.json`, else
/// the folder's name) and its report (the recording's `report.json`, or its last whole second
/// when the run did not end).
pub struct HostRun {
    pub host: String,
    pub run_id: String,
    pub report: Option<crate::report::Report>,
    /// Why it has no report.
    pub unread: Option<String>,
}

impl HostRun {
    pub fn read(dir: &std::path::Path) -> HostRun {
        let info = crate::compare::input::read_info(dir).unwrap_or_default();
        let folder = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let host = info["host"].as_str().map_or(folder.clone(), str::to_string);
        let run_id = info["run_id"].as_str().unwrap_or("").to_string();
        let (report, unread) = if dir.join("report.json").exists() {
            match crate::record::read_report(dir) {
                Ok(r) => (Some(r), None),
                Err(e) => (None, Some(format!("{e:#}"))),
            }
        } else {
            (
                None,
                Some("the run did not end (no report.json)".to_string()),
            )
        };
        HostRun {
            host,
            run_id,
            report,
            unread,
        }
    }
}

/// Names every recording apart: hosts of one name (two local runs on one machine, both `vm`)
/// are `host/RUN_ID` each, so that no line of a merge could be either.
pub fn distinct_names(hosts: &mut [HostRun]) {
    let names: Vec<String> = hosts.iter().map(|h| h.host.clone()).collect();
    for h in hosts.iter_mut() {
        if names.iter().filter(|n| **n == h.host).count() > 1 && !h.run_id.is_empty() {
            h.host = format!("{}/{}", h.host, h.run_id);
        }
    }
}

/// What a merge says of its hosts together: which ended early (or did not end), runs measured
/// with different latency profiles, then each lab's lines across them.
pub fn lines(hosts: &[HostRun]) -> Vec<Line> {
    let mut out = Vec::new();
    let profiles: Vec<(&str, &str)> = hosts
        .iter()
        .filter_map(|h| {
            let p = h
                .report
                .as_ref()?
                .snapshot
                .backend
                .latency_profile
                .as_deref()?;
            Some((h.host.as_str(), p))
        })
        .collect();
    if profiles.iter().any(|(_, p)| *p != profiles[0].1) {
        out.push(Line::warning(format!(
            "the recordings were measured with different latency profiles ({}): the merged figures mix them",
            profiles
                .iter()
                .map(|(h, p)| format!("{p} on {h}"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let longest = hosts
        .iter()
        .filter_map(|h| h.report.as_ref())
        .map(|r| r.snapshot.elapsed_secs)
        .fold(0.0f64, f64::max);
    for h in hosts {
        match (&h.report, &h.unread) {
            (Some(r), _) => {
                let asked = r.scenario.requested_duration_secs;
                let early = r.ending == crate::report::Ending::StoppedEarly;
                if early {
                    out.push(Line::warning(format!(
                        "{} ended early: stopped after {:.1} s{} (Ctrl-C or SIGTERM); its figures are whole up to then",
                        h.host,
                        r.snapshot.elapsed_secs,
                        asked.map_or(String::new(), |d| format!(" of {d:.0} s")),
                    )));
                } else if r.snapshot.elapsed_secs + 1.0 < longest && asked.is_none() {
                    out.push(Line::info(format!(
                        "{} ran {:.1} s, the longest host {longest:.1} s",
                        h.host, r.snapshot.elapsed_secs
                    )));
                }
            }
            (None, why) => out.push(Line::warning(format!(
                "{} has no report: {}; its intervals are merged, its counts are not",
                h.host,
                why.as_deref().unwrap_or("unreadable")
            ))),
        }
    }
    macro_rules! each_lab {
        ($($kind:ident: $module:ident::$ty:ident,)*) => {
            $({
                let parts: Vec<HostPart<'_, <crate::labs::$module::$ty as crate::labs::Lab>::Snapshot>> = hosts
                    .iter()
                    .map(|h| HostPart {
                        host: &h.host,
                        run_id: &h.run_id,
                        part: h.report.as_ref().and_then(|r| r.snapshot.$module.as_ref()),
                        own_emulator: h
                            .report
                            .as_ref()
                            .is_some_and(|r| r.snapshot.backend.kind == "emulator"),
                    })
                    .collect();
                if parts.iter().any(|p| p.part.is_some()) {
                    out.extend(<crate::labs::$module::$ty as crate::labs::Reported>::fleet(&parts));
                }
            })*
        };
    }
    crate::labs::for_each_lab!(each_lab);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_name_is_a_folder_name() {
        assert!(check_host_name("reader-1.example").is_ok());
        let e = check_host_name("a b").unwrap_err().to_string();
        assert!(
            e.contains("--host-name 'a b'") && e.contains("letters"),
            "{e}"
        );
        assert!(check_host_name("").is_err());
        assert!(check_host_name(&"x".repeat(64)).is_err());
        assert!(!host_name(None).is_empty());
        assert_eq!(host_name(Some("given")), "given");
    }
}
