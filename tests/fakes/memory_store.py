"""An in-memory store for fast service tests: what the write gateway (single and batched writes)
and the review service call, behaving as the PostgreSQL store does (tests/contract/ runs the same
suite against both).

One `MemoryStore.tenant(...)` block is one transaction: it works on a copy of the tenant's state,
committed when the block ends and dropped when it raises. Transactions on one tenant are
serialized (a lock per tenant), which is stricter than PostgreSQL but never less correct for a
test. Tenants share nothing. What the database's constraints refuse, the fake refuses the same
way: a second active record of one slot, or an idempotency key saved twice, is a
`RetryableConflict` out of the block. The audit chain is computed exactly as the PostgreSQL
session computes it (`domain.audit.event_hash_fields`, `domain.hashing.chain_hash`).

Not modelled: row-level security's subject binding (the `subjects` argument is accepted and
ignored), sessions, working memory, retrieval, lifecycle and erasure beyond what admission reads.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np

from agent_memory.domain.audit import chain_events, split_free_text
from agent_memory.domain.decision import AdmissionContext
from agent_memory.domain.enums import Flag, Sensitivity
from agent_memory.domain.hashing import GENESIS_HASH
from agent_memory.domain.records import AuditEvent, MemoryRecord, utcnow
from agent_memory.ports.batch import ContextQuery, PrefetchedContext
from agent_memory.ports.repositories import TombstoneRepository, WriteRepositories
from agent_memory.ports.store import IdempotentReply, NewEvent, RetryableConflict

_LIVE = frozenset({"active", "pending_approval", "contested", "quarantined"})  # a duplicate's statuses
_SERVED = frozenset({"active", "pending_approval", "contested"})  # a near duplicate's statuses
_REVIEW = frozenset({"pending_approval", "contested"})
_CONTESTED = Flag.CONTESTED.value
# The columns `update_status` may change (PostgresTenantSession._UPDATABLE).
_UPDATABLE = frozenset(
    {
        "authority",
        "verified_by",
        "verified_at",
        "evidence_ref",
        "reasons",
        "version",
        "supersedes_id",
        "last_validated_at",
        "needs_revalidation",
        "legal_hold",
        "expires_at",
        "content",
        "value",
        "flags",
    }
)


@dataclass(frozen=True)
class _Tombstone:
    subject_id: str
    content_hash: str | None
    lineage_key: str | None
    memory_id: str | None  # None: a subject's erasure (its lineage refuses everything drawn from it)
    memory_type: str | None
    slot: str | None


@dataclass(frozen=True)
class _SavedReply:
    reply: IdempotentReply
    memory_id: str | None
    subject_id: str | None


@dataclass
class _TenantState:
    """One tenant's rows. Values are never changed in place, only replaced, so a transaction's
    shallow copy is a snapshot."""

    records: dict[str, MemoryRecord] = field(default_factory=dict)
    embeddings: dict[str, np.ndarray] = field(default_factory=dict)
    sentences: dict[str, np.ndarray] = field(default_factory=dict)
    events: list[AuditEvent] = field(default_factory=list)
    # audit_free_text: event id -> the free text kept beside the chain, and its subject
    side_texts: dict[str, tuple[str | None, dict[str, str]]] = field(default_factory=dict)
    replies: dict[str, _SavedReply] = field(default_factory=dict)
    tombstones: list[_Tombstone] = field(default_factory=list)
    erasures: dict[str, dict[str, Any]] = field(default_factory=dict)
    policy: tuple[str, dict[str, Any]] | None = None
    # confidence_before_contest: a contested record's confidence before the contest lowered it
    before_contest: dict[str, float] = field(default_factory=dict)

    def copy(self) -> _TenantState:
        return _TenantState(
            records=dict(self.records),
            embeddings=dict(self.embeddings),
            sentences=dict(self.sentences),
            events=list(self.events),
            side_texts=dict(self.side_texts),
            replies=dict(self.replies),
            tombstones=list(self.tombstones),
            erasures=dict(self.erasures),
            policy=self.policy,
            before_contest=dict(self.before_contest),
        )


class MemoryStore:
    """The in-memory `MemoryStore`: `tenant(...)` yields a `MemoryTenantSession`."""

    def __init__(self) -> None:
        self._states: dict[str, _TenantState] = {}
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()
        self._open: set[tuple[int, str]] = set()  # (thread, tenant) with a transaction open

    @contextmanager
    def tenant(
        self, tenant_id: str, *, reuse_plans: bool = False, subjects: Any = None
    ) -> Iterator[MemoryTenantSession]:
        """One transaction on `tenant_id`'s rows: committed on exit, rolled back on an exception."""
        key = (threading.get_ident(), tenant_id)
        with self._guard:
            if key in self._open:
                # Two transactions of one thread on one tenant would hide each other's writes.
                raise RuntimeError("a transaction on this tenant is already open in this thread")
            lock = self._locks.setdefault(tenant_id, threading.RLock())
        with lock:
            self._open.add(key)
            try:
                working = self._states.get(tenant_id, _TenantState()).copy()
                yield MemoryTenantSession(tenant_id, working)
                self._states[tenant_id] = working
            finally:
                self._open.discard(key)

    def ping(self) -> bool:
        return True

    def tenants(self) -> Iterator[str]:
        yield from sorted(self._states)


