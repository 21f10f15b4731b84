"""Local stand-ins for AWS: a moto server in this process, with the queue (and its
dead-letter queue), the transcripts bucket and the redrive policy the stack creates."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from agent_memory.adapters.aws import client

QUEUE_NAME = "agent-memory-extraction"
DLQ_NAME = "agent-memory-extraction-dlq"
BUCKET = "agent-memory-transcripts"


@dataclass
class LocalAws:
    server: Any
    endpoint_url: str
    queue_url: str
    dlq_url: str
    bucket: str

    def stop(self) -> None:
        self.server.stop()


def start_local_aws(
    *, region: str, max_receive_count: int, visibility_timeout_s: int = 2, name_suffix: str = ""
) -> LocalAws:
    """`name_suffix` keeps two stand-ins in one process apart: moto's servers share one backend."""
    from moto.server import ThreadedMotoServer

    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
    import logging

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto's request log is noise here
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    wsgi = server._server  # moto exposes no public accessor for an ephemeral port
    assert wsgi is not None
    host, port = wsgi.server_address[:2]
    endpoint = f"http://{host!s}:{port}"
    sqs = client("sqs", endpoint, region)
    dlq_url = sqs.create_queue(QueueName=DLQ_NAME + name_suffix)["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    queue_url = sqs.create_queue(
        QueueName=QUEUE_NAME + name_suffix,
        Attributes={
            "VisibilityTimeout": str(visibility_timeout_s),
            "RedrivePolicy": json.dumps(
                {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(max_receive_count)}
            ),
        },
    )["QueueUrl"]
    bucket = BUCKET + name_suffix
    client("s3", endpoint, region).create_bucket(Bucket=bucket)
    return LocalAws(server, endpoint, queue_url, dlq_url, bucket)
