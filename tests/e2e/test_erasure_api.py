"""Subject erasure through the HTTP API: every layer emptied, verified, receipted,
and kept erased; faults retried or failed loudly, never 'verified' with data left."""

import threading
import time

import psycopg
import pytest

from agent_memory.domain.erasure_steps import step_names
from agent_memory.services.erasure import LocalErasureRunner

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def t(api):
    return {
        "agent": api.token("era", "agent-1", ["agent"], clearance="restricted"),
        "privacy": api.token("era", "dpo-1", ["privacy_officer"]),
        "auditor": api.token("era", "aud-1", ["auditor"]),
        "other_privacy": api.token("era-other", "dpo-2", ["privacy_officer"]),
    }


def remember(api, token, subject, content, **extra):
    body = {
        "subject_id": subject,
        "type": "episode",
        "content": content,
        "source": {"kind": "customer_confirmed"},
    }
    return api.post("/v1/memories", {**body, **extra}, token=token)


def wait_for(api, token, erasure_id, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = api.get(f"/v1/erasures/{erasure_id}", token=token)
        if r.body["status"] != "running":
            return r.body
        time.sleep(0.1)
    raise AssertionError("erasure did not finish")


def layers_of(container, tenant, subject):
    with container.db.tenant_transaction(tenant) as conn:
        return conn.execute(
            """SELECT (SELECT count(*) FROM memory_records WHERE subject_id = %(s)s) AS records,
                      (SELECT count(*) FROM memory_records WHERE subject_id = %(s)s AND embedding IS NOT NULL) AS emb,
                      (SELECT count(*) FROM memory_records WHERE subject_id = %(s)s AND content_tsv IS NOT NULL) AS fts,
                      (SELECT count(*) FROM idempotency_keys WHERE subject_id = %(s)s) AS cache""",
            {"s": subject},
        ).fetchone()


def test_erasure_empties_every_layer_verifies_and_stays_erased(api, t, container):
    for i in range(5):
        assert (
            remember(
                api, t["agent"], "CUST-ERASE", f"Visit {i}: discussed the mortgage refinance options"
            ).status
            == 201
        )
    remember(api, t["agent"], "CUST-ERASE", "Asked to be called after 6pm", idempotency_key="k-erase-1")
    container.objects.put_json("transcripts/era/CUST-ERASE/old-session.json", {"turns": []})
    remember(api, t["agent"], "CUST-KEEP", "Unrelated customer asked about ISAs")

    started = api.post(
        "/v1/subjects/CUST-ERASE/erasure",
        {"reason": "gdpr_article_17", "request_reference": "DSR-991"},
        token=t["privacy"],
    )
    assert started.status == 202 and started.body["status"] == "running"
    done = wait_for(api, t["privacy"], started.body["erasure_id"])

    assert done["status"] == "verified"
    assert [s["name"] for s in done["steps"]] == step_names()
    assert all(s["status"] == "succeeded" for s in done["steps"])
    receipt = done["receipt"]
    assert receipt["records"] == 6 and receipt["objects"] == 1
    assert receipt["verification"] == {
        k: 0
        for k in (
            "records",
            "embeddings",
            "fulltext",
            "derived",
            "cache",
            "objects",
            "working",
            "extraction_reports",
            "free_text",
        )
    }
    assert "content" not in str(receipt) and "mortgage" not in str(receipt)
    left = layers_of(container, "era", "CUST-ERASE")
    assert dict(left) == {"records": 0, "emb": 0, "fts": 0, "cache": 0}
    assert container.objects.count_prefix("transcripts/era/CUST-ERASE/") == 0
    assert layers_of(container, "era", "CUST-KEEP")["records"] == 1

    # Replaying an old write does not bring it back; the refusal is audited
    replay = remember(api, t["agent"], "CUST-ERASE", "Visit 3: discussed the mortgage refinance options")
    assert replay.status == 409 and replay.body["error"]["reason"] == "tombstoned"
    assert layers_of(container, "era", "CUST-ERASE")["emb"] == 0

    # The same request sent again (same request reference) answers with the first erasure
    again = api.post(
        "/v1/subjects/CUST-ERASE/erasure",
        {"reason": "gdpr_article_17", "request_reference": "DSR-991"},
        token=t["privacy"],
    )
    assert again.body["erasure_id"] == started.body["erasure_id"] and again.body["receipt"] == receipt
    assert again.body["duplicate_of_earlier_request"] is True

    # The audit chain still verifies, and its erasure events carry no content
    events = api.get("/v1/audit?subject_id=CUST-ERASE", token=t["auditor"]).body["events"]
    kinds = {e["event_type"] for e in events}
    assert {"erasure_requested", "memory_deleted", "erasure_verified"} <= kinds
    assert "mortgage" not in str(events)
    assert container.reads.verify_audit("era").ok


def test_unknown_subject_gets_a_verified_zero_receipt(api, t):
    started = api.post("/v1/subjects/NEVER-SEEN/erasure", {"reason": "gdpr_article_17"}, token=t["privacy"])
    done = wait_for(api, t["privacy"], started.body["erasure_id"])
    assert done["status"] == "verified" and done["receipt"]["records"] == 0


def test_another_tenants_subject_is_answered_exactly_like_an_unknown_one(api, t, container):
    # Given a subject only tenant "era" holds, and one no tenant holds
    remember(api, t["agent"], "CUST-TENANT", "Keeps a portfolio review every March")
    # When another tenant's privacy officer asks to erase each of them
    held = api.post(
        "/v1/subjects/CUST-TENANT/erasure", {"reason": "gdpr_article_17"}, token=t["other_privacy"]
    )
    unknown = api.post(
        "/v1/subjects/NOBODY-HAS-IT/erasure", {"reason": "gdpr_article_17"}, token=t["other_privacy"]
    )
    # Then both answers have the same status and shape, and both end in a verified zero receipt:
    # nothing tells the caller that the first subject exists in another tenant
    assert held.status == unknown.status == 202
    assert set(held.body) == set(unknown.body)
    done_held = wait_for(api, t["other_privacy"], held.body["erasure_id"])
    done_unknown = wait_for(api, t["other_privacy"], unknown.body["erasure_id"])
    assert done_held["status"] == done_unknown["status"] == "verified"
    assert done_held["receipt"]["records"] == done_unknown["receipt"]["records"] == 0
    assert "Keeps a portfolio" not in str(done_held)
    # And the owner's data is untouched, and the owning tenant can still erase it
    assert layers_of(container, "era", "CUST-TENANT")["records"] == 1
    started = api.post("/v1/subjects/CUST-TENANT/erasure", {"reason": "gdpr_article_17"}, token=t["privacy"])
    assert wait_for(api, t["privacy"], started.body["erasure_id"])["receipt"]["records"] == 1
    assert api.get(f"/v1/erasures/{started.body['erasure_id']}", token=t["other_privacy"]).status == 404


def test_a_second_erasure_request_runs_again_and_removes_what_arrived_since(api, t, container):
    # Given a subject erased once
    remember(api, t["agent"], "CUST-AGAIN", "Prefers quarterly statements by post")
    first = api.post(
        "/v1/subjects/CUST-AGAIN/erasure",
        {"reason": "gdpr_article_17", "request_reference": "DSR-1"},
        token=t["privacy"],
    )
    assert wait_for(api, t["privacy"], first.body["erasure_id"])["status"] == "verified"
    # And new data about the subject arriving afterwards (a paraphrase the tombstones do not match)
    late = remember(api, t["agent"], "CUST-AGAIN", "Opened a second savings account in November")
    assert late.status == 201 and late.body["decision"] == "admitted"
    assert layers_of(container, "era", "CUST-AGAIN")["records"] == 1
    # When a new erasure is requested (another request reference, or none)
    second = api.post(
        "/v1/subjects/CUST-AGAIN/erasure",
        {"reason": "gdpr_article_17", "request_reference": "DSR-2"},
        token=t["privacy"],
    )
    # Then it is a new erasure with its own receipt, and the new data is gone
    assert second.status == 202 and second.body["erasure_id"] != first.body["erasure_id"]
    assert "duplicate_of_earlier_request" not in second.body
    done = wait_for(api, t["privacy"], second.body["erasure_id"])
    assert done["status"] == "verified" and done["receipt"]["records"] == 1
    assert layers_of(container, "era", "CUST-AGAIN")["records"] == 0
    # And a request without a reference runs again too
    third = api.post("/v1/subjects/CUST-AGAIN/erasure", {"reason": "gdpr_article_17"}, token=t["privacy"])
    assert third.body["erasure_id"] not in (first.body["erasure_id"], second.body["erasure_id"])
    assert wait_for(api, t["privacy"], third.body["erasure_id"])["status"] == "verified"


def test_only_a_privacy_officer_may_erase(api, t):
    r = api.post("/v1/subjects/CUST-X/erasure", {"reason": "gdpr_article_17"}, token=t["agent"])
    assert r.status == 403 and r.body["error"]["code"] == "unauthorized_memory_mutation"
    assert api.get("/v1/erasures/era_missing", token=t["agent"]).status == 403


class FlakyObjects:
    """The real object store, failing the first `failures` deletes (or always)."""

    def __init__(self, inner, failures):
        self.inner, self.failures, self.calls = inner, failures, 0

    def delete_prefix(self, prefix):
        self.calls += 1
        if self.failures is None or self.calls <= self.failures:
            raise ConnectionError("object store unavailable")
        return self.inner.delete_prefix(prefix)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def run_erasure(container, subject, objects, tenant="era"):
    from agent_memory.domain.enums import Role
    from agent_memory.domain.records import Principal
    from agent_memory.services.erasure import ErasureRequest, ErasureService

    service = ErasureService(container.store, objects)
    officer = Principal(sub="dpo", tenant_id=tenant, roles=frozenset({Role.PRIVACY_OFFICER}))
    view = service.request(officer, subject, ErasureRequest(reason="gdpr_article_17"))
    outcome = LocalErasureRunner(service, sleep=lambda s: None).run(
        {"erasure_id": view["erasure_id"], "tenant_id": tenant, "subject_id": subject}
    )
    return outcome, service.status(officer, view["erasure_id"])


def test_a_failing_step_is_retried_and_the_erasure_completes(api, t, container):
    remember(api, t["agent"], "CUST-FLAKY", "Asked about pension transfer fees")
    objects = FlakyObjects(container.objects, failures=2)
    outcome, view = run_erasure(container, "CUST-FLAKY", objects)
    assert outcome == "verified" and view["status"] == "verified"
    step = next(s for s in view["steps"] if s["name"] == "purge_objects")
    assert step["attempts"] == 3


def test_a_step_that_keeps_failing_ends_failed_with_the_step_named(api, t, container):
    remember(api, t["agent"], "CUST-DOWN", "Asked about ethical funds")
    outcome, view = run_erasure(container, "CUST-DOWN", FlakyObjects(container.objects, failures=None))
    assert outcome == "failed" and view["status"] == "failed" and view["receipt"] is None
    assert "purge_objects" in view["reason"]
    failed = [
        e
        for e in api.get("/v1/audit?subject_id=CUST-DOWN", token=t["auditor"]).body["events"]
        if e["event_type"] == "memory_deletion_failed"
    ]
    assert failed


def test_the_database_dropping_mid_erasure_is_survived(api, t, container, database_url):
    remember(api, t["agent"], "CUST-DBDROP", "Prefers quarterly statements on paper")
    killer = FlakyObjects(container.objects, failures=0)
    original = killer.delete_prefix

    dropped = []

    def drop_then_delete(prefix):
        if dropped:
            return original(prefix)
        dropped.append(True)
        with psycopg.connect(database_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        return original(prefix)

    killer.delete_prefix = drop_then_delete
    outcome, view = run_erasure(container, "CUST-DBDROP", killer)
    assert outcome == "verified", view
    assert layers_of(container, "era", "CUST-DBDROP")["records"] == 0


def test_writes_racing_the_erasure_do_not_survive_it(api, t, container):
    for i in range(20):
        remember(api, t["agent"], "CUST-RACE", f"Note {i} about the trust fund")
    stop = threading.Event()
    outcomes = []

    def writer():
        i = 0
        while not stop.is_set():
            r = remember(api, t["agent"], "CUST-RACE", f"Late note {i} about the trust fund")
            outcomes.append(r.body.get("decision") or r.body["error"].get("reason"))
            i += 1

    threads = [threading.Thread(target=writer) for _ in range(3)]
    for th in threads:
        th.start()
    try:
        outcome, view = run_erasure(container, "CUST-RACE", container.objects)
    finally:
        stop.set()
        for th in threads:
            th.join()
    assert outcome == "verified"
    verified_at = view["receipt"]["verified_at"]
    with container.db.tenant_transaction("era") as conn:
        survivors = conn.execute(
            "SELECT count(*) AS n FROM memory_records WHERE subject_id = 'CUST-RACE' AND created_at <= %s",
            (verified_at,),
        ).fetchone()["n"]
    assert survivors == 0  # whatever exists now was written after the erasure finished
    # writers really ran into the erasure and were refused (409, its reason named)
    assert {"erasure_in_progress", "tombstoned"} & set(outcomes)


def test_erasure_removes_the_subjects_extraction_messages_from_the_outbox(api, t, container):
    # Given a closed session of the subject (its message recorded in the outbox)
    closed = api.post(
        "/v1/sessions/S-ERASE-OUTBOX/close",
        {
            "subject_id": "CUST-OUTBOX",
            "occurred_at": "2026-10-02T15:00:00Z",
            "turns": [{"speaker": "customer", "text": "Please email me the statement."}],
        },
        token=t["agent"],
    )
    assert closed.status == 202, closed.body

    def outbox_rows() -> int:
        with container.db.tenant_transaction("era") as conn:
            row = conn.execute(
                "SELECT count(*) AS n FROM outbox WHERE dedupe_key = 'extract:S-ERASE-OUTBOX'"
            ).fetchone()
        return int(row["n"])

    assert outbox_rows() == 1
    # When the subject is erased, Then no message of its sessions is left to send
    started = api.post("/v1/subjects/CUST-OUTBOX/erasure", {"reason": "gdpr_article_17"}, token=t["privacy"])
    assert wait_for(api, t["privacy"], started.body["erasure_id"])["status"] == "verified"
    assert outbox_rows() == 0
