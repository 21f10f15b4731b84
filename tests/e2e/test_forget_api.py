"""Forgetting one memory on request through the HTTP API (seeds 002 and 004): content, value,
vectors, sentence vectors and full-text entry gone at once; a content-free entry in the history; a
tombstone against its return by a write or a replayed session; an audit event without content."""

import json

import pytest

from agent_memory.domain.extraction import ExtractionResult
from agent_memory.local.worker import QueuePoller

pytestmark = pytest.mark.e2e

TENANT = "fgt"
MARK = "zq9forgetmark"  # a word only the memories to be forgotten contain


@pytest.fixture(scope="module")
def t(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"], clearance="confidential"),
        "high": api.token(TENANT, "sync-1", ["integration", "agent"], clearance="restricted"),
        "privacy": api.token(TENANT, "dpo-1", ["privacy_officer"]),
        "reviewer": api.token(TENANT, "rev-1", ["reviewer"], clearance="restricted"),
        "auditor": api.token(TENANT, "aud-1", ["auditor"], clearance="restricted"),
        "integration": api.token(TENANT, "crm-1", ["integration"]),
        "other_tenant": api.token(
            "fgt-other", "agent-x", ["agent", "privacy_officer"], clearance="restricted"
        ),
    }


@pytest.fixture(scope="module")
def poller(local_aws):
    return QueuePoller(local_aws.queue_url, endpoint_url=local_aws.endpoint_url, region="us-east-1")


def preference(subject, content, **extra):
    return {
        "subject_id": subject,
        "type": "preference",
        "category": "PREFERENCE",
        "slot": "contact.channel",
        "content": content,
        "value": {"channel": f"email-{MARK}"},
        "source": {"kind": "customer_confirmed", "system": "chat"},
        **extra,
    }


def delete(api, memory_id, body, token):
    return api.request("DELETE", f"/v1/memories/{memory_id}", body, token=token)


def layers(container, memory_id):
    with container.db.tenant_transaction(TENANT) as conn:
        return conn.execute(
            """SELECT r.status, r.content, r.value, r.confidence_basis, r.embedding IS NOT NULL AS has_vector,
                      r.content_tsv IS NOT NULL AS has_text,
                      (SELECT count(*) FROM memory_sentences s WHERE s.memory_id = r.id) AS sentences,
                      (SELECT count(*) FROM idempotency_keys k WHERE k.memory_id = r.id) AS replies
                 FROM memory_records r WHERE r.id = %s""",
            (memory_id,),
        ).fetchone()


def events_about(api, t, memory_id):
    return api.get(f"/v1/audit?memory_id={memory_id}", token=t["auditor"]).body["events"]


def test_deleting_a_memory_removes_every_copy_of_its_content_at_once(api, t, container):
    # Given a preference with a vector, sentence vectors, a full-text entry and a cached reply
    written = api.post(
        "/v1/memories",
        preference(
            "CUST-F1",
            f"Prefers email for every statement and renewal notice ({MARK}). "
            "Please never call the office before noon on weekdays.",
            idempotency_key="fgt-k1",
            confidence_basis=f"said so twice {MARK}",
        ),
        token=t["agent"],
    )
    assert written.status == 201 and written.body["decision"] == "admitted", written.body
    mid = written.body["memory"]["id"]
    before = layers(container, mid)
    assert before["has_vector"] and before["has_text"] and before["sentences"] == 2 and before["replies"] == 1

    # When the customer asks for it to be deleted
    reply = delete(api, mid, {"reason": "customer asked in chat"}, t["agent"])

    # Then the answer says so, and no layer holds its content any more
    assert reply.status == 200 and reply.body == {"id": mid, "status": "deleted"}
    after = layers(container, mid)
    assert after["status"] == "deleted" and after["content"] == "" and after["value"] == {}
    assert after["confidence_basis"] is None
    assert not after["has_vector"] and not after["has_text"]
    assert after["sentences"] == 0 and after["replies"] == 0
    # And its entry stays, content-free, where its history shows it
    shown = api.get(f"/v1/memories/{mid}", token=t["agent"]).body
    assert shown["status"] == "deleted" and shown["content"] == "" and MARK not in json.dumps(shown)
    assert [h["status"] for h in shown["history"]] == ["deleted"]


