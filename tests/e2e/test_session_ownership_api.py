"""One session, one subject, through the local HTTP front on the embedded database: identical
closes sent at once all answer like the first, and a token bound to one subject can neither write
into, read, nor learn of another subject's session (open or closed) on any session route."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest

from agent_memory.api.identity import issue_token

pytestmark = pytest.mark.e2e

TENANT = "sess-own"


def close_body(subject: str, text: str = "Please send the renewal quote by email.") -> dict[str, Any]:
    return {
        "subject_id": subject,
        "channel": "chat",
        "occurred_at": "2026-10-02T15:00:00Z",
        "turns": [{"speaker": "customer", "text": text}],
    }


def bound(api: Any, sub: str, subjects: list[str] | None) -> str:
    return issue_token(api.secret, tenant_id=TENANT, sub=sub, roles=["agent"], subjects=subjects)


def put(api: Any, token: str, session: str, key: str, value: Any, subject: str) -> Any:
    return api.put(
        f"/v1/sessions/{session}/working/{key}", {"subject_id": subject, "value": value}, token=token
    )


def rows(database_url: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """What is really stored (as the owner, past row-level security)."""
    with psycopg.connect(database_url) as conn:
        return conn.execute(sql, args).fetchall()


def shape(reply: Any, *ids: str) -> Any:
    """A reply with the ids it names replaced (and no request id), to compare two replies."""
    body = reply.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = {"error": {k: v for k, v in body["error"].items() if k != "request_id"}}
    text = repr((reply.status, body))
    for i in ids:
        text = text.replace(i, "<id>")
    return text


# -- identical concurrent closes ---------------------------------------------------------------


def test_thirty_six_identical_concurrent_closes_all_answer_like_the_first(api, database_url):
    # Given one session's close, sent 36 times at once
    token = api.token(TENANT, "agent-1", ["agent"])
    body = close_body("CUST-RACE")

    def send(_: int) -> Any:
        return api.post("/v1/sessions/sess-race-36/close", body, token=token)

    with ThreadPoolExecutor(max_workers=36) as pool:
        replies = list(pool.map(send, range(36)))
    # Then every one is a 202 with the same body, and one session with one message is recorded
    assert [(r.status, r.body) for r in replies] == [
        (202, {"session_id": "sess-race-36", "status": "queued"})
    ] * 36
    assert rows(database_url, "SELECT count(*) FROM sessions WHERE session_id = 'sess-race-36'") == [(1,)]
    assert rows(database_url, "SELECT count(*) FROM outbox WHERE dedupe_key LIKE '%%sess-race-36%%'") == [
        (1,)
    ]


def test_concurrent_closes_of_one_id_with_different_turns_are_one_202_and_the_rest_409(api, database_url):
    # Given the same session id closed at once with different turns
    token = api.token(TENANT, "agent-1", ["agent"])

    def send(i: int) -> Any:
        return api.post(
            "/v1/sessions/sess-race-diff/close",
            close_body("CUST-RACE", f"Turn text number {i}."),
            token=token,
        )

    with ThreadPoolExecutor(max_workers=12) as pool:
        replies = list(pool.map(send, range(12)))
    # Then exactly one close is taken, and every other one is a 409 naming the turns
    statuses = sorted(r.status for r in replies)
    assert statuses == [202] + [409] * 11, [(r.status, r.body) for r in replies]
    assert {r.body["error"]["field"] for r in replies if r.status == 409} == {"turns"}


# -- a session belongs to one subject ------------------------------------------------------------


@pytest.fixture(scope="module")
def theirs(api):
    """Subject C-2's sessions, written by an unbound agent: one open (working values), one closed."""
    unbound = bound(api, "agent-all", None)
    assert put(api, unbound, "sess-c2-open", "goal", "renew at 500 seats", "C-2").status == 200
    assert put(api, unbound, "sess-c2-closed", "goal", "renew at 500 seats", "C-2").status == 200
    assert api.post("/v1/sessions/sess-c2-closed/close", close_body("C-2"), token=unbound).status == 202
    return {"open": "sess-c2-open", "closed": "sess-c2-closed"}


@pytest.mark.parametrize("which", ["open", "closed"])
def test_a_bound_token_writing_into_another_subjects_session_answers_as_for_an_unused_id(
    api, database_url, theirs, which
):
    # Given a token bound to C-1 and C-2's session
    mine = bound(api, "agent-c1", ["C-1"])
    session = theirs[which]
    # When it writes working memory for C-1 into C-2's session, and into an id nobody used
    other = put(api, mine, session, "note", "wrote into another session", "C-1")
    unused = put(api, mine, f"sess-unused-{which}", "note", "wrote into another session", "C-1")
    # Then both answers are alike (no existence oracle)
    assert other.status == unused.status == 200
    assert other.body.keys() == unused.body.keys() and other.body["value"] == unused.body["value"]
    # And nothing was written into C-2's session: it still holds only C-2's values
    stored = rows(database_url, "SELECT subject_id, key FROM working_memory WHERE session_id = %s", session)
    assert all(subject == "C-2" for subject, _ in stored)
    assert ("C-1", "note") not in stored
    # And the refusal is in the audit chain with its rule named, without the value
    events = rows(
        database_url,
        "SELECT reason, payload::text FROM memory_events WHERE tenant_id = %s AND actor = 'agent-c1'"
        " AND reason = 'session_of_another_subject'",
        TENANT,
    )
    assert any(session in payload for _, payload in events)
    assert not any("wrote into another session" in payload for _, payload in events)


