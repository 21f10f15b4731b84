"""Session close through HTTP with the default (learned) extractor, read back with
GET /v1/sessions/{id}/extraction: every statement is listed with its decision and reason; the form
and speaker rules hold whatever the model says (a question is no fact, an agent's sentence is no
customer claim, a plan tier is checked against the live system of record instead of being queued);
the audit counts the decisions without content; erasure removes the report."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.local.worker import QueuePoller

pytestmark = pytest.mark.e2e

TENANT = "explain"
# The repository example's first conversation (examples/support_copilot.py), as it closes it.
EXAMPLE_TURNS = [
    {
        "speaker": "customer",
        "text": "Hi, this is Dana at Northwind. I prefer email communication, please don't call me.",
    },
    {"speaker": "agent", "text": "Thanks! I don't have anything on file yet."},
    {
        "speaker": "customer",
        "text": "Your sales rep said we could get a 15% discount on the renewal. Can you confirm?",
    },
    {
        "speaker": "agent",
        "text": "I can't confirm a discount myself; I've asked the account team to review it.",
    },
    {"speaker": "customer", "text": "Great. When will we get the renewal quote?"},
    {"speaker": "agent", "text": "I'll send the renewal quote by Friday."},
]


@pytest.fixture(scope="module")
def poller(local_aws: Any) -> QueuePoller:
    return QueuePoller(local_aws.queue_url, endpoint_url=local_aws.endpoint_url, region="us-east-1")


@pytest.fixture(scope="module")
def tokens(api: Any) -> dict[str, str]:
    return {
        "agent": api.token(TENANT, "copilot", ["agent"], clearance="confidential"),
        "reviewer": api.token(TENANT, "rev-1", ["reviewer"], clearance="confidential"),
        "integration": api.token(TENANT, "crm", ["integration"], clearance="confidential"),
        "auditor": api.token(TENANT, "aud-1", ["auditor"]),
        "privacy": api.token(TENANT, "dpo-1", ["privacy_officer"]),
    }


def close(
    api: Any, poller: QueuePoller, token: str, session: str, subject: str, turns: list[dict[str, str]]
) -> None:
    body = {"subject_id": subject, "channel": "chat", "occurred_at": "2026-10-02T15:00:00Z", "turns": turns}
    assert api.post(f"/v1/sessions/{session}/close", body, token=token).status == 202
    poller.drain()
    assert api.get(f"/v1/sessions/{session}", token=token).body["status"] == "processed"


def statement(report: dict[str, Any], text: str) -> dict[str, Any]:
    found = [s for s in report["statements"] if s["text"] == text]
    assert len(found) == 1, (text, report["statements"])
    return found[0]


@pytest.fixture(scope="module")
def example_report(api: Any, poller: QueuePoller, tokens: dict[str, str]) -> dict[str, Any]:
    close(api, poller, tokens["agent"], "sess-example", "ACC-EXAMPLE", EXAMPLE_TURNS)
    r = api.get("/v1/sessions/sess-example/extraction", token=tokens["agent"])
    assert r.status == 200, r.body
    return dict(r.body)


def test_the_report_lists_every_statement_with_a_decision_and_a_reason(
    example_report: dict[str, Any],
) -> None:
    # Then every statement of the session is there, in order, each with a decision and a reason code
    texts = [s["text"] for s in example_report["statements"]]
    assert texts[0] == "Hi, this is Dana at Northwind."
    assert "I prefer email communication, please don't call me." in texts
    assert len(texts) == 10
    assert example_report["available"] is True and example_report["subject_id"] == "ACC-EXAMPLE"
    for s in example_report["statements"]:
        assert s["decision"] in {
            "admitted",
            "pending_approval",
            "quarantined",
            "not_stored",
            "superseded",
            "duplicate",
        }
        assert s["reason"] and s["score"] is not None
    # And what was stored names its memory
    preference = statement(example_report, "I prefer email communication, please don't call me.")
    assert preference["decision"] == "admitted" and preference["memory_id"].startswith("mem_")


def test_a_question_is_not_stored_as_a_fact(example_report: dict[str, Any]) -> None:
    question = statement(example_report, "When will we get the renewal quote?")
    assert question["decision"] == "not_stored" and question["reason"] == "question_not_a_fact"


def test_an_agent_sentence_is_not_stored_as_a_customer_claim(example_report: dict[str, Any]) -> None:
    agent = statement(
        example_report, "I can't confirm a discount myself; I've asked the account team to review it."
    )
    assert agent["speaker"] == "agent"
    assert agent["decision"] == "not_stored" and agent["reason"] == "agent_sentence_not_a_customer_claim"


def test_the_review_queue_holds_only_the_discount(
    api: Any, example_report: dict[str, Any], tokens: dict[str, str]
) -> None:
    pending = api.get(
        "/v1/subjects/ACC-EXAMPLE/memories?status=pending_approval", token=tokens["agent"]
    ).body["memories"]
    assert [m["content"] for m in pending] == [
        "Your sales rep said we could get a 15% discount on the renewal."
    ]
    assert statement(example_report, pending[0]["content"])["decision"] == "pending_approval"


def test_the_audit_counts_the_decisions_without_content(
    api: Any, example_report: dict[str, Any], tokens: dict[str, str]
) -> None:
    events = api.get("/v1/audit?subject_id=ACC-EXAMPLE&limit=200", token=tokens["auditor"]).body["events"]
    extracted = [e for e in events if e["event_type"] == "session_extracted"]
    assert len(extracted) == 1
    payload = extracted[0]["payload"]
    assert payload["session_id"] == "sess-example" and payload["statements"] == 10
    assert sum(payload["decisions"].values()) == 10 and payload["decisions"]["pending_approval"] == 1
    assert "renewal" not in str(extracted[0]).lower()


def test_a_statement_whose_memory_is_above_the_readers_clearance_shows_no_text(
    api: Any, example_report: dict[str, Any]
) -> None:
    # Given an agent cleared for internal records only (the held discount is confidential)
    internal = api.token(TENANT, "copilot-2", ["agent"], clearance="internal")
    # When it reads the report
    report = api.get("/v1/sessions/sess-example/extraction", token=internal).body
    # Then the discount's statement is there, decided, without its text or memory
    held = [s for s in report["statements"] if s["decision"] == "pending_approval"]
    assert len(held) == 1 and held[0]["withheld"] is True and "memory_id" not in held[0]
    assert "15%" not in str(report)
    # And the confidential-cleared reader sees it
    assert "15%" in str(example_report)


def test_a_reviewer_reads_the_report_and_other_roles_do_not(
    api: Any, example_report: dict[str, Any], tokens: dict[str, str]
) -> None:
    assert api.get("/v1/sessions/sess-example/extraction", token=tokens["reviewer"]).status == 200
    assert api.get("/v1/sessions/sess-example/extraction", token=tokens["auditor"]).status == 403
    assert api.get("/v1/sessions/no-such-session/extraction", token=tokens["agent"]).status == 404


@pytest.fixture
def plan_on_record(api: Any, container: Any, tokens: dict[str, str]) -> Iterator[str]:
    """ACC-PLAN: the CRM's plan tier as a system-of-record memory, and the live value Standard."""
    body = {
        "subject_id": "ACC-PLAN",
        "type": "fact",
        "category": "ACCOUNT_PROFILE",
        "slot": "account.plan_tier",
        "content": "Plan tier: Standard.",
        "value": {"plan_tier": "standard"},
        "source": {"kind": "system_of_record", "system": "crm"},
    }
    r = api.post("/v1/memories", body, token=tokens["integration"])
    assert r.status in (200, 201), r.body
    container.system_of_record.set_values(TENANT, "ACC-PLAN", {"plan_tier": "standard"})
    yield r.body["memory"]["id"]


