"""Content-only notes through HTTP: `POST /v1/memories` with only a subject and a sentence is
classified by the service's extractor and admitted as an agent-reported memory that the next
on-topic retrieval finds; a note that is held or not stored says why in one sentence."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def agent(api: Any) -> str:
    return str(api.token("notes", "copilot", ["agent"], clearance="confidential"))


def test_a_content_only_note_is_admitted_and_recalled_on_topic(api: Any, agent: str) -> None:
    # Given an agent's note with only a subject and its content
    note = {"subject_id": "ACC-1", "content": "Dana Ortiz has left; Sam Lee now signs renewals."}
    # When the agent writes it
    r = api.post("/v1/memories", note, token=agent)
    # Then it is admitted as an agent-reported stakeholder fact, unverified, expiring within 180 days
    assert r.status == 201, r.body
    assert r.body["decision"] == "admitted" and "explanation" not in r.body
    memory = r.body["memory"]
    assert memory["type"] == "fact" and memory["category"] == "STAKEHOLDER"
    assert memory["slot"] == "stakeholder.decision_maker"
    assert memory["source"]["kind"] == "customer_claim" and memory["source"]["system"] == "agent_note"
    assert memory["expires_at"] is not None
    # And the next retrieval on the topic finds it, among the unverified notes
    recalled = api.post(
        "/v1/retrieve", {"subject_id": "ACC-1", "query": "who signs renewals?"}, token=agent
    ).body
    found = [m for m in recalled["memories"] if m["id"] == memory["id"]]
    assert found and found[0]["section"] == "unverified"
    assert "Sam Lee" in recalled["context"]


def test_a_note_stating_a_discount_is_held_and_says_why(api: Any, agent: str) -> None:
    # Given a note that states a commercial term
    note = {"subject_id": "ACC-2", "content": "We agreed to give them a 20% discount on the renewal."}
    # When the agent writes it
    r = api.post("/v1/memories", note, token=agent)
    # Then it waits for a reviewer, and the reply says so in one sentence a model can relay
    assert r.status == 201, r.body
    assert r.body["decision"] == "pending_approval"
    assert r.body["explanation"].startswith("held for a reviewer: it states a discount")
    # And recall does not serve it
    recalled = api.post("/v1/retrieve", {"subject_id": "ACC-2", "query": "renewal discount"}, token=agent)
    assert "20%" not in recalled.body["context"]


def test_a_question_written_as_a_note_is_not_stored_and_says_why(api: Any, agent: str) -> None:
    # When the agent writes a question as a note
    r = api.post(
        "/v1/memories", {"subject_id": "ACC-3", "content": "When will we get the renewal quote?"}, token=agent
    )
    # Then nothing is stored, and the reply says why
    assert r.status == 201, r.body
    assert r.body["decision"] == "rejected" and r.body["memory"] is None
    assert r.body["explanation"] == "not stored: it is a question, not a statement to remember."
    listed = api.get("/v1/subjects/ACC-3/memories", token=agent).body["memories"]
    assert listed == []
    # And the refusal is audited with its reason, never the note's text
    auditor = api.token("notes", "aud", ["auditor"])
    events = api.get("/v1/audit?subject_id=ACC-3", token=auditor).body["events"]
    refused = [e for e in events if e["event_type"] == "memory_rejected"]
    assert [e["reason"] for e in refused] == ["question_not_a_fact"]
    assert "renewal" not in str(refused)


def test_a_typed_write_still_names_what_it_lacks(api: Any, agent: str) -> None:
    # When a body carries a type but no source
    r = api.post("/v1/memories", {"subject_id": "ACC-4", "content": "x", "type": "preference"}, token=agent)
    # Then the refusal names the missing field, not the shape of body it was read as
    assert r.status == 422
    assert r.body["error"]["field"] == "source"


def test_a_note_with_an_unknown_field_is_read_as_a_typed_write(api: Any, agent: str) -> None:
    # When a body has a subject, content and a field no note has
    r = api.post("/v1/memories", {"subject_id": "ACC-4", "content": "x", "colour": "red"}, token=agent)
    # Then it is refused as a typed write without its type
    assert r.status == 422 and r.body["error"]["field"] == "type"


def test_a_note_needs_a_role_that_may_write(api: Any) -> None:
    auditor = api.token("notes", "aud", ["auditor"])
    # When an auditor writes a note
    r = api.post("/v1/memories", {"subject_id": "ACC-5", "content": "Sam Lee signs renewals."}, token=auditor)
    # Then it is refused before anything is classified or written
    assert r.status == 403


def test_a_note_the_classifier_cannot_place_is_still_kept_and_recalled(api: Any, agent: str) -> None:
    # Given a note the classifier is unsure of
    note = {"subject_id": "ACC-6", "content": "Their VP of procurement, Alan Smith, has left the company."}
    # When the agent writes it
    r = api.post("/v1/memories", note, token=agent)
    # Then it is kept as what the agent recorded, and found on topic
    assert r.status == 201 and r.body["decision"] == "admitted", r.body
    assert r.body["classified_as"]["type"] == "episode"
    recalled = api.post(
        "/v1/retrieve", {"subject_id": "ACC-6", "query": "Has the VP of procurement left?"}, token=agent
    ).body
    assert any(m["id"] == r.body["memory"]["id"] for m in recalled["memories"])


def test_a_note_about_the_plan_tier_is_checked_against_the_system_of_record(
    api: Any, agent: str, container: Any
) -> None:
    # Given the system of record says the plan is Standard
    container.system_of_record.set_values("notes", "ACC-7", {"plan_tier": "standard"})
    # When the agent notes another plan tier
    r = api.post(
        "/v1/memories", {"subject_id": "ACC-7", "content": "Account is on the Enterprise plan."}, token=agent
    )
    # Then nothing is stored, and the reply says the live value wins and the slot is to be revalidated
    assert r.status == 201 and r.body["decision"] == "rejected", r.body
    assert r.body["reasons"][0] == "contradicts_live_value"
    assert r.body["explanation"] == (
        "not stored: it contradicts the plan tier in the system of record, which is flagged for "
        "revalidation; recall shows the live value."
    )
    assert api.get("/v1/subjects/ACC-7/memories", token=agent).body["memories"] == []


def test_a_note_follows_the_tenants_own_shorter_bound_for_unverified_notes(api: Any) -> None:
    # Given a tenant whose policy keeps unverified notes 30 days (not the seed's 180)
    tenant = "notes-short"
    admin = str(api.token(tenant, "admin-1", ["admin"]))
    set_policy = api.put(
        "/v1/policy", {"profile": "crm", "overrides": {"unverified_max_ttl_days": 30}}, token=admin
    )
    assert set_policy.status == 200, set_policy.body
    agent = str(api.token(tenant, "copilot", ["agent"], clearance="confidential"))
    # When an agent writes a content-only note
    reply = api.post(
        "/v1/memories",
        {"subject_id": "ACC-SHORT-1", "content": "Dana Ortiz has left; Sam Lee now signs renewals."},
        token=agent,
    )
    # Then it is admitted, and expires within the tenant's 30 days
    assert reply.status == 201 and reply.body["decision"] == "admitted", reply.body
    memory = reply.body["memory"]
    lifetime = datetime.fromisoformat(memory["expires_at"]) - datetime.fromisoformat(memory["created_at"])
    assert lifetime <= timedelta(days=30)
