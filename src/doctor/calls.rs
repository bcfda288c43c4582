//! The calls of a probe: every Kinesis and S3 operation latlab makes, once, on a stream or
//! bucket that does not exist (`latlab-doctor-probe-<random hex>`, its ARNs in the credentials'
//! account or 000000000000), so that an endpoint that implements it answers with an AWS error
//! and nothing is created. CreateStream, DeleteStream, CreateBucket and DeleteBucket are called
//! only on the embedded emulator, which is thrown away afterwards.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::ops::{Need, Outcome, Probe, judge};

/// Names that exist nowhere: a fresh random suffix per run of doctor.
pub(super) struct Names {
    pub stream: String,
    pub stream_arn: String,
    pub consumer_arn: String,
    pub bucket: String,
    pub directory_bucket: Option<String>,
}

impl Names {
    pub fn new(region: &str, account: &str, zone: Option<&str>) -> Names {
        let stream = format!("latlab-doctor-probe-{}", crate::labs::run_id());
        let partition = if region.starts_with("cn-") {
            "aws-cn"
        } else if region.starts_with("us-gov-") {
            "aws-us-gov"
        } else {
            "aws"
        };
        let stream_arn = format!("arn:{partition}:kinesis:{region}:{account}:stream/{stream}");
        Names {
            consumer_arn: format!("{stream_arn}/consumer/latlab-doctor-probe:1700000000"),
            stream_arn,
            directory_bucket: zone.map(|z| format!("{stream}--{z}--x-s3")),
            bucket: stream.clone(),
            stream,
        }
    }
}

const PROBE_KEY: &str = "latlab/doctor-probe";

