"""While PostgreSQL is frozen (it accepts connections but never answers) or stopped, every route
answers 503 `unavailable` with Retry-After instead of hanging, and the service recovers on its own
when the database comes back: no restart, dead connections replaced."""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil  # ships with the embedded PostgreSQL
import pytest

pytestmark = pytest.mark.e2e
T = "db-outage"
SUBJECT = "ACC-OUT-1"
# A request that hangs fails the test instead of blocking the suite: far longer than the outage
# timeouts the container below is built with, far shorter than the 30-60 s hang they replace.
CLIENT_TIMEOUT_S = 20


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str]


@pytest.fixture(scope="module")
def outage_server() -> Iterator[Any]:
    """A PostgreSQL of this module's own: freezing or stopping the shared one would stall the rest."""
    from agent_memory.local.embedded import embedded_server

    server = embedded_server(Path(tempfile.mkdtemp(prefix="memory-outage-")) / "pg", cleanup_mode="delete")
    yield server
    _resume(_postgres_processes(server))
    if not _running(server):
        server.ensure_postgres_running()
    server.cleanup()


@pytest.fixture(scope="module")
def container(outage_server: Any, embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    import psycopg

    from agent_memory.bootstrap import build_container, set_container
    from agent_memory.config import Settings

    with psycopg.connect(outage_server.get_uri(), autocommit=True) as conn:
        conn.execute('CREATE DATABASE "outage"')
    settings = Settings(
        database_url=outage_server.get_uri("outage"),
        data_dir=tmp_path_factory.mktemp("data"),
        jwt_secret="test-secret-" + "x" * 32,
    )  # the default outage bounds: the 3 s contract below holds with them, untuned
    c = build_container(settings, embedder=embedder)
    set_container(c)
    yield c
    set_container(None)
    c.close()


def _call(api: Any, method: str, path: str, body: Any = None, token: str | None = None) -> Reply:
    """One request with a client timeout: a hang raises TimeoutError and fails the test."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(api.base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=CLIENT_TIMEOUT_S) as resp:
            payload, status, resp_headers = resp.read(), resp.status, dict(resp.headers)
    except urllib.error.HTTPError as err:
        payload, status, resp_headers = err.read(), err.code, dict(err.headers)
    is_json = "json" in resp_headers.get("Content-Type", "")
    return Reply(status, json.loads(payload) if payload and is_json else payload, resp_headers)


def _memory(subject: str, slot: str, content: str) -> dict[str, Any]:
    return {
        "subject_id": subject,
        "type": "fact",
        "category": "ACCOUNT_PROFILE",
        "slot": slot,
        "content": content,
        "source": {"kind": "system_of_record", "system": "crm"},
    }


def _routes(api: Any, round_name: str) -> dict[str, Callable[[], Reply]]:
    """The calls each scenario makes: health, a retrieval, a write, a subject's memories."""
    agent = api.token(T, "agent", ["agent"])
    integ = api.token(T, "crm", ["integration"])
    return {
        "health": lambda: _call(api, "GET", "/v1/health"),
        "retrieve": lambda: _call(
            api, "POST", "/v1/retrieve", {"subject_id": SUBJECT, "query": "plan tier?"}, agent
        ),
        "write": lambda: _call(
            api,
            "POST",
            "/v1/memories",
            _memory(f"ACC-{round_name}", "account.plan_tier", "Plan tier is Business."),
            integ,
        ),
        "list": lambda: _call(api, "GET", f"/v1/subjects/{SUBJECT}/memories", token=agent),
    }


# The contract: within 3 s of a hung database, every route answers 503 with Retry-After. Measured
# here from the client, through the local HTTP front, with half a second for a loaded machine.
ANSWER_WITHIN_S = 3.5
# Routes that never need the database: they answer as usual while it is hung.
WITHOUT_DATABASE = frozenset({("GET", "/v1/openapi.json"), ("GET", "/v1/docs")})


def _request_per_route(memory_id: str) -> dict[tuple[str, str], tuple[str, Any]]:
    """A valid request for every route of the function table: each would succeed on a live database."""
    m, s = memory_id, SUBJECT
    return {
        ("POST", "/v1/memories"): ("/v1/memories", _memory("ACC-OUT-2", "account.plan_tier", "Tier B.")),
        ("POST", "/v1/memories/{memory_id}/close"): (f"/v1/memories/{m}/close", {"outcome": "done"}),
        ("POST", "/v1/memories/{memory_id}/revalidate"): (f"/v1/memories/{m}/revalidate", None),
        ("GET", "/v1/memories/{memory_id}"): (f"/v1/memories/{m}", None),
        ("DELETE", "/v1/memories/{memory_id}"): (f"/v1/memories/{m}", {"reason": "customer request"}),
        ("GET", "/v1/subjects/{subject_id}/memories"): (f"/v1/subjects/{s}/memories", None),
        ("GET", "/v1/review"): ("/v1/review", None),
        ("POST", "/v1/memories/{memory_id}/approve"): (
            f"/v1/memories/{m}/approve",
            {"evidence_ref": "DOC-7781"},
        ),
        ("POST", "/v1/memories/{memory_id}/reject"): (f"/v1/memories/{m}/reject", {"note": "no"}),
        ("POST", "/v1/memories/{memory_id}/reinstate"): (f"/v1/memories/{m}/reinstate", {}),
        ("GET", "/v1/policy"): ("/v1/policy", None),
        ("PUT", "/v1/policy"): ("/v1/policy", {"profile": "support", "overrides": {}}),
        ("GET", "/v1/audit"): (f"/v1/audit?subject_id={s}", None),
        ("GET", "/v1/health"): ("/v1/health", None),
        ("GET", "/v1/openapi.json"): ("/v1/openapi.json", None),
        ("GET", "/v1/docs"): ("/v1/docs", None),
        ("POST", "/v1/retrieve"): ("/v1/retrieve", {"subject_id": s, "query": "plan tier?"}),
        ("POST", "/v1/resolutions/search"): ("/v1/resolutions/search", {"query": "plan tier"}),
        ("POST", "/v1/sessions/{session_id}/close"): (
            "/v1/sessions/S-OUT-1/close",
            {
                "subject_id": s,
                "occurred_at": "2026-10-02T15:00:00Z",
                "turns": [{"speaker": "customer", "text": "Email me the invoice."}],
            },
        ),
        ("GET", "/v1/sessions/{session_id}"): ("/v1/sessions/S-OUT-1", None),
        ("GET", "/v1/sessions/{session_id}/extraction"): ("/v1/sessions/S-OUT-1/extraction", None),
        ("PUT", "/v1/sessions/{session_id}/working/{key}"): (
            "/v1/sessions/S-OUT-1/working/topic",
            {"subject_id": s, "value": "invoice"},
        ),
        ("GET", "/v1/sessions/{session_id}/working"): ("/v1/sessions/S-OUT-1/working", None),
        ("DELETE", "/v1/sessions/{session_id}/working/{key}"): ("/v1/sessions/S-OUT-1/working/topic", None),
        ("POST", "/v1/subjects/{subject_id}/erasure"): (
            "/v1/subjects/ACC-OUT-9/erasure",
            {"reason": "customer request"},
        ),
        ("GET", "/v1/erasures/{erasure_id}"): ("/v1/erasures/era_none", None),
        ("POST", "/v1/subjects/{subject_id}/legal-hold"): (
            f"/v1/subjects/{s}/legal-hold",
            {"hold": False, "reason": "case closed"},
        ),
        ("POST", "/v1/memories/{memory_id}/legal-hold"): (
            f"/v1/memories/{m}/legal-hold",
            {"hold": False, "reason": "case closed"},
        ),
        ("GET", "/v1/subjects/{subject_id}/export"): (f"/v1/subjects/{s}/export", None),
    }


def _postgres_processes(server: Any) -> list[psutil.Process]:
    try:
        postmaster = psutil.Process(server.get_pid())
        return [postmaster, *postmaster.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _resume(processes: list[psutil.Process]) -> None:
    for p in processes:
        with suppress(psutil.NoSuchProcess):
            p.resume()


def _running(server: Any) -> bool:
    try:
        return psutil.Process(server.get_pid()).is_running()
    except psutil.NoSuchProcess:
        return False


@contextmanager
def frozen(server: Any) -> Iterator[None]:
    """SIGSTOP the postmaster and every backend: the socket still accepts, nothing answers.
    The postmaster first, so it forks no backend after the list of children is read; then the
    children, read again until no new one appears."""
    stopped_pids: dict[int, psutil.Process] = {}
    try:
        for _ in range(20):
            fresh = [p for p in _postgres_processes(server) if p.pid not in stopped_pids]
            if not fresh:
                break
            for p in fresh:
                with suppress(ProcessLookupError):
                    os.kill(p.pid, signal.SIGSTOP)
                stopped_pids[p.pid] = p
        yield
    finally:
        _resume(list(stopped_pids.values()))


@contextmanager
def stopped(server: Any) -> Iterator[None]:
    """A fast shutdown (SIGINT to the postmaster: backends end, clients are told), then a start."""
    postmaster = psutil.Process(server.get_pid())
    os.kill(postmaster.pid, signal.SIGINT)
    postmaster.wait(timeout=30)
    try:
        yield
    finally:
        server.ensure_postgres_running()


def _assert_unavailable(name: str, reply: Reply) -> None:
    assert reply.status == 503, (name, reply.status, reply.body)
    assert int(reply.headers["Retry-After"]) > 0, (name, reply.headers)
    if name == "health":
        assert reply.body["status"] == "degraded" and reply.body["database"] == "unavailable", reply.body
        assert {"embedder", "version"} <= reply.body.keys()
    else:
        assert reply.body["error"]["code"] == "unavailable", (name, reply.body)
        assert reply.body["error"]["request_id"], (name, reply.body)


def _wait_until_healthy(api: Any) -> Reply:
    """The pool reconnects in the background; a few health calls a second apart see it back."""
    reply = _call(api, "GET", "/v1/health")
    for _ in range(20):
        if reply.status == 200:
            break
        time.sleep(1)
        reply = _call(api, "GET", "/v1/health")
    return reply


def _assert_served(name: str, reply: Reply) -> None:
    assert reply.status in (200, 201), (name, reply.status, reply.body)
    if name == "health":
        assert reply.body["status"] == "ok" and reply.body["database"] == "ok", reply.body


@pytest.fixture(scope="module")
def stored(api: Any) -> str:
    """A memory to retrieve and list, written while the database is up; its id."""
    integ = api.token(T, "crm", ["integration"])
    r = _call(
        api, "POST", "/v1/memories", _memory(SUBJECT, "account.plan_tier", "Plan tier is Enterprise."), integ
    )
    assert r.status == 201, r.body
    return str(r.body["memory"]["id"])


def test_every_route_of_the_function_table_has_a_request_in_the_frozen_sweep() -> None:
    from agent_memory.functions_spec import FUNCTIONS

    # A new route must say here how it is called while the database is hung
    table = {(r.method, r.path) for f in FUNCTIONS for r in f.routes}
    assert table == set(_request_per_route("mem_x"))


def test_a_hung_database_is_503_with_retry_after_within_3_s_on_every_route(
    api: Any, outage_server: Any, stored: str
) -> None:
    # Given a caller holding every role and the highest clearance, and a database that accepts
    # connections but never answers (with the service's default outage bounds)
    roles = ["agent", "integration", "reviewer", "auditor", "privacy_officer", "admin"]
    token = api.token(T, "ops-1", roles, clearance="restricted")
    replies: dict[tuple[str, str], tuple[Reply, float]] = {}
    with frozen(outage_server):
        # When each route of the function table is called
        for (method, template), (path, body) in _request_per_route(stored).items():
            started = time.monotonic()
            reply = _call(api, method, path, body, token)
            replies[(method, template)] = (reply, time.monotonic() - started)
    # Then each one answered within the contract: 503 with Retry-After when it needs the database
    late = {route: round(elapsed, 2) for route, (_, elapsed) in replies.items() if elapsed >= ANSWER_WITHIN_S}
    assert not late, late
    for route, (reply, _) in replies.items():
        if route in WITHOUT_DATABASE:
            assert reply.status == 200, (route, reply.status)
            continue
        _assert_unavailable("health" if route == ("GET", "/v1/health") else str(route), reply)


def test_a_frozen_database_is_503_with_retry_after_on_every_route_not_a_hang(
    api: Any, outage_server: Any, stored: None
) -> None:
    # Given a service that is serving, then a database that accepts connections but never answers
    calls = _routes(api, "frozen")
    with frozen(outage_server):
        # When each route is called
        replies = {name: call() for name, call in calls.items()}
    # Then each answered 503 unavailable with Retry-After (and health said what is down)
    for name, reply in replies.items():
        _assert_unavailable(name, reply)


def test_after_a_freeze_the_same_calls_succeed_without_a_restart(
    api: Any, outage_server: Any, stored: None
) -> None:
    # Given a freeze the service has already answered 503 through
    calls = _routes(api, "thawed")
    with frozen(outage_server):
        _assert_unavailable("health", calls["health"]())
        _assert_unavailable("retrieve", calls["retrieve"]())
    # When the database answers again
    health = _wait_until_healthy(api)
    # Then the same service serves every route again
    _assert_served("health", health)
    for name, call in calls.items():
        _assert_served(name, call())
    listed = calls["list"]()
    assert "Plan tier is Enterprise." in [m["content"] for m in listed.body["memories"]]


def test_a_stopped_database_is_503_and_the_service_recovers_when_it_starts(
    api: Any, outage_server: Any, stored: None
) -> None:
    calls = _routes(api, "restarted")
    # Given a database that shut down under a serving service
    with stopped(outage_server):
        # When each route is called, Then each answers 503 unavailable with Retry-After
        for name, call in calls.items():
            _assert_unavailable(name, call())
    # When the database is started again, Then the service serves every route again
    _assert_served("health", _wait_until_healthy(api))
    for name, call in calls.items():
        _assert_served(name, call())


def test_a_cold_start_within_a_request_against_a_hung_database_is_unavailable_within_3_s(
    outage_server: Any, container: Any
) -> None:
    import contextvars

    from agent_memory.adapters.postgres.database import Database
    from agent_memory.domain.errors import Unavailable
    from agent_memory.request_scope import begin_request

    def cold_start() -> None:  # as a Lambda's first request builds its pool
        begin_request()
        Database(outage_server.get_uri("outage")).open()

    # Given a database that accepts connections but never answers
    with frozen(outage_server):
        started = time.monotonic()
        # When a request opens the service's pool for the first time
        with pytest.raises(Unavailable):
            contextvars.copy_context().run(cold_start)
        elapsed = time.monotonic() - started
    # Then it is refused as unavailable (a 503 at the edge) within the contract, not after 30 s
    assert elapsed < ANSWER_WITHIN_S, elapsed
