"""Digests instead of forgetting, through the API and the nightly purge on the embedded database:
a subject's episodes at the end of their retention become one digest, which retrieval serves once
they are gone, which masks what they masked, keeps their lineage and sensitivity, and which the
subject's erasure removes and verifies like everything else."""

from __future__ import annotations

import time

import psycopg
import pytest

pytestmark = pytest.mark.e2e

TENANT = "digests"


@pytest.fixture(scope="module")
def t(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"], clearance="confidential"),
        "dpo": api.token(TENANT, "dpo-1", ["privacy_officer"]),
        "admin": api.token(TENANT, "admin-1", ["admin"]),
    }


def episode(subject: str, content: str, day: int, **extra) -> dict:
    return {
        "subject_id": subject,
        "type": "episode",
        "content": content,
        "source": {"kind": "customer_confirmed", "system": "support", "reference": f"call-{day}"},
        "effective_at": f"2026-11-{day:02d}T10:00:00Z",
        **extra,
    }


def expire_now(database_url: str, subject: str) -> None:
    """Time passing, without waiting: the subject's episodes reach the end of their retention."""
    with psycopg.connect(database_url) as conn:
        conn.execute(
            "UPDATE memory_records SET expires_at = now() - interval '1 minute'"
            " WHERE tenant_id = %s AND subject_id = %s AND type = 'episode'",
            (TENANT, subject),
        )


def records(database_url: str, subject: str) -> list[tuple]:
    with psycopg.connect(database_url) as conn:
        return conn.execute(
            "SELECT id, status, content, sensitivity, source->>'system', lineage_keys FROM memory_records"
            " WHERE tenant_id = %s AND subject_id = %s ORDER BY created_at",
            (TENANT, subject),
        ).fetchall()


def test_expiring_episodes_become_one_digest_that_retrieval_serves(api, t, container, database_url):
    # Given three episodes of one customer, one confidential, one naming a card number
    ids = []
    for day, text, extra in [
        (2, "Called about the invoice mismatch on the October bill. They want a credit note.", {}),
        (9, "Migration to the Frankfurt region was agreed for January. Dana Ortiz will sign off.", {}),
        (
            16,
            "Paid the overdue invoice with card 4111 1111 1111 1111 after the call. All settled.",
            {"sensitivity": "confidential"},
        ),
    ]:
        reply = api.post("/v1/memories", episode("CUST-D1", text, day, **extra), token=t["agent"])
        assert reply.status == 201 and reply.body["decision"] == "admitted", reply.body
        ids.append(reply.body["memory"]["id"])
    # and another customer whose episodes are not due
    kept = api.post("/v1/memories", episode("CUST-D2", "Asked for a training session.", 20), token=t["agent"])
    # When their retention ends and the nightly purge runs
    expire_now(database_url, "CUST-D1")
    report = container.lifecycle.purge(tenants=[TENANT], consolidate=False)
    # Then the episodes are expired and one digest stands for them
    assert report.digests == 1 and report.episodes_digested == 3, report.as_dict()
    rows = {r[0]: r for r in records(database_url, "CUST-D1")}
    assert [rows[i][1] for i in ids] == ["expired"] * 3
    digests = [r for r in rows.values() if r[4] == "memory-digest"]
    assert len(digests) == 1
    _, status, content, sensitivity, _, lineage = digests[0]
    assert status == "active" and sensitivity == "confidential"  # the strictest of its sources
    lines = content.splitlines()
    assert lines[0].startswith("Earlier history, digested from 3 episode(s), 2026-11-02 to 2026-11-16")
    assert lines[1].startswith("- 2026-11-16: Paid the overdue invoice with card ")
    assert "4111 1111 1111 1111" not in content and "1111" in content  # masked as its source was
    assert lines[2] == "- 2026-11-09: Migration to the Frankfurt region was agreed for January."
    assert set(ids) <= set(lineage)
    # And the other customer's episode is untouched
    assert [r[1] for r in records(database_url, "CUST-D2")] == ["active"]
    assert kept.status == 201
    # And retrieval serves the digest where the episodes are gone
    answer = api.post(
        "/v1/retrieve",
        {"subject_id": "CUST-D1", "query": "when is the Frankfurt migration?"},
        token=t["agent"],
    ).body
    assert any(m["id"] == digests[0][0] for m in answer["memories"]), answer
    assert "Frankfurt region was agreed" in answer["context"]
    # And a second run writes nothing more
    again = container.lifecycle.purge(tenants=[TENANT], consolidate=False)
    assert again.digests == 0

    # When the customer is erased, Then the digest goes with everything else, verified
    erasure = api.post("/v1/subjects/CUST-D1/erasure", {"reason": "gdpr_article_17"}, token=t["dpo"])
    assert erasure.status == 202
    for _ in range(120):
        status = api.get(f"/v1/erasures/{erasure.body['erasure_id']}", token=t["dpo"]).body
        if status["status"] != "running":
            break
        time.sleep(0.5)
    assert status["status"] == "verified", status
    assert all(
        r[2] in (None, "") or r[1] in ("deleted", "tombstoned") for r in records(database_url, "CUST-D1")
    )
    assert not any("Frankfurt" in (r[2] or "") for r in records(database_url, "CUST-D1"))


def test_a_tenant_may_turn_digests_off(api, t, container, database_url):
    # Given a tenant whose policy keeps no digests
    changed = api.put(
        "/v1/policy", {"profile": "crm", "overrides": {"digest_expiring_episodes": False}}, token=t["admin"]
    )
    assert changed.status == 200, changed.body
    try:
        api.post("/v1/memories", episode("CUST-D3", "Short call about the login page.", 3), token=t["agent"])
        expire_now(database_url, "CUST-D3")
        # When the purge runs, Then the episode expires and no digest is written
        report = container.lifecycle.purge(tenants=[TENANT], consolidate=False)
        assert report.digests == 0
        assert [r[1] for r in records(database_url, "CUST-D3")] == ["expired"]
    finally:
        assert api.put("/v1/policy", {"profile": "crm"}, token=t["admin"]).status == 200
