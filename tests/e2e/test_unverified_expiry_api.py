"""INV-MEM-02 for every unverified note (seed 000: "unverified conversational notes and customer
sentiments must carry expires_at <= now() + 180 days"): a customer's claim, an agent's inference
and a term waiting for approval expire at most 180 days from admission; what a verified source
states does not; the database holds the bound whatever writes the row, and the migration bounded
the rows admitted before the rule."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

pytestmark = pytest.mark.e2e

TENANT = "unverified"
DAY = timedelta(days=1)
MIGRATION = (
    Path(__file__).resolve().parents[2]
    / "layers/core/python/agent_memory/adapters/postgres/migrations/0043_unverified_expiry.sql"
)


@pytest.fixture(scope="module")
def tok(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"], clearance="confidential"),
        "integration": api.token(TENANT, "crm", ["integration"], clearance="confidential"),
    }


def fact(subject: str, kind: str, category: str = "STAKEHOLDER", slot: str = "stakeholder.decision_maker"):
    return {
        "subject_id": subject,
        "type": "fact",
        "category": category,
        "slot": slot,
        "content": "Sam Lee now signs renewals." if category == "STAKEHOLDER" else "20% discount on renewal.",
        "source": {"kind": kind, **({"system": "crm"} if kind == "system_of_record" else {})},
    }


@pytest.mark.parametrize(
    ("kind", "category", "slot", "bounded"),
    [
        ("customer_claim", "STAKEHOLDER", "stakeholder.decision_maker", True),
        ("customer_claim", "CONTRACT_COMMERCIAL", "contract.discount", True),  # held for approval
        ("customer_confirmed", "CONTRACT_COMMERCIAL", "contract.seat_price", True),  # held for approval
        ("customer_confirmed", "STAKEHOLDER", "stakeholder.decision_maker", False),
        ("system_of_record", "CONTRACT_COMMERCIAL", "contract.pricing", False),
    ],
)
def test_an_unverified_note_expires_within_180_days_of_admission(api, tok, kind, category, slot, bounded):
    # Given a fact written with no expiry
    writer = tok["integration"] if kind == "system_of_record" else tok["agent"]
    reply = api.post("/v1/memories", fact(f"ACC-UV-{kind}-{slot}", kind, category, slot), token=writer)
    assert reply.status in (200, 201), reply.body
    memory = reply.body["memory"]
    # Then an unverified note (a claim, or a term awaiting a reviewer) expires 180 days after it
    # was admitted; a customer's confirmation and the system of record do not expire by age
    if bounded:
        created = datetime.fromisoformat(memory["created_at"])
        lifetime = datetime.fromisoformat(memory["expires_at"]) - created
        assert 180 * DAY - timedelta(minutes=1) <= lifetime <= 180 * DAY
    else:
        assert memory["expires_at"] is None


def test_an_unverified_claim_asking_to_outlive_the_bound_is_refused_and_nothing_is_written(api, tok):
    body = {
        **fact("ACC-UV-LONG", "customer_claim"),
        "expires_at": (datetime.now(UTC) + 400 * DAY).isoformat(),
    }
    reply = api.post("/v1/memories", body, token=tok["agent"])
    assert reply.status == 422 and reply.body["error"]["field"] == "expires_at", reply.body
    listed = api.get("/v1/subjects/ACC-UV-LONG/memories", token=tok["agent"])
    assert listed.status == 200 and listed.body["memories"] == []


def test_the_database_refuses_an_unbounded_unverified_fact_whatever_writes_it(api, tok, container):
    # Given a claim admitted through the API
    reply = api.post("/v1/memories", fact("ACC-UV-DB", "customer_claim"), token=tok["agent"])
    mid = reply.body["memory"]["id"]
    # When a writer that bypasses admission tries to lift or lengthen its expiry
    for expiry in ("NULL", "created_at + interval '181 days'"):
        with (
            pytest.raises(psycopg.errors.CheckViolation),
            psycopg.connect(container.settings.database_url) as conn,
        ):
            conn.execute(f"UPDATE memory_records SET expires_at = {expiry} WHERE id = %s", (mid,))


def test_the_migration_bounds_the_unverified_rows_admitted_before_the_rule(api, tok, container):
    # Given a claim and a confirmed fact, the claim's expiry lifted as before the rule
    claim = api.post("/v1/memories", fact("ACC-UV-OLD", "customer_claim"), token=tok["agent"]).body["memory"]
    kept = api.post(
        "/v1/memories",
        fact("ACC-UV-OLD", "customer_confirmed", slot="stakeholder.primary_contact"),
        token=tok["agent"],
    ).body["memory"]
    with psycopg.connect(container.settings.database_url) as conn:
        conn.execute("ALTER TABLE memory_records DROP CONSTRAINT memory_records_unverified_expire")
        conn.execute(
            "UPDATE memory_records SET expires_at = NULL, created_at = created_at - interval '200 days'"
            " WHERE id = %s",
            (claim["id"],),
        )
        conn.commit()
        # When the migration runs
        conn.execute(MIGRATION.read_text())
        conn.commit()
        rows = dict(
            conn.execute(
                "SELECT id, expires_at - created_at FROM memory_records WHERE id = ANY(%s)",
                ([claim["id"], kept["id"]],),
            ).fetchall()
        )
    # Then the claim expires 180 days after its admission (already past: the purge removes it),
    # and the customer's confirmed fact is untouched
    assert rows[claim["id"]] == 180 * DAY
    assert rows[kept["id"]] is None


def test_approval_lifts_the_bound_and_the_audit_says_so(api, tok):
    # Given a discount the customer asked for, held for a reviewer (so bounded at 180 days)
    held = api.post(
        "/v1/memories",
        fact("ACC-UV-APPROVE", "customer_claim", "CONTRACT_COMMERCIAL", "contract.discount"),
        token=tok["agent"],
    ).body["memory"]
    assert held["status"] == "pending_approval" and held["expires_at"] is not None
    # When another person, a reviewer, approves it with evidence
    reviewer = api.token(TENANT, "rev-1", ["reviewer"], clearance="confidential")
    reply = api.post(
        f"/v1/memories/{held['id']}/approve", {"evidence_ref": "signed-order-2026-118"}, token=reviewer
    )
    # Then it is verified and no longer expires by age (a fact has no TTL)
    assert reply.status == 200, reply.body
    assert (
        reply.body["memory"]["authority"] == "human_verified" and reply.body["memory"]["expires_at"] is None
    )
    # And the approval event records the bound it lifted
    auditor = api.token(TENANT, "aud-1", ["auditor"], clearance="confidential")
    events = api.get(f"/v1/audit?memory_id={held['id']}", token=auditor).body["events"]
    approved = [e for e in events if e["event_type"] == "memory_approved"]
    assert (
        approved
        and approved[0]["payload"]["expires_at_before"]
        and approved[0]["payload"]["expires_at"] is None
    )
