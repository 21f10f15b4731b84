"""Tokens bound to their subjects (seed 003's RET-02: client_id = authenticated user), through the
HTTP API on the embedded database: another subject answers as an unknown one, writes for it are
refused, tenant-wide routes show only the bound subjects, a token without the claim is unchanged."""

import json

import pytest

from agent_memory.api.identity import issue_token

pytestmark = pytest.mark.e2e

TENANT = "bound-co"


def token(api, sub: str, roles: list[str], subjects: list[str] | None = None, tenant: str = TENANT) -> str:
    return issue_token(
        api.secret, tenant_id=tenant, sub=sub, roles=roles, clearance="confidential", subjects=subjects
    )


def note(subject: str, content: str, **extra):
    return {
        "subject_id": subject,
        "type": "episode",
        "content": content,
        "source": {"kind": "customer_confirmed"},
        **extra,
    }


@pytest.fixture(scope="module")
def seeded(api):
    """Subjects C-1 and C-2 of tenant bound-co, each with an episode, a pending commercial claim
    (review queue) and a resolution (tenant-wide search); C-1 also in another tenant."""
    unbound = token(api, "agent-all", ["agent"])
    ids = {}
    for subject in ("C-1", "C-2"):
        ids[subject] = api.post(
            "/v1/memories", note(subject, f"{subject} asked how to export invoices as CSV"), token=unbound
        ).body["memory"]["id"]
        claim = {
            "subject_id": subject,
            "type": "fact",
            "category": "CONTRACT_COMMERCIAL",
            "slot": "contract.seat_price",
            "content": f"{subject} says we agreed to a 20% discount on seats.",
            "source": {"kind": "customer_claim"},
        }
        assert api.post("/v1/memories", claim, token=unbound).body["decision"] == "pending_approval"
        resolution = note(
            subject,
            f"Resolved for {subject}: invoices export as CSV from the billing page",
            type="resolution",
        )
        assert api.post("/v1/memories", resolution, token=unbound).status == 201
    other = token(api, "agent-x", ["agent"], tenant="other-co")
    api.post("/v1/memories", note("C-1", "Other tenant's C-1 asked about invoices"), token=other)
    return ids


def test_given_a_token_bound_to_c1_when_it_lists_c2_then_the_answer_is_that_of_an_unknown_subject(
    api, seeded
):
    bound = token(api, "agent-c1", ["agent"], ["C-1"])
    # When it lists its own subject, the other one, and one nobody holds
    own = api.get("/v1/subjects/C-1/memories", token=bound)
    other = api.get("/v1/subjects/C-2/memories", token=bound)
    unknown = api.get("/v1/subjects/C-404/memories", token=bound)
    # Then its own subject's memories, and for C-2 exactly what an unknown subject gets
    assert own.status == 200 and seeded["C-1"] in {m["id"] for m in own.body["memories"]}
    assert (other.status, {**other.body, "subject_id": None}) == (
        unknown.status,
        {**unknown.body, "subject_id": None},
    )
    assert other.body["memories"] == []


def test_given_a_bound_token_when_it_reads_another_subjects_memory_by_id_then_it_is_not_found(api, seeded):
    bound = token(api, "agent-c1", ["agent"], ["C-1"])
    other = api.get(f"/v1/memories/{seeded['C-2']}", token=bound)
    unknown = api.get("/v1/memories/mem_000000000000ffffffffffffffff", token=bound)
    assert other.status == unknown.status == 404
    assert other.body["error"]["code"] == unknown.body["error"]["code"] == "not_found"
    assert api.get(f"/v1/memories/{seeded['C-1']}", token=bound).status == 200


def test_given_a_bound_token_when_it_retrieves_for_another_subject_then_it_gets_an_unknown_subjects_answer(
    api, seeded
):
    bound = token(api, "agent-c1", ["agent"], ["C-1"])
    ask = {"query": "how do I export invoices as CSV"}
    other = api.post("/v1/retrieve", {**ask, "subject_id": "C-2"}, token=bound)
    unknown = api.post("/v1/retrieve", {**ask, "subject_id": "C-404"}, token=bound)
    own = api.post("/v1/retrieve", {**ask, "subject_id": "C-1"}, token=bound)
    assert other.status == unknown.status == own.status == 200
    assert other.body["memories"] == unknown.body["memories"] == []
    assert other.body["context"].replace("C-2", "X") == unknown.body["context"].replace("C-404", "X")
    assert seeded["C-1"] in {m["id"] for m in own.body["memories"]}


def test_given_a_bound_token_when_it_writes_for_another_subject_then_403_and_nothing_is_written(
    api, seeded, container
):
    bound = token(api, "agent-c1", ["agent"], ["C-1"])
    # When it writes for C-2 (held) and for C-405 (held by nobody)
    held = api.post("/v1/memories", note("C-2", "Bound token wrote this for C-2"), token=bound)
    nobody = api.post("/v1/memories", note("C-405", "Bound token wrote this for C-405"), token=bound)
    # Then both are refused alike, so the refusal tells nothing about who exists
    assert held.status == nobody.status == 403
    assert held.body["error"]["code"] == nobody.body["error"]["code"] == "forbidden"
    assert held.body["error"]["message"] == nobody.body["error"]["message"]
    # And nothing of either reached the database
    with container.db.tenant_transaction(TENANT, subjects=None) as conn:
        n = conn.execute(
            "SELECT count(*) AS n FROM memory_records WHERE content LIKE 'Bound token wrote this%%'"
        ).fetchone()["n"]
    assert n == 0
    # And its own subject is written as before
    assert api.post("/v1/memories", note("C-1", "Bound token wrote this for C-1"), token=bound).status == 201


