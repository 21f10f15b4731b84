"""The HTTP edges a careless or hostile client reaches: media types, path ids, header sizes,
almost-right tokens. Each answer is the API's JSON error body, with the field named."""

from __future__ import annotations

import http.client
import json
import socket

import jwt
import pytest

pytestmark = pytest.mark.e2e

MEMORY = {
    "subject_id": "jane.doe@example.com",
    "type": "preference",
    "slot": "preference.contact_channel",
    "content": "Please send renewal paperwork by email, not phone.",
    "source": {"kind": "customer_confirmed"},
}


@pytest.fixture(scope="module")
def tokens(api):
    return {
        "agent": api.token("edges", "agent-1", ["agent"]),
        "privacy": api.token("edges", "dpo-1", ["privacy_officer"]),
    }


def _port(api) -> int:
    return int(api.base.rsplit(":", 1)[1])


def raw_request(api, method, path, body: bytes | None, headers: dict[str, str]):
    conn = http.client.HTTPConnection("127.0.0.1", _port(api), timeout=20)
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        payload = resp.read()
        return resp.status, dict(resp.getheaders()), payload
    finally:
        conn.close()


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "APPLICATION/JSON",
        "Application/Json; charset=UTF-8",
        'application/json; charset="utf-8"',
    ],
)
def test_json_in_any_letter_case_with_a_utf8_charset_is_json(api, tokens, content_type):
    # Given a JSON body labelled as JSON in one of the ways clients spell it
    status, _, payload = raw_request(
        api,
        "POST",
        "/v1/retrieve",
        json.dumps({"subject_id": "CASE-1", "query": "contact?"}).encode(),
        {"Content-Type": content_type, "Authorization": f"Bearer {tokens['agent']}"},
    )
    # Then it is served
    assert status == 200, payload


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/xml",
        "application/json; charset=latin-1",
        "multipart/form-data; boundary=x",
        "application/x-www-form-urlencoded",
        "application/jsonp",
    ],
)
@pytest.mark.parametrize("path", ["/v1/retrieve", "/v1/memories", "/v1/sessions/S-1/close", "/v1/policy"])
def test_any_other_media_type_is_415_with_the_json_error_body(api, tokens, content_type, path):
    # Given a body sent with a media type that is not JSON (or JSON in another charset)
    method = "PUT" if path == "/v1/policy" else "POST"
    status, headers, payload = raw_request(
        api,
        method,
        path,
        json.dumps(MEMORY).encode(),
        {"Content-Type": content_type, "Authorization": f"Bearer {tokens['agent']}"},
    )
    # Then 415 with the error body naming the header, never a 500
    assert status == 415
    error = json.loads(payload)["error"]
    assert error["code"] == "unsupported_media_type" and error["field"] == "Content-Type"
    assert error["request_id"]
    assert headers["Content-Type"].startswith("application/json")


def test_oversized_headers_get_the_json_error_body(api, tokens):
    # Given a request whose one header line is larger than the server reads
    status, _, payload = raw_request(api, "GET", "/v1/health", None, {"X-Big": "a" * 70_000})
    # Then the refusal is the API's JSON error, not an HTML page
    assert status in (400, 431)
    assert json.loads(payload)["error"]["code"] in ("invalid_request", "payload_too_large")
    # And too many headers too
    status, _, payload = raw_request(api, "GET", "/v1/health", None, {f"X-H{i}": "v" for i in range(150)})
    assert status == 431 and "error" in json.loads(payload)


def test_a_validation_error_on_the_field_named_query_names_it(api, tokens):
    reply = api.post("/v1/retrieve", {"subject_id": "Q-1", "query": 42}, token=tokens["agent"])
    assert reply.status == 422 and reply.body["error"]["field"] == "query"
    missing = api.post("/v1/retrieve", {"subject_id": "Q-1"}, token=tokens["agent"])
    assert missing.status == 422 and missing.body["error"]["field"] == "query"


