"""Loading many memories at once: binary COPY into memory_records and memory_sentences.

For an import of memories kept elsewhere, or a benchmark's dataset. It is not the write path:
nothing is decided here (no admission, screening, dedupe or supersession), so the records must
already be what the gateway would have stored; `MemoryRecord` validates each one.

Each row gets every column the normal insert (`PostgresTenantSession.insert_record`) fills, from
the same conversion (`record_rows.record_params`): the record's fields, `authority_rank` and
`sensitivity_rank`, the embedding. `content_tsv` is a generated column: PostgreSQL computes it
during the COPY. Triggers stay enabled, so `memory_lineage` is filled by its trigger as for any
insert, and a memory's sentence vectors are checked against their memory.

Audit: one `memory_updated` event per load (reason `bulk_load`, the counts in its payload) in the
tenant's hash chain, not a `memory_created` per record. Those events carry each record's
admission decision, and a load decides nothing: the event records who loaded how many.

The load is one transaction: all of it or none. It runs as the database owner, as migrations do.
`defer_indexes` is for filling an empty table: the secondary indexes of memory_records are dropped
first and rebuilt after the COPY (within the same transaction), which costs much less than
maintaining them row by row; rebuilding the unique index also checks one active version per slot
for the whole load at once. Afterwards both tables are vacuumed and analyzed: a freshly loaded
table has no statistics and no visibility map.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row

from agent_memory.adapters.postgres.record_rows import INSERT_COLUMNS, record_params
from agent_memory.adapters.postgres.store import PostgresTenantSession
from agent_memory.domain.enums import EventType
from agent_memory.domain.records import MemoryRecord
from agent_memory.ports.store import NewEvent

SENTENCE_COLUMNS = ("tenant_id", "memory_id", "subject_id", "pos", "embedding")
BULK_LOAD_REASON = "bulk_load"


@dataclass(frozen=True, slots=True)
class LoadRow:
    """One memory to load: the record, its vector (None for none yet), its sentences' vectors."""

    record: MemoryRecord
    embedding: np.ndarray | None = None
    sentence_embeddings: Sequence[np.ndarray] = ()


@dataclass
class LoadReport:
    records: int = 0
    sentences: int = 0
    copy_s: float = 0.0
    index_build_s: float = 0.0
    vacuum_analyze_s: float = 0.0
    rebuilt_indexes: list[str] = field(default_factory=list)
    skipped_indexes: list[str] = field(default_factory=list)


def _column_types(conn: psycopg.Connection[Any], table: str, columns: Sequence[str]) -> list[int]:
    """The type OIDs of `columns` as the table declares them (what a binary COPY must send)."""
    rows = conn.execute(
        "SELECT attname, atttypid::int FROM pg_attribute"
        " WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
        (table,),
    ).fetchall()
    oids = {name: oid for name, oid in rows}
    return [oids[c] for c in columns]


def _secondary_indexes(conn: psycopg.Connection[Any]) -> list[tuple[str, str]]:
    rows = conn.execute(
        "SELECT indexname, indexdef FROM pg_indexes"
        " WHERE schemaname = current_schema() AND tablename = 'memory_records'"
        "   AND indexname <> 'memory_records_pkey' ORDER BY indexname"
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def load_records(
    owner_url: str,
    tenant_id: str,
    batches: Iterable[Sequence[LoadRow]],
    *,
    actor: str,
    defer_indexes: bool = False,
    rebuild: Callable[[str, str], bool] = lambda name, ddl: True,
    on_batch: Callable[[int], None] | None = None,
) -> LoadReport:
    """COPY `batches` of one tenant's records (and their sentence vectors) in one transaction.

    `defer_indexes`: drop memory_records' secondary indexes before and rebuild after, those for
    which `rebuild(name, definition)` is true (a benchmark that never searches the whole tenant
    may leave out the HNSW index). `on_batch(records so far)` is called after each batch."""
    report = LoadReport()
    with psycopg.connect(owner_url) as conn:
        register_vector(conn)
        with conn.transaction():
            conn.execute("SELECT set_config('app.tenant_id', %s, true)", (tenant_id,))
            conn.execute("SET LOCAL maintenance_work_mem = '1GB'")
            indexes = _secondary_indexes(conn) if defer_indexes else []
            for name, _ in indexes:
                conn.execute(f'DROP INDEX "{name}"')
            record_types = _column_types(conn, "memory_records", INSERT_COLUMNS)
            sentence_types = _column_types(conn, "memory_sentences", SENTENCE_COLUMNS)
            t0 = time.perf_counter()
            with conn.cursor() as cur:
                for batch in batches:
                    _copy_batch(cur, tenant_id, batch, record_types, sentence_types, report)
                    if on_batch is not None:
                        on_batch(report.records)
            report.copy_s = round(time.perf_counter() - t0, 1)
            t1 = time.perf_counter()
            for name, ddl in indexes:
                if rebuild(name, ddl):
                    conn.execute(ddl)
                    report.rebuilt_indexes.append(name)
                else:
                    report.skipped_indexes.append(name)
            report.index_build_s = round(time.perf_counter() - t1, 1)
            _audit(conn, tenant_id, actor, report)
        t2 = time.perf_counter()
        conn.autocommit = True  # VACUUM runs outside a transaction
        conn.execute("VACUUM (ANALYZE) memory_records")
        conn.execute("VACUUM (ANALYZE) memory_sentences")
        report.vacuum_analyze_s = round(time.perf_counter() - t2, 1)
    return report


def _copy_batch(
    cur: psycopg.Cursor[Any],
    tenant_id: str,
    batch: Sequence[LoadRow],
    record_types: list[int],
    sentence_types: list[int],
    report: LoadReport,
) -> None:
    sentences: list[tuple[Any, ...]] = []
    with cur.copy(f"COPY memory_records ({', '.join(INSERT_COLUMNS)}) FROM STDIN (FORMAT BINARY)") as cp:
        cp.set_types(record_types)
        for row in batch:
            record = row.record
            if record.tenant_id != tenant_id:
                raise ValueError(f"a record of another tenant in a load for {tenant_id!r}")
            params = record_params(record, row.embedding)
            cp.write_row([params[c] for c in INSERT_COLUMNS])
            sentences += [
                (tenant_id, record.id, record.subject_id, pos, vec)
                for pos, vec in enumerate(row.sentence_embeddings)
            ]
    report.records += len(batch)
    if sentences:
        with cur.copy(
            f"COPY memory_sentences ({', '.join(SENTENCE_COLUMNS)}) FROM STDIN (FORMAT BINARY)"
        ) as cp:
            cp.set_types(sentence_types)
            for sentence in sentences:
                cp.write_row(sentence)
        report.sentences += len(sentences)


def _audit(conn: psycopg.Connection[Any], tenant_id: str, actor: str, report: LoadReport) -> None:
    """The load's one event in the tenant's chain (it also registers a new tenant and its chain)."""
    conn.row_factory = dict_row  # type: ignore[assignment]  # rows as the store's sessions read them
    PostgresTenantSession(conn, tenant_id).append_events(
        [
            NewEvent(
                EventType.UPDATED.value,
                actor,
                reason=BULK_LOAD_REASON,
                payload={"records": report.records, "sentences": report.sentences},
            )
        ]
    )
