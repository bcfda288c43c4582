//! Multipart uploads: CreateMultipartUpload, UploadPart, CompleteMultipartUpload, ListParts,
//! ListMultipartUploads, AbortMultipartUpload.

use super::object::etag_of;
use super::*;

impl S3 {
    pub(super) fn create_upload(&self, bucket: &BucketState, c: &Call) -> S3Result<Response<Body>> {
        let id = format!(
            "latlab-upload-{:x}-{:08x}",
            self.next_id(),
            rand::random::<u32>()
        );
        bucket.uploads.lock().insert(
            id.clone(),
            Upload {
                key: c.key.clone(),
                parts: BTreeMap::new(),
                content_type: header(&c.headers, "content-type")
                    .unwrap_or("binary/octet-stream")
                    .to_string(),
                initiated_ms: latlab_core::clock::now_micros() / 1000,
            },
        );
        let inner = format!(
            "{}{}{}",
            el("Bucket", &bucket.name),
            el("Key", &c.key),
            el("UploadId", &id)
        );
        Ok(xml_response(
            200,
            doc("InitiateMultipartUploadResult", &inner),
        ))
    }

    pub(super) async fn upload_part(
        &self,
        bucket: &BucketState,
        c: &Call,
        body: Incoming,
    ) -> S3Result<Response<Body>> {
        let id = c.query.get("uploadId").cloned().unwrap_or_default();
        let number: u32 = c
            .query
            .get("partNumber")
            .and_then(|n| n.parse().ok())
            .filter(|n| (1..=10_000).contains(n))
            .ok_or_else(|| {
                S3Error::invalid_argument(
                    "Part number must be an integer between 1 and 10000, inclusive",
                )
                .with("ArgumentName", "partNumber")
            })?;
        if !bucket.uploads.lock().contains_key(&id) {
            return Err(S3Error::no_such_upload(&id));
        }
        let (stored, checksums) = self.receive(bucket, c, body).await?;
        super::wait(
            self.class_profile(bucket.class)
                .first_byte(true, stored.len()),
        )
        .await;
        let etag = etag_of(&checksums, stored.len());
        let part = Part {
            stored,
            etag: etag.clone(),
            checksums: checksums.clone(),
            last_modified_ms: latlab_core::clock::now_micros() / 1000,
        };
        bucket
            .uploads
            .lock()
            .get_mut(&id)
            .ok_or_else(|| S3Error::no_such_upload(&id))?
            .parts
            .insert(number, part);
        Ok(stored_response(&etag, &checksums))
    }

