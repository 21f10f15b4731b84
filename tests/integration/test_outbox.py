"""The session-close outbox: the extraction message is recorded with the session and sent after
the commit; the worker never drops a message whose session it cannot see yet; the sweep sends
what was left pending and queues again the sessions that made no progress."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from datetime import timedelta
from typing import Any

import boto3
import pytest

from agent_memory.domain.enums import Role
from agent_memory.domain.records import Principal, utcnow
from agent_memory.local.worker import QueuePoller, ScheduledFunction
from agent_memory.services.extraction import SessionNotVisible
from agent_memory.services.outbox import extraction_key
from agent_memory.services.sessions import CloseSessionRequest

pytestmark = pytest.mark.integration

TURNS = [{"speaker": "customer", "text": "I prefer email communication."}]


@pytest.fixture(scope="module")
def extraction_queue(local_aws: Any) -> str:
    """A queue of this module's own (the session's shared queue holds other modules' messages)."""
    sqs = boto3.client("sqs", endpoint_url=local_aws.endpoint_url, region_name="us-east-1")
    dlq_arn = sqs.get_queue_attributes(QueueUrl=local_aws.dlq_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    return sqs.create_queue(
        QueueName=f"outbox-it-{uuid.uuid4().hex[:8]}",
        Attributes={
            "VisibilityTimeout": "0",
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "3"}),
        },
    )["QueueUrl"]


@pytest.fixture(scope="module")
def container(serve_container: Any, extraction_queue: str) -> Any:
    with serve_container(extraction_queue_url=extraction_queue) as c:
        yield c


@pytest.fixture
def poller(local_aws: Any, extraction_queue: str) -> QueuePoller:
    return QueuePoller(extraction_queue, endpoint_url=local_aws.endpoint_url, region="us-east-1")


@pytest.fixture
def tenant() -> str:
    """A tenant of each test's own: nothing else in it, no audit chain started."""
    return f"ob-{uuid.uuid4().hex[:8]}"


