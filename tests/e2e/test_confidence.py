"""Confidence that means something (seed 002): a write below its type's admission threshold is not
stored; every context line shows the memory's confidence; a contest lowers both records'
confidence until a reviewer decides, and the decision gives the winner its confidence back."""

import itertools

import pytest

pytestmark = pytest.mark.e2e
TENANT = "confidence"
_subjects = itertools.count(1)
SLOT = "preference.contact_channel"


@pytest.fixture(scope="module")
def t(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"]),
        "reviewer": api.token(TENANT, "rev-1", ["reviewer"]),
    }


def subject():
    return f"ACC-CONF-{next(_subjects)}"


def write(api, token, body):
    reply = api.post("/v1/memories", body, token=token)
    assert reply.status in (200, 201), reply.body
    return reply.body


def preference(subject_id, content, kind, confidence):
    return {
        "subject_id": subject_id,
        "type": "preference",
        "slot": SLOT,
        "content": content,
        "source": {"kind": kind},
        "confidence": confidence,
    }


def confidence_of(api, t, memory_id):
    reply = api.get(f"/v1/memories/{memory_id}", token=t["agent"])
    assert reply.status == 200, reply.body
    return reply.body["confidence"]


def context_line(api, t, subject_id, memory_id):
    reply = api.post(
        "/v1/retrieve",
        {"subject_id": subject_id, "query": "how to send the renewal paperwork"},
        token=t["agent"],
    )
    assert reply.status == 200, reply.body
    return next(ln for ln in reply.body["context"].splitlines() if memory_id in ln)


def test_a_fact_below_the_threshold_is_refused_with_the_reason(api, t):
    # Given a fact stated with confidence 0.1 (the fact threshold of the presets is 0.5)
    body = {
        "subject_id": subject(),
        "type": "fact",
        "category": "TECHNICAL_ENVIRONMENT",
        "slot": "environment.crm",
        "content": "They might be moving to another CRM, not sure.",
        "source": {"kind": "customer_claim"},
        "confidence": 0.1,
    }
    # When it is written
    reply = write(api, t["agent"], body)
    # Then it is refused (kept only as the rejected row the audit names), with a code and a sentence
    assert reply["decision"] == "rejected"
    assert "below_confidence_threshold" in reply["reasons"]
    assert reply["memory"]["status"] == "rejected"
    assert "confidence is below" in reply["explanation"]
    # and recall never serves it
    served = api.post(
        "/v1/retrieve", {"subject_id": body["subject_id"], "query": "which CRM do they use"}, token=t["agent"]
    )
    assert served.status == 200 and served.body["memories"] == []


def test_a_fact_at_the_threshold_is_admitted(api, t):
    body = preference(subject(), "Send renewal paperwork by email.", "customer_claim", 0.5)
    assert write(api, t["agent"], body)["decision"] == "admitted"


def test_the_context_line_shows_the_confidence(api, t):
    # Given a preference stated with confidence 0.6
    sid = subject()
    written = write(
        api, t["agent"], preference(sid, "Send renewal paperwork by email.", "customer_claim", 0.6)
    )
    # When an agent retrieves, then its line says how confident the record is
    assert "confidence 0.60" in context_line(api, t, sid, written["memory"]["id"])


@pytest.fixture
def contest(api, t):
    """A confirmed preference at 0.9, then a customer's claim at 0.7 that contradicts it."""
    sid = subject()
    active = write(
        api,
        t["agent"],
        preference(sid, "Send renewal paperwork by email, never by phone.", "customer_confirmed", 0.9),
    )
    newcomer = write(
        api,
        t["agent"],
        preference(
            sid, "Courier the renewal paperwork to the head office, never by email.", "customer_claim", 0.7
        ),
    )
    assert newcomer["decision"] == "contested"
    return sid, active["memory"]["id"], newcomer["memory"]["id"]


def test_a_contest_lowers_both_confidences_and_the_prompt_says_so(api, t, contest):
    sid, active_id, newcomer_id = contest
    # Then both records' confidence is multiplied by the policy's factor (0.8)
    assert confidence_of(api, t, active_id) == pytest.approx(0.72, abs=1e-6)
    assert confidence_of(api, t, newcomer_id) == pytest.approx(0.56, abs=1e-6)
    line = context_line(api, t, sid, active_id)
    assert "confidence 0.72" in line and "confidence lowered" in line


@pytest.mark.parametrize("decision", ["reject", "approve"])
def test_a_reviewers_decision_restores_the_winners_confidence(api, t, contest, decision):
    sid, active_id, newcomer_id = contest
    # When the reviewer decides the contest
    reply = api.post(f"/v1/memories/{newcomer_id}/{decision}", {"note": "checked"}, token=t["reviewer"])
    assert reply.status == 200, reply.body
    # Then the record left serving has its confidence back, and the line no longer says lowered
    winner, before = (newcomer_id, 0.7) if decision == "approve" else (active_id, 0.9)
    assert confidence_of(api, t, winner) == pytest.approx(before, abs=1e-6)
    line = context_line(api, t, sid, winner)
    assert f"confidence {before:.2f}" in line and "confidence lowered" not in line
