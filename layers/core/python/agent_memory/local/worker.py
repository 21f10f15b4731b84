"""Polls the extraction queue like Lambda's SQS event source mapping (receive, build the SQS event,
call the `extract` handler, delete what succeeded), taking the tenants in turn.
And runs a scheduled function (the outbox relay) every few seconds, as EventBridge would."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Any

from agent_memory.adapters.aws import client
from agent_memory.domain.records import utcnow
from agent_memory.functions_spec import EXTRACTION_VISIBILITY_TIMEOUT_S, by_name, load_handler_module
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
    """Extraction, fair across tenants: every message waiting is received and held (invisible to
    others, its lease renewed while it waits), and one message at a time is handed to the `extract`
    handler, tenants taking turns, round-robin. One tenant's backlog of large closes delays another
    tenant's session by at most one extraction per tenant ahead of it, never by the whole backlog.
    A message that fails goes back to the queue after the queue's visibility timeout, as under
    Lambda; `stop` hands back what is held."""

    def __init__(
        self,
        queue_url: str,
        *,
        endpoint_url: str | None,
        region: str,
        batch_size: int = 10,
        max_held: int = 200,
        hold_s: int = EXTRACTION_VISIBILITY_TIMEOUT_S,
    ) -> None:
        self.queue_url = queue_url
        self.region = region
        self.batch_size = batch_size
        self.max_held = max_held
        self.hold_s = hold_s
        self.sqs = client("sqs", endpoint_url, region)
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=queue_url, AttributeNames=["QueueArn", "VisibilityTimeout"]
        )["Attributes"]
        self.queue_arn = attributes["QueueArn"]
        self.visibility_timeout_s = int(attributes.get("VisibilityTimeout", 30))
        self._held: dict[str, deque[_Held]] = {}  # per tenant, in arrival order
        self._turns: deque[str] = deque()  # tenants with held messages, next turn first
        self._lock = threading.Lock()  # `stop` may run on another thread than the polling one
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def poll_once(self, wait_seconds: int = 0) -> int:
        """Receive what is waiting, then extract one message of the tenant whose turn it is;
        returns how many messages were handled (0: nothing waiting)."""
        with self._lock:
            self._receive(wait_seconds if not self._turns else 0)
            self._renew_leases()
            if not self._turns:
                return 0
            tenant = self._turns.popleft()
            queue = self._held[tenant]
            held = queue.popleft()
            if queue:
                self._turns.append(tenant)  # its next message waits for every other tenant's turn
            else:
                del self._held[tenant]
        self._process(held.message)
        return 1

    def _receive(self, wait_seconds: int) -> None:
        while sum(len(q) for q in self._held.values()) < self.max_held:
            resp = self.sqs.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=self.batch_size,
                WaitTimeSeconds=wait_seconds,
                VisibilityTimeout=self.hold_s,
                AttributeNames=["All"],
            )
            messages = resp.get("Messages", [])
            for m in messages:
                tenant = _tenant_of(m)
                if tenant not in self._held:
                    self._held[tenant] = deque()
                    self._turns.append(tenant)
                self._held[tenant].append(_Held(m, time.monotonic()))
            if len(messages) < self.batch_size:
                return
            wait_seconds = 0

    def _renew_leases(self) -> None:
        """Held messages stay invisible while they wait their turn: a lease half gone is renewed."""
        now = time.monotonic()
        for queue in self._held.values():
            for held in queue:
                if now - held.leased_at > self.hold_s / 2:
                    self._set_visibility(held.message, self.hold_s)
                    held.leased_at = now

    def _process(self, message: dict[str, Any]) -> None:
        handler = load_handler_module(by_name("extract")).lambda_handler
        try:
            result = handler(
                sqs_event([message], self.queue_arn, self.region), LocalLambdaContext(function_name="extract")
            )
            failed = bool((result or {}).get("batchItemFailures"))
        except Exception as exc:  # as in Lambda: a raising handler fails the whole batch
            logger.warning("extract batch failed", extra={"error": type(exc).__name__, "messages": 1})
            failed = True
        if failed:  # back after the queue's own visibility timeout, as a failed Lambda batch
            self._set_visibility(message, self.visibility_timeout_s)
        else:
            self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])

    def _set_visibility(self, message: dict[str, Any], seconds: int) -> None:
        try:
            self.sqs.change_message_visibility(
                QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=seconds
            )
        except Exception as exc:  # the message is redelivered when its lease runs out anyway
            logger.warning("message visibility not changed", extra={"error": type(exc).__name__})

    def release(self) -> None:
        """Hand every held message back to the queue at once (another poller takes it)."""
        with self._lock:
            held = [h for q in self._held.values() for h in q]
            self._held.clear()
            self._turns.clear()
        for h in held:
            self._set_visibility(h.message, 0)

    def drain(self, max_rounds: int = 500) -> None:
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
        self.release()


@dataclass
class _Held:
    message: dict[str, Any]
    leased_at: float


def _tenant_of(message: dict[str, Any]) -> str:
    """The message's tenant: its message group (set by the sender), else the body's tenant_id."""
    group = (message.get("Attributes") or {}).get("MessageGroupId")
    if group:
        return str(group)
    try:
        return str(json.loads(message.get("Body") or "{}").get("tenant_id") or "")
    except (ValueError, AttributeError):
        return ""


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
