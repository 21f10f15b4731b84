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
        database_pool_timeout_s=2,
        database_connect_timeout_s=2,
        database_statement_timeout_s=2,
    )
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
    return Reply(status, json.loads(payload) if payload else None, resp_headers)


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
def stored(api: Any) -> None:
    """A memory to retrieve and list, written while the database is up."""
    integ = api.token(T, "crm", ["integration"])
    r = _call(
        api, "POST", "/v1/memories", _memory(SUBJECT, "account.plan_tier", "Plan tier is Enterprise."), integ
    )
    assert r.status == 201, r.body


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
