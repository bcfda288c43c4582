//! Recordings through S3: `--record-to s3://BUCKET/PREFIX/` uploads a host's recording under
//! `PREFIX/HOST-RUNID/` when its run ends, and `latlab merge` and `latlab compare` read every
//! recording under a prefix. Any S3 endpoint serves: real S3 with `--aws`, or another (the
//! emulator's, LocalStack, MinIO) with `--endpoint-url`.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::aws::{Clients, QuotaPartition, RetrySettings, Target, error_line};
use crate::labs::TargetOptions;

/// Objects a download takes at most: a recording is a dozen files, so this is far more than
/// any prefix of recordings holds, and bounds a prefix named by mistake.
const MAX_OBJECTS: usize = 20_000;

/// Bytes a download takes at most (a recording grows by a few KiB a second).
const MAX_BYTES: u64 = 4 << 30;

/// An `s3://BUCKET/PREFIX/` URL. The prefix is empty or ends with `/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct S3Url {
    pub bucket: String,
    pub prefix: String,
}

impl std::fmt::Display for S3Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.prefix)
    }
}

impl S3Url {
    /// Whether a command-line argument is meant as an S3 URL.
    pub fn is_s3(text: &str) -> bool {
        text.starts_with("s3://")
    }

    pub fn parse(text: &str) -> anyhow::Result<S3Url> {
        let rest = text
            .strip_prefix("s3://")
            .with_context(|| format!("'{text}' is not an S3 URL: write s3://BUCKET/PREFIX/"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let valid_bucket = (3..=63).contains(&bucket.len())
            && bucket
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.'));
        if !valid_bucket {
            anyhow::bail!(
                "'{text}': '{bucket}' is not a bucket name (3 to 63 lowercase letters, digits, '-' or '.'); write s3://BUCKET/PREFIX/"
            );
        }
        if prefix.split('/').any(|p| p == "." || p == "..") || prefix.contains("//") {
            anyhow::bail!("'{text}': the prefix may not hold '.', '..' or an empty folder");
        }
        let mut prefix = prefix.to_string();
        if !prefix.is_empty() && !prefix.ends_with('/') {
            prefix.push('/');
        }
        Ok(S3Url {
            bucket: bucket.to_string(),
            prefix,
        })
    }

    /// The folder one host's run goes in: `PREFIX/HOST-RUNID/`.
    pub fn for_run(&self, host: &str, run_id: &str) -> S3Url {
        S3Url {
            bucket: self.bucket.clone(),
            prefix: format!("{}{host}-{run_id}/", self.prefix),
        }
    }
}

/// An S3 client for the target flags: the bucket lives on an endpoint (`--endpoint-url`) or
/// on AWS (`--aws`); the embedded emulator ends with the run, so it holds no bucket to use.
pub async fn client(target: &TargetOptions) -> anyhow::Result<aws_sdk_s3::Client> {
    if !target.external() {
        anyhow::bail!(
            "s3:// needs the endpoint that holds the bucket: --endpoint-url URL (any S3 endpoint, e.g. `latlab emulate`) or --aws"
        );
    }
    let clients = Clients::connect(
        &Target::Aws {
            endpoint_url: target.endpoint_url.clone(),
            region: target.region.clone(),
        },
        std::time::Instant::now(),
    )
    .await?;
    let path_style = clients.at_endpoint_url();
    Ok(crate::aws::sdk_client!(
        aws_sdk_s3,
        clients,
        &RetrySettings::default(),
        &QuotaPartition::new("latlab-fleet"),
        Default::default(),
        |b: aws_sdk_s3::config::Builder| b.force_path_style(path_style)
    ))
}

/// Every file under `dir`, as paths relative to it (`/`-separated), sorted.
fn files(dir: &Path) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let here = dir.join(&rel);
        let entries =
            std::fs::read_dir(&here).with_context(|| format!("cannot read {}", here.display()))?;
        for e in entries {
            let e = e.with_context(|| format!("cannot read {}", here.display()))?;
            let name = e.file_name().to_string_lossy().into_owned();
            let path = rel.join(&name);
            if e.file_type()?.is_dir() {
                todo.push(path);
            } else {
                out.push(path.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Uploads the recording in `dir` under `to` (one host's folder); `report.json` goes last, so
/// a folder with it is whole. Returns the objects written.
pub async fn upload(client: &aws_sdk_s3::Client, dir: &Path, to: &S3Url) -> anyhow::Result<usize> {
    let mut names = files(dir)?;
    names.sort_by_key(|n| n == "report.json");
    for name in &names {
        let body = aws_sdk_s3::primitives::ByteStream::from_path(dir.join(name))
            .await
            .with_context(|| format!("cannot read {}", dir.join(name).display()))?;
        let key = format!("{}{name}", to.prefix);
        client
            .put_object()
            .bucket(&to.bucket)
            .key(&key)
            .body(body)
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("PutObject {key}: {}", error_line(&e)))?;
    }
    Ok(names.len())
}

/// Every key under `url`'s prefix.
async fn list(client: &aws_sdk_s3::Client, url: &S3Url) -> anyhow::Result<Vec<(String, u64)>> {
    let mut keys = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let page = client
            .list_objects_v2()
            .bucket(&url.bucket)
            .prefix(&url.prefix)
            .set_continuation_token(token.clone())
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("cannot list {url}: {}", error_line(&e)))?;
        for o in page.contents() {
            if let Some(k) = o.key() {
                keys.push((k.to_string(), o.size().unwrap_or(0).max(0) as u64));
            }
        }
        if keys.len() > MAX_OBJECTS {
            anyhow::bail!(
                "{url} holds more than {MAX_OBJECTS} objects: name the prefix the hosts' --record-to used"
            );
        }
        token = page.next_continuation_token().map(String::from);
        if token.is_none() {
            return Ok(keys);
        }
    }
}

/// Downloads every recording under `url` into `into`, a directory each: the URL names one
/// recording (it holds `recording.json`) or a prefix of them (`HOST-RUNID/recording.json`).
/// Returns their directories, sorted by folder name.
pub async fn download(
    client: &aws_sdk_s3::Client,
    url: &S3Url,
    into: &Path,
) -> anyhow::Result<Vec<PathBuf>> {
    let keys = list(client, url).await?;
    let total: u64 = keys.iter().map(|k| k.1).sum();
    if total > MAX_BYTES {
        anyhow::bail!(
            "{url} holds {} MiB: more than the {} MiB latlab reads for a merge; name a narrower prefix",
            total >> 20,
            MAX_BYTES >> 20
        );
    }
    // The folders that are recordings: those holding recording.json.
    let mut folders: Vec<String> = keys
        .iter()
        .filter_map(|(k, _)| k.strip_prefix(&url.prefix))
        .filter_map(|rel| rel.strip_suffix("recording.json"))
        .filter(|folder| folder.is_empty() || folder.matches('/').count() == 1)
        .map(str::to_string)
        .collect();
    folders.sort();
    if folders.is_empty() {
        anyhow::bail!(
            "{url} holds no recording ({} objects, none a recording.json at the prefix or one folder below it)",
            keys.len()
        );
    }
    let mut dirs = Vec::new();
    for folder in &folders {
        let name = if folder.is_empty() {
            url.prefix
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .filter(|n| !n.is_empty())
                .unwrap_or("recording")
                .to_string()
        } else {
            folder.trim_end_matches('/').to_string()
        };
        // Written under `into` only: a folder named `..` (or `.`) would reach out of it.
        if name == "." || name == ".." || name.contains('\\') {
            anyhow::bail!(
                "{url}: the folder {name:?} is not a recording's (a host's folder is HOST-RUNID)"
            );
        }
        let dir = into.join(&name);
        // S3 has no empty folders: a recording without series (a host that only produces)
        // still has its hlog directory.
        std::fs::create_dir_all(dir.join("hlog"))
            .with_context(|| format!("cannot make {}", dir.display()))?;
        let from = format!("{}{folder}", url.prefix);
        for (key, size) in keys.iter().filter(|(k, _)| k.starts_with(&from)) {
            let rel = &key[from.len()..];
            // A nested recording's files belong to it, not to this one.
            if folder.is_empty()
                && folders.len() > 1
                && rel.contains('/')
                && !rel.starts_with("hlog/")
            {
                continue;
            }
            if rel
                .split('/')
                .any(|p| p.is_empty() || p == "." || p == "..")
            {
                anyhow::bail!("{url}: the key {key} is not a file a recording holds");
            }
            let path = dir.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("cannot make {}", parent.display()))?;
            }
            let object = client
                .get_object()
                .bucket(&url.bucket)
                .key(key)
                .send()
                .await
                .map_err(|e| anyhow::anyhow!("GetObject {key}: {}", error_line(&e)))?;
            // Written as it arrives, never held whole, and no longer than the listing said.
            let mut body = object.body;
            let mut file = std::fs::File::create(&path)
                .with_context(|| format!("cannot write {}", path.display()))?;
            let mut written = 0u64;
            while let Some(chunk) = body
                .try_next()
                .await
                .with_context(|| format!("reading {key}"))?
            {
                written += chunk.len() as u64;
                if written > *size {
                    drop(file);
                    let _ = std::fs::remove_file(&path);
                    anyhow::bail!(
                        "{url}: {key} sends more than the {size} bytes its listing says; nothing more of it is read"
                    );
                }
                std::io::Write::write_all(&mut file, &chunk)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
        }
        dirs.push(dir);
    }
    Ok(dirs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_a_bucket_and_a_folder() {
        let u = S3Url::parse("s3://runs/fleet/day-1").unwrap();
        assert_eq!(u.bucket, "runs");
        assert_eq!(u.prefix, "fleet/day-1/");
        assert_eq!(u.to_string(), "s3://runs/fleet/day-1/");
        assert_eq!(
            u.for_run("reader-1", "a1b2c3d4").to_string(),
            "s3://runs/fleet/day-1/reader-1-a1b2c3d4/"
        );
        assert_eq!(S3Url::parse("s3://runs").unwrap().prefix, "");
        for (bad, says) in [
            ("runs/x", "not an S3 URL"),
            ("s3://Runs/x", "not a bucket name"),
            ("s3:///x", "not a bucket name"),
            ("s3://runs/../x", "'..'"),
            ("s3://runs/a//b", "empty folder"),
        ] {
            let e = S3Url::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
