"""The composition root: the one place that chooses adapters and wires services.

Built lazily on first use (nothing connects at import time) and overridable in
tests with `set_container`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from agent_memory.adapters.postgres.database import Database, migrate
from agent_memory.adapters.postgres.store import PostgresStore
from agent_memory.config import Settings
from agent_memory.observability import logger
from agent_memory.ports.embedder import Embedder
from agent_memory.services.policies import PolicyRegistry
from agent_memory.services.reads import ReadService
from agent_memory.services.review import ReviewService
from agent_memory.services.write_gateway import WriteGateway


@dataclass
class Container:
    settings: Settings
    db: Database
    store: PostgresStore
    embedder: Embedder
    policies: PolicyRegistry
    gateway: WriteGateway
    review: ReviewService
    reads: ReadService
    extras: dict[str, Any] = field(default_factory=dict)

    def close(self) -> None:
        self.db.close()


def build_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "openai":
        from agent_memory.adapters.embedders.openai_embedder import OpenAIEmbedder

        return OpenAIEmbedder(
            model=settings.openai_embedding_model,
            dimensions=settings.embedding_dim,
            api_key=settings.openai_api_key.get_secret_value() if settings.openai_api_key else None,
            base_url=settings.openai_base_url,
            timeout_s=settings.openai_timeout_s,
        )
    from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder

    return MiniLMOnnxEmbedder()


def database_url(settings: Settings) -> str:
    if settings.database_url:
        return settings.database_url
    from agent_memory.local.embedded import start_embedded_postgres

    return start_embedded_postgres(settings.resolved_data_dir)


def build_container(settings: Settings | None = None, *, embedder: Embedder | None = None,
                    run_migrations: bool = True) -> Container:
    settings = settings or Settings()
    embedder = embedder or build_embedder(settings)
    if embedder.dimension != settings.embedding_dim:
        settings = settings.model_copy(update={"embedding_dim": embedder.dimension})
    url = database_url(settings)
    if run_migrations:
        migrate(url, embedding_dim=settings.embedding_dim, embedding_model=embedder.name)
    db = Database(url, app_role=settings.app_role, min_size=settings.pool_min_size, max_size=settings.pool_max_size)
    db.open()
    _check_dimension(db, settings.embedding_dim)
    store = PostgresStore(db)
    policies = PolicyRegistry(store, settings.default_policy)
    container = Container(
        settings=settings,
        db=db,
        store=store,
        embedder=embedder,
        policies=policies,
        gateway=WriteGateway(store, embedder, policies),
        review=ReviewService(store),
        reads=ReadService(store),
    )
    logger.info("container built", extra={"embedder": embedder.name, "embedding_dim": settings.embedding_dim})
    return container


def _check_dimension(db: Database, configured: int) -> None:
    from agent_memory.adapters.postgres.database import check_embedding_dimension, stored_embedding_dimension

    with db.transaction() as conn:
        stored = stored_embedding_dimension(conn)
    if stored is not None:
        check_embedding_dimension(stored, configured)


_container: Container | None = None
_lock = threading.Lock()


def get_container() -> Container:
    global _container
    if _container is None:
        with _lock:
            if _container is None:
                _container = build_container()
    return _container


def set_container(container: Container | None) -> None:
    """Tests and the local server install their own container."""
    global _container
    _container = container
