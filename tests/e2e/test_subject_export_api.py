"""A subject's export through the HTTP API (the data-access side of erasure): every record in
every status with its history, sessions with their transcript references, legal holds, erasures
and the audit trail, as one JSON document read in pages; each page audited; the clearance rule."""

import json
import time

import pytest

from agent_memory.local.worker import QueuePoller

pytestmark = pytest.mark.e2e

TENANT = "exp"
SUBJECT = "CUST-EXP-1"
MARK = "zq8restrictedexport"


@pytest.fixture(scope="module")
def t(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"], clearance="confidential"),
        "high": api.token(TENANT, "sync-1", ["integration", "agent"], clearance="restricted"),
        "privacy": api.token(TENANT, "dpo-1", ["privacy_officer"], clearance="confidential"),
        "privacy_high": api.token(TENANT, "dpo-2", ["privacy_officer"], clearance="restricted"),
        "auditor": api.token(TENANT, "aud-1", ["auditor"], clearance="restricted"),
        "other_tenant": api.token("exp-other", "dpo-x", ["privacy_officer"], clearance="restricted"),
    }


def pref(content, **extra):
    return {
        "subject_id": SUBJECT,
        "type": "preference",
        "category": "PREFERENCE",
        "slot": "contact.channel",
        "content": content,
        "source": {"kind": "customer_confirmed"},
        **extra,
    }


@pytest.fixture(scope="module")
def held(api, t, local_aws):
    """A subject with an old and a current version of a slot, a record waiting for review, a deleted
    memory, a restricted fact, a closed session and a legal hold."""
    v1 = api.post("/v1/memories", pref("Prefers post."), token=t["agent"]).body["memory"]["id"]
    v2 = api.post("/v1/memories", pref("Prefers email now."), token=t["agent"]).body["memory"]["id"]
    pending = api.post(
        "/v1/memories",
        {
            "subject_id": SUBJECT,
            "type": "fact",
            "category": "CONTRACT_COMMERCIAL",
            "slot": "contract.discount",
            "content": "Customer says 15% off was agreed.",
            "source": {"kind": "customer_claim"},
        },
        token=t["agent"],
    ).body["memory"]["id"]
    gone = api.post(
        "/v1/memories",
        {
            "subject_id": SUBJECT,
            "type": "episode",
            "content": "Asked about the zq8forgotten travel add-on.",
            "source": {"kind": "customer_confirmed"},
        },
        token=t["agent"],
    ).body["memory"]["id"]
    assert (
        api.request("DELETE", f"/v1/memories/{gone}", {"reason": "customer request"}, token=t["agent"]).status
        == 200
    )
    restricted = api.post(
        "/v1/memories",
        {
            "subject_id": SUBJECT,
            "type": "fact",
            "category": "ACCOUNT_PROFILE",
            "slot": "account.risk_rating",
            "content": f"Risk rating high ({MARK}).",
            "source": {"kind": "system_of_record", "system": "risk"},
            "sensitivity": "restricted",
        },
        token=t["high"],
    ).body["memory"]["id"]
    session = {
        "subject_id": SUBJECT,
        "channel": "chat",
        "occurred_at": "2026-10-02T15:00:00Z",
        "turns": [{"speaker": "customer", "text": "My refund was approved last Tuesday."}],
    }
    assert api.post("/v1/sessions/exp-s1/close", session, token=t["agent"]).status == 202
    QueuePoller(local_aws.queue_url, endpoint_url=local_aws.endpoint_url, region="us-east-1").drain()
    hold = api.post(
        f"/v1/subjects/{SUBJECT}/legal-hold", {"hold": True, "reason": "LIT-9"}, token=t["privacy"]
    )
    assert hold.status == 200
    return {"v1": v1, "v2": v2, "pending": pending, "gone": gone, "restricted": restricted}


def export_all(api, token, subject=SUBJECT, limit=None):
    """Every page of the export, concatenated, and the pages' count."""
    doc = {"memories": [], "sessions": [], "erasures": [], "events": []}
    cursor, pages, first = None, 0, None
    while True:
        query = "&".join(
            p for p in (f"cursor={cursor}" if cursor else "", f"limit={limit}" if limit else "") if p
        )
        reply = api.get(f"/v1/subjects/{subject}/export" + (f"?{query}" if query else ""), token=token)
        assert reply.status == 200, reply.body
        pages += 1
        first = first or reply.body
        for name in doc:
            doc[name] += reply.body[name]
        cursor = reply.body["next_cursor"]
        if cursor is None:
            return {**first, **doc}, pages
        assert pages < 500


