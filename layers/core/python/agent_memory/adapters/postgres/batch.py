"""The batched admission path's statements (services/batch_admission.py): each one covers a whole
batch, so a batch of candidates costs a handful of round trips instead of a dozen per record.

They read exactly what the single-record statements read (`PostgresTenantSession.admission_context`,
`near_duplicate`, `idempotent_reply`) and write exactly what theirs write (`supersede`,
`insert_record`, `mark_contested`, `insert_sentences`, `save_idempotent_reply`), in the caller's
tenant transaction: row-level security and the subject binding apply as for any statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
from psycopg.types.json import Jsonb

from agent_memory.adapters.postgres.lifecycle import NOT_CLOSED_COMMITMENT
from agent_memory.adapters.postgres.record_rows import (
    INSERT_RECORD,
    RECORD_COLUMNS,
    record_params,
    row_to_record,
)
from agent_memory.domain.decision import AdmissionContext
from agent_memory.domain.records import MemoryRecord
from agent_memory.ports.batch import ContextQuery, PrefetchedContext
from agent_memory.ports.store import IdempotentReply

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import DictRow

_LIVE = "('active', 'pending_approval', 'contested', 'quarantined')"

# One row per candidate, with the same sub-queries as `admission_context` and `near_duplicate`.
_CONTEXTS = f"""
SELECT c.i,
  (SELECT id FROM memory_records
    WHERE tenant_id = %(t)s AND subject_id = c.s AND slot = c.slot AND status = 'active') AS active_id,
  (SELECT id FROM memory_records
    WHERE tenant_id = %(t)s AND content_hash = c.h AND status IN {_LIVE} AND {NOT_CLOSED_COMMITMENT}
    ORDER BY created_at LIMIT 1) AS duplicate_id,
  EXISTS (SELECT 1 FROM tombstones
    WHERE tenant_id = %(t)s
      AND (content_hash = c.h
           OR (lineage_key = ANY(ARRAY(SELECT jsonb_array_elements_text(c.lk)))
               AND (memory_id IS NULL
                    OR (subject_id = c.s AND memory_type = c.ty AND slot IS NOT DISTINCT FROM c.slot))))
  ) AS tombstoned,
  EXISTS (SELECT 1 FROM erasure_requests
    WHERE tenant_id = %(t)s AND subject_id = c.s AND status = 'running') AS erasing,
  near.id AS near_id, near.similarity AS near_similarity
FROM unnest(%(i)s::int[], %(s)s::text[], %(ty)s::text[], %(slot)s::text[], %(h)s::text[],
            %(lk)s::jsonb[], %(e)b::vector[]) AS c(i, s, ty, slot, h, lk, e)
LEFT JOIN LATERAL (
  SELECT id, 1 - (embedding <=> c.e) AS similarity
    FROM memory_records
   WHERE c.e IS NOT NULL AND %(near)s
     AND tenant_id = %(t)s AND subject_id = c.s AND type = c.ty AND slot IS NOT DISTINCT FROM c.slot
     AND status IN ('active', 'pending_approval', 'contested')
     AND embedding IS NOT NULL AND {NOT_CLOSED_COMMITMENT}
   ORDER BY embedding <=> c.e
   LIMIT 1) near ON true
