"""Sensitive personal details (seed 001: "sensitive personal detail -> restricted / confirmation";
seed 002: "restricted retention for sensitive data"): a health or family statement is kept as a
restricted record held for confirmation, seen only with restricted clearance, kept at most the
policy's sensitive retention, and never dropped as small talk."""

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.local.worker import QueuePoller

pytestmark = pytest.mark.e2e
TENANT = "sensitive-wealth"
_subjects = itertools.count(1)


@pytest.fixture(scope="module")
def t(api):
    tokens = {
        "agent": api.token(TENANT, "agent-1", ["agent"]),  # internal clearance
        "restricted_agent": api.token(TENANT, "agent-2", ["agent"], clearance="restricted"),
        "reviewer": api.token(TENANT, "rev-1", ["reviewer"], clearance="restricted"),
        "internal_reviewer": api.token(TENANT, "rev-2", ["reviewer"]),
        "admin": api.token(TENANT, "admin-1", ["admin"]),
    }
    assert api.put("/v1/policy", {"profile": "wealth"}, token=tokens["admin"]).status == 200
    return tokens


@pytest.fixture(scope="module")
def poller(local_aws):
    return QueuePoller(local_aws.queue_url, endpoint_url=local_aws.endpoint_url, region="us-east-1")


def pending(api, token, subject):
    reply = api.get(f"/v1/subjects/{subject}/memories?status=pending_approval&limit=200", token=token)
    assert reply.status == 200, reply.body
    return reply.body["memories"]


def retention_days(api, t):
    return api.get("/v1/policy", token=t["admin"]).body["effective"]["sensitive_retention_days"]


@pytest.fixture(scope="module")
def divorce(api, t, poller):
    """A wealth session in which the client says their divorce is final."""
    subject = f"CLIENT-{next(_subjects)}"
    turns = [
        {"speaker": "agent", "text": "Anything changed since our last review?"},
        {"speaker": "customer", "text": "My divorce is final."},
        {"speaker": "customer", "text": "Please send the quarterly statements by email."},
    ]
    body = {
        "subject_id": subject,
        "channel": "meeting",
        "occurred_at": "2026-10-02T15:00:00Z",
        "turns": turns,
    }
    reply = api.post(f"/v1/sessions/sess-{subject}/close", body, token=t["agent"])
    assert reply.status == 202, reply.body
    poller.drain()
    return subject


def test_a_life_event_is_kept_as_a_restricted_fact_pending_confirmation(api, t, divorce):
    # Then an agent with restricted clearance sees it: a restricted fact held for confirmation
    held = [m for m in pending(api, t["restricted_agent"], divorce) if m["slot"] == "personal.family_status"]
    assert len(held) == 1
    fact = held[0]
    assert fact["type"] == "fact" and fact["sensitivity"] == "restricted"
    assert "sensitive_personal_detail" in fact["reasons"]


def test_an_internal_clearance_agent_does_not_see_it(api, t, divorce):
    # Given the held fact, which a restricted-clearance agent sees
    assert [m for m in pending(api, t["restricted_agent"], divorce) if m["slot"] == "personal.family_status"]
    # Then an internal-clearance agent listing the same subject does not
    assert not [m for m in pending(api, t["agent"], divorce) if m["slot"] == "personal.family_status"]


def test_its_retention_is_the_policys(api, t, divorce):
    fact = next(
        m for m in pending(api, t["restricted_agent"], divorce) if m["slot"] == "personal.family_status"
    )
    days = retention_days(api, t)
    assert days == 90
    kept = datetime.fromisoformat(fact["expires_at"]) - datetime.fromisoformat(fact["created_at"])
    assert kept <= timedelta(days=days)


def test_a_restricted_reviewer_sees_it_in_the_queue_and_an_internal_one_does_not(api, t, divorce):
    def queued(token):
        items = api.get("/v1/review?limit=200", token=token).body["items"]
        return [i for i in items if i["memory"]["subject_id"] == divorce]

    # (the session may also hold a commercial mention for review: a reviewer decides those too)
    assert "personal.family_status" in [i["memory"]["slot"] for i in queued(t["reviewer"])]
    assert [i for i in queued(t["internal_reviewer"]) if i["memory"]["slot"].startswith("personal.")] == []


def test_a_typed_health_statement_is_held_restricted_with_the_reason(api, t):
    # Given a typed write saying the client was diagnosed with an illness
    subject = f"CLIENT-{next(_subjects)}"
    body = {
        "subject_id": subject,
        "type": "fact",
        "category": "ACCOUNT_PROFILE",
        "slot": "account.client_note",
        "content": "The client was diagnosed with diabetes last spring.",
        "source": {"kind": "customer_claim"},
    }
    reply = api.post("/v1/memories", body, token=t["restricted_agent"])
    # Then it is held for confirmation, restricted, expiring within the policy's retention
    assert reply.status == 201, reply.body
    assert reply.body["decision"] == "pending_approval"
    assert reply.body["reasons"] == ["sensitive_personal_detail"]
    assert "sensitive personal detail" in reply.body["explanation"]
    memory = reply.body["memory"]
    assert memory["sensitivity"] == "restricted"
    limit = datetime.now(UTC) + timedelta(days=retention_days(api, t), minutes=5)
    assert datetime.fromisoformat(memory["expires_at"]) <= limit


def test_approving_it_keeps_the_short_retention(api, t):
    subject = f"CLIENT-{next(_subjects)}"
    body = {
        "subject_id": subject,
        "type": "fact",
        "category": "ACCOUNT_PROFILE",
        "slot": "account.client_note",
        "content": "We're expecting a baby in March.",
        "source": {"kind": "customer_claim"},
    }
    written = api.post("/v1/memories", body, token=t["restricted_agent"]).body
    assert written["decision"] == "pending_approval", written
    reply = api.post(
        f"/v1/memories/{written['memory']['id']}/approve", {"note": "confirmed"}, token=t["reviewer"]
    )
    assert reply.status == 200, reply.body
    memory = reply.body["memory"]
    assert memory["status"] == "active" and memory["sensitivity"] == "restricted"
    limit = datetime.now(UTC) + timedelta(days=retention_days(api, t), minutes=5)
    assert memory["expires_at"] is not None and datetime.fromisoformat(memory["expires_at"]) <= limit


def test_the_customers_own_confirmation_admits_it_restricted(api, t):
    # Given a sensitive detail the customer confirmed themselves
    body = {
        "subject_id": f"CLIENT-{next(_subjects)}",
        "type": "fact",
        "category": "ACCOUNT_PROFILE",
        "slot": "personal.family_status",
        "content": "My divorce is final.",
        "source": {"kind": "customer_confirmed"},
    }
    reply = api.post("/v1/memories", body, token=t["restricted_agent"])
    # Then it is admitted without a reviewer, still restricted and with the short retention
    assert reply.status == 201, reply.body
    assert reply.body["decision"] == "admitted"
    memory = reply.body["memory"]
    assert memory["sensitivity"] == "restricted"
    limit = datetime.now(UTC) + timedelta(days=retention_days(api, t), minutes=5)
    assert datetime.fromisoformat(memory["expires_at"]) <= limit
