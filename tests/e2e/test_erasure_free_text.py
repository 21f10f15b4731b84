"""Free text a person typed about a subject (a delete reason, an approval's evidence and note, hold
reasons, an erasure's reason and request reference, a session's transcript and ticket, a query) names the
subject; erasure leaves none of it in any table, while the audit chain still verifies."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

pytestmark = pytest.mark.e2e

NAME = "Marguerite Oyelaran"
EMAIL = "m.oyelaran@example.net"
PHONE = "+44 20 7946 0321"


def wait_for(api, token, erasure_id, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = api.get(f"/v1/erasures/{erasure_id}", token=token)
        if r.body["status"] != "running":
            return r.body
        time.sleep(0.1)
    raise AssertionError("erasure did not finish")


def places_holding(database_url: str, needles: list[str]) -> list[str]:
    """Every text, varchar and jsonb column of every table, searched for each needle."""
    found = []
    with psycopg.connect(database_url) as conn:
        columns = conn.execute(
            """SELECT c.table_schema, c.table_name, c.column_name
                 FROM information_schema.columns c
                 JOIN information_schema.tables t USING (table_schema, table_name)
                WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema')
                  AND t.table_type = 'BASE TABLE'
                  AND c.data_type IN ('text', 'character varying', 'jsonb', 'json', 'ARRAY')"""
        ).fetchall()
        for schema, table, column in columns:
            for needle in needles:
                hit = conn.execute(
                    f'SELECT 1 FROM "{schema}"."{table}" WHERE "{column}"::text ILIKE %s LIMIT 1',
                    (f"%{needle}%",),
                ).fetchone()
                if hit:
                    found.append(f"{table}.{column}: {needle}")
    return found


def test_erasure_leaves_no_free_text_naming_the_subject_anywhere(api, container, database_url):
    tenant = "eraft"
    agent = api.token(tenant, "agent-1", ["agent"], clearance="restricted")
    reviewer = api.token(tenant, "rev-1", ["reviewer"], clearance="restricted")
    privacy = api.token(tenant, "dpo-1", ["privacy_officer"], clearance="restricted")
    auditor = api.token(tenant, "aud-1", ["auditor"], clearance="restricted")
    subject = "ERAFT-1"
    said = f"{NAME} ({EMAIL}, {PHONE})"

    # Given a memory deleted with a reason naming the subject
    first = api.post(
        "/v1/memories",
        {"subject_id": subject, "type": "episode", "content": "Asked about the renewal.",
         "source": {"kind": "customer_confirmed"}},
        token=agent,
    )  # fmt: skip
    assert first.status == 201, first.body
    memory_id = first.body["memory"]["id"]
    deleted = api.request(
        "DELETE", f"/v1/memories/{memory_id}", {"reason": f"requested by {said}"}, token=agent
    )
    assert deleted.status == 200, deleted.body
    # And an approval whose note and evidence name the subject
    claim = api.post(
        "/v1/memories",
        {"subject_id": subject, "type": "fact", "category": "CONTRACT_COMMERCIAL", "slot": "contract.seat_price",
         "content": "Customer says the renewal price is $38/seat/month.", "source": {"kind": "customer_claim"}},
        token=agent,
    )  # fmt: skip
    assert claim.status == 201, claim.body
    approved = api.post(
        f"/v1/memories/{claim.body['memory']['id']}/approve",
        {
            # a document reference the evidence pattern accepts (no spaces), naming the subject
            "evidence_ref": f"signed-order-form-118/{NAME.replace(' ', '.')}/{EMAIL}",
            "note": f"confirmed with {said}",
        },
        token=reviewer,
    )
    assert approved.status == 200, approved.body
    # And a legal hold set, released, set and released again, with reasons naming the subject (a
    # hold still set at the erasure would keep the subject's records: tests/e2e/test_hold_erasure_api.py)
    for hold in (True, False, True, False):
        held = api.post(
            f"/v1/subjects/{subject}/legal-hold",
            {"hold": hold, "reason": f"dispute with {said}"},
            token=privacy,
        )
        assert held.status == 200, held.body
    # And a closed session whose transcript names them, and a retrieval for its ticket
    closed = api.post(
        "/v1/sessions/sess-eraft/close",
        {
            "subject_id": subject,
            "ticket_id": f"T-{EMAIL}",
            "channel": "chat",
            "occurred_at": "2026-10-02T15:00:00Z",
            "turns": [{"speaker": "customer", "text": f"I am {NAME}, reach me at {EMAIL} or {PHONE}."}],
        },
        token=agent,
    )
    assert closed.status in (200, 202), closed.body
    got = api.post(
        "/v1/retrieve",
        {"subject_id": subject, "query": f"renewal for {NAME}", "ticket_id": f"T-{EMAIL}"},
        token=agent,
    )
    assert got.status == 200, got.body
    # And the free text is readable in the audit before the erasure
    before = api.get(f"/v1/audit?subject_id={subject}", token=auditor).body["events"]
    assert any(NAME in str(e.get("free_text")) for e in before)
    assert not any(NAME in str(e["payload"]) or NAME in str(e["reason"]) for e in before)

    # When the subject is erased on a request whose reason names them
    started = api.post(
        f"/v1/subjects/{subject}/erasure",
        {"reason": f"GDPR request of {NAME}", "request_reference": f"DSR {NAME} {EMAIL} {PHONE}"},
        token=privacy,
    )
    done = wait_for(api, privacy, started.body["erasure_id"])
    assert done["status"] == "verified", done

    # Then no table or column holds the name, the e-mail address or the phone number
    assert places_holding(database_url, [NAME, EMAIL, "7946 0321", "Oyelaran"]) == []
    # And the receipt names the request by its reference's digest, which still finds it again
    assert done["receipt"]["request_reference"] is None and done["receipt"]["request_reference_sha256"]
    again = api.post(
        f"/v1/subjects/{subject}/erasure",
        {"reason": "repeat", "request_reference": f"DSR {NAME} {EMAIL} {PHONE}"},
        token=privacy,
    )
    assert (
        again.body["erasure_id"] == started.body["erasure_id"] and again.body["duplicate_of_earlier_request"]
    )
    assert places_holding(database_url, [NAME, "Oyelaran"]) == []
    # And `memory verify-audit` still passes on the tenant's chain
    memory = Path(sys.executable).with_name("memory")
    verified = subprocess.run(
        [str(memory), "verify-audit", "--tenant", tenant],
        env={**os.environ, "DATABASE_URL": database_url},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert '"ok": true' in verified.stdout


def test_a_chain_of_events_written_before_and_after_the_side_table_still_verifies(
    api, container, database_url
):
    from agent_memory.domain.audit import chain_events
    from agent_memory.domain.records import utcnow
    from agent_memory.ports.store import NewEvent

    tenant = "eraold"
    privacy = api.token(tenant, "dpo-1", ["privacy_officer"], clearance="restricted")
    # Given an event written as before, its free text inside the chained payload
    with container.store.tenant(tenant) as s:
        seq, prev = s._chain_head()
        old = NewEvent(
            "memory_updated", "dpo-1", None, "OLD-1", "legal_hold_set", {"reason": f"dispute with {NAME}"}
        )
        [event] = chain_events(tenant, [old], after_seq=seq, after_hash=prev, at=utcnow())
        s._insert_events([event])
        s.conn.execute(
            "UPDATE audit_chain_heads SET seq = %s, hash = %s WHERE tenant_id = %s",
            (event.seq, event.hash, tenant),
        )
    # When new events follow it (a hold whose reason goes beside the chain)
    held = api.post(
        "/v1/subjects/OLD-1/legal-hold", {"hold": True, "reason": f"dispute with {NAME}"}, token=privacy
    )
    assert held.status == 200, held.body
    # Then the whole chain verifies, old rows with their own hashing and new rows with the digest
    assert container.reads.verify_audit(tenant).ok
    with psycopg.connect(database_url) as conn:
        payloads = conn.execute(
            "SELECT payload::text FROM memory_events WHERE tenant_id = %s ORDER BY seq", (tenant,)
        ).fetchall()
    assert NAME in payloads[0][0] and NAME not in payloads[1][0] and "side_text_sha256" in payloads[1][0]
