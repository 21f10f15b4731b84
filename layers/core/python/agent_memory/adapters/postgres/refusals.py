"""SQL of the refusal counter (migration 0019): identical refusals written to the audit chain at
most once per window, the ones in between counted.

Mixed into the tenant session.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import psycopg
from psycopg.rows import DictRow


class RefusalQueries:
    conn: psycopg.Connection[DictRow]
    tenant_id: str

    def count_refusal(
        self, *, event_type: str, actor: str, route: str, reason: str, at: datetime, window: timedelta
    ) -> int | None:
        """Count one refusal of this key. Returns how many identical refusals went unwritten
        since the key's last event when this one is due for an event of its own (the first, or
        the first past the window), None when it is only counted. One statement: concurrent
        refusals of one key wait for each other on its row, so exactly one of them is due."""
        row = self.conn.execute(
            """INSERT INTO audit_denial_windows AS w
                      (tenant_id, event_type, actor, route, reason, written_at, suppressed)
               VALUES (%(t)s, %(e)s, %(a)s, %(r)s, %(why)s, %(at)s, 0)
               ON CONFLICT (tenant_id, event_type, actor, route, reason) DO UPDATE
                  SET written_at = CASE WHEN w.written_at <= %(at)s - %(win)s THEN %(at)s ELSE w.written_at END,
                      suppressed = CASE WHEN w.written_at <= %(at)s - %(win)s THEN 0 ELSE w.suppressed + 1 END,
                      carried = CASE WHEN w.written_at <= %(at)s - %(win)s THEN w.suppressed ELSE w.carried END
            RETURNING suppressed = 0 AS due, carried""",
            {
                "t": self.tenant_id,
                "e": event_type,
                "a": actor,
                "r": route,
                "why": reason,
                "at": at,
                "win": window,
            },
        ).fetchone()
        assert row is not None
        return int(row["carried"]) if row["due"] else None
