"""boto3 adapters for SQS and S3. Locally the same code talks to moto (endpoint_url)."""

from __future__ import annotations

import json
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from agent_memory.ports.messaging import ObjectMissing, ObjectTooLarge

_CONFIG = Config(retries={"max_attempts": 3, "mode": "standard"}, connect_timeout=2, read_timeout=10)


def client(service: str, endpoint_url: str | None, region: str) -> Any:
    # the service name is a runtime value, which boto3-stubs cannot overload on
    return boto3.client(service, endpoint_url=endpoint_url, region_name=region, config=_CONFIG)  # type: ignore[call-overload]


class SqsQueue:
    def __init__(self, queue_url: str, *, endpoint_url: str | None, region: str) -> None:
        self.queue_url = queue_url
        self.sqs = client("sqs", endpoint_url, region)

    def send(self, body: dict[str, Any], *, dedupe_id: str | None = None) -> str:
        """Send one message; its tenant (`tenant_id` in the body) is its message group. On a standard
        queue that makes it an SQS fair queue: a tenant with a backlog (many large closes) no longer
        delays the others' messages, which SQS delivers first while that tenant holds more than its
        share of the messages in flight. Order and delivery stay as on any standard queue."""
        extra: dict[str, Any] = {}
        if body.get("tenant_id"):
            extra["MessageGroupId"] = str(body["tenant_id"])
        resp = self.sqs.send_message(QueueUrl=self.queue_url, MessageBody=json.dumps(body), **extra)
        return str(resp["MessageId"])


class S3ObjectStore:
    def __init__(self, bucket: str, *, endpoint_url: str | None, region: str) -> None:
        self.bucket = bucket
        self.s3 = client("s3", endpoint_url, region)

    def put_json(self, key: str, body: Any) -> None:
        self.s3.put_object(
            Bucket=self.bucket,
            Key=key,
            Body=json.dumps(body).encode(),
            ContentType="application/json",
            ServerSideEncryption="AES256",
        )

    def get_json(self, key: str, *, max_bytes: int) -> Any:
        try:
            head = self.s3.head_object(Bucket=self.bucket, Key=key)
        except ClientError as err:
            raise ObjectMissing(key) from err
        if head["ContentLength"] > max_bytes:
            raise ObjectTooLarge(f"{head['ContentLength']} bytes > {max_bytes}")
        obj = self.s3.get_object(Bucket=self.bucket, Key=key, Range=f"bytes=0-{max_bytes - 1}")
        return json.loads(obj["Body"].read())

    def _keys(self, prefix: str) -> list[str]:
        keys: list[str] = []
        paginator = self.s3.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
            keys += [o["Key"] for o in page.get("Contents", [])]
        return keys

    def delete_prefix(self, prefix: str) -> int:
        keys = self._keys(prefix)
        for i in range(0, len(keys), 1000):
            self.s3.delete_objects(
                Bucket=self.bucket, Delete={"Objects": [{"Key": k} for k in keys[i : i + 1000]]}
            )
        return len(keys)

    def count_prefix(self, prefix: str) -> int:
        return len(self._keys(prefix))

    def delete(self, key: str) -> None:
        self.s3.delete_object(Bucket=self.bucket, Key=key)