def test_a_percent_encoded_subject_id_is_decoded_once_and_erased_for_real(api, tokens):
    # Given memories of jane.doe@example.com
    assert api.post("/v1/memories", MEMORY, token=tokens["agent"]).status == 201
    listed = api.get("/v1/subjects/jane.doe%40example.com/memories", token=tokens["agent"])
    assert listed.status == 200 and len(listed.body["memories"]) == 1
    assert listed.body["subject_id"] == "jane.doe@example.com"
    # When her erasure is requested with the @ percent-encoded, as any URL library sends it
    started = api.post(
        "/v1/subjects/jane.doe%40example.com/erasure", {"reason": "gdpr_article_17"}, token=tokens["privacy"]
    )
    assert started.status == 202
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = api.get(f"/v1/erasures/{started.body['erasure_id']}", token=tokens["privacy"]).body
        if done["status"] != "running":
            break
        time.sleep(0.1)
    # Then the receipt counts her memory, and nothing of hers is left
    assert done["status"] == "verified" and done["receipt"]["records"] == 1
    assert api.get("/v1/subjects/jane.doe@example.com/memories", token=tokens["agent"]).body["memories"] == []


BAD_IDS = [
    "..",
    "%2e%2e",
    "%2e%2e%2f",
    "a%00b",
    "%ff%fe",
    "a" * 257,
    "a%2Fb",
    "%252F",
    ".hidden",
    "a%20b",
    "a%0Ab",
    "caf%C3%A9",
    "-x",
]


@pytest.mark.parametrize("bad", BAD_IDS)
@pytest.mark.parametrize(
    ("method", "template", "field"),
    [
        ("GET", "/v1/subjects/{}/memories", "subject_id"),
        ("POST", "/v1/subjects/{}/erasure", "subject_id"),
        ("POST", "/v1/subjects/{}/legal-hold", "subject_id"),
        ("POST", "/v1/sessions/{}/close", "session_id"),
        ("GET", "/v1/sessions/{}", "session_id"),
        ("GET", "/v1/memories/{}", "memory_id"),
    ],
)
def test_a_path_id_outside_the_rule_is_422_naming_the_field_and_writes_nothing(
    api, tokens, bad, method, template, field
):
    token = tokens["privacy"] if "erasure" in template or "hold" in template else tokens["agent"]
    body = {"reason": "gdpr_article_17"} if "erasure" in template else None
    if "legal-hold" in template:
        body = {"hold": True, "reason": "litigation"}
    if "close" in template:
        body = {
            "subject_id": "S-OK",
            "occurred_at": "2026-10-02T15:00:00Z",
            "turns": [{"speaker": "customer", "text": "hi"}],
        }
    reply = api.request(method, template.format(bad), body, token=token)
    assert reply.status == 422, (bad, reply.status, reply.body)
    assert reply.body["error"]["field"] == field


@pytest.mark.parametrize("bad", ["..", "a/b", "a\x00b", "a" * 257, "ca\u0301fe", "jane doe", ".x"])
def test_a_body_subject_id_outside_the_rule_is_422_naming_the_field(api, tokens, bad):
    for path, body in (
        ("/v1/memories", {**MEMORY, "subject_id": bad}),
        ("/v1/retrieve", {"subject_id": bad, "query": "x"}),
    ):
        reply = api.post(path, body, token=tokens["agent"])
        assert reply.status == 422 and reply.body["error"]["field"] == "subject_id", (path, bad, reply.body)


def test_a_256_character_subject_id_is_accepted(api, tokens):
    long_id = "A" + "b" * 255
    assert api.post("/v1/memories", {**MEMORY, "subject_id": long_id}, token=tokens["agent"]).status == 201
    assert api.get(f"/v1/subjects/{long_id}/memories", token=tokens["agent"]).status == 200


def test_an_audit_query_subject_outside_the_rule_is_422(api):
    auditor = api.token("edges", "aud-1", ["auditor"])
    reply = api.get("/v1/audit?subject_id=a%0Ab", token=auditor)
    assert reply.status == 422 and reply.body["error"]["field"] == "subject_id"


@pytest.mark.parametrize("roles", ["agent", ["agent", "root"], [], None])
def test_an_almost_right_token_is_401(api, roles):
    claims = {"sub": "u", "tenant_id": "edges", "exp": 4_102_444_800}
    if roles is not None:
        claims["roles"] = roles
    token = jwt.encode(claims, api.secret, algorithm="HS256")
    reply = api.post("/v1/retrieve", {"subject_id": "X-1", "query": "q"}, token=token)
    if roles == []:
        assert reply.status == 403  # a valid token that may do nothing
    else:
        assert reply.status == 401 and reply.body["error"]["code"] == "unauthenticated"


