"""Polls the extraction queue like Lambda's SQS event source mapping: receive a
batch, build the SQS event, call the `extract` handler, delete what succeeded.
And runs a scheduled function (the outbox relay) every few seconds, as EventBridge would."""

from __future__ import annotations

import threading
import uuid
from typing import Any

from agent_memory.adapters.aws import client
from agent_memory.domain.records import utcnow
from agent_memory.functions_spec import by_name, load_handler_module
from agent_memory.local.lambda_context import LocalLambdaContext
from agent_memory.observability import logger


def sqs_event(messages: list[dict[str, Any]], queue_arn: str, region: str) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
                "messageAttributes": {},
                "md5OfBody": m.get("MD5OfBody", ""),
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }
            for m in messages
        ]
    }


class QueuePoller:
    def __init__(
        self, queue_url: str, *, endpoint_url: str | None, region: str, batch_size: int = 10
    ) -> None:
        self.queue_url = queue_url
        self.region = region
        self.batch_size = batch_size
        self.sqs = client("sqs", endpoint_url, region)
        self.queue_arn = self.sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def poll_once(self, wait_seconds: int = 0) -> int:
        """Receive and process one batch; returns how many messages were received."""
        resp = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=self.batch_size,
            WaitTimeSeconds=wait_seconds,
            AttributeNames=["All"],
        )
        messages = resp.get("Messages", [])
        if not messages:
            return 0
        handler = load_handler_module(by_name("extract")).lambda_handler
        try:
            result = handler(
                sqs_event(messages, self.queue_arn, self.region), LocalLambdaContext(function_name="extract")
            )
            failed = {f["itemIdentifier"] for f in (result or {}).get("batchItemFailures", [])}
        except Exception as exc:  # as in Lambda: a raising handler fails the whole batch
            logger.warning(
                "extract batch failed", extra={"error": type(exc).__name__, "messages": len(messages)}
            )
            failed = {m["MessageId"] for m in messages}
        for m in messages:
            if m["MessageId"] not in failed:
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])
        return len(messages)

    def drain(self, max_rounds: int = 50) -> None:
        """Process until the queue looks empty (tests and `memory invoke`)."""
        for _ in range(max_rounds):
            if self.poll_once() == 0:
                return

    def start(self) -> None:
        def run() -> None:
            while not self._stop.is_set():
                try:
                    self.poll_once(wait_seconds=1)
                except Exception as exc:  # keep polling; the message will be redelivered
                    logger.warning("queue poll failed", extra={"error": type(exc).__name__})
                    self._stop.wait(1.0)

        self._thread = threading.Thread(target=run, name="memory-extract-poller", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)


def scheduled_event(function_name: str, region: str) -> dict[str, Any]:
    """An EventBridge scheduled event, as the stack's rule sends it."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": "000000000000",
        "time": utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": region,
        "resources": [f"arn:aws:events:{region}:000000000000:rule/agent-memory-{function_name}"],
        "detail": {},
    }


class ScheduledFunction:
    """Invokes a `schedule` function's handler every `interval_s` in a background thread (locally
    the outbox relay runs every few seconds, where the stack runs it every minute)."""

    def __init__(self, function_name: str, *, interval_s: float, region: str) -> None:
        self.spec = by_name(function_name)
        if self.spec.trigger != "schedule":
            raise ValueError(f"{function_name} is not a scheduled function")
        self.interval_s = interval_s
        self.region = region
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> Any:
        handler = load_handler_module(self.spec).lambda_handler
        return handler(
            scheduled_event(self.spec.name, self.region), LocalLambdaContext(function_name=self.spec.name)
        )

    def start(self) -> None:
        def run() -> None:
            while not self._stop.wait(self.interval_s):
                try:
                    self.run_once()
                except Exception as exc:  # as with a failed scheduled run: the next one retries
                    logger.warning(
                        "scheduled run failed",
                        extra={"function": self.spec.name, "error": type(exc).__name__},
                    )

        self._thread = threading.Thread(target=run, name=f"memory-{self.spec.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=10)
