"""Contested records (seed 002): a lower-authority source contradicts the active record of a slot.
Both carry a `contested` marker; the active one stays served, flagged in retrieval; the newcomer
waits in the review queue with a word-level diff against it; the reviewer's decision clears the
marker on both."""

import itertools

import pytest

from agent_memory.domain.context import CONTESTED_NOTE

pytestmark = pytest.mark.e2e
TENANT = "contest"
_subjects = itertools.count(1)


@pytest.fixture(scope="module")
def t(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"]),
        "reviewer": api.token(TENANT, "rev-1", ["reviewer"]),
        "auditor": api.token(TENANT, "aud-1", ["auditor"]),
    }


def write(api, token, subject, content, kind, slot="preference.contact_channel"):
    reply = api.post(
        "/v1/memories",
        {
            "subject_id": subject,
            "type": "preference",
            "slot": slot,
            "content": content,
            "source": {"kind": kind},
        },
        token=token,
    )
    assert reply.status in (200, 201), reply.body
    return reply.body


@pytest.fixture
def contest(api, t):
    """An active preference stated by the customer and confirmed, and a later customer claim that
    contradicts it."""
    subject = f"ACC-CONTEST-{next(_subjects)}"
    active = write(
        api, t["agent"], subject, "Send renewal paperwork by email, never by phone.", "customer_confirmed"
    )
    newcomer = write(
        api,
        t["agent"],
        subject,
        "Courier the renewal paperwork to the head office, never by email.",
        "customer_claim",
    )
    return subject, active, newcomer


def get(api, t, memory_id):
    reply = api.get(f"/v1/memories/{memory_id}", token=t["agent"])
    assert reply.status == 200, reply.body
    return reply.body


def retrieve(api, t, subject):
    reply = api.post(
        "/v1/retrieve",
        {"subject_id": subject, "query": "how to send the renewal paperwork"},
        token=t["agent"],
    )
    assert reply.status == 200, reply.body
    return reply.body


def queue_item(api, t, memory_id):
    items = api.get("/v1/review?limit=200", token=t["reviewer"]).body["items"]
    return next((i for i in items if i["memory"]["id"] == memory_id), None)


def test_a_lower_authority_contradiction_marks_both_records_contested(api, t, contest):
    _subject, active, newcomer = contest
    # Then the newcomer is contested and waits; both records carry the marker
    assert newcomer["decision"] == "contested"
    assert "contested" in newcomer["memory"]["flags"]
    assert "contested" in get(api, t, active["memory"]["id"])["flags"]
    assert get(api, t, newcomer["memory"]["id"])["status"] == "contested"


def test_retrieval_still_serves_the_active_record_flagged_contested(api, t, contest):
    subject, active, newcomer = contest
    # When an agent retrieves
    body = retrieve(api, t, subject)
    # Then the active record is served, flagged in the response memory and in its context line
    served = {m["id"]: m for m in body["memories"]}
    assert served[active["memory"]["id"]]["contested"] is True
    assert newcomer["memory"]["id"] not in served
    line = next(ln for ln in body["context"].splitlines() if active["memory"]["id"] in ln)
    assert CONTESTED_NOTE.strip("; ") in line


def test_the_newcomer_waits_in_the_review_queue_with_a_word_level_diff(api, t, contest):
    _subject, active, newcomer = contest
    item = queue_item(api, t, newcomer["memory"]["id"])
    assert item is not None and item["active"]["id"] == active["memory"]["id"]
    ops = item["diff"]["content"]
    assert _words(ops) == (
        "Send renewal paperwork by email, never by phone.",
        "Courier the renewal paperwork to the head office, never by email.",
    )
    assert {"op": "equal", "text": "renewal paperwork"} in ops and {"op": "removed", "text": "phone."} in ops
    assert item["diff"]["fields"]["authority"] == {
        "active": "customer_confirmed",
        "candidate": "customer_claim",
    }


def _words(ops):
    """Both texts rebuilt from a diff: the active's (equal + removed), the candidate's (equal + added)."""
    active = " ".join(o["text"] for o in ops if o["op"] in ("equal", "removed"))
    candidate = " ".join(o["text"] for o in ops if o["op"] in ("equal", "added"))
    return active, candidate


def test_a_diff_rebuilds_both_texts():
    from agent_memory.domain.review_diff import word_diff

    a, b = "Seat price is $42 per seat per month", "Seat price is $40 per seat each month from May"
    ops = word_diff(a, b)
    assert _words(ops) == (a, b)
    assert {"op": "removed", "text": "$42"} in ops and {"op": "added", "text": "$40"} in ops


