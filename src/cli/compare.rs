//! `latlab compare` and `latlab merge`: their flags, and the glue to `crate::compare`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::compare::{self, Input, render};
use latlab_core::units::thousands;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    Text,
    Markdown,
    Json,
}

/// Where `s3://` inputs are read from: an S3 endpoint or AWS.
#[derive(Args, Debug, Clone, Default)]
pub struct BucketArgs {
    /// The S3 endpoint that holds s3:// inputs (e.g. `latlab emulate`'s, or LocalStack)
    #[arg(long, value_name = "URL", env = "LATLAB_ENDPOINT_URL")]
    pub endpoint_url: Option<String>,
    /// s3:// inputs are on AWS (the SDK's credentials and region)
    #[arg(long, conflicts_with = "endpoint_url", env = "LATLAB_AWS")]
    pub aws: bool,
    /// Region for --endpoint-url or --aws
    #[arg(long, value_name = "REGION")]
    pub region: Option<String>,
}

impl BucketArgs {
    fn target(&self) -> crate::labs::TargetOptions {
        crate::labs::TargetOptions {
            endpoint_url: self.endpoint_url.clone(),
            aws: self.aws,
            region: self.region.clone(),
            ..Default::default()
        }
    }
}

/// Inputs as they are read: each a path, with the `s3://` folder it was downloaded from.
type Fetched = Vec<Vec<(PathBuf, Option<String>)>>;

/// The inputs as directories and files: each `s3://` URL downloaded (into `tmp`), a folder of
/// recordings becoming one per recording. Each comes with the URL it came from.
fn fetch(
    inputs: &[PathBuf],
    bucket: &BucketArgs,
    tmp: &std::path::Path,
) -> anyhow::Result<Fetched> {
    let urls: Vec<Option<crate::fleet::s3::S3Url>> = inputs
        .iter()
        .map(|p| {
            let text = p.to_string_lossy();
            crate::fleet::s3::S3Url::is_s3(&text)
                .then(|| crate::fleet::s3::S3Url::parse(&text))
                .transpose()
        })
        .collect::<anyhow::Result<_>>()?;
    if urls.iter().all(Option::is_none) {
        return Ok(inputs.iter().map(|p| vec![(p.clone(), None)]).collect());
    }
    let target = bucket.target();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    rt.block_on(async {
        let client = crate::fleet::s3::client(&target).await?;
        let mut out = Vec::new();
        for (n, (path, url)) in inputs.iter().zip(&urls).enumerate() {
            match url {
                None => out.push(vec![(path.clone(), None)]),
                Some(url) => {
                    let into = tmp.join(n.to_string());
                    let dirs = crate::fleet::s3::download(&client, url, &into).await?;
                    out.push(
                        dirs.into_iter()
                            .map(|d| {
                                let name = d
                                    .file_name()
                                    .map(|f| f.to_string_lossy().into_owned())
                                    .unwrap_or_default();
                                let label = if url.prefix.ends_with(&format!("{name}/")) {
                                    url.to_string()
                                } else {
                                    format!("{url}{name}/")
                                };
                                (d, Some(label))
                            })
                            .collect(),
                    );
                }
            }
        }
        anyhow::Ok(out)
    })
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Recordings (`--record DIR`, or `latlab merge`), report JSON files (`--format json`), or
    /// s3://BUCKET/PREFIX/ (one recording, or several: they are merged); each after the first is
    /// compared against the first
    #[arg(value_name = "DIR|FILE|S3URL", num_args = 2.., required = true)]
    pub inputs: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: CompareFormat,
    /// Write the comparison here instead of standard output
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Compare runs of different scenarios (e.g. two scenario files that differ in retry mode)
    #[arg(long)]
    pub any_scenario: bool,
    #[command(flatten)]
    pub bucket: BucketArgs,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Recordings of one scenario (directories made with --record), e.g. one per host, or
    /// s3://BUCKET/PREFIX/ for every recording --record-to put under it
    #[arg(value_name = "DIR|S3URL", num_args = 1.., required = true)]
    pub inputs: Vec<PathBuf>,
    /// The merged recording's directory (new or empty)
    #[arg(long, short, value_name = "DIR")]
    pub output: PathBuf,
    #[command(flatten)]
    pub bucket: BucketArgs,
}

pub fn run_compare(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let tmp = tempfile::Builder::new()
        .prefix("latlab-compare-")
        .tempdir()
        .context("cannot make a temporary directory")?;
    let mut inputs = Vec::new();
    for (n, group) in fetch(&args.inputs, &args.bucket, tmp.path())?
        .into_iter()
        .enumerate()
    {
        let mut input = match group.as_slice() {
            [(path, _)] => Input::read(path)?,
            many => {
                let out = tmp.path().join(format!("merged-{n}"));
                let paths: Vec<PathBuf> = many.iter().map(|(p, _)| p.clone()).collect();
                let labels: Vec<Option<String>> = many.iter().map(|(_, l)| l.clone()).collect();
                compare::merge::merge_labelled(&paths, &labels, &out)?;
                Input::read(&out)?
            }
        };
        // An input from S3 is shown by its URL.
        if crate::fleet::s3::S3Url::is_s3(&args.inputs[n].to_string_lossy()) {
            input.path = args.inputs[n].clone();
        }
        inputs.push(input);
    }
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
    let tmp = tempfile::Builder::new()
        .prefix("latlab-merge-")
        .tempdir()
        .context("cannot make a temporary directory")?;
    let inputs: Vec<(PathBuf, Option<String>)> = fetch(&args.inputs, &args.bucket, tmp.path())?
        .into_iter()
        .flatten()
        .collect();
    if inputs.len() < 2 {
        anyhow::bail!(
            "{} recording to merge ({}): latlab merge combines two or more; name more recordings, or an s3:// prefix holding several",
            inputs.len(),
            inputs
                .iter()
                .map(|(p, l)| l.clone().unwrap_or_else(|| p.display().to_string()))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let paths: Vec<PathBuf> = inputs.iter().map(|(p, _)| p.clone()).collect();
    let labels: Vec<Option<String>> = inputs.iter().map(|(_, l)| l.clone()).collect();
    let merged = compare::merge::merge_labelled(&paths, &labels, &args.output)?;
    out!(
        "merged {} recordings into {}: {} series\n",
        inputs.len(),
        merged.dir.display(),
        merged.series.len()
    );
    for (name, count, seconds) in &merged.series {
        out!(
            "  {name}: {} values in {seconds} seconds\n",
            thousands(*count)
        );
    }
    let mut hosts: Vec<crate::fleet::HostRun> = paths
        .iter()
        .map(|p| crate::fleet::HostRun::read(p))
        .collect();
    crate::fleet::distinct_names(&mut hosts);
    let lines = crate::fleet::lines(&hosts);
    if !lines.is_empty() {
        out!(
            "hosts: {}\n",
            hosts
                .iter()
                .map(|h| if h.run_id.is_empty() || h.host.ends_with(&h.run_id) {
                    h.host.clone()
                } else {
                    format!("{} (run {})", h.host, h.run_id)
                })
                .collect::<Vec<_>>()
                .join(", ")
        );
        for line in &lines {
            out!(
                "{}{}\n",
                if line.warning { "warning: " } else { "" },
                line.text
            );
        }
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
