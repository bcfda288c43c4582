"""A second client for the Kinesis emulator: boto3, as a Python service would use it.

Usage: python3 boto3_kinesis.py http://127.0.0.1:PORT

Covers put/get, the throttling error boto3 raises, and subscribe_to_shard (botocore reads the
initial-response event before handing out the stream). Prints one line per check and exits non-zero
on the first failure.
"""
import sys
import time

import boto3
from botocore.config import Config


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)
    print(f"ok: {what}")


def main(endpoint):
    session = boto3.session.Session(
        aws_access_key_id="LATLABEMULATOR",
        aws_secret_access_key="latlab-emulator-secret",
        region_name="us-east-1",
    )
    # boto3 counts max_attempts as retries; total_max_attempts=1 means one attempt per call.
    no_retry = Config(retries={"mode": "standard", "total_max_attempts": 1})
    k = session.client("kinesis", endpoint_url=endpoint, config=no_retry)

    k.create_stream(StreamName="py", ShardCount=1)
    for _ in range(200):
        s = k.describe_stream_summary(StreamName="py")["StreamDescriptionSummary"]
        if s["StreamStatus"] == "ACTIVE":
            break
        time.sleep(0.05)
    check(s["StreamStatus"] == "ACTIVE", "create_stream then describe_stream_summary reaches ACTIVE")
    check("py" in k.list_streams()["StreamNames"], "list_streams names the stream")
    shard = k.list_shards(StreamName="py")["Shards"][0]["ShardId"]

    put = k.put_record(StreamName="py", Data=b"hello", PartitionKey="p")
    check(put["ShardId"] == shard and put["SequenceNumber"].isdigit(), "put_record answers a shard and sequence number")
    batch = k.put_records(
        StreamName="py", Records=[{"Data": f"r{i}".encode(), "PartitionKey": "p"} for i in range(3)]
    )
    check(batch["FailedRecordCount"] == 0 and len(batch["Records"]) == 3, "put_records stores every record")

    it = k.get_shard_iterator(StreamName="py", ShardId=shard, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    got = k.get_records(ShardIterator=it)
    data = [r["Data"] for r in got["Records"]]
    check(data == [b"hello", b"r0", b"r1", b"r2"], f"get_records returns the records in order: {data}")
    arrival = got["Records"][0]["ApproximateArrivalTimestamp"]
    check(abs(arrival.timestamp() - time.time()) < 30, "ApproximateArrivalTimestamp parses as a datetime")

    throttled = 0
    for _ in range(10):
        try:
            k.get_records(ShardIterator=got["NextShardIterator"])
        except k.exceptions.ProvisionedThroughputExceededException as e:
            throttled += 1
            message = e.response["Error"]["Message"]
    check(throttled >= 5, f"rapid get_records raise ProvisionedThroughputExceededException ({throttled} of 10)")
    check(message.startswith("Rate exceeded for shard"), f"with the service's message: {message}")

    stream_arn = s["StreamARN"]
    consumer = k.register_stream_consumer(StreamARN=stream_arn, ConsumerName="py-efo")["Consumer"]
    for _ in range(200):
        d = k.describe_stream_consumer(ConsumerARN=consumer["ConsumerARN"])["ConsumerDescription"]
        if d["ConsumerStatus"] == "ACTIVE":
            break
        time.sleep(0.05)
    check(d["ConsumerStatus"] == "ACTIVE", "register_stream_consumer reaches ACTIVE")

    sub = k.subscribe_to_shard(
        ConsumerARN=consumer["ConsumerARN"],
        ShardId=shard,
        StartingPosition={"Type": "TRIM_HORIZON"},
    )
    received = []
    continuation = None
    deadline = time.time() + 10
    for event in sub["EventStream"]:
        ev = event["SubscribeToShardEvent"]
        received.extend(r["Data"] for r in ev["Records"])
        continuation = ev["ContinuationSequenceNumber"]
        if len(received) >= 4 or time.time() > deadline:
            break
    check(received == [b"hello", b"r0", b"r1", b"r2"], f"subscribe_to_shard pushes the records: {received}")
    check(continuation is not None and continuation.isdigit(), "events carry a ContinuationSequenceNumber")
    sub["EventStream"].close()

    k.deregister_stream_consumer(ConsumerARN=consumer["ConsumerARN"])
    k.delete_stream(StreamName="py")
    try:
        k.describe_stream_summary(StreamName="py")
        check(False, "a deleted stream is gone")
    except k.exceptions.ResourceNotFoundException:
        check(True, "a deleted stream is gone (ResourceNotFoundException)")
    print("boto3: all checks passed")


if __name__ == "__main__":
    main(sys.argv[1])