def test_an_unbound_read_of_another_subjects_session_shows_only_that_subjects_values(api, theirs):
    # Given a bound token's attempt to write into C-2's open session
    put(api, bound(api, "agent-c1", ["C-1"]), theirs["open"], "intruder", "C-1 value", "C-1")
    # When the session is read by a token that sees every subject
    listed = api.get(f"/v1/sessions/{theirs['open']}/working", token=bound(api, "agent-all", None)).body
    # Then it is C-2's session with C-2's values only
    assert listed["subject_id"] == "C-2"
    assert [i["key"] for i in listed["items"]] == ["goal"]


def test_a_bound_token_reads_another_subjects_session_as_an_unknown_one(api, theirs):
    mine = bound(api, "agent-c1", ["C-1"])
    for session in theirs.values():
        # Working memory: as an empty unknown session
        other = api.get(f"/v1/sessions/{session}/working", token=mine)
        unknown = api.get("/v1/sessions/sess-never-used/working", token=mine)
        assert shape(other, session) == shape(unknown, "sess-never-used")
        # The session's status: as an unknown session
        status = api.get(f"/v1/sessions/{session}", token=mine)
        unknown_status = api.get("/v1/sessions/sess-never-used", token=mine)
        assert status.status == unknown_status.status == 404
        assert shape(status, session) == shape(unknown_status, "sess-never-used")


def test_a_bound_token_deleting_another_subjects_value_answers_as_for_an_unknown_key(
    api, database_url, theirs
):
    mine = bound(api, "agent-c1", ["C-1"])
    reply = api.request("DELETE", f"/v1/sessions/{theirs['open']}/working/goal", token=mine)
    unknown = api.request("DELETE", "/v1/sessions/sess-never-used/working/goal", token=mine)
    assert reply.status == unknown.status == 204
    assert rows(
        database_url,
        "SELECT subject_id FROM working_memory WHERE session_id = %s AND key = 'goal'",
        theirs["open"],
    ) == [("C-2",)]


@pytest.mark.parametrize("which", ["open", "closed"])
def test_a_bound_token_closing_another_subjects_session_answers_as_for_an_unused_id(
    api, database_url, theirs, which
):
    # Given a token bound to C-1
    mine = bound(api, "agent-c1", ["C-1"])
    session = theirs[which]
    before = rows(
        database_url,
        "SELECT subject_id, transcript_hash, status FROM sessions WHERE session_id = %s",
        session,
    )
    # When it closes C-2's session for C-1, and an id nobody used
    other = api.post(f"/v1/sessions/{session}/close", close_body("C-1"), token=mine)
    unused = api.post(f"/v1/sessions/sess-close-unused-{which}/close", close_body("C-1"), token=mine)
    # Then both answer alike: 202 queued, never a 500
    assert shape(other, session) == shape(unused, f"sess-close-unused-{which}")
    assert other.status == 202
    # And C-2's session is as it was: not closed for C-1, its working values not cleared
    after = rows(
        database_url,
        "SELECT subject_id, transcript_hash, status FROM sessions WHERE session_id = %s",
        session,
    )
    assert after == before
    if which == "open":
        assert rows(database_url, "SELECT subject_id FROM working_memory WHERE session_id = %s", session) == [
            ("C-2",)
        ]


def test_an_unbound_token_closing_a_session_for_a_subject_other_than_its_values_gets_409(api, theirs):
    # Given C-2's open session (its working values) and a token that sees every subject
    unbound = bound(api, "agent-all", None)
    # When it closes that session for C-1
    reply = api.post(f"/v1/sessions/{theirs['open']}/close", close_body("C-1"), token=unbound)
    # Then the session is C-2's: a 409 naming the subject, and C-2's values are still there
    assert reply.status == 409 and reply.body["error"]["field"] == "subject_id"
    assert [
        i["key"] for i in api.get(f"/v1/sessions/{theirs['open']}/working", token=unbound).body["items"]
    ] == ["goal"]


def test_while_its_own_subject_is_being_erased_another_subjects_session_answers_as_an_unused_id(
    api, container, theirs
):
    # Given an erasure of C-9 that is running (its workflow not started here), and a token bound to C-9
    officer = issue_token(api.secret, tenant_id=TENANT, sub="dpo-1", roles=["privacy_officer"])
    mine = bound(api, "agent-c9", ["C-9"])
    start = container.erasure.start_workflow
    container.erasure.start_workflow = None
    try:
        started = api.post("/v1/subjects/C-9/erasure", {"reason": "gdpr_article_17"}, token=officer)
        assert started.status == 202 and started.body["status"] == "running"
        # When it writes for C-9 into C-2's session and into an unused id
        other = put(api, mine, theirs["open"], "note", "x", "C-9")
        unused = put(api, mine, "sess-unused-erasing", "note", "x", "C-9")
        # Then both are the same refusal
        assert shape(other, theirs["open"]) == shape(unused, "sess-unused-erasing")
        assert other.status == 409
    finally:
        container.erasure.start_workflow = start
    with container.db.tenant_transaction(TENANT, subjects=None) as conn:
        conn.execute("UPDATE erasure_requests SET status = 'failed' WHERE subject_id = 'C-9'")
