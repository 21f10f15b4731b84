"""Session close through the local HTTP front with the poller running: no session is lost to
the race between the close's commit and the worker, nor to a queue that is down."""

from __future__ import annotations

import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import boto3
import pytest

from agent_memory.domain.records import utcnow
from agent_memory.local.worker import QueuePoller

pytestmark = pytest.mark.e2e

TENANT = "sess-outbox"


@pytest.fixture(scope="module")
def extraction_queue(local_aws: Any) -> str:
    """A queue of this module's own, delivering at once (visibility 0) as the moto default does."""
    sqs = boto3.client("sqs", endpoint_url=local_aws.endpoint_url, region_name="us-east-1")
    dlq_arn = sqs.get_queue_attributes(QueueUrl=local_aws.dlq_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    return sqs.create_queue(
        QueueName=f"outbox-e2e-{uuid.uuid4().hex[:8]}",
        Attributes={
            "VisibilityTimeout": "0",
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "3"}),
        },
    )["QueueUrl"]


@pytest.fixture(scope="module")
def container(serve_container: Any, extraction_queue: str) -> Any:
    with serve_container(extraction_queue_url=extraction_queue) as c:
        yield c


@pytest.fixture(scope="module")
def token(api: Any) -> str:
    return api.token(TENANT, "agent-1", ["agent"])


@pytest.fixture
def poller(local_aws: Any, extraction_queue: str) -> QueuePoller:
    return QueuePoller(extraction_queue, endpoint_url=local_aws.endpoint_url, region="us-east-1")


def close(api: Any, token: str, session_id: str, subject: str) -> Any:
    body = {
        "subject_id": subject,
        "channel": "chat",
        "occurred_at": "2026-10-02T15:00:00Z",
        "turns": [
            {"speaker": "customer", "text": "I prefer email communication."},
            {"speaker": "agent", "text": "I'll send the renewal quote by Friday."},
        ],
    }
    return api.post(f"/v1/sessions/{session_id}/close", body, token=token)


def wait_for_statuses(api: Any, token: str, session_ids: list[str], *, rounds: int = 600) -> dict[str, str]:
    """Each session's status once none is queued or processing, or after `rounds` looks."""
    statuses: dict[str, str] = {}
    for _ in range(rounds):
        statuses = {sid: api.get(f"/v1/sessions/{sid}", token=token).body["status"] for sid in session_ids}
        if not {"queued", "processing"} & set(statuses.values()):
            break
        time.sleep(0.1)
    return statuses


def test_a_close_whose_queue_send_fails_is_202_and_the_sweep_delivers_it(
    api, token, container, poller, monkeypatch
):
    # Given a queue that cannot be reached
    class Down:
        def send(self, body: dict[str, Any], *, dedupe_id: str | None = None) -> str:
            raise ConnectionError("queue endpoint unreachable")

    real = container.outbox.queue
    monkeypatch.setattr(container.outbox, "queue", Down())
    # When a session is closed through the API
    reply = close(api, token, "sess-ob-down", "CUST-OB-DOWN")
    # Then it is accepted and queued, and stays queued while nothing is sent
    assert reply.status == 202 and reply.body == {"session_id": "sess-ob-down", "status": "queued"}
    poller.drain()
    assert api.get("/v1/sessions/sess-ob-down", token=token).body["status"] == "queued"
    # And once the queue is back, the sweep (past the relay age) sends it and it is processed
    monkeypatch.setattr(container.outbox, "queue", real)
    monkeypatch.setattr(container.outbox, "clock", lambda: utcnow() + timedelta(minutes=1))
    assert container.outbox.sweep().relayed >= 1
    poller.drain()
    assert api.get("/v1/sessions/sess-ob-down", token=token).body["status"] == "processed"


def test_sessions_closed_in_parallel_while_the_worker_polls_are_all_processed(api, token, poller):
    # Given the worker polling the queue, as under `memory serve`
    session_ids = [f"sess-ob-par-{i}" for i in range(20)]
    poller.start()
    try:
        # When 20 sessions are closed from four threads at once
        with ThreadPoolExecutor(max_workers=4) as pool:
            replies = list(
                pool.map(lambda sid: close(api, token, sid, f"CUST-{sid.rsplit('-', 1)[1]}"), session_ids)
            )
        assert [r.status for r in replies] == [202] * len(session_ids)
        statuses = wait_for_statuses(api, token, session_ids)
    finally:
        poller.stop()
    # Then every one of them was processed: none left queued by a dropped message
    assert statuses == dict.fromkeys(session_ids, "processed")