def test_the_export_holds_every_record_in_every_status_with_sessions_holds_and_trail(api, t, held):
    doc, _ = export_all(api, t["privacy"])
    by_id = {m["id"]: m for m in doc["memories"]}
    # every status: the current and the superseded version of the slot, the pending claim, the deleted one
    assert by_id[held["v2"]]["status"] == "active" and by_id[held["v2"]]["supersedes_id"] == held["v1"]
    assert by_id[held["v1"]]["status"] == "superseded" and by_id[held["v1"]]["content"] == "Prefers post."
    assert by_id[held["pending"]]["status"] == "pending_approval"
    # the deleted memory shows it was deleted, and nothing of what it said
    gone = by_id[held["gone"]]
    assert gone["status"] == "deleted" and gone["content"] == "" and gone["deleted_at"]
    assert "zq8forgotten" not in json.dumps(doc)
    assert doc["tombstones"]["deleted_memories"] == 1
    # the session with its transcript reference and the memories drawn from it
    (session,) = doc["sessions"]
    assert session["session_id"] == "exp-s1" and session["status"] == "processed"
    assert (
        session["transcript"]["key"].endswith("/exp-s1.json") and len(session["transcript"]["sha256"]) == 64
    )
    assert set(session["memory_ids"]) <= set(by_id)
    assert doc["legal_hold"]["held"] is True and doc["legal_hold"]["reason"] == "LIT-9"
    # the trail: who deleted what and why, the hold, without content
    kinds = [e["event_type"] for e in doc["events"]]
    assert "memory_deleted" in kinds and "memory_created" in kinds
    deleted = next(e for e in doc["events"] if e["event_type"] == "memory_deleted")
    assert deleted["memory_id"] == held["gone"] and deleted["actor"] == "agent-1"
    # and why, in the requester's words kept beside the chain (the chain holds their digest)
    assert deleted["free_text"]["reason"] and set(deleted["payload"]["reason"]) == {"side_text_sha256"}


def test_a_record_above_the_callers_clearance_is_left_out_with_every_reference_to_it(api, t, held):
    low, _ = export_all(api, t["privacy"])
    text = json.dumps(low)
    assert MARK not in text and held["restricted"] not in text
    high, _ = export_all(api, t["privacy_high"])
    assert held["restricted"] in {m["id"] for m in high["memories"]}
    assert any(e["memory_id"] == held["restricted"] for e in high["events"])


def test_pages_walk_the_whole_document_without_repeats_or_gaps(api, t, held):
    for i in range(12):
        body = {
            "subject_id": SUBJECT,
            "type": "episode",
            "content": f"Call {i}: went through the statement line by line, item {i}.",
            "source": {"kind": "customer_confirmed"},
        }
        assert api.post("/v1/memories", body, token=t["agent"]).status == 201
    whole, one_page = export_all(api, t["privacy"], limit=200)
    paged, pages = export_all(api, t["privacy"], limit=3)

    assert one_page == 1 and pages > 5
    ids = [m["id"] for m in paged["memories"]]
    assert len(ids) == len(set(ids)) and set(ids) == {m["id"] for m in whole["memories"]}
    assert [s["session_id"] for s in paged["sessions"]] == [s["session_id"] for s in whole["sessions"]]
    seqs = [e["seq"] for e in paged["events"]]
    assert seqs == sorted(set(seqs))
    # every event the single-page export saw is in the paged one (later pages add their own)
    assert {e["seq"] for e in whole["events"]} <= set(seqs)


def test_a_page_size_of_one_ends_and_covers_the_trail_as_it_stood_when_the_export_began(api, t, held):
    # Given the subject's trail as it stands now (a one-page export reads all of it)
    whole, _ = export_all(api, t["privacy"], limit=200)
    # When it is exported one entry at a time (each page writes an event of its own)
    paged, pages = export_all(api, t["privacy"], limit=1)
    # Then the export ends, and holds every event that existed when it began plus the one the
    # one-page export wrote before it - never the events its own pages write
    entries = sum(len(paged[n]) for n in ("memories", "sessions", "erasures", "events"))
    assert pages <= entries + 1
    before = {e["seq"] for e in whole["events"]}
    seqs = [e["seq"] for e in paged["events"]]
    assert before <= set(seqs) and len(seqs) == len(set(seqs))
    assert len(seqs) <= len(before) + 1


