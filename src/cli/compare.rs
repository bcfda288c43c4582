//! `latlab compare` and `latlab merge`: their flags, and the glue to `crate::compare`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::compare::{self, Input, render};
use crate::units::thousands;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    Text,
    Markdown,
    Json,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Recordings (`--record DIR`, or `latlab merge`) or report JSON files (`--format json`);
    /// each after the first is compared against the first
    #[arg(value_name = "DIR|FILE", num_args = 2.., required = true)]
    pub inputs: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: CompareFormat,
    /// Write the comparison here instead of standard output
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Compare runs of different scenarios (e.g. two scenario files that differ in retry mode)
    #[arg(long)]
    pub any_scenario: bool,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Recordings of one scenario (directories made with --record), e.g. one per host
    #[arg(value_name = "DIR", num_args = 2.., required = true)]
    pub inputs: Vec<PathBuf>,
    /// The merged recording's directory (new or empty)
    #[arg(long, short, value_name = "DIR")]
    pub output: PathBuf,
}

pub fn run_compare(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let inputs = args
        .inputs
        .iter()
        .map(|p| Input::read(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let comparisons = compare::compare(&inputs, args.any_scenario)?;
    let text = match args.format {
        CompareFormat::Text => render::document(&inputs, &comparisons, false),
        CompareFormat::Markdown => render::document(&inputs, &comparisons, true),
        CompareFormat::Json => render::json(&inputs, &comparisons),
    };
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write --output {}", path.display()))?,
        None => out!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run_merge(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let merged = compare::merge::merge(&args.inputs, &args.output)?;
    out!(
        "merged {} recordings into {}: {} series\n",
        args.inputs.len(),
        merged.dir.display(),
        merged.series.len()
    );
    for (name, count, seconds) in &merged.series {
        out!(
            "  {name}: {} values in {seconds} seconds\n",
            thousands(*count)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A merged recording has interval logs and no report: `latlab report` says so in one line.
pub fn refuse_merged_report(path: &std::path::Path) -> anyhow::Result<()> {
    if !path.is_dir() || path.join("report.json").exists() {
        return Ok(());
    }
    if let Ok(info) = compare::input::read_info(path)
        && let Some(from) = info["merged_from"].as_array()
    {
        anyhow::bail!(
            "{}: a merge of {} recordings has their interval logs but no report (a report's other figures do not add up across hosts); `latlab compare {} OTHER` shows its figures",
            path.display(),
            from.len(),
            path.display()
        );
    }
    Ok(())
}
