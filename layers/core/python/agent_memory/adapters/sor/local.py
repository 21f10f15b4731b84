"""The local system of record: tables in the same database (`memory sor set`)."""

from __future__ import annotations

from datetime import UTC, datetime

from agent_memory.adapters.postgres.database import Database
from agent_memory.adapters.sor.cache import TtlCache
from agent_memory.ports.system_of_record import LiveValue, TicketState


class LocalSystemOfRecord:
    name = "local-table"

    def __init__(self, db: Database, ttl_seconds: float = 0.0) -> None:
        self.db = db
        self.cache: TtlCache[tuple[str, str, str], object] = TtlCache(ttl_seconds)

    def account_values(self, tenant_id: str, subject_id: str) -> dict[str, LiveValue]:
        def load() -> dict[str, LiveValue]:
            read_at = datetime.now(UTC)
            with self.db.tenant_transaction(tenant_id) as conn:
                rows = conn.execute(
                    "SELECT field, value, as_of FROM sor_values WHERE tenant_id = %s AND subject_id = %s",
                    (tenant_id, subject_id),
                ).fetchall()
            return {r["field"]: LiveValue(r["field"], r["value"], r["as_of"], read_at) for r in rows}

        return self.cache.get_or_load(("acct", tenant_id, subject_id), load)  # type: ignore[return-value]

    def ticket(self, tenant_id: str, subject_id: str, ticket_id: str) -> TicketState | None:
        def load() -> TicketState | None:
            with self.db.tenant_transaction(tenant_id) as conn:
                r = conn.execute(
                    "SELECT ticket_id, status, priority, owner, updated_at FROM sor_tickets"
                    " WHERE tenant_id = %s AND ticket_id = %s AND subject_id = %s",
                    (tenant_id, ticket_id, subject_id),
                ).fetchone()
            return TicketState(**r) if r else None

        return self.cache.get_or_load(("ticket", tenant_id, f"{subject_id}\x00{ticket_id}"), load)  # type: ignore[return-value]

    def set_values(self, tenant_id: str, subject_id: str, values: dict[str, object]) -> None:
        from psycopg.types.json import Jsonb

        with self.db.tenant_transaction(tenant_id) as conn:
            for field, value in values.items():
                conn.execute(
                    """INSERT INTO sor_values (tenant_id, subject_id, field, value, as_of) VALUES (%s, %s, %s, %s, now())
                       ON CONFLICT (tenant_id, subject_id, field) DO UPDATE SET value = EXCLUDED.value, as_of = now()""",
                    (tenant_id, subject_id, field, Jsonb(value)),
                )
        self.cache.invalidate(lambda k: k[1] == tenant_id)

    def set_ticket(self, tenant_id: str, ticket: TicketState, subject_id: str) -> None:
        with self.db.tenant_transaction(tenant_id) as conn:
            conn.execute(
                """INSERT INTO sor_tickets (tenant_id, ticket_id, subject_id, status, priority, owner, updated_at)
                   VALUES (%s, %s, %s, %s, %s, %s, %s)
                   ON CONFLICT (tenant_id, ticket_id) DO UPDATE SET status = EXCLUDED.status,
                     priority = EXCLUDED.priority, owner = EXCLUDED.owner, updated_at = EXCLUDED.updated_at""",
                (
                    tenant_id,
                    ticket.ticket_id,
                    subject_id,
                    ticket.status,
                    ticket.priority,
                    ticket.owner,
                    ticket.updated_at,
                ),
            )
        self.cache.invalidate(lambda k: k[1] == tenant_id)
