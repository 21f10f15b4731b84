"""Fixtures of the client tests: clients of the real local HTTP front, one per role."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from agent_memory_client import MemoryClient
from pydantic import BaseModel


@pytest.fixture(scope="module")
def clients(api: Any) -> Iterator[Callable[..., MemoryClient]]:
    """`clients("agent")`: a MemoryClient of the local front with a token of that role (tenant
    `client-tests`, clearance confidential; bound to `subjects` when given); closed at the end of
    the module."""
    made: list[MemoryClient] = []

    def client(
        *roles: str,
        tenant: str = "client-tests",
        sub: str | None = None,
        subjects: list[str] | None = None,
        **kw: Any,
    ) -> MemoryClient:
        token = api.token(
            tenant, sub or f"{roles[0]}-1", list(roles), clearance="confidential", subjects=subjects
        )
        c = MemoryClient(api.base, token=token, **kw)
        made.append(c)
        return c

    yield client
    for c in made:
        c.close()


@pytest.fixture(scope="session")
def unknown_fields() -> Callable[[BaseModel], list[str]]:
    """The fields of an answer the client's models do not declare; see `undeclared_fields`."""
    return undeclared_fields


def undeclared_fields(model: BaseModel, where: str = "") -> list[str]:
    """Fields of an answer the client's models do not declare (drift from the running server),
    at any depth: `memories[0].commitment_due`."""
    found = [f"{where}{name}" for name in (model.model_extra or {})]
    for name in type(model).model_fields:
        value = getattr(model, name)
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            if isinstance(item, BaseModel):
                label = f"{where}{name}[{i}]." if isinstance(value, list) else f"{where}{name}."
                found += undeclared_fields(item, label)
    return found