    pub(super) async fn complete_upload(
        &self,
        bucket: &BucketState,
        c: &Call,
        body: Incoming,
    ) -> S3Result<Response<Body>> {
        let id = c.query.get("uploadId").cloned().unwrap_or_default();
        let xml = collect(body, 4 * 1024 * 1024).await?;
        let xml = String::from_utf8(xml.to_vec()).map_err(|_| S3Error::malformed_xml())?;
        let mut listed = Vec::new();
        for p in all(&xml, "Part")? {
            let n: u32 = text(p, "PartNumber")?
                .and_then(|n| n.trim().parse().ok())
                .ok_or_else(S3Error::malformed_xml)?;
            let etag = text(p, "ETag")?.map(|e| e.trim().to_string());
            listed.push((n, etag));
        }
        if listed.is_empty() {
            return Err(S3Error::malformed_xml());
        }
        if listed.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(S3Error::new(
                400,
                "InvalidPartOrder",
                "The list of parts was not in ascending order. The parts list must be specified in order by part number.",
            ));
        }
        let upload = {
            let mut uploads = bucket.uploads.lock();
            let u = uploads
                .get(&id)
                .ok_or_else(|| S3Error::no_such_upload(&id))?;
            for (i, (n, etag)) in listed.iter().enumerate() {
                let part = u.parts.get(n).ok_or_else(|| {
                    S3Error::new(400, "InvalidPart", "One or more of the specified parts could not be found. The part might not have been uploaded, or the specified entity tag might not have matched the part's entity tag.")
                })?;
                if etag
                    .as_ref()
                    .is_some_and(|e| e.trim_matches('"') != part.etag.trim_matches('"'))
                {
                    return Err(S3Error::new(
                        400,
                        "InvalidPart",
                        format!("part {n}'s ETag does not match the part uploaded"),
                    ));
                }
                if i + 1 < listed.len() && part.stored.len() < self.limits.min_part_bytes {
                    return Err(S3Error::new(
                        400,
                        "EntityTooSmall",
                        "Your proposed upload is smaller than the minimum allowed object size.",
                    )
                    .with("PartNumber", n.to_string()));
                }
            }
            uploads.remove(&id).expect("checked above")
        };
        let mut parts = Vec::new();
        let mut size = 0;
        let mut upload = upload;
        for (n, _) in &listed {
            let p = upload.parts.remove(n).expect("checked above");
            size += p.stored.len();
            parts.push(p.stored);
        }
        let etag = format!("\"{:016x}-{}\"", size ^ rand::random::<u64>(), parts.len());
        let obj = Object {
            parts,
            size,
            etag: etag.clone(),
            checksums: Vec::new(),
            content_type: upload.content_type,
            last_modified_ms: latlab_core::clock::now_micros() / 1000,
        };
        bucket
            .objects
            .write()
            .insert(upload.key.clone(), Arc::new(obj));
        let inner = format!(
            "{}{}{}{}",
            el("Location", format!("/{}/{}", bucket.name, upload.key)),
            el("Bucket", &bucket.name),
            el("Key", &upload.key),
            el("ETag", &etag)
        );
        Ok(xml_response(
            200,
            doc("CompleteMultipartUploadResult", &inner),
        ))
    }

    pub(super) fn list_parts(&self, bucket: &BucketState, c: &Call) -> S3Result<Response<Body>> {
        let id = c.query.get("uploadId").cloned().unwrap_or_default();
        let uploads = bucket.uploads.lock();
        let u = uploads
            .get(&id)
            .ok_or_else(|| S3Error::no_such_upload(&id))?;
        let parts: String = u
            .parts
            .iter()
            .map(|(n, p)| {
                let sums: String = p
                    .checksums
                    .iter()
                    .map(|(h, v)| el(&format!("Checksum{}", algorithm_name(h)), v))
                    .collect();
                format!(
                    "<Part>{}{}{}{}{sums}</Part>",
                    el("PartNumber", n.to_string()),
                    el("LastModified", rfc3339_ms(p.last_modified_ms)),
                    el("ETag", &p.etag),
                    el("Size", p.stored.len().to_string())
                )
            })
            .collect();
        let inner = format!(
            "{}{}{}{parts}{}",
            el("Bucket", &bucket.name),
            el("Key", &u.key),
            el("UploadId", &id),
            el("IsTruncated", "false")
        );
        Ok(xml_response(200, doc("ListPartsResult", &inner)))
    }

    pub(super) fn list_uploads(&self, bucket: &BucketState) -> S3Result<Response<Body>> {
        let uploads: String = bucket
            .uploads
            .lock()
            .iter()
            .map(|(id, u)| {
                format!(
                    "<Upload>{}{}{}</Upload>",
                    el("Key", &u.key),
                    el("UploadId", id),
                    el("Initiated", rfc3339_ms(u.initiated_ms))
                )
            })
            .collect();
        Ok(xml_response(
            200,
            doc(
                "ListMultipartUploadsResult",
                &format!("{}{uploads}", el("Bucket", &bucket.name)),
            ),
        ))
    }

    pub(super) fn abort_upload(&self, bucket: &BucketState, c: &Call) -> S3Result<Response<Body>> {
        let id = c.query.get("uploadId").cloned().unwrap_or_default();
        bucket
            .uploads
            .lock()
            .remove(&id)
            .ok_or_else(|| S3Error::no_such_upload(&id))?;
        Ok(empty(204))
    }
}
