"""What the many-hosts test asks from inside a network namespace, where only the hosts' own
addresses are reachable: an endpoint's stream and bucket made ready (boto3), and Prometheus asked
a query (its HTTP API).

    python3 fleet.py setup ENDPOINT_URL STREAM BUCKET
    python3 fleet.py query PROMETHEUS_URL EXPR
"""

import json
import sys
import time
import urllib.parse
import urllib.request


def setup(url, stream, bucket):
    import boto3

    kw = dict(endpoint_url=url, region_name="us-east-1",
              aws_access_key_id="latlab", aws_secret_access_key="latlab")
    kinesis = boto3.client("kinesis", **kw)
    # The endpoint may still be starting: a few tries, a bounded wait.
    for attempt in range(50):
        try:
            kinesis.create_stream(StreamName=stream, ShardCount=1)
            break
        except Exception as e:  # connection refused while it starts
            if attempt == 49:
                sys.exit(f"the endpoint at {url} did not answer: {e}")
            time.sleep(0.2)
    for _ in range(100):
        d = kinesis.describe_stream_summary(StreamName=stream)
        if d["StreamDescriptionSummary"]["StreamStatus"] == "ACTIVE":
            break
        time.sleep(0.1)
    else:
        sys.exit(f"stream {stream} did not become ACTIVE")
    s3 = boto3.client("s3", **kw)
    s3.create_bucket(Bucket=bucket)
    print(f"ready: stream {stream}, bucket {bucket}")


def query(url, expr):
    q = urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        sys.exit(f"query failed: {body}")
    print(json.dumps(body["data"]["result"]))


if __name__ == "__main__":
    if sys.argv[1:2] == ["setup"] and len(sys.argv) == 5:
        setup(*sys.argv[2:])
    elif sys.argv[1:2] == ["query"] and len(sys.argv) == 4:
        query(*sys.argv[2:])
    else:
        sys.exit(__doc__)