pub(super) fn kinesis_probes<'a>(
    c: &'a aws_sdk_kinesis::Client,
    n: &'a Names,
    embedded: bool,
) -> Vec<(&'static str, Need, BoxFuture<'a, Outcome>)> {
    use aws_sdk_kinesis::primitives::Blob;
    use aws_sdk_kinesis::types::{
        PutRecordsRequestEntry, ScalingType, ShardIteratorType, StartingPosition,
    };
    let data = || Blob::new(&b"latlab doctor"[..]);
    let mut v: Vec<(&'static str, Need, BoxFuture<'a, Outcome>)> = vec![
        (
            "DescribeStreamSummary",
            Need::Setup,
            async move {
                judge(
                    c.describe_stream_summary()
                        .stream_name(&n.stream)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "ListShards",
            Need::Setup,
            async move { judge(c.list_shards().stream_name(&n.stream).send().await) }.boxed(),
        ),
        (
            "PutRecord",
            Need::PutRecord,
            async move {
                judge(
                    c.put_record()
                        .stream_name(&n.stream)
                        .partition_key("doctor")
                        .data(data())
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "PutRecords",
            Need::PutRecords,
            async move {
                let entry = PutRecordsRequestEntry::builder()
                    .partition_key("doctor")
                    .data(data())
                    .build()
                    .expect("the entry's fields are set");
                judge(
                    c.put_records()
                        .stream_name(&n.stream)
                        .records(entry)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "GetShardIterator",
            Need::Polling,
            async move {
                judge(
                    c.get_shard_iterator()
                        .stream_name(&n.stream)
                        .shard_id("shardId-000000000000")
                        .shard_iterator_type(ShardIteratorType::TrimHorizon)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "GetRecords",
            Need::Polling,
            async move {
                judge(
                    c.get_records()
                        .shard_iterator("latlab-doctor-probe-not-an-iterator")
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "RegisterStreamConsumer",
            Need::FanOut,
            async move {
                judge(
                    c.register_stream_consumer()
                        .stream_arn(&n.stream_arn)
                        .consumer_name("latlab-doctor-probe")
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "DescribeStreamConsumer",
            Need::FanOut,
            async move {
                judge(
                    c.describe_stream_consumer()
                        .consumer_arn(&n.consumer_arn)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "SubscribeToShard",
            Need::FanOut,
            async move {
                let from = StartingPosition::builder()
                    .r#type(ShardIteratorType::Latest)
                    .build()
                    .expect("the type is set");
                judge(
                    c.subscribe_to_shard()
                        .consumer_arn(&n.consumer_arn)
                        .shard_id("shardId-000000000000")
                        .starting_position(from)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "DeregisterStreamConsumer",
            Need::ConsumerCleanup,
            async move {
                judge(
                    c.deregister_stream_consumer()
                        .consumer_arn(&n.consumer_arn)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "UpdateShardCount",
            Need::Reshard,
            async move {
                judge(
                    c.update_shard_count()
                        .stream_name(&n.stream)
                        .target_shard_count(2)
                        .scaling_type(ScalingType::UniformScaling)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
    ];
    if embedded {
        let created = move || format!("{}-created", n.stream);
        v.push((
            "CreateStream",
            Need::CreateStream,
            async move {
                judge(
                    c.create_stream()
                        .stream_name(created())
                        .shard_count(1)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ));
        v.push((
            "DeleteStream",
            Need::DeleteStream,
            async move { judge(c.delete_stream().stream_name(created()).send().await) }.boxed(),
        ));
    }
    v
}

pub(super) fn s3_probes<'a>(
    c: &'a aws_sdk_s3::Client,
    n: &'a Names,
    embedded: bool,
) -> Vec<(&'static str, Need, BoxFuture<'a, Outcome>)> {
    use aws_sdk_s3::primitives::ByteStream;
    let body = || ByteStream::from_static(b"latlab doctor");
    let b = &n.bucket;
    let mut v: Vec<(&'static str, Need, BoxFuture<'a, Outcome>)> = vec![
        (
            "HeadBucket",
            Need::GivenBuckets,
            async move { judge(c.head_bucket().bucket(b).send().await) }.boxed(),
        ),
        (
            "PutObject",
            Need::Objects,
            async move {
                judge(
                    c.put_object()
                        .bucket(b)
                        .key(PROBE_KEY)
                        .body(body())
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "GetObject",
            Need::Objects,
            async move { judge(c.get_object().bucket(b).key(PROBE_KEY).send().await) }.boxed(),
        ),
        (
            "CreateMultipartUpload",
            Need::Multipart,
            async move {
                judge(
                    c.create_multipart_upload()
                        .bucket(b)
                        .key(PROBE_KEY)
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "UploadPart",
            Need::Multipart,
            async move {
                judge(
                    c.upload_part()
                        .bucket(b)
                        .key(PROBE_KEY)
                        .upload_id("latlab-doctor-probe")
                        .part_number(1)
                        .body(body())
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "CompleteMultipartUpload",
            Need::Multipart,
            async move {
                judge(
                    c.complete_multipart_upload()
                        .bucket(b)
                        .key(PROBE_KEY)
                        .upload_id("latlab-doctor-probe")
                        .send()
                        .await,
                )
            }
            .boxed(),
        ),
        (
            "ListObjectsV2",
            Need::ObjectCleanup,
            async move { judge(c.list_objects_v2().bucket(b).prefix("latlab/").send().await) }
                .boxed(),
        ),
        (
            "DeleteObject",
            Need::ObjectCleanup,
            async move { judge(c.delete_object().bucket(b).key(PROBE_KEY).send().await) }.boxed(),
        ),
    ];
    if let Some(dir) = &n.directory_bucket {
        v.push((
            "CreateSession",
            Need::Session,
            async move { judge(c.create_session().bucket(dir).send().await) }.boxed(),
        ));
    }
    if embedded {
        let created = move || format!("{b}-created");
        v.push((
            "CreateBucket",
            Need::CreateBucket,
            async move { judge(c.create_bucket().bucket(created()).send().await) }.boxed(),
        ));
        v.push((
            "DeleteBucket",
            Need::DeleteBucket,
            async move { judge(c.delete_bucket().bucket(created()).send().await) }.boxed(),
        ));
    }
    v
}

/// Runs the probes at once and pairs each outcome with its operation.
pub(super) async fn run_probes(
    list: Vec<(&'static str, Need, BoxFuture<'_, Outcome>)>,
) -> Vec<Probe> {
    let (heads, calls): (Vec<_>, Vec<_>) = list
        .into_iter()
        .map(|(op, need, call)| ((op, need), call))
        .unzip();
    futures_util::future::join_all(calls)
        .await
        .into_iter()
        .zip(heads)
        .map(|(outcome, (op, need))| Probe { op, need, outcome })
        .collect()
}
