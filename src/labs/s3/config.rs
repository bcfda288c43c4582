//! The S3 lab's part of a scenario file (`[s3]`: the live loop, the transfer settings and the
//! matrix of a headless run) and the seed's S3 tables (`[seed.s3]`).

use anyhow::bail;
use serde::{Deserialize, Serialize};

use super::{Case, Transfer};
use latlab_core::units::Bytes;

/// The seed's S3 tables: seconds per whole set; a set is compared with ours of the same label.
#[derive(Clone, Debug, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct S3Seed {
    #[serde(default)]
    pub experiment: String,
    pub source: String,
    pub upload: Vec<S3SeedRow>,
    pub download: Vec<S3SeedRow>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct S3SeedRow {
    pub case: String,
    pub express_s: f64,
    pub standard_s: f64,
}

/// The S3 lab: a live PUT/GET loop, and the seed's matrix for headless runs.
#[derive(Clone, Debug, PartialEq)]
pub struct S3Scenario {
    pub class: latlab_core::services::s3::Class,
    pub payload: u64,
    pub concurrency: usize,
    pub transfer: Transfer,
    pub matrix: Vec<Case>,
    /// The matrix scaled down for `--quick`.
    pub quick: Vec<Case>,
    pub repetitions: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S3File {
    class: Option<ClassName>,
    payload: Option<Bytes>,
    concurrency: Option<usize>,
    transfer: Option<TransferFile>,
    #[serde(default)]
    matrix: Vec<CaseFile>,
    #[serde(default)]
    quick: Vec<CaseFile>,
    repetitions: Option<u32>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum ClassName {
    Express,
    Standard,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TransferFile {
    threshold: Option<Bytes>,
    part_size: Option<Bytes>,
    concurrency: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    objects: u64,
    size: Bytes,
}

pub fn parse(f: S3File) -> anyhow::Result<S3Scenario> {
    use latlab_core::services::s3::Class;
    let default = Transfer::default();
    let transfer = match f.transfer {
        Some(t) => Transfer {
            threshold: t.threshold.map_or(default.threshold, |b| b.0),
            part_size: t.part_size.map_or(default.part_size, |b| b.0),
            concurrency: t.concurrency.unwrap_or(default.concurrency),
        },
        None => default,
    };
    if transfer.part_size < 5 * 1024 * 1024 {
        bail!("s3.transfer.part_size must be at least 5MiB (S3's smallest part)");
    }
    if !(1..=64).contains(&transfer.concurrency) {
        bail!("s3.transfer.concurrency must be between 1 and 64");
    }
    let cases = |v: Vec<CaseFile>, field: &str| -> anyhow::Result<Vec<Case>> {
        v.into_iter()
            .enumerate()
            .map(|(i, c)| {
                if c.objects == 0 || c.size.0 == 0 {
                    bail!("s3.{field}[{i}]: objects and size must be greater than 0");
                }
                if c.size.0 > 5 * 1024 * 1024 * 1024 {
                    bail!("s3.{field}[{i}]: size must be at most 5 GiB");
                }
                Ok(Case {
                    objects: c.objects,
                    size: c.size.0,
                })
            })
            .collect()
    };
    let payload = f.payload.map_or(100_000, |b| b.0);
    if payload == 0 || payload > 1024 * 1024 * 1024 {
        bail!("s3.payload must be between 1 B and 1 GiB");
    }
    let concurrency = f.concurrency.unwrap_or(1);
    if !(1..=64).contains(&concurrency) {
        bail!("s3.concurrency must be between 1 and 64");
    }
    let repetitions = f.repetitions.unwrap_or(1);
    if !(1..=100).contains(&repetitions) {
        bail!("s3.repetitions must be between 1 and 100");
    }
    Ok(S3Scenario {
        class: match f.class {
            Some(ClassName::Standard) => Class::Standard,
            _ => Class::ExpressOneZone,
        },
        payload,
        concurrency,
        transfer,
        matrix: cases(f.matrix, "matrix")?,
        quick: cases(f.quick, "quick")?,
        repetitions,
    })
}

/// In every report since `latlab-run-report/2`: `null` when the run has no such lab.
impl crate::labs::ReportPart for S3Seed {
    const REPORTED_WHEN_ABSENT: bool = true;
}

impl crate::labs::Setup for super::S3Lab {
    fn parse(file: S3File, _text: &str) -> anyhow::Result<S3Scenario> {
        parse(file)
    }
}
