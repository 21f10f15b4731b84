"""The clearance rule of reads holds in every response that carries a record or a reference to
one: writes and their duplicates, review, history, approve/reject/reinstate, holds, commitments,
search, audit. A caller below a record's sensitivity gets what it would get if the record did
not exist - never its content, value, source or id."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_memory.functions_spec import FUNCTIONS

pytestmark = pytest.mark.e2e

SUBJECT = "ACC-CLEAR-1"
MARK = "zq7restrictedmark"  # a word that occurs only in the restricted records
RISK = {
    "subject_id": SUBJECT,
    "type": "fact",
    "category": "ACCOUNT_PROFILE",
    "slot": "account.risk_rating",
    "content": f"Account risk rating on file is high ({MARK}).",
    "value": {"rating": f"high-{MARK}"},
    "source": {"kind": "system_of_record", "system": f"risk-{MARK}", "reference": f"RR-{MARK}"},
    "sensitivity": "restricted",
}
CLAIM = {
    "subject_id": SUBJECT,
    "type": "fact",
    "category": "CONTRACT_COMMERCIAL",
    "slot": "contract.seat_price",
    "content": f"Customer says a 30% discount was agreed ({MARK}).",
    "source": {"kind": "customer_claim", "system": "meeting", "reference": f"QBR-{MARK}"},
    "sensitivity": "restricted",
}


@pytest.fixture(scope="module")
def world(api):
    high = api.token("clr", "sync-1", ["integration", "agent"], clearance="restricted")
    low_roles = ["agent", "integration", "reviewer", "auditor", "privacy_officer", "admin"]
    low = api.token("clr", "low-1", low_roles, clearance="internal")
    high_reviewer = api.token("clr", "rev-hi", ["reviewer"], clearance="restricted")
    risk = api.post("/v1/memories", RISK, token=high)
    assert risk.status == 201 and risk.body["memory"]["sensitivity"] == "restricted", risk.body
    claim = api.post("/v1/memories", CLAIM, token=high)
    assert claim.body["decision"] == "pending_approval", claim.body
    # a visible record in the same slot as a restricted version: its history must not list it
    visible = api.post(
        "/v1/memories",
        {
            "subject_id": SUBJECT,
            "type": "fact",
            "category": "ACCOUNT_PROFILE",
            "slot": "account.segment",
            "content": "The account is in the mid-market segment.",
            "source": {"kind": "system_of_record", "system": "crm", "reference": "SEG-1"},
        },
        token=high,
    )
    restricted_ids = {risk.body["memory"]["id"], claim.body["memory"]["id"]}
    return {
        "high": high,
        "low": low,
        "high_reviewer": high_reviewer,
        "restricted_ids": restricted_ids,
        "risk_id": risk.body["memory"]["id"],
        "claim_id": claim.body["memory"]["id"],
        "visible_id": visible.body["memory"]["id"],
    }


def assert_nothing_restricted(world, reply) -> None:
    body = reply.body
    if reply.status == 404:  # "memory <the id you asked for> not found": the caller's own words
        assert body["error"]["code"] == "not_found"
        body = {**body, "error": {**body["error"], "message": ""}}
    text = json.dumps(body)
    assert MARK not in text, text[:500]
    for rid in world["restricted_ids"]:
        assert rid not in text, (rid, text[:500])
    assert reply.status < 500, text[:500]


def requests_for_every_route(world) -> dict[tuple[str, str], list[tuple[str, object]]]:
    """A request (or several) per route of the function table, aimed at the restricted records."""
    rid, cid, vid = world["risk_id"], world["claim_id"], world["visible_id"]
    duplicate = {k: v for k, v in RISK.items() if k != "sensitivity"}
    return {
        ("POST", "/v1/memories"): [
            ("/v1/memories", duplicate),
            ("/v1/memories", {**duplicate, "sensitivity": "internal"}),
        ],
        ("POST", "/v1/memories/{memory_id}/close"): [(f"/v1/memories/{rid}/close", {"outcome": "done"})],
        ("POST", "/v1/memories/{memory_id}/revalidate"): [(f"/v1/memories/{rid}/revalidate", None)],
        ("GET", "/v1/memories/{memory_id}"): [(f"/v1/memories/{rid}", None), (f"/v1/memories/{vid}", None)],
        ("DELETE", "/v1/memories/{memory_id}"): [
            (f"/v1/memories/{rid}", {"reason": "customer request"}),
            (f"/v1/memories/{cid}", {"reason": "customer request"}),
        ],
        ("GET", "/v1/subjects/{subject_id}/memories"): [
            (f"/v1/subjects/{SUBJECT}/memories", None),
            (f"/v1/subjects/{SUBJECT}/memories?status=pending_approval", None),
            (f"/v1/subjects/{SUBJECT}/memories?status=superseded", None),
        ],
        ("GET", "/v1/review"): [("/v1/review", None)],
        ("POST", "/v1/memories/{memory_id}/approve"): [
            (f"/v1/memories/{cid}/approve", {"evidence_ref": "sig-1"})
        ],
        ("POST", "/v1/memories/{memory_id}/reject"): [(f"/v1/memories/{cid}/reject", {"note": "no"})],
        ("POST", "/v1/memories/{memory_id}/reinstate"): [(f"/v1/memories/{rid}/reinstate", {})],
        ("GET", "/v1/policy"): [("/v1/policy", None)],
        ("PUT", "/v1/policy"): [],  # changes no record; covered by its own tests
        ("GET", "/v1/audit"): [
            ("/v1/audit", None),
            (f"/v1/audit?memory_id={rid}", None),
            (f"/v1/audit?subject_id={SUBJECT}", None),
        ],
        ("GET", "/v1/health"): [("/v1/health", None)],
        ("GET", "/v1/openapi.json"): [("/v1/openapi.json", None)],
        ("GET", "/v1/docs"): [("/v1/docs", None)],
        ("POST", "/v1/retrieve"): [
            ("/v1/retrieve", {"subject_id": SUBJECT, "query": "what is the account risk rating?"}),
            (
                "/v1/retrieve",
                {
                    "subject_id": SUBJECT,
                    "query": "what is the account risk rating?",
                    "session_id": "S-CLR-WM",
                },
            ),
        ],
        ("POST", "/v1/resolutions/search"): [("/v1/resolutions/search", {"query": "account risk rating"})],
        ("POST", "/v1/sessions/{session_id}/close"): [],  # carries no record in its answer
        # Working memory holds the caller's own short-lived values, never a record: each answer
        # carries only what was put there, and a retrieval naming the session still applies clearance.
        ("PUT", "/v1/sessions/{session_id}/working/{key}"): [
            ("/v1/sessions/S-CLR-WM/working/question", {"subject_id": SUBJECT, "value": "the risk rating?"})
        ],
        ("GET", "/v1/sessions/{session_id}/working"): [("/v1/sessions/S-CLR-WM/working", None)],
        ("DELETE", "/v1/sessions/{session_id}/working/{key}"): [
            ("/v1/sessions/S-CLR-NONE/working/question", None)
        ],
        ("GET", "/v1/sessions/{session_id}"): [("/v1/sessions/S-CLR-NONE", None)],
        # what the report shows of a statement whose memory is above clearance: test_extraction_report_api
        ("GET", "/v1/sessions/{session_id}/extraction"): [("/v1/sessions/S-CLR-NONE/extraction", None)],
        (
            "POST",
            "/v1/subjects/{subject_id}/erasure",
        ): [],  # would erase the fixture; answers carry counts only
        ("GET", "/v1/erasures/{erasure_id}"): [("/v1/erasures/era_none", None)],
        ("POST", "/v1/subjects/{subject_id}/legal-hold"): [],  # answers with the subject, no record
        ("POST", "/v1/memories/{memory_id}/legal-hold"): [
            (f"/v1/memories/{rid}/legal-hold", {"hold": True, "reason": "lit"})
        ],
        ("GET", "/v1/subjects/{subject_id}/export"): [
            (f"/v1/subjects/{SUBJECT}/export", None),
            (f"/v1/subjects/{SUBJECT}/export?limit=10", None),
        ],
    }


def test_every_route_of_the_function_table_is_covered_by_the_sweep(world):
    # A new route must say here how it is checked (or why it carries no record)
    table = {(r.method, r.path) for f in FUNCTIONS for r in f.routes}
    assert table == set(requests_for_every_route(world))


def test_no_route_shows_a_record_above_the_callers_clearance(api, world):
    # Given restricted records, and a caller holding every role but only internal clearance
    for (method, _), calls in requests_for_every_route(world).items():
        for path, body in calls:
            # When it calls the route
            reply = api.request(method, path, body, token=world["low"])
            # Then nothing of the restricted records comes back
            assert_nothing_restricted(world, reply)
    # And the records are untouched and still there for a cleared caller
    assert api.get(f"/v1/memories/{world['risk_id']}", token=world["high"]).body["status"] == "active"
    queue = api.get("/v1/review", token=world["high_reviewer"]).body["items"]
    assert world["claim_id"] in [i["memory"]["id"] for i in queue]


def test_a_duplicate_of_a_restricted_record_is_decided_but_not_shown(api, world):
    duplicate = {k: v for k, v in RISK.items() if k != "sensitivity"}
    reply = api.post("/v1/memories", duplicate, token=world["low"])
    assert reply.status in (200, 201) and reply.body["decision"] == "duplicate"
    assert reply.body["memory"] is None
    # while a cleared caller sending the same still sees the record it duplicates
    seen = api.post("/v1/memories", duplicate, token=world["high"])
    assert seen.body["memory"]["id"] == world["risk_id"]


def test_a_reviewer_without_clearance_cannot_decide_a_restricted_item(api, world):
    reply = api.post(f"/v1/memories/{world['claim_id']}/approve", {"evidence_ref": "x"}, token=world["low"])
    assert reply.status == 404 and reply.body["error"]["code"] == "not_found"
    assert (
        api.get(f"/v1/memories/{world['claim_id']}", token=world["high"]).body["status"] == "pending_approval"
    )


def test_audit_events_about_restricted_records_keep_their_place_without_payload(api, world):
    events = api.get(f"/v1/audit?subject_id={SUBJECT}", token=world["low"]).body["events"]
    redacted = [e for e in events if e.get("redacted") == "above_clearance"]
    assert redacted and all(e["payload"] == {} for e in redacted)
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs)


def test_the_audit_log_filtered_by_a_restricted_id_answers_exactly_as_for_an_unknown_id(api, world):
    # Given an auditor with internal clearance, and a restricted record that has audit events
    auditor = api.token("clr", "aud-int", ["auditor"], clearance="internal")
    cleared = api.token("clr", "aud-hi", ["auditor"], clearance="restricted")
    assert api.get(f"/v1/audit?memory_id={world['risk_id']}", token=cleared).body["events"]
    # When it filters the audit log by that record's id and by an id that never existed
    restricted = api.get(f"/v1/audit?memory_id={world['risk_id']}", token=auditor)
    unknown = api.get("/v1/audit?memory_id=mem-never-written-0001", token=auditor)
    # Then both answers are the same: no event confirms that the restricted id exists
    assert restricted.status == unknown.status == 200
    assert restricted.body == unknown.body == {"events": [], "next_cursor": None}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    clearance=st.sampled_from(["public", "internal", "confidential"]),
    roles=st.sets(
        st.sampled_from(["agent", "integration", "reviewer", "auditor", "privacy_officer"]), min_size=1
    ),
    route=st.integers(min_value=0, max_value=200),
)
def test_property_any_caller_below_restricted_on_any_route_sees_nothing_restricted(
    api, world, clearance, roles, route
):
    calls = [(m, p, b) for (m, _), cs in requests_for_every_route(world).items() for p, b in cs]
    method, path, body = calls[route % len(calls)]
    token = api.token("clr", "prop-1", sorted(roles), clearance=clearance)
    assert_nothing_restricted(world, api.request(method, path, body, token=token))


def test_a_replayed_write_answers_what_the_first_caller_saw_never_a_withheld_id(api, world):
    # Given a low-clearance write that supersedes the restricted risk rating, with a key
    body = {
        "subject_id": SUBJECT,
        "type": "fact",
        "category": "ACCOUNT_PROFILE",
        "slot": "account.risk_rating",
        "content": "Account risk rating on file is medium after the review.",
        "source": {"kind": "system_of_record", "system": "risk", "reference": "RR-2"},
        "idempotency_key": "clr-replay-1",
    }
    low_integration = api.token("clr", "sync-low", ["integration"], clearance="internal")
    first = api.post("/v1/memories", body, token=low_integration)
    assert first.status == 201, first.body
    assert world["risk_id"] not in json.dumps(first.body)
    # When the same request is replayed with the same key
    replay = api.post("/v1/memories", body, token=low_integration)
    # Then the replay shows no more than the first answer did
    assert replay.status == 200
    assert world["risk_id"] not in json.dumps(replay.body)
    assert replay.body["superseded"] == first.body["superseded"]
    # And neither the new version's own record, its history nor the subject's list names it
    new_id = first.body["memory"]["id"]
    for path in (f"/v1/memories/{new_id}", f"/v1/subjects/{SUBJECT}/memories"):
        assert world["risk_id"] not in json.dumps(api.get(path, token=world["low"]).body), path
