"""Refusals and failed retrievals in the audit chain (seed 001's event list), through the HTTP API
and on the embedded database: who, which route, why, never content; identical ones bounded."""

from datetime import UTC, datetime, timedelta

import jwt
import pytest

from agent_memory.api.identity import issue_token
from agent_memory.domain.enums import EventType
from agent_memory.services.refusals import Refusal, RefusalLog

pytestmark = pytest.mark.e2e

TENANT = "refusal-co"
DENIED = EventType.AUTHORIZATION_DENIED.value


def events(container, tenant: str, event_type: str) -> list:
    with container.store.tenant(tenant, subjects=None) as s:
        found = s.audit_events(subject_id=None, memory_id=None, since=None, after_seq=None, limit=1000)
    return [e for e in found if e.event_type == event_type]


@pytest.fixture(scope="module")
def long_window(api):
    """The tenant writes identical refusals at most once an hour (no test depends on timing)."""
    admin = api.token(TENANT, "admin-1", ["admin"])
    reply = api.put(
        "/v1/policy", {"profile": "support", "overrides": {"refusal_audit_window_seconds": 3600}}, token=admin
    )
    assert reply.status == 200, reply.body
    return admin


def test_given_an_agent_when_it_reads_the_audit_log_then_the_403_is_in_its_tenants_chain_once(
    api, container, long_window
):
    agent = api.token(TENANT, "agent-7", ["agent"])
    # When it is refused twice in a row for the same reason
    first = api.get("/v1/audit", token=agent)
    second = api.get("/v1/audit", token=agent)
    # Then both are 403, and one event names who, which route template and why, and no content
    assert first.status == second.status == 403
    written = [e for e in events(container, TENANT, DENIED) if e.actor == "agent-7"]
    assert len(written) == 1
    event = written[0]
    assert event.payload == {"route": "GET /v1/audit", "status": 403, "code": "forbidden", "repeated": 0}
    assert event.reason and "auditor" in event.reason and event.subject_id is None and event.memory_id is None
    # And the second refusal is counted, to be reported by the key's next event
    with container.db.tenant_transaction(TENANT, subjects=None) as conn:
        row = conn.execute(
            "SELECT suppressed FROM audit_denial_windows WHERE actor = 'agent-7' AND route = 'GET /v1/audit'"
        ).fetchone()
    assert row["suppressed"] == 1


def test_given_a_refused_write_then_the_event_names_the_route_template_not_the_ids(
    api, container, long_window
):
    # A reviewer may not close a commitment: the path holds an id, the event its template only
    reviewer = api.token(TENANT, "rev-9", ["reviewer"])
    reply = api.post("/v1/memories/mem_0000000000001234abcd/close", {"outcome": "done"}, token=reviewer)
    assert reply.status == 403
    [event] = [e for e in events(container, TENANT, DENIED) if e.actor == "rev-9"]
    assert event.payload["route"] == "POST /v1/memories/{memory_id}/close"
    assert "mem_0000000000001234abcd" not in str(event.model_dump())


def test_given_an_expired_token_signed_by_the_service_then_the_401_is_recorded_for_its_tenant(
    api, container, long_window
):
    expired = issue_token(
        api.secret, tenant_id=TENANT, sub="agent-late", roles=["agent"], ttl=timedelta(seconds=-5)
    )
    reply = api.get("/v1/subjects/S-1/memories", token=expired)
    assert reply.status == 401 and reply.body["error"]["code"] == "unauthenticated"
    [event] = [e for e in events(container, TENANT, DENIED) if e.actor == "agent-late"]
    assert (
        event.payload["status"] == 401 and event.payload["route"] == "GET /v1/subjects/{subject_id}/memories"
    )
    assert event.reason == "token expired"


def test_given_a_token_with_an_unknown_role_then_the_401_is_recorded_and_nothing_is_authorized(
    api, container, long_window
):
    good = jwt.decode(api.token(TENANT, "agent-typo", ["agent"]), api.secret, algorithms=["HS256"])
    typo = jwt.encode({**good, "roles": ["agnet"]}, api.secret, algorithm="HS256")
    reply = api.post("/v1/memories", {"subject_id": "S-1"}, token=typo)  # a bad body too: 401 comes first
    assert reply.status == 401
    assert [e.payload["status"] for e in events(container, TENANT, DENIED) if e.actor == "agent-typo"] == [
        401
    ]


