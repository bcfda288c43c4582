//! Bucket operations: ListBuckets, CreateBucket, DeleteBucket, ListObjectsV2, DeleteObjects.

use super::*;

impl S3 {
    pub(super) fn list_buckets(&self) -> S3Result<Response<Body>> {
        let buckets: String = self
            .buckets
            .read()
            .values()
            .map(|b| {
                format!(
                    "<Bucket>{}{}</Bucket>",
                    el("Name", &b.name),
                    el("CreationDate", rfc3339_ms(b.created_ms))
                )
            })
            .collect();
        Ok(xml_response(
            200,
            doc(
                "ListAllMyBucketsResult",
                &format!(
                    "<Owner><ID>latlab</ID><DisplayName>latlab</DisplayName></Owner><Buckets>{buckets}</Buckets>"
                ),
            ),
        ))
    }

    pub(super) async fn create_bucket(&self, c: &Call, body: Incoming) -> S3Result<Response<Body>> {
        let name = &c.bucket;
        let valid_char =
            |ch: char| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-' || ch == '.';
        if name.len() < 3
            || name.len() > 63
            || !name.chars().all(valid_char)
            || name.starts_with(['-', '.'])
        {
            return Err(S3Error::new(
                400,
                "InvalidBucketName",
                "The specified bucket is not valid.",
            )
            .with("BucketName", name));
        }
        let config = collect(body, 64 * 1024).await?;
        let config = String::from_utf8_lossy(&config);
        if is_directory_bucket(name) {
            // A directory bucket's configuration names its zone; the name carries it too.
            if !config.trim().is_empty() && text(&config, "Type")?.is_none() {
                return Err(S3Error::malformed_xml());
            }
        } else if name.contains("--") && name.ends_with("--x-s3") {
            return Err(S3Error::new(
                400,
                "InvalidBucketName",
                "directory bucket names are name--azid--x-s3",
            )
            .with("BucketName", name));
        }
        let mut buckets = self.buckets.write();
        if buckets.contains_key(name) {
            return Err(S3Error::new(
                409,
                "BucketAlreadyOwnedByYou",
                "Your previous request to create the named bucket succeeded and you already own it.",
            )
            .with("BucketName", name));
        }
        buckets.insert(
            name.clone(),
            Arc::new(BucketState {
                name: name.clone(),
                class: Class::of_bucket(name),
                created_ms: latlab_core::clock::now_micros() / 1000,
                objects: Default::default(),
                uploads: Default::default(),
            }),
        );
        let mut r = empty(200);
        r.headers_mut().insert(
            "location",
            HeaderValue::from_str(&format!("/{name}")).unwrap_or(HeaderValue::from_static("/")),
        );
        Ok(r)
    }

    pub(super) fn delete_bucket(&self, bucket: &BucketState) -> S3Result<Response<Body>> {
        if !bucket.objects.read().is_empty() {
            return Err(S3Error::new(
                409,
                "BucketNotEmpty",
                "The bucket you tried to delete is not empty",
            )
            .with("BucketName", &bucket.name));
        }
        self.buckets.write().remove(&bucket.name);
        Ok(empty(204))
    }

    pub(super) fn list_objects(&self, bucket: &BucketState, c: &Call) -> S3Result<Response<Body>> {
        let prefix = c.query.get("prefix").cloned().unwrap_or_default();
        let max: usize = match c.query.get("max-keys") {
            Some(m) => m.parse().map_err(|_| {
                S3Error::invalid_argument(format!("max-keys '{m}' is not a number"))
            })?,
            None => 1000,
        };
        let max = max.min(1000);
        let start = c
            .query
            .get("continuation-token")
            .or_else(|| c.query.get("start-after"))
            .cloned()
            .unwrap_or_default();
        let objects = bucket.objects.read();
        let matching = objects
            .range::<String, _>((
                std::ops::Bound::Excluded(&start),
                std::ops::Bound::Unbounded,
            ))
            .filter(|(k, _)| k.starts_with(&prefix));
        let mut contents = String::new();
        let mut count = 0;
        let mut last = None;
        let mut truncated = false;
        for (k, o) in matching {
            if count == max {
                truncated = true;
                break;
            }
            contents.push_str(&format!(
                "<Contents>{}{}{}{}{}</Contents>",
                el("Key", k),
                el("LastModified", rfc3339_ms(o.last_modified_ms)),
                el("ETag", &o.etag),
                el("Size", o.size.to_string()),
                el("StorageClass", bucket.class.storage_class())
            ));
            count += 1;
            last = Some(k.clone());
        }
        let mut inner = format!(
            "{}{}{}{}{}{contents}",
            el("Name", &bucket.name),
            el("Prefix", &prefix),
            el("KeyCount", count.to_string()),
            el("MaxKeys", max.to_string()),
            el("IsTruncated", truncated.to_string())
        );
        if let (true, Some(l)) = (truncated, last) {
            inner.push_str(&el("NextContinuationToken", l));
        }
        Ok(xml_response(200, doc("ListBucketResult", &inner)))
    }

    pub(super) async fn delete_objects(
        &self,
        bucket: &BucketState,
        body: Incoming,
    ) -> S3Result<Response<Body>> {
        let body = collect(body, 2 * 1024 * 1024).await?;
        let body = String::from_utf8(body.to_vec()).map_err(|_| S3Error::malformed_xml())?;
        let quiet = text(&body, "Quiet")?.as_deref().map(str::trim) == Some("true");
        let keys: Vec<String> = all(&body, "Object")?
            .iter()
            .map(|o| text(o, "Key").and_then(|k| k.ok_or_else(S3Error::malformed_xml)))
            .collect::<S3Result<_>>()?;
        if keys.len() > 1000 {
            return Err(S3Error::malformed_xml());
        }
        let mut objects = bucket.objects.write();
        let mut out = String::new();
        for k in keys {
            objects.remove(&k);
            if !quiet {
                out.push_str(&format!("<Deleted>{}</Deleted>", el("Key", &k)));
            }
        }
        Ok(xml_response(200, doc("DeleteResult", &out)))
    }
}
