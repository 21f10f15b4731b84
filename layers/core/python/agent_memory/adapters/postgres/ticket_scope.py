"""Ticket-scoped memory (the product requirements' task memory): the nightly run's queries. Mixed into
PostgresTenantSession."""

from __future__ import annotations

from datetime import datetime

import psycopg
from psycopg.rows import DictRow


class TicketScopeQueries:
    conn: psycopg.Connection[DictRow]
    tenant_id: str

    def open_ticket_scopes(
        self, limit: int, after: tuple[str, str] = ("", ""), *, unbounded_after: datetime
    ) -> list[dict[str, str]]:
        """(subject, ticket) pairs with active ticket-scoped memories that may outlive
        `unbounded_after` (no expiry, or a later one), in key order after `after` (a keyset
        cursor: each batch starts where the last ended)."""
        return list(
            self.conn.execute(
                """SELECT DISTINCT subject_id, ticket_id FROM memory_records
                    WHERE tenant_id = %(t)s AND status = 'active' AND scope = 'ticket'
                      AND ticket_id IS NOT NULL AND (subject_id, ticket_id) > (%(as)s, %(at)s)
                      AND (expires_at IS NULL OR expires_at > %(u)s)
                    ORDER BY subject_id, ticket_id LIMIT %(lim)s""",
                {"t": self.tenant_id, "as": after[0], "at": after[1], "lim": limit, "u": unbounded_after},
            ).fetchall()
        )

    def bound_ticket_memories(self, subject_id: str, ticket_id: str, expires_at: datetime) -> list[str]:
        """The ticket resolved: its active memories expire at `expires_at` at the latest (an earlier
        expiry stands). Returns the ids whose expiry this moved."""
        rows = self.conn.execute(
            """UPDATE memory_records SET expires_at = %(e)s
                WHERE tenant_id = %(t)s AND subject_id = %(s)s AND ticket_id = %(k)s
                  AND scope = 'ticket' AND status = 'active'
                  AND (expires_at IS NULL OR expires_at > %(e)s)
            RETURNING id""",
            {"t": self.tenant_id, "s": subject_id, "k": ticket_id, "e": expires_at},
        ).fetchall()
        return [r["id"] for r in rows]