def test_a_plan_tier_claim_is_checked_against_the_live_value_not_queued(
    api: Any, poller: QueuePoller, tokens: dict[str, str], plan_on_record: str
) -> None:
    # Given the system of record says Standard
    # When the customer says otherwise in a session
    close(
        api,
        poller,
        tokens["agent"],
        "sess-plan",
        "ACC-PLAN",
        [{"speaker": "customer", "text": "Our account is Premium."}],
    )
    # Then the claim is not a review item, and not a memory of its own
    pending = api.get("/v1/subjects/ACC-PLAN/memories?status=pending_approval", token=tokens["agent"]).body
    assert pending["memories"] == []
    report = api.get("/v1/sessions/sess-plan/extraction", token=tokens["agent"]).body
    claim = statement(report, "Our account is Premium.")
    assert claim["decision"] == "not_stored" and claim["reason"] == "contradicts_live_value"
    # And the plan tier on record is flagged for revalidation
    assert claim["memory_id"] == plan_on_record
    record = api.get(f"/v1/memories/{plan_on_record}", token=tokens["agent"]).body
    assert record["needs_revalidation"] is True


def test_a_plan_tier_claim_matching_the_live_value_confirms_it(
    api: Any, poller: QueuePoller, tokens: dict[str, str], plan_on_record: str
) -> None:
    close(
        api,
        poller,
        tokens["agent"],
        "sess-plan-2",
        "ACC-PLAN",
        [{"speaker": "customer", "text": "We're on the Standard plan."}],
    )
    report = api.get("/v1/sessions/sess-plan-2/extraction", token=tokens["agent"]).body
    claim = statement(report, "We're on the Standard plan.")
    assert claim["decision"] == "not_stored" and claim["reason"] == "matches_live_value"
    assert (
        api.get(f"/v1/memories/{plan_on_record}", token=tokens["agent"]).body["needs_revalidation"] is False
    )


