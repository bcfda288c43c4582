//! The emulator as AWS's endpoints are met: over TLS (HTTP/2 by ALPN, as the SDK speaks it to
//! AWS), by host name, with S3 buckets addressed in the host (virtual-hosted style, the SDK's
//! default) for Standard and directory buckets, CreateSession included. Every name resolves to
//! 127.0.0.1 through the test's own resolver; the certificate is the test's own authority's.

use crate::common::*;

const NAMES: &[&str] = &[
    "s3.us-east-1.amazonaws.com",
    "*.s3.us-east-1.amazonaws.com",
    "kinesis.us-east-1.amazonaws.com",
    "127.0.0.1",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buckets_in_the_host_and_http2_over_tls_reach_their_services() {
    let dir = tempfile::tempdir().unwrap();
    test_ca(dir.path(), NAMES);
    let ca = std::fs::read(dir.path().join("ca.pem")).unwrap();
    let emu = tls_emulator(dir.path()).await;
    let port = emu.addr().port();
    assert!(
        emu.endpoint_url().starts_with("https://"),
        "{}",
        emu.endpoint_url()
    );
    let dns = Loopback::default();

    // A Standard bucket, addressed in the host.
    let s3 = s3_virtual_hosted(
        &format!("https://s3.us-east-1.amazonaws.com:{port}"),
        tls_client(&ca, dns.clone()),
    );
    s3.create_bucket()
        .bucket("rehearsal-std")
        .send()
        .await
        .unwrap();
    s3.put_object()
        .bucket("rehearsal-std")
        .key("a/b.txt")
        .body(b"hello".to_vec().into())
        .send()
        .await
        .unwrap();
    let got = s3
        .get_object()
        .bucket("rehearsal-std")
        .key("a/b.txt")
        .send()
        .await
        .unwrap();
    assert_eq!(
        got.body.collect().await.unwrap().into_bytes().as_ref(),
        b"hello"
    );
    let listed = s3
        .list_objects_v2()
        .bucket("rehearsal-std")
        .send()
        .await
        .unwrap();
    assert_eq!(listed.key_count(), Some(1));

    // A directory bucket: made on the regional endpoint, then its session and its objects on
    // the bucket's own host.
    let dir_bucket = "rehearsal--use1-az4--x-s3";
    s3.create_bucket()
        .bucket(dir_bucket)
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
                        .data_redundancy(aws_sdk_s3::types::DataRedundancy::SingleAvailabilityZone)
                        .r#type(aws_sdk_s3::types::BucketType::Directory)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    s3.put_object()
        .bucket(dir_bucket)
        .key("k")
        .body(b"express".to_vec().into())
        .send()
        .await
        .unwrap();
    let got = s3
        .get_object()
        .bucket(dir_bucket)
        .key("k")
        .send()
        .await
        .unwrap();
    assert_eq!(
        got.body.collect().await.unwrap().into_bytes().as_ref(),
        b"express"
    );
    assert!(emu.counts().get("s3.create_sessions").unwrap() >= 1);

    // Kinesis over TLS: HTTP/2 by ALPN, SubscribeToShard's event stream included.
    let kinesis = kinesis_over(
        &format!("https://kinesis.us-east-1.amazonaws.com:{port}"),
        tls_client(&ca, dns.clone()),
    );
    create_stream(&kinesis, "rehearsal", 1).await;
    let arn = kinesis
        .describe_stream_summary()
        .stream_name("rehearsal")
        .send()
        .await
        .unwrap()
        .stream_description_summary
        .unwrap()
        .stream_arn;
    kinesis
        .put_record()
        .stream_name("rehearsal")
        .partition_key("p")
        .data(aws_sdk_kinesis::primitives::Blob::new(b"r".to_vec()))
        .send()
        .await
        .unwrap();
    let consumer = kinesis
        .register_stream_consumer()
        .stream_arn(&arn)
        .consumer_name("efo")
        .send()
        .await
        .unwrap()
        .consumer
        .unwrap()
        .consumer_arn;
    // ACTIVE on the emulator's clock; wait for it, bounded.
    for _ in 0..100 {
        let d = kinesis
            .describe_stream_consumer()
            .consumer_arn(&consumer)
            .send()
            .await
            .unwrap();
        if d.consumer_description.unwrap().consumer_status
            == aws_sdk_kinesis::types::ConsumerStatus::Active
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let mut sub = kinesis
        .subscribe_to_shard()
        .consumer_arn(&consumer)
        .shard_id("shardId-000000000000")
        .starting_position(
            aws_sdk_kinesis::types::StartingPosition::builder()
                .r#type(aws_sdk_kinesis::types::ShardIteratorType::TrimHorizon)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let mut records = 0;
    for _ in 0..10 {
        let event =
            tokio::time::timeout(std::time::Duration::from_secs(10), sub.event_stream.recv())
                .await
                .expect("an event within 10 s")
                .unwrap();
        if let Some(aws_sdk_kinesis::types::SubscribeToShardEventStream::SubscribeToShardEvent(e)) =
            event
        {
            records += e.records.len();
            if records > 0 {
                break;
            }
        }
    }
    assert_eq!(records, 1);

    // Every request came by name, and each name is one an SDK chose.
    let hosts = emu.hosts().counts();
    println!("requests by host: {hosts:?}");
    println!("names resolved: {:?}", dns.asked.lock());
    let count = |h: &str| hosts.iter().find(|(n, _)| n == h).map_or(0, |(_, c)| *c);
    assert!(
        count("rehearsal-std.s3.us-east-1.amazonaws.com") >= 4,
        "{hosts:?}"
    );
    assert!(count("kinesis.us-east-1.amazonaws.com") >= 5, "{hosts:?}");
    assert!(
        hosts.iter().any(|(h, _)| h.starts_with(dir_bucket)),
        "the directory bucket's own host: {hosts:?}"
    );
    assert!(
        hosts.iter().all(|(h, _)| h.ends_with(".amazonaws.com")),
        "{hosts:?}"
    );
    // The SDK spoke HTTP/2, as it does to AWS: ALPN offered it.
    let versions = emu.hosts().versions();
    println!("requests by HTTP version: {versions:?}");
    assert!(
        versions.iter().any(|(v, n)| v == "HTTP/2.0" && *n > 0),
        "{versions:?}"
    );
}