def test_given_a_token_whose_signature_fails_then_no_tenant_chain_is_written(api, container):
    forged = issue_token("another-secret-" + "y" * 32, tenant_id="forged-co", sub="mallory", roles=["admin"])
    reply = api.get("/v1/audit", token=forged)
    assert reply.status == 401
    assert events(container, "forged-co", DENIED) == []


def test_given_a_retrieval_that_fails_in_the_broker_then_retrieval_failed_is_written(
    api, container, long_window, monkeypatch
):
    def broken(*args, **kwargs):
        raise RuntimeError("the broker broke on something it must not echo")

    monkeypatch.setattr(container.broker, "retrieve", broken)
    agent = api.token(TENANT, "agent-unlucky", ["agent"])
    reply = api.post("/v1/retrieve", {"subject_id": "S-1", "query": "renewal"}, token=agent)
    assert reply.status == 500
    [event] = [
        e for e in events(container, TENANT, EventType.RETRIEVAL_FAILED.value) if e.actor == "agent-unlucky"
    ]
    assert event.payload["route"] == "POST /v1/retrieve" and event.payload["status"] == 500
    assert event.reason == "unexpected RuntimeError" and "echo" not in str(event.model_dump())


def test_a_window_outside_the_policy_bounds_is_refused_naming_the_field(api, long_window):
    reply = api.put(
        "/v1/policy",
        {"profile": "support", "overrides": {"refusal_audit_window_seconds": 1}},
        token=long_window,
    )
    assert (
        reply.status == 422
        and "refusal_audit_window_seconds"
        in (reply.body["error"].get("field") or "") + (reply.body["error"]["message"])
    )


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 10, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_identical_refusals_from_two_instances_are_one_event_per_window_with_the_count(container):
    # Given two function instances (two logs over one database) and a 60 s window (the default)
    clock = Clock()
    one, two = (
        RefusalLog(container.store, container.policies, clock),
        RefusalLog(container.store, container.policies, clock),
    )
    refusal = Refusal(
        EventType.AUTHORIZATION_DENIED, "window-co", "agent-1", "GET /v1/audit", 403, "forbidden", "x"
    )
    # When the same refusal arrives five times within the minute, alternating instances
    written = [log.record(refusal) for log in (one, two, one, two, one)]
    # Then only the first writes an event
    assert written == [True, False, False, False, False]
    # When the window has passed, the next one writes an event reporting the four in between
    clock.now += timedelta(seconds=60)
    assert two.record(refusal) is True
    # And a different reason is its own key
    assert one.record(Refusal(**{**refusal.__dict__, "reason": "y"})) is True
    repeated = [e.payload["repeated"] for e in events(container, "window-co", DENIED)]
    assert repeated == [0, 4, 0]


def test_given_a_refusal_on_a_route_naming_a_subject_then_the_event_carries_that_subject(
    api, container, long_window
):
    # Given an agent, which may not erase, and a reviewer, which may not write
    agent = api.token(TENANT, "agent-subj-3", ["agent"])
    reviewer = api.token(TENANT, "rev-subj-4", ["reviewer"])
    # When the agent asks to erase a subject (named in the path), and the reviewer writes a
    # memory (the subject named in the body)
    erase = api.post("/v1/subjects/CUST-PATH-8/erasure", {"reason": "gdpr_article_17"}, token=agent)
    write = api.post(
        "/v1/memories",
        {
            "subject_id": "CUST-BODY-9",
            "type": "preference",
            "content": "Prefers email.",
            "source": {"kind": "customer_confirmed"},
        },
        token=reviewer,
    )
    # Then both are refused, and each denial event names the subject the request named
    assert erase.status == write.status == 403
    denied = {e.actor: e for e in events(container, TENANT, DENIED)}
    assert denied["agent-subj-3"].subject_id == "CUST-PATH-8"
    assert denied["rev-subj-4"].subject_id == "CUST-BODY-9"
    assert "Prefers email" not in str(denied["rev-subj-4"].model_dump())
