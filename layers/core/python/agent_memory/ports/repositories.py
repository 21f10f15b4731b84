"""Narrow storage ports: the parts of one tenant transaction that a service actually calls.

`TenantSession` (ports/store.py) is all of them together, and the PostgreSQL session implements
it. A service that needs only some of them can say so, and an in-memory fake can implement just
those (the write gateway and the review service need `AdmissionRepository`, `RecordRepository`,
`AuditLog`, `IdempotencyRepository` and `PolicyRepository`). Every method here returns a typed
value (a record, an event, a reply), never an untyped row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from agent_memory.domain.decision import AdmissionContext
from agent_memory.domain.records import AuditEvent, MemoryRecord


@dataclass(frozen=True)
class NewEvent:
    """An audit event to append to the tenant's chain (`AuditLog.append_events`)."""

    event_type: str
    actor: str
    memory_id: str | None = None
    subject_id: str | None = None
    reason: str | None = None
    payload: dict[str, Any] | None = None


@dataclass(frozen=True)
class IdempotentReply:
    """The reply saved under an idempotency key: what its caller was answered."""

    fingerprint: str
    response: dict[str, Any]
    status: int


class AdmissionRepository(Protocol):
    """What admission reads, under the locks it takes (the write gateway, steps 4-6)."""

    def lock_subject(self, subject_id: str) -> None:
        """Shared until commit: an erasure takes it exclusively, so no write slips past it."""
        ...

    def lock_slot(self, subject_id: str, slot: str) -> None:
        """Exclusive until commit: writers of one slot are serialized (no lost supersession)."""
        ...

    def admission_context(
        self,
        *,
        subject_id: str,
        memory_type: str,
        slot: str | None,
        content_hash: str,
        lineage_keys: Sequence[str],
    ) -> AdmissionContext:
        """The slot's active record, the oldest live record with this content (a commitment
        closed is not live), whether a tombstone refuses it and whether the subject is being
        erased; `near_duplicate` left unset."""
        ...

    def near_duplicate(
        self,
        *,
        subject_id: str,
        memory_type: str,
        slot: str | None,
        embedding: np.ndarray,
        min_similarity: float,
    ) -> MemoryRecord | None:
        """The nearest served or reviewed record of the same subject, type and slot, when its
        cosine similarity is at least `min_similarity`."""
        ...


class RecordRepository(Protocol):
    """Memory records: written as versions, superseded, reviewed, marked contested."""

    def insert_record(self, record: MemoryRecord, embedding: np.ndarray | None) -> None:
        """A new record; a second active record of one slot is refused (`RetryableConflict`)."""
        ...

    def insert_sentences(self, memory_id: str, subject_id: str, embeddings: np.ndarray) -> None: ...

    def supersede(self, old_id: str, new_id: str, at: datetime) -> None:
        """Close the active version `old_id` (nothing happens if it is no longer active)."""
        ...

    def update_status(self, memory_id: str, status: str, **fields: Any) -> MemoryRecord:
        """Change a record's status and some review fields; the record as it now is."""
        ...

    def get_record(self, memory_id: str, *, for_update: bool = False) -> MemoryRecord | None: ...
    def active_for_slot(self, subject_id: str, slot: str) -> MemoryRecord | None: ...
    def active_for_slots(self, subject_id: str, slots: Sequence[str]) -> list[MemoryRecord]:
        """The active records of a subject in any of `slots` (a commercial family's other slots)."""
        ...

    def slot_history(self, subject_id: str, slot: str) -> list[MemoryRecord]:
        """Every version of a slot, oldest first."""
        ...

    def list_subject(
        self,
        subject_id: str,
        *,
        statuses: Sequence[str],
        types: Sequence[str] | None,
        max_sensitivity_rank: int,
        before: tuple[datetime, str] | None,
        limit: int,
    ) -> list[MemoryRecord]:
        """A subject's records, newest first, from a (created_at, id) cursor."""
        ...

    def review_queue(
        self, *, limit: int, before: tuple[datetime, str] | None, max_sensitivity_rank: int
    ) -> list[MemoryRecord]: ...
    def records_above_clearance(self, memory_ids: set[str], max_sensitivity_rank: int) -> set[str]: ...
    def similar_pending(
        self, memory_ids: Sequence[str], min_similarity: float, max_sensitivity_rank: int
    ) -> dict[str, list[tuple[str, datetime, str]]]: ...

    # the `contested` marker (the product requirements)
    def mark_contested(self, memory_ids: Sequence[str], confidence_factor: float = 1.0) -> None: ...
    def clear_contested(self, memory_ids: Sequence[str]) -> None: ...
    def settle_slot_contest(self, subject_id: str, slot: str) -> bool:
        """The slot's active record keeps the marker exactly while a contested record of the slot
        still waits; whether it does."""
        ...


class AuditLog(Protocol):
    """The tenant's append-only, hash-chained audit log (domain/audit.py verifies it)."""

    def append_events(self, events: Sequence[NewEvent]) -> list[AuditEvent]:
        """Append in order: each event's `prev_hash` is its predecessor's `hash`, the first's the
        genesis hash, and `hash = chain_hash(prev_hash, event_hash_fields(event))`."""
        ...

    def audit_events(
        self,
        *,
        subject_id: str | None,
        memory_id: str | None,
        since: datetime | None,
        after_seq: int | None,
        limit: int,
    ) -> list[AuditEvent]:
        """Events in sequence order, filtered."""
        ...

    def last_event_seq(self) -> int:
        """The newest sequence number (0 before the first event)."""
        ...


class IdempotencyRepository(Protocol):
    """Saved replies: a key answers its first request's reply again."""

    def idempotent_reply(self, key: str) -> IdempotentReply | None: ...
    def save_idempotent_reply(
        self, key: str, reply: IdempotentReply, memory_id: str | None, subject_id: str | None = None
    ) -> None:
        """Saving a key twice is refused (`RetryableConflict`): the racing writer replays."""
        ...


class PolicyRepository(Protocol):
    """The tenant's stored policy profile and its overrides."""

    def tenant_policy(self, *, for_update: bool = False) -> tuple[str, dict[str, Any]] | None: ...
    def set_tenant_policy(self, profile: str, overrides: dict[str, Any]) -> None: ...


class TombstoneRepository(Protocol):
    """What refuses a forgotten memory's return (admission reads it back as `tombstoned`)."""

    def tombstone_memory(
        self,
        *,
        memory_id: str,
        subject_id: str,
        memory_type: str,
        slot: str | None,
        content_hashes: Sequence[str],
        lineage_keys: Sequence[str],
    ) -> int: ...


class WriteRepositories(
    AdmissionRepository, RecordRepository, AuditLog, IdempotencyRepository, PolicyRepository, Protocol
):
    """Everything the write gateway's single writes and the review service call in a transaction."""

    tenant_id: str
