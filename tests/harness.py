"""What tests share besides fixtures, importable by name from any test module (a `conftest` is
not: several exist, and `from conftest import` reaches whichever was loaded last): a database per
test module on the embedded PostgreSQL, and a tiny HTTP client for the local front."""

from __future__ import annotations

import itertools
import json
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from typing import Any

import psycopg

_db_counter = itertools.count()


def create_database(pg_server: Any) -> str:
    name = f"t{next(_db_counter)}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return pg_server.get_uri(name)


@dataclass
class HttpReply:
    status: int
    body: Any
    headers: dict[str, str]


class ApiClient:
    """A tiny HTTP client for the local front, with tokens signed by its secret."""

    def __init__(self, base: str, secret: str) -> None:
        self.base = base
        self.secret = secret

    def token(
        self,
        tenant: str,
        sub: str,
        roles: list[str],
        clearance: str = "internal",
        subjects: list[str] | None = None,
    ) -> str:
        from agent_memory.api.identity import issue_token

        return issue_token(
            self.secret, tenant_id=tenant, sub=sub, roles=roles, clearance=clearance, subjects=subjects
        )

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> HttpReply:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                payload = resp.read()
                status, resp_headers = resp.status, dict(resp.headers)
        except urllib.error.HTTPError as err:
            payload, status, resp_headers = err.read(), err.code, dict(err.headers)
        try:
            parsed = json.loads(payload) if payload else None
        except ValueError:
            parsed = payload.decode()
        return HttpReply(status, parsed, resp_headers)

    def get(self, path: str, **kw: Any) -> HttpReply:
        return self.request("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> HttpReply:
        return self.request("POST", path, body, **kw)

    def put(self, path: str, body: Any = None, **kw: Any) -> HttpReply:
        return self.request("PUT", path, body, **kw)
