"""The migration runner's no-transaction mode: an index on a large table is built CONCURRENTLY
(writes go on meanwhile), which PostgreSQL refuses inside a transaction block; a build that failed
halfway is rebuilt on the next run, never silently kept INVALID."""

import uuid
from typing import Any

import psycopg
import pytest

from agent_memory.adapters.postgres import migrate as migrations
from agent_memory.domain.errors import ConfigurationError

pytestmark = pytest.mark.integration
REAL_MIGRATIONS = migrations.migration_files

TABLE = ("0900_test_table.sql", "CREATE TABLE mig_probe (x integer);")
UNIQUE_CONCURRENTLY = (
    "0901_test_unique.sql",
    "-- migrate: no-transaction\n-- one index, built without blocking writes\n"
    "CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS mig_probe_x ON mig_probe (x);\n",
)


@pytest.fixture
def fresh_url(pg_server: Any) -> Any:
    """A database of its own: these tests add migrations the others must never see."""
    name = f"mig_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield pg_server.get_uri(name)
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def run(url: str, monkeypatch: pytest.MonkeyPatch, *extra: tuple[str, str]) -> list[str]:
    monkeypatch.setattr(migrations, "migration_files", lambda: [*REAL_MIGRATIONS(), *extra])
    return migrations.migrate(url, embedding_dim=384, embedding_model="local-minilm-onnx")


def index_state(url: str) -> bool | None:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            """SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                WHERE c.relname = 'mig_probe_x'"""
        ).fetchone()
    return None if row is None else row[0]


