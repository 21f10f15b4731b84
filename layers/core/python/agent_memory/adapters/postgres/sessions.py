"""SQL of closed sessions and the transactional outbox that carries their extraction messages.

Mixed into the tenant session (`store.PostgresTenantSession`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

import psycopg
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from agent_memory.ports.rows import OutboxRow, SessionRow, UnfinishedSession


class SessionQueries:
    conn: psycopg.Connection[DictRow]
    tenant_id: str

    def get_session(self, session_id: str, *, for_update: bool = False) -> SessionRow | None:
        lock = " FOR UPDATE" if for_update else ""
        row = self.conn.execute(
            f"SELECT * FROM sessions WHERE tenant_id = %s AND session_id = %s{lock}",
            (self.tenant_id, session_id),
        ).fetchone()
        return cast(SessionRow | None, row)

    def insert_session(self, **fields: Any) -> bool:
        """Record a closed session; False when the id is taken already (by a close that committed
        first, or by a session outside the caller's binding): the caller reads what is there."""
        row = self.conn.execute(
            """INSERT INTO sessions (tenant_id, session_id, subject_id, ticket_id, channel, occurred_at,
                                     transcript_hash, transcript_key, turns, status, closed_by)
               VALUES (%(tenant_id)s, %(session_id)s, %(subject_id)s, %(ticket_id)s, %(channel)s, %(occurred_at)s,
                       %(transcript_hash)s, %(transcript_key)s, %(turns)s, 'queued', %(closed_by)s)
               ON CONFLICT (tenant_id, session_id) DO NOTHING
               RETURNING 1""",
            {"tenant_id": self.tenant_id, "closed_by": None, **fields},
        ).fetchone()
        return row is not None

    def session_subject(self, session_id: str) -> str | None:
        """The subject the session id belongs to (closed, or holding live working values), past
        the caller's subject binding (migration 0032); None for an unused id. For the services'
        decisions only: never shown to a caller."""
        row = self.conn.execute("SELECT memory_session_subject(%s) AS subject", (session_id,)).fetchone()
        return row["subject"] if row else None

    _SESSION_FIELDS = frozenset(
        {"status", "attempts", "outcome", "memory_ids", "failure_reason", "extractor"}
    )

    def update_session(self, session_id: str, **fields: Any) -> None:
        unknown = set(fields) - self._SESSION_FIELDS
        if unknown:
            raise ValueError(f"not updatable: {sorted(unknown)}")
        params = {k: (Jsonb(v) if k == "outcome" else v) for k, v in fields.items()}
        sets = ", ".join(f"{k} = %({k})s" for k in params)
        self.conn.execute(
            f"UPDATE sessions SET {sets}, updated_at = now() WHERE tenant_id = %(t)s AND session_id = %(sid)s",
            {**params, "t": self.tenant_id, "sid": session_id},
        )

    def unfinished_sessions(self, updated_before: datetime, limit: int) -> list[UnfinishedSession]:
        """Sessions queued or processing that have not changed since `updated_before`, oldest
        first, locked; a session another transaction holds (a worker) is skipped."""
        rows = self.conn.execute(
            """SELECT session_id, status, attempts FROM sessions
                WHERE tenant_id = %s AND status IN ('queued', 'processing') AND updated_at < %s
                ORDER BY updated_at LIMIT %s FOR UPDATE SKIP LOCKED""",
            (self.tenant_id, updated_before, limit),
        ).fetchall()
        return cast(list[UnfinishedSession], rows)

    # -- extraction reports -----------------------------------------------------
    def save_extraction_report(
        self, session_id: str, subject_id: str, statements: list[dict[str, Any]]
    ) -> None:
        self.conn.execute(
            """INSERT INTO extraction_reports (tenant_id, session_id, subject_id, statements)
               VALUES (%s, %s, %s, %s)
               ON CONFLICT (tenant_id, session_id) DO UPDATE SET statements = EXCLUDED.statements,
                                                              created_at = now()""",
            (self.tenant_id, session_id, subject_id, Jsonb(statements)),
        )

    def extraction_report(self, session_id: str) -> list[dict[str, Any]] | None:
        row = self.conn.execute(
            "SELECT statements FROM extraction_reports WHERE tenant_id = %s AND session_id = %s",
            (self.tenant_id, session_id),
        ).fetchone()
        return cast(list[dict[str, Any]], row["statements"]) if row else None

    # -- outbox ----------------------------------------------------------------
    def record_outbox(
        self, dedupe_key: str, kind: str, payload: dict[str, Any], *, rearm: bool = False
    ) -> None:
        """Record a message to send once this transaction commits (one row per key). `rearm`: a
        message already sent is made pending again. Registers the tenant for the relay sweep."""
        self.conn.execute(
            "INSERT INTO tenants (tenant_id) VALUES (%s) ON CONFLICT DO NOTHING", (self.tenant_id,)
        )
        on_conflict = "DO UPDATE SET sent_at = NULL, payload = EXCLUDED.payload" if rearm else "DO NOTHING"
        self.conn.execute(
            f"""INSERT INTO outbox (tenant_id, dedupe_key, kind, payload) VALUES (%s, %s, %s, %s)
                ON CONFLICT (tenant_id, dedupe_key) {on_conflict}""",
            (self.tenant_id, dedupe_key, kind, Jsonb(payload)),
        )

    def outbox_message(self, dedupe_key: str, *, claim: bool = False) -> OutboxRow | None:
        """The outbox row of `dedupe_key`. `claim`: only if still pending, locked for sending; None
        when another transaction is sending it."""
        claiming = " AND sent_at IS NULL FOR UPDATE SKIP LOCKED" if claim else ""
        row = self.conn.execute(
            f"SELECT * FROM outbox WHERE tenant_id = %s AND dedupe_key = %s{claiming}",
            (self.tenant_id, dedupe_key),
        ).fetchone()
        return cast(OutboxRow | None, row)

    def pending_outbox(self, created_before: datetime, limit: int) -> list[OutboxRow]:
        """Pending messages recorded before `created_before`, oldest first, locked for sending;
        those another transaction is sending are skipped."""
        rows = self.conn.execute(
            """SELECT * FROM outbox WHERE tenant_id = %s AND sent_at IS NULL AND created_at < %s
                ORDER BY created_at LIMIT %s FOR UPDATE SKIP LOCKED""",
            (self.tenant_id, created_before, limit),
        ).fetchall()
        return cast(list[OutboxRow], rows)

    def trim_outbox(self, sent_before: datetime, limit: int) -> int:
        """Delete up to `limit` messages delivered before `sent_before`, oldest first, unless their
        session is still queued or processing (a repeated close of it must find its row sent, not
        send it again). Returns how many were deleted."""
        cur = self.conn.execute(
            """DELETE FROM outbox WHERE tenant_id = %s AND dedupe_key IN (
                   SELECT o.dedupe_key FROM outbox o
                    WHERE o.tenant_id = %s AND o.sent_at IS NOT NULL AND o.sent_at < %s
                      AND NOT EXISTS (
                          SELECT 1 FROM sessions x
                           WHERE x.tenant_id = o.tenant_id AND x.session_id = o.payload->>'session_id'
                             AND x.status IN ('queued', 'processing'))
                    ORDER BY o.sent_at LIMIT %s
                      FOR UPDATE SKIP LOCKED)""",
            (self.tenant_id, self.tenant_id, sent_before, limit),
        )
        return cur.rowcount

    def mark_outbox(self, dedupe_key: str, *, sent: bool, error: str | None = None) -> None:
        """Record one send: sent, or failed with its error class (the message stays pending)."""
        self.conn.execute(
            """UPDATE outbox SET attempts = attempts + 1, last_error = %s,
                      sent_at = CASE WHEN %s THEN now() ELSE NULL END
                WHERE tenant_id = %s AND dedupe_key = %s""",
            (error, sent, self.tenant_id, dedupe_key),
        )
