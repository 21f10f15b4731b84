"""Hostile input never earns a 500 (docs/api.md: a clear 4xx with the field named, or a well-defined
result): generated bodies for the routes agents and integrations call most, through the HTTP API."""

import json
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_memory.domain.enums import Role

pytestmark = pytest.mark.e2e
SUBJECT = "ACC-FUZZ-1"

# Text a client might send by mistake or on purpose: control characters (NUL included, which
# PostgreSQL text refuses), lone surrogates, markup, very long runs.
hostile_text = st.one_of(
    st.text(max_size=60),
    st.text(
        alphabet=st.sampled_from(["\x00", "\ud800", "\udfff", "\u202e", "<", "/", "#", "\n", "a"]),
        max_size=40,
    ),
    st.sampled_from(["", " ", "\x00", "ACC\x00-1", "a" * 5_000, "</retrieved_memory>", "\ud83d"]),
)
anything = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(),  # NaN and Infinity too: JSON parsers accept them, jsonb does not
        hostile_text,
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(hostile_text, inner, max_size=3)),
    max_leaves=6,
)
SUITE = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


OMIT = object()


def field_values(known: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Each field well formed three times in four (so most requests get past the first check and
    the rest of the path is exercised), otherwise hostile text, anything at all, or left out."""

    def one(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        modes = st.sampled_from(["good"] * 9 + ["hostile", "anything", "omit"])
        return modes.flatmap(
            lambda m: {"good": good, "hostile": hostile_text, "anything": anything, "omit": st.just(OMIT)}[m]
        )

    fields = {k: one(v) for k, v in known.items()}
    return st.fixed_dictionaries(fields).map(lambda d: {k: v for k, v in d.items() if v is not OMIT})


@pytest.fixture(scope="module")
def agent(api):
    return api.token("fuzz", "agent-1", ["agent"], clearance="confidential")


@pytest.fixture(scope="module")
def integration(api):
    return api.token("fuzz", "crm", ["integration"])


def assert_clear_reply(reply) -> None:
    assert reply.status < 500, reply.body
    if reply.status >= 400:
        assert isinstance(reply.body, dict) and reply.body.get("error"), reply.body


@SUITE
@given(
    body=field_values(
        {
            "subject_id": st.just(SUBJECT),
            "query": st.sampled_from(["renewal discount", "seat price < $40 / month?"]),
            "ticket_id": st.just("T-1"),
            "top_k": st.integers(min_value=-1, max_value=60),
            "max_tokens": st.integers(min_value=-1, max_value=10_000),
            "types": st.lists(st.sampled_from(["fact", "preference", "episode", "nonsense"]), max_size=3),
        }
    )
)
def test_retrieve_never_fails_on_hostile_bodies(api, agent, body):
    # Given any body, well formed or not
    # When an agent asks for context with it
    reply = api.post("/v1/retrieve", body, token=agent)
    # Then the answer is a result or a clear 4xx, never a server error
    assert_clear_reply(reply)


@SUITE
@given(
    body=field_values(
        {
            "subject_id": st.just(SUBJECT),
            "type": st.sampled_from(["fact", "preference", "episode", "commitment"]),
            "category": st.sampled_from(["PREFERENCE", "CONTRACT_COMMERCIAL", "NOPE"]),
            "slot": st.just("contact.channel"),
            "content": st.just("Prefers email."),
            "source": st.just({"kind": "system_of_record", "system": "crm", "reference": "R-1"}),
            "effective_at": st.sampled_from(["2026-01-01T00:00:00Z", "yesterday", "9999-12-31T23:59:59Z"]),
            "confidence": st.floats(min_value=-1, max_value=2),
        }
    )
)
def test_memory_write_never_fails_on_hostile_bodies(api, integration, body):
    # Given any body, well formed or not
    # When an integration writes a memory with it
    reply = api.post("/v1/memories", body, token=integration)
    # Then it is stored or refused clearly, never a server error
    assert_clear_reply(reply)


@SUITE
@given(
    session_id=st.sampled_from(["s-1", "s%00x", "s" * 300, "%F0%9F%98%80"]),
    body=field_values(
        {
            "subject_id": st.just(SUBJECT),
            "channel": st.sampled_from(["meeting", "chat", "pigeon"]),
            "occurred_at": st.sampled_from(["2026-10-02T15:00:00Z", "not a date"]),
            "turns": st.lists(
                st.fixed_dictionaries(
                    {"speaker": st.sampled_from(["customer", "agent", "x"]), "text": hostile_text}
                ),
                max_size=3,
            ),
        }
    ),
)
def test_session_close_never_fails_on_hostile_bodies(api, agent, session_id, body):
    # Given any body and session id, well formed or not
    # When an agent closes a session with it
    reply = api.post(f"/v1/sessions/{session_id}/close", body, token=agent)
    # Then it is accepted or refused clearly, never a server error
    assert_clear_reply(reply)


HOLD = {"hold": st.booleans(), "reason": st.just("litigation LIT-7")}
NOTE = {"note": st.just("checked"), "evidence_ref": st.just("signed-contract-1")}
ROUTES = [  # (method, path, body fields a well-formed request has)
    ("GET", "/v1/audit", {}),
    (
        "POST",
        "/v1/subjects/{id}/erasure",
        {"reason": st.just("gdpr_article_17"), "request_reference": st.just("D-1")},
    ),
    ("GET", "/v1/erasures/{id}", {}),
    ("POST", "/v1/subjects/{id}/legal-hold", HOLD),
    ("POST", "/v1/memories/{id}/legal-hold", HOLD),
    (
        "POST",
        "/v1/memories/{id}/close",
        {"outcome": st.sampled_from(["done", "cancelled"]), "note": st.just("sent")},
    ),
    ("GET", "/v1/memories/{id}", {}),
    ("GET", "/v1/subjects/{id}/memories", {}),
    ("GET", "/v1/policy", {}),
    (
        "PUT",
        "/v1/policy",
        {
            "profile": st.sampled_from(["crm", "support", "wealth", "benchmark"]),
            "overrides": st.fixed_dictionaries(
                {},
                optional={
                    "ttl_days": st.dictionaries(
                        st.sampled_from(["episode", "sentiment", "x"]), anything, max_size=2
                    ),
                    "retrieval_top_k": anything,
                    "retrieval_max_tokens": anything,
                },
            ),
        },
    ),
    ("POST", "/v1/resolutions/search", {"query": st.just("reset the SSO"), "top_k": st.integers(-1, 60)}),
    ("GET", "/v1/review", {}),
    ("POST", "/v1/memories/{id}/approve", NOTE),
    ("POST", "/v1/memories/{id}/reject", NOTE),
    ("POST", "/v1/memories/{id}/reinstate", NOTE),
    ("GET", "/v1/sessions/{id}", {}),
]
path_ids = st.one_of(
    st.sampled_from([SUBJECT, "mem_00000000000000000000000000", "ers_1", "s-1", "x" * 300]),
    st.lists(
        st.sampled_from(["a", "-", "_", ".", "%00", "%F0%9F%98%80", "%E2%80%AE", "~"]), min_size=1, max_size=8
    ).map("".join),
)


@SUITE
@given(
    route_body=st.sampled_from(ROUTES).flatmap(
        lambda r: st.tuples(st.just(r), st.one_of(field_values(r[2]), anything) if r[2] else anything)
    ),
    path_id=path_ids,
    params=st.dictionaries(
        st.sampled_from(["subject_id", "since", "cursor", "limit", "status", "type", "x"]),
        hostile_text | st.integers().map(str),
        max_size=3,
    ),
)
def test_no_route_fails_on_hostile_input(api, route_body, path_id, params):
    # Given any route of the API, an id, query parameters and a body, well formed or not
    (method, template, _), body = route_body
    path = template.replace("{id}", path_id) + (
        "?" + urlencode(params, errors="surrogatepass") if params else ""
    )
    token = api.token("fuzz-all", "ops-1", [r.value for r in Role], clearance="restricted")
    # When a caller holding every role sends it
    reply = api.request(method, path, body if method in ("POST", "PUT") else None, token=token)
    # Then the answer is a result or a clear 4xx, never a server error
    assert_clear_reply(reply)


SOURCE = {"kind": "system_of_record", "system": "crm", "reference": "R-1"}
GOOD_WRITE = {
    "subject_id": "ACC-FUZZ-2",
    "type": "preference",
    "category": "PREFERENCE",
    "slot": "contact.channel",
    "content": "Prefers email.",
    "source": SOURCE,
}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"content": "Prefers\x00 email."}, "content"),
        ({"content": "Prefers \ud800 email."}, "content"),
        ({"ticket_id": "T-\x001"}, "ticket_id"),
        ({"session_id": "S-\x001"}, "session_id"),
        ({"source": {**SOURCE, "reference": "R\x00-1"}}, "source.reference"),
        ({"value": {"channel": "e\x00mail"}}, "value.channel"),
        ({"value": {"k\x00": "email"}}, "value.k\ufffd"),
        ({"value": {"seats": float("nan")}}, "value.seats"),
        ({"value": {"seats": [1, float("inf")]}}, "value.seats.1"),
        ({"x\x00y": 1}, "x\ufffdy"),  # an unknown key: validation fails first, and must not echo it
        ({"source": {**SOURCE, "n\x00": 1}}, "source.n\ufffd"),
    ],
)
def test_text_the_database_cannot_store_is_a_422_naming_the_field_and_nothing_is_stored(
    api, integration, change, field
):
    # Given a well-formed write with one field holding a NUL or a lone surrogate
    # When an integration sends it
    reply = api.post("/v1/memories", {**GOOD_WRITE, **change}, token=integration)
    # Then it is refused with that field named (the NUL itself is never echoed back)
    assert reply.status == 422, reply.body
    assert reply.body["error"]["field"] == field
    assert "\x00" not in str(reply.body)
    # And nothing was stored
    listed = api.get(
        "/v1/subjects/ACC-FUZZ-2/memories", token=api.token("fuzz", "rev", ["reviewer"], "restricted")
    )
    assert listed.status == 200 and listed.body["memories"] == []


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/retrieve", {"subject_id": SUBJECT, "query": "renewal\x00 price"}, "query"),
        ("/v1/retrieve", {"subject_id": "ACC\x00", "query": "renewal"}, "subject_id"),
        ("/v1/retrieve", {"subject_id": SUBJECT, "query": "renewal", "ticket_id": "T\x00"}, "ticket_id"),
        ("/v1/retrieve", {"subject_id": SUBJECT, "query": "renewal \udfff"}, "query"),
        ("/v1/resolutions/search", {"query": "reset", "subject_id": "\x00"}, "subject_id"),
        ("/v1/retrieve", {"subject_id": SUBJECT, "query": "renewal", "top_k": float("inf")}, "top_k"),
        ("/v1/retrieve", {"subject_id": SUBJECT, "query": "renewal", "\x00": 1}, "\ufffd"),
    ],
)
def test_retrieval_refuses_unstorable_value_with_the_field_named(api, agent, path, body, field):
    # Given a retrieval whose text the database could not compare (it used to be a 500)
    # When an agent sends it
    reply = api.post(path, body, token=agent)
    # Then it is a 422 naming the field
    assert reply.status == 422, reply.body
    assert reply.body["error"]["field"] == field


def test_a_vanishingly_small_confidence_is_stored_not_a_500(api, integration):
    # Given a confidence inside [0, 1] too small for the database's `real` (it used to underflow)
    body = {**GOOD_WRITE, "subject_id": "ACC-FUZZ-3", "confidence": 1e-300}
    # When it is written
    reply = api.post("/v1/memories", body, token=integration)
    # Then the write is decided like any other, with the confidence rounded to zero
    assert reply.status == 201, reply.body
    assert reply.body["memory"]["confidence"] == 0.0


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b"[" * 20_000 + b"]" * 20_000, "body"),  # deeper than any JSON parser recurses
        (
            json.dumps({**GOOD_WRITE, "value": json.loads('{"a":' * 12 + "1" + "}" * 12)}).encode(),
            "value",
        ),  # deeper than a structured value needs
    ],
)
def test_deeply_nested_json_is_a_422_not_a_500(api, integration, raw, field):
    # Given a body or a value nested far deeper than any real one
    # When it is sent
    reply = api.request("POST", "/v1/memories", raw=raw, token=integration)
    # Then it is refused naming where
    assert reply.status == 422, reply.body
    assert reply.body["error"]["field"] == field


def test_a_session_id_no_memory_could_carry_is_refused_at_close(api, agent):
    # Given a session id longer than the 256 characters the id rule allows
    body = {
        "subject_id": SUBJECT,
        "occurred_at": "2026-10-02T15:00:00Z",
        "turns": [{"speaker": "customer", "text": "Hi"}],
    }
    # When the session is closed
    reply = api.post("/v1/sessions/" + "s" * 257 + "/close", body, token=agent)
    # Then it is refused at once, naming the field (before, every extracted memory was refused later
    # and the session reported "processed" with nothing stored)
    assert reply.status == 422 and reply.body["error"]["field"] == "session_id"
