"""The batched admission path's store calls: a `TenantSession` that can also read and write a
whole batch per statement (services/batch_admission.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import numpy as np

from agent_memory.domain.decision import AdmissionContext
from agent_memory.domain.records import MemoryRecord
from agent_memory.ports.store import IdempotentReply, TenantSession


@dataclass(frozen=True)
class ContextQuery:
    """What one candidate's admission context is looked up by."""

    subject_id: str
    memory_type: str
    slot: str | None
    content_hash: str
    lineage_keys: Sequence[str]
    embedding: np.ndarray | None  # None: no near-duplicate lookup


@dataclass(frozen=True)
class PrefetchedContext:
    """A candidate's admission context as the store held it before the batch (`near_duplicate`
    unset), and the nearest record by meaning for a candidate with a vector, whatever its
    similarity: the batch decides whether the cascade gets that far and compares it with its own."""

    context: AdmissionContext
    nearest: MemoryRecord | None = None
    nearest_similarity: float | None = None


class BatchTenantSession(TenantSession, Protocol):
    def lock_batch(self, subjects: Sequence[str], slots: Sequence[tuple[str, str]]) -> None: ...
    def admission_contexts(
        self, queries: Sequence[ContextQuery], *, min_similarity: float
    ) -> list[PrefetchedContext]: ...
    def records_by_id(self, memory_ids: set[str]) -> dict[str, MemoryRecord]: ...
    def idempotent_replies(self, keys: set[str]) -> dict[str, IdempotentReply]: ...
    def persist_admitted(
        self,
        *,
        supersessions: Sequence[tuple[str, str, datetime]],
        records: Sequence[tuple[MemoryRecord, np.ndarray | None]],
        sentences: Sequence[tuple[str, str, np.ndarray]],
    ) -> None: ...
    def save_idempotent_replies(
        self, replies: Sequence[tuple[str, IdempotentReply, str | None, str]]
    ) -> None: ...
