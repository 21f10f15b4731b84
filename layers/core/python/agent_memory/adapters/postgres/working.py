"""SQL of working memory (migration 0016): one open session's short-lived values.

Mixed into the tenant session. Every read filters `expires_at > statement_timestamp()` itself:
the TTL holds at every read, whether or not the nightly sweep has deleted the row yet.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from agent_memory.ports.store import WorkingItem, WorkingSessionState

_LIVE = "expires_at > statement_timestamp()"


class WorkingMemoryQueries:
    conn: psycopg.Connection[DictRow]
    tenant_id: str

    def lock_working_session(self, session_id: str, subject_id: str | None = None) -> None:
        """Serialize the writers of one session's working memory until commit (its bounds, and its
        close), and, with the subject, hold the subject's shared lock so an erasure (exclusive)
        cannot interleave with the write."""
        if subject_id is None:
            self.conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                (f"working\x1f{self.tenant_id}\x1f{session_id}",),
            )
            return
        self.conn.execute(
            "SELECT pg_advisory_xact_lock_shared(hashtextextended(%s, 0)),"
            " pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (f"subject\x1f{self.tenant_id}\x1f{subject_id}", f"working\x1f{self.tenant_id}\x1f{session_id}"),
        )

    def working_session_state(self, session_id: str, subject_id: str, key: str) -> WorkingSessionState:
        """What a write to `key` must know, in one statement, after the session's expired rows are
        deleted: whether the session is closed, whether the subject is being erased, and what the session holds besides `key`."""
        row = self.conn.execute(
            f"""
            WITH swept AS (
                DELETE FROM working_memory
                 WHERE tenant_id = %(t)s AND session_id = %(sid)s AND NOT ({_LIVE})
                RETURNING 1
            ), live AS (
                SELECT subject_id, key, bytes FROM working_memory
                 WHERE tenant_id = %(t)s AND session_id = %(sid)s AND {_LIVE}
            )
            SELECT
              EXISTS (SELECT 1 FROM sessions WHERE tenant_id = %(t)s AND session_id = %(sid)s) AS closed,
              EXISTS (SELECT 1 FROM erasure_requests
                       WHERE tenant_id = %(t)s AND subject_id = %(s)s AND status = 'running') AS erasing,
              (SELECT count(*) FROM live WHERE key <> %(k)s) AS items,
              (SELECT coalesce(sum(bytes), 0) FROM live WHERE key <> %(k)s) AS bytes,
              (SELECT count(*) FROM swept) AS swept
            """,
            {"t": self.tenant_id, "sid": session_id, "s": subject_id, "k": key},
        ).fetchone()
        assert row is not None
        return WorkingSessionState(
            closed=bool(row["closed"]),
            erasing=bool(row["erasing"]),
            items=int(row["items"]),
            bytes=int(row["bytes"]),
        )

    def put_working_item(
        self,
        *,
        session_id: str,
        subject_id: str,
        key: str,
        value: Any,
        size: int,
        ttl_seconds: int,
        actor: str,
    ) -> WorkingItem:
        """Insert or replace one value; it expires `ttl_seconds` after now by the database's clock
        (the clock every read compares with). Registers the tenant for the nightly sweep."""
        self.conn.execute(
            "INSERT INTO tenants (tenant_id) VALUES (%s) ON CONFLICT DO NOTHING", (self.tenant_id,)
        )
        row = self.conn.execute(
            """
            INSERT INTO working_memory
                   (tenant_id, session_id, key, subject_id, value, bytes, written_by, expires_at)
            VALUES (%(t)s, %(sid)s, %(k)s, %(s)s, %(v)s, %(b)s, %(a)s,
                    statement_timestamp() + make_interval(secs => %(ttl)s))
            ON CONFLICT (tenant_id, session_id, key) DO UPDATE
               SET subject_id = EXCLUDED.subject_id, value = EXCLUDED.value, bytes = EXCLUDED.bytes,
                   written_by = EXCLUDED.written_by, expires_at = EXCLUDED.expires_at,
                   updated_at = statement_timestamp()
            RETURNING key, subject_id, value, expires_at
            """,
            {
                "t": self.tenant_id,
                "sid": session_id,
                "k": key,
                "s": subject_id,
                "v": Jsonb(value),
                "b": size,
                "a": actor,
                "ttl": ttl_seconds,
            },
        ).fetchone()
        assert row is not None
        return WorkingItem(row["key"], row["value"], row["expires_at"], row["subject_id"])

    def working_items(self, session_id: str) -> list[WorkingItem]:
        """The session's live values, by key."""
        rows = self.conn.execute(
            f"""SELECT key, subject_id, value, expires_at FROM working_memory
                 WHERE tenant_id = %s AND session_id = %s AND {_LIVE} ORDER BY key""",
            (self.tenant_id, session_id),
        ).fetchall()
        return [WorkingItem(r["key"], r["value"], r["expires_at"], r["subject_id"]) for r in rows]

    def live_working_items(self, *, session_id: str, subject_id: str) -> list[WorkingItem]:
        """The session's live values for the subject, newest first, as one statement that scopes
        the tenant itself (migration 0016): the retrieval read path calls it outside a transaction."""
        rows = self.conn.execute(
            "SELECT key, value_json, expires_at FROM memory_working_items(%s, %s, %s)",
            (self.tenant_id, session_id, subject_id),
        ).fetchall()
        return [WorkingItem(r["key"], json.loads(r["value_json"]), r["expires_at"], subject_id) for r in rows]

    def delete_working_item(self, session_id: str, key: str) -> WorkingItem | None:
        """Delete one value; the row as it was (expired or not), or None when there was none."""
        row = self.conn.execute(
            """DELETE FROM working_memory WHERE tenant_id = %s AND session_id = %s AND key = %s
               RETURNING key, subject_id, expires_at, (expires_at > statement_timestamp()) AS live""",
            (self.tenant_id, session_id, key),
        ).fetchone()
        if row is None:
            return None
        return WorkingItem(row["key"], None, row["expires_at"], row["subject_id"], live=bool(row["live"]))

    def clear_working_session(self, session_id: str) -> list[WorkingItem]:
        """Delete every value of the session (its close), under the session's lock, so a write
        racing the close either lands first and is cleared, or finds the session closed."""
        self.lock_working_session(session_id)
        rows = self.conn.execute(
            """DELETE FROM working_memory WHERE tenant_id = %s AND session_id = %s
               RETURNING key, subject_id, expires_at""",
            (self.tenant_id, session_id),
        ).fetchall()
        return [WorkingItem(r["key"], None, r["expires_at"], r["subject_id"]) for r in rows]

    def purge_subject_working(self, subject_id: str) -> int:
        """Erasure: every row of the subject, live or expired."""
        rows = self.conn.execute(
            "DELETE FROM working_memory WHERE tenant_id = %s AND subject_id = %s RETURNING 1",
            (self.tenant_id, subject_id),
        ).fetchall()
        return len(rows)

    def subject_working_items(self, subject_id: str) -> list[dict[str, Any]]:
        """The subject's live values in every session (the subject's export)."""
        return self.conn.execute(
            f"""SELECT session_id, key, value, expires_at FROM working_memory
                 WHERE tenant_id = %s AND subject_id = %s AND {_LIVE} ORDER BY session_id, key""",
            (self.tenant_id, subject_id),
        ).fetchall()

    def count_subject_working(self, subject_id: str) -> int:
        """Erasure's verification: rows of the subject left, live or expired."""
        row = self.conn.execute(
            "SELECT count(*) AS n FROM working_memory WHERE tenant_id = %s AND subject_id = %s",
            (self.tenant_id, subject_id),
        ).fetchone()
        return int(row["n"]) if row else 0

    def sweep_expired_working(self, limit: int) -> int:
        """The nightly sweep: delete up to `limit` expired rows (reads never return them anyway)."""
        rows = self.conn.execute(
            f"""DELETE FROM working_memory w USING (
                    SELECT session_id, key FROM working_memory
                     WHERE tenant_id = %(t)s AND NOT ({_LIVE})
                     ORDER BY expires_at LIMIT %(n)s FOR UPDATE SKIP LOCKED) doomed
                 WHERE w.tenant_id = %(t)s AND w.session_id = doomed.session_id AND w.key = doomed.key
                RETURNING 1""",
            {"t": self.tenant_id, "n": limit},
        ).fetchall()
        return len(rows)

    def count_expired_working(self) -> int:
        row = self.conn.execute(
            f"SELECT count(*) AS n FROM working_memory WHERE tenant_id = %s AND NOT ({_LIVE})",
            (self.tenant_id,),
        ).fetchone()
        return int(row["n"]) if row else 0
