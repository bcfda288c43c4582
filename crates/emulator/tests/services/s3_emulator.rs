//! The S3 emulator through the real aws-sdk-s3 over HTTP: every operation, multipart uploads byte
//! for byte, the S3 Express session flow, SlowDown, storage bounds, and bad requests answered with
//! the right XML error.

use crate::common;

use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart, Delete, ObjectIdentifier};
use aws_smithy_types::retry::RetryConfig;
use common::{emulator, raw};

fn client(emu: &latlab_emulator::Emulator) -> aws_sdk_s3::Client {
    common::s3_client(&emu.endpoint_url(), RetryConfig::disabled())
}

fn code<E: aws_sdk_s3::error::ProvideErrorMetadata, R>(
    e: &aws_sdk_s3::error::SdkError<E, R>,
) -> String {
    use aws_sdk_s3::error::ProvideErrorMetadata;
    e.code().unwrap_or("<no code>").to_string()
}

fn data(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

async fn body(out: aws_sdk_s3::operation::get_object::GetObjectOutput) -> Vec<u8> {
    out.body.collect().await.unwrap().into_bytes().to_vec()
}

#[tokio::test]
async fn buckets_and_objects_on_standard() {
    let emu = emulator(&[]).await;
    let c = client(&emu);
    c.create_bucket().bucket("lab").send().await.unwrap();
    c.head_bucket().bucket("lab").send().await.unwrap();
    let e = c.create_bucket().bucket("lab").send().await.unwrap_err();
    assert_eq!(code(&e), "BucketAlreadyOwnedByYou");
    let e = c
        .create_bucket()
        .bucket("Bad_Name")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidBucketName");
    let names: Vec<String> = c
        .list_buckets()
        .send()
        .await
        .unwrap()
        .buckets()
        .iter()
        .filter_map(|b| b.name().map(String::from))
        .collect();
    assert_eq!(names, ["lab"]);

    let payload = data(100_000, 1);
    let put = c
        .put_object()
        .bucket("lab")
        .key("dir/a")
        .body(ByteStream::from(payload.clone()))
        .send()
        .await
        .unwrap();
    assert!(put.e_tag().is_some());
    assert!(
        put.checksum_crc32().is_some(),
        "the SDK sent a CRC32 and S3 answers it"
    );
    let got = c
        .get_object()
        .bucket("lab")
        .key("dir/a")
        .checksum_mode(aws_sdk_s3::types::ChecksumMode::Enabled)
        .send()
        .await
        .unwrap();
    assert_eq!(got.content_length(), Some(100_000));
    assert_eq!(
        body(got).await,
        payload,
        "byte for byte, with the SDK validating the checksum"
    );
    let part = c
        .get_object()
        .bucket("lab")
        .key("dir/a")
        .range("bytes=10-19")
        .send()
        .await
        .unwrap();
    assert_eq!(part.content_range(), Some("bytes 10-19/100000"));
    assert_eq!(body(part).await, payload[10..20]);
    let head = c
        .head_object()
        .bucket("lab")
        .key("dir/a")
        .send()
        .await
        .unwrap();
    assert_eq!(head.content_length(), Some(100_000));
    let e = c
        .get_object()
        .bucket("lab")
        .key("dir/a")
        .range("bytes=200000-")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InvalidRange");
    let e = c
        .get_object()
        .bucket("lab")
        .key("missing")
        .send()
        .await
        .unwrap_err();
    assert!(e.as_service_error().unwrap().is_no_such_key());
    let e = c
        .get_object()
        .bucket("nope")
        .key("k")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "NoSuchBucket");

    // A streamed body: aws-chunked with a checksum trailer.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.bin");
    let big = data(3_000_000, 7);
    std::fs::write(&file, &big).unwrap();
    c.put_object()
        .bucket("lab")
        .key("dir/streamed")
        .body(ByteStream::from_path(&file).await.unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(
        body(
            c.get_object()
                .bucket("lab")
                .key("dir/streamed")
                .send()
                .await
                .unwrap()
        )
        .await,
        big
    );

    for i in 0..5 {
        c.put_object()
            .bucket("lab")
            .key(format!("list/{i}"))
            .body(ByteStream::from_static(b"x"))
            .send()
            .await
            .unwrap();
    }
    let page = c
        .list_objects_v2()
        .bucket("lab")
        .prefix("list/")
        .max_keys(2)
        .send()
        .await
        .unwrap();
    assert_eq!(page.key_count(), Some(2));
    assert_eq!(page.is_truncated(), Some(true));
    let rest = c
        .list_objects_v2()
        .bucket("lab")
        .prefix("list/")
        .continuation_token(page.next_continuation_token().unwrap())
        .send()
        .await
        .unwrap();
    let keys: Vec<&str> = rest.contents().iter().filter_map(|o| o.key()).collect();
    assert_eq!(keys, ["list/2", "list/3", "list/4"]);

    let e = c.delete_bucket().bucket("lab").send().await.unwrap_err();
    assert_eq!(code(&e), "BucketNotEmpty");
    c.delete_object()
        .bucket("lab")
        .key("dir/a")
        .send()
        .await
        .unwrap();
    let ids: Vec<ObjectIdentifier> = [
        "dir/streamed",
        "list/0",
        "list/1",
        "list/2",
        "list/3",
        "list/4",
    ]
    .iter()
    .map(|k| ObjectIdentifier::builder().key(*k).build().unwrap())
    .collect();
    let deleted = c
        .delete_objects()
        .bucket("lab")
        .delete(Delete::builder().set_objects(Some(ids)).build().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.deleted().len(), 6);
    c.delete_bucket().bucket("lab").send().await.unwrap();
    assert_eq!(
        emu.s3().storage.total(),
        0,
        "deleted objects give their bytes back"
    );
}

#[tokio::test]
async fn multipart_round_trip_is_byte_exact() {
    let emu = emulator(&["s3.memory_bytes=4MiB"]).await;
    let c = client(&emu);
    c.create_bucket().bucket("mpu").send().await.unwrap();
    let up = c
        .create_multipart_upload()
        .bucket("mpu")
        .key("obj")
        .send()
        .await
        .unwrap();
    let id = up.upload_id().unwrap().to_string();
    let sizes = [5 * 1024 * 1024, 5 * 1024 * 1024, 1_000_001];
    let mut whole = Vec::new();
    let mut parts = Vec::new();
    for (i, n) in sizes.iter().enumerate() {
        let d = data(*n, i as u8);
        whole.extend_from_slice(&d);
        let out = c
            .upload_part()
            .bucket("mpu")
            .key("obj")
            .upload_id(&id)
            .part_number(i as i32 + 1)
            .body(ByteStream::from(d))
            .send()
            .await
            .unwrap();
        parts.push(
            CompletedPart::builder()
                .part_number(i as i32 + 1)
                .e_tag(out.e_tag().unwrap())
                .set_checksum_crc32(out.checksum_crc32().map(String::from))
                .build(),
        );
    }
    let listed = c
        .list_parts()
        .bucket("mpu")
        .key("obj")
        .upload_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.parts().len(), 3);
    assert!(
        emu.s3().storage.spill_dir().is_some(),
        "past the memory budget, parts spill to disk"
    );
    c.complete_multipart_upload()
        .bucket("mpu")
        .key("obj")
        .upload_id(&id)
        .multipart_upload(
            CompletedMultipartUpload::builder()
                .set_parts(Some(parts))
                .build(),
        )
        .send()
        .await
        .unwrap();
    let got = c
        .get_object()
        .bucket("mpu")
        .key("obj")
        .send()
        .await
        .unwrap();
    assert_eq!(got.content_length(), Some(whole.len() as i64));
    assert_eq!(body(got).await, whole, "the parts, in order, byte for byte");
    let across = c
        .get_object()
        .bucket("mpu")
        .key("obj")
        .range("bytes=5242870-5242889")
        .send()
        .await
        .unwrap();
    assert_eq!(
        body(across).await,
        whole[5_242_870..5_242_890],
        "a range across a part boundary"
    );

    let aborted = c
        .create_multipart_upload()
        .bucket("mpu")
        .key("gone")
        .send()
        .await
        .unwrap();
    let aid = aborted.upload_id().unwrap();
    c.abort_multipart_upload()
        .bucket("mpu")
        .key("gone")
        .upload_id(aid)
        .send()
        .await
        .unwrap();
    let e = c
        .upload_part()
        .bucket("mpu")
        .key("gone")
        .upload_id(aid)
        .part_number(1)
        .body(ByteStream::from_static(b"x"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "NoSuchUpload");

    // Too small a part (not the last) is refused at completion.
    let small = c
        .create_multipart_upload()
        .bucket("mpu")
        .key("small")
        .send()
        .await
        .unwrap();
    let sid = small.upload_id().unwrap();
    let mut ps = Vec::new();
    for n in 1..=2 {
        let out = c
            .upload_part()
            .bucket("mpu")
            .key("small")
            .upload_id(sid)
            .part_number(n)
            .body(ByteStream::from_static(b"tiny"))
            .send()
            .await
            .unwrap();
        ps.push(
            CompletedPart::builder()
                .part_number(n)
                .e_tag(out.e_tag().unwrap())
                .build(),
        );
    }
    let e = c
        .complete_multipart_upload()
        .bucket("mpu")
        .key("small")
        .upload_id(sid)
        .multipart_upload(
            CompletedMultipartUpload::builder()
                .set_parts(Some(ps))
                .build(),
        )
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "EntityTooSmall");
}

