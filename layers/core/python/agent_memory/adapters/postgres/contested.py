"""The `contested` marker (the product requirements): a lower-authority source contradicted the active record of a
slot; both carry the marker until a reviewer decides. Mixed into PostgresTenantSession."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg.rows import DictRow

from agent_memory.domain.enums import Flag

CONTESTED = Flag.CONTESTED.value
# A settled contest gives the record left serving (the winner) the confidence it had before the
# contest lowered it; a loser (rejected, superseded) keeps the lowered one.
_RESTORE = (
    "confidence = CASE WHEN status = 'active' THEN coalesce(confidence_before_contest, confidence)"
    " ELSE confidence END, confidence_before_contest = NULL"
)


class ContestedQueries:
    conn: psycopg.Connection[DictRow]
    tenant_id: str

    def mark_contested(self, memory_ids: Sequence[str], confidence_factor: float = 1.0) -> None:
        """Add the marker (once) to these records and lower their confidence by `confidence_factor`
        (the product requirements: a contest lowers both confidences), once per contest: the confidence before is
        kept until the contest is settled (`_RESTORE`)."""
        self.conn.execute(
            """UPDATE memory_records SET flags = array_append(array_remove(flags, %(f)s), %(f)s),
                      confidence_before_contest = coalesce(confidence_before_contest, confidence),
                      confidence = CASE WHEN confidence_before_contest IS NULL
                                        THEN confidence * %(k)s ELSE confidence END
                WHERE tenant_id = %(t)s AND id = ANY(%(ids)s)""",
            {"f": CONTESTED, "t": self.tenant_id, "ids": list(memory_ids), "k": confidence_factor},
        )

    def clear_contested(self, memory_ids: Sequence[str]) -> None:
        """Remove the marker from these records (a reviewer decided, or the record left service)."""
        self.conn.execute(
            f"""UPDATE memory_records SET flags = array_remove(flags, %(f)s), {_RESTORE}
                WHERE tenant_id = %(t)s AND id = ANY(%(ids)s)
                  AND (%(f)s = ANY(flags) OR confidence_before_contest IS NOT NULL)""",
            {"f": CONTESTED, "t": self.tenant_id, "ids": list(memory_ids)},
        )

    def settle_slot_contest(self, subject_id: str, slot: str) -> bool:
        """The slot's active record carries the marker exactly while some record of the slot still
        waits in review as contested. Returns whether it does (False: no active record, or none
        contests it)."""
        row = self.conn.execute(
            """UPDATE memory_records r
                  SET flags = CASE WHEN w.waiting THEN array_append(array_remove(r.flags, %(f)s), %(f)s)
                                   ELSE array_remove(r.flags, %(f)s) END,
                      confidence = CASE WHEN w.waiting THEN r.confidence
                                        ELSE coalesce(r.confidence_before_contest, r.confidence) END,
                      confidence_before_contest = CASE WHEN w.waiting THEN r.confidence_before_contest END
                 FROM (SELECT EXISTS (SELECT 1 FROM memory_records c
                                       WHERE c.tenant_id = %(t)s AND c.subject_id = %(s)s
                                         AND c.slot = %(slot)s AND c.status = 'contested') AS waiting) w
                WHERE r.tenant_id = %(t)s AND r.subject_id = %(s)s AND r.slot = %(slot)s
                  AND r.status = 'active'
            RETURNING w.waiting""",
            {"f": CONTESTED, "t": self.tenant_id, "s": subject_id, "slot": slot},
        ).fetchone()
        return bool(row and row["waiting"])

    def settle_stale_contest_marks(self, limit: int) -> list[dict[str, str]]:
        """Clear the marker on up to `limit` active records whose slot has no contested record
        left (the contested one expired, was erased or deleted), in one statement; the ids and
        subjects of those it cleared."""
        return list(
            self.conn.execute(
                f"""UPDATE memory_records r SET flags = array_remove(r.flags, %(f)s), {_RESTORE}
                    WHERE r.tenant_id = %(t)s AND r.id IN (
                          SELECT s.id FROM memory_records s
                           WHERE s.tenant_id = %(t)s AND s.status = 'active' AND %(f)s = ANY(s.flags)
                             AND NOT EXISTS (SELECT 1 FROM memory_records c
                                              WHERE c.tenant_id = s.tenant_id AND c.subject_id = s.subject_id
                                                AND c.slot = s.slot AND c.status = 'contested')
                           ORDER BY s.id LIMIT %(lim)s FOR UPDATE)
                RETURNING r.id, r.subject_id""",
                {"t": self.tenant_id, "f": CONTESTED, "lim": limit},
            ).fetchall()
        )
