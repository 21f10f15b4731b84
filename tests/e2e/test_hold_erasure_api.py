"""Legal holds win over erasure and the nightly purge (GDPR Art. 17(3)(e)), through the HTTP API:
an erasure keeps exactly the held records, says so in its receipt (hold id and count, no content)
and is still verified; releasing the hold completes it with a second receipt."""

from datetime import timedelta

import pytest

from agent_memory.domain.records import utcnow

pytestmark = pytest.mark.e2e

TENANT = "hold"
MARK = "zq7holdmark"  # a word only the held memories contain


@pytest.fixture(scope="module")
def t(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"], clearance="restricted"),
        "privacy": api.token(TENANT, "dpo-1", ["privacy_officer"]),
    }


def remember(api, token, subject, content):
    body = {
        "subject_id": subject,
        "type": "episode",
        "content": content,
        "source": {"kind": "customer_confirmed"},
    }
    reply = api.post("/v1/memories", body, token=token)
    assert reply.status == 201, reply.body
    return reply.body["memory"]["id"]


def erase(api, t, subject, **extra):
    started = api.post(
        f"/v1/subjects/{subject}/erasure", {"reason": "gdpr_article_17", **extra}, token=t["privacy"]
    )
    assert started.status == 202, started.body
    return wait_for(api, t, started.body["erasure_id"])


def wait_for(api, t, erasure_id, timeout=60.0):
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = api.get(f"/v1/erasures/{erasure_id}", token=t["privacy"])
        if r.body["status"] != "running":
            return r.body
        time.sleep(0.1)
    raise AssertionError("erasure did not finish")


def rows_of(container, subject):
    with container.db.tenant_transaction(TENANT) as conn:
        return conn.execute(
            "SELECT id, content, status, embedding IS NOT NULL AS has_vector FROM memory_records"
            " WHERE subject_id = %s ORDER BY id",
            (subject,),
        ).fetchall()


def hold(api, t, path, on):
    reply = api.post(path, {"hold": on, "reason": "litigation LIT-2026-07"}, token=t["privacy"])
    assert reply.status == 200, reply.body
    return reply.body


def test_an_erasure_keeps_exactly_the_held_record_and_says_so_in_a_verified_receipt(api, t, container):
    # Given a subject with one memory under a legal hold and two without
    subject = "CUST-HOLD-1"
    held = remember(api, t["agent"], subject, f"Disputed the invoice in writing ({MARK}).")
    remember(api, t["agent"], subject, "Asked for the renewal quote by email.")
    remember(api, t["agent"], subject, "Mentioned a move to the Leeds office.")
    hold_id = hold(api, t, f"/v1/memories/{held}/legal-hold", True)["hold_id"]

    # When the subject is erased
    done = erase(api, t, subject)

    # Then the erasure is verified, the held record alone remains (content intact), and the
    # receipt names the hold and its count, without content
    assert done["status"] == "verified"
    receipt = done["receipt"]
    assert receipt["retained_under_hold"] == [{"hold_id": hold_id, "records": 1}]
    assert receipt["records"] == 2 and set(receipt["verification"].values()) == {0}
    assert MARK not in str(done)
    left = rows_of(container, subject)
    assert [r["id"] for r in left] == [held]
    assert MARK in left[0]["content"] and left[0]["status"] == "active" and left[0]["has_vector"]


def test_releasing_the_hold_completes_the_erasure_with_a_second_receipt(api, t, container):
    # Given an erasure that kept one record under a hold
    subject = "CUST-HOLD-2"
    held = remember(api, t["agent"], subject, f"Threatened legal action over the outage ({MARK}).")
    remember(api, t["agent"], subject, "Prefers calls after 6pm.")
    hold_id = hold(api, t, f"/v1/memories/{held}/legal-hold", True)["hold_id"]
    first = erase(api, t, subject, request_reference="DSR-HOLD-2")
    assert first["receipt"]["retained_under_hold"] == [{"hold_id": hold_id, "records": 1}]

    # When the hold is released
    released = hold(api, t, f"/v1/memories/{held}/legal-hold", False)

    # Then a second erasure completes the first: its own verified receipt, nothing retained, nothing left
    assert released["hold_id"] == hold_id and released["erasure_id"] != first["erasure_id"]
    second = wait_for(api, t, released["erasure_id"])
    assert second["status"] == "verified" and second["completes_erasure_id"] == first["erasure_id"]
    assert second["receipt"]["records"] == 1 and second["receipt"]["retained_under_hold"] == []
    assert second["receipt"]["completes_erasure_id"] == first["erasure_id"]
    # the same request (its reference kept as a digest once an erasure is verified)
    assert second["receipt"]["request_reference_sha256"] == first["receipt"]["request_reference_sha256"]
    assert second["receipt"]["request_reference_sha256"]
    assert rows_of(container, subject) == []
    # and the first erasure points to the one that completed it
    view = api.get(f"/v1/erasures/{first['erasure_id']}", token=t["privacy"]).body
    assert view["completed_by"] == [second["erasure_id"]]