async fn create_directory_bucket(c: &aws_sdk_s3::Client, bucket: &str) {
    c.create_bucket()
        .bucket(bucket)
        .create_bucket_configuration(
            aws_sdk_s3::types::CreateBucketConfiguration::builder()
                .location(
                    aws_sdk_s3::types::LocationInfo::builder()
                        .r#type(aws_sdk_s3::types::LocationType::AvailabilityZone)
                        .name("use1-az4")
                        .build(),
                )
                .bucket(
                    aws_sdk_s3::types::BucketInfo::builder()
                        .r#type(aws_sdk_s3::types::BucketType::Directory)
                        .data_redundancy(aws_sdk_s3::types::DataRedundancy::SingleAvailabilityZone)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
}

/// A CreateSession answer's token.
fn session_token(xml: &str) -> String {
    xml.split("<SessionToken>")
        .nth(1)
        .and_then(|rest| rest.split("</SessionToken>").next())
        .unwrap_or_else(|| panic!("no SessionToken in {xml}"))
        .to_string()
}

#[tokio::test]
async fn express_sessions_last_five_minutes() {
    // The documented 5 minutes, checked at their value by moving the emulator's clock.
    let emu = emulator(&[]).await;
    let c = client(&emu);
    let bucket = "five--use1-az4--x-s3";
    create_directory_bucket(&c, bucket).await;
    c.put_object()
        .bucket(bucket)
        .key("k")
        .body(ByteStream::from_static(b"x"))
        .send()
        .await
        .unwrap();
    let (status, xml) = raw(&emu, "GET", &format!("/{bucket}?session"), &[], b"").await;
    assert_eq!(status, 200, "{xml}");
    let token = session_token(&xml);
    let headers = [("x-amz-s3session-token", token.as_str())];
    let path = format!("/{bucket}/k");
    emu.advance_clock(std::time::Duration::from_secs(299));
    let (status, xml) = raw(&emu, "GET", &path, &headers, b"").await;
    assert_eq!(status, 200, "a 4m59s-old session still works: {xml}");
    emu.advance_clock(std::time::Duration::from_secs(2));
    let (status, xml) = raw(&emu, "GET", &path, &headers, b"").await;
    assert_eq!(status, 400);
    assert!(xml.contains("<Code>ExpiredToken</Code>"), "{xml}");
}

#[tokio::test]
async fn express_directory_buckets_use_sessions() {
    let emu = emulator(&["s3.session_duration=2s"]).await;
    let c = client(&emu);
    let bucket = "lab--use1-az4--x-s3";
    create_directory_bucket(&c, bucket).await;
    let payload = data(10_000, 3);
    let put = c
        .put_object()
        .bucket(bucket)
        .key("k")
        .body(ByteStream::from(payload.clone()))
        .send()
        .await
        .unwrap();
    assert!(put.e_tag().is_some());
    let head = c
        .head_object()
        .bucket(bucket)
        .key("k")
        .send()
        .await
        .unwrap();
    assert_eq!(
        head.storage_class().map(|s| s.as_str()),
        Some("EXPRESS_ONEZONE")
    );
    assert_eq!(
        body(c.get_object().bucket(bucket).key("k").send().await.unwrap()).await,
        payload
    );
    let sessions = emu.s3().stats().create_sessions;
    assert!(
        sessions >= 1,
        "the SDK's normal Express flow created a session"
    );

    // Without a token, and with an expired one, the real errors.
    let path = format!("/{bucket}/k");
    let (status, xml) = raw(&emu, "GET", &path, &[], b"").await;
    assert_eq!(status, 403, "{xml}");
    assert!(
        xml.contains("<Code>AccessDenied</Code>") && xml.contains("x-amz-s3session-token"),
        "{xml}"
    );
    let (status, xml) = raw(&emu, "GET", &format!("/{bucket}?session"), &[], b"").await;
    assert_eq!(status, 200);
    let token = session_token(&xml);
    assert!(xml.contains("<Expiration>"));
    let (status, _) = raw(
        &emu,
        "GET",
        &path,
        &[("x-amz-s3session-token", &token)],
        b"",
    )
    .await;
    assert_eq!(status, 200, "a fresh token works");
    tokio::time::sleep(std::time::Duration::from_millis(2200)).await;
    let (status, xml) = raw(
        &emu,
        "GET",
        &path,
        &[("x-amz-s3session-token", &token)],
        b"",
    )
    .await;
    assert_eq!(status, 400);
    assert!(xml.contains("<Code>ExpiredToken</Code>"), "{xml}");
    let (status, xml) = raw(
        &emu,
        "GET",
        &path,
        &[("x-amz-s3session-token", "forged")],
        b"",
    )
    .await;
    assert_eq!(
        (status, xml.contains("<Code>InvalidToken</Code>")),
        (400, true),
        "{xml}"
    );
    // The SDK renews its expired session by itself.
    assert_eq!(
        body(c.get_object().bucket(bucket).key("k").send().await.unwrap()).await,
        payload
    );
    assert!(emu.s3().stats().create_sessions > sessions);
}

#[tokio::test]
async fn requests_past_the_rate_limit_slow_down() {
    let emu = emulator(&["s3.standard_writes_per_sec=5"]).await;
    let c = client(&emu);
    c.create_bucket().bucket("busy").send().await.unwrap();
    let results = futures_util::future::join_all((0..20).map(|i| {
        c.put_object()
            .bucket("busy")
            .key(format!("p/{i}"))
            .body(ByteStream::from_static(b"x"))
            .send()
    }))
    .await;
    let slow: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(
        slow.len() >= 10,
        "20 writes into a 5 writes/s prefix: {} refused",
        slow.len()
    );
    for e in slow {
        assert_eq!(code(e), "SlowDown");
    }
    // Another prefix has its own budget.
    c.put_object()
        .bucket("busy")
        .key("q/0")
        .body(ByteStream::from_static(b"x"))
        .send()
        .await
        .unwrap();
    let stats = emu.s3().stats();
    let puts = stats
        .operations
        .iter()
        .find(|(_, op, _)| op == "PutObject")
        .unwrap();
    assert!(puts.2.slow_downs >= 10);
}

#[tokio::test]
async fn bad_requests_get_xml_errors() {
    let emu = emulator(&["s3.max_total_bytes=1MB"]).await;
    let c = client(&emu);
    c.create_bucket().bucket("bad").send().await.unwrap();
    let (status, xml) = raw(
        &emu,
        "PUT",
        "/bad/k",
        &[("x-amz-checksum-crc32", "AAAAAA==")],
        b"hello",
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        xml.contains("<Code>BadDigest</Code>") && xml.contains("CRC32"),
        "{xml}"
    );
    let up = c
        .create_multipart_upload()
        .bucket("bad")
        .key("m")
        .send()
        .await
        .unwrap();
    let (status, xml) = raw(
        &emu,
        "POST",
        &format!("/bad/m?uploadId={}", up.upload_id().unwrap()),
        &[],
        b"<CompleteMultipartUpload><Part>",
    )
    .await;
    assert_eq!(status, 400);
    assert!(xml.contains("<Code>MalformedXML</Code>"), "{xml}");
    let (status, xml) = raw(&emu, "PATCH", "/bad/k", &[], b"").await;
    assert_eq!(status, 405);
    assert!(xml.contains("<Code>MethodNotAllowed</Code>"), "{xml}");
    let (status, xml) = raw(
        &emu,
        "PUT",
        "/bad/chunked",
        &[
            ("content-encoding", "aws-chunked"),
            ("x-amz-decoded-content-length", "5"),
        ],
        b"zz;chunk-signature=x\r\nhello",
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        xml.contains("<Code>IncompleteBody</Code>") && xml.contains("hexadecimal"),
        "{xml}"
    );
    // The storage cap is a clear error, not an exhausted machine.
    let e = c
        .put_object()
        .bucket("bad")
        .key("big")
        .body(ByteStream::from(data(2_000_000, 0)))
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e), "InsufficientStorage");
    use aws_sdk_s3::error::ProvideErrorMetadata;
    assert!(e.message().unwrap().contains("s3.max_total_bytes"), "{e:?}");
    assert_eq!(
        emu.s3().storage.total(),
        0,
        "a refused upload leaves nothing behind"
    );
}
