"""The schema runner: numbered migrations, then the repeatable SQL, then the embedding dimension.

Run as the owner, outside the pool (`Database` runs as the application role). A migration whose
first line is NO_TRANSACTION runs outside a transaction (CREATE INDEX CONCURRENTLY on a large table).
"""

from __future__ import annotations

import re
import time
from importlib import resources
from typing import TYPE_CHECKING, Any

import psycopg

from agent_memory.adapters.postgres.repeatable_sql import apply_repeatable_sql
from agent_memory.adapters.postgres.type_sql import shared_knowledge_predicate
from agent_memory.domain.errors import ConfigurationError
from agent_memory.observability import logger

if TYPE_CHECKING:
    from agent_memory.progress import ProgressBar, ProgressFactory

MIN_PGVECTOR = (0, 7)


def migration_files() -> list[tuple[str, str]]:
    root = resources.files("agent_memory.adapters.postgres") / "migrations"
    files = sorted((p.name, p.read_text()) for p in root.iterdir() if p.name.endswith(".sql"))
    for name, _ in files:
        if not re.match(r"^\d{4}_[a-z0-9_]+\.sql$", name):
            raise ConfigurationError(f"migration file name {name!r} must look like 0001_name.sql")
    return files


def migrate(
    owner_url: str, *, embedding_dim: int, embedding_model: str, progress: ProgressFactory | None = None
) -> list[str]:
    """Apply pending migrations as the owner, then the repeatable SQL (repeatable_sql.py), then fix
    or check the embedding dimension. With `progress`, a bar counts the pending migrations and
    names the one running."""
    applied: list[str] = []
    with psycopg.connect(owner_url, autocommit=True) as conn:
        _check_pgvector(conn)
        # Poll rather than block: a migrator blocked in pg_advisory_lock holds a snapshot, which a
        # concurrent index build in the other migrator waits for, and that is a deadlock.
        waited_since = time.monotonic()
        next_warning = waited_since + 30
        while not conn.execute("SELECT pg_try_advisory_lock(7246001)").fetchone()[0]:  # type: ignore[index]
            if time.monotonic() >= next_warning:
                logger.warning(
                    "waiting for another migrator's lock",
                    extra={"waited_s": round(time.monotonic() - waited_since)},
                )
                next_warning += 30
            time.sleep(MIGRATION_LOCK_POLL_S)
        bar: ProgressBar | None = None
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {r[0] for r in conn.execute("SELECT name FROM schema_migrations").fetchall()}
            pending = [(name, sql) for name, sql in migration_files() if name not in done]
            if progress is not None and pending:
                bar = progress("migrate", total=len(pending), unit="migration")
            for name, sql in pending:
                if bar is not None:
                    bar.set_postfix_str(name)
                if sql.startswith(NO_TRANSACTION):
                    _apply_outside_a_transaction(conn, name, sql)
                else:
                    with conn.transaction():
                        conn.execute(sql)
                        conn.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (name,))
                applied.append(name)
                logger.debug("migration applied", extra={"migration": name})
                if bar is not None:
                    bar.update(1)
            repeatable = apply_repeatable_sql(conn)
            # One line, however many were applied (a new database applies them all).
            summary: dict[str, Any] = {"migrations_applied": len(applied), "repeatable_sql": repeatable}
            if applied:
                summary.update(first=applied[0], last=applied[-1])
            logger.info("database schema ready", extra=summary)
            _fix_embedding_dimension(conn, embedding_dim, embedding_model)
        finally:
            if bar is not None:
                bar.close()
            conn.execute("SELECT pg_advisory_unlock(7246001)")
    return applied


NO_TRANSACTION = "-- migrate: no-transaction"
MIGRATION_LOCK_POLL_S = 0.5
_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
_CONCURRENT_INDEX = re.compile(
    rf"^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+(?:IF\s+NOT\s+EXISTS\s+)?({_IDENT})\s+"
    rf"ON\s+(?:ONLY\s+)?({_IDENT}(?:\s*\.\s*{_IDENT})?)",
    re.IGNORECASE,
)


def _identifier(raw: str) -> str:
    """An SQL identifier as PostgreSQL stores it: quoted kept as is, unquoted folded to lower case."""
    return raw[1:-1].replace('""', '"') if raw.startswith('"') else raw.lower()


def _apply_outside_a_transaction(conn: psycopg.Connection[Any], name: str, sql: str) -> None:
    """A migration whose first line is NO_TRANSACTION: one statement, run outside a transaction,
    for what PostgreSQL refuses inside one (CREATE INDEX CONCURRENTLY builds an index on a large
    table without blocking writes). A build that failed halfway leaves an INVALID index that
    IF NOT EXISTS would then skip; it is dropped first, so a re-run builds it again, and the
    migration is recorded only once the index is valid."""
    body = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--")).strip()
    statement = body[:-1] if body.endswith(";") else body
    if not statement or ";" in statement:
        raise ConfigurationError(
            f"migration {name} runs outside a transaction and must hold exactly one statement"
        )
    index = _CONCURRENT_INDEX.match(statement)
    if index is None and re.search(r"\bINDEX\s+CONCURRENTLY\b", statement, re.IGNORECASE):
        raise ConfigurationError(
            f"migration {name}: write CREATE [UNIQUE] INDEX CONCURRENTLY [IF NOT EXISTS] <name> ON <table>"
        )
    if index is not None:
        index_name, table = _identifier(index.group(1)), index.group(2)
        found = _index_state(conn, index_name, table)
        if found is not None and not found[0]:
            logger.warning("dropping an invalid index left by a failed build", extra={"index": index_name})
            conn.execute(
                psycopg.sql.SQL("DROP INDEX CONCURRENTLY {}").format(
                    psycopg.sql.Identifier(found[1], index_name)
                )
            )
    conn.execute(statement)  # autocommit: its own statement, no transaction block
    if index is not None and (_index_state(conn, index_name, table) or (False,))[0] is not True:
        raise ConfigurationError(f"migration {name}: the index it builds is missing or invalid")
    conn.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (name,))