class RecordingQueue:
    """The real queue, counting what was sent for each session."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: Counter[str] = Counter()

    def send(self, body: dict[str, Any], *, dedupe_id: str | None = None) -> str:
        message_id = str(self.inner.send(body, dedupe_id=dedupe_id))
        self.sent[body["session_id"]] += 1
        return message_id


class FailingQueue:
    """SQS unreachable: every send raises."""

    def __init__(self) -> None:
        self.calls = 0

    def send(self, body: dict[str, Any], *, dedupe_id: str | None = None) -> str:
        self.calls += 1
        raise ConnectionError("queue endpoint unreachable")


class LosingQueue:
    """A send that is acknowledged and then lost (the message never reaches a worker)."""

    def send(self, body: dict[str, Any], *, dedupe_id: str | None = None) -> str:
        return "lost"


def agent(tenant: str) -> Principal:
    return Principal(sub="agent-1", tenant_id=tenant, roles=frozenset({Role.AGENT}))


def close(container: Any, tenant: str, session_id: str) -> dict[str, Any]:
    request = CloseSessionRequest.model_validate(
        {"subject_id": "CUST-OB", "occurred_at": "2026-10-02T15:00:00Z", "turns": TURNS}
    )
    return container.sessions.close(agent(tenant), session_id, request)


def status(container: Any, tenant: str, session_id: str) -> dict[str, Any]:
    return container.sessions.status(agent(tenant), session_id)


def later(seconds: float) -> Any:
    """A clock that many seconds ahead of now (the sweep's ages, without waiting for them)."""
    return lambda: utcnow() + timedelta(seconds=seconds)


def test_a_message_delivered_before_the_close_commits_still_gets_its_session_processed(
    container, tenant, poller, monkeypatch
):
    # Given a queue that hands each message to a worker the moment it is sent (SQS can be that
    # fast); a worker that asks for redelivery leaves the message in the real queue
    outcomes: list[str] = []
    real = container.outbox.queue

    class DeliversAtOnce:
        def send(self, body: dict[str, Any], *, dedupe_id: str | None = None) -> str:
            try:
                outcomes.append(container.extraction.process(body, receive_count=1)["status"])
            except SessionNotVisible:
                outcomes.append("redelivery")
                return str(real.send(body, dedupe_id=dedupe_id))
            return "delivered"

    monkeypatch.setattr(container.outbox, "queue", DeliversAtOnce())
    # When a session is closed and whatever is left in the queue is processed
    assert close(container, tenant, "s-fast")["status"] == "queued"
    poller.drain()
    # Then no delivery dropped it: it was processed
    assert "missing" not in outcomes
    assert status(container, tenant, "s-fast")["status"] == "processed"


def test_the_worker_asks_for_redelivery_while_the_session_row_is_not_visible(container, tenant):
    # Given a session whose row is inserted by a transaction that has not committed yet
    message = {"tenant_id": tenant, "session_id": "s-uncommitted"}
    key = f"transcripts/{tenant}/CUST-OB/s-uncommitted.json"
    container.objects.put_json(
        key,
        {
            "session_id": "s-uncommitted",
            "subject_id": "CUST-OB",
            "occurred_at": "2026-10-02T15:00:00+00:00",
            "turns": TURNS,
        },
    )
    with container.store.tenant(tenant) as s:
        s.insert_session(
            session_id="s-uncommitted",
            subject_id="CUST-OB",
            ticket_id=None,
            channel=None,
            occurred_at=utcnow(),
            transcript_hash="h",
            transcript_key=key,
            turns=1,
        )
        # When the worker receives its message meanwhile
        # Then it raises, so that SQS delivers the message again, instead of dropping it
        with pytest.raises(SessionNotVisible):
            container.extraction.process(message, receive_count=1)
        # And on the queue's last delivery it gives up without failing the batch (the sweep
        # queues the session again if it ever appears)
        last = container.extraction.process(message, receive_count=container.extraction.max_receive_count)
        assert last["status"] == "missing"
    # And once the row is committed, the redelivered message is processed
    assert container.extraction.process(message, receive_count=2)["status"] == "processed"


def test_the_close_records_its_message_in_the_outbox_and_sends_it_once_after_the_commit(
    container, tenant, poller, monkeypatch
):
    # Given the real queue, counted
    queue = RecordingQueue(container.outbox.queue)
    monkeypatch.setattr(container.outbox, "queue", queue)
    # When a session is closed
    assert close(container, tenant, "s-once")["status"] == "queued"
    # Then its message was sent once and is marked sent
    assert queue.sent == Counter({"s-once": 1})
    with container.store.tenant(tenant) as s:
        row = s.outbox_message("extract:s-once")
    assert row is not None and row["sent_at"] is not None and row["attempts"] == 1
    assert row["payload"] == {"tenant_id": tenant, "session_id": "s-once"}  # no subject, no content
    # And once it is processed, a sweep much later sends nothing more
    poller.drain()
    assert status(container, tenant, "s-once")["status"] == "processed"
    monkeypatch.setattr(container.outbox, "clock", later(3600))
    container.outbox.sweep()
    assert queue.sent == Counter({"s-once": 1})


def test_a_send_that_fails_after_the_commit_answers_queued_and_the_sweep_sends_it_later(
    container, tenant, poller, monkeypatch
):
    # Given a queue that cannot be reached
    down = FailingQueue()
    monkeypatch.setattr(container.outbox, "queue", down)
    # When a session is closed
    reply = close(container, tenant, "s-down")
    # Then the close is accepted all the same, its message pending
    assert reply == {"session_id": "s-down", "status": "queued"} and down.calls == 1
    with container.store.tenant(tenant) as s:
        pending = s.outbox_message("extract:s-down")
    assert pending is not None and pending["sent_at"] is None and pending["attempts"] == 1
    # And when the queue is back, a sweep right away leaves a message that young alone
    queue = RecordingQueue(container.queue)
    monkeypatch.setattr(container.outbox, "queue", queue)
    assert container.outbox.sweep().relayed == 0 and queue.sent["s-down"] == 0
    # But a sweep past the relay age sends it, and the session is processed
    monkeypatch.setattr(container.outbox, "clock", later(60))
    report = container.outbox.sweep()
    assert report.relayed >= 1 and queue.sent["s-down"] == 1
    poller.drain()
    assert status(container, tenant, "s-down")["status"] == "processed"


def test_closing_again_a_queued_session_whose_message_is_pending_sends_it(
    container, tenant, poller, monkeypatch
):
    # Given a session closed while the queue was down
    monkeypatch.setattr(container.outbox, "queue", FailingQueue())
    close(container, tenant, "s-again")
    # When the caller closes it again once the queue is back
    queue = RecordingQueue(container.queue)
    monkeypatch.setattr(container.outbox, "queue", queue)
    assert close(container, tenant, "s-again")["status"] == "queued"
    # Then the pending message is sent, once
    assert queue.sent == Counter({"s-again": 1})
    # And closing it a third time sends nothing more
    close(container, tenant, "s-again")
    assert queue.sent == Counter({"s-again": 1})
    poller.drain()
    assert status(container, tenant, "s-again")["status"] == "processed"


def test_a_session_stuck_queued_past_the_age_is_queued_again_and_processed(
    container, tenant, poller, monkeypatch
):
    # Given a session whose message was acknowledged by the queue and then lost
    monkeypatch.setattr(container.outbox, "queue", LosingQueue())
    close(container, tenant, "s-lost")
    queue = RecordingQueue(container.queue)
    monkeypatch.setattr(container.outbox, "queue", queue)
    # When the sweep runs before the stuck age, it leaves the session alone
    assert container.outbox.sweep().requeued == 0 and queue.sent["s-lost"] == 0
    # But past the age it queues the session again (its tenant is found though it has no
    # audit chain yet), once
    monkeypatch.setattr(container.outbox, "clock", later(container.outbox.stuck_after_s + 60))
    assert container.outbox.sweep().requeued == 1
    assert queue.sent == Counter({"s-lost": 1})
    # And the worker processes it
    poller.drain()
    assert status(container, tenant, "s-lost")["status"] == "processed"
    # And a processed session is never queued again
    assert container.outbox.sweep().requeued == 0


def test_a_session_left_processing_by_a_crashed_worker_is_queued_again_and_processed(
    container, tenant, poller, monkeypatch
):
    # Given a session whose worker died mid-extraction (status processing, message gone)
    monkeypatch.setattr(container.outbox, "queue", LosingQueue())
    close(container, tenant, "s-crashed")
    with container.store.tenant(tenant) as s:
        s.update_session("s-crashed", status="processing", attempts=1)
    monkeypatch.setattr(container.outbox, "queue", container.queue)
    # When the sweep runs past the stuck age
    monkeypatch.setattr(container.outbox, "clock", later(container.outbox.stuck_after_s + 60))
    assert container.outbox.sweep().requeued == 1
    # Then the session is queued again and processed
    assert status(container, tenant, "s-crashed")["status"] == "queued"
    poller.drain()
    assert status(container, tenant, "s-crashed")["status"] == "processed"


def test_a_session_that_never_makes_progress_is_failed_instead_of_queued_forever(
    container, tenant, monkeypatch
):
    # Given a session that has used every extraction attempt the sweep allows, still processing
    monkeypatch.setattr(container.outbox, "queue", LosingQueue())
    close(container, tenant, "s-hopeless")
    with container.store.tenant(tenant) as s:
        s.update_session("s-hopeless", status="processing", attempts=container.outbox.max_attempts)
    queue = RecordingQueue(container.queue)
    monkeypatch.setattr(container.outbox, "queue", queue)
    # When the sweep runs past the stuck age
    monkeypatch.setattr(container.outbox, "clock", later(container.outbox.stuck_after_s + 60))
    report = container.outbox.sweep()
    # Then the session is failed with a reason, and nothing is sent
    assert report.requeued == 0 and report.given_up == 1 and queue.sent["s-hopeless"] == 0
    view = status(container, tenant, "s-hopeless")
    assert view["status"] == "failed" and "no progress" in view["reason"]


def test_two_sweeps_at_once_send_a_pending_message_once(container, tenant, poller, monkeypatch):
    # Given a message left pending
    monkeypatch.setattr(container.outbox, "queue", FailingQueue())
    close(container, tenant, "s-twice")
    monkeypatch.setattr(container.outbox, "clock", later(60))
    # And a queue during whose send a second sweep runs, on another connection
    inner_reports: list[Any] = []
    queue = RecordingQueue(container.queue)

    class SweepsAgainWhileSending:
        def send(self, body: dict[str, Any], *, dedupe_id: str | None = None) -> str:
            if not inner_reports:
                inner_reports.append(container.outbox.sweep())
            return queue.send(body, dedupe_id=dedupe_id)

    monkeypatch.setattr(container.outbox, "queue", SweepsAgainWhileSending())
    # When the first sweep sends it
    container.outbox.sweep()
    # Then the second skipped the message the first was sending, and it went out once
    assert inner_reports[0].relayed == 0
    assert queue.sent == Counter({"s-twice": 1})
    # And a third sweep after both finds nothing left to send
    monkeypatch.setattr(container.outbox, "queue", queue)
    container.outbox.sweep()
    assert queue.sent == Counter({"s-twice": 1})
    poller.drain()
    assert status(container, tenant, "s-twice")["status"] == "processed"


def test_a_message_delivered_twice_is_processed_once(container, tenant, poller, monkeypatch):
    # Given a closed session whose message the queue delivers twice (SQS is at least once)
    close(container, tenant, "s-dup")
    container.queue.send({"tenant_id": tenant, "session_id": "s-dup"})
    # When both deliveries are processed
    poller.drain()
    # Then the session was extracted once
    view = status(container, tenant, "s-dup")
    assert view["status"] == "processed" and view["attempts"] == 1
    with container.store.tenant(tenant) as s:
        events = s.audit_events(subject_id="CUST-OB", memory_id=None, since=None, after_seq=None, limit=100)
    created = [e for e in events if e.event_type == "memory_created"]
    assert len(created) == len(view["memory_ids"]) >= 1


def test_the_scheduled_sample_event_runs_the_sweep_through_its_handler(container, tenant, monkeypatch):
    from pathlib import Path

    from agent_memory.functions_spec import by_name, load_handler_module
    from agent_memory.local.lambda_context import LocalLambdaContext

    # Given a message left pending, old enough for the sweep
    monkeypatch.setattr(container.outbox, "queue", FailingQueue())
    close(container, tenant, "s-scheduled")
    queue = RecordingQueue(container.queue)
    monkeypatch.setattr(container.outbox, "queue", queue)
    monkeypatch.setattr(container.outbox, "clock", later(60))
    event = json.loads(
        (Path(__file__).resolve().parents[2] / "events/outbox_relay/every_minute.json").read_text()
    )
    # When the scheduled event runs through the outbox_relay handler
    handler = load_handler_module(by_name("outbox_relay")).lambda_handler
    report = handler(event, LocalLambdaContext(function_name="outbox_relay"))
    # Then it sent the message and reports counts only
    assert queue.sent["s-scheduled"] == 1 and report["relayed"] >= 1
    assert set(report) == {"tenants", "relayed", "send_failures", "requeued", "given_up", "trimmed"}


def test_the_local_schedule_runs_the_relay_in_the_background(container, tenant, monkeypatch):
    # Given a message left pending, old enough for the sweep
    monkeypatch.setattr(container.outbox, "queue", FailingQueue())
    close(container, tenant, "s-background")
    queue = RecordingQueue(container.queue)
    monkeypatch.setattr(container.outbox, "queue", queue)
    monkeypatch.setattr(container.outbox, "clock", later(60))
    # When the outbox relay runs on its local schedule, as under `memory serve`
    relay = ScheduledFunction("outbox_relay", interval_s=0.05, region="us-east-1")
    relay.start()
    try:
        for _ in range(400):  # a bounded wait for the background run
            if queue.sent["s-background"]:
                break
            time.sleep(0.05)
    finally:
        relay.stop()
    # Then the message was sent, once
    assert queue.sent["s-background"] == 1


def _outbox_row(container: Any, tenant: str, session_id: str) -> Any:
    with container.store.tenant(tenant, subjects=None) as s:
        return s.outbox_message(extraction_key(session_id))


def test_delivered_messages_are_trimmed_after_their_retention_once_their_session_finished(
    container, tenant, poller, monkeypatch
):
    # Given a session closed and processed, so its message was delivered
    close(container, tenant, "s-trim")
    poller.drain()
    assert status(container, tenant, "s-trim")["status"] == "processed"
    assert _outbox_row(container, tenant, "s-trim")["sent_at"] is not None
    # When the sweep runs after the outbox retention has passed
    monkeypatch.setattr(container.outbox, "clock", later(container.outbox.retention_s + 60))
    report = container.outbox.sweep()
    # Then the delivered row is gone, and a repeated close of the session sends nothing again
    assert report.trimmed >= 1
    assert _outbox_row(container, tenant, "s-trim") is None
    recording = RecordingQueue(container.outbox.queue)
    monkeypatch.setattr(container.outbox, "queue", recording)
    assert close(container, tenant, "s-trim")["status"] == "processed"
    assert recording.sent["s-trim"] == 0


def test_a_delivered_message_is_kept_while_its_session_is_unfinished_or_within_retention(
    container, tenant, poller, monkeypatch
):
    # Given one message delivered and lost (its session stays queued), one delivered and processed
    monkeypatch.setattr(container.outbox, "queue", LosingQueue())
    close(container, tenant, "s-lost")
    monkeypatch.undo()
    close(container, tenant, "s-recent")
    poller.drain()
    # When the sweep runs within the retention, and again after it
    container.outbox.sweep()
    kept_within = _outbox_row(container, tenant, "s-recent")
    monkeypatch.setattr(container.outbox, "queue", LosingQueue())
    monkeypatch.setattr(container.outbox, "clock", later(container.outbox.retention_s + 60))
    container.outbox.sweep()
    # Then the processed session's row outlives the sweep within its retention, and the row of the
    # session still queued is never trimmed (a repeated close must not send it again)
    assert kept_within is not None
    assert _outbox_row(container, tenant, "s-lost") is not None
