"""A second client for the emulator's DynamoDB: boto3, as a Python service would use it.

Usage: python3 boto3_dynamodb.py http://127.0.0.1:PORT

Every quota is at its documented default. Retries are off, so each answer is seen as the emulator
gave it. Prints one line per check and exits non-zero on the first failure.
"""
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)
    print(f"ok: {what}")


def error_of(call):
    """Calls `call`; returns the ClientError's response, or None."""
    try:
        call()
    except ClientError as e:
        return e.response
    return None


def main(endpoint):
    db = boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="secret",
        config=Config(retries={"max_attempts": 1, "mode": "standard"}),
    )
    db.create_table(
        TableName="boto3-orders",
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
        ],
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        Tags=[{"Key": "latlab:run-id", "Value": "boto3"}],
    )
    desc = db.describe_table(TableName="boto3-orders")["Table"]
    check(desc["TableStatus"] == "ACTIVE", "CreateTable then DescribeTable: ACTIVE")
    check(
        desc["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST",
        "an on-demand table says so",
    )
    check("boto3-orders" in db.list_tables()["TableNames"], "ListTables")

    put = db.put_item(
        TableName="boto3-orders",
        Item={"pk": {"S": "u#1"}, "sk": {"N": "1"}, "body": {"S": "x" * 2000}},
        ReturnConsumedCapacity="TOTAL",
    )
    check(put["ConsumedCapacity"]["CapacityUnits"] == 2.0, "a 2 KB item costs 2 write units")
    got = db.get_item(
        TableName="boto3-orders",
        Key={"pk": {"S": "u#1"}, "sk": {"N": "1"}},
        ConsistentRead=True,
        ReturnConsumedCapacity="TOTAL",
    )
    check(got["Item"]["body"]["S"] == "x" * 2000, "GetItem returns the item")
    check(got["ConsumedCapacity"]["CapacityUnits"] == 1.0, "a strong read of 2 KB costs 1 read unit")
    failed = error_of(
        lambda: db.put_item(
            TableName="boto3-orders",
            Item={"pk": {"S": "u#1"}, "sk": {"N": "1"}},
            ConditionExpression="attribute_not_exists(pk)",
        )
    )
    check(
        failed and failed["Error"]["Code"] == "ConditionalCheckFailedException",
        "a failed condition is ConditionalCheckFailedException",
    )
    upd = db.update_item(
        TableName="boto3-orders",
        Key={"pk": {"S": "u#1"}, "sk": {"N": "1"}},
        UpdateExpression="SET #n = :n REMOVE body ADD hits :one",
        ExpressionAttributeNames={"#n": "name"},
        ExpressionAttributeValues={":n": {"S": "first"}, ":one": {"N": "1"}},
        ReturnValues="ALL_NEW",
    )["Attributes"]
    check(upd["name"]["S"] == "first" and upd["hits"]["N"] == "1" and "body" not in upd, "UpdateItem")
    batch = db.batch_write_item(
        RequestItems={
            "boto3-orders": [
                {"PutRequest": {"Item": {"pk": {"S": "u#1"}, "sk": {"N": str(i)}}}}
                for i in range(2, 12)
            ]
        }
    )
    check(batch["UnprocessedItems"] == {}, "BatchWriteItem of 10")
    q = db.query(
        TableName="boto3-orders",
        KeyConditionExpression="pk = :p AND sk > :s",
        ExpressionAttributeValues={":p": {"S": "u#1"}, ":s": {"N": "8"}},
    )
    check([i["sk"]["N"] for i in q["Items"]] == ["9", "10", "11"], "Query orders numbers by value")
    # The table's changes, through DynamoDB Streams' own client.
    streams = boto3.client(
        "dynamodbstreams",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="secret",
        config=Config(retries={"max_attempts": 1, "mode": "standard"}),
    )
    arn = db.describe_table(TableName="boto3-orders")["Table"]["LatestStreamArn"]
    listed = streams.list_streams(TableName="boto3-orders")["Streams"]
    check([x["StreamArn"] for x in listed] == [arn], "ListStreams names the table's stream")
    events = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        it = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        events += streams.get_records(ShardIterator=it)["Records"]
    names = sorted(e["eventName"] for e in events)
    check(names.count("INSERT") == 11 and names.count("MODIFY") == 1, f"stream records: {len(events)}")
    modify = next(e for e in events if e["eventName"] == "MODIFY")["dynamodb"]
    check(
        "body" in modify["OldImage"] and modify["NewImage"]["name"]["S"] == "first",
        "a MODIFY carries the old and the new image",
    )
    missing = error_of(lambda: db.describe_table(TableName="no-such-table"))
    check(
        missing and missing["Error"]["Code"] == "ResourceNotFoundException",
        "a missing table is ResourceNotFoundException",
    )

    # A provisioned table of one write unit: the second write in the same instant is throttled,
    # and says why.
    db.create_table(
        TableName="boto3-small",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
    )
    throttled = None
    for i in range(20):
        throttled = error_of(
            lambda: db.put_item(TableName="boto3-small", Item={"pk": {"S": f"k{i}"}})
        )
        if throttled:
            break
    check(
        throttled and throttled["Error"]["Code"] == "ProvisionedThroughputExceededException",
        "past its capacity a provisioned table throttles",
    )
    reasons = throttled.get("ThrottlingReasons", [])
    check(
        reasons and reasons[0]["reason"] == "TableWriteProvisionedThroughputExceeded"
        and reasons[0]["resource"].endswith(":table/boto3-small"),
        f"ThrottlingReasons: {reasons}",
    )
    db.delete_table(TableName="boto3-orders")
    db.delete_table(TableName="boto3-small")
    check(db.list_tables()["TableNames"] == [], "DeleteTable")
    print("boto3: all checks passed")


if __name__ == "__main__":
    main(sys.argv[1])
