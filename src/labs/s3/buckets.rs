//! The two buckets the lab writes to (S3 Standard and an S3 Express One Zone directory bucket):
//! created on the emulator, named by the user elsewhere, and emptied of latlab's objects at the end.

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

/// Creates the buckets a run needs on an endpoint latlab owns (the emulator) and returns them.
pub async fn create_buckets(client: &Client, run_id: &str) -> anyhow::Result<Buckets> {
    let b = Buckets {
        standard: format!("latlab-standard-{run_id}"),
        express: format!("latlab-express-{run_id}--use1-az4--x-s3"),
    };
    for name in [&b.standard, &b.express] {
        client
            .create_bucket()
            .bucket(name)
            .send()
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot create bucket {name}: {}",
                    crate::aws::error_line(&e)
                )
            })?;
    }
    Ok(b)
}

/// Deletes every object under `latlab/` in a bucket (and nothing else).
pub async fn clean(client: &Client, bucket: &str) -> anyhow::Result<u64> {
    let mut removed = 0;
    let mut token: Option<String> = None;
    loop {
        let page = client
            .list_objects_v2()
            .bucket(bucket)
            .prefix("latlab/")
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
