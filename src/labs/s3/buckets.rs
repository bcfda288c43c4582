//! The two buckets the lab writes to (S3 Standard and an S3 Express One Zone directory bucket):
//! created on the emulator, named by the user elsewhere, and emptied of the run's objects at the
//! end.

use super::*;

/// The two buckets a run uses.
#[derive(Clone, Debug)]
pub struct Buckets {
    pub standard: String,
    pub express: String,
}

impl Buckets {
    pub fn of(&self, class: Class) -> &str {
        match class {
            Class::Standard => &self.standard,
            Class::ExpressOneZone => &self.express,
        }
    }
}

/// Creates the buckets a run needs on an endpoint latlab owns (the emulator) and returns them,
/// with why S3 Express One Zone cannot be measured when the endpoint lacks what it needs (its
/// directory bucket or session); Standard is measured all the same.
pub async fn create_buckets(
    client: &Client,
    run_id: &str,
) -> anyhow::Result<(Buckets, Option<String>)> {
    let b = Buckets {
        standard: format!("latlab-standard-{run_id}"),
        express: format!("latlab-express-{run_id}--use1-az4--x-s3"),
    };
    let mut express_unsupported = None;
    for name in [&b.standard, &b.express] {
        if let Err(e) = client.create_bucket().bucket(name).send().await {
            if *name == b.express
                && let Some(answered) = crate::aws::unsupported(&e)
            {
                express_unsupported = Some(lacking_line(&e, &answered));
                continue;
            }
            anyhow::bail!(
                "cannot create bucket {name}: {}",
                crate::aws::error_line(&e)
            );
        }
    }
    Ok((b, express_unsupported))
}

/// "not supported by this endpoint: CreateSession answered HTTP 500, not an AWS response".
pub fn lacking_line<E>(
    e: &aws_smithy_runtime_api::client::result::SdkError<E, aws_smithy_runtime_api::http::Response>,
    answered: &str,
) -> String
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
{
    let line = crate::aws::error_line(e);
    let op = if line.starts_with("CreateSession") {
        "CreateSession"
    } else {
        "CreateBucket"
    };
    format!(
        "{}: {op} answered {answered}",
        crate::labs::context::UNSUPPORTED
    )
}

/// Deletes every object under `prefix` in a bucket (and nothing else): a run's own
/// `latlab/RUN_ID/`, so other runs' objects in the bucket stay.
pub async fn clean(client: &Client, bucket: &str, prefix: &str) -> anyhow::Result<u64> {
    // A prefix that is not one run's would reach other runs' objects (or the whole bucket).
    anyhow::ensure!(
        prefix.starts_with(PREFIX) && prefix.len() > PREFIX.len() && prefix.ends_with('/'),
        "refusing to delete under {prefix:?}: not a run's latlab/RUN_ID/ prefix"
    );
    let mut removed = 0;
    let mut token: Option<String> = None;
    loop {
        let page = client
            .list_objects_v2()
            .bucket(bucket)
            .prefix(prefix)
            .set_continuation_token(token.clone())
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("cannot list {bucket}: {}", crate::aws::error_line(&e)))
            .context("cleaning up")?;
        for o in page.contents() {
            if let Some(k) = o.key() {
                client
                    .delete_object()
                    .bucket(bucket)
                    .key(k)
                    .send()
                    .await
                    .map_err(|e| {
                        anyhow::anyhow!("cannot delete {k}: {}", crate::aws::error_line(&e))
                    })?;
                removed += 1;
            }
        }
        token = page.next_continuation_token().map(String::from);
        if token.is_none() {
            return Ok(removed);
        }
    }
}