def test_erasure_removes_the_report(
    api: Any, poller: QueuePoller, container: Any, tokens: dict[str, str]
) -> None:
    # Given a processed session with its report
    close(api, poller, tokens["agent"], "sess-erase", "ACC-GONE", EXAMPLE_TURNS[:2])
    assert api.get("/v1/sessions/sess-erase/extraction", token=tokens["agent"]).body["statements"]
    # When the subject is erased
    started = api.post(
        "/v1/subjects/ACC-GONE/erasure", {"reason": "gdpr_article_17"}, token=tokens["privacy"]
    )
    deadline = time.monotonic() + 60
    while (done := api.get(f"/v1/erasures/{started.body['erasure_id']}", token=tokens["privacy"]).body)[
        "status"
    ] == "running":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    # Then the erasure verified the reports layer empty, and no report is left
    assert done["status"] == "verified"
    verify = next(s for s in done["steps"] if s["name"] == "verify")
    assert verify["verification"]["extraction_reports"] == 0
    assert api.get("/v1/sessions/sess-erase/extraction", token=tokens["agent"]).status == 404
    with container.db.tenant_transaction(TENANT) as conn:
        left = conn.execute(
            "SELECT count(*) AS n FROM extraction_reports WHERE subject_id = 'ACC-GONE'"
        ).fetchone()
    assert left["n"] == 0


def test_the_report_ends_with_the_transcripts_retention(
    api: Any, poller: QueuePoller, container: Any, tokens: dict[str, str]
) -> None:
    from datetime import UTC, datetime, timedelta

    from agent_memory.services.lifecycle import LifecycleService

    # Given a processed session with its report
    close(api, poller, tokens["agent"], "sess-expire", "ACC-OLD", EXAMPLE_TURNS[:2])
    assert api.get("/v1/sessions/sess-expire/extraction", token=tokens["agent"]).body["available"] is True
    # When the nightly run passes the transcript's retention (7 days here)
    LifecycleService(
        container.store,
        container.policies,
        container.objects,
        transcript_ttl_days=7,
        clock=lambda: datetime.now(UTC) + timedelta(days=8),
    ).purge(tenants=[TENANT], consolidate=False)
    # Then the report went with the transcript; the session's outcome stays
    report = api.get("/v1/sessions/sess-expire/extraction", token=tokens["agent"]).body
    assert report["available"] is False and report["statements"] == []
    assert api.get("/v1/sessions/sess-expire", token=tokens["agent"]).body["status"] == "processed"
