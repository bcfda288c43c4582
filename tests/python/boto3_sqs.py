"""A second client for the emulator's SQS: boto3, as a Python service would use it.

Usage: python3 boto3_sqs.py http://127.0.0.1:PORT

The emulator is started with short time quotas (--limit sqs.dedup_interval=2s,
sqs.min_retention=1s, sqs.purge_interval=1s, sqs.deleted_queue_name_hold=1s), a FIFO quota of 20
calls a second (sqs.fifo_calls_per_sec=20) and 20 in-flight messages per standard queue
(sqs.max_in_flight_standard=20), so that what takes minutes on the service takes a second here;
every other quota is at its documented default. boto3 speaks SQS's JSON protocol (botocore 1.34.x
and later). Prints one line per check and exits non-zero on the first failure.
"""
import hashlib
import sys
import threading
import time

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

MIB = 1024 * 1024


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)
    print(f"ok: {what}")


def error_of(call):
    """Calls `call`; returns (code, message) of the ClientError it raises, or None."""
    try:
        call()
    except ClientError as e:
        return e.response["Error"]["Code"], e.response["Error"].get("Message", "")
    return None


def main(endpoint):
    session = boto3.session.Session(
        aws_access_key_id="LATLABEMULATOR",
        aws_secret_access_key="latlab-emulator-secret",
        region_name="us-east-1",
    )
    no_retry = Config(retries={"mode": "standard", "total_max_attempts": 1})
    q = session.client("sqs", endpoint_url=endpoint, config=no_retry)
    seen = {}
    q.meta.events.register(
        "before-send.sqs.*",
        lambda request, **_: seen.update(target=request.headers.get("X-Amz-Target")),
    )

    # Queues: create, find, list, attributes, tags, purge, delete.
    url = q.create_queue(QueueName="py-std", Attributes={"VisibilityTimeout": "40"})["QueueUrl"]
    target = seen.get("target")
    if isinstance(target, bytes):
        target = target.decode()
    check(target == "AmazonSQS.CreateQueue", f"boto3 sends the JSON protocol (x-amz-target {target})")
    check(url.endswith("/py-std"), "create_queue answers the queue's URL")
    check(q.get_queue_url(QueueName="py-std")["QueueUrl"] == url, "get_queue_url finds it")
    check(url in q.list_queues(QueueNamePrefix="py-")["QueueUrls"], "list_queues lists it")
    attrs = q.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    check(attrs["VisibilityTimeout"] == "40", "the visibility timeout given is kept")
    check(attrs["MessageRetentionPeriod"] == str(4 * 24 * 3600), "retention defaults to 4 days")
    check(attrs["MaximumMessageSize"] == str(MIB), "the largest message defaults to 1 MiB")
    q.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "30"})
    attrs = q.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"]
    check(attrs == {"VisibilityTimeout": "30"}, "set_queue_attributes changes it")
    err = error_of(lambda: q.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "43201"}))
    check(err is not None and err[0] == "InvalidAttributeValue" and "VisibilityTimeout" in err[1],
          f"a visibility timeout past 12 hours is refused, naming it ({err})")
    q.tag_queue(QueueUrl=url, Tags={"latlab:run-id": "py"})
    check(q.list_queue_tags(QueueUrl=url)["Tags"] == {"latlab:run-id": "py"}, "tag_queue tags it")
    err = error_of(lambda: q.get_queue_url(QueueName="py-missing"))
    check(err is not None and err[0] == "AWS.SimpleQueueService.NonExistentQueue",
          f"a queue that does not exist is QueueDoesNotExist ({err})")

    # Messages: send, batch, receive, delete, change visibility.
    sent = q.send_message(QueueUrl=url, MessageBody="hello",
                          MessageAttributes={"seq": {"DataType": "Number", "StringValue": "1"}})
    check(sent["MD5OfMessageBody"] == hashlib.md5(b"hello").hexdigest(),
          "send_message answers the body's MD5 (botocore checks it, and the attributes' MD5)")
    entries = [{"Id": f"m{i}", "MessageBody": f"batch {i}"} for i in range(10)]
    out = q.send_message_batch(QueueUrl=url, Entries=entries)
    check(len(out["Successful"]) == 10 and not out.get("Failed"), "a batch of 10 is sent")
    err = error_of(lambda: q.send_message_batch(
        QueueUrl=url, Entries=[{"Id": f"m{i}", "MessageBody": "x"} for i in range(11)]))
    check(err is not None and err[0] == "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
          f"a batch of 11 is refused ({err})")
    q.send_message(QueueUrl=url, MessageBody="x" * MIB)
    err = error_of(lambda: q.send_message(QueueUrl=url, MessageBody="x" * (MIB + 1)))
    check(err is not None and err[0] == "InvalidParameterValue",
          f"a message of 1 MiB is sent and one byte more is refused ({err})")
    got = []
    for _ in range(20):
        got += q.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                 MessageAttributeNames=["All"]).get("Messages", [])
        if len(got) >= 12:
            break
    check(len(got) == 12, f"receive_message finds the 12 messages sent ({len(got)})")
    first = next(m for m in got if m["Body"] == "hello")
    check(first["MessageAttributes"]["seq"]["StringValue"] == "1", "a message's attributes come back")
    err = error_of(lambda: q.receive_message(QueueUrl=url, WaitTimeSeconds=21))
    check(err is not None and err[0] == "InvalidParameterValue" and "WaitTimeSeconds" in err[1],
          f"a wait of 21 s is refused, naming WaitTimeSeconds ({err})")
    err = error_of(lambda: q.receive_message(QueueUrl=url, MaxNumberOfMessages=11))
    check(err is not None and err[0] == "InvalidParameterValue" and "MaxNumberOfMessages" in err[1],
          f"11 messages a receive are refused, naming MaxNumberOfMessages ({err})")
    q.delete_message(QueueUrl=url, ReceiptHandle=first["ReceiptHandle"])
    rest = [m for m in got if m is not first]
    out = q.delete_message_batch(QueueUrl=url, Entries=[
        {"Id": f"d{i}", "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(rest[:10])])
    check(len(out["Successful"]) == 10, "delete_message_batch deletes 10")
    last = rest[10]
    q.change_message_visibility(QueueUrl=url, ReceiptHandle=last["ReceiptHandle"], VisibilityTimeout=0)
    again = q.receive_message(QueueUrl=url, WaitTimeSeconds=2, AttributeNames=["All"]).get("Messages", [])
    check(len(again) == 1 and again[0]["MessageId"] == last["MessageId"]
          and again[0]["Attributes"]["ApproximateReceiveCount"] == "2",
          "change_message_visibility to 0 makes the message visible again, received a second time")
    out = q.change_message_visibility_batch(QueueUrl=url, Entries=[
        {"Id": "c0", "ReceiptHandle": again[0]["ReceiptHandle"], "VisibilityTimeout": 1}])
    check(len(out["Successful"]) == 1, "change_message_visibility_batch changes it")
    err = error_of(lambda: q.delete_message(QueueUrl=url, ReceiptHandle="not-a-receipt"))
    check(err is not None and err[0] == "ReceiptHandleIsInvalid", f"a made-up receipt is ReceiptHandleIsInvalid ({err})")

    # The visibility timeout runs out: the message comes back.
    t0 = time.monotonic()
    back = q.receive_message(QueueUrl=url, WaitTimeSeconds=5).get("Messages", [])
    check(len(back) == 1 and back[0]["MessageId"] == last["MessageId"] and time.monotonic() - t0 < 3,
          "a message whose visibility timeout ran out is received again")
    q.delete_message(QueueUrl=url, ReceiptHandle=back[0]["ReceiptHandle"])

    # A long poll answers as soon as a message arrives.
    threading.Timer(0.5, lambda: q.send_message(QueueUrl=url, MessageBody="late")).start()
    t0 = time.monotonic()
    got = q.receive_message(QueueUrl=url, WaitTimeSeconds=10).get("Messages", [])
    waited = time.monotonic() - t0
    check(len(got) == 1 and 0.3 < waited < 3, f"a long poll answers when the message arrives ({waited:.2f} s)")
    q.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])

    # In-flight messages: OverLimit to a short poll, at 20 here.
    for i in range(22):
        q.send_message(QueueUrl=url, MessageBody=f"f{i}")
    held = []
    for _ in range(40):
        held += q.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
        if len(held) >= 20:
            break
    check(len(held) == 20, f"no more than 20 messages are in flight at once ({len(held)})")
    err = error_of(lambda: q.receive_message(QueueUrl=url, WaitTimeSeconds=0))
    check(err is not None and err[0] == "OverLimit", f"a short poll past the in-flight cap is OverLimit ({err})")
    q.purge_queue(QueueUrl=url)
    err = error_of(lambda: q.purge_queue(QueueUrl=url))
    check(err is not None and err[0] == "AWS.SimpleQueueService.PurgeQueueInProgress",
          f"a second purge within the interval is refused ({err})")
    n = q.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    check(n["Attributes"]["ApproximateNumberOfMessages"] == "0", "purge_queue empties it")
    q.delete_queue(QueueUrl=url)
    err = error_of(lambda: q.create_queue(QueueName="py-std"))
    check(err is not None and err[0] == "AWS.SimpleQueueService.QueueDeletedRecently",
          f"a deleted queue's name is held ({err})")
    time.sleep(1.1)
    q.create_queue(QueueName="py-std")
    check(True, "and can be created again once the hold has passed")

    # FIFO: order per group, a group held while in flight, deduplication, the call quota.
    err = error_of(lambda: q.create_queue(QueueName="py-bad", Attributes={"FifoQueue": "true"}))
    check(err is not None and err[0] == "InvalidParameterValue", f"a FIFO queue's name must end in .fifo ({err})")
    f = q.create_queue(QueueName="py.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    for i in range(6):
        q.send_message(QueueUrl=f, MessageBody=f"{i}", MessageGroupId=f"g{i % 2}",
                       MessageDeduplicationId=f"d{i}")
    dup = q.send_message(QueueUrl=f, MessageBody="0 again", MessageGroupId="g0", MessageDeduplicationId="d0")
    err = error_of(lambda: q.send_message(QueueUrl=f, MessageBody="no dedup id", MessageGroupId="g0"))
    check(err is not None and err[0] == "InvalidParameterValue",
          f"a FIFO send needs a deduplication id or content-based deduplication ({err})")
    first = q.receive_message(QueueUrl=f, MaxNumberOfMessages=1, AttributeNames=["All"])["Messages"][0]
    check(first["Body"] == "0" and first["Attributes"]["MessageGroupId"] == "g0", "the first message comes first")
    others = q.receive_message(QueueUrl=f, MaxNumberOfMessages=10).get("Messages", [])
    check([m["Body"] for m in others] == ["1", "3", "5"],
          f"group g0 is held while its message is in flight; g1 comes in order ({[m['Body'] for m in others]})")
    check(dup["MessageId"] == first["MessageId"], "a send with a deduplication id already seen is the same message")
    q.delete_message(QueueUrl=f, ReceiptHandle=first["ReceiptHandle"])
    for m in others:
        q.delete_message(QueueUrl=f, ReceiptHandle=m["ReceiptHandle"])
    rest = q.receive_message(QueueUrl=f, MaxNumberOfMessages=10).get("Messages", [])
    check([m["Body"] for m in rest] == ["2", "4"], "once deleted, the group's next messages follow in order")
    for m in rest:
        q.delete_message(QueueUrl=f, ReceiptHandle=m["ReceiptHandle"])
    time.sleep(2.1)
    again = q.send_message(QueueUrl=f, MessageBody="0 later", MessageGroupId="g0", MessageDeduplicationId="d0")
    check(again["MessageId"] != first["MessageId"], "past the deduplication interval the same id is a new message")
    cb = q.create_queue(QueueName="py-cb.fifo",
                        Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"})["QueueUrl"]
    a = q.send_message(QueueUrl=cb, MessageBody="same", MessageGroupId="g")
    b = q.send_message(QueueUrl=cb, MessageBody="same", MessageGroupId="g")
    check(a["MessageId"] == b["MessageId"], "content-based deduplication: the same body is one message")

    throttled = 0
    for i in range(40):
        err = error_of(lambda: q.send_message(QueueUrl=cb, MessageBody=f"t{i}", MessageGroupId="g"))
        if err is not None:
            check(err[0] == "RequestThrottled", f"the FIFO quota's error is RequestThrottled ({err})")
            throttled += 1
    check(throttled > 0, f"40 sends at once to a FIFO queue allowing 20 calls a second are throttled ({throttled})")
    time.sleep(1.1)
    out = q.send_message_batch(QueueUrl=cb, Entries=[
        {"Id": f"b{i}", "MessageBody": f"b{i}", "MessageGroupId": "g"} for i in range(10)])
    check(len(out["Successful"]) == 10, "a batch is one call: 10 messages for one of the quota's calls")

    for u in (f, cb):
        q.delete_queue(QueueUrl=u)
    print("boto3: all checks passed")


if __name__ == "__main__":
    main(sys.argv[1])
