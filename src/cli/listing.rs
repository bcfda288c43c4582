//! What `latlab profile show` and `latlab emulate --list-profiles` print.

use super::*;

/// The built-in profiles, a line each; `verbose` adds every parameter with its source.
pub fn profiles_listing(verbose: bool) -> anyhow::Result<String> {
    let mut out = String::new();
    for name in BUILTIN_PROFILES {
        let p = LatencyProfile::resolve(name)?;
        if verbose {
            out.push_str(&profile_listing(&p));
            out.push('\n');
        } else {
            out.push_str(&format!("{:<12} {}\n", p.name, p.description));
        }
    }
    Ok(out)
}

/// A profile's parameters as a Markdown table: value, source, and the seed cells each was derived
/// from.
pub fn profile_markdown(p: &LatencyProfile) -> String {
    let mut t = crate::report::table::Table::new(&[
        "parameter",
        "value",
        "source",
        "derived from seed cells",
    ])
    .labels(4);
    for x in p.params() {
        t.row(vec![
            format!("`{}`", x.name),
            x.value,
            format!("{}: {}", x.provenance.source.name(), x.provenance.note),
            x.provenance
                .seed_cells
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", "),
        ]);
    }
    t.markdown()
}

/// A profile's parameters, each with its value, source and the seed cells it was derived from.
pub fn profile_listing(p: &LatencyProfile) -> String {
    let params = p.params();
    let derived = params
        .iter()
        .filter(|x| !x.provenance.seed_cells.is_empty())
        .count();
    let mut out = format!(
        "{}: {}\n{}, {derived} derived from seed figures (the seed cells they name are `calibrated` in reports)\n",
        p.name,
        p.description,
        latlab_core::units::plural(params.len() as u64, "parameter", "parameters")
    );
    for x in params {
        out.push_str(&format!(
            "\n{}  = {}\n  source: {} - {}\n",
            x.name,
            x.value,
            x.provenance.source.name(),
            x.provenance.note
        ));
        if !x.provenance.seed_cells.is_empty() {
            out.push_str(&format!(
                "  derived from seed cells: {}\n",
                x.provenance.seed_cells.join(", ")
            ));
        }
    }
    out
}

/// `latlab faults`: every kind, what it does, and the settings a fault takes.
pub fn faults_listing() -> String {
    use latlab_core::faults::Kind;
    let mut out = String::new();
    let width = Kind::all().map(|k| k.name().len()).max().unwrap_or(0);
    for k in Kind::all() {
        out.push_str(&format!("{:width$}  {}\n", k.name(), k.describe()));
    }
    // The kinds that hit more than one request a firing by default, as their services declare.
    let counts: Vec<String> = Kind::all()
        .filter(|k| k.info().count > 1)
        .map(|k| format!("{k}: {}", k.info().count))
        .chain(std::iter::once("others: 1".to_string()))
        .collect();
    let counts = counts.join(", ");
    out.push_str(&format!(
        "\nSet them with --fault KIND:key=value,... or a [[faults]] table in a scenario (kind = \"...\" and the same keys):\n\
         \x20 every=DURATION   fire every DURATION (first=DURATION: the first time, default every)\n\
         \x20 rate=PERCENT     hit this share of the matching requests (per-request kinds), e.g. 1%\n\
         \x20 operation=NAME   only this operation of the kind's service, e.g. PutRecord, GetObject, ReceiveMessage\n\
         \x20 shard=ID|INDEX   only requests naming this shard (Kinesis)\n\
         \x20 consumer=NAME    only this fan-out consumer's event streams\n\
         \x20 class=standard|express   only this S3 storage class\n\
         \x20 count=N          requests hit each time it fires ({counts})\n\
         \x20 for=DURATION     how long a stall, spike, pause, partition or sleep lasts\n\
         \x20 delay=DURATION   a spike's added latency (default 500ms)\n\
         \x20 on=primary|replica   the server redis.debug-sleep puts to sleep\n\
         \n",
    ));
    out.push_str(&format!(
        "{} faults are injected by the embedded emulator (and `latlab emulate`); {} faults on latlab's own redis-server pair (client-pause and debug-sleep on any Redis that allows them).\n",
        latlab_core::services::Service::emulated_list(),
        latlab_core::services::Service::not_emulated_list()
    ));
    out
}

/// `latlab profile`'s subcommands.
#[derive(Subcommand, Debug)]
pub enum ProfileCommand {
    /// The built-in latency profiles, a line each
    List,
    /// Every parameter of a profile with its value, its source and the seed figures it was
    /// derived from (those are `calibrated` in reports)
    Show {
        /// A built-in profile (zero, same-region, seed-tokyo) or a profile file
        #[arg(value_name = "NAME|FILE")]
        name: String,
        /// A Markdown table (as docs/latency-profiles.md shows it) instead of text
        #[arg(long)]
        markdown: bool,
    },
    /// Two profiles side by side: each parameter's value in both, the ratio of B's median (or
    /// rate) to A's, and where each comes from
    Diff {
        /// A built-in profile or a profile file
        #[arg(value_name = "A")]
        a: String,
        /// A built-in profile or a profile file
        #[arg(value_name = "B")]
        b: String,
    },
}