def test_a_client_that_disconnects_mid_body_writes_nothing(api, tokens, database_url):
    # Given a request announcing a body of 2,000 bytes that sends half of it and closes
    body = json.dumps({**MEMORY, "subject_id": "HALF-BODY", "content": "x" * 1900}).encode()
    with socket.create_connection(("127.0.0.1", _port(api)), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {tokens['agent']}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body[: len(body) // 2]
        )
    # Then the server stays up and nothing was stored for the subject
    assert api.get("/v1/health").status == 200
    assert api.get("/v1/subjects/HALF-BODY/memories", token=tokens["agent"]).body["memories"] == []


def test_a_malformed_content_length_is_a_json_400(api):
    with socket.create_connection(("127.0.0.1", _port(api)), timeout=10) as sock:
        sock.sendall(b"POST /v1/retrieve HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):  # the server closes the connection after a refusal
            data += chunk
    head, _, payload = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and json.loads(payload)["error"]["code"] == "invalid_request"


def _raw_exchange(api, request: bytes) -> tuple[bytes, bytes]:
    with socket.create_connection(("127.0.0.1", _port(api)), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, payload = data.partition(b"\r\n\r\n")
    return head, payload


@pytest.mark.parametrize(
    ("request_line", "expected"),
    [
        (b"FOO /v1/health HTTP/1.1", b"HTTP/1.1 405"),
        (b"GET /v1/health HTTP/3.0", b"HTTP/1.1 400"),
        (b"GET /v1/" + b"a" * 70_000 + b" HTTP/1.1", b"HTTP/1.1 414"),
    ],
)
def test_http_servers_own_refusals_are_4xx_json_never_5xx(api, request_line, expected):
    head, payload = _raw_exchange(api, request_line + b"\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert head.startswith(expected), head[:80]
    assert "error" in json.loads(payload)


def test_a_chunked_body_is_refused_with_411_not_read_as_the_next_request(api, tokens):
    body = json.dumps({"subject_id": "CHUNK-1", "query": "x"}).encode()
    chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    head, payload = _raw_exchange(
        api,
        b"POST /v1/retrieve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Authorization: Bearer {tokens['agent']}\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
        + chunked,
    )
    assert head.startswith(b"HTTP/1.1 411") and json.loads(payload)["error"]["code"] == "invalid_request"


@pytest.mark.parametrize("method", ["HEAD", "OPTIONS"])
def test_head_and_options_are_405_not_501(api, method):
    status, _, _ = raw_request(api, method, "/v1/health", None, {})
    assert status == 405


def test_a_utf8_byte_order_mark_before_the_json_is_accepted(api, tokens):
    body = "\ufeff" + json.dumps({"subject_id": "BOM-1", "query": "contact?"})
    status, _, payload = raw_request(
        api,
        "POST",
        "/v1/retrieve",
        body.encode("utf-8"),
        {"Content-Type": "application/json", "Authorization": f"Bearer {tokens['agent']}"},
    )
    assert status == 200, payload


def test_a_utf16_body_is_a_400_naming_the_body(api, tokens):
    body = json.dumps({"subject_id": "U16-1", "query": "contact?"}).encode("utf-16")
    status, _, payload = raw_request(
        api,
        "POST",
        "/v1/retrieve",
        body,
        {"Content-Type": "application/json", "Authorization": f"Bearer {tokens['agent']}"},
    )
    assert status == 400 and json.loads(payload)["error"]["field"] == "body"


@pytest.mark.parametrize("raw", [b"", b"[]", b'"text"', b"null", b"42"])
def test_a_missing_or_non_object_body_is_422_naming_the_body(api, tokens, raw):
    reply = api.post("/v1/retrieve", raw=raw, token=tokens["agent"])
    assert reply.status == 422 and reply.body["error"]["field"] == "body", reply.body


def test_a_session_dated_days_ahead_is_refused_at_close(api, tokens):
    reply = api.post(
        "/v1/sessions/S-FUTURE-1/close",
        {
            "subject_id": "FUT-1",
            "occurred_at": "2099-01-01T00:00:00Z",
            "turns": [{"speaker": "customer", "text": "Please email me."}],
        },
        token=tokens["agent"],
    )
    assert reply.status == 422 and reply.body["error"]["field"] == "occurred_at"
    assert api.get("/v1/sessions/S-FUTURE-1", token=tokens["agent"]).status == 404
