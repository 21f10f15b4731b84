"""The storage port. One `TenantSession` is one transaction scoped to one tenant:
row-level security sees only that tenant, whatever the query says."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

import numpy as np

from agent_memory.domain.decision import AdmissionContext
from agent_memory.domain.ranking import CandidateFacts
from agent_memory.domain.records import AuditEvent, MemoryRecord, RetrievedMemory, Source
from agent_memory.ports.repositories import TombstoneRepository, WriteRepositories
from agent_memory.ports.rows import (
    DeletedRecord,
    DuplicateGroup,
    ErasureRow,
    ExpiredRecord,
    HeldRecord,
    NearDuplicatePair,
    ObservationRow,
    OutboxRow,
    OverdueErasure,
    RevalidationFlag,
    SessionRow,
    SessionTranscript,
    SubjectErasureRow,
    SubjectHold,
    SubjectLineage,
    SubjectSessionRow,
    UnfinishedSession,
)


@dataclass(frozen=True)
class NewEvent:
    event_type: str
    actor: str
    memory_id: str | None = None
    subject_id: str | None = None
    reason: str | None = None
    payload: dict[str, Any] | None = None


@dataclass(kw_only=True)
class RetrievalRow:
    """One retrieval candidate as the store found it (similarities exact, within the subject):
    what ranking needs, and what showing it needs, in one snapshot. The JSON columns stay text
    until the candidate is chosen (`memory()`): parsing them for every candidate cost more than
    the rest of the row."""

    facts: CandidateFacts
    similarity: float | None
    lexical: float | None  # ts_rank_cd; None when the store returned the subject's rows unranked
    sentence_similarity: float | None = None
    term_counts: dict[str, int] = field(default_factory=dict)  # query lexeme -> occurrences in the row
    length: int = 0  # the row's length in stemmed tokens (BM25's document length)
    query_lexemes: list[str] | None = None
    content: str
    category: str
    source_json: str
    value_json: str
    expires_at: datetime | None
    embedding: np.ndarray | None
    needs_revalidation: bool = False  # contradicted a live value when last checked
    contested: bool = False  # a lower-authority source contradicts it; a reviewer has not decided yet

    def memory(self) -> RetrievedMemory:
        f = self.facts
        return RetrievedMemory(
            id=f.id,
            type=f.type,
            category=self.category,
            slot=f.slot,
            content=self.content,
            value=json.loads(self.value_json),
            source=Source.model_validate_json(self.source_json),
            authority=f.authority,
            confidence=f.confidence,
            effective_at=f.effective_at,
            expires_at=self.expires_at,
            session_id=f.session_id,
        )


@dataclass(frozen=True)
class WorkingItem:
    """One working-memory value as stored (masked). `value` is None where only the row's identity
    was asked for (a delete, a clear); `live`: unexpired when it was read or deleted."""

    key: str
    value: Any
    expires_at: datetime
    subject_id: str
    live: bool = True


@dataclass(frozen=True)
class WorkingSessionState:
    """What a working-memory write must know about its session (live values only)."""

    closed: bool  # the session was closed: its working memory ended with it
    erasing: bool  # an erasure of the subject is running
    items: int  # live values besides the key being written
    bytes: int  # and their size


@dataclass(frozen=True)
class IdempotentReply:
    fingerprint: str
    response: dict[str, Any]
    status: int


class RetrievalReader(Protocol):
    """The read path's two calls, each one atomic statement (`MemoryStore.reader`)."""

    tenant_id: str

    def retrieval_candidates(
        self,
        *,
        subject_id: str,
        query_embedding: np.ndarray | None,
        query_text: str,
        types: Sequence[str] | None,
        max_sensitivity_rank: int,
        now: datetime,
        per_signal: int,
        ticket_id: str | None = None,
    ) -> list[RetrievalRow]: ...
    def log_retrieval(
        self, *, subject_id: str, actor: str, memory_ids: Sequence[str], payload: dict[str, Any]
    ) -> str: ...
    def live_working_items(self, *, session_id: str, subject_id: str) -> list[WorkingItem]: ...
    def family_independent(self, memory_ids: Sequence[str]) -> set[str]:
        """The records approved as independent of their commercial family's other terms."""
        ...


