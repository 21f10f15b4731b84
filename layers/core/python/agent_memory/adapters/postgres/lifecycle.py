"""SQL of the lifecycle: purge, legal holds and consolidation (erasure: `erasure`).

Mixed into the tenant session; every statement is batched (LIMIT ... FOR UPDATE
SKIP LOCKED) so no lock is held for long and a crash midway loses nothing but
the current batch, which the next run redoes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

import psycopg
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from agent_memory.adapters.postgres import type_sql
from agent_memory.adapters.postgres.erasure import RECORD_HOLD_ID, ErasureQueries
from agent_memory.domain.memory_types import TYPE_SPECS
from agent_memory.ports.rows import (
    DeletedRecord,
    DuplicateGroup,
    ExpiredRecord,
    HeldRecord,
    NearDuplicatePair,
    ObservationRow,
    RevalidationFlag,
    SessionTranscript,
)

# A closed commitment is never merged with, nor deduplicated against, an open one (type_sql.py).
NOT_CLOSED_COMMITMENT = type_sql.NOT_CLOSED_COMMITMENT

RETRIEVABLE = ("active", "pending_approval", "contested")
# The types whose near-duplicates the nightly consolidation folds into one (the type table decides).
_MERGED_TYPES = sorted(t.value for t, s in TYPE_SPECS.items() if s.merges_near_duplicates)


# Fixed-width text of (valid_to, id), so the largest cursor of a batch is its last row.
_ARCHIVE_CURSOR = (
    "to_char(m.valid_to AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"') || '|' || m.id"
)


class LifecycleQueries(ErasureQueries):
    """Purge, holds and consolidation; the erasure steps come from `ErasureQueries`."""

    conn: psycopg.Connection[DictRow]
    tenant_id: str

    # -- purge -----------------------------------------------------------------
    def expire_batch(
        self, now: datetime, limit: int, candidate_cutoff: datetime, after: str = ""
    ) -> list[ExpiredRecord]:
        """Expire records past expires_at (and review candidates older than the cutoff), unless on hold.
        The vectors go now; the full-text entry goes with the status (generated column)."""
        rows = self.conn.execute(
            """
            WITH doomed AS (
                SELECT id FROM memory_records r
                 WHERE tenant_id = %(t)s
                   AND status IN ('active', 'pending_approval', 'contested', 'quarantined')
                   AND ((expires_at IS NOT NULL AND expires_at <= %(now)s)
                        OR (status IN ('pending_approval', 'contested', 'quarantined') AND created_at <= %(cut)s))
                   AND NOT legal_hold AND id > %(after)s
                   AND NOT EXISTS (SELECT 1 FROM subject_holds h
                                    WHERE h.tenant_id = r.tenant_id AND h.subject_id = r.subject_id)
                 ORDER BY id
                 LIMIT %(lim)s
                 FOR UPDATE SKIP LOCKED
            )
            UPDATE memory_records m
               SET status = 'expired', embedding = NULL, valid_to = %(now)s
              FROM doomed WHERE m.id = doomed.id
            RETURNING m.id, m.subject_id, m.content_hash
            """,
            {"t": self.tenant_id, "now": now, "lim": limit, "cut": candidate_cutoff, "after": after},
        ).fetchall()
        if rows:
            self.conn.execute(
                "DELETE FROM memory_sentences WHERE tenant_id = %s AND memory_id = ANY(%s)",
                (self.tenant_id, [r["id"] for r in rows]),
            )
        return cast(list[ExpiredRecord], rows)

    def hard_delete_batch(self, cutoff: datetime, limit: int, after: str = "") -> list[DeletedRecord]:
        """Delete expired records whose archive window has passed (walking the partial index
        `memory_records_archive` by (valid_to, id) from the cursor `after`), then contentless
        rejections past the window. Rows carry `cursor` for the next batch."""
        after_at, _, after_id = after.partition("|")
        rows = self.conn.execute(
            f"""
            WITH doomed AS (
                SELECT id FROM memory_records r
                 WHERE tenant_id = %(t)s AND status = 'expired' AND valid_to <= %(cut)s AND NOT legal_hold
                   AND NOT EXISTS (SELECT 1 FROM subject_holds h
                                    WHERE h.tenant_id = r.tenant_id AND h.subject_id = r.subject_id)
                   AND (valid_to, id) > (coalesce(%(after_at)s::timestamptz, '-infinity'), %(after_id)s)
                 ORDER BY valid_to, id LIMIT %(lim)s FOR UPDATE SKIP LOCKED
            )
            DELETE FROM memory_records m USING doomed WHERE m.id = doomed.id
            RETURNING m.id, m.subject_id, m.content_hash, {_ARCHIVE_CURSOR} AS cursor
            """,
            {
                "t": self.tenant_id,
                "cut": cutoff,
                "lim": limit,
                "after_at": after_at or None,
                "after_id": after_id,
            },
        ).fetchall()
        if len(rows) < limit:
            rows += self.conn.execute(
                """
                WITH doomed AS (
                    SELECT id FROM memory_records r
                     WHERE tenant_id = %(t)s AND status = 'rejected' AND created_at <= %(cut)s AND NOT legal_hold
                       AND NOT EXISTS (SELECT 1 FROM subject_holds h
                                        WHERE h.tenant_id = r.tenant_id AND h.subject_id = r.subject_id)
                     ORDER BY created_at, id LIMIT %(lim)s FOR UPDATE SKIP LOCKED
                )
                DELETE FROM memory_records m USING doomed WHERE m.id = doomed.id
                RETURNING m.id, m.subject_id, m.content_hash, %(after)s AS cursor
                """,
                {"t": self.tenant_id, "cut": cutoff, "lim": limit - len(rows), "after": after},
            ).fetchall()
        return cast(list[DeletedRecord], rows)

    def expiring_of_type(self, memory_type: str, now: datetime, limit: int) -> list[dict[str, Any]]:
        """Active records of a type the purge would expire now (past `expires_at`, not held), by
        subject, newest first: what a digest is written from before they go."""
        rows = self.conn.execute(
            """SELECT id, subject_id, content, effective_at, confidence, authority, sensitivity,
                      lineage_keys, source->>'system' AS source_system
                 FROM memory_records r
                WHERE tenant_id = %(t)s AND type = %(type)s AND status = 'active'
                  AND expires_at IS NOT NULL AND expires_at <= %(now)s AND NOT legal_hold
                  AND NOT EXISTS (SELECT 1 FROM subject_holds h
                                   WHERE h.tenant_id = r.tenant_id AND h.subject_id = r.subject_id)
                ORDER BY subject_id, effective_at DESC, id
                LIMIT %(lim)s""",
            {"t": self.tenant_id, "type": memory_type, "now": now, "lim": limit},
        ).fetchall()
        return [dict(r) for r in rows]

    def count_purgeable(
        self, now: datetime, archive_cutoff: datetime, candidate_cutoff: datetime
    ) -> dict[str, int]:
        row = self.conn.execute(
            """
            SELECT
              count(*) FILTER (WHERE status IN ('active', 'pending_approval', 'contested', 'quarantined')
                               AND ((expires_at IS NOT NULL AND expires_at <= %(now)s)
                                    OR (status IN ('pending_approval', 'contested', 'quarantined')
                                        AND created_at <= %(cand)s))
                               AND NOT legal_hold AND NOT on_hold) AS expire,
              count(*) FILTER (WHERE ((status = 'expired' AND valid_to <= %(arch)s)
                                      OR (status = 'rejected' AND created_at <= %(arch)s))
                               AND NOT legal_hold AND NOT on_hold) AS delete,
              count(*) FILTER (WHERE (legal_hold OR on_hold) AND expires_at IS NOT NULL
                               AND expires_at <= %(now)s AND status = 'active') AS held
            FROM (SELECT r.*, EXISTS (SELECT 1 FROM subject_holds h WHERE h.tenant_id = r.tenant_id
                                        AND h.subject_id = r.subject_id) AS on_hold
                    FROM memory_records r WHERE r.tenant_id = %(t)s) x
            """,
            {"t": self.tenant_id, "now": now, "arch": archive_cutoff, "cand": candidate_cutoff},
        ).fetchone()
        assert row is not None
        return {"expire": row["expire"], "delete": row["delete"], "held": row["held"]}

    # -- revalidation by age ---------------------------------------------------
    # Active records of a type with a revalidation age whose age (from the later of effective_at
    # and last_validated_at; greatest() skips a NULL) reached it, outside the slots the system of
    # record owns; `c` pairs each type with its cutoff.
    _REVALIDATION_DUE = """
        FROM memory_records r
        JOIN unnest(%(types)s::text[], %(cutoffs)s::timestamptz[]) AS c(type, cutoff) ON c.type = r.type
       WHERE r.tenant_id = %(t)s AND r.status = 'active' AND NOT r.needs_revalidation
         AND greatest(r.effective_at, r.last_validated_at) <= c.cutoff
         AND (r.slot IS NULL OR NOT r.slot = ANY(%(sor)s::text[]))"""

    def flag_revalidation_batch(
        self,
        cutoffs: dict[str, datetime],
        sor_slots: Sequence[str],
        limit: int,
        after: str = "",
        ids: Sequence[str] | None = None,
    ) -> list[RevalidationFlag]:
        """Flag `needs_revalidation` on up to `limit` due records with ids after `after` (a keyset
        walk: each batch starts where the last ended), only among `ids` when given (what a read
        found). Returns their id, subject and type."""
        if not cutoffs:
            return []
        rows = self.conn.execute(
            f"""
            WITH due AS (
                SELECT r.id {self._REVALIDATION_DUE} AND r.id > %(after)s
                   AND (%(ids)s::text[] IS NULL OR r.id = ANY(%(ids)s::text[]))
                 ORDER BY r.id LIMIT %(lim)s
                 FOR UPDATE OF r SKIP LOCKED
            )
            UPDATE memory_records m SET needs_revalidation = true
              FROM due WHERE m.tenant_id = %(t)s AND m.id = due.id
            RETURNING m.id, m.subject_id, m.type
            """,
            {
                **self._due_params(cutoffs, sor_slots),
                "after": after,
                "lim": limit,
                "ids": list(ids) if ids is not None else None,
            },
        ).fetchall()
        return cast(list[RevalidationFlag], rows)

    def count_revalidation_due(self, cutoffs: dict[str, datetime], sor_slots: Sequence[str]) -> int:
        """How many records the next flagging pass would flag (a dry run)."""
        if not cutoffs:
            return 0
        row = self.conn.execute(
            f"SELECT count(*) AS n {self._REVALIDATION_DUE}", self._due_params(cutoffs, sor_slots)
        ).fetchone()
        assert row is not None
        return int(row["n"])

    def _due_params(self, cutoffs: dict[str, datetime], sor_slots: Sequence[str]) -> dict[str, Any]:
        types = sorted(cutoffs)
        return {
            "t": self.tenant_id,
            "types": types,
            "cutoffs": [cutoffs[t] for t in types],
            "sor": list(sor_slots),
        }

    def delete_old_sessions(self, cutoff: datetime) -> list[SessionTranscript]:
        rows = self.conn.execute(
            """SELECT session_id, transcript_key FROM sessions
                WHERE tenant_id = %s AND created_at <= %s AND transcript_key IS NOT NULL""",
            (self.tenant_id, cutoff),
        ).fetchall()
        return cast(list[SessionTranscript], rows)

    def clear_transcript_keys(self, session_ids: Sequence[str]) -> None:
        # The extraction report quotes the transcript: it ends with it.
        self.conn.execute(
            "DELETE FROM extraction_reports WHERE tenant_id = %s AND session_id = ANY(%s)",
            (self.tenant_id, list(session_ids)),
        )
        self.conn.execute(
            "UPDATE sessions SET transcript_key = NULL WHERE tenant_id = %s AND session_id = ANY(%s)",
            (self.tenant_id, list(session_ids)),
        )

    # -- legal hold ----------------------------------------------------------------
    def set_subject_hold(self, subject_id: str, reason: str, actor: str, hold_id: str) -> str:
        """Place (or restate) the subject's hold; a hold already in place keeps its id."""
        row = self.conn.execute(
            """INSERT INTO subject_holds (tenant_id, subject_id, reason, set_by, hold_id) VALUES (%s, %s, %s, %s, %s)
               ON CONFLICT (tenant_id, subject_id) DO UPDATE SET reason = EXCLUDED.reason, set_by = EXCLUDED.set_by,
                                                                 set_at = now()
               RETURNING hold_id""",
            (self.tenant_id, subject_id, reason, actor, hold_id),
        ).fetchone()
        assert row is not None
        return str(row["hold_id"])

    def clear_subject_hold(self, subject_id: str) -> str | None:
        """Release the subject's hold; its id, or None when there was none."""
        row = self.conn.execute(
            "DELETE FROM subject_holds WHERE tenant_id = %s AND subject_id = %s RETURNING hold_id",
            (self.tenant_id, subject_id),
        ).fetchone()
        return str(row["hold_id"]) if row else None

    def subject_on_hold(self, subject_id: str) -> bool:
        return (
            self.conn.execute(
                "SELECT 1 FROM subject_holds WHERE tenant_id = %s AND subject_id = %s",
                (self.tenant_id, subject_id),
            ).fetchone()
            is not None
        )

    def set_record_hold(self, memory_id: str, hold: bool, hold_id: str) -> HeldRecord | None:
        """Set or release one record's hold. `hold_id` is the hold's id (kept when one is already
        in place); the row returned names the hold set or released (None: there was none)."""
        row = self.conn.execute(
            f"""UPDATE memory_records m
                   SET legal_hold = %(hold)s,
                       legal_hold_id = CASE WHEN %(hold)s THEN coalesce(o.held, %(hid)s) END
                  FROM (SELECT id, CASE WHEN legal_hold THEN {RECORD_HOLD_ID.format(r="memory_records")} END AS held
                          FROM memory_records WHERE tenant_id = %(t)s AND id = %(id)s FOR UPDATE) o
                 WHERE m.tenant_id = %(t)s AND m.id = o.id
             RETURNING m.id, m.subject_id, coalesce(m.legal_hold_id, o.held) AS hold_id""",
            {"hold": hold, "hid": hold_id, "t": self.tenant_id, "id": memory_id},
        ).fetchone()
        return cast(HeldRecord | None, row)

    # -- consolidation -------------------------------------------------------------
    def duplicate_groups(self, limit: int) -> list[DuplicateGroup]:
        """Active append-only memories of one subject with the same normalised content."""
        rows = self.conn.execute(
            f"""SELECT subject_id, type, content_hash, array_agg(id ORDER BY created_at, id) AS ids
                 FROM memory_records
                WHERE tenant_id = %s AND status = 'active' AND slot IS NULL AND {NOT_CLOSED_COMMITMENT}
                GROUP BY subject_id, type, content_hash HAVING count(*) > 1
                LIMIT %s""",
            (self.tenant_id, limit),
        ).fetchall()
        return cast(list[DuplicateGroup], rows)

    def near_duplicate_pairs(
        self, min_similarity: float, limit: int, since: datetime | None = None
    ) -> list[NearDuplicatePair]:
        """Pairs (older keep, newer merge) of one subject's similar slotless memories; with `since`,
        only pairs whose newer member was written since then (each new memory against its subject)."""
        rows = self.conn.execute(
            """SELECT a.id AS keep, b.id AS merge
                 FROM memory_records b
                 JOIN memory_records a ON a.tenant_id = b.tenant_id AND a.subject_id = b.subject_id
                  AND a.status = 'active' AND a.type = b.type AND a.slot IS NULL
                  AND (b.created_at, b.id) > (a.created_at, a.id)
                WHERE b.tenant_id = %(t)s AND b.status = 'active' AND b.slot IS NULL
                  AND b.type = ANY(%(types)s)
                  AND (%(since)s::timestamptz IS NULL OR b.created_at >= %(since)s)
                  AND a.embedding IS NOT NULL AND b.embedding IS NOT NULL
                  AND 1 - (a.embedding <=> b.embedding) >= %(sim)s
                LIMIT %(lim)s""",
            {
                "t": self.tenant_id,
                "sim": min_similarity,
                "lim": limit,
                "since": since,
                "types": _MERGED_TYPES,
            },
        ).fetchall()
        return cast(list[NearDuplicatePair], rows)

    def newest_created_at(self) -> datetime | None:
        row = self.conn.execute(
            "SELECT max(created_at) AS at FROM memory_records WHERE tenant_id = %s", (self.tenant_id,)
        ).fetchone()
        return row["at"] if row else None

    def watermark(self, name: str) -> datetime | None:
        row = self.conn.execute(
            "SELECT at FROM lifecycle_watermarks WHERE tenant_id = %s AND name = %s", (self.tenant_id, name)
        ).fetchone()
        return row["at"] if row else None

    def set_watermark(self, name: str, at: datetime) -> None:
        self.conn.execute(
            """INSERT INTO lifecycle_watermarks (tenant_id, name, at) VALUES (%s, %s, %s)
               ON CONFLICT (tenant_id, name) DO UPDATE SET at = excluded.at""",
            (self.tenant_id, name, at),
        )

    def observations(self, limit: int) -> list[ObservationRow]:
        rows = self.conn.execute(
            """SELECT id, subject_id, session_id, actor, confidence, embedding, created_at FROM memory_records
                WHERE tenant_id = %s AND type = ANY(%s) AND status = 'quarantined'
                  AND embedding IS NOT NULL ORDER BY subject_id, created_at LIMIT %s""",
            (self.tenant_id, type_sql.CORROBORATED_TYPES, limit),
        ).fetchall()
        return cast(list[ObservationRow], rows)

    def merge_into(self, keep_id: str, merge_ids: Sequence[str], now: datetime) -> None:
        """Fold duplicates into the canonical record: provenance kept, lineage unioned,
        shortest retention and strictest sensitivity inherited; the others are superseded."""
        self.conn.execute(
            """
            WITH src AS (SELECT * FROM memory_records WHERE tenant_id = %(t)s AND id = ANY(%(all)s)),
                 agg AS (
                   SELECT array(SELECT DISTINCT unnest(lineage_keys) FROM src ORDER BY 1) AS lineage,
                          min(expires_at) AS expires_at,
                          max(sensitivity_rank) AS sens_rank,
                          jsonb_agg(jsonb_build_object('id', id, 'source', source, 'actor', actor,
                                                       'effective_at', effective_at) ORDER BY created_at) AS prov
                     FROM src)
            UPDATE memory_records m
               SET lineage_keys = agg.lineage,
                   expires_at = agg.expires_at,
                   sensitivity_rank = agg.sens_rank,
                   sensitivity = (ARRAY['public', 'internal', 'confidential', 'restricted'])[agg.sens_rank + 1],
                   value = m.value || jsonb_build_object('consolidated_from', agg.prov),
                   reasons = array_append(m.reasons, 'consolidated')
              FROM agg
             WHERE m.tenant_id = %(t)s AND m.id = %(keep)s
            """,
            {"t": self.tenant_id, "all": [keep_id, *merge_ids], "keep": keep_id},
        )
        self.conn.execute(
            """UPDATE memory_records SET status = 'superseded', superseded_by_id = %s, superseded_at = %s,
                      valid_to = %s, embedding = NULL, reasons = array_append(reasons, 'consolidated_into_canonical')
                WHERE tenant_id = %s AND id = ANY(%s) AND status = 'active'""",
            (keep_id, now, now, self.tenant_id, list(merge_ids)),
        )

    def promote_observation(self, memory_id: str, corroborated_by: Sequence[str]) -> None:
        self.conn.execute(
            """UPDATE memory_records SET status = 'pending_approval',
                      reasons = array_append(reasons, 'corroborated_observation'),
                      value = value || jsonb_build_object('corroborated_by', %s::jsonb)
                WHERE tenant_id = %s AND id = %s AND status = 'quarantined'""",
            (Jsonb(list(corroborated_by)), self.tenant_id, memory_id),
        )

    def demote_observation(self, memory_id: str) -> None:
        self.conn.execute(
            """UPDATE memory_records SET confidence = greatest(0, confidence * 0.8),
                      reasons = array_append(reasons, 'uncorroborated_demoted')
                WHERE tenant_id = %s AND id = %s AND status = 'quarantined'
                  AND NOT ('uncorroborated_demoted' = ANY(reasons))""",
            (self.tenant_id, memory_id),
        )
