"""SQL of one memory's deletion and of a subject's export. Mixed into the tenant session."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

import psycopg
from psycopg.rows import DictRow

from agent_memory.ports.rows import SubjectErasureRow, SubjectHold, SubjectSessionRow

# What a deleted record keeps: its place in the chain and its provenance, not what it said.
_FORGET = """UPDATE memory_records
                SET status = 'deleted', content = '', value = '{}'::jsonb, confidence_basis = NULL,
                    embedding = NULL, valid_to = %(at)s,
                    reasons = array_append(array_remove(reasons, 'deleted_on_request'), 'deleted_on_request')
              WHERE tenant_id = %(t)s AND id = ANY(%(ids)s) AND status <> 'deleted'
             RETURNING id"""


class SubjectDataQueries:
    conn: psycopg.Connection[DictRow]
    tenant_id: str

    # -- one memory's deletion -------------------------------------------------------
    def consolidated_into(self, memory_id: str) -> list[str]:
        """Ids of the duplicates the nightly consolidation folded into `memory_id`: superseded
        copies of the same content, forgotten with it."""
        rows = self.conn.execute(
            """SELECT id FROM memory_records
                WHERE tenant_id = %s AND superseded_by_id = %s
                  AND 'consolidated_into_canonical' = ANY(reasons) AND status <> 'deleted'
                ORDER BY id FOR UPDATE""",
            (self.tenant_id, memory_id),
        ).fetchall()
        return [r["id"] for r in rows]

    def versions_before(self, memory_id: str, subject_id: str, slot: str | None) -> list[str]:
        """The versions of the subject's slot that led to `memory_id` (the chain of `supersedes_id`
        back from it, newest first), their rows locked."""
        rows = self.conn.execute(
            """WITH RECURSIVE chain AS (
                   SELECT id, supersedes_id, 0 AS depth FROM memory_records
                    WHERE tenant_id = %(t)s AND id = %(id)s
                   UNION ALL
                   SELECT r.id, r.supersedes_id, c.depth + 1
                     FROM chain c JOIN memory_records r
                       ON r.tenant_id = %(t)s AND r.id = c.supersedes_id
                    WHERE r.subject_id = %(s)s AND r.slot IS NOT DISTINCT FROM %(slot)s AND c.depth < 10000
               )
               SELECT id, depth FROM chain WHERE depth > 0 ORDER BY depth""",
            {"t": self.tenant_id, "id": memory_id, "s": subject_id, "slot": slot},
        ).fetchall()
        ids = [r["id"] for r in rows]
        if ids:
            self.conn.execute(
                "SELECT id FROM memory_records WHERE tenant_id = %s AND id = ANY(%s) ORDER BY id FOR UPDATE",
                (self.tenant_id, ids),
            )
        return ids

    def forget_records(self, memory_ids: Sequence[str], at: datetime) -> int:
        """Remove the content, value, vectors, sentence vectors, full-text entry and cached replies
        of these records in this transaction; the rows stay, content-free, with status deleted."""
        ids = list(memory_ids)
        rows = self.conn.execute(_FORGET, {"t": self.tenant_id, "ids": ids, "at": at}).fetchall()
        self.conn.execute(
            "DELETE FROM memory_sentences WHERE tenant_id = %s AND memory_id = ANY(%s)", (self.tenant_id, ids)
        )
        # An idempotent reply holds a copy of the record it answered with.
        self.conn.execute(
            "DELETE FROM idempotency_keys WHERE tenant_id = %s AND memory_id = ANY(%s)", (self.tenant_id, ids)
        )
        return len(rows)

    def tombstone_memory(
        self,
        *,
        memory_id: str,
        subject_id: str,
        memory_type: str,
        slot: str | None,
        content_hashes: Sequence[str],
        lineage_keys: Sequence[str],
    ) -> int:
        """Record what refuses the deleted memory's return: its content hashes and lineage keys."""
        rows: list[tuple[Any, ...]] = [
            (self.tenant_id, subject_id, h, None, memory_id, memory_type, slot)
            for h in sorted(set(content_hashes))
        ]
        rows += [
            (self.tenant_id, subject_id, None, k, memory_id, memory_type, slot)
            for k in sorted(set(lineage_keys))
        ]
        self.conn.execute(
            "DELETE FROM tombstones WHERE tenant_id = %s AND memory_id = %s", (self.tenant_id, memory_id)
        )  # idempotent re-run
        with self.conn.cursor() as cur:
            cur.executemany(
                """INSERT INTO tombstones (tenant_id, subject_id, content_hash, lineage_key, memory_id,
                                          memory_type, slot)
                   VALUES (%s, %s, %s, %s, %s, %s, %s)""",
                rows,
            )
        return len(rows)

    # -- a subject's export ------------------------------------------------------------
    def subject_sessions(
        self, subject_id: str, *, before: tuple[datetime, str] | None, limit: int
    ) -> list[SubjectSessionRow]:
        """The subject's closed sessions, newest first, from the keyset `before` (created_at, id)."""
        rows = self.conn.execute(
            """SELECT session_id, ticket_id, channel, occurred_at, status, turns, transcript_key,
                      transcript_hash, memory_ids, outcome, failure_reason, extractor, created_at, updated_at
                 FROM sessions
                WHERE tenant_id = %(t)s AND subject_id = %(s)s
                  AND (%(bc)s::timestamptz IS NULL OR (created_at, session_id) < (%(bc)s, %(bi)s))
                ORDER BY created_at DESC, session_id DESC LIMIT %(lim)s""",
            _keyset(self.tenant_id, subject_id, before, limit),
        ).fetchall()
        return cast(list[SubjectSessionRow], rows)

    def subject_erasures(
        self, subject_id: str, *, before: tuple[datetime, str] | None, limit: int
    ) -> list[SubjectErasureRow]:
        """The subject's erasure requests, newest first, from the keyset `before` (created_at, id)."""
        rows = self.conn.execute(
            """SELECT erasure_id, status, reason, request_reference, requested_by, deadline, receipt,
                      failure_reason, created_at, completed_at
                 FROM erasure_requests
                WHERE tenant_id = %(t)s AND subject_id = %(s)s
                  AND (%(bc)s::timestamptz IS NULL OR (created_at, erasure_id) < (%(bc)s, %(bi)s))
                ORDER BY created_at DESC, erasure_id DESC LIMIT %(lim)s""",
            _keyset(self.tenant_id, subject_id, before, limit),
        ).fetchall()
        return cast(list[SubjectErasureRow], rows)

    def subject_hold(self, subject_id: str) -> SubjectHold | None:
        row = self.conn.execute(
            "SELECT hold_id, reason, set_by, set_at FROM subject_holds WHERE tenant_id = %s AND subject_id = %s",
            (self.tenant_id, subject_id),
        ).fetchone()
        return cast(SubjectHold | None, row)

    def subject_tombstones(self, subject_id: str) -> dict[str, int]:
        """How many tombstones the subject has, by what made them (never the hashes themselves)."""
        row = self.conn.execute(
            """SELECT count(*) FILTER (WHERE memory_id IS NOT NULL) AS deletions,
                      count(*) FILTER (WHERE memory_id IS NULL) AS erasures,
                      count(DISTINCT memory_id) AS deleted_memories
                 FROM tombstones WHERE tenant_id = %s AND subject_id = %s""",
            (self.tenant_id, subject_id),
        ).fetchone()
        assert row is not None
        return dict(row)


def _keyset(
    tenant_id: str, subject_id: str, before: tuple[datetime, str] | None, limit: int
) -> dict[str, Any]:
    """The parameters of a newest-first page of one subject's rows from the keyset `before`."""
    return {
        "t": tenant_id,
        "s": subject_id,
        "bc": before[0] if before else None,
        "bi": before[1] if before else None,
        "lim": limit,
    }
