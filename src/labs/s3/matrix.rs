//! The seed's matrix: sets of objects uploaded and downloaded one after another per class, timed
//! whole.

use super::*;

/// One set of the seed's matrix: `objects` objects of `size` bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub objects: u64,
    pub size: u64,
}

impl Case {
    pub fn label(&self) -> String {
        format!(
            "{} x {}",
            latlab_core::units::thousands(self.objects),
            latlab_core::units::format_bytes(self.size)
        )
    }
}

/// Seconds to move a whole set, one object after another, averaged over the repetitions.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixRow {
    pub case: Case,
    pub upload_express_s: f64,
    pub upload_standard_s: f64,
    pub download_express_s: f64,
    pub download_standard_s: f64,
    pub repetitions: u32,
}

/// Runs the matrix: per case and class, upload every object, then download every object, then
/// delete the run's objects; `progress` hears what runs.
#[allow(clippy::too_many_arguments)]
pub async fn run_matrix(
    shared: &S3Shared,
    client: &Client,
    buckets: &Buckets,
    cases: &[Case],
    repetitions: u32,
    t: &Transfer,
    cancel: &CancellationToken,
    progress: &(dyn Fn(String) + Send + Sync),
) -> anyhow::Result<Vec<MatrixRow>> {
    let mut rows = Vec::new();
    for case in cases {
        let data = payload(case.size);
        let mut totals: BTreeMap<(Class, &str), f64> = BTreeMap::new();
        for rep in 0..repetitions {
            for class in [Class::ExpressOneZone, Class::Standard] {
                let bucket = buckets.of(class);
                progress(format!(
                    "{} on {}: upload, repetition {} of {repetitions}",
                    case.label(),
                    class.storage_class(),
                    rep + 1
                ));
                let started = Instant::now();
                for i in 0..case.objects {
                    if cancel.is_cancelled() {
                        anyhow::bail!("stopped");
                    }
                    let key = format!("{}matrix/{i}", shared.prefix);
                    match upload(client, bucket, &key, &data, t).await {
                        Ok(d) => shared.record(class, "PUT", d, d, case.size),
                        Err(f) => {
                            shared.failed(class, "PUT", &f);
                            anyhow::bail!("uploading {key} to {bucket} failed: {}", f.line);
                        }
                    }
                }
                *totals.entry((class, "up")).or_default() += started.elapsed().as_secs_f64();
                progress(format!(
                    "{} on {}: download, repetition {} of {repetitions}",
                    case.label(),
                    class.storage_class(),
                    rep + 1
                ));
                let started = Instant::now();
                for i in 0..case.objects {
                    if cancel.is_cancelled() {
                        anyhow::bail!("stopped");
                    }
                    let key = format!("{}matrix/{i}", shared.prefix);
                    match download(client, bucket, &key, case.size, t).await {
                        Ok((fb, d, n)) => shared.record(class, "GET", fb, d, n),
                        Err(f) => {
                            shared.failed(class, "GET", &f);
                            anyhow::bail!("downloading {key} from {bucket} failed: {}", f.line);
                        }
                    }
                }
                *totals.entry((class, "down")).or_default() += started.elapsed().as_secs_f64();
                clean(client, bucket, &shared.prefix).await?;
            }
        }
        let avg = |c, d| totals.get(&(c, d)).copied().unwrap_or(0.0) / repetitions.max(1) as f64;
        rows.push(MatrixRow {
            case: case.clone(),
            upload_express_s: avg(Class::ExpressOneZone, "up"),
            upload_standard_s: avg(Class::Standard, "up"),
            download_express_s: avg(Class::ExpressOneZone, "down"),
            download_standard_s: avg(Class::Standard, "down"),
            repetitions,
        });
    }
    Ok(rows)
}
