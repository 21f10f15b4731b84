"""One batch's run through admission (`batch_admission`): each candidate decided in order on the
batch's first read brought up to date with what the batch itself decided, what is pending written
when that cannot be certain, and everything persisted a statement per kind."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from agent_memory.domain.decision import AdmissionContext, Candidate, decide, reaches_near_duplicate
from agent_memory.domain.enums import Flag, MemoryType, Status
from agent_memory.domain.errors import Conflict
from agent_memory.domain.records import MemoryRecord, Principal, WriteResult, new_id
from agent_memory.ports.batch import BatchTenantSession, ContextQuery, PrefetchedContext
from agent_memory.ports.store import IdempotentReply, NewEvent
from agent_memory.services.admission_steps import (
    Admitter,
    ReadyWrite,
    build_record,
    persistable_reply,
    read_admission_context,
    replay_of,
    writer_reply,
)


def _keys(subject_id: str, memory_type: str, slot: str | None, chash: str) -> set[tuple[str, ...]]:
    """What a candidate's admission context is looked up by (and what a write there changes)."""
    keys = {("hash", chash), ("near", subject_id, memory_type, slot or "")}
    if slot:
        keys.add(("slot", subject_id, slot))
    return keys


def _record_keys(record: MemoryRecord) -> set[tuple[str, ...]]:
    return _keys(record.subject_id, record.type.value, record.slot, record.content_hash)


class _Unsure:
    """The batch's state cannot say what the store would answer: read it again."""


_UNSURE = _Unsure()
_TIE = 1e-5  # similarities closer than this are not ordered here (the store computes in float4)
_LIVE = frozenset({Status.ACTIVE, Status.PENDING_APPROVAL, Status.CONTESTED, Status.QUARANTINED})
_SEARCHED = frozenset({Status.ACTIVE, Status.PENDING_APPROVAL, Status.CONTESTED})


def _closed_commitment(record: MemoryRecord) -> bool:
    return record.type is MemoryType.COMMITMENT and record.value.get("state") == "closed"


def _live(record: MemoryRecord | None) -> bool:
    """What the duplicate lookup finds (`admission_context`)."""
    return record is not None and record.status in _LIVE and not _closed_commitment(record)


def _searchable(record: MemoryRecord | None) -> bool:
    """What the near-duplicate search finds (`near_duplicate`; the vector is checked apart)."""
    return record is not None and record.status in _SEARCHED and not _closed_commitment(record)


def _unit(vector: np.ndarray) -> np.ndarray:
    """The vector scaled to length one, in float64: a dot product of two is their cosine."""
    v = np.asarray(vector, dtype=np.float64)
    return v / np.linalg.norm(v)


def _as_stored(record: MemoryRecord) -> MemoryRecord:
    """The record as the store returns it: its float4 columns rounded as `row_to_record` does."""
    return record.model_copy(
        update={k: round(float(np.float32(getattr(record, k))), 6) for k in ("confidence", "importance")}
    )


@dataclass
class _Pending:
    """What the batch has decided and not yet written."""

    supersessions: list[tuple[str, str, datetime]] = field(default_factory=list)
    records: list[tuple[MemoryRecord, np.ndarray | None]] = field(default_factory=list)
    contested: list[str] = field(default_factory=list)
    contest_factor: float = 1.0  # the policy's (the product requirements: a contest lowers both confidences)
    sentences: list[tuple[str, str, np.ndarray]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.supersessions or self.records or self.contested or self.sentences)


