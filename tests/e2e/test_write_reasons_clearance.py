"""A write's reply never describes a record above the writer's clearance: no id, and no reason that
relates the write to it ("supersedes an older version", "lower authority than the active record").
The same writes by a cleared writer are told the reasons, so the rule hides, never loses, them."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.e2e

RELATIVE = {
    "supersedes_lower_authority",
    "supersedes_older_version",
    "older_than_active_version",
    "lower_authority_than_active",
}


def _fact(subject: str, slot: str, content: str, kind: str, **extra: Any) -> dict[str, Any]:
    return {
        "subject_id": subject,
        "type": "fact",
        "category": "ACCOUNT_PROFILE",
        "slot": slot,
        "content": content,
        "source": {"kind": kind, "system": "crm"},
        **extra,
    }


@pytest.fixture
def tokens(api: Any) -> dict[str, str]:
    roles = ["agent", "integration"]
    return {
        "high": api.token("wrc", "sync-hi", roles, clearance="restricted"),
        "low": api.token("wrc", "sync-lo", roles, clearance="internal"),
    }


def _restricted_record(api: Any, high: str, subject: str, slot: str) -> str:
    made = api.post(
        "/v1/memories",
        _fact(subject, slot, "Risk rating on file is high.", "system_of_record", sensitivity="restricted"),
        token=high,
    )
    assert made.status == 201 and made.body["decision"] == "admitted", made.body
    return str(made.body["memory"]["id"])


@pytest.mark.parametrize("writer", ["low", "high"])
def test_a_write_superseding_a_record_above_clearance_names_no_reason_about_it(
    api: Any, tokens: dict[str, str], writer: str
) -> None:
    # Given a restricted active record in a slot
    subject = f"ACC-WRC-SUP-{writer}"
    restricted = _restricted_record(api, tokens["high"], subject, "account.risk_rating")
    # When a writer of the same authority writes a newer value into that slot
    reply = api.post(
        "/v1/memories",
        _fact(subject, "account.risk_rating", "Risk rating on file is medium.", "system_of_record"),
        token=tokens[writer],
    )
    # Then it is admitted over the restricted record either way
    assert reply.status == 201 and reply.body["decision"] == "admitted", reply.body
    if writer == "low":
        # and the writer below its clearance is told nothing about that record
        assert not RELATIVE & set(reply.body["reasons"]), reply.body["reasons"]
        assert restricted not in str(reply.body), reply.body
    else:
        # while a cleared writer is told what happened to it
        assert "supersedes_older_version" in reply.body["reasons"], reply.body
        assert reply.body["superseded"] == [restricted]


@pytest.mark.parametrize("writer", ["low", "high"])
def test_a_write_contesting_a_record_above_clearance_names_no_reason_about_it(
    api: Any, tokens: dict[str, str], writer: str
) -> None:
    # Given a restricted active record from the system of record
    subject = f"ACC-WRC-CON-{writer}"
    restricted = _restricted_record(api, tokens["high"], subject, "account.risk_rating")
    # When a writer reports a contradicting value on lower authority
    reply = api.post(
        "/v1/memories",
        _fact(subject, "account.risk_rating", "The customer says the risk rating is low.", "customer_claim"),
        token=tokens[writer],
    )
    assert reply.status == 201 and reply.body["decision"] == "contested", reply.body
    if writer == "low":
        # Then the writer below its clearance is not told it met a record of higher authority
        assert not RELATIVE & set(reply.body["reasons"]), reply.body["reasons"]
        assert restricted not in str(reply.body), reply.body
    else:
        assert "lower_authority_than_active" in reply.body["reasons"], reply.body