def recorded(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM schema_migrations WHERE name LIKE '09%'")}


def test_a_no_transaction_migration_builds_its_index_concurrently(fresh_url, monkeypatch):
    applied = run(fresh_url, monkeypatch, TABLE, UNIQUE_CONCURRENTLY)
    assert applied[-2:] == ["0900_test_table.sql", "0901_test_unique.sql"]
    assert index_state(fresh_url) is True
    assert recorded(fresh_url) == {"0900_test_table.sql", "0901_test_unique.sql"}
    assert run(fresh_url, monkeypatch, TABLE, UNIQUE_CONCURRENTLY) == []  # applied once


def test_without_the_marker_postgresql_refuses_a_concurrent_build(fresh_url, monkeypatch):
    in_a_transaction = (
        UNIQUE_CONCURRENTLY[0],
        UNIQUE_CONCURRENTLY[1].replace("-- migrate: no-transaction\n", ""),
    )
    with pytest.raises(psycopg.errors.ActiveSqlTransaction):
        run(fresh_url, monkeypatch, TABLE, in_a_transaction)
    assert recorded(fresh_url) == {"0900_test_table.sql"}


def test_a_build_that_failed_halfway_is_rebuilt_not_kept_invalid(fresh_url, monkeypatch):
    # Given a concurrent unique build that fails on duplicate rows, leaving an INVALID index
    run(fresh_url, monkeypatch, TABLE)
    with psycopg.connect(fresh_url, autocommit=True) as conn:
        conn.execute("INSERT INTO mig_probe VALUES (1), (1), (2)")
    with pytest.raises(psycopg.errors.UniqueViolation):
        run(fresh_url, monkeypatch, TABLE, UNIQUE_CONCURRENTLY)
    assert index_state(fresh_url) is False
    assert "0901_test_unique.sql" not in recorded(fresh_url)
    # When the data is fixed and the migration runs again
    with psycopg.connect(fresh_url, autocommit=True) as conn:
        conn.execute("DELETE FROM mig_probe WHERE ctid = (SELECT min(ctid) FROM mig_probe WHERE x = 1)")
    run(fresh_url, monkeypatch, TABLE, UNIQUE_CONCURRENTLY)
    # Then the index is rebuilt valid (IF NOT EXISTS alone would have kept the invalid one) and enforced
    assert index_state(fresh_url) is True
    with psycopg.connect(fresh_url, autocommit=True) as conn, pytest.raises(psycopg.errors.UniqueViolation):
        conn.execute("INSERT INTO mig_probe VALUES (2)")


@pytest.mark.parametrize(
    "sql",
    [
        "-- migrate: no-transaction\nCREATE INDEX CONCURRENTLY a ON mig_probe (x); CREATE INDEX CONCURRENTLY b ON mig_probe (x);",
        "-- migrate: no-transaction\n-- nothing but comments\n",
    ],
)
def test_a_no_transaction_migration_must_hold_exactly_one_statement(fresh_url, monkeypatch, sql):
    with pytest.raises(ConfigurationError, match="exactly one statement"):
        run(fresh_url, monkeypatch, TABLE, ("0901_bad.sql", sql))
    assert recorded(fresh_url) == {"0900_test_table.sql"}


def test_two_migrators_at_once_wait_for_each_other_during_a_concurrent_build(fresh_url, monkeypatch):
    import threading
    import time

    # Given a concurrent build held up by an open transaction on its table (a busy database)
    run(fresh_url, monkeypatch, TABLE)
    blocker = psycopg.connect(fresh_url)
    blocker.execute("LOCK TABLE mig_probe IN SHARE ROW EXCLUSIVE MODE")  # the build waits for it
    outcomes: dict[str, object] = {}

    def migrate(who: str) -> None:
        try:
            outcomes[who] = migrations.migrate(
                fresh_url, embedding_dim=384, embedding_model="local-minilm-onnx"
            )
        except Exception as exc:
            outcomes[who] = f"{type(exc).__name__}: {exc}"

    monkeypatch.setattr(
        migrations, "migration_files", lambda: [*REAL_MIGRATIONS(), TABLE, UNIQUE_CONCURRENTLY]
    )
    monkeypatch.setattr(migrations, "MIGRATION_LOCK_POLL_S", 0.05)
    first = threading.Thread(target=migrate, args=("first",))
    first.start()
    time.sleep(0.5)
    # When a second migrator (a deploy while an operator runs it by hand) starts meanwhile
    second = threading.Thread(target=migrate, args=("second",))
    second.start()
    time.sleep(1.0)
    blocker.commit()
    blocker.close()
    first.join(30)
    second.join(30)
    # Then neither was killed as a deadlock: one built the index, the other found it applied
    assert sorted(map(str, outcomes.values())) == ["['0901_test_unique.sql']", "[]"], outcomes
    assert index_state(fresh_url) is True


@pytest.mark.parametrize(
    ("index_sql", "stored"),
    [
        ("CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS Mig_Probe_X ON mig_probe (x)", "mig_probe_x"),
        (
            'CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "mig_probe_x" ON public.mig_probe (x)',
            "mig_probe_x",
        ),
        (
            'CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "Mig Probe" ON "public"."mig_probe" (x)',
            "Mig Probe",
        ),
        ('CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS t_x ON "Sales"."T" (x)', "t_x"),
    ],
)
def test_an_invalid_index_is_rebuilt_however_its_name_is_written(fresh_url, monkeypatch, index_sql, stored):
    # Given a failed concurrent unique build, left INVALID, of an index named in mixed case or
    # quoted, or on a table in a schema whose name needs quoting
    table = '"Sales"."T"' if "Sales" in index_sql else "mig_probe"
    migration = ("0901_test_unique.sql", f"-- migrate: no-transaction\n{index_sql};\n")
    run(fresh_url, monkeypatch, TABLE)
    with psycopg.connect(fresh_url, autocommit=True) as conn:
        conn.execute('CREATE SCHEMA "Sales"; CREATE TABLE "Sales"."T" (x integer)')
        conn.execute(f"INSERT INTO {table} VALUES (1), (1)")
    with pytest.raises(psycopg.errors.UniqueViolation):
        run(fresh_url, monkeypatch, TABLE, migration)
    # When the data is fixed and the migration runs again
    with psycopg.connect(fresh_url, autocommit=True) as conn:
        conn.execute(f"DELETE FROM {table} WHERE ctid = (SELECT min(ctid) FROM {table})")
    run(fresh_url, monkeypatch, TABLE, migration)
    # Then the index is valid, and only then recorded
    with psycopg.connect(fresh_url) as conn:
        valid = conn.execute(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s",
            (stored,),
        ).fetchone()
    assert valid == (True,)
    assert "0901_test_unique.sql" in recorded(fresh_url)


def test_a_migration_whose_index_is_skipped_for_a_name_taken_elsewhere_is_not_recorded(
    fresh_url, monkeypatch
):
    # Given an index of that name on another table: IF NOT EXISTS would skip the build silently
    other = (
        "0900_test_table.sql",
        "CREATE TABLE mig_probe (x integer); CREATE TABLE mig_other (x integer);"
        " CREATE INDEX mig_probe_x ON mig_other (x);",
    )
    with pytest.raises(ConfigurationError, match="missing or invalid"):
        run(fresh_url, monkeypatch, other, UNIQUE_CONCURRENTLY)
    assert "0901_test_unique.sql" not in recorded(fresh_url)


def test_a_new_database_logs_its_migrations_in_one_line(fresh_url, monkeypatch, caplog):
    # Given a new database, and the service's logger at DEBUG
    level = migrations.logger.log_level
    migrations.logger.setLevel("DEBUG")
    caplog.set_level("DEBUG")
    # When every migration is applied
    try:
        applied = run(fresh_url, monkeypatch)
    finally:
        migrations.logger.setLevel(level)
    # Then one INFO line says so, with how many and the first and last (each one only at DEBUG)
    lines = [r for r in caplog.records if r.levelname == "INFO"]
    assert len(applied) > 1
    assert [r.getMessage() for r in lines] == ["database schema ready"]
    record = lines[0]
    assert (record.migrations_applied, record.first, record.last) == (len(applied), applied[0], applied[-1])
