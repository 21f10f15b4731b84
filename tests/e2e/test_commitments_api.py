"""Commitments through the HTTP API: open when written, closed by an agent or an integration,
shown with their state at retrieval, kept for the policy's retention after closing."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest

pytestmark = pytest.mark.e2e

SUBJECT = "ACC-FOLLOWUP-1"
FOLLOW_UP = {
    "subject_id": SUBJECT,
    "type": "commitment",
    "content": "I will send the revised statement of work with the onboarding timeline by Friday.",
    "value": {"owner": "agent-7", "due": "2026-12-04"},
    "source": {"kind": "agent_inference", "system": "chat", "reference": "sess-91"},
}


@pytest.fixture(scope="module")
def tokens(api):
    return {
        "agent": api.token("acme", "agent-7", ["agent"]),
        "integration": api.token("acme", "crm-sync", ["integration"]),
        "reviewer": api.token("acme", "rev-1", ["reviewer"]),
        "auditor": api.token("acme", "aud-1", ["auditor"]),
        "other_tenant_agent": api.token("globex", "agent-x", ["agent"]),
    }


def open_commitment(api, tokens, **overrides):
    reply = api.post("/v1/memories", {**FOLLOW_UP, **overrides}, token=tokens["agent"])
    assert reply.status == 201 and reply.body["decision"] == "admitted", reply.body
    return reply.body["memory"]


def test_an_open_commitment_is_closed_kept_thirty_days_audited_and_retrieved_with_its_state(api, tokens):
    # Given an agent's follow-up, admitted open with no expiry of its own
    memory = open_commitment(api, tokens)
    assert memory["value"]["state"] == "open" and memory["expires_at"] is None
    seen = api.post(
        "/v1/retrieve", {"subject_id": SUBJECT, "query": "revised statement of work"}, token=tokens["agent"]
    )
    line = next(m for m in seen.body["memories"] if m["id"] == memory["id"])
    assert line["commitment"]["state"] == "open" and line["commitment"]["due"] == "2026-12-04"
    assert "commitment state open owner agent-7 due 2026-12-04" in seen.body["context"]

    # When the integration closes it as done
    before = datetime.now(UTC)
    closed = api.post(f"/v1/memories/{memory['id']}/close", {"outcome": "done"}, token=tokens["integration"])

    # Then it is closed, by whom and when, and expires 30 days after the close
    assert closed.status == 200, closed.body
    value = closed.body["memory"]["value"]
    assert (value["state"], value["outcome"], value["closed_by"]) == ("closed", "done", "crm-sync")
    closed_at = datetime.fromisoformat(value["closed_at"])
    assert before <= closed_at <= datetime.now(UTC)
    assert datetime.fromisoformat(closed.body["memory"]["expires_at"]) == closed_at + timedelta(days=30)
    assert closed.body["memory"]["status"] == "active" and closed.body["memory"]["id"] == memory["id"]

    # And the retrieval shows it closed, and the audit trail has the transition
    seen = api.post(
        "/v1/retrieve", {"subject_id": SUBJECT, "query": "revised statement of work"}, token=tokens["agent"]
    )
    line = next(m for m in seen.body["memories"] if m["id"] == memory["id"])
    assert line["commitment"]["state"] == "closed" and line["commitment"]["outcome"] == "done"
    audit = api.get(f"/v1/audit?memory_id={memory['id']}", token=tokens["auditor"])
    closing = [e for e in audit.body["events"] if e["reason"] == "commitment_closed"]
    assert len(closing) == 1 and closing[0]["payload"]["outcome"] == "done"
    assert closing[0]["actor"] == "crm-sync"

    # And closing it again is a conflict that changes nothing
    again = api.post(f"/v1/memories/{memory['id']}/close", {"outcome": "cancelled"}, token=tokens["agent"])
    assert again.status == 409
    after = api.get(f"/v1/memories/{memory['id']}", token=tokens["agent"])
    assert after.body["value"]["outcome"] == "done"


def test_a_past_close_time_sets_the_retention_from_it(api, tokens):
    memory = open_commitment(
        api,
        tokens,
        content="I will call back about the failed data export next week.",
        effective_at=(datetime.now(UTC) - timedelta(days=10)).isoformat(),
    )
    when = datetime.now(UTC) - timedelta(days=3)
    closed = api.post(
        f"/v1/memories/{memory['id']}/close",
        {"outcome": "cancelled", "closed_at": when.isoformat()},
        token=tokens["agent"],
    )
    assert closed.status == 200, closed.body
    assert datetime.fromisoformat(closed.body["memory"]["expires_at"]) == when + timedelta(days=30)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"outcome": "finished"}, "outcome"),
        ({"closed_at": "tomorrow"}, "closed_at"),
        ({"closed_at": (datetime.now(UTC) + timedelta(days=1)).isoformat()}, "closed_at"),
        ({"outcome": "done", "extra": 1}, "extra"),
    ],
)
def test_bad_close_requests_are_4xx_naming_the_field_and_leave_the_commitment_open(api, tokens, body, field):
    subject = f"ACC-FOLLOWUP-{uuid.uuid4().hex[:8]}"  # a fresh subject: not a duplicate of another case
    memory = open_commitment(api, tokens, subject_id=subject, content="I will check the invoice numbering.")
    reply = api.post(f"/v1/memories/{memory['id']}/close", body, token=tokens["agent"])
    assert 400 <= reply.status < 500 and field in reply.body["error"]["field"], reply.body
    after = api.get(f"/v1/memories/{memory['id']}", token=tokens["agent"])
    assert after.body["value"]["state"] == "open" and after.body["expires_at"] is None


def test_who_may_close_what(api, tokens):
    memory = open_commitment(api, tokens, content="I will send the SSO setup guide to the admin.")
    path = f"/v1/memories/{memory['id']}/close"
    # roles that may not write may not close
    for role in ("reviewer", "auditor"):
        reply = api.post(path, {}, token=tokens[role])
        assert reply.status == 403 and reply.body["error"]["code"] == "unauthorized_memory_mutation"
    # another tenant cannot see it, so cannot close it
    assert api.post(path, {}, token=tokens["other_tenant_agent"]).status == 404
    assert api.post("/v1/memories/mem_does_not_exist/close", {}, token=tokens["agent"]).status == 404
    # only commitments close
    pref = api.post(
        "/v1/memories",
        {
            "subject_id": SUBJECT,
            "type": "preference",
            "slot": "preference.contact_channel",
            "content": "Prefers email over phone",
            "source": {"kind": "customer_confirmed"},
        },
        token=tokens["agent"],
    )
    assert (
        api.post(f"/v1/memories/{pref.body['memory']['id']}/close", {}, token=tokens["agent"]).status == 409
    )
    still = api.get(f"/v1/memories/{memory['id']}", token=tokens["agent"])
    assert still.body["value"]["state"] == "open"


def test_a_commitment_with_an_unknown_state_is_refused_naming_the_field(api, tokens):
    reply = api.post("/v1/memories", {**FOLLOW_UP, "value": {"state": "pending"}}, token=tokens["agent"])
    assert reply.status == 422 and reply.body["error"]["field"] == "value.state"


def test_a_commitment_above_the_callers_clearance_cannot_be_closed_or_seen(api, tokens):
    # Given a confidential follow-up, written by a cleared agent
    cleared = api.token("acme", "agent-9", ["agent"], clearance="confidential")
    secret = api.post(
        "/v1/memories",
        {
            **FOLLOW_UP,
            "subject_id": "ACC-FOLLOWUP-CONF",
            "content": "I will send the revised restructuring terms to the CFO.",
            "sensitivity": "confidential",
        },
        token=cleared,
    ).body["memory"]
    # When an agent with internal clearance tries to close it, it looks absent and stays open
    reply = api.post(f"/v1/memories/{secret['id']}/close", {}, token=tokens["agent"])
    assert reply.status == 404 and "restructuring" not in str(reply.body)
    still = api.get(f"/v1/memories/{secret['id']}", token=cleared)
    assert still.body["value"]["state"] == "open"


def test_closed_at_before_the_commitment_was_made_is_refused(api, tokens):
    memory = open_commitment(
        api,
        tokens,
        subject_id="ACC-FOLLOWUP-EARLY",
        content="I will confirm the go-live date.",
        effective_at="2026-11-20T09:00:00+00:00",
    )
    reply = api.post(
        f"/v1/memories/{memory['id']}/close",
        {"closed_at": "2026-11-19T09:00:00+00:00"},
        token=tokens["agent"],
    )
    assert reply.status == 422 and reply.body["error"]["field"] == "closed_at"


def test_the_same_follow_up_made_again_after_closing_is_a_new_open_commitment(api, tokens):
    # Given a follow-up that was done
    first = open_commitment(api, tokens, subject_id="ACC-FOLLOWUP-AGAIN", content="I will send the recap.")
    assert api.post(f"/v1/memories/{first['id']}/close", {}, token=tokens["agent"]).status == 200
    # When the agent promises the same thing in a later session
    again = api.post(
        "/v1/memories",
        {**FOLLOW_UP, "subject_id": "ACC-FOLLOWUP-AGAIN", "content": "I will send the recap."},
        token=tokens["agent"],
    )
    # Then it is admitted as a new open commitment, not a duplicate of the closed one
    assert again.status == 201 and again.body["decision"] == "admitted", again.body
    assert again.body["memory"]["id"] != first["id"] and again.body["memory"]["value"]["state"] == "open"
