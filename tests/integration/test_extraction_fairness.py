"""Extraction is fair across tenants: one tenant's backlog of large closes does not hold back another
tenant's one-turn session (the local worker takes tenants in turn; in AWS each message's tenant is
its SQS message group, which makes the standard queue a fair queue)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import boto3
import pytest

from agent_memory.domain.enums import Role
from agent_memory.domain.records import Principal
from agent_memory.local.worker import QueuePoller
from agent_memory.services.sessions import CloseSessionRequest

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def extraction_queue(local_aws: Any) -> str:
    """A queue of this module's own, so that only its sessions are in it."""
    sqs = boto3.client("sqs", endpoint_url=local_aws.endpoint_url, region_name="us-east-1")
    return sqs.create_queue(
        QueueName=f"fair-it-{uuid.uuid4().hex[:8]}", Attributes={"VisibilityTimeout": "0"}
    )["QueueUrl"]


@pytest.fixture(scope="module")
def container(serve_container: Any, extraction_queue: str) -> Any:
    with serve_container(extraction_queue_url=extraction_queue) as c:
        yield c


def _close(container: Any, tenant: str, session_id: str, turns: list[dict[str, str]]) -> None:
    agent = Principal(sub="agent-1", tenant_id=tenant, roles=frozenset({Role.AGENT}))
    request = CloseSessionRequest.model_validate(
        {"subject_id": "CUST-FAIR", "occurred_at": "2026-10-02T15:00:00Z", "turns": turns}
    )
    assert container.sessions.close(agent, session_id, request)["status"] == "queued"


def _processed(container: Any, tenant: str, session_ids: list[str]) -> set[str]:
    agent = Principal(sub="agent-1", tenant_id=tenant, roles=frozenset({Role.AGENT}))
    return {s for s in session_ids if container.sessions.status(agent, s)["status"] == "processed"}


def _large_turns(i: int) -> list[dict[str, str]]:
    return [
        {
            "speaker": "customer" if k % 2 == 0 else "agent",
            "text": f"Line {k} of call {i}: we discussed the rollout plan.",
        }
        for k in range(30)
    ]


def test_a_one_turn_session_is_extracted_before_another_tenants_backlog_of_large_closes_drains(
    container: Any, local_aws: Any, extraction_queue: str
) -> None:
    # Given tenant A's six large closes queued first, then tenant B's one-turn close
    big, small = f"fair-a-{uuid.uuid4().hex[:6]}", f"fair-b-{uuid.uuid4().hex[:6]}"
    large = [f"s-large-{i}" for i in range(6)]
    for i, session_id in enumerate(large):
        _close(container, big, session_id, _large_turns(i))
    _close(container, small, "s-small", [{"speaker": "customer", "text": "Please email me the invoice."}])
    poller = QueuePoller(extraction_queue, endpoint_url=local_aws.endpoint_url, region="us-east-1")
    # When the worker processes the queue, step by step
    large_done_when_small_done: int | None = None
    for _ in range(20):
        if poller.poll_once() == 0:
            break
        if large_done_when_small_done is None and _processed(container, small, ["s-small"]):
            large_done_when_small_done = len(_processed(container, big, large))
    # Then the small session was done while most of the large backlog still waited its turn
    assert large_done_when_small_done is not None, "the one-turn session was never processed"
    assert large_done_when_small_done <= 1, large_done_when_small_done
    # And the backlog drained all the same
    assert _processed(container, big, large) == set(large)


def test_each_extraction_message_carries_its_tenant_as_its_message_group(
    container: Any, local_aws: Any, extraction_queue: str
) -> None:
    # Given a session closed for a tenant, its message left in the queue
    tenant = f"fair-g-{uuid.uuid4().hex[:6]}"
    _close(container, tenant, "s-group", [{"speaker": "customer", "text": "Call me on Mondays."}])
    sqs = boto3.client("sqs", endpoint_url=local_aws.endpoint_url, region_name="us-east-1")
    # When the queue is read
    got = sqs.receive_message(
        QueueUrl=extraction_queue, MaxNumberOfMessages=10, AttributeNames=["All"], VisibilityTimeout=0
    )["Messages"]
    # Then the message's group is its tenant (SQS fair queues tell tenants apart by it)
    mine = [m for m in got if json.loads(m["Body"])["tenant_id"] == tenant]
    assert mine and all(m["Attributes"]["MessageGroupId"] == tenant for m in mine)
    QueuePoller(extraction_queue, endpoint_url=local_aws.endpoint_url, region="us-east-1").drain()