def _index_state(conn: psycopg.Connection[Any], index_name: str, table: str) -> tuple[bool, str] | None:
    """(valid, its schema as stored) for the index of that name on that table (schema-qualified
    or on the search path); None when there is none."""
    row = conn.execute(
        """SELECT i.indisvalid, n.nspname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
             JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE i.indrelid = to_regclass(%s) AND c.relname = %s""",
        (table, index_name),
    ).fetchone()
    return None if row is None else (bool(row[0]), str(row[1]))


def grant_app_login(
    owner_url: str,
    password: str,
    *,
    app_role: str = "memory_app",
    statement_timeout_s: float = 10.0,
    lock_timeout_s: float = 5.0,
) -> None:
    """Let the application role log in with `password` (its own secret): the functions then
    connect as it, never with the owner's credentials. Its logins start with the server-side
    statement and lock timeouts (role defaults: no session state for RDS Proxy to pin on), so a
    statement outside a tenant transaction is bounded too. Idempotent; run after `migrate`."""
    if not password:
        raise ConfigurationError(f"the {app_role} secret has no password")
    role = psycopg.sql.Identifier(app_role)
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute(
            psycopg.sql.SQL("ALTER ROLE {} WITH LOGIN PASSWORD {}").format(
                role, psycopg.sql.Literal(password)
            )
        )
        for name, seconds in (("statement_timeout", statement_timeout_s), ("lock_timeout", lock_timeout_s)):
            conn.execute(
                psycopg.sql.SQL("ALTER ROLE {} SET {} = {}").format(
                    role, psycopg.sql.Identifier(name), psycopg.sql.Literal(f"{round(seconds * 1000)}ms")
                )
            )
    logger.info("application role may log in", extra={"role": app_role})


def _check_pgvector(conn: psycopg.Connection) -> None:
    row = conn.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    if row is None:
        raise ConfigurationError("the database has no pgvector extension; pgvector >= 0.7 is required")
    installed = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    version = (installed or row)[0]
    parts = tuple(int(x) for x in re.findall(r"\d+", version)[:2])
    if parts < MIN_PGVECTOR:
        raise ConfigurationError(f"pgvector {version} is too old; >= 0.7 is required")


VECTOR_COLUMNS = (("memory_records", "embedding"), ("memory_sentences", "embedding"))


def _fix_embedding_dimension(conn: psycopg.Connection[Any], dim: int, model: str) -> None:
    """The first migrate fixes the vector columns' dimension; later starts must match it."""
    row = conn.execute("SELECT value FROM deployment_settings WHERE key = 'embedding_dim'").fetchone()
    if row is not None:
        check_embedding_dimension(int(row[0]), dim)
    with conn.transaction():
        for table, column in VECTOR_COLUMNS:  # columns added by later migrations get the same dimension
            typed = conn.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                " WHERE attrelid = %s::regclass AND attname = %s",
                (table, column),
            ).fetchone()
            if typed is not None and typed[0] == "vector":
                conn.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE vector({int(dim)})")
            # Keep vectors inside the row (pgvector's default, EXTERNAL, moves a 384-d vector to
            # TOAST as soon as the row passes 2 kB, which cost two extra index lookups per
            # candidate). MAIN still moves a vector out of line when it alone cannot fit a page.
            # Rows written before this setting keep their storage until rewritten.
            storage = conn.execute(
                "SELECT attstorage FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s",
                (table, column),
            ).fetchone()
            if storage is not None and storage[0] != "m":
                conn.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET STORAGE MAIN")
        # Per-subject search scans the subject's B-tree range exactly and never uses an ANN index;
        # maintaining one on every row costs write throughput (docs/benchmarks.md). The approximate
        # index covers only what is searched tenant-wide: the types the table marks shared across
        # subjects and tenant-scoped memories (pgvector >= 0.8 iterative scans keep filtered recall).
        # IF NOT EXISTS: this also upgrades databases migrated before 0006; a change to the shared
        # types takes a migration that drops the index.
        conn.execute(
            "CREATE INDEX IF NOT EXISTS memory_records_tenant_hnsw ON memory_records "
            "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64) "
            f"WHERE {shared_knowledge_predicate()}"
        )
        if row is None:
            conn.execute(
                "INSERT INTO deployment_settings (key, value) VALUES ('embedding_dim', %s), ('embedding_model', %s)",
                (str(dim), model),
            )


def check_embedding_dimension(stored: int, configured: int) -> None:
    if stored != configured:
        raise ConfigurationError(
            f"embedding dimension mismatch: the database holds {stored}-d vectors but "
            f"MEMORY_EMBEDDING_DIM / the embedder says {configured}; re-embed into a new database or fix the setting"
        )


def stored_embedding_dimension(conn: psycopg.Connection[Any]) -> int | None:
    row = conn.execute("SELECT value FROM deployment_settings WHERE key = 'embedding_dim'").fetchone()
    if row is None:
        return None
    return int(row["value"] if isinstance(row, dict) else row[0])