def test_every_page_is_audited(api, t, held):
    before = api.get(f"/v1/audit?subject_id={SUBJECT}&limit=500", token=t["auditor"]).body["events"]
    _, pages = export_all(api, t["privacy"], limit=10)
    events = []
    cursor = str(before[-1]["seq"]) if before else None
    while True:
        page = api.get(
            f"/v1/audit?subject_id={SUBJECT}&limit=500" + (f"&cursor={cursor}" if cursor else ""),
            token=t["auditor"],
        ).body
        events += page["events"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    exported = [e for e in events if e["event_type"] == "subject_exported"]
    assert len(exported) == pages
    assert all(e["actor"] == "dpo-1" and e["subject_id"] == SUBJECT for e in exported)
    assert [e["payload"]["complete"] for e in exported] == [False] * (pages - 1) + [True]


def test_an_erased_subject_exports_its_erasure_and_nothing_else(api, t):
    body = {
        "subject_id": "CUST-EXP-2",
        "type": "episode",
        "content": "Asked about ISAs.",
        "source": {"kind": "customer_confirmed"},
    }
    assert api.post("/v1/memories", body, token=t["agent"]).status == 201
    started = api.post(
        "/v1/subjects/CUST-EXP-2/erasure", {"reason": "gdpr_article_17"}, token=t["privacy"]
    ).body
    for _ in range(600):
        if api.get(f"/v1/erasures/{started['erasure_id']}", token=t["privacy"]).body["status"] != "running":
            break
        time.sleep(0.05)
    doc, _ = export_all(api, t["privacy"], subject="CUST-EXP-2")
    assert doc["memories"] == [] and doc["sessions"] == []
    (erasure,) = doc["erasures"]
    assert erasure["erasure_id"] == started["erasure_id"] and erasure["status"] == "verified"
    assert erasure["receipt"] is not None and doc["tombstones"]["erasures"] >= 1


def test_an_unknown_subject_or_another_tenants_exports_empty(api, t, held):
    for subject, token in (("CUST-NOBODY", t["privacy"]), (SUBJECT, t["other_tenant"])):
        doc, pages = export_all(api, token, subject=subject)
        assert pages == 1 and doc["memories"] == doc["sessions"] == doc["erasures"] == []
        assert doc["legal_hold"] == {
            "held": False,
            "hold_id": None,
            "reason": None,
            "set_by": None,
            "set_at": None,
        }


@pytest.mark.parametrize("role", ["agent", "auditor"])
def test_only_a_privacy_officer_may_export(api, t, role):
    reply = api.get(f"/v1/subjects/{SUBJECT}/export", token=t[role])
    assert reply.status == 403 and reply.body["error"]["code"] == "forbidden"
    assert api.get(f"/v1/subjects/{SUBJECT}/export").status == 401


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("cursor=not-a-cursor", "cursor"),
        ("cursor=eyJzIjogIm5vcGUiLCAiayI6IG51bGx9", "cursor"),  # {"s": "nope", "k": null}
        ("limit=0", "limit"),
        ("limit=201", "limit"),  # above the policy's page size
        ("limit=many", "limit"),
    ],
)
def test_bad_paging_is_422_naming_the_field_and_audits_nothing(api, t, query, field):
    before = api.get(f"/v1/audit?subject_id={SUBJECT}&limit=500", token=t["auditor"]).body["events"]
    reply = api.get(f"/v1/subjects/{SUBJECT}/export?{query}", token=t["privacy"])
    assert reply.status == 422 and reply.body["error"]["field"] == field, reply.body
    after = api.get(f"/v1/audit?subject_id={SUBJECT}&limit=500", token=t["auditor"]).body["events"]
    assert [e["seq"] for e in after] == [e["seq"] for e in before]


def test_the_page_size_is_a_bounded_policy_field(api):
    admin = api.token("exp-pol", "admin-1", ["admin"])
    privacy = api.token("exp-pol", "dpo-1", ["privacy_officer"])
    # Given bounds on the policy's page size: out of them is a 422 naming the field, nothing stored
    for size in (9, 1001, "big"):
        refused = api.put(
            "/v1/policy", {"profile": "support", "overrides": {"export_page_size": size}}, token=admin
        )
        assert refused.status == 422 and refused.body["error"]["field"] == "overrides.export_page_size"
    assert api.get("/v1/policy", token=admin).body["effective"]["export_page_size"] == 200
    # When the tenant lowers it, the export's pages follow it, and asking for more is refused
    changed = api.put(
        "/v1/policy", {"profile": "support", "overrides": {"export_page_size": 10}}, token=admin
    )
    assert changed.status == 200 and changed.body["effective"]["export_page_size"] == 10
    assert api.get("/v1/subjects/CUST-P/export?limit=10", token=privacy).status == 200
    too_many = api.get("/v1/subjects/CUST-P/export?limit=11", token=privacy)
    assert too_many.status == 422 and too_many.body["error"]["field"] == "limit"


def test_the_export_holds_the_subjects_live_working_memory(api, t, held):
    # Given a live working-memory value of the subject in an open session
    put = api.put(
        "/v1/sessions/S-EXPORT-WM/working/goal",
        {"subject_id": SUBJECT, "value": {"goal": "compare two ISA options"}, "ttl_seconds": 300},
        token=t["agent"],
    )
    assert put.status == 200, put.body
    # When the subject is exported
    first = api.get(f"/v1/subjects/{SUBJECT}/export", token=t["privacy"]).body
    # Then its first page lists the value with its session and expiry
    assert {"session_id": "S-EXPORT-WM", "key": "goal"} in [
        {"session_id": w["session_id"], "key": w["key"]} for w in first["working"]
    ]
    assert [w["value"] for w in first["working"] if w["key"] == "goal"] == [
        {"goal": "compare two ISA options"}
    ]
