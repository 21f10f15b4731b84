"""Retries, timeouts and errors against a real local HTTP server (pytest-httpserver) that answers
what the test scripts: 503 with Retry-After then 200, 429 until the retries run out, each error
status with the service's error body."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
from agent_memory_client import (
    NO_RETRIES,
    AsyncMemoryClient,
    Conflict,
    ErasureWaitTimeout,
    Forbidden,
    InvalidRequest,
    MemoryApiError,
    MemoryClient,
    MemoryTransportError,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    RetryPolicy,
    ServerError,
    SessionWaitTimeout,
    Unauthenticated,
    Unavailable,
    UnsupportedMediaType,
)
from agent_memory_client._core import parse_retry_after
from pydantic import ValidationError
from pytest_httpserver import HTTPServer

HEALTH = {"status": "ok", "database": "ok", "embedder": "local-minilm-onnx", "version": "0.1.0"}


def error_body(code: str, field: str | None = None) -> dict:
    error = {"code": code, "message": f"{code} here", "request_id": "req-123"}
    if field:
        error["field"] = field
    return {"error": error}


@pytest.fixture
def slept(monkeypatch) -> list[float]:
    """The waits the clients asked for, recorded instead of slept."""
    waits: list[float] = []

    def record(seconds: float) -> None:
        waits.append(seconds)

    async def record_async(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr("agent_memory_client.client.time.sleep", record)
    monkeypatch.setattr("agent_memory_client.async_client.asyncio.sleep", record_async)
    return waits


def client_of(httpserver: HTTPServer, **kw) -> MemoryClient:
    return MemoryClient(httpserver.url_for("/"), token="t0k", **kw)


def test_a_503_with_retry_after_is_retried_after_that_wait(httpserver: HTTPServer, slept):
    # Given a server that is unavailable once, asking for 2 s, then answers
    httpserver.expect_ordered_request("/v1/health", method="GET").respond_with_json(
        error_body("unavailable"), status=503, headers={"Retry-After": "2"}
    )
    httpserver.expect_ordered_request("/v1/health", method="GET").respond_with_json(HEALTH)
    # When the client asks
    with client_of(httpserver) as client:
        health = client.health()
    # Then it waited what the server asked, once, and returned the second answer
    assert health.status == "ok"
    assert slept == [2.0]
    assert len(httpserver.log) == 2
    httpserver.check_assertions()


def test_a_429_is_retried_with_backoff_until_the_retries_run_out(httpserver: HTTPServer, slept):
    # Given a server that always rate-limits, without saying how long to wait
    httpserver.expect_request("/v1/retrieve", method="POST").respond_with_json(
        error_body("rate_limited"), status=429
    )
    policy = RetryPolicy(max_retries=3, backoff_base=0.5, backoff_max=1.5)
    # When the client retrieves
    with client_of(httpserver, retry=policy) as client, pytest.raises(RateLimited) as raised:
        client.retrieve("CUST-1", "anything")
    # Then it tried four times, waiting longer each time up to the cap, and raised the last answer
    assert len(httpserver.log) == 4
    assert len(slept) == 3
    assert 0.25 <= slept[0] <= 0.5 and 0.5 <= slept[1] <= 1.0 and 0.75 <= slept[2] <= 1.5
    assert raised.value.code == "rate_limited" and raised.value.request_id == "req-123"


def test_a_storage_quota_is_raised_at_once_with_the_limit_named(httpserver: HTTPServer, slept):
    # Given a server whose tenant quota is reached, asking for a minute's wait
    body = {
        "error": {
            "code": "rate_limited",
            "message": "this subject holds 2 live memories, the policy's quota is 2",
            "request_id": "req-9",
            "field": "quota_memories_per_subject",
            "reason": "memories_per_subject",
            "limit": 2,
        }
    }
    httpserver.expect_request("/v1/retrieve", method="POST").respond_with_json(
        body, status=429, headers={"Retry-After": "60"}
    )
    # When the client asks
    with client_of(httpserver) as client, pytest.raises(RateLimited) as raised:
        client.retrieve("CUST-1", "anything")
    # Then it did not wait (a minute is past what it retries after) and the quota is named
    assert slept == [] and len(httpserver.log) == 1
    assert (raised.value.reason, raised.value.field, raised.value.limit) == (
        "memories_per_subject",
        "quota_memories_per_subject",
        2,
    )
    assert raised.value.retry_after == 60


def test_a_retry_after_beyond_the_bound_is_not_waited_for(httpserver: HTTPServer, slept):
    # Given a server asking for an hour's wait
    httpserver.expect_request("/v1/health").respond_with_json(
        error_body("unavailable"), status=503, headers={"Retry-After": "3600"}
    )
    # When the client (willing to wait 30 s at most) asks
    with client_of(httpserver) as client, pytest.raises(Unavailable) as raised:
        client.health()
    # Then it raised at once with what the server asked for
    assert slept == [] and len(httpserver.log) == 1
    assert raised.value.retry_after == 3600.0 and raised.value.status == 503


def test_without_retries_the_first_answer_is_raised(httpserver: HTTPServer, slept):
    httpserver.expect_request("/v1/health").respond_with_json(error_body("unavailable"), status=503)
    with client_of(httpserver, retry=NO_RETRIES) as client, pytest.raises(Unavailable):
        client.health()
    assert slept == [] and len(httpserver.log) == 1


def test_retry_after_as_an_http_date():
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert parse_retry_after(format_datetime(now + timedelta(seconds=7), usegmt=True), now=now) == 7.0
    assert parse_retry_after("5") == 5.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


@pytest.mark.parametrize(
    ("status", "code", "field", "cls"),
    [
        (400, "invalid_request", "body", InvalidRequest),
        (401, "unauthenticated", None, Unauthenticated),
        (403, "unauthorized_memory_mutation", None, Forbidden),
        (404, "not_found", None, NotFound),
        (409, "conflict", None, Conflict),
        (413, "payload_too_large", "body", PayloadTooLarge),
        (415, "unsupported_media_type", "Content-Type", UnsupportedMediaType),
        (422, "invalid_request", "top_k", InvalidRequest),
        (500, "internal_error", None, ServerError),
    ],
)
def test_each_error_status_raises_its_class_with_code_field_and_request_id(
    httpserver: HTTPServer, status, code, field, cls
):
    # Given a server answering that status with the service's error body
    httpserver.expect_request("/v1/retrieve").respond_with_json(error_body(code, field), status=status)
    # When the client retrieves
    with client_of(httpserver) as client, pytest.raises(cls) as raised:
        client.retrieve("CUST-1", "anything")
    # Then the exception is that class and carries the body's fields
    error = raised.value
    assert isinstance(error, MemoryApiError)
    assert (error.status, error.code, error.field, error.request_id) == (status, code, field, "req-123")
    assert len(httpserver.log) == 1  # none of these is retried


def test_an_error_without_the_services_body_still_raises_its_class(httpserver: HTTPServer):
    httpserver.expect_request("/v1/health").respond_with_data("gateway says no", status=403)
    with client_of(httpserver) as client, pytest.raises(Forbidden) as raised:
        client.health()
    assert raised.value.code == "forbidden" and raised.value.request_id is None


def test_path_values_are_percent_encoded_once(httpserver: HTTPServer):
    # Given a subject id with characters a path must escape
    httpserver.expect_request("/v1/subjects/a@b.com:x+y/memories").respond_with_json(
        {"subject_id": "a@b.com:x+y", "memories": [], "next_cursor": None}
    )
    # When the client lists its memories
    with client_of(httpserver) as client:
        page = client.list_memories("a@b.com:x+y", status="active")
    # Then the path on the wire has each escaped exactly once, and the token and query went along
    request, _ = httpserver.log[0]
    raw = request.environ.get("RAW_URI") or request.environ.get("REQUEST_URI")
    assert raw == "/v1/subjects/a%40b.com%3Ax%2By/memories?status=active"
    assert request.headers["Authorization"] == "Bearer t0k"
    assert page.subject_id == "a@b.com:x+y"


def test_write_memory_sends_an_idempotency_key_and_keeps_the_callers(httpserver: HTTPServer):
    reply: dict[str, Any] = {"decision": "duplicate", "reasons": [], "memory": None, "superseded": []}
    httpserver.expect_request("/v1/memories", method="POST").respond_with_json(reply, status=200)
    memory = {"subject_id": "CUST-1", "type": "fact", "content": "c", "source": {"kind": "agent_inference"}}
    with client_of(httpserver) as client:
        client.write_memory(memory)
        client.write_memory(memory, idempotency_key="crm:CTR-118:v3")
    generated = httpserver.log[0][0].get_json()["idempotency_key"]
    kept = httpserver.log[1][0].get_json()["idempotency_key"]
    assert generated.startswith("client:") and len(generated) > 20
    assert kept == "crm:CTR-118:v3"
    assert httpserver.log[0][0].headers["Content-Type"] == "application/json"


def test_a_refused_connection_is_retried_then_raised_as_a_transport_error(slept):
    # Given an address nothing listens on (a port just released)
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # When the client asks, allowing two retries
    client = MemoryClient(f"http://127.0.0.1:{port}", retry=RetryPolicy(max_retries=2))
    with client, pytest.raises(MemoryTransportError) as raised:
        client.health()
    # Then it tried three times and says so as a transport error, from httpx's
    assert len(slept) == 2
    assert isinstance(raised.value.__cause__, httpx.ConnectError)


def test_the_timeout_is_the_clients(httpserver: HTTPServer):
    with client_of(httpserver, timeout=httpx.Timeout(3.0, connect=1.0)) as client:
        assert client._http.timeout == httpx.Timeout(3.0, connect=1.0)


def test_the_async_client_retries_a_503_the_same_way(httpserver: HTTPServer, slept):
    # Given a server unavailable once (Retry-After 1), then answering
    httpserver.expect_ordered_request("/v1/sessions/s@1").respond_with_json(
        error_body("unavailable"), status=503, headers={"Retry-After": "1"}
    )
    httpserver.expect_ordered_request("/v1/sessions/s@1").respond_with_json(
        {"session_id": "s@1", "status": "processed", "admitted": 1}
    )

    async def main():
        async with AsyncMemoryClient(httpserver.url_for("/"), token="t0k") as client:
            return await client.get_session("s@1")

    # When the async client asks
    status = asyncio.run(main())
    # Then it waited once, as asked, and returned the second answer
    assert status.status == "processed" and status.done and status.admitted == 1
    assert slept == [1.0] and len(httpserver.log) == 2


def test_close_session_wait_gives_up_after_its_timeout_with_the_last_status(httpserver: HTTPServer, slept):
    # Given a server that accepts the session and keeps it queued
    httpserver.expect_request("/v1/sessions/s-9/close", method="POST").respond_with_json(
        {"session_id": "s-9", "status": "queued"}, status=202
    )
    httpserver.expect_request("/v1/sessions/s-9", method="GET").respond_with_json(
        {"session_id": "s-9", "status": "queued"}
    )
    turns = [{"speaker": "customer", "text": "hello"}]
    # When the client closes it waiting no time at all
    with client_of(httpserver) as client, pytest.raises(SessionWaitTimeout) as raised:
        client.close_session(
            "s-9", subject_id="C-1", occurred_at="2026-10-02T15:00:00Z", turns=turns, wait=True, timeout=0
        )
    # Then it read the status once and raised with it, the session still queued
    assert raised.value.session.status == "queued" and not raised.value.session.done
    assert isinstance(raised.value, TimeoutError)
    assert [r.method for r, _ in httpserver.log] == ["POST", "GET"] and slept == []


def test_request_erasure_wait_polls_until_verified_and_gives_up_with_the_last_status(
    httpserver: HTTPServer, slept
):
    # Given a server whose erasure is running on the first read and verified on the second
    running = {
        "erasure_id": "er-1",
        "subject_id": "C-1",
        "status": "running",
        "deadline": "2026-12-30T00:00:00Z",
    }
    httpserver.expect_request("/v1/subjects/C-1/erasure", method="POST").respond_with_json(
        running, status=202
    )
    httpserver.expect_oneshot_request("/v1/erasures/er-1", method="GET").respond_with_json(running)
    httpserver.expect_oneshot_request("/v1/erasures/er-1", method="GET").respond_with_json(
        {**running, "status": "verified", "receipt": {"records": 3}}
    )
    # When the client asks for the erasure and waits
    with client_of(httpserver) as client:
        done = client.request_erasure("C-1", reason="gdpr_article_17", wait=True, poll_interval=0.25)
    # Then it polled until the erasure was verified, sleeping between reads
    assert done.status == "verified" and done.done and done.receipt == {"records": 3}
    assert [r.method for r, _ in httpserver.log] == ["POST", "GET", "GET"] and slept == [0.25, 0.25]
    # And when the erasure is still running at the deadline, it raises with the last status read
    httpserver.clear()
    httpserver.expect_request("/v1/subjects/C-1/erasure", method="POST").respond_with_json(
        running, status=202
    )
    with client_of(httpserver) as client, pytest.raises(ErasureWaitTimeout) as raised:
        client.request_erasure("C-1", reason="gdpr_article_17", wait=True, timeout=0)
    assert raised.value.erasure.status == "running" and isinstance(raised.value, TimeoutError)


def test_a_request_model_refuses_an_unknown_field_before_sending(httpserver: HTTPServer):
    with client_of(httpserver) as client, pytest.raises(ValidationError):
        client.retrieve("C-1", "anything", top_kk=3)
    assert httpserver.log == []
