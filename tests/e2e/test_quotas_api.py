"""Quotas through the HTTP API on the embedded database: a tenant's policy bounds its requests per
second and the memories it keeps (per subject, per tenant, in bytes); every refusal is a 429 naming
the limit, its policy key and value, with a Retry-After, and nothing half-written. Other tenants and
other subjects are untouched."""

from __future__ import annotations

import zlib
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from agent_memory.domain.enums import Role
from agent_memory.domain.errors import RateLimited
from agent_memory.domain.records import MemoryWrite, Principal

pytestmark = pytest.mark.e2e

TENANT = "quota-a"
OTHER = "quota-b"


@pytest.fixture(scope="module")
def t(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"]),
        "admin": api.token(TENANT, "admin-1", ["admin"]),
        "other_agent": api.token(OTHER, "agent-2", ["agent"]),
    }


def note(subject: str, text: str, key: str | None = None) -> dict:
    body = {
        "subject_id": subject,
        "type": "preference",
        "category": "PREFERENCE",
        "slot": f"pref.p{zlib.crc32(text.encode())}",
        "content": text,
        "source": {"kind": "customer_confirmed", "reference": "call-7"},
    }
    if key:
        body["idempotency_key"] = key
    return body


def set_policy(api, t, overrides: dict) -> None:
    reply = api.put("/v1/policy", {"profile": "support", "overrides": overrides}, token=t["admin"])
    assert reply.status == 200, reply.body


def live_rows(database_url: str, subject: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM memory_records WHERE tenant_id = %s AND subject_id = %s AND status = 'active'",
            (TENANT, subject),
        ).fetchone()
    return int(row[0])


def assert_quota_refusal(reply, reason: str, field: str, limit: int) -> None:
    assert reply.status == 429, reply.body
    error = reply.body["error"]
    assert (error["code"], error["reason"], error["field"], error["limit"]) == (
        "rate_limited",
        reason,
        field,
        limit,
    )
    assert int(reply.headers["Retry-After"]) >= 1


def test_a_subject_at_its_quota_gets_429_and_others_do_not(api, t, database_url, container):
    # Given a tenant whose policy keeps at most two live memories per subject
    set_policy(api, t, {"quota_memories_per_subject": 2})
    try:
        first = api.post("/v1/memories", note("Q-1", "Prefers e-mail over phone."), token=t["agent"])
        second = api.post(
            "/v1/memories", note("Q-1", "Prefers mornings for calls.", key="q1-second"), token=t["agent"]
        )
        assert first.status == second.status == 201, (first.body, second.body)
        # When a third memory of the same subject is written
        third = api.post("/v1/memories", note("Q-1", "Prefers Slack for urgent things."), token=t["agent"])
        # Then it is refused with the quota named, and nothing was written
        assert_quota_refusal(third, "memories_per_subject", "quota_memories_per_subject", 2)
        assert live_rows(database_url, "Q-1") == 2
        # And a retry of a write that was admitted still gets its first answer
        again = api.post(
            "/v1/memories", note("Q-1", "Prefers mornings for calls.", key="q1-second"), token=t["agent"]
        )
        assert again.status in (200, 201) and again.body["memory"]["id"] == second.body["memory"]["id"]
        # And another subject of the tenant, and another tenant, still write
        assert api.post("/v1/memories", note("Q-2", "Prefers phone."), token=t["agent"]).status == 201
        assert api.post("/v1/memories", note("Q-1", "Prefers post."), token=t["other_agent"]).status == 201
        # And a batch (an import) that would take the subject past its quota is refused whole
        agent = Principal(tenant_id=TENANT, sub="importer", roles=frozenset({Role.INTEGRATION}))
        writes = [MemoryWrite.model_validate(note("Q-2", s)) for s in ("Likes short calls.", "Likes e-mail.")]
        with pytest.raises(RateLimited) as refused:
            container.gateway.write_batch(agent, writes)
        assert (refused.value.reason, refused.value.limit) == ("memories_per_subject", 2)
        assert live_rows(database_url, "Q-2") == 1
        # And an extracted session's candidates for a subject over its quota come back refused,
        # naming the quota, while another subject's are admitted
        results = container.gateway.write_many(
            agent, [*writes, MemoryWrite.model_validate(note("Q-5", "Likes post."))], refuse_invalid=True
        )
        assert [r.refused for r in results] == ["quota_memories_per_subject"] * 2 + [None]
        assert results[2].decision.value == "admitted"
    finally:
        set_policy(api, t, {})


def test_a_tenant_over_its_memories_or_bytes_gets_429(api, t):
    # Given a tenant whose policy bounds the bytes of content it keeps, already past the bound
    set_policy(api, t, {"quota_bytes_per_tenant": 1024})
    try:
        filler = api.post("/v1/memories", note("Q-3", "x" * 600 + " prefers e-mail."), token=t["agent"])
        # When two more are written (the usage read is at most seconds old, and counts this
        # process's own writes)
        second = api.post("/v1/memories", note("Q-3", "y" * 600 + " prefers calls."), token=t["agent"])
        third = api.post("/v1/memories", note("Q-4", "Prefers post."), token=t["agent"])
        # Then the writes past the bound are refused naming the tenant's quota
        assert filler.status in (201, 429)
        refused = [r for r in (second, third) if r.status == 429]
        assert refused, (second.body, third.body)
        assert_quota_refusal(refused[0], "bytes_per_tenant", "quota_bytes_per_tenant", 1024)
        # And the other tenant is not affected
        assert api.post("/v1/memories", note("Q-4", "Prefers post."), token=t["other_agent"]).status == 201
    finally:
        set_policy(api, t, {})


def test_requests_per_second_are_bounded_per_tenant(api, t):
    # Given a tenant allowed three requests per second
    set_policy(api, t, {"quota_requests_per_second": 3})
    try:
        # When it sends twenty at once, and another tenant sends twenty beside it
        def ask(token):
            return api.get("/v1/subjects/Q-1/memories", token=token)

        with ThreadPoolExecutor(8) as pool:
            ours = list(pool.map(ask, [t["agent"]] * 20))
            theirs = list(pool.map(ask, [t["other_agent"]] * 20))
        # Then most of its requests are refused with the rate named and when to try again
        limited = [r for r in ours if r.status == 429]
        assert len(limited) >= 10 and all(r.status in (200, 429) for r in ours)
        assert_quota_refusal(limited[0], "requests_per_second", "quota_requests_per_second", 3)
        # And the other tenant's are all answered
        assert [r.status for r in theirs] == [200] * 20
    finally:
        # (the admin's own requests count too: wait for a token before resetting)
        for _ in range(20):
            reply = api.put("/v1/policy", {"profile": "support", "overrides": {}}, token=t["admin"])
            if reply.status == 200:
                break
            import time

            time.sleep(float(reply.headers.get("Retry-After", "1")))
        assert reply.status == 200, reply.body


def test_quota_values_are_validated_naming_the_field(api, t):
    reply = api.put(
        "/v1/policy", {"profile": "support", "overrides": {"quota_requests_per_second": 0}}, token=t["admin"]
    )
    assert reply.status == 422 and reply.body["error"]["field"] == "overrides.quota_requests_per_second"
