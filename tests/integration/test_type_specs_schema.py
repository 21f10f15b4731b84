"""The database agrees with the memory-type table: the CHECK constraint on memory_records.type
admits exactly the table's types, and the retrieval functions always draw verified records of
exactly the types whose row heads the context (their `pinned`), the unverified-expiry CHECK and
the tenant-wide vector index name the table's types, on the migrated embedded PostgreSQL."""

import re
from typing import Any

import psycopg
import pytest

from agent_memory.adapters.postgres import database
from agent_memory.domain.memory_types import TYPE_SPECS

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def migrated(database_url: str) -> str:
    database.migrate(database_url, embedding_dim=384, embedding_model="local-minilm-onnx")
    return database_url


def quoted(sql: str) -> set[str]:
    return set(re.findall(r"'([^']*)'", sql))


def type_checks(conn: Any) -> list[str]:
    """The definitions of memory_records' CHECK constraints on its `type` column alone."""
    return [
        r[0]
        for r in conn.execute(
            """SELECT pg_get_constraintdef(c.oid)
                 FROM pg_constraint c
                 JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attname = 'type'
                WHERE c.conrelid = 'memory_records'::regclass AND c.contype = 'c'
                  AND c.conkey = ARRAY[a.attnum]"""
        )
    ]


def test_the_check_constraint_on_type_admits_exactly_the_tables_types(migrated):
    # Given the migrated schema
    with psycopg.connect(migrated) as conn:
        checks = type_checks(conn)
    # Then one CHECK constraint guards the column, and it lists the table's types, no more, no fewer
    assert len(checks) == 1, checks
    assert quoted(checks[0]) == {t.value for t in TYPE_SPECS}, (
        "memory_records.type's CHECK constraint and domain/memory_types.py disagree: "
        "a new type needs a migration that replaces the constraint"
    )


def test_a_type_outside_the_table_is_refused_by_the_database(migrated):
    # Given the constraint's own expression
    with psycopg.connect(migrated) as conn:
        (check,) = type_checks(conn)
        expression = check.removeprefix("CHECK ")
        # When it is evaluated for a name the table lacks, and for each name it has
        refused = conn.execute(f"SELECT {expression} FROM (SELECT 'hunch'::text AS type) t").fetchone()[0]
        admitted = [
            conn.execute(f"SELECT {expression} FROM (SELECT %s::text AS type) t", (t.value,)).fetchone()[0]
            for t in TYPE_SPECS
        ]
    # Then only the table's names pass
    assert refused is False
    assert all(admitted)


def test_the_retrieval_functions_pin_exactly_the_types_that_head_the_context(migrated):
    # Given every SQL function that marks rows `pinned` (always a candidate when verified)
    with psycopg.connect(migrated) as conn:
        sources = conn.execute(
            "SELECT proname, prosrc FROM pg_proc WHERE prosrc LIKE '%AS pinned%' ORDER BY proname"
        ).fetchall()
    assert sources, "no retrieval function marks pinned rows any more: update this test"
    heads = {t.value for t, s in TYPE_SPECS.items() if s.heads_context_when_verified}
    for name, source in sources:
        # When its pinned expression is read
        found = re.search(r"\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s+AS pinned", source)
        assert found, name
        named = {v for v in quoted(found.group(1)) if v in {t.value for t in TYPE_SPECS}}
        # Then it names exactly the types whose row heads the context
        assert named == heads, (name, found.group(1))


def test_the_unverified_expiry_check_names_the_types_the_table_bounds(migrated):
    # Given the CHECK constraint that bounds unverified notes (migration 0043)
    with psycopg.connect(migrated) as conn:
        (check,) = conn.execute(
            """SELECT pg_get_constraintdef(oid) FROM pg_constraint
                WHERE conrelid = 'memory_records'::regclass AND conname = 'memory_records_unverified_expire'"""
        ).fetchone()
    names = {t.value for t in TYPE_SPECS}
    # When its type names are read: the types it bounds, and those it bounds whatever the source
    bounded = {v for v in quoted(check.split(" OR ", 1)[0]) if v in names}
    always = {v for v in re.findall(r"type = '([^']*)'", check) if v in names}
    # Then they are the table's: bounded when unverified with no TTL of their own, or a hard bound
    assert bounded == {
        t.value
        for t, s in TYPE_SPECS.items()
        if s.bounded_when_unverified and (s.ttl_days is None or s.max_ttl_days is not None)
    }, check
    assert always == {t.value for t, s in TYPE_SPECS.items() if s.max_ttl_days is not None}, check


def test_the_tenant_wide_vector_index_covers_the_types_the_table_shares(migrated):
    # Given the partial HNSW index that tenant-wide search uses
    with psycopg.connect(migrated) as conn:
        (definition,) = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'memory_records_tenant_hnsw'"
        ).fetchone()
    # When its predicate's type names are read
    predicate = definition.split(" WHERE ", 1)[1]
    named = {v for v in quoted(predicate) if v in {t.value for t in TYPE_SPECS}}
    # Then they are the types the table marks shared across subjects
    assert named == {t.value for t, s in TYPE_SPECS.items() if s.shared_across_subjects}, definition