def test_a_deleted_memory_is_gone_from_retrieval_and_the_subjects_list(api, t):
    body = {
        "subject_id": "CUST-F2",
        "type": "episode",
        "content": f"Customer asked about the {MARK} travel insurance add-on for the family plan.",
        "source": {"kind": "customer_confirmed"},
    }
    mid = api.post("/v1/memories", body, token=t["agent"]).body["memory"]["id"]
    query = {"subject_id": "CUST-F2", "query": f"travel insurance add-on {MARK}"}
    assert mid in json.dumps(api.post("/v1/retrieve", query, token=t["agent"]).body)

    assert delete(api, mid, {"reason": "customer request"}, t["agent"]).status == 200

    found = api.post("/v1/retrieve", query, token=t["agent"])
    assert found.status == 200 and mid not in json.dumps(found.body) and MARK not in json.dumps(found.body)
    listed = api.get("/v1/subjects/CUST-F2/memories", token=t["agent"]).body["memories"]
    assert mid not in [m["id"] for m in listed]
    deleted = api.get("/v1/subjects/CUST-F2/memories?status=deleted", token=t["agent"]).body["memories"]
    assert [m["id"] for m in deleted] == [mid] and deleted[0]["content"] == ""


def test_the_same_content_cannot_be_written_again_even_by_replaying_its_request(api, t, container):
    # Given a deleted memory written with an idempotency key
    body = preference("CUST-F3", f"Prefers SMS reminders ({MARK}).", idempotency_key="fgt-k3")
    mid = api.post("/v1/memories", body, token=t["agent"]).body["memory"]["id"]
    assert delete(api, mid, {"reason": "customer request"}, t["agent"]).status == 200

    # When the same write is sent again, with its key and without it
    replay = api.post("/v1/memories", body, token=t["agent"])
    fresh = api.post(
        "/v1/memories", {k: v for k, v in body.items() if k != "idempotency_key"}, token=t["agent"]
    )

    # Then both are refused by the tombstone: a 409 conflict naming it, and nothing of the old
    # memory comes back
    for r in (replay, fresh):
        assert r.status == 409, r.body
        assert r.body["error"]["code"] == "conflict" and r.body["error"]["reason"] == "tombstoned"
        assert MARK not in json.dumps(r.body)
    with container.db.tenant_transaction(TENANT) as conn:
        rows = conn.execute("SELECT status FROM memory_records WHERE subject_id = 'CUST-F3'").fetchall()
    assert [r["status"] for r in rows] == ["deleted"]


def test_a_correction_after_a_deletion_is_a_new_version_from_the_customer(api, t):
    mid = api.post("/v1/memories", preference("CUST-F4", "Prefers post."), token=t["agent"]).body["memory"][
        "id"
    ]
    assert delete(api, mid, {"reason": "customer request"}, t["agent"]).status == 200
    # different words for the same slot: the customer's new value is admitted
    new = api.post("/v1/memories", preference("CUST-F4", "Prefers email after all."), token=t["agent"])
    assert new.status == 201 and new.body["decision"] == "admitted", new.body
    assert api.get(f"/v1/memories/{mid}", token=t["agent"]).body["status"] == "deleted"


def test_a_replayed_session_does_not_bring_a_deleted_memory_back(api, t, container, poller):
    # Given a preference drawn from a closed session, then deleted on request
    turns = [{"speaker": "customer", "text": "I prefer email communication."}]
    body = {"subject_id": "CUST-F5", "channel": "chat", "occurred_at": "2026-10-02T15:00:00Z", "turns": turns}
    assert api.post("/v1/sessions/fgt-s5/close", body, token=t["agent"]).status == 202
    poller.drain()
    drawn = api.get("/v1/subjects/CUST-F5/memories?type=preference", token=t["agent"]).body["memories"]
    assert len(drawn) == 1, drawn
    mid = drawn[0]["id"]
    assert delete(api, mid, {"reason": "customer request"}, t["agent"]).status == 200

    # When the session goes through extraction again, as written and in other words
    def replay():
        with container.store.tenant(TENANT) as s:
            s.update_session("fgt-s5", status="queued")
        return container.extraction.process({"tenant_id": TENANT, "session_id": "fgt-s5"})

    assert replay()["status"] == "processed"
    real = container.extraction._extractor

    class Paraphrasing:
        name, version = real.name, real.version

        def extract(self, transcript):
            result = real.extract(transcript)
            return ExtractionResult.model_validate(
                {
                    **result.model_dump(),
                    "candidates": [
                        {**c.model_dump(), "content": "Customer would rather be reached by e-mail."}
                        for c in result.candidates
                    ],
                }
            )

    container.extraction._extractor = Paraphrasing()
    try:
        assert replay()["status"] == "processed"
    finally:
        container.extraction._extractor = real

    # Then no preference of that session is held again, in any status
    for status in ("active", "pending_approval", "contested", "quarantined"):
        found = api.get(f"/v1/subjects/CUST-F5/memories?status={status}&type=preference", token=t["agent"])
        assert found.body["memories"] == [], (status, found.body)