class MemoryTenantSession:
    """One tenant transaction over a `_TenantState` snapshot (see the module)."""

    def __init__(self, tenant_id: str, state: _TenantState) -> None:
        self.tenant_id = tenant_id
        self._s = state

    # -- locks: the store serializes a tenant's transactions already ------------------------
    def lock_subject(self, subject_id: str) -> None:
        return None

    def lock_slot(self, subject_id: str, slot: str) -> None:
        return None

    def lock_batch(self, subjects: Sequence[str], slots: Sequence[tuple[str, str]]) -> None:
        return None

    # -- admission -------------------------------------------------------------------------
    def admission_context(
        self,
        *,
        subject_id: str,
        memory_type: str,
        slot: str | None,
        content_hash: str,
        lineage_keys: Sequence[str],
    ) -> AdmissionContext:
        active = self.active_for_slot(subject_id, slot) if slot else None
        duplicates = sorted(
            (
                r
                for r in self._s.records.values()
                if r.content_hash == content_hash and str(r.status) in _LIVE and not _closed_commitment(r)
            ),
            key=lambda r: r.created_at,
        )
        lineage = set(lineage_keys)
        tombstoned = any(
            t.content_hash == content_hash
            or (
                t.lineage_key in lineage
                and (
                    t.memory_id is None
                    or (t.subject_id == subject_id and t.memory_type == memory_type and t.slot == slot)
                )
            )
            for t in self._s.tombstones
        )
        erasing = any(
            e["subject_id"] == subject_id and e["status"] == "running" for e in self._s.erasures.values()
        )
        return AdmissionContext(
            active=active,
            duplicate=_copy(duplicates[0]) if duplicates else None,
            tombstoned=tombstoned,
            erasing=erasing,
        )

    def near_duplicate(
        self,
        *,
        subject_id: str,
        memory_type: str,
        slot: str | None,
        embedding: np.ndarray,
        min_similarity: float,
    ) -> MemoryRecord | None:
        if min_similarity > 1.0:
            return None
        nearest = self._nearest(subject_id, memory_type, slot, embedding)
        if nearest is None or nearest[1] < min_similarity:
            return None
        return nearest[0]

    def _nearest(
        self, subject_id: str, memory_type: str, slot: str | None, embedding: np.ndarray
    ) -> tuple[MemoryRecord, float] | None:
        """The record `near_duplicate` compares with, and its cosine similarity."""
        best: tuple[MemoryRecord, float] | None = None
        for r in self._s.records.values():
            vector = self._s.embeddings.get(r.id)
            if (
                vector is None
                or r.subject_id != subject_id
                or str(r.type) != memory_type
                or r.slot != slot
                or str(r.status) not in _SERVED
                or _closed_commitment(r)
            ):
                continue
            similarity = _cosine(embedding, vector)
            if best is None or similarity > best[1]:
                best = (r, similarity)
        return (_copy(best[0]), best[1]) if best else None

    # -- records -----------------------------------------------------------------------------
    def insert_record(self, record: MemoryRecord, embedding: np.ndarray | None) -> None:
        if record.id in self._s.records:
            raise RetryableConflict("UniqueViolation")
        stored = _as_stored(record)
        self._check_one_active(stored)
        self._s.records[stored.id] = stored
        if embedding is not None:
            self._s.embeddings[stored.id] = np.asarray(embedding, dtype=np.float32).copy()

    def insert_sentences(self, memory_id: str, subject_id: str, embeddings: np.ndarray) -> None:
        self._s.sentences[memory_id] = np.asarray(embeddings, dtype=np.float32).copy()

    def supersede(self, old_id: str, new_id: str, at: datetime) -> None:
        old = self._s.records.get(old_id)
        if old is None or str(old.status) != "active":
            return
        self._s.records[old_id] = _changed(
            old, status="superseded", superseded_by_id=new_id, superseded_at=at, valid_to=at
        )

    def update_status(self, memory_id: str, status: str, **fields: Any) -> MemoryRecord:
        unknown = set(fields) - _UPDATABLE
        if unknown:
            raise ValueError(f"not updatable: {sorted(unknown)}")
        current = self._s.records.get(memory_id)
        if current is None:
            raise LookupError(memory_id)
        changed = _changed(current, **fields, status=status)
        self._check_one_active(changed)
        self._s.records[memory_id] = changed
        return _copy(changed)

    def get_record(self, memory_id: str, *, for_update: bool = False) -> MemoryRecord | None:
        record = self._s.records.get(memory_id)
        return _copy(record) if record else None

    def records_by_id(self, memory_ids: set[str]) -> dict[str, MemoryRecord]:
        return {i: _copy(self._s.records[i]) for i in memory_ids if i in self._s.records}

    def active_for_slot(self, subject_id: str, slot: str) -> MemoryRecord | None:
        for r in self._s.records.values():
            if r.subject_id == subject_id and r.slot == slot and str(r.status) == "active":
                return _copy(r)
        return None

    def active_for_slots(self, subject_id: str, slots: Sequence[str]) -> list[MemoryRecord]:
        rows = [
            r
            for r in self._s.records.values()
            if r.subject_id == subject_id and r.slot in set(slots) and str(r.status) == "active"
        ]
        return [_copy(r) for r in sorted(rows, key=lambda r: r.slot or "")]

    def slot_history(self, subject_id: str, slot: str) -> list[MemoryRecord]:
        rows = [r for r in self._s.records.values() if r.subject_id == subject_id and r.slot == slot]
        return [_copy(r) for r in sorted(rows, key=lambda r: (r.created_at, r.id))]

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
        rows = [
            r
            for r in self._s.records.values()
            if r.subject_id == subject_id
            and str(r.status) in statuses
            and (not types or str(r.type) in types)
            and Sensitivity(r.sensitivity).rank <= max_sensitivity_rank
            and (before is None or (r.created_at, r.id) < before)
        ]
        return _newest_first(rows, limit)

    def review_queue(
        self, *, limit: int, before: tuple[datetime, str] | None, max_sensitivity_rank: int
    ) -> list[MemoryRecord]:
        rows = [
            r
            for r in self._s.records.values()
            if str(r.status) in _REVIEW
            and Sensitivity(r.sensitivity).rank <= max_sensitivity_rank
            and (before is None or (r.created_at, r.id) < before)
        ]
        return _newest_first(rows, limit)

    def similar_pending(
        self, memory_ids: Sequence[str], min_similarity: float, max_sensitivity_rank: int
    ) -> dict[str, list[tuple[str, datetime, str]]]:
        out: dict[str, list[tuple[str, datetime, str]]] = {}
        for i in memory_ids:
            a, va = self._s.records.get(i), self._s.embeddings.get(i)
            if a is None or va is None:
                continue
            others = [
                b
                for b in self._s.records.values()
                if b.id != a.id
                and b.subject_id == a.subject_id
                and str(b.status) in _REVIEW
                and b.type == a.type
                and b.slot == a.slot
                and Sensitivity(b.sensitivity).rank <= max_sensitivity_rank
                and b.id in self._s.embeddings
                and _cosine(va, self._s.embeddings[b.id]) >= min_similarity
            ]
            if others:
                out[i] = [(b.id, b.created_at, b.content) for b in _newest_first(others, len(others))]
        return out

    def records_above_clearance(self, memory_ids: set[str], max_sensitivity_rank: int) -> set[str]:
        return {
            i
            for i in memory_ids
            if i in self._s.records
            and Sensitivity(self._s.records[i].sensitivity).rank > max_sensitivity_rank
        }

    def persist_admitted(
        self,
        *,
        supersessions: Sequence[tuple[str, str, datetime]],
        records: Sequence[tuple[MemoryRecord, np.ndarray | None]],
        sentences: Sequence[tuple[str, str, np.ndarray]],
    ) -> None:
        for old_id, new_id_, at in supersessions:
            self.supersede(old_id, new_id_, at)
        for record, embedding in records:
            self.insert_record(record, embedding)
        for memory_id, subject_id, vectors in sentences:
            self.insert_sentences(memory_id, subject_id, vectors)

    def admission_contexts(
        self, queries: Sequence[ContextQuery], *, min_similarity: float
    ) -> list[PrefetchedContext]:
        out = []
        for q in queries:
            context = self.admission_context(
                subject_id=q.subject_id,
                memory_type=q.memory_type,
                slot=q.slot,
                content_hash=q.content_hash,
                lineage_keys=q.lineage_keys,
            )
            nearest = None
            if q.embedding is not None and min_similarity <= 1.0:
                nearest = self._nearest(q.subject_id, q.memory_type, q.slot, q.embedding)
            out.append(
                PrefetchedContext(
                    context=context,
                    nearest=nearest[0] if nearest else None,
                    nearest_similarity=nearest[1] if nearest else None,
                )
            )
        return out

    def _check_one_active(self, record: MemoryRecord) -> None:
        """memory_records_one_active_per_slot: never two active versions of one slot."""
        if str(record.status) != "active" or record.slot is None:
            return
        for other in self._s.records.values():
            if (
                other.id != record.id
                and other.subject_id == record.subject_id
                and other.slot == record.slot
                and str(other.status) == "active"
            ):
                raise RetryableConflict("UniqueViolation")

    # -- the contested marker ------------------------------------------------------------------
    def mark_contested(self, memory_ids: Sequence[str], confidence_factor: float = 1.0) -> None:
        """As the adapter: the marker, and the confidence lowered once per contest (the one before kept)."""
        for i in memory_ids:
            if i in self._s.records:
                self._set_flag(i, on=True)
                if i not in self._s.before_contest:
                    record = self._s.records[i]
                    self._s.before_contest[i] = record.confidence
                    self._s.records[i] = _changed(record, confidence=record.confidence * confidence_factor)

    def clear_contested(self, memory_ids: Sequence[str]) -> None:
        for i in memory_ids:
            if i in self._s.records:
                self._set_flag(i, on=False)
                self._restore_confidence(i)

    def _restore_confidence(self, memory_id: str) -> None:
        """A settled contest: the record left serving gets its confidence back, a loser keeps the lowered."""
        before = self._s.before_contest.pop(memory_id, None)
        record = self._s.records[memory_id]
        if before is not None and str(record.status) == "active":
            self._s.records[memory_id] = _changed(record, confidence=before)

    def settle_slot_contest(self, subject_id: str, slot: str) -> bool:
        active = self.active_for_slot(subject_id, slot)
        if active is None:
            return False
        waiting = any(
            r.subject_id == subject_id and r.slot == slot and str(r.status) == "contested"
            for r in self._s.records.values()
        )
        self._set_flag(active.id, on=waiting)
        if not waiting:
            self._restore_confidence(active.id)
        return waiting

    def _set_flag(self, memory_id: str, *, on: bool) -> None:
        """As array_append(array_remove(flags, f), f): set, the marker moves to the end."""
        record = self._s.records[memory_id]
        flags = [f for f in record.flags if f != _CONTESTED] + ([_CONTESTED] if on else [])
        self._s.records[memory_id] = _changed(record, flags=flags)

    # -- audit -----------------------------------------------------------------------------
    def last_event_seq(self) -> int:
        return self._s.events[-1].seq if self._s.events else 0

    def append_events(self, events: Sequence[NewEvent]) -> list[AuditEvent]:
        if not events:
            return []
        prev = self._s.events[-1].hash if self._s.events else GENESIS_HASH
        split = [split_free_text(_json_copy(ev.payload or {})) for ev in events]
        copies = [replace(ev, payload=payload) for ev, (payload, _) in zip(events, split, strict=True)]
        out = chain_events(
            self.tenant_id, copies, after_seq=self.last_event_seq(), after_hash=prev, at=utcnow()
        )
        self._s.events.extend(out)
        for e, (_, texts) in zip(out, split, strict=True):
            if texts:
                self._s.side_texts[e.id] = (e.subject_id, {t.key: t.text for t in texts})
        return [e.model_copy(deep=True) for e in out]

    def audit_events(
        self,
        *,
        subject_id: str | None,
        memory_id: str | None,
        since: datetime | None,
        after_seq: int | None,
        limit: int,
    ) -> list[AuditEvent]:
        rows = [
            e
            for e in self._s.events
            if (subject_id is None or e.subject_id == subject_id)
            and (memory_id is None or e.memory_id == memory_id)
            and (since is None or e.created_at >= since)
            and e.seq > (after_seq or 0)
        ]
        out = [e.model_copy(deep=True) for e in rows[:limit]]
        for e in out:
            side = self._s.side_texts.get(e.id)
            e.free_text = dict(side[1]) if side else None
        return out

    def purge_subject_free_text(self, subject_id: str) -> int:
        gone = [k for k, (subject, _) in self._s.side_texts.items() if subject == subject_id]
        for k in gone:
            del self._s.side_texts[k]
        return len(gone)

    def count_subject_free_text(self, subject_id: str) -> int:
        return sum(subject == subject_id for subject, _ in self._s.side_texts.values())

    # -- idempotency, policy, tombstones, erasures ----------------------------------------------
    def idempotent_reply(self, key: str) -> IdempotentReply | None:
        saved = self._s.replies.get(key)
        if saved is None:
            return None
        r = saved.reply
        return IdempotentReply(fingerprint=r.fingerprint, response=_json_copy(r.response), status=r.status)

    def idempotent_replies(self, keys: set[str]) -> dict[str, IdempotentReply]:
        found = {k: self.idempotent_reply(k) for k in keys}
        return {k: r for k, r in found.items() if r is not None}

    def save_idempotent_reply(
        self, key: str, reply: IdempotentReply, memory_id: str | None, subject_id: str | None = None
    ) -> None:
        if key in self._s.replies:
            raise RetryableConflict("UniqueViolation")
        stored = IdempotentReply(reply.fingerprint, _json_copy(reply.response), reply.status)
        self._s.replies[key] = _SavedReply(stored, memory_id, subject_id)

    def save_idempotent_replies(
        self, replies: Sequence[tuple[str, IdempotentReply, str | None, str]]
    ) -> None:
        for key, reply, memory_id, subject_id in replies:
            self.save_idempotent_reply(key, reply, memory_id, subject_id)

    def tenant_policy(self, *, for_update: bool = False) -> tuple[str, dict[str, Any]] | None:
        if self._s.policy is None:
            return None
        return self._s.policy[0], _json_copy(self._s.policy[1])

    def set_tenant_policy(self, profile: str, overrides: dict[str, Any]) -> None:
        self._s.policy = (profile, _json_copy(overrides))

    def tombstone_memory(
        self,
        *,
        memory_id: str,
        subject_id: str,
        memory_type: str,
        slot: str | None,
        content_hashes: Sequence[str],
        lineage_keys: Sequence[str],
    ) -> int:
        rows = [
            _Tombstone(subject_id, h, None, memory_id, memory_type, slot) for h in sorted(set(content_hashes))
        ]
        rows += [
            _Tombstone(subject_id, None, k, memory_id, memory_type, slot) for k in sorted(set(lineage_keys))
        ]
        self._s.tombstones = [t for t in self._s.tombstones if t.memory_id != memory_id] + rows
        return len(rows)

    def create_erasure(self, **fields: Any) -> None:
        """An erasure request, running (admission refuses the subject's writes meanwhile)."""
        if fields["erasure_id"] in self._s.erasures:
            raise RetryableConflict("UniqueViolation")
        self._s.erasures[fields["erasure_id"]] = {**_json_copy(fields, default=str), "status": "running"}


