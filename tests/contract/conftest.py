"""The contract suite's store: every test runs once on the in-memory fake and once on the
PostgreSQL store (a fresh embedded database per module, migrated), each test on a tenant of its
own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

EMBEDDING_DIM = 384


@pytest.fixture(scope="module")
def postgres_store(database_url: str) -> Iterator[Any]:
    from agent_memory.adapters.postgres.database import Database, migrate
    from agent_memory.adapters.postgres.store import PostgresStore

    migrate(database_url, embedding_dim=EMBEDDING_DIM, embedding_model="contract-test")
    db = Database(database_url, min_size=1, max_size=2)
    db.open()
    try:
        yield PostgresStore(db)
    finally:
        db.close()


@pytest.fixture(params=["fake", pytest.param("postgres", marks=pytest.mark.integration)])
def store(request: pytest.FixtureRequest) -> Any:
    """The store under contract: `fake` (tests/fakes/memory_store.py) or `postgres`."""
    if request.param == "fake":
        from fakes.memory_store import MemoryStore

        return MemoryStore()
    return request.getfixturevalue("postgres_store")


@pytest.fixture
def tenant() -> str:
    return f"contract-{uuid.uuid4().hex[:10]}"