def test_the_deletion_is_audited_with_who_when_and_why_but_no_content(api, t):
    mid = api.post(
        "/v1/memories", preference("CUST-F6", f"Prefers Welsh-language letters ({MARK})."), token=t["agent"]
    ).body["memory"]["id"]
    reason = "customer asked by phone; verified with card 4111 1111 1111 1111"
    assert delete(api, mid, {"reason": reason}, t["privacy"]).status == 200

    deleted = [e for e in events_about(api, t, mid) if e["event_type"] == "memory_deleted"]
    assert len(deleted) == 1
    event = deleted[0]
    assert event["actor"] == "dpo-1" and event["created_at"] and event["reason"] == "deleted_on_request"
    assert event["payload"]["as"] == ["privacy_officer"]
    # the reason is read beside the chain; the chain holds its salted digest
    assert "customer asked by phone" in event["free_text"]["reason"]
    assert set(event["payload"]["reason"]) == {"side_text_sha256"}
    text = json.dumps(event)
    assert MARK not in text and "Welsh" not in text
    assert "4111 1111 1111 1111" not in text  # the reason is masked like every stored free text


def test_deleting_twice_answers_the_same_and_audits_once(api, t):
    mid = api.post("/v1/memories", preference("CUST-F7", "Prefers fax."), token=t["agent"]).body["memory"][
        "id"
    ]
    first = delete(api, mid, {"reason": "customer request"}, t["agent"])
    second = delete(api, mid, {"reason": "customer request"}, t["agent"])
    assert first.status == second.status == 200 and first.body == second.body
    assert [e["event_type"] for e in events_about(api, t, mid)].count("memory_deleted") == 1


@pytest.mark.parametrize("hold_on", ["record", "subject"])
def test_a_legal_hold_blocks_the_deletion(api, t, container, hold_on):
    subject = f"CUST-F8-{hold_on}"
    mid = api.post("/v1/memories", preference(subject, f"Prefers couriers ({MARK})."), token=t["agent"]).body[
        "memory"
    ]["id"]
    path = f"/v1/memories/{mid}/legal-hold" if hold_on == "record" else f"/v1/subjects/{subject}/legal-hold"
    assert api.post(path, {"hold": True, "reason": "litigation LIT-1"}, token=t["privacy"]).status == 200

    refused = delete(api, mid, {"reason": "customer request"}, t["agent"])

    assert refused.status == 409 and refused.body["error"]["code"] == "conflict"
    kept = layers(container, mid)
    assert kept["status"] == "active" and MARK in kept["content"] and kept["has_vector"]
    assert "memory_deleted" not in [e["event_type"] for e in events_about(api, t, mid)]
    # once the hold is lifted, the deletion goes through
    assert api.post(path, {"hold": False, "reason": "case closed"}, token=t["privacy"]).status == 200
    assert delete(api, mid, {"reason": "customer request"}, t["agent"]).status == 200


def test_a_record_above_the_callers_clearance_is_not_found_and_stays(api, t, container):
    risk = {
        "subject_id": "CUST-F9",
        "type": "fact",
        "category": "ACCOUNT_PROFILE",
        "slot": "account.risk_rating",
        "content": f"Risk rating high ({MARK}).",
        "source": {"kind": "system_of_record", "system": "risk"},
        "sensitivity": "restricted",
    }
    mid = api.post("/v1/memories", risk, token=t["high"]).body["memory"]["id"]
    low_privacy = api.token(TENANT, "dpo-low", ["privacy_officer"], clearance="internal")

    for token in (t["agent"], low_privacy):
        reply = delete(api, mid, {"reason": "customer request"}, token)
        assert reply.status == 404 and reply.body["error"]["code"] == "not_found"
    unknown = delete(api, "mem_doesnotexist", {"reason": "customer request"}, t["agent"])
    assert unknown.status == 404 and unknown.body["error"]["code"] == "not_found"
    # another tenant's caller cannot reach it either
    assert delete(api, mid, {"reason": "customer request"}, t["other_tenant"]).status == 404
    assert layers(container, mid)["status"] == "active"


