"""The storage port. One `TenantSession` is one transaction scoped to one tenant:
row-level security sees only that tenant, whatever the query says."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from agent_memory.domain.records import AuditEvent, MemoryRecord


@dataclass(frozen=True)
class NewEvent:
    event_type: str
    actor: str
    memory_id: str | None = None
    subject_id: str | None = None
    reason: str | None = None
    payload: dict[str, Any] | None = None


@dataclass(frozen=True)
class AdmissionContext:
    """What the store knows that admission needs (steps 4-6), found in one query."""

    active: MemoryRecord | None
    duplicate: MemoryRecord | None
    tombstoned: bool
    erasing: bool = False


@dataclass(frozen=True)
class IdempotentReply:
    fingerprint: str
    response: dict[str, Any]
    status: int


class TenantSession(Protocol):
    tenant_id: str

    def lock_slot(self, subject_id: str, slot: str) -> None: ...
    def lock_subject(self, subject_id: str) -> None: ...
    def admission_context(
        self, *, subject_id: str, memory_type: str, slot: str | None, content_hash: str, lineage_keys: Sequence[str]
    ) -> AdmissionContext: ...
    def near_duplicate(
        self, *, subject_id: str, memory_type: str, slot: str | None, embedding: np.ndarray, min_similarity: float
    ) -> MemoryRecord | None: ...
    def insert_record(self, record: MemoryRecord, embedding: np.ndarray | None) -> None: ...
    def supersede(self, old_id: str, new_id: str, at: datetime) -> None: ...
    def update_status(self, memory_id: str, status: str, **fields: Any) -> MemoryRecord: ...
    def get_record(self, memory_id: str, *, for_update: bool = False) -> MemoryRecord | None: ...
    def active_for_slot(self, subject_id: str, slot: str) -> MemoryRecord | None: ...
    def slot_history(self, subject_id: str, slot: str) -> list[MemoryRecord]: ...
    def list_subject(
        self,
        subject_id: str,
        *,
        statuses: Sequence[str],
        types: Sequence[str] | None,
        max_sensitivity_rank: int,
        before: tuple[datetime, str] | None,
        limit: int,
    ) -> list[MemoryRecord]: ...
    def review_queue(self, *, limit: int, before: tuple[datetime, str] | None) -> list[MemoryRecord]: ...
    def append_events(self, events: Sequence[NewEvent]) -> list[AuditEvent]: ...
    def audit_events(
        self, *, subject_id: str | None, memory_id: str | None, since: datetime | None, after_seq: int | None, limit: int
    ) -> list[AuditEvent]: ...
    def idempotent_reply(self, key: str) -> IdempotentReply | None: ...
    def save_idempotent_reply(
        self, key: str, reply: IdempotentReply, memory_id: str | None, subject_id: str | None = None
    ) -> None: ...
    def tenant_policy(self) -> tuple[str, dict[str, Any]] | None: ...
    def set_tenant_policy(self, profile: str, overrides: dict[str, Any]) -> None: ...
    def records_missing_embedding(self, limit: int) -> list[MemoryRecord]: ...
    def set_embedding(self, memory_id: str, embedding: np.ndarray, model: str) -> None: ...


class MemoryStore(Protocol):
    def tenant(self, tenant_id: str) -> AbstractContextManager[TenantSession]: ...
    def ping(self) -> bool: ...
    def tenants(self) -> Iterator[str]: ...


class RetryableConflict(Exception):
    """A concurrent transaction won a race (unique key, serialization); retry the unit of work."""
