"""Who may approve, and with what evidence, through the HTTP API on the embedded database: nobody
approves a memory they wrote or whose session they closed (403 `self_approval`), and evidence must
look like a reference the tenant's policy accepts (422 naming `evidence_ref`); both refusals are
audited with the rule named and change nothing."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.local.worker import QueuePoller

pytestmark = pytest.mark.e2e

TENANT = "approvals"


def claim(subject: str, **extra: Any) -> dict[str, Any]:
    return {
        "subject_id": subject,
        "type": "fact",
        "category": "CONTRACT_COMMERCIAL",
        "slot": "contract.seat_price",
        "content": "The customer says we agreed to $35/seat/month with a 20% discount.",
        "source": {"kind": "customer_claim", "system": "meeting", "reference": "qbr-2026-10"},
        **extra,
    }


@pytest.fixture(scope="module")
def t(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"], clearance="confidential"),
        # one person holding both roles: writes like an agent, approves like a reviewer
        "dual": api.token(TENANT, "dual-1", ["agent", "reviewer"], clearance="confidential"),
        "reviewer": api.token(TENANT, "rev-1", ["reviewer"], clearance="confidential"),
        "auditor": api.token(TENANT, "aud-1", ["auditor"], clearance="confidential"),
        "admin": api.token(TENANT, "admin-1", ["admin"]),
    }


def pending(api, token: str, subject: str, **extra: Any) -> str:
    reply = api.post("/v1/memories", claim(subject, **extra), token=token)
    assert reply.status == 201 and reply.body["decision"] == "pending_approval", reply.body
    return reply.body["memory"]["id"]


def approve(api, token: str, memory_id: str, evidence_ref: Any = "signed-contract-2026-118") -> Any:
    body = {"note": "checked"} if evidence_ref is None else {"note": "checked", "evidence_ref": evidence_ref}
    return api.post(f"/v1/memories/{memory_id}/approve", body, token=token)


def status_of(api, t, memory_id: str) -> str:
    return api.get(f"/v1/memories/{memory_id}", token=t["agent"]).body["status"]


def refusals(api, t, memory_id: str) -> list[dict[str, Any]]:
    events = api.get(f"/v1/audit?memory_id={memory_id}", token=t["auditor"]).body["events"]
    return [e for e in events if e["event_type"] == "memory_approval_refused"]


def test_a_reviewer_cannot_approve_a_memory_they_wrote(api, t):
    # Given a commercial claim written by someone who is also a reviewer
    memory_id = pending(api, t["dual"], "APR-SELF")
    # When they approve it themselves, with good evidence
    reply = approve(api, t["dual"], memory_id)
    # Then it is 403 self_approval, the claim still waits, and the refusal is audited by rule
    assert reply.status == 403 and reply.body["error"]["code"] == "self_approval", reply.body
    assert status_of(api, t, memory_id) == "pending_approval"
    [event] = refusals(api, t, memory_id)
    assert event["actor"] == "dual-1" and event["reason"] == "self_approval"
    # And another reviewer may approve it
    assert approve(api, t["reviewer"], memory_id).status == 200


def test_naming_someone_else_as_the_actor_does_not_make_an_approval_someone_elses(api, t):
    # Given a claim whose writer named another person as its actor in the body
    memory_id = pending(api, t["dual"], "APR-SPOOF", actor="rev-9")
    # When the writer approves it
    reply = approve(api, t["dual"], memory_id)
    # Then the chain knows who wrote it: refused
    assert reply.status == 403 and reply.body["error"]["code"] == "self_approval"
    assert status_of(api, t, memory_id) == "pending_approval"


def test_the_agent_who_closed_a_session_cannot_approve_what_was_drawn_from_it(api, t, local_aws):
    # Given a session closed by an agent who is also a reviewer, with a discount offered in it
    closed = api.post(
        "/v1/sessions/apr-sess-1/close",
        {
            "subject_id": "APR-SESS",
            "occurred_at": "2026-10-02T15:00:00Z",
            "turns": [
                {
                    "speaker": "agent",
                    "text": "As discussed in the meeting, we can offer a 15% discount on the renewal.",
                }
            ],
        },
        token=t["dual"],
    )
    assert closed.status == 202
    QueuePoller(local_aws.queue_url, endpoint_url=local_aws.endpoint_url, region="us-east-1").drain()
    waiting = [
        m["id"]
        for m in api.get("/v1/review", token=t["reviewer"]).body["items"]
        for m in [m["memory"]]
        if m["subject_id"] == "APR-SESS"
    ]
    assert waiting, "the discount waits for a reviewer"
    # When that agent approves it
    reply = approve(api, t["dual"], waiting[0])
    # Then it is refused as their own, and stays pending
    assert reply.status == 403 and reply.body["error"]["code"] == "self_approval"
    assert status_of(api, t, waiting[0]) == "pending_approval"
    assert [e["reason"] for e in refusals(api, t, waiting[0])] == ["self_approval"]


PLACEHOLDERS = ["none", "None", "n/a", "ok", "-", " ", "x", "signed", "123456", "sig 2026 118"]


@pytest.mark.parametrize("evidence", PLACEHOLDERS)
def test_evidence_that_is_no_document_reference_is_422_and_audited_without_it(api, t, evidence):
    # Given a commercial claim waiting for approval
    memory_id = pending(api, t["agent"], f"APR-EVID-{PLACEHOLDERS.index(evidence)}")
    # When a reviewer approves it citing a placeholder
    reply = approve(api, t["reviewer"], memory_id, evidence)
    # Then 422 naming evidence_ref, nothing changed, and the refusal audited without the text given
    assert reply.status == 422 and reply.body["error"]["field"] == "evidence_ref", reply.body
    assert status_of(api, t, memory_id) == "pending_approval"
    [event] = refusals(api, t, memory_id)
    assert event["reason"] == "evidence_ref_pattern"
    assert event["payload"] == {"rule": "evidence_ref_pattern", "status": 422, "field": "evidence_ref"}


def test_missing_evidence_for_a_commercial_term_is_422_and_audited(api, t):
    memory_id = pending(api, t["agent"], "APR-NONE")
    reply = approve(api, t["reviewer"], memory_id, None)
    assert reply.status == 422 and reply.body["error"]["field"] == "evidence_ref"
    assert [e["reason"] for e in refusals(api, t, memory_id)] == ["evidence_ref_pattern"]
    assert status_of(api, t, memory_id) == "pending_approval"


def test_the_tenants_own_evidence_pattern_decides_and_may_not_accept_placeholders(api, t):
    try:
        # Given a tenant whose evidence is its contract ids
        change = {"profile": "crm", "overrides": {"evidence_ref_pattern": "CTR-[0-9]{3,}"}}
        assert api.put("/v1/policy", change, token=t["admin"]).status == 200
        memory_id = pending(api, t["agent"], "APR-PATTERN")
        # When a reviewer cites another kind of reference, then a contract id
        other = approve(api, t["reviewer"], memory_id, "signed-contract-2026-118")
        contract = approve(api, t["reviewer"], memory_id, "CTR-118")
        # Then the first is refused and the second approves
        assert other.status == 422 and other.body["error"]["field"] == "evidence_ref"
        assert contract.status == 200 and contract.body["memory"]["evidence_ref"] == "CTR-118"
        # And a pattern that accepts anything is refused, naming the field
        for loose in (".*", "[a-z/]+", "\\S+"):
            reply = api.put(
                "/v1/policy",
                {"profile": "crm", "overrides": {"evidence_ref_pattern": loose}},
                token=t["admin"],
            )
            assert reply.status == 422, (loose, reply.body)
            assert reply.body["error"]["field"] == "overrides.evidence_ref_pattern"
        broken = api.put(
            "/v1/policy", {"profile": "crm", "overrides": {"evidence_ref_pattern": "("}}, token=t["admin"]
        )
        assert broken.status == 422 and "evidence_ref_pattern" in broken.body["error"]["field"]
    finally:
        assert api.put("/v1/policy", {"profile": "crm"}, token=t["admin"]).status == 200