@pytest.mark.parametrize("role", ["reviewer", "auditor", "integration"])
def test_only_an_agent_or_a_privacy_officer_may_delete(api, t, container, role):
    mid = api.post("/v1/memories", preference(f"CUST-F10-{role}", "Prefers pigeons."), token=t["agent"]).body[
        "memory"
    ]["id"]
    reply = delete(api, mid, {"reason": "customer request"}, t[role])
    assert reply.status == 403 and reply.body["error"]["code"] == "unauthorized_memory_mutation"
    assert layers(container, mid)["status"] == "active"
    assert api.request("DELETE", f"/v1/memories/{mid}", {"reason": "x"}).status == 401


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "reason"),
        ({"reason": ""}, "reason"),
        ({"reason": "x" * 501}, "reason"),
        ({"reason": 7}, "reason"),
        ({"reason": "ok", "content": "also this"}, "content"),
    ],
)
def test_bad_input_is_422_naming_the_field_and_deletes_nothing(api, t, container, body, field):
    mid = api.post("/v1/memories", preference("CUST-F11", "Prefers carrier pigeon."), token=t["agent"]).body
    mid = (mid["memory"] or {}).get("id") or api.get("/v1/subjects/CUST-F11/memories", token=t["agent"]).body[
        "memories"
    ][0]["id"]
    reply = delete(api, mid, body, t["agent"])
    assert reply.status == 422 and reply.body["error"]["field"] == field, reply.body
    assert layers(container, mid)["status"] == "active"
    missing = api.request("DELETE", f"/v1/memories/{mid}", None, token=t["agent"])
    assert missing.status == 422 and missing.body["error"]["field"] == "reason", missing.body
    assert layers(container, mid)["status"] == "active"


def test_deleting_a_memory_forgets_the_older_versions_of_its_slot_that_led_to_it(api, t, container):
    # Given three versions of one subject's contact preference, each superseding the one before,
    # and another subject's preference in the same slot
    subject = "CUST-F-LINEAGE"
    words = [f"Prefers phone calls ({MARK}-1).", f"Prefers post ({MARK}-2).", "Prefers email now."]
    ids = []
    for text in words:
        written = api.post("/v1/memories", preference(subject, text), token=t["agent"])
        assert written.status == 201 and written.body["decision"] == "admitted", written.body
        ids.append(written.body["memory"]["id"])
    older, newest = ids[:2], ids[2]
    assert api.get(f"/v1/memories/{older[0]}", token=t["agent"]).body["status"] == "superseded"
    bystander = api.post("/v1/memories", preference("CUST-F-OTHER", "Prefers chat."), token=t["agent"])
    # When the customer asks for the current one to be deleted
    assert delete(api, newest, {"reason": "customer asked to forget it"}, t["agent"]).status == 200
    # Then every version that led to it is deleted too: not readable, not exported, not reinstatable
    for mid in older:
        shown = api.get(f"/v1/memories/{mid}", token=t["agent"]).body
        assert shown["status"] == "deleted" and shown["content"] == "", shown
        assert all(h["status"] == "deleted" and h["content"] == "" for h in shown["history"])
        reinstated = api.post(f"/v1/memories/{mid}/reinstate", {"note": "roll back"}, token=t["reviewer"])
        assert reinstated.status == 409, reinstated.body
        assert layers(container, mid)["content"] == "" and not layers(container, mid)["has_vector"]
    exported = api.get(f"/v1/subjects/{subject}/export", token=t["privacy"])
    assert exported.status == 200 and MARK not in json.dumps(exported.body), exported.body
    # And each version was audited and tombstoned like the one asked for
    for mid in older:
        [event] = [e for e in events_about(api, t, mid) if e["event_type"] == "memory_deleted"]
        assert event["payload"]["version_of"] == newest and event["actor"] == "agent-1"
    again = api.post("/v1/memories", preference(subject, words[0]), token=t["agent"])
    assert again.status == 409 and again.body["error"]["reason"] == "tombstoned", again.body
    # And another subject's version of the slot is untouched
    kept = api.get(f"/v1/memories/{bystander.body['memory']['id']}", token=t["agent"]).body
    assert kept["status"] == "active"