def test_a_subject_under_hold_keeps_everything_held_and_the_receipt_says_so(api, t, container):
    # Given a subject under a legal hold with three memories
    subject = "CUST-HOLD-3"
    ids = [
        remember(api, t["agent"], subject, text)
        for text in (
            f"Reviewed the insurance claim paperwork ({MARK}).",
            "Asked for the branch opening hours on Saturdays.",
            "Said the new mobile app keeps logging them out.",
        )
    ]
    hold_id = hold(api, t, f"/v1/subjects/{subject}/legal-hold", True)["hold_id"]

    # When the subject is erased
    done = erase(api, t, subject)

    # Then nothing of it is erased, the erasure is verified, and the receipt lists the subject's hold
    assert done["status"] == "verified"
    assert done["receipt"]["retained_under_hold"] == [{"hold_id": hold_id, "records": 3}]
    assert done["receipt"]["records"] == 0
    assert sorted(r["id"] for r in rows_of(container, subject)) == sorted(ids)

    # When the subject's hold is released, the erasure completes
    released = hold(api, t, f"/v1/subjects/{subject}/legal-hold", False)
    second = wait_for(api, t, released["erasure_id"])
    assert second["status"] == "verified" and second["receipt"]["records"] == 3
    assert rows_of(container, subject) == []
    # and releasing it again starts nothing
    assert "erasure_id" not in hold(api, t, f"/v1/subjects/{subject}/legal-hold", False)


def test_verification_fails_when_a_record_no_longer_held_is_left(api, t, container):
    from agent_memory.domain.enums import Role
    from agent_memory.domain.erasure_steps import step_names
    from agent_memory.domain.records import Principal
    from agent_memory.services.erasure import ErasureNotClean, ErasureRequest, ErasureService

    # Given an erasure that kept a held record, run step by step up to its verification
    subject = "CUST-HOLD-4"
    held = remember(api, t["agent"], subject, f"Filed a formal complaint ({MARK}).")
    remember(api, t["agent"], subject, "Asked about the loyalty discount.")
    hold(api, t, f"/v1/memories/{held}/legal-hold", True)
    service = ErasureService(container.store, container.objects)
    officer = Principal(sub="dpo", tenant_id=TENANT, roles=frozenset({Role.PRIVACY_OFFICER}))
    erasure_id = service.request(officer, subject, ErasureRequest(reason="gdpr_article_17"))["erasure_id"]
    steps = step_names()
    for step in steps[: steps.index("verify")]:
        service.run_step(TENANT, erasure_id, step)

    # When the record's hold is released before verification (it is now unheld and still there)
    hold(api, t, f"/v1/memories/{held}/legal-hold", False)

    # Then verification refuses to call the subject erased
    with pytest.raises(ErasureNotClean, match="records"):
        service.run_step(TENANT, erasure_id, "verify")


def test_the_nightly_purge_never_removes_a_held_expired_record(api, t, container, monkeypatch):
    # Given two memories of one subject past their expiry, one of them under a legal hold
    subject = "CUST-HOLD-5"
    held = remember(api, t["agent"], subject, f"Complained about the mis-sold policy ({MARK}).")
    free = remember(api, t["agent"], subject, "Said the branch was busy.")
    hold(api, t, f"/v1/memories/{held}/legal-hold", True)

    # When the nightly purge runs a year later, twice (expiry, then past the archive window)
    for days in (365, 400):
        at = utcnow() + timedelta(days=days)
        monkeypatch.setattr(container.lifecycle, "clock", lambda at=at: at)
        container.lifecycle.purge(tenants=[TENANT], consolidate=False)

    # Then the held record is still there, active and whole; the other is gone
    left = {r["id"]: r for r in rows_of(container, subject)}
    assert free not in left
    assert left[held]["status"] == "active" and MARK in left[held]["content"]


def test_no_tenant_may_let_erasure_override_a_legal_hold(api):
    # Given a tenant admin
    admin = api.token(TENANT, "admin-1", ["admin"])
    # When it asks for erasure to ignore legal holds
    reply = api.put(
        "/v1/policy", {"profile": "support", "overrides": {"legal_hold_exempts_erasure": False}}, token=admin
    )
    # Then it is refused naming the field, and the policy still keeps held records
    assert reply.status == 422, reply.body
    assert reply.body["error"]["field"] == "overrides.legal_hold_exempts_erasure"
    assert api.get("/v1/policy", token=admin).body["effective"]["legal_hold_exempts_erasure"] is True
