"""SQL of the read path: a subject's retrieval candidates, the tenant-wide search, the access log
and the freshness gate's revalidation writes. Mixed into the tenant session (store.py); the read
path's autocommit calls are also served alone (PostgresRetrievalReader).

The functions it calls (memory_retrieval_scoped_rows, memory_log_retrieval) are defined in
sql/retrieval_functions.sql, which every `memory migrate` applies again after the numbered
migrations: that file is their current definition."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from typing import Any

import numpy as np
import psycopg
from psycopg import abc
from psycopg.pq import Format
from psycopg.rows import DictRow, tuple_row
from psycopg.types.json import Jsonb

from agent_memory.adapters.postgres.record_rows import RECORD_COLUMNS
from agent_memory.adapters.postgres.tsvector import LexemeCounter
from agent_memory.adapters.postgres.type_sql import shared_knowledge_predicate
from agent_memory.adapters.postgres.working import WorkingMemoryQueries
from agent_memory.domain.enums import VERIFIED_AUTHORITIES, Authority, MemoryType
from agent_memory.domain.ranking import CandidateFacts
from agent_memory.domain.records import MemoryRecord, new_id
from agent_memory.ports.store import RetrievalRow

RETRIEVAL_FUNCTIONS = "retrieval_functions.sql"  # in sql/: applied with CREATE OR REPLACE on migrate
CANDIDATES_FUNCTION = "memory_retrieval_scoped_rows"
# The candidates function's result columns that retrieval_candidates reads, in this order (`_candidate`
# unpacks each row as a plain tuple).
_CANDIDATE_COLUMNS = (
    "id, type, authority, confidence, effective_at, session_id, slot, similarity, lexical, "
    "sentence_similarity, lexemes, query_lexemes, content, category, source_json, value_json, expires_at, "
    "embedding, needs_revalidation, contested"
)
_CANDIDATES_CALL = (
    f"SELECT {_CANDIDATE_COLUMNS} FROM {CANDIDATES_FUNCTION}("
    "%(t)s, %(s)s, %(q)s::vector, %(qtext)s, %(verified)s, %(now)s, %(clr)s, %(types)s::text[], %(n)s,"
    " %(ticket)s::text)"
)
_VERIFIED = sorted(a.value for a in VERIFIED_AUTHORITIES)
_MEMORY_TYPES = {t.value: t for t in MemoryType}  # a dict lookup per row, not an Enum call
_AUTHORITIES = {a.value: a for a in Authority}
# The partial HNSW index's predicate, spelled as migrate.py creates it so the planner uses the index.
_SHARED_KNOWLEDGE = shared_knowledge_predicate("r.")


def retrieval_functions_sql() -> str:
    """The current definitions of the read path's SQL functions (sql/retrieval_functions.sql)."""
    return (resources.files("agent_memory.adapters.postgres") / "sql" / RETRIEVAL_FUNCTIONS).read_text()


def candidates_query() -> str:
    """The query inside the candidates function, between its `query:start` and `query:end` lines,
    as the file that defines it states it (`memory bench retrieve` explains it: EXPLAIN of the
    call would show only a function scan)."""
    body = retrieval_functions_sql().split(f"-- query:start {CANDIDATES_FUNCTION}\n", 1)[1]
    return body.split(f"-- query:end {CANDIDATES_FUNCTION}\n", 1)[0]


@functools.cache
def _record_json() -> str:
    """A whole record as one JSON text, validated by pydantic in one pass (the tenant-wide search):
    this decodes faster than forty typed columns (docs/benchmarks.md)."""
    fields = [c.strip() for c in RECORD_COLUMNS.split(",")]
    return "json_build_object(" + ", ".join(f"'{c}', r.{c}" for c in fields) + ")::text"


def _as_array(v: Any) -> np.ndarray | None:
    if v is None:
        return None
    return np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v, dtype=np.float32)


_TEXT_ARRAY_OID = 1009  # text[]: the query's lexemes
_COLUMN_NAMES = [c.strip() for c in _CANDIDATE_COLUMNS.split(",")]
_LEXEMES_AT = _COLUMN_NAMES.index("query_lexemes")
_EMBEDDING_AT = _COLUMN_NAMES.index("embedding")


@dataclass(frozen=True)
class _CandidateCursor:
    """The candidates' cursor, kept on its connection: a new cursor per retrieval (its adapters,
    its transformer) cost about a tenth of the client's time reading the rows."""

    cursor: psycopg.Cursor[Any]
    lexemes: abc.Loader  # the text[] loader the connection itself uses
    raw_vectors: bool  # the vectors come as bytes (pgvector's type is registered)