def _as_stored(record: MemoryRecord) -> MemoryRecord:
    """The record as a row holds it and a read returns it: validated again (enums, not strings),
    with the float4 columns' precision."""
    data = record.model_dump()
    for k in ("confidence", "importance"):
        data[k] = round(float(np.float32(data[k])), 6)
    return MemoryRecord.model_validate(data)


def _changed(record: MemoryRecord, **fields: Any) -> MemoryRecord:
    """A stored record with some columns changed, as the row would read back."""
    return _as_stored(MemoryRecord.model_validate({**record.model_dump(), **fields}))


def _copy(record: MemoryRecord) -> MemoryRecord:
    return record.model_copy(deep=True)


def _newest_first(rows: list[MemoryRecord], limit: int) -> list[MemoryRecord]:
    return [_copy(r) for r in sorted(rows, key=lambda r: (r.created_at, r.id), reverse=True)[:limit]]


def _closed_commitment(record: MemoryRecord) -> bool:
    """adapters/postgres/lifecycle.py's NOT_CLOSED_COMMITMENT, negated."""
    return str(record.type) == "commitment" and record.value.get("state") == "closed"


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    """1 - pgvector's cosine distance."""
    a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a64 @ b64 / (np.linalg.norm(a64) * np.linalg.norm(b64)))


def _json_copy(value: Any, default: Any = None) -> Any:
    """A value as it comes back from a jsonb column."""
    return json.loads(json.dumps(value, default=default))


def _conforms(session: MemoryTenantSession) -> tuple[WriteRepositories, TombstoneRepository]:
    """Checked by mypy (`mypy tests/fakes`): the fake session is every port the write gateway's
    single writes and the review service use."""
    return session, session