class TenantSession(RetrievalReader, WriteRepositories, TombstoneRepository, Protocol):
    """One tenant-scoped transaction: everything the services do, the read path's calls (and
    `tenant_id`) included."""

    def lock_slot(self, subject_id: str, slot: str) -> None: ...
    def lock_subject(self, subject_id: str) -> None: ...
    def admission_context(
        self,
        *,
        subject_id: str,
        memory_type: str,
        slot: str | None,
        content_hash: str,
        lineage_keys: Sequence[str],
    ) -> AdmissionContext: ...
    def near_duplicate(
        self,
        *,
        subject_id: str,
        memory_type: str,
        slot: str | None,
        embedding: np.ndarray,
        min_similarity: float,
    ) -> MemoryRecord | None: ...
    def insert_record(self, record: MemoryRecord, embedding: np.ndarray | None) -> None: ...
    def insert_sentences(self, memory_id: str, subject_id: str, embeddings: np.ndarray) -> None: ...
    def supersede(self, old_id: str, new_id: str, at: datetime) -> None: ...
    def update_status(self, memory_id: str, status: str, **fields: Any) -> MemoryRecord: ...
    def get_record(self, memory_id: str, *, for_update: bool = False) -> MemoryRecord | None: ...
    def active_for_slot(self, subject_id: str, slot: str) -> MemoryRecord | None: ...
    def active_for_slots(self, subject_id: str, slots: Sequence[str]) -> list[MemoryRecord]:
        """The active records of a subject in any of `slots` (a commercial family's other slots)."""
        ...

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
    def review_queue(
        self, *, limit: int, before: tuple[datetime, str] | None, max_sensitivity_rank: int
    ) -> list[MemoryRecord]: ...
    def records_above_clearance(self, memory_ids: set[str], max_sensitivity_rank: int) -> set[str]: ...
    def similar_pending(
        self, memory_ids: Sequence[str], min_similarity: float, max_sensitivity_rank: int
    ) -> dict[str, list[tuple[str, datetime, str]]]: ...
    def last_event_seq(self) -> int: ...
    def subject_working_items(self, subject_id: str) -> list[dict[str, Any]]: ...
    def append_events(self, events: Sequence[NewEvent]) -> list[AuditEvent]: ...
    def audit_events(
        self,
        *,
        subject_id: str | None,
        memory_id: str | None,
        since: datetime | None,
        after_seq: int | None,
        limit: int,
    ) -> list[AuditEvent]: ...
    def idempotent_reply(self, key: str) -> IdempotentReply | None: ...
    def save_idempotent_reply(
        self, key: str, reply: IdempotentReply, memory_id: str | None, subject_id: str | None = None
    ) -> None: ...
    def tenant_policy(self, *, for_update: bool = False) -> tuple[str, dict[str, Any]] | None: ...
    def live_memory_counts(self, subject_ids: Sequence[str]) -> dict[str, int]: ...
    def live_memory_usage(self) -> tuple[int, int]: ...
    def set_tenant_policy(self, profile: str, overrides: dict[str, Any]) -> None: ...
    def records_missing_embedding(self, limit: int) -> list[MemoryRecord]: ...
    def set_embedding(self, memory_id: str, embedding: np.ndarray, model: str) -> None: ...

    # retrieval (beyond RetrievalReader's candidates and access event)
    def search_tenant_wide(
        self, *, query_embedding: np.ndarray, max_sensitivity_rank: int, now: datetime, limit: int
    ) -> list[tuple[MemoryRecord, float]]: ...
    def pending_retrieval_logs(self, limit: int) -> list[dict[str, Any]]: ...
    def delete_retrieval_logs(self, ids: Sequence[str]) -> None: ...
    def revalidate(
        self, contradicting: Sequence[str], agreeing: Sequence[str], checked_at: datetime
    ) -> tuple[list[str], list[str]]: ...

    # sessions
    def get_session(self, session_id: str, *, for_update: bool = False) -> SessionRow | None: ...
    def insert_session(self, **fields: Any) -> bool: ...
    def session_subject(self, session_id: str) -> str | None: ...
    def update_session(self, session_id: str, **fields: Any) -> None: ...
    def unfinished_sessions(self, updated_before: datetime, limit: int) -> list[UnfinishedSession]: ...
    def save_extraction_report(
        self, session_id: str, subject_id: str, statements: list[dict[str, Any]]
    ) -> None: ...
    def extraction_report(self, session_id: str) -> list[dict[str, Any]] | None: ...

    # working memory: one open session's short-lived values (every read skips expired ones)
    def lock_working_session(self, session_id: str, subject_id: str | None = None) -> None: ...
    def working_session_state(self, session_id: str, subject_id: str, key: str) -> WorkingSessionState: ...
    def put_working_item(
        self,
        *,
        session_id: str,
        subject_id: str,
        key: str,
        value: Any,
        size: int,
        ttl_seconds: int,
        actor: str,
    ) -> WorkingItem: ...
    def working_items(self, session_id: str) -> list[WorkingItem]: ...
    def delete_working_item(self, session_id: str, key: str) -> WorkingItem | None: ...
    def clear_working_session(self, session_id: str) -> list[WorkingItem]: ...
    def purge_subject_working(self, subject_id: str) -> int: ...
    def count_subject_working(self, subject_id: str) -> int: ...
    def purge_subject_free_text(self, subject_id: str) -> int: ...
    def count_subject_free_text(self, subject_id: str) -> int: ...
    def sweep_expired_working(self, limit: int) -> int: ...
    def count_expired_working(self) -> int: ...

    # outbox: messages recorded with the transaction that makes them true, sent after its commit
    def record_outbox(
        self, dedupe_key: str, kind: str, payload: dict[str, Any], *, rearm: bool = False
    ) -> None: ...
    def outbox_message(self, dedupe_key: str, *, claim: bool = False) -> OutboxRow | None: ...
    def pending_outbox(self, created_before: datetime, limit: int) -> list[OutboxRow]: ...
    def mark_outbox(self, dedupe_key: str, *, sent: bool, error: str | None = None) -> None: ...
    def trim_outbox(self, sent_before: datetime, limit: int) -> int: ...

    # lifecycle: purge, holds, consolidation
    def expire_batch(
        self, now: datetime, limit: int, candidate_cutoff: datetime, after: str = ""
    ) -> list[ExpiredRecord]: ...
    def hard_delete_batch(self, cutoff: datetime, limit: int, after: str = "") -> list[DeletedRecord]: ...
    def count_purgeable(
        self, now: datetime, archive_cutoff: datetime, candidate_cutoff: datetime
    ) -> dict[str, int]: ...
    def delete_old_sessions(self, cutoff: datetime) -> list[SessionTranscript]: ...
    def clear_transcript_keys(self, session_ids: Sequence[str]) -> None: ...
    def set_subject_hold(self, subject_id: str, reason: str, actor: str, hold_id: str) -> str: ...
    def clear_subject_hold(self, subject_id: str) -> str | None: ...
    def set_record_hold(self, memory_id: str, hold: bool, hold_id: str) -> HeldRecord | None: ...
    def duplicate_groups(self, limit: int) -> list[DuplicateGroup]: ...
    def near_duplicate_pairs(
        self, min_similarity: float, limit: int, since: datetime | None = None
    ) -> list[NearDuplicatePair]: ...
    def newest_created_at(self) -> datetime | None: ...
    def watermark(self, name: str) -> datetime | None: ...
    def set_watermark(self, name: str, at: datetime) -> None: ...
    def observations(self, limit: int) -> list[ObservationRow]: ...
    def merge_into(self, keep_id: str, merge_ids: Sequence[str], now: datetime) -> None: ...
    def promote_observation(self, memory_id: str, corroborated_by: Sequence[str]) -> None: ...
    def demote_observation(self, memory_id: str) -> None: ...
    def flag_revalidation_batch(
        self,
        cutoffs: dict[str, datetime],
        sor_slots: Sequence[str],
        limit: int,
        after: str = "",
        ids: Sequence[str] | None = None,
    ) -> list[RevalidationFlag]: ...
    def count_revalidation_due(self, cutoffs: dict[str, datetime], sor_slots: Sequence[str]) -> int: ...

    # erasure
    def lock_subject_exclusive(self, subject_id: str) -> None: ...
    def create_erasure(self, **fields: Any) -> None: ...
    def get_erasure(self, erasure_id: str, *, for_update: bool = False) -> ErasureRow | None: ...
    def erasure_by_reference(self, subject_id: str, reference_sha256: str) -> ErasureRow | None: ...
    def update_erasure(self, erasure_id: str, **fields: Any) -> None: ...
    def overdue_erasures(self, now: datetime) -> list[OverdueErasure]: ...
    def subject_lineage(self, subject_id: str) -> SubjectLineage: ...
    def tombstone_subject(
        self, subject_id: str, erasure_id: str, hashes: Sequence[str], lineage_keys: Sequence[str]
    ) -> int: ...
    def purge_subject_index(self, subject_id: str, lineage_keys: Sequence[str]) -> int: ...
    def purge_subject_records(self, subject_id: str, lineage_keys: Sequence[str]) -> dict[str, int]: ...
    def purge_subject_caches(self, subject_id: str) -> int: ...
    def verify_subject_erased(self, subject_id: str, lineage_keys: Sequence[str]) -> dict[str, int]: ...
    def subject_held(self, subject_id: str) -> bool: ...
    def retained_under_hold(self, subject_id: str) -> list[dict[str, Any]]: ...
    def latest_erasure(self, subject_id: str) -> ErasureRow | None: ...
    def completing_erasures(self, erasure_id: str) -> list[str]: ...

    # one memory forgotten on request; a subject's export
    def consolidated_into(self, memory_id: str) -> list[str]: ...
    def versions_before(self, memory_id: str, subject_id: str, slot: str | None) -> list[str]: ...
    def forget_records(self, memory_ids: Sequence[str], at: datetime) -> int: ...
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
    def subject_on_hold(self, subject_id: str) -> bool: ...
    def subject_sessions(
        self, subject_id: str, *, before: tuple[datetime, str] | None, limit: int
    ) -> list[SubjectSessionRow]: ...
    def subject_erasures(
        self, subject_id: str, *, before: tuple[datetime, str] | None, limit: int
    ) -> list[SubjectErasureRow]: ...
    def subject_hold(self, subject_id: str) -> SubjectHold | None: ...
    def subject_tombstones(self, subject_id: str) -> dict[str, int]: ...
    # contested records (adapters/postgres/contested.py)
    def mark_contested(self, memory_ids: Sequence[str], confidence_factor: float = 1.0) -> None: ...
    def clear_contested(self, memory_ids: Sequence[str]) -> None: ...
    def settle_slot_contest(self, subject_id: str, slot: str) -> bool: ...
    def settle_stale_contest_marks(self, limit: int) -> list[dict[str, str]]: ...
    # ticket-scoped memory (adapters/postgres/ticket_scope.py)
    def open_ticket_scopes(
        self, limit: int, after: tuple[str, str] = ("", ""), *, unbounded_after: datetime
    ) -> list[dict[str, str]]: ...
    def bound_ticket_memories(self, subject_id: str, ticket_id: str, expires_at: datetime) -> list[str]: ...
    # refusals in the audit log, bounded (adapters/postgres/refusals.py)
    def count_refusal(
        self, *, event_type: str, actor: str, route: str, reason: str, at: datetime, window: timedelta
    ) -> int | None: ...


class MemoryStore(Protocol):
    def tenant(
        self, tenant_id: str, *, reuse_plans: bool = False, subjects: Any = ...
    ) -> AbstractContextManager[TenantSession]:
        """One tenant-scoped transaction. `reuse_plans`: short read-side transactions whose
        repeated statements keep one generic plan instead of being planned per call (the
        per-subject retrieval itself uses `reader`). `subjects`: the subject binding in force
        (default: the request's token binding; None: unbound, for the service's own records)."""
        ...

    def reader(self, tenant_id: str) -> AbstractContextManager[RetrievalReader]:
        """The hot read path: candidates, then the access event, each one atomic statement with no
        transaction around them (two round trips per retrieval)."""
        ...

    def ping(self) -> bool: ...
    def tenants(self) -> Iterator[str]: ...


class RetryableConflict(Exception):
    """A concurrent transaction won a race (unique key, serialization); retry the unit of work."""