def _candidate_cursor(conn: psycopg.Connection[Any]) -> _CandidateCursor:
    kept: _CandidateCursor | None = conn.__dict__.get(_KEPT_CURSOR)
    if kept is None or kept.cursor.closed:
        # Rows as plain tuples (built by psycopg's C code; a named tuple is one Python call a row).
        # The query's lexemes repeat on every row (one is read) and the rows' vectors are decoded
        # together (`_embeddings`): both are kept as their bytes by psycopg's own bytea loader,
        # which is C code, where a loader written here would be one Python call per cell.
        cursor = conn.cursor(row_factory=tuple_row)
        vector = conn.adapters.types.get("vector")
        as_bytes = conn.adapters.get_loader(_BYTEA_OID, Format.BINARY)
        assert as_bytes is not None  # psycopg's own: always registered
        for oid in (_TEXT_ARRAY_OID, *([vector.oid] if vector is not None else [])):
            cursor.adapters.register_loader(oid, as_bytes)
        lexemes = conn.adapters.get_loader(_TEXT_ARRAY_OID, Format.BINARY)
        assert lexemes is not None  # psycopg's own: always registered
        kept = _CandidateCursor(cursor, lexemes(_TEXT_ARRAY_OID, conn), vector is not None)
        conn.__dict__[_KEPT_CURSOR] = kept  # dies with the connection
    return kept


_KEPT_CURSOR = "_memory_candidates_cursor"
_BYTEA_OID = 17
_LOG_CALL = "SELECT memory_log_retrieval(%s, %s, %s, %s, %s, %s)"
_EVENT_CURSOR = "_memory_access_event_cursor"


def _event_cursor(conn: psycopg.Connection[Any]) -> psycopg.Cursor[Any]:
    """The access event's cursor, kept on its connection like the candidates' (a new cursor per
    event cost a sixth of the event's client time); it works inside a transaction or outside."""
    cursor: psycopg.Cursor[Any] | None = conn.__dict__.get(_EVENT_CURSOR)
    if cursor is None or cursor.closed:
        cursor = conn.cursor()
        conn.__dict__[_EVENT_CURSOR] = cursor  # dies with the connection
    return cursor


