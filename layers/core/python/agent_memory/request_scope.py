"""The caller of the request in progress, held per request (a context variable).

The HTTP layer sets it once the principal is known (`api.http.current_principal`). The database
adapter reads the principal's subject binding from here for every tenant transaction it opens, so
a token bound to some subjects is restricted in SQL on every route, including routes that never
pass the binding along by hand. Each request runs in its own context (`RequestScopedResolver`),
so nothing set here outlives the request or reaches another one. Work outside a request (queue
workers, scheduled jobs) has no caller here and is not restricted.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from agent_memory.domain.records import Principal

_CALLER: contextvars.ContextVar[Principal | None] = contextvars.ContextVar("memory_caller", default=None)


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