@pytest.mark.parametrize("decision", ["reject", "approve"])
def test_the_reviewers_decision_clears_the_marker_on_both(api, t, contest, decision):
    subject, active, newcomer = contest
    active_id, newcomer_id = active["memory"]["id"], newcomer["memory"]["id"]
    # When the reviewer decides
    reply = api.post(f"/v1/memories/{newcomer_id}/{decision}", {"note": "checked"}, token=t["reviewer"])
    assert reply.status == 200, reply.body
    # Then neither record carries the marker, and the decision left the queue
    assert "contested" not in reply.body["memory"]["flags"]
    assert "contested" not in get(api, t, active_id)["flags"]
    assert "contested" not in get(api, t, newcomer_id)["flags"]
    assert queue_item(api, t, newcomer_id) is None
    served = {m["id"]: m for m in retrieve(api, t, subject)["memories"]}
    kept = newcomer_id if decision == "approve" else active_id
    assert served[kept]["contested"] is False
    assert CONTESTED_NOTE not in retrieve(api, t, subject)["context"]


def test_rejecting_one_of_two_contesting_records_keeps_the_active_one_marked(api, t, contest):
    subject, active, first = contest
    second = write(
        api, t["agent"], subject, "Paperwork goes by fax to the legal office only.", "customer_claim"
    )
    assert second["decision"] == "contested"
    # When the reviewer rejects the first
    assert api.post(f"/v1/memories/{first['memory']['id']}/reject", {}, token=t["reviewer"]).status == 200
    # Then the second still contests the active record
    assert "contested" in get(api, t, active["memory"]["id"])["flags"]
    # and when the second is rejected too, the marker goes
    assert api.post(f"/v1/memories/{second['memory']['id']}/reject", {}, token=t["reviewer"]).status == 200
    assert "contested" not in get(api, t, active["memory"]["id"])["flags"]
    events = api.get(f"/v1/audit?memory_id={active['memory']['id']}", token=t["auditor"]).body["events"]
    assert [e["reason"] for e in events if e["event_type"] == "memory_updated"] == [
        "contested_by_lower_authority",
        "contested_by_lower_authority",
        "contest_resolved_by_reviewer",
    ]


def test_a_newer_version_of_a_contested_record_stays_marked_while_the_review_waits(api, t, contest):
    subject, _active, newcomer = contest
    # When the customer confirms a new version of the slot before the reviewer decides
    newer = write(api, t["agent"], subject, "Paperwork by email only; no calls at all.", "customer_confirmed")
    assert newer["decision"] == "admitted"
    # Then the served version carries the marker, and the reviewer's decision clears it
    assert "contested" in newer["memory"]["flags"]
    assert api.post(f"/v1/memories/{newcomer['memory']['id']}/reject", {}, token=t["reviewer"]).status == 200
    assert "contested" not in get(api, t, newer["memory"]["id"])["flags"]


def test_an_unrelated_write_is_not_marked(api, t):
    subject = f"ACC-CONTEST-{next(_subjects)}"
    first = write(api, t["agent"], subject, "Prefers German for renewal documents.", "customer_claim")
    stronger = write(api, t["agent"], subject, "Prefers English for renewal documents.", "customer_confirmed")
    assert stronger["decision"] == "admitted"
    assert "contested" not in stronger["memory"]["flags"]
    assert "contested" not in get(api, t, first["memory"]["id"])["flags"]


def test_a_mark_whose_contest_ended_without_review_is_cleared_by_the_nightly_run(api, t, contest, container):
    # Given a contested slot whose contesting record then goes away without a decision
    _, active, newcomer = contest
    assert "contested" in get(api, t, active["memory"]["id"])["flags"]
    gone = api.request(
        "DELETE",
        f"/v1/memories/{newcomer['memory']['id']}",
        {"reason": "customer withdrew it"},
        token=t["agent"],
    )
    assert gone.status == 200, gone.body
    # When the nightly run settles marks, in batches smaller than the number of marks
    container.lifecycle.batch_size = 1
    try:
        settled = container.lifecycle.settle_contest_marks(TENANT)
    finally:
        container.lifecycle.batch_size = 1000
    # Then the active record carries no marker, the settling is audited once, and a rerun does nothing
    assert settled >= 1
    assert "contested" not in get(api, t, active["memory"]["id"])["flags"]
    events = api.get(f"/v1/audit?memory_id={active['memory']['id']}", token=t["auditor"]).body["events"]
    assert [e["reason"] for e in events].count("contest_ended_without_review") == 1
    assert container.lifecycle.settle_contest_marks(TENANT) == 0