def test_given_a_bound_token_when_it_closes_a_session_or_holds_another_subject_then_403(api, seeded):
    agent = token(api, "agent-c1", ["agent"], ["C-1"])
    officer = token(api, "po-c1", ["privacy_officer"], ["C-1"])
    session = {
        "subject_id": "C-2",
        "occurred_at": "2026-10-01T10:00:00Z",
        "turns": [{"speaker": "customer", "text": "Please export my invoices"}],
    }
    closed = api.post("/v1/sessions/sess-bound-c2/close", session, token=agent)
    hold = api.post("/v1/subjects/C-2/legal-hold", {"hold": True, "reason": "litigation"}, token=officer)
    erase = api.post("/v1/subjects/C-2/erasure", {"reason": "customer request"}, token=officer)
    assert (closed.status, hold.status, erase.status) == (403, 403, 403)


def test_given_a_bound_reviewer_and_auditor_then_tenant_wide_routes_show_only_the_bound_subjects(api, seeded):
    reviewer = token(api, "rev-c1", ["reviewer"], ["C-1"])
    auditor = token(api, "aud-c1", ["auditor"], ["C-1"])
    agent = token(api, "agent-c1", ["agent"], ["C-1"])
    queue = api.get("/v1/review", token=reviewer)
    audit = api.get("/v1/audit?limit=200", token=auditor)
    search = api.post("/v1/resolutions/search", {"query": "export invoices as CSV billing page"}, token=agent)
    assert queue.status == audit.status == search.status == 200
    assert {i["memory"]["subject_id"] for i in queue.body["items"]} == {"C-1"}
    assert {e["subject_id"] for e in audit.body["events"]} == {"C-1"}
    assert search.body["resolutions"] and all("C-1" in r["content"] for r in search.body["resolutions"])
    # And the same routes without the claim see both subjects, as before
    unbound_queue = api.get("/v1/review", token=token(api, "rev-all", ["reviewer"]))
    assert {i["memory"]["subject_id"] for i in unbound_queue.body["items"]} == {"C-1", "C-2"}


def test_given_a_binding_to_another_tenants_subject_then_the_tenant_still_bounds_it(api, seeded):
    # C-1 exists in other-co too; a bound-co token bound to C-1 never sees other-co's C-1
    bound = token(api, "agent-c1", ["agent"], ["C-1"])
    listed = api.get("/v1/subjects/C-1/memories", token=bound)
    assert all("Other tenant" not in m["content"] for m in listed.body["memories"])


@pytest.mark.parametrize(
    "claim",
    ['"C-1"', "[]", "null", '["C-1", 7]', '["bad id/with slash"]', json.dumps([f"S-{i}" for i in range(21)])],
)
def test_a_subjects_claim_that_is_not_a_short_list_of_subject_ids_is_unauthenticated(api, claim):
    import jwt

    from agent_memory.api.identity import verify_token

    good = verify_token(api.secret, token(api, "agent-c1", ["agent"]))
    forged = jwt.encode({**good, "subjects": json.loads(claim)}, api.secret, algorithm="HS256")
    reply = api.get("/v1/subjects/C-1/memories", token=forged)
    assert reply.status == 401 and reply.body["error"]["code"] == "unauthenticated"


def test_another_subjects_ticket_is_not_shown_even_when_an_unbound_caller_just_loaded_it(
    api, seeded, container
):
    # Given C-2's open ticket in the system of record, just read (and so cached) by an unbound agent
    from datetime import UTC, datetime

    from agent_memory.ports.system_of_record import TicketState

    container.system_of_record.set_ticket(
        TENANT,
        TicketState("T-C2", "open", "P1", "ops-lead-zq9", datetime(2026, 11, 20, tzinfo=UTC)),
        subject_id="C-2",
    )
    unbound = token(api, "agent-all", ["agent"])
    warm = api.post(
        "/v1/retrieve", {"subject_id": "C-2", "query": "invoices", "ticket_id": "T-C2"}, token=unbound
    )
    assert "ops-lead-zq9" in json.dumps(warm.body)
    # When a token bound to C-1 asks about C-2's ticket
    bound = token(api, "agent-c1", ["agent"], subjects=["C-1"])
    reply = api.post(
        "/v1/retrieve", {"subject_id": "C-2", "query": "invoices", "ticket_id": "T-C2"}, token=bound
    )
    # Then it learns what it would of an unknown subject: nothing of the ticket
    assert reply.status == 200
    assert "ops-lead-zq9" not in json.dumps(reply.body) and reply.body.get("ticket_not_found") is True
