"""The operating metrics the product requirements name ("Observability and quality"), for one tenant, read from
the records, the audit chain and the erasure requests: counts and durations only, never content."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import DictRow


class StatsQueries:
    conn: psycopg.Connection[DictRow]
    tenant_id: str

    def operating_stats(self, since: datetime) -> dict[str, Any]:
        """Storage, state, lifecycle lag and what happened since `since` (events by type, rejections
        by reason, retrievals and their stage timings, erasures and how long they took)."""
        t = self.tenant_id
        records = self.conn.execute(
            """SELECT status, count(*) AS n, coalesce(sum(octet_length(content)), 0) AS bytes,
                      count(*) FILTER (WHERE needs_revalidation) AS due
                 FROM memory_records WHERE tenant_id = %s GROUP BY status""",
            (t,),
        ).fetchall()
        lag = self.conn.execute(
            """SELECT extract(epoch FROM now() - min(expires_at)) AS seconds, count(*) AS n
                 FROM memory_records
                WHERE tenant_id = %s AND expires_at < now()
                  AND status IN ('active', 'pending_approval', 'contested', 'quarantined')""",
            (t,),
        ).fetchone()
        events = self.conn.execute(
            """SELECT event_type, count(*) AS n FROM memory_events
                WHERE tenant_id = %s AND created_at >= %s GROUP BY event_type""",
            (t, since),
        ).fetchall()
        rejections = self.conn.execute(
            """SELECT coalesce(reason, 'unspecified') AS reason, count(*) AS n FROM memory_events
                WHERE tenant_id = %s AND created_at >= %s AND event_type = 'memory_rejected'
                GROUP BY 1""",
            (t, since),
        ).fetchall()
        # Retrievals: the sealed ones in the chain and those still waiting to be sealed.
        retrievals = self.conn.execute(
            """SELECT payload->'excluded' AS excluded, payload->'stage_ms' AS stage_ms FROM memory_events
                WHERE tenant_id = %(t)s AND created_at >= %(s)s AND event_type = 'memory_retrieved'
               UNION ALL
               SELECT payload->'excluded', payload->'stage_ms' FROM retrieval_log
                WHERE tenant_id = %(t)s AND created_at >= %(s)s""",
            {"t": t, "s": since},
        ).fetchall()
        erasures = self.conn.execute(
            """SELECT status, extract(epoch FROM completed_at - created_at) AS seconds,
                      (status = 'running' AND deadline < now()) AS overdue
                 FROM erasure_requests WHERE tenant_id = %s AND (created_at >= %s OR status = 'running')""",
            (t, since),
        ).fetchall()
        return {
            "records": [dict(r) for r in records],
            "lifecycle_lag": dict(lag) if lag else {"seconds": None, "n": 0},
            "events": {r["event_type"]: int(r["n"]) for r in events},
            "rejections": {r["reason"]: int(r["n"]) for r in rejections},
            "retrievals": [dict(r) for r in retrievals],
            "erasures": [dict(r) for r in erasures],
        }
