"""The subject view explains a session in a real browser: every statement with its decision,
reason and score, statement text shown as text."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.local.worker import QueuePoller

pytestmark = pytest.mark.e2e


def test_the_subject_view_lists_why_each_statement_of_a_session_was_kept_or_not(
    console: Any, api: Any, local_aws: Any
) -> None:
    # Given a processed session whose customer asked a question and stated a preference
    tenant, subject = "cx-explain", "ACC-CX-1"
    agent = api.token(tenant, "agent-1", ["agent"], clearance="confidential")
    turns = [
        {"speaker": "customer", "text": "I prefer email communication, please don't call me."},
        {"speaker": "customer", "text": "When will we get the renewal quote? <b>soon</b>"},
    ]
    body = {"subject_id": subject, "occurred_at": "2026-10-02T15:00:00Z", "turns": turns}
    assert api.post("/v1/sessions/cx-sess-1/close", body, token=agent).status == 202
    QueuePoller(local_aws.queue_url, endpoint_url=local_aws.endpoint_url, region="us-east-1").drain()
    # When the agent opens the subject and asks why for the session
    console.sign_in(agent, f"subject/{subject}")
    box = console.find("section.extraction input[name=session_id]")
    box.send_keys("cx-sess-1")
    console.find("section.extraction button[type=submit]").click()
    # Then every statement is listed with its decision and reason
    console.find("#extraction-report")
    rows = console.all("#extraction-report tbody tr")
    decisions = {r.get_attribute("data-decision") for r in rows}
    assert "admitted" in decisions and "not_stored" in decisions
    assert "question_not_a_fact" in console.text_of("#extraction-report")
    # And statement text that looks like markup stays text
    assert "<b>soon</b>" in console.text_of("#extraction-report")
    assert not console.all("#extraction-report b")


def test_the_subject_view_groups_memories_by_the_section_the_service_names(console: Any, api: Any) -> None:
    # Given a subject with a verified fact, a confirmed preference, an episode and a customer's claim
    tenant, subject = "cx-sections", "ACC-CX-2"
    agent = api.token(tenant, "agent-1", ["agent"], clearance="confidential")
    crm = api.token(tenant, "crm", ["integration"])
    writes = [
        (
            crm,
            {
                "type": "fact",
                "category": "ACCOUNT_PROFILE",
                "slot": "profile.industry",
                "content": "Industry is logistics.",
                "source": {"kind": "system_of_record", "system": "crm"},
            },
        ),
        (
            agent,
            {
                "type": "preference",
                "slot": "preference.contact_channel",
                "content": "Prefers email.",
                "source": {"kind": "customer_confirmed"},
            },
        ),
        (
            agent,
            {
                "type": "episode",
                "content": "Asked about the renewal quote.",
                "source": {"kind": "customer_confirmed"},
            },
        ),
        (
            agent,
            {
                "type": "preference",
                "slot": "preference.tone",
                "content": "Says a formal tone was agreed.",
                "source": {"kind": "customer_claim"},
            },
        ),
    ]
    for token, body in writes:
        assert api.post("/v1/memories", {"subject_id": subject, **body}, token=token).status == 201, body
    listed = api.get(f"/v1/subjects/{subject}/memories?status=active", token=agent).body["memories"]
    named = {m["id"]: m["section"] for m in listed}
    assert set(named.values()) == {"verified_facts", "relevant", "supporting", "unverified"}
    # When the agent opens the subject
    console.sign_in(agent, f"subject/{subject}")
    console.find(".memory-card")
    console.wait(lambda d: len(d.find_elements("css selector", ".memory-card")) == len(named))
    # Then each memory is shown under the section the API names for it
    shown = console.driver.execute_script(
        """return Object.fromEntries([...document.querySelectorAll(".memory-card")].map(
             (c) => [c.dataset.memoryId, c.closest("section.memory-section").dataset.section]));"""
    )
    assert shown == named
