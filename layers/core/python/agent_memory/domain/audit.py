"""Verification of the hash-chained audit log."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from agent_memory.domain.hashing import GENESIS_HASH, chain_hash
from agent_memory.domain.records import AuditEvent, new_id


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


class EventToAppend(Protocol):
    """What a caller says of an event; the chain gives it its place, id, time and hashes."""

    @property
    def event_type(self) -> str: ...
    @property
    def actor(self) -> str: ...
    @property
    def memory_id(self) -> str | None: ...
    @property
    def subject_id(self) -> str | None: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def payload(self) -> dict[str, Any] | None: ...


def chain_events(
    tenant_id: str, events: Sequence[EventToAppend], *, after_seq: int, after_hash: str, at: datetime
) -> list[AuditEvent]:
    """The events as the next links of a tenant's chain whose head is (`after_seq`, `after_hash`):
    the one rule for how an event is numbered and hashed, which `verify_chain` checks."""
    out: list[AuditEvent] = []
    seq, prev = after_seq, after_hash
    for ev in events:
        seq += 1
        event = AuditEvent(
            tenant_id=tenant_id,
            seq=seq,
            id=new_id("evt"),
            event_type=ev.event_type,
            memory_id=ev.memory_id,
            subject_id=ev.subject_id,
            actor=ev.actor,
            reason=ev.reason,
            payload=ev.payload or {},
            created_at=at,
            prev_hash=prev,
            hash="",
        )
        event.hash = chain_hash(prev, event_hash_fields(event))
        out.append(event)
        prev = event.hash
    return out


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
