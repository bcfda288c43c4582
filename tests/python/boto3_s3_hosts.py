"""A second client for the emulator's S3 by name: boto3 addressing buckets in the host
(virtual-hosted style), over TLS, as it addresses AWS.

Usage: python3 boto3_s3_hosts.py PORT CA_PEM

The emulator serves TLS on 127.0.0.1:PORT with a certificate for `s3.us-east-1.amazonaws.com` and
`*.s3.us-east-1.amazonaws.com` signed by CA_PEM. This process resolves every `*.amazonaws.com`
name to 127.0.0.1 (as a resolver of the test's own would) and logs each name it was asked; no
other name is resolved. Prints one line per check and exits non-zero on the first failure.
"""
import socket
import sys

import boto3
from botocore.config import Config

ASKED = []
_getaddrinfo = socket.getaddrinfo


def loopback(host, *args, **kwargs):
    if isinstance(host, bytes):
        host = host.decode()
    if host.endswith(".amazonaws.com"):
        ASKED.append(host)
        return _getaddrinfo("127.0.0.1", *args, **kwargs)
    raise socket.gaierror(f"the test resolves only *.amazonaws.com, not {host}")


socket.getaddrinfo = loopback


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)
    print(f"ok: {what}")


def main(port, ca):
    s3 = boto3.client(
        "s3",
        region_name="us-east-1",
        endpoint_url=f"https://s3.us-east-1.amazonaws.com:{port}",
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="secret",
        verify=ca,
        config=Config(s3={"addressing_style": "virtual"}, retries={"max_attempts": 1}),
    )
    bucket = "boto3-hosted"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="dir/key.txt", Body=b"by name")
    got = s3.get_object(Bucket=bucket, Key="dir/key.txt")["Body"].read()
    check(got == b"by name", "PUT then GET with the bucket in the host")
    listed = s3.list_objects_v2(Bucket=bucket)
    check([o["Key"] for o in listed.get("Contents", [])] == ["dir/key.txt"], "ListObjectsV2")
    head = s3.head_object(Bucket=bucket, Key="dir/key.txt")
    check(head["ContentLength"] == 7, "HeadObject")
    s3.delete_object(Bucket=bucket, Key="dir/key.txt")
    s3.delete_bucket(Bucket=bucket)
    check(f"{bucket}.s3.us-east-1.amazonaws.com" in ASKED, f"resolved {sorted(set(ASKED))}")
    print("names: " + " ".join(sorted(set(ASKED))))


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
