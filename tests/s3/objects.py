"""A real S3 client (boto3) for tests/s3_real.rs: puts a directory tree into a bucket, or deletes
objects, on the S3-compatible server the test started.

    python objects.py put ENDPOINT BUCKET DIR      create BUCKET, upload every file under DIR
                                                   with its path relative to DIR as its key
    python objects.py delete ENDPOINT BUCKET KEY…  delete the objects
"""

import os
import sys

import boto3
from botocore.config import Config


def client(endpoint):
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="memscope-test",
        aws_secret_access_key="memscope-test-secret",
        config=Config(s3={"addressing_style": "path"}),
    )


def put(endpoint, bucket, root):
    s3 = client(endpoint)
    s3.create_bucket(Bucket=bucket)
    count = 0
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            key = os.path.relpath(path, root).replace(os.sep, "/")
            with open(path, "rb") as body:
                s3.put_object(Bucket=bucket, Key=key, Body=body.read())
            count += 1
    print(count)


def delete(endpoint, bucket, keys):
    s3 = client(endpoint)
    for key in keys:
        s3.delete_object(Bucket=bucket, Key=key)


if __name__ == "__main__":
    command, endpoint, bucket, *rest = sys.argv[1:]
    if command == "put":
        put(endpoint, bucket, rest[0])
    elif command == "delete":
        delete(endpoint, bucket, rest)
    else:
        sys.exit(f"unknown command {command}")
