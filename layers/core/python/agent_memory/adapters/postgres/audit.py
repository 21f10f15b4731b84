"""SQL of the tenant's hash-chained audit log: appending under the chain head's lock, reading
events, and the clearance check that redacts events about records above a caller's clearance.

Mixed into the tenant session (`store.PostgresTenantSession`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime

import psycopg
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from agent_memory.domain.audit import HOLD_REASON_ERASED, SideText, chain_events, split_free_text
from agent_memory.domain.hashing import GENESIS_HASH
from agent_memory.domain.records import AuditEvent, utcnow
from agent_memory.ports.store import NewEvent


class AuditQueries:
    conn: psycopg.Connection[DictRow]
    tenant_id: str

    def last_event_seq(self) -> int:
        """The tenant's newest audit sequence number (0 before the first event)."""
        row = self.conn.execute(
            "SELECT coalesce(max(seq), 0) AS seq FROM memory_events WHERE tenant_id = %s", (self.tenant_id,)
        ).fetchone()
        return int(row["seq"]) if row else 0

    def append_events(self, events: Sequence[NewEvent]) -> list[AuditEvent]:
        """Append events to the tenant's hash chain (serialized by the head row lock)."""
        if not events:
            return []
        seq, prev = self._chain_head()
        chained: list[NewEvent] = []
        side: list[list[SideText]] = []
        for ev in events:
            payload, texts = split_free_text(ev.payload)
            chained.append(dataclasses.replace(ev, payload=payload))
            side.append(texts)
        out = chain_events(self.tenant_id, chained, after_seq=seq, after_hash=prev, at=utcnow())
        self._insert_events(out)
        self._insert_side_texts(out, side)
        self.conn.execute(
            "UPDATE audit_chain_heads SET seq = %s, hash = %s WHERE tenant_id = %s",
            (out[-1].seq, out[-1].hash, self.tenant_id),
        )
        return out

    def _chain_head(self) -> tuple[int, str]:
        """The tenant's chain head, locked (the first event of a tenant creates it)."""
        head = self.conn.execute(
            "SELECT seq, hash FROM audit_chain_heads WHERE tenant_id = %s FOR UPDATE", (self.tenant_id,)
        ).fetchone()
        if head is None:
            self.conn.execute(
                "INSERT INTO tenants (tenant_id) VALUES (%s) ON CONFLICT DO NOTHING", (self.tenant_id,)
            )
            self.conn.execute(
                "INSERT INTO audit_chain_heads (tenant_id, seq, hash) VALUES (%s, 0, %s) ON CONFLICT DO NOTHING",
                (self.tenant_id, GENESIS_HASH),
            )
            head = self.conn.execute(
                "SELECT seq, hash FROM audit_chain_heads WHERE tenant_id = %s FOR UPDATE", (self.tenant_id,)
            ).fetchone()
        assert head is not None
        return int(head["seq"]), str(head["hash"])

    def _insert_events(self, events: list[AuditEvent]) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(
                """INSERT INTO memory_events (tenant_id, seq, id, event_type, memory_id, subject_id, actor, reason,
                                              payload, created_at, prev_hash, hash)
                   VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
                [
                    (
                        e.tenant_id,
                        e.seq,
                        e.id,
                        e.event_type,
                        e.memory_id,
                        e.subject_id,
                        e.actor,
                        e.reason,
                        Jsonb(e.payload),
                        e.created_at,
                        e.prev_hash,
                        e.hash,
                    )
                    for e in events
                ],
            )

    def _insert_side_texts(self, events: list[AuditEvent], side: list[list[SideText]]) -> None:
        rows = [
            (self.tenant_id, e.id, t.key, e.subject_id, t.text, t.salt)
            for e, texts in zip(events, side, strict=True)
            for t in texts
        ]
        if rows:
            with self.conn.cursor() as cur:
                cur.executemany(
                    """INSERT INTO audit_free_text (tenant_id, event_id, field, subject_id, text, salt)
                       VALUES (%s, %s, %s, %s, %s, %s)""",
                    rows,
                )

    def purge_subject_free_text(self, subject_id: str) -> int:
        """Erase what people typed about the subject: the free text kept beside the chain for its
        events, and the reason of a legal hold still set on it (the hold itself stays)."""
        side = self.conn.execute(
            "DELETE FROM audit_free_text WHERE tenant_id = %s AND subject_id = %s",
            (self.tenant_id, subject_id),
        ).rowcount
        hold = self.conn.execute(
            "UPDATE subject_holds SET reason = %s WHERE tenant_id = %s AND subject_id = %s AND reason <> %s",
            (HOLD_REASON_ERASED, self.tenant_id, subject_id, HOLD_REASON_ERASED),
        ).rowcount
        return side + hold

    def count_subject_free_text(self, subject_id: str) -> int:
        row = self.conn.execute(
            """SELECT (SELECT count(*) FROM audit_free_text WHERE tenant_id = %(t)s AND subject_id = %(s)s)
                    + (SELECT count(*) FROM subject_holds
                        WHERE tenant_id = %(t)s AND subject_id = %(s)s AND reason <> %(erased)s) AS n""",
            {"t": self.tenant_id, "s": subject_id, "erased": HOLD_REASON_ERASED},
        ).fetchone()
        return int(row["n"]) if row else 0

    def records_above_clearance(self, memory_ids: set[str], max_sensitivity_rank: int) -> set[str]:
        if not memory_ids:
            return set()
        rows = self.conn.execute(
            """SELECT id FROM memory_records
                 WHERE tenant_id = %s AND id = ANY(%s) AND sensitivity_rank > %s""",
            (self.tenant_id, list(memory_ids), max_sensitivity_rank),
        ).fetchall()
        return {r["id"] for r in rows}

    def audit_events(
        self,
        *,
        subject_id: str | None,
        memory_id: str | None,
        since: datetime | None,
        after_seq: int | None,
        limit: int,
    ) -> list[AuditEvent]:
        rows = self.conn.execute(
            """SELECT tenant_id, seq, id, event_type, memory_id, subject_id, actor, reason, payload, created_at,
                      prev_hash, hash
                 FROM memory_events
                WHERE tenant_id = %(t)s
                  AND (%(s)s::text IS NULL OR subject_id = %(s)s)
                  AND (%(m)s::text IS NULL OR memory_id = %(m)s)
                  AND (%(since)s::timestamptz IS NULL OR created_at >= %(since)s)
                  AND seq > %(after)s
                ORDER BY seq LIMIT %(lim)s""",
            {
                "t": self.tenant_id,
                "s": subject_id,
                "m": memory_id,
                "since": since,
                "after": after_seq or 0,
                "lim": limit,
            },
        ).fetchall()
        events = [AuditEvent.model_validate(r) for r in rows]
        if events:
            texts: dict[str, dict[str, str]] = {}
            for t in self.conn.execute(
                "SELECT event_id, field, text FROM audit_free_text WHERE tenant_id = %s AND event_id = ANY(%s)",
                (self.tenant_id, [e.id for e in events]),
            ).fetchall():
                texts.setdefault(t["event_id"], {})[t["field"]] = t["text"]
            for e in events:
                e.free_text = texts.get(e.id)
        return events