def _embeddings(raw: list[bytes | None]) -> list[np.ndarray | None]:
    """The rows' vectors in pgvector's binary format (uint16 dim, uint16 unused, dim big-endian
    float4) as float32 arrays, decoded in one call: what database.VectorArrayLoader gives each."""
    present = [b for b in raw if b is not None]
    width = len(present[0]) if present else 0
    if any(len(b) != width for b in present):  # mixed dimensions: one at a time
        return [
            None if b is None else np.frombuffer(b, dtype=">f4", offset=4).astype(np.float32) for b in raw
        ]
    if not present:
        return [None] * len(raw)
    # each vector's 4-byte header read as one float4 and dropped
    block = np.frombuffer(b"".join(present), dtype=">f4").reshape(len(present), width // 4)
    decoded = iter(block[:, 1:].astype(np.float32))
    return [None if b is None else next(decoded) for b in raw]


def _candidate(row: tuple[Any, ...], counter: LexemeCounter, embedding: np.ndarray | None) -> RetrievalRow:
    """One row of the candidates function, its columns in _CANDIDATE_COLUMNS' order."""
    (
        memory_id,
        memory_type,
        authority,
        confidence,
        effective_at,
        session_id,
        slot,
        similarity,
        lexical,
        sentence_similarity,
        lexemes,
        _query_lexemes,
        content,
        category,
        source_json,
        value_json,
        expires_at,
        _embedding,
        needs_revalidation,
        contested,
    ) = row
    counts, length = counter(lexemes or "")
    return RetrievalRow(
        facts=CandidateFacts(
            memory_id,
            _MEMORY_TYPES[memory_type],
            _AUTHORITIES[authority],
            round(float(confidence), 6),
            effective_at,
            session_id,
            slot,
            category,
        ),
        similarity=similarity,
        lexical=None if lexical is None else float(lexical),
        sentence_similarity=sentence_similarity,
        term_counts=counts,
        length=length,
        query_lexemes=counter.lexemes,
        content=content,
        category=category,
        source_json=source_json,
        value_json=value_json,
        expires_at=expires_at,
        embedding=embedding,
        needs_revalidation=needs_revalidation,
        contested=contested,
    )


class RetrievalQueries:
    conn: psycopg.Connection[DictRow]
    tenant_id: str

    def retrieval_candidates(
        self,
        *,
        subject_id: str,
        query_embedding: np.ndarray | None,
        query_text: str,
        types: Sequence[str] | None,
        max_sensitivity_rank: int,
        now: datetime,
        per_signal: int,
        ticket_id: str | None = None,
    ) -> list[RetrievalRow]:
        """Authorized candidates: active, unexpired, within clearance and the subject (a ticket-scoped
        memory only for a request naming its ticket), by three signals
        (whole-memory vector, best sentence vector, full text), plus the subject's verified facts.

        Every scan stays inside the (tenant, subject) B-tree range and ranks exactly: per-subject
        recall never depends on an approximate index. A subject with at most `per_signal` memories in
        scope returns every one that a signal finds (a vector, a sentence vector, a query lexeme, a
        verified fact) unranked: `lexical` None, the caller matches the query's lexemes against each
        row's; ranking them in SQL was a large share of the query's time (docs/benchmarks.md). Both
        paths match text by the same lexemes, so what is admitted does not depend on the subject's size.
        """
        # The query is the function `memory_retrieval_scoped_rows` (sql/retrieval_functions.sql):
        # PL/pgSQL keeps its plan in the database connection, so it is planned once per connection
        # without a named prepared statement, which would pin the connection behind RDS Proxy. It
        # sets the tenant for row-level security itself, so it runs as one statement outside a
        # transaction too. Rows as plain tuples, in _CANDIDATE_COLUMNS' order.
        params = {
            "t": self.tenant_id,
            "s": subject_id,
            "q": query_embedding,
            "qtext": query_text,
            "verified": _VERIFIED,
            "now": now,
            "clr": max_sensitivity_rank,
            "types": list(types) if types else None,
            "n": per_signal,
            "ticket": ticket_id,
        }
        rows: list[Any]
        if isinstance(self.conn, psycopg.Connection):
            kept = _candidate_cursor(self.conn)
            rows = kept.cursor.execute(_CANDIDATES_CALL, params, binary=True).fetchall()
            # every row carries the query's lexemes; they are decoded once
            first = rows[0][_LEXEMES_AT] if rows else None
            query_lexemes: list[str] = [] if first is None else list(kept.lexemes.load(first) or [])
            vectors = [row[_EMBEDDING_AT] for row in rows]
            embeddings = _embeddings(vectors) if kept.raw_vectors else [_as_array(v) for v in vectors]
        else:  # a wrapped connection (the benchmarks time or explain the statement): decoded as read
            with self.conn.cursor(row_factory=tuple_row) as cur:
                rows = cur.execute(_CANDIDATES_CALL, params, binary=True).fetchall()
            query_lexemes = list(rows[0][_LEXEMES_AT] or []) if rows else []
            embeddings = [_as_array(row[_EMBEDDING_AT]) for row in rows]
        counter = LexemeCounter(query_lexemes)  # the query's lexemes looked up in every row
        return [_candidate(row, counter, e) for row, e in zip(rows, embeddings, strict=True)]

    def search_tenant_wide(
        self, *, query_embedding: np.ndarray, max_sensitivity_rank: int, now: datetime, limit: int
    ) -> list[tuple[MemoryRecord, float]]:
        """Reusable knowledge across the tenant's subjects (resolutions, tenant-scoped memories) by the
        partial HNSW index. pgvector's iterative scan keeps going until `limit` rows pass the filters
        (status, expiry, clearance), so a filtered search is not left short; relaxed order is
        re-sorted exactly here."""
        self.conn.execute(
            "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
            " set_config('hnsw.ef_search', %s, true)",
            (str(max(40, 4 * limit)),),
        )
        rows = self.conn.execute(
            f"""
            SELECT record, 1 - distance AS similarity FROM (
                SELECT {_record_json()} AS record, r.embedding <=> %(q)s::vector AS distance
                  FROM memory_records r
                 WHERE r.tenant_id = %(t)s AND ({_SHARED_KNOWLEDGE})
                   AND r.status = 'active' AND (r.expires_at IS NULL OR r.expires_at > %(now)s)
                   AND r.sensitivity_rank <= %(clr)s AND r.embedding IS NOT NULL
                 ORDER BY r.embedding <=> %(q)s::vector
                 LIMIT %(n)s
            ) hits ORDER BY distance
            """,
            {"t": self.tenant_id, "q": query_embedding, "now": now, "clr": max_sensitivity_rank, "n": limit},
            binary=True,
        ).fetchall()
        return [(MemoryRecord.model_validate_json(r["record"]), float(r["similarity"])) for r in rows]

    def family_independent(self, memory_ids: Sequence[str]) -> set[str]:
        """Which of these records a reviewer approved as standing beside their commercial family's
        other terms (one statement that scopes the tenant itself: migration 0046)."""
        rows = self.conn.execute(
            "SELECT id FROM memory_family_independent(%s, %s)", (self.tenant_id, list(memory_ids))
        ).fetchall()
        return {r["id"] for r in rows}

    def log_retrieval(
        self, *, subject_id: str, actor: str, memory_ids: Sequence[str], payload: dict[str, Any]
    ) -> str:
        """One retrieval's access event: one statement (memory_log_retrieval), durable when it
        returns outside a transaction, committed with the transaction inside one."""
        log_id = new_id("acc")
        params = (self.tenant_id, log_id, subject_id, actor, list(memory_ids), Jsonb(payload))
        if isinstance(self.conn, psycopg.Connection):
            _event_cursor(self.conn).execute(_LOG_CALL, params)
        else:  # a wrapped connection (the benchmarks time the statement)
            self.conn.execute(_LOG_CALL, params)
        return log_id

    def pending_retrieval_logs(self, limit: int) -> list[dict[str, Any]]:
        return self.conn.execute(
            """SELECT id, subject_id, actor, memory_ids, payload, created_at FROM retrieval_log
                WHERE tenant_id = %s ORDER BY created_at, id LIMIT %s FOR UPDATE SKIP LOCKED""",
            (self.tenant_id, limit),
        ).fetchall()

    def delete_retrieval_logs(self, ids: Sequence[str]) -> None:
        self.conn.execute(
            "DELETE FROM retrieval_log WHERE tenant_id = %s AND id = ANY(%s)", (self.tenant_id, list(ids))
        )

    def revalidate(
        self, contradicting: Sequence[str], agreeing: Sequence[str], checked_at: datetime
    ) -> tuple[list[str], list[str]]:
        """Record one check against the system of record, whose live values were read at
        `checked_at`: memories found contradicting are flagged, flagged ones found agreeing are
        cleared, each only if no check read later already flagged or cleared it, and each keeps
        the time of the check that decided it. Returns (newly flagged, cleared). Agreement with a
        memory that is not flagged is not recorded (it would write on every retrieval), so an
        older contradicting read can still flag it; the next check clears it.

        One statement, locking every row concerned in id order first: two retrievals deciding
        the same memories in opposite ways wait for each other instead of deadlocking. A still
        stale memory is written again only when the read is newer (a cached answer is not)."""
        ids = sorted({*contradicting, *agreeing})
        rows = self.conn.execute(
            """WITH locked AS MATERIALIZED (
                   SELECT id, needs_revalidation AS was, revalidation_checked_at AS last
                     FROM memory_records WHERE tenant_id = %(t)s AND id = ANY(%(ids)s)
                    ORDER BY id FOR UPDATE),
               todo AS (
                   SELECT id, id = ANY(%(stale)s) AS flag, was FROM locked
                    WHERE (last IS NULL OR last < %(at)s) AND (id = ANY(%(stale)s) OR was))
               UPDATE memory_records r
                  SET needs_revalidation = todo.flag, revalidation_checked_at = %(at)s
                 FROM todo
                WHERE r.tenant_id = %(t)s AND r.id = todo.id
            RETURNING r.id, todo.flag, todo.was""",
            {"t": self.tenant_id, "ids": ids, "stale": list(contradicting), "at": checked_at},
        ).fetchall()
        flagged = sorted(r["id"] for r in rows if r["flag"] and not r["was"])
        cleared = sorted(r["id"] for r in rows if not r["flag"])
        return flagged, cleared


class _ReadPathCalls(RetrievalQueries, WorkingMemoryQueries):
    def __init__(self, conn: psycopg.Connection[DictRow], tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id


class PostgresRetrievalReader:
    """Only the calls that scope the tenant themselves (candidates, the access event, a session's
    working values): any other statement on this autocommit connection would see no tenant under
    row-level security, and so nothing."""

    def __init__(self, conn: psycopg.Connection[DictRow], tenant_id: str) -> None:
        self.conn = conn  # for checks of what the calls leave on it
        self.tenant_id = tenant_id
        self._calls = _ReadPathCalls(conn, tenant_id)
        self.retrieval_candidates = self._calls.retrieval_candidates
        self.log_retrieval = self._calls.log_retrieval
        self.live_working_items = self._calls.live_working_items
        self.family_independent = self._calls.family_independent
