"""Erasure as a property, through the HTTP API (DEL-01): whatever a subject left behind -
memories of several kinds (with sentence vectors), closed sessions and their transcripts,
idempotent replays, retrievals - erasure empties every layer of that subject, leaves every
other subject exactly as it was, verifies before its receipt, and keeps it erased."""

import itertools
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_memory.local.worker import QueuePoller

pytestmark = pytest.mark.e2e
TENANT = "eraseprop"
_runs = itertools.count()

TEXTS = [  # each has two sentences of 40+ characters, so each memory also gets sentence vectors
    "Asked about refinancing the mortgage next spring. Wants a fixed rate for at least five years.",
    "Prefers to be called after six in the evening. Never wants calls during working hours at all.",
    "Reported that the mobile app logs them out daily. It happens every morning right after the update.",
    "Considering moving the pension to a lower-fee fund. Asked for a comparison of the last three years.",
]
histories = st.lists(
    st.tuples(
        st.sampled_from(["target", "other"]),
        st.sampled_from(["memory", "keyed_memory", "session", "retrieval"]),
        st.sampled_from(TEXTS),
    ),
    min_size=1,
    max_size=6,
)


@pytest.fixture(scope="module")
def t(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"], clearance="restricted"),
        "privacy": api.token(TENANT, "dpo-1", ["privacy_officer"]),
        "reviewer": api.token(TENANT, "rev-1", ["reviewer"], clearance="restricted"),
    }


@pytest.fixture(scope="module")
def poller(local_aws):
    return QueuePoller(local_aws.queue_url, endpoint_url=local_aws.endpoint_url, region="us-east-1")


def footprint(container, subject: str) -> dict:
    with container.db.tenant_transaction(TENANT) as conn:
        row = conn.execute(
            """SELECT (SELECT count(*) FROM memory_records WHERE subject_id = %(s)s) AS records,
                      (SELECT count(*) FROM memory_sentences WHERE subject_id = %(s)s) AS sentences,
                      (SELECT count(*) FROM sessions WHERE subject_id = %(s)s) AS sessions,
                      (SELECT count(*) FROM idempotency_keys WHERE subject_id = %(s)s) AS replies,
                      (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM memory_records
                        WHERE subject_id = %(s)s) AS ids""",
            {"s": subject},
        ).fetchone()
    return {**row, "objects": container.objects.count_prefix(f"transcripts/{TENANT}/{subject}/")}


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=histories)
def test_erasure_empties_every_layer_of_the_subject_and_only_that_subject(api, t, container, poller, history):
    # Given two subjects with any history of memories, keyed writes, closed sessions and retrievals
    n = next(_runs)
    subjects = {"target": f"CUST-ERP-{n}", "other": f"CUST-KEEP-{n}"}
    written = []
    for i, (who, what, text) in enumerate(history):
        subject = subjects[who]
        if what in ("memory", "keyed_memory"):
            body = {
                "subject_id": subject,
                "type": "episode",
                "content": text,
                "source": {"kind": "customer_confirmed"},
            }
            if what == "keyed_memory":
                body["idempotency_key"] = f"k-{n}-{i}"
            assert api.post("/v1/memories", body, token=t["agent"]).status in (200, 201)
            written.append((who, body))
        elif what == "session":
            turns = [{"speaker": "customer", "text": "I prefer email communication. " + text}]
            body = {"subject_id": subject, "occurred_at": "2026-10-02T15:00:00Z", "turns": turns}
            assert api.post(f"/v1/sessions/s-{n}-{i}/close", body, token=t["agent"]).status == 202
        else:
            api.post("/v1/retrieve", {"subject_id": subject, "query": text}, token=t["agent"])
    poller.drain()
    other_before = footprint(container, subjects["other"])
    before = footprint(container, subjects["target"])
    if any(who == "target" and what in ("memory", "keyed_memory") for who, what, _ in history):
        # (not vacuous: the target has records and sentence vectors to erase)
        assert before["records"] > 0 and before["sentences"] > 0, before
    # When the target is erased
    started = api.post(
        f"/v1/subjects/{subjects['target']}/erasure", {"reason": "gdpr_article_17"}, token=t["privacy"]
    )
    assert started.status == 202, started.body
    deadline = time.monotonic() + 60
    while (done := api.get(f"/v1/erasures/{started.body['erasure_id']}", token=t["privacy"]).body)[
        "status"
    ] == "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    # Then it is verified, and every layer of the target is empty
    assert done["status"] == "verified", done
    assert all(v == 0 for v in done["receipt"]["verification"].values())
    left = footprint(container, subjects["target"])
    assert {k: left[k] for k in ("records", "sentences", "sessions", "replies", "objects")} == dict.fromkeys(
        ("records", "sentences", "sessions", "replies", "objects"), 0
    )
    # And the other subject is exactly as it was
    assert footprint(container, subjects["other"]) == other_before
    # And nothing of the target comes back: retrieval is empty and replayed writes are tombstoned
    r = api.post(
        "/v1/retrieve",
        {"subject_id": subjects["target"], "query": "mortgage pension email"},
        token=t["agent"],
    )
    assert r.status == 200 and r.body["memories"] == []
    for who, body in written:
        if who == "target":
            replay = api.post("/v1/memories", {**body, "idempotency_key": None}, token=t["agent"])
            assert replay.status == 409 and replay.body["error"]["reason"] == "tombstoned", replay.body
    listed = api.get(f"/v1/subjects/{subjects['target']}/memories?status=active", token=t["reviewer"])
    assert listed.status == 200 and listed.body["memories"] == []
    assert container.reads.verify_audit(TENANT).ok
