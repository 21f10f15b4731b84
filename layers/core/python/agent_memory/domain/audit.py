"""Verification of the hash-chained audit log."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC

from agent_memory.domain.hashing import GENESIS_HASH, chain_hash
from agent_memory.domain.records import AuditEvent


@dataclass(frozen=True)
class ChainReport:
    tenant_id: str
    events: int
    ok: bool
    broken_at_seq: int | None = None
    problem: str | None = None


def event_hash_fields(e: AuditEvent) -> dict[str, object]:
    return {
        "tenant_id": e.tenant_id,
        "seq": e.seq,
        "id": e.id,
        "event_type": e.event_type,
        "memory_id": e.memory_id,
        "subject_id": e.subject_id,
        "actor": e.actor,
        "reason": e.reason,
        "payload": e.payload,
        "created_at": e.created_at.astimezone(UTC).isoformat(),
    }


def verify_chain(tenant_id: str, events: Iterable[AuditEvent]) -> ChainReport:
    """Recompute every link: any edited, inserted or deleted row breaks it."""
    prev, expected_seq, n = GENESIS_HASH, 1, 0
    for e in events:
        n += 1
        if e.seq != expected_seq:
            return ChainReport(tenant_id, n, False, e.seq, f"sequence gap: expected {expected_seq}")
        if e.prev_hash != prev:
            return ChainReport(tenant_id, n, False, e.seq, "prev_hash does not match the previous event")
        if chain_hash(prev, event_hash_fields(e)) != e.hash:
            return ChainReport(tenant_id, n, False, e.seq, "hash does not match the event's fields")
        prev, expected_seq = e.hash, expected_seq + 1
    return ChainReport(tenant_id, n, True)
