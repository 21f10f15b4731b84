"""The caller of the request in progress, and its database waits, held per request (context variables).

The HTTP layer sets it once the principal is known (`api.http.current_principal`). The database
adapter reads the principal's subject binding from here for every tenant transaction it opens, so
a token bound to some subjects is restricted in SQL on every route, including routes that never
pass the binding along by hand. Each request runs in its own context (`RequestScopedResolver`),
so nothing set here outlives the request or reaches another one. Work outside a request (queue
workers, scheduled jobs) has no caller here and is not restricted.

An API request also holds its database waits here (`begin_request`): the adapter bounds each wait
of a request for the database by the shorter request limit, and a request that already found the
database unavailable does not wait for it again, so a hung database is a fast 503 on every route.
Work outside a request waits with the longer limits of background work.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from agent_memory.domain.records import Principal

_CALLER: contextvars.ContextVar[Principal | None] = contextvars.ContextVar("memory_caller", default=None)


@dataclass
class DatabaseWaits:
    """What an API request learned of the database so far."""

    unavailable: bool = False  # a wait failed: the request answers 503 without waiting again


_WAITS: contextvars.ContextVar[DatabaseWaits | None] = contextvars.ContextVar("memory_db_waits", default=None)


def begin_request() -> None:
    """An API request starts (the HTTP edge, in the request's own context): its database waits
    are bounded by the request limit from now until it ends."""
    _WAITS.set(DatabaseWaits())


def request_waits() -> DatabaseWaits | None:
    """The database waits of the API request in progress; None outside a request."""
    return _WAITS.get()


def set_caller(principal: Principal) -> None:
    """The request's caller, from now until the request ends."""
    _CALLER.set(principal)


def current_caller() -> Principal | None:
    return _CALLER.get()


def bound_subjects() -> frozenset[str] | None:
    """The subjects the request's token is bound to; None when it is not bound (or no request)."""
    caller = _CALLER.get()
    return caller.subjects if caller is not None else None


@contextmanager
def acting_as(principal: Principal | None) -> Iterator[None]:
    """Run a block as `principal` (None: as nobody, unrestricted), then restore the caller."""
    token = _CALLER.set(principal)
    try:
        yield
    finally:
        _CALLER.reset(token)


# The tenant's requests per second (services/quotas.py), checked once per request that names a
# caller (`api.http.current_principal`): installed by the composition root when it builds the
# services; without one (a bare resolver in a test), nothing is counted.
_request_gate: Callable[[str], None] | None = None


def set_request_gate(gate: Callable[[str], None] | None) -> None:
    global _request_gate
    _request_gate = gate


def admit_request(tenant_id: str) -> None:
    if _request_gate is not None:
        _request_gate(tenant_id)
