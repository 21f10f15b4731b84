"""SQL of the erasure steps: the subject's lock, the request's row, the lineage of what was derived
from the subject, and the purge and verification of every layer that holds it.

Mixed into the tenant session like `lifecycle`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

import psycopg
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from agent_memory.ports.rows import ErasureRow, OverdueErasure, SubjectLineage

# A record under a legal hold (its own, or its subject's) is kept by erasure: GDPR Art. 17(3)(e).
_HELD = """(r.legal_hold OR EXISTS (SELECT 1 FROM subject_holds h
                                   WHERE h.tenant_id = r.tenant_id AND h.subject_id = r.subject_id))"""
# The id of a record's own hold; a hold set before holds had ids is named after its record.
RECORD_HOLD_ID = (
    "coalesce({r}.legal_hold_id, 'hold_' || substr(md5({r}.tenant_id || chr(31) || {r}.id), 1, 28))"
)
_SUBJECT_HELD = (
    """EXISTS (SELECT 1 FROM subject_holds h WHERE h.tenant_id = %(t)s AND h.subject_id = %(s)s)"""
)

# Records derived from a subject carry its lineage keys (session:..., transcript:...), mirrored
# into memory_lineage (migration 0009): an equality lookup on a B-tree that row-level security
# does not stop the planner from using, unlike the array column's GIN index.
_DERIVED = f"""SELECT l.memory_id AS id FROM memory_lineage l
                 JOIN memory_records r ON r.id = l.memory_id
                WHERE l.tenant_id = %(t)s AND l.lineage_key = ANY(%(lk)s::text[])
                  AND r.tenant_id = %(t)s AND r.subject_id <> %(s)s AND NOT {_HELD}"""
_SUBJECT_OR_DERIVED = f"""SELECT id FROM memory_records r
                           WHERE tenant_id = %(t)s AND subject_id = %(s)s AND NOT {_HELD}
                          UNION {_DERIVED}"""


class ErasureQueries:
    conn: psycopg.Connection[DictRow]
    tenant_id: str

    def lock_subject_exclusive(self, subject_id: str) -> None:
        self.conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (f"subject\x1f{self.tenant_id}\x1f{subject_id}",),
        )

    def create_erasure(self, **fields: Any) -> None:
        self.conn.execute(
            """INSERT INTO erasure_requests (tenant_id, erasure_id, subject_id, reason, request_reference,
                                             request_reference_sha256, requested_by, status, steps, deadline,
                                             completes_erasure_id)
               VALUES (%(t)s, %(erasure_id)s, %(subject_id)s, %(reason)s, %(request_reference)s,
                       %(request_reference_sha256)s, %(requested_by)s, 'running', %(steps)s, %(deadline)s,
                       %(completes_erasure_id)s)""",
            {"completes_erasure_id": None, "t": self.tenant_id, **fields, "steps": Jsonb(fields["steps"])},
        )

    def get_erasure(self, erasure_id: str, *, for_update: bool = False) -> ErasureRow | None:
        lock = " FOR UPDATE" if for_update else ""
        row = self.conn.execute(
            f"SELECT * FROM erasure_requests WHERE tenant_id = %s AND erasure_id = %s{lock}",
            (self.tenant_id, erasure_id),
        ).fetchone()
        return cast(ErasureRow | None, row)

    def erasure_by_reference(self, subject_id: str, reference_sha256: str) -> ErasureRow | None:
        """The subject's latest erasure (not failed) of the request whose reference has this digest."""
        row = self.conn.execute(
            """SELECT * FROM erasure_requests
                WHERE tenant_id = %s AND subject_id = %s AND request_reference_sha256 = %s AND status <> 'failed'
                ORDER BY created_at DESC LIMIT 1""",
            (self.tenant_id, subject_id, reference_sha256),
        ).fetchone()
        return cast(ErasureRow | None, row)

    _ERASURE_FIELDS = frozenset(
        {
            "status",
            "steps",
            "lineage_keys",
            "receipt",
            "failure_reason",
            "completed_at",
            "reason",
            "request_reference",
        }
    )

    def update_erasure(self, erasure_id: str, **fields: Any) -> None:
        unknown = set(fields) - self._ERASURE_FIELDS
        if unknown:
            raise ValueError(f"not updatable: {sorted(unknown)}")
        params = {k: (Jsonb(v) if k in ("steps", "receipt") else v) for k, v in fields.items()}
        sets = ", ".join(f"{k} = %({k})s" for k in params)
        self.conn.execute(
            f"UPDATE erasure_requests SET {sets}, updated_at = now() WHERE tenant_id = %(t)s AND erasure_id = %(e)s",
            {**params, "t": self.tenant_id, "e": erasure_id},
        )

    def overdue_erasures(self, now: datetime) -> list[OverdueErasure]:
        rows = self.conn.execute(
            "SELECT erasure_id, subject_id, deadline FROM erasure_requests"
            " WHERE tenant_id = %s AND status = 'running' AND deadline < %s",
            (self.tenant_id, now),
        ).fetchall()
        return cast(list[OverdueErasure], rows)

    def subject_lineage(self, subject_id: str) -> SubjectLineage:
        """What an erasure of the subject removes: its records not under a legal hold, their
        lineage and content hashes, and (unless the subject itself is held) its sessions."""
        row = self.conn.execute(
            f"""SELECT count(*) AS records,
                      coalesce(array(SELECT DISTINCT unnest(lineage_keys) FROM memory_records r
                                      WHERE tenant_id = %(t)s AND subject_id = %(s)s AND NOT {_HELD}), '{{}}')
                        AS lineage,
                      coalesce(array(SELECT DISTINCT content_hash FROM memory_records r
                                      WHERE tenant_id = %(t)s AND subject_id = %(s)s AND NOT {_HELD}), '{{}}')
                        AS hashes,
                      coalesce(array(SELECT 'session:' || session_id FROM sessions
                                      WHERE tenant_id = %(t)s AND subject_id = %(s)s AND NOT {_SUBJECT_HELD}),
                               '{{}}') AS sessions,
                      coalesce(array(SELECT transcript_key FROM sessions
                                      WHERE tenant_id = %(t)s AND subject_id = %(s)s
                                        AND transcript_key IS NOT NULL AND NOT {_SUBJECT_HELD}), '{{}}')
                        AS transcripts
                 FROM memory_records r WHERE tenant_id = %(t)s AND subject_id = %(s)s AND NOT {_HELD}""",
            {"t": self.tenant_id, "s": subject_id},
        ).fetchone()
        assert row is not None
        return cast(SubjectLineage, dict(row))

    def subject_held(self, subject_id: str) -> bool:
        row = self.conn.execute(
            f"SELECT {_SUBJECT_HELD} AS held", {"t": self.tenant_id, "s": subject_id}
        ).fetchone()
        return bool(row and row["held"])

    def tombstone_subject(
        self, subject_id: str, erasure_id: str, hashes: Sequence[str], lineage_keys: Sequence[str]
    ) -> int:
        rows: list[tuple[str, str, str | None, str | None, str]] = [
            (self.tenant_id, subject_id, h, None, erasure_id) for h in hashes
        ]
        rows += [(self.tenant_id, subject_id, None, k, erasure_id) for k in lineage_keys]
        self.conn.execute(
            "DELETE FROM tombstones WHERE tenant_id = %s AND erasure_id = %s", (self.tenant_id, erasure_id)
        )  # idempotent re-run
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO tombstones (tenant_id, subject_id, content_hash, lineage_key, erasure_id)"
                " VALUES (%s, %s, %s, %s, %s)",
                rows,
            )
        return len(rows)

    def _lineage_ids(self, sql: str, subject_id: str, lineage_keys: Sequence[str]) -> list[str]:
        rows = self.conn.execute(
            sql, {"t": self.tenant_id, "s": subject_id, "lk": list(lineage_keys)}
        ).fetchall()
        return [r["id"] for r in rows]

    def _subject_and_derived_ids(self, subject_id: str, lineage_keys: Sequence[str]) -> list[str]:
        return self._lineage_ids(_SUBJECT_OR_DERIVED, subject_id, lineage_keys)

    def purge_subject_index(self, subject_id: str, lineage_keys: Sequence[str]) -> int:
        # Ids first, then the UPDATE by primary key: joined in one statement, the planner expected
        # millions of targets and hashed the whole table (minutes at 2,000,000 rows).
        ids = self._subject_and_derived_ids(subject_id, lineage_keys)
        rows = self.conn.execute(
            """UPDATE memory_records SET embedding = NULL, status = 'tombstoned'
                WHERE tenant_id = %s AND id = ANY(%s) RETURNING id""",
            (self.tenant_id, ids),
        ).fetchall()
        self.conn.execute(
            f"""DELETE FROM memory_sentences s WHERE s.tenant_id = %(t)s
                  AND (s.memory_id = ANY(%(ids)s)
                       OR (s.subject_id = %(s)s AND NOT EXISTS (SELECT 1 FROM memory_records r
                                                                  WHERE r.tenant_id = s.tenant_id
                                                                    AND r.id = s.memory_id AND {_HELD})))""",
            {"t": self.tenant_id, "s": subject_id, "ids": [r["id"] for r in rows]},
        )
        return len(rows)

    def purge_subject_records(self, subject_id: str, lineage_keys: Sequence[str]) -> dict[str, int]:
        self.lock_subject_exclusive(subject_id)
        derived_ids = self._lineage_ids(_DERIVED, subject_id, lineage_keys)
        derived = self.conn.execute(
            "DELETE FROM memory_records WHERE tenant_id = %s AND id = ANY(%s) RETURNING id",
            (self.tenant_id, derived_ids),
        ).fetchall()
        own = self.conn.execute(
            f"DELETE FROM memory_records r WHERE tenant_id = %(t)s AND subject_id = %(s)s AND NOT {_HELD} RETURNING id",
            {"t": self.tenant_id, "s": subject_id},
        ).fetchall()
        # A subject under a legal hold keeps its sessions (and their transcripts, and their
        # extraction reports) with its records.
        reports = self.conn.execute(
            f"""DELETE FROM extraction_reports WHERE tenant_id = %(t)s AND subject_id = %(s)s
                   AND NOT {_SUBJECT_HELD} RETURNING session_id""",
            {"t": self.tenant_id, "s": subject_id},
        ).fetchall()
        sessions = self.conn.execute(
            f"""DELETE FROM sessions WHERE tenant_id = %(t)s AND subject_id = %(s)s AND NOT {_SUBJECT_HELD}
                RETURNING session_id""",
            {"t": self.tenant_id, "s": subject_id},
        ).fetchall()
        # Their extraction messages too: a pending one would be sent for a session that is gone,
        # and a session id is the caller's own text.
        self.conn.execute(
            "DELETE FROM outbox WHERE tenant_id = %s AND dedupe_key = ANY(%s)",
            (self.tenant_id, [f"extract:{r['session_id']}" for r in sessions]),
        )
        return {
            "records": len(own),
            "derived": len(derived),
            "sessions": len(sessions),
            "extraction_reports": len(reports),
        }

    def purge_subject_caches(self, subject_id: str) -> int:
        rows = self.conn.execute(
            "DELETE FROM idempotency_keys WHERE tenant_id = %s AND subject_id = %s RETURNING key",
            (self.tenant_id, subject_id),
        ).fetchall()
        return len(rows)

    def verify_subject_erased(self, subject_id: str, lineage_keys: Sequence[str]) -> dict[str, int]:
        """What is left of the subject in each layer, records under a legal hold (and their
        sentences, and a held subject's sessions) excepted: each count must be zero."""
        ids = self._subject_and_derived_ids(subject_id, lineage_keys)
        row = self.conn.execute(
            f"""WITH targets AS MATERIALIZED (
                   SELECT r.embedding IS NOT NULL AS has_vector, r.content_tsv IS NOT NULL AS has_text,
                          r.subject_id = %(s)s AS own
                     FROM memory_records r WHERE r.tenant_id = %(t)s AND r.id = ANY(%(ids)s))
               SELECT
                 (SELECT count(*) FROM targets WHERE own) AS records,
                 (SELECT count(*) FROM targets WHERE has_vector)
                 + (SELECT count(*) FROM memory_sentences s WHERE s.tenant_id = %(t)s AND s.subject_id = %(s)s
                      AND NOT EXISTS (SELECT 1 FROM memory_records r WHERE r.tenant_id = s.tenant_id
                                         AND r.id = s.memory_id AND {_HELD}))
                   AS embeddings,
                 (SELECT count(*) FROM targets WHERE has_text) AS fulltext,
                 (SELECT count(*) FROM targets WHERE NOT own) AS derived,
                 (SELECT count(*) FROM idempotency_keys WHERE tenant_id = %(t)s AND subject_id = %(s)s) AS cache,
                 (SELECT count(*) FROM sessions WHERE tenant_id = %(t)s AND subject_id = %(s)s
                     AND NOT {_SUBJECT_HELD}) AS sessions,
                 (SELECT count(*) FROM extraction_reports WHERE tenant_id = %(t)s AND subject_id = %(s)s
                     AND NOT {_SUBJECT_HELD}) AS extraction_reports""",
            {"t": self.tenant_id, "s": subject_id, "ids": ids},
        ).fetchone()
        assert row is not None
        return dict(row)

    def retained_under_hold(self, subject_id: str) -> list[dict[str, Any]]:
        """The subject's records an erasure kept, counted per hold (a record's own hold first, else
        its subject's): ids and counts only."""
        rows = self.conn.execute(
            f"""SELECT CASE WHEN r.legal_hold THEN {RECORD_HOLD_ID.format(r="r")} ELSE h.hold_id END AS hold_id,
                      count(*)::int AS records
                 FROM memory_records r
                 LEFT JOIN subject_holds h ON h.tenant_id = r.tenant_id AND h.subject_id = r.subject_id
                WHERE r.tenant_id = %(t)s AND r.subject_id = %(s)s AND (r.legal_hold OR h.hold_id IS NOT NULL)
                GROUP BY 1 ORDER BY 1""",
            {"t": self.tenant_id, "s": subject_id},
        ).fetchall()
        return [dict(r) for r in rows]

    def latest_erasure(self, subject_id: str) -> ErasureRow | None:
        """The subject's most recent erasure that did not fail."""
        row = self.conn.execute(
            """SELECT * FROM erasure_requests WHERE tenant_id = %s AND subject_id = %s AND status <> 'failed'
                ORDER BY created_at DESC, erasure_id DESC LIMIT 1""",
            (self.tenant_id, subject_id),
        ).fetchone()
        return cast(ErasureRow | None, row)

    def completing_erasures(self, erasure_id: str) -> list[str]:
        """The erasures that completed this one once a hold was released, oldest first."""
        rows = self.conn.execute(
            """SELECT erasure_id FROM erasure_requests WHERE tenant_id = %s AND completes_erasure_id = %s
                ORDER BY created_at, erasure_id""",
            (self.tenant_id, erasure_id),
        ).fetchall()
        return [r["erasure_id"] for r in rows]

    def subject_ids(self) -> list[str]:
        """Every subject the tenant holds anything of (records, sessions, working memory, erasures)."""
        rows = self.conn.execute(
            """SELECT subject_id FROM memory_records WHERE tenant_id = %(t)s
               UNION SELECT subject_id FROM sessions WHERE tenant_id = %(t)s
               UNION SELECT subject_id FROM working_memory WHERE tenant_id = %(t)s
               UNION SELECT subject_id FROM erasure_requests WHERE tenant_id = %(t)s""",
            {"t": self.tenant_id},
        ).fetchall()
        return [r["subject_id"] for r in rows]
