"""Identifiers typed into any stored free-text field - not only content, value and summary - are
masked before they are stored or audited: source system and reference, ticket ids, evidence
references, hold reasons, erasure request references, a session's ticket and channel."""

from __future__ import annotations

import time

import psycopg
import pytest

pytestmark = pytest.mark.e2e

CARD = "4111 1111 1111 1111"
SSN = "123-45-6789"
IBAN = "DE89 3704 0044 0532 0130 00"
RAW = ("4111111111111111", "123456789", "DE89370400440532013000")


def stored_text(database_url: str, tenant: str) -> str:
    """Every text and JSON column of every row of the tenant, digits with separators removed."""
    with psycopg.connect(database_url) as conn:
        tables = conn.execute(
            """SELECT table_name FROM information_schema.columns
                WHERE table_schema = 'public' AND column_name = 'tenant_id'"""
        ).fetchall()
        chunks = []
        for (table,) in tables:
            rows = conn.execute(
                f'SELECT row_to_json(t)::text FROM "{table}" t WHERE tenant_id = %s', (tenant,)
            )
            chunks += [r[0] for r in rows]
    return "".join(ch for ch in "\n".join(chunks) if ch.isalnum())


def test_identifiers_in_references_tickets_reasons_and_evidence_are_never_stored(
    api, container, database_url
):
    tenant = "maskf"
    agent = api.token(tenant, "agent-1", ["agent"], clearance="restricted")
    reviewer = api.token(tenant, "rev-1", ["reviewer"], clearance="restricted")
    privacy = api.token(tenant, "dpo-1", ["privacy_officer"], clearance="restricted")
    # Given writes whose reference fields carry a card, an SSN and an IBAN in the formats people type
    claim = api.post(
        "/v1/memories",
        {
            "subject_id": "MASK-1",
            "type": "fact",
            "category": "CONTRACT_COMMERCIAL",
            "slot": "contract.seat_price",
            "content": "Customer says they were promised 20% off.",
            "source": {"kind": "customer_claim", "system": f"card {CARD}", "reference": f"SSN {SSN}"},
            "ticket_id": f"T-{CARD}",
            "confidence_basis": f"IBAN {IBAN} was quoted",
        },
        token=agent,
    )
    assert claim.status == 201, claim.body
    memory_id = claim.body["memory"]["id"]
    # And a review, holds and an erasure request whose free text does the same
    assert (
        api.post(
            f"/v1/memories/{memory_id}/approve",
            {"evidence_ref": f"signed-{SSN}", "note": f"card {CARD}"},
            token=reviewer,
        ).status
        == 200
    )
    assert (
        api.post(
            "/v1/subjects/MASK-1/legal-hold",
            {"hold": True, "reason": f"case about IBAN {IBAN}"},
            token=privacy,
        ).status
        == 200
    )
    assert (
        api.post(
            f"/v1/memories/{memory_id}/legal-hold", {"hold": False, "reason": f"SSN {SSN}"}, token=privacy
        ).status
        == 200
    )
    assert (
        api.post(
            "/v1/subjects/MASK-1/legal-hold", {"hold": False, "reason": "released"}, token=privacy
        ).status
        == 200
    )
    closed = api.post(
        "/v1/sessions/S-MASK-1/close",
        {
            "subject_id": "MASK-2",
            "ticket_id": f"card {CARD}",
            "channel": f"ssn {SSN}",
            "occurred_at": "2026-10-02T15:00:00Z",
            "turns": [{"speaker": "customer", "text": "Please email the invoice."}],
        },
        token=agent,
    )
    assert closed.status == 202, closed.body
    erasure = api.post(
        "/v1/subjects/MASK-3/erasure",
        {"reason": "gdpr_article_17", "request_reference": f"DSR for card {CARD}"},
        token=privacy,
    )
    assert erasure.status == 202
    assert (
        api.post(
            "/v1/retrieve",
            {"subject_id": "MASK-1", "query": "discount?", "ticket_id": f"T {CARD}"},
            token=agent,
        ).status
        == 200
    )
    time.sleep(0.5)
    container.access_log.seal_all()
    # Then no stored row of the tenant, audit log included, holds any of the three in clear
    text = stored_text(database_url, tenant)
    assert text, "the scan read nothing"
    for raw in RAW:
        assert raw not in text, raw
    # And the answers show the masked forms
    assert "CARD-***-1111" in claim.body["memory"]["source"]["system"]
    assert claim.body["memory"]["ticket_id"].endswith("CARD-***-1111")


def test_an_identifier_only_in_a_reference_field_still_flags_and_raises_the_record(api):
    # Given a write whose only card number is in its source reference (masked when read)
    agent = api.token("maskf2", "agent-1", ["agent"], clearance="restricted")
    reply = api.post(
        "/v1/memories",
        {
            "subject_id": "MASK-REF-1",
            "type": "episode",
            "content": "Customer called about the renewal timeline.",
            "source": {"kind": "customer_confirmed", "reference": f"card {CARD}"},
        },
        token=agent,
    )
    # Then the record is flagged as having held an identifier, and raised as one in the content is
    assert reply.status == 201, reply.body
    memory = reply.body["memory"]
    assert "CARD-***-1111" in memory["source"]["reference"]
    assert "identifier_masked" in memory["flags"]
    assert memory["sensitivity"] in ("confidential", "restricted")