class BatchRun:
    """One attempt at one batch, inside its transaction."""

    def __init__(
        self, gateway: Admitter, session: BatchTenantSession, principal: Principal, near: float
    ) -> None:
        self.gateway = gateway
        self.session = session
        self.principal = principal
        self.near = near
        self.pending = _Pending()
        self.events: list[NewEvent] = []
        self.replies: list[tuple[str, IdempotentReply, str | None, str]] = []
        self.saved: dict[str, IdempotentReply] = {}
        self.touched: set[tuple[str, ...]] = set()
        # The batch's view of the records it wrote or changed, as the store now holds them.
        self.state: dict[str, MemoryRecord] = {}
        self.pending_at: dict[str, int] = {}  # a pending record's place in `pending.records`
        self.vectors: dict[str, np.ndarray] = {}  # of the batch's searchable records, unit length
        self.by_slot: dict[tuple[str, str], list[str]] = {}
        self.by_hash: dict[str, list[str]] = {}
        self.by_near: dict[tuple[str, str, str], list[str]] = {}
        self.rereads = 0
        self.flushes = 0
        self.position = 0  # the candidate being decided

    def admit(self, batch: list[ReadyWrite]) -> list[WriteResult]:
        s = self.session
        s.lock_batch(
            [r.clean.subject_id for r in batch],
            [(r.clean.subject_id, r.candidate.slot) for r in batch if r.candidate.slot],
        )
        self.saved = s.idempotent_replies({r.clean.idempotency_key for r in batch if r.clean.idempotency_key})
        contexts = s.admission_contexts(
            [
                ContextQuery(
                    subject_id=r.clean.subject_id,
                    memory_type=r.candidate.type.value,
                    slot=r.candidate.slot,
                    content_hash=r.content_hash,
                    lineage_keys=r.clean.lineage_keys,
                    embedding=r.embedding,
                )
                for r in batch
            ],
            min_similarity=self.near,
        )
        results = []
        for self.position, (r, context) in enumerate(zip(batch, contexts, strict=True)):
            results.append(self._admit_one(r, context))
        self._flush()
        s.append_events(self.events)
        s.save_idempotent_replies(self.replies)
        return results

    def _admit_one(self, ready: ReadyWrite, prefetched: PrefetchedContext) -> WriteResult:
        key = ready.clean.idempotency_key
        if key and key in self.saved:
            prior = self.saved[key]
            if prior.fingerprint != ready.fingerprint:
                raise Conflict(
                    "idempotency_key was already used for a different request", field="idempotency_key"
                )
            return replay_of(self.principal, prior)
        context = self._context(ready, prefetched)
        now = self.gateway.clock()
        record_id = new_id("mem")
        candidate = Candidate(ready.candidate, record_id, ready.content_hash, ready.embedding_pending)
        verdict = decide(candidate, context)
        record = verdict.duplicate
        if verdict.writes_record:
            record = build_record(self.principal, ready, verdict, record_id, now, self.gateway.embedder.name)
            self._persist(ready, verdict.supersedes, verdict.contests, verdict.keep_vector, record, now)
        subject_id = ready.clean.subject_id
        self.events.extend(
            NewEvent(e.event_type.value, self.principal.sub, e.memory_id, subject_id, e.reason, e.payload)
            for e in verdict.events
        )
        result = writer_reply(self.principal, verdict, record)
        if key:
            reply = persistable_reply(ready.fingerprint, result)
            self.saved[key] = reply
            self.replies.append((key, reply, record.id if record else None, subject_id))
        return result

    def _context(self, ready: ReadyWrite, prefetched: PrefetchedContext) -> AdmissionContext:
        """The batch's first read brought up to date with the batch's own writes, or (where that
        is not certain) read again after writing what is pending, as the single write reads it."""
        clean, candidate = ready.clean, ready.candidate
        keys = _keys(clean.subject_id, candidate.type.value, candidate.slot, ready.content_hash)
        if keys.isdisjoint(self.touched):
            context: AdmissionContext | None = prefetched.context
        else:
            context = self._overlaid(ready, prefetched.context)
        if context is None:
            return self._reread(ready)
        if ready.embedding is None or not reaches_near_duplicate(candidate, context):
            return context
        near = self._nearest(ready, prefetched)
        if isinstance(near, _Unsure):
            return self._reread(ready)
        return replace(context, near_duplicate=near)

    def _overlaid(self, ready: ReadyWrite, before: AdmissionContext) -> AdmissionContext | None:
        """The active record of the slot and the first live record with the same content, as the
        store holds them now; None when the batch's state cannot say."""
        clean, slot = ready.clean, ready.candidate.slot
        active = None
        if slot:
            options = [self._now(before.active)] if before.active is not None else []
            options += [self.state[i] for i in self.by_slot.get((clean.subject_id, slot), ())]
            live = [r for r in options if r is not None and r.status is Status.ACTIVE]
            if len(live) > 1:
                return None
            active = live[0] if live else None
        duplicate = None
        if before.duplicate is not None:
            duplicate = self._now(before.duplicate)
            if not _live(duplicate):  # the store's next one is not known here
                return None
        else:
            duplicate = next(
                (self.state[i] for i in self.by_hash.get(ready.content_hash, ()) if _live(self.state[i])),
                None,
            )
        return replace(before, active=active, duplicate=duplicate, near_duplicate=None)

    def _nearest(self, ready: ReadyWrite, prefetched: PrefetchedContext) -> MemoryRecord | _Unsure | None:
        """`near_duplicate` over the store's nearest record and the batch's own, or _UNSURE."""
        clean, candidate = ready.clean, ready.candidate
        assert ready.embedding is not None
        if self.near > 1.0:
            return None
        options: list[tuple[float, MemoryRecord]] = []
        if prefetched.nearest is not None and prefetched.nearest_similarity is not None:
            nearest = self.state.get(prefetched.nearest.id, prefetched.nearest)
            if not _searchable(nearest):  # left the search within the batch: the next one is unknown
                return _UNSURE
            options.append((float(prefetched.nearest_similarity), nearest))
        key = (clean.subject_id, candidate.type.value, candidate.slot or "")
        ids = [i for i in self.by_near.get(key, ()) if i in self.vectors and _searchable(self.state[i])]
        if ids:
            similarities = np.stack([self.vectors[i] for i in ids]) @ _unit(ready.embedding)
            top = np.argsort(-similarities)[:2]  # the nearest, and the next to tell a tie
            options += [(float(similarities[j]), self.state[ids[j]]) for j in top]
        if not options:
            return None
        options.sort(key=lambda o: -o[0])
        best = options[0][0]
        if abs(best - self.near) < _TIE or (len(options) > 1 and best - options[1][0] < _TIE):
            return _UNSURE
        return options[0][1] if best >= self.near else None

    def _reread(self, ready: ReadyWrite) -> AdmissionContext:
        """Write what is pending, then read the context exactly as a single write reads it."""
        self._flush()
        self.rereads += 1
        return read_admission_context(self.session, ready, self.near)

    def _now(self, record: MemoryRecord | None) -> MemoryRecord | None:
        """A record as it stands after the batch's writes so far."""
        return None if record is None else self.state.get(record.id, record)

    def _persist(
        self,
        ready: ReadyWrite,
        supersedes: MemoryRecord | None,
        contests: MemoryRecord | None,
        keep_vector: bool,
        record: MemoryRecord,
        now: datetime,
    ) -> None:
        """`write_gateway._persist`, queued (flushed a statement per kind), and the batch's state
        of the records it changes kept as the store would return them."""
        p = self.pending
        self.touched |= _record_keys(record)
        if supersedes is not None:
            self.touched |= _record_keys(supersedes)
            old = self._now(supersedes)
            assert old is not None
            if old.status is Status.ACTIVE:
                self._change(
                    old.model_copy(
                        update={
                            "status": Status.SUPERSEDED,
                            "superseded_by_id": record.id,
                            "superseded_at": now,
                            "valid_to": now,
                        }
                    ),
                    lambda: p.supersessions.append((old.id, record.id, now)),
                )
        vector = ready.embedding if keep_vector else None
        stored = _as_stored(record)
        self.pending_at[record.id] = len(p.records)
        p.records.append((stored, vector))
        self.state[record.id] = stored
        if vector is not None:
            self.vectors[record.id] = _unit(vector)
        if record.slot:
            self.by_slot.setdefault((record.subject_id, record.slot), []).append(record.id)
        self.by_hash.setdefault(record.content_hash, []).append(record.id)
        self.by_near.setdefault((record.subject_id, record.type.value, record.slot or ""), []).append(
            record.id
        )
        if contests is not None:
            self.touched |= _record_keys(contests)
            marked = self._now(contests)
            assert marked is not None
            flags = [f for f in marked.flags if f != Flag.CONTESTED.value] + [Flag.CONTESTED.value]
            self._change(marked.model_copy(update={"flags": flags}), lambda: p.contested.append(marked.id))
            # The product requirements: both confidences lowered once the rows are written (`_flush`), a contested
            # record still pending in this batch too.
            p.contested.extend(i for i in (marked.id, record.id) if i not in p.contested)
            p.contest_factor = ready.candidate.contest_confidence_factor
        sentences = ready.sentence_embeddings
        if keep_vector and sentences is not None and len(sentences):
            p.sentences.append((record.id, record.subject_id, sentences))

    def _change(self, changed: MemoryRecord, statement: Callable[[], None]) -> None:
        """A record this batch changes: written as changed if it is still pending (its insert and
        the statement changing it would otherwise run in the wrong order), else by the statement."""
        self.state[changed.id] = changed
        at = self.pending_at.get(changed.id)
        if at is None:
            statement()
        else:
            self.pending.records[at] = (changed, self.pending.records[at][1])

    def _flush(self) -> None:
        if not self.pending:
            return
        p, self.pending = self.pending, _Pending()
        self.pending_at = {}
        self.flushes += 1
        self.session.persist_admitted(supersessions=p.supersessions, records=p.records, sentences=p.sentences)
        if p.contested:
            self.session.mark_contested(p.contested, p.contest_factor)