ORDER BY c.i
"""


class BatchAdmissionQueries:
    """Mixed into `PostgresTenantSession`: the batch's reads before its decisions, and its writes after."""

    conn: psycopg.Connection[DictRow]
    tenant_id: str

    def lock_batch(self, subjects: Sequence[str], slots: Sequence[tuple[str, str]]) -> None:
        """`lock_subject` for every subject, then `lock_slot` for every slot, each in sorted order:
        two batches that share slots take them in the same order, so they serialize, never deadlock."""
        subject_keys = sorted({f"subject\x1f{self.tenant_id}\x1f{s}" for s in subjects})
        slot_keys = sorted({f"slot\x1f{self.tenant_id}\x1f{s}\x1f{slot}" for s, slot in slots})
        # An array is unnested in its order, and each row takes its lock as it is produced.
        self.conn.execute(
            """SELECT count(pg_advisory_xact_lock_shared(hashtextextended(k, 0)))
                 FROM unnest(%s::text[]) WITH ORDINALITY AS u(k, n)""",
            (subject_keys,),
        )
        if slot_keys:
            self.conn.execute(
                """SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0)))
                     FROM unnest(%s::text[]) WITH ORDINALITY AS u(k, n)""",
                (slot_keys,),
            )

    def admission_contexts(
        self, queries: Sequence[ContextQuery], *, min_similarity: float
    ) -> list[PrefetchedContext]:
        """What `admission_context` would say for each candidate right now, and the nearest record
        `near_duplicate` searches (any similarity), in one statement; the records in a second."""
        if not queries:
            return []
        rows = self.conn.execute(
            _CONTEXTS,
            {
                "t": self.tenant_id,
                "near": min_similarity <= 1.0,
                "i": list(range(len(queries))),
                "s": [q.subject_id for q in queries],
                "ty": [q.memory_type for q in queries],
                "slot": [q.slot for q in queries],
                "h": [q.content_hash for q in queries],
                "lk": [Jsonb(list(q.lineage_keys)) for q in queries],
                "e": [q.embedding for q in queries],
            },
        ).fetchall()
        wanted = {
            row[k] for row in rows for k in ("active_id", "duplicate_id", "near_id") if row[k] is not None
        }
        records = self.records_by_id(wanted)
        return [
            PrefetchedContext(
                context=AdmissionContext(
                    active=records.get(row["active_id"]) if row["active_id"] else None,
                    duplicate=records.get(row["duplicate_id"]) if row["duplicate_id"] else None,
                    tombstoned=bool(row["tombstoned"]),
                    erasing=bool(row["erasing"]),
                ),
                nearest=records.get(row["near_id"]) if row["near_id"] else None,
                nearest_similarity=row["near_similarity"],
            )
            for row in rows
        ]

    def records_by_id(self, memory_ids: set[str]) -> dict[str, MemoryRecord]:
        if not memory_ids:
            return {}
        rows = self.conn.execute(
            f"SELECT {RECORD_COLUMNS} FROM memory_records WHERE tenant_id = %s AND id = ANY(%s)",
            (self.tenant_id, sorted(memory_ids)),
        ).fetchall()
        return {r["id"]: row_to_record(r) for r in rows}

    def idempotent_replies(self, keys: set[str]) -> dict[str, IdempotentReply]:
        """`idempotent_reply` for several keys at once (those with none are left out)."""
        if not keys:
            return {}
        rows = self.conn.execute(
            "SELECT key, fingerprint, status, response FROM idempotency_keys WHERE tenant_id = %s AND key = ANY(%s)",
            (self.tenant_id, sorted(keys)),
        ).fetchall()
        return {
            r["key"]: IdempotentReply(
                fingerprint=r["fingerprint"], response=r["response"], status=r["status"]
            )
            for r in rows
        }

    def persist_admitted(
        self,
        *,
        supersessions: Sequence[tuple[str, str, datetime]],
        records: Sequence[tuple[MemoryRecord, np.ndarray | None]],
        sentences: Sequence[tuple[str, str, np.ndarray]],
    ) -> None:
        """What `_persist` writes for several decided records, one statement per kind: the versions
        they supersede closed first (the one-active-per-slot index), then the records and their
        sentence vectors. (Contested markers: `mark_contested`, which takes many ids already.)"""
        with self.conn.cursor() as cur:
            if supersessions:
                cur.executemany(
                    """UPDATE memory_records
                          SET status = 'superseded', superseded_by_id = %s, superseded_at = %s, valid_to = %s
                        WHERE id = %s AND status = 'active'""",
                    [(new, at, at, old) for old, new, at in supersessions],
                )
            if records:
                # Vectors in binary: their text form costs more to write than the rest of the row.
                insert = INSERT_RECORD.replace("%(embedding)s", "%(embedding)b")
                cur.executemany(insert, [record_params(r, e) for r, e in records])
        rows = [
            (self.tenant_id, memory_id, subject_id, pos, v)
            for memory_id, subject_id, vectors in sentences
            for pos, v in enumerate(vectors)
        ]
        if rows:
            with self.conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO memory_sentences (tenant_id, memory_id, subject_id, pos, embedding)"
                    " VALUES (%s, %s, %s, %s, %b)",
                    rows,
                )

    def save_idempotent_replies(
        self, replies: Sequence[tuple[str, IdempotentReply, str | None, str]]
    ) -> None:
        """`save_idempotent_reply` for several keys in one statement."""
        if not replies:
            return
        with self.conn.cursor() as cur:
            cur.executemany(
                """INSERT INTO idempotency_keys (tenant_id, key, fingerprint, status, response, memory_id, subject_id)
                   VALUES (%s, %s, %s, %s, %s, %s, %s)""",
                [
                    (self.tenant_id, key, r.fingerprint, r.status, Jsonb(r.response), memory_id, subject_id)
                    for key, r, memory_id, subject_id in replies
                ],
            )
