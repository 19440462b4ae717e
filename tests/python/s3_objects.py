"""Lists and reads back, with boto3 (a client none of us wrote), every object of an S3 bucket
under a prefix, and prints ONE JSON array, objects in key order:

    [{"key": "a/b.mcap", "size": 1234, "sha256": "<hex>", "e_tag": "<md5 hex>[-N]",
      "metadata": {"name": "value"}}]

"sha256" is the digest of the object's bytes as a GET returns them (read in a streaming
fashion), "e_tag" the object's ETag without its quotes, "metadata" its user metadata (keys
without the x-amz-meta- prefix, as boto3 gives them). Addressing is path-style, the region
us-east-1. With DOWNLOAD_DIR, each object's bytes are also written to DOWNLOAD_DIR/<the
key's last segment>, or with LAYOUT "tree" to DOWNLOAD_DIR/<the key less PREFIX>, folders
made. Usage: s3_objects.py ENDPOINT ACCESS_KEY SECRET_KEY BUCKET PREFIX [DOWNLOAD_DIR
[LAYOUT]]
"""

import hashlib
import json
import os
import sys

import boto3
from botocore.config import Config


def main(
    endpoint: str,
    access_key: str,
    secret_key: str,
    bucket: str,
    prefix: str,
    download_dir: str | None = None,
    layout: str = "flat",
) -> None:
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=access_key,
        aws_secret_access_key=secret_key,
        region_name="us-east-1",
        config=Config(
            s3={"addressing_style": "path"},
            connect_timeout=5,
            read_timeout=20,
            retries={"mode": "standard", "max_attempts": 2},
        ),
    )
    objects = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for listed in page.get("Contents", []):
            response = s3.get_object(Bucket=bucket, Key=listed["Key"])
            digest = hashlib.sha256()
            copy = None
            if download_dir is not None:
                if layout == "tree":
                    relative = listed["Key"][len(prefix) :].lstrip("/")
                else:
                    relative = listed["Key"].rsplit("/", 1)[-1]
                target = os.path.join(download_dir, relative)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                copy = open(target, "wb")
            for chunk in response["Body"].iter_chunks(1 << 20):
                digest.update(chunk)
                if copy is not None:
                    copy.write(chunk)
            if copy is not None:
                copy.close()
            objects.append(
                {
                    "key": listed["Key"],
                    "size": listed["Size"],
                    "sha256": digest.hexdigest(),
                    "e_tag": response["ETag"].strip('"'),
                    "metadata": response.get("Metadata", {}),
                }
            )
    print(json.dumps(objects))


if __name__ == "__main__":
    main(*sys.argv[1:8])
