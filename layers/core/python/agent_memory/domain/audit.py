"""Verification of the hash-chained audit log."""

from __future__ import annotations

import hashlib
import secrets
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


# Free text a person typed into an audited action (a delete or hold reason, an evidence reference,
# an erasure request reference) is personal data the chain must not keep: it is stored beside the
# chain and erased with its subject, and the chained payload holds a digest of it salted with a
# random value stored beside the text (gone with it: the digest then matches no guess).
FREE_TEXT_KEYS = ("reason", "evidence_ref", "request_reference", "note")
SIDE_TEXT_DIGEST = "side_text_sha256"
# What a legal hold still set on an erased subject says in place of the reason it was given.
HOLD_REASON_ERASED = "erased_with_subject"


@dataclass(frozen=True)
class SideText:
    key: str
    text: str
    salt: str


def side_text_digest(text: str, salt: str) -> str:
    return hashlib.sha256(f"{salt}\n{text}".encode()).hexdigest()


def split_free_text(payload: dict[str, Any] | None) -> tuple[dict[str, Any] | None, list[SideText]]:
    """The payload as the chain keeps it (each non-empty free-text value replaced by its salted
    digest), and the texts to store beside the chain."""
    if not payload:
        return payload, []
    kept = dict(payload)
    texts: list[SideText] = []
    for key in FREE_TEXT_KEYS:
        value = kept.get(key)
        if isinstance(value, str) and value:
            salt = secrets.token_hex(16)
            texts.append(SideText(key, value, salt))
            kept[key] = {SIDE_TEXT_DIGEST: side_text_digest(value, salt)}
    return kept, texts


def erasure_reference_digest(subject_id: str, request_reference: str) -> str:
    """What an erasure keeps of its request reference once verified: enough to answer the same
    request again with its first erasure, and for the requester to match the receipt."""
    return hashlib.sha256(f"{subject_id}\x1f{request_reference}".encode()).hexdigest()


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
