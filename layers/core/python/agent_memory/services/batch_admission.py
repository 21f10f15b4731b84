"""Batched admission: many candidates through the write gateway's pipeline in one transaction.

Each candidate is decided on its own, by the same pure steps as a single write (`prepare`, then
`domain.decision.decide`), in the order given, and the batch stores what N single writes in that
order would store: the same decisions, records, supersessions, contested markers, idempotent
replies and audit events (one hash chain, in the same order). What changes is the cost: the
subject and slot locks are taken once for the batch (sorted, so batches sharing slots serialize
without deadlocking), the admission contexts and idempotency keys are read in one statement each,
and the records are written a statement per kind rather than per record; one commit for all.

A candidate whose context an earlier candidate of the same batch changed (the same slot, the same
content, the same subject/type/slot for the near-duplicate search, or a record an earlier one
superseded or contested) is not decided on the batch's first read: what is pending is written
first and its context read again, inside the same transaction, exactly as its single write would
read it. Idempotency keys repeated within a batch replay as they would one after another.

All or nothing: a malformed candidate refuses the whole batch before anything is read (naming its
index and field), and a database error anywhere rolls it all back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, cast

import numpy as np

from agent_memory.domain.admission import Classified
from agent_memory.domain.decision import AdmissionContext, Candidate, decide, reaches_near_duplicate
from agent_memory.domain.enums import Decision, Role
from agent_memory.domain.errors import Conflict, DomainError, InvalidRequest, PayloadTooLarge
from agent_memory.domain.hashing import content_hash, request_fingerprint
from agent_memory.domain.records import MemoryRecord, MemoryWrite, Principal, WriteResult, new_id
from agent_memory.domain.sentences import split_sentences
from agent_memory.observability import logger
from agent_memory.ports.batch import BatchTenantSession, ContextQuery
from agent_memory.ports.store import IdempotentReply, NewEvent, RetryableConflict
from agent_memory.services.authorization import cleared_for, require_mutation, require_source_assertion

if TYPE_CHECKING:
    from agent_memory.services.write_gateway import WriteGateway, _ReadyWrite

MAX_BATCH = 1000  # candidates per call (a route or an import chunks above it)
MAX_ATTEMPTS = 4


def refused_at(exc: DomainError, index: int, prefix: str) -> DomainError:
    """The same error, naming the candidate's position: `memories[3].slot`."""
    where = f"{prefix}[{index}]"
    return type(exc)(f"{where}: {exc.message}", field=f"{where}.{exc.field}" if exc.field else where)


def admit_batch(
    gateway: WriteGateway,
    principal: Principal,
    requests: Sequence[MemoryWrite],
    *,
    embeddings: Sequence[np.ndarray | None] | None = None,
    sentence_embeddings: Sequence[np.ndarray | None] | None = None,
    refuse_invalid: bool = False,
    field_prefix: str | None = "memories",
) -> list[WriteResult]:
    """Admit, hold or refuse every candidate, in order, in one transaction (see the module).

    Vectors may be precomputed (`embeddings`, aligned with `requests`; None where there is none);
    the missing ones are embedded in one call first. A malformed candidate raises its 4xx error
    naming `field_prefix[index].field` (unchanged with `field_prefix=None`) and nothing is written;
    with `refuse_invalid` it comes back as a refused result instead and the others go ahead."""
    from agent_memory.services.write_gateway import _ReadyWrite, _wants_vector, prepare

    if len(requests) > MAX_BATCH:
        raise PayloadTooLarge(f"at most {MAX_BATCH} memories per batch", field=field_prefix or "memories")
    require_mutation(principal, Role.AGENT, Role.INTEGRATION, action="write memories")
    policy = gateway.policies.for_tenant(principal.tenant_id)
    now = gateway.clock()
    results: list[WriteResult | None] = [None] * len(requests)
    prepared: list[tuple[int, MemoryWrite, Classified]] = []
    for i, request in enumerate(requests):
        try:
            require_source_assertion(principal, request.source.kind)
            clean, candidate = prepare(request, policy, now)
        except (InvalidRequest, PayloadTooLarge) as exc:
            if refuse_invalid:
                refused = exc.field or exc.code
                results[i] = WriteResult(
                    decision=Decision.REJECTED, reasons=[exc.code], memory=None, refused=refused
                )
                continue
            raise exc if field_prefix is None else refused_at(exc, i, field_prefix) from exc
        except DomainError as exc:
            raise exc if field_prefix is None else refused_at(exc, i, field_prefix) from exc
        prepared.append((i, clean, candidate))
    vectors = _vectors(gateway, prepared, embeddings, sentence_embeddings)
    ready = [
        (
            i,
            _ReadyWrite(
                clean=clean,
                candidate=candidate,
                content_hash=content_hash(
                    clean.subject_id, candidate.type.value, candidate.slot, clean.content
                ),
                fingerprint=request_fingerprint(clean.model_dump(mode="json")),
                embedding=vectors[i][0],
                sentence_embeddings=vectors[i][1],
                embedding_pending=_wants_vector(candidate) and vectors[i][0] is None,
            ),
        )
        for i, clean, candidate in prepared
    ]
    near = policy.near_duplicate_similarity
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            with gateway.store.tenant(principal.tenant_id) as session:
                run = _BatchRun(gateway, cast(BatchTenantSession, session), principal, near)
                decided = run.admit([r for _, r in ready])
            break
        except RetryableConflict:
            if attempt == MAX_ATTEMPTS:
                raise
            logger.info("batch retried after a concurrent conflict", extra={"attempt": attempt})
    for (i, _), result in zip(ready, decided, strict=True):
        results[i] = result
    logger.info(
        "memory batch decided",
        extra={"candidates": len(requests), "rereads": run.rereads, "flushes": run.flushes},
    )
    return [r for r in results if r is not None]


def _vectors(
    gateway: WriteGateway,
    prepared: list[tuple[int, MemoryWrite, Classified]],
    embeddings: Sequence[np.ndarray | None] | None,
    sentence_embeddings: Sequence[np.ndarray | None] | None,
) -> dict[int, tuple[np.ndarray | None, np.ndarray | None]]:
    """Each candidate's vector and sentence vectors: given, or embedded in one call for the
    candidates that want one and have none (an embedder failure defers their indexing)."""
    from agent_memory.services.write_gateway import _wants_vector

    out: dict[int, tuple[np.ndarray | None, np.ndarray | None]] = {}
    missing: list[tuple[int, str]] = []
    for i, clean, candidate in prepared:
        whole = embeddings[i] if embeddings is not None else None
        sentences = sentence_embeddings[i] if sentence_embeddings is not None else None
        if whole is None and _wants_vector(candidate):
            missing.append((i, clean.content))
        out[i] = (whole, sentences)
    if not missing:
        return out
    pieces = [[text, *split_sentences(text)] for _, text in missing]
    try:
        batch = gateway.embedder.embed([p for ps in pieces for p in ps])
    except Exception as exc:  # any embedder failure defers indexing, never loses the writes
        logger.warning(
            "embedding deferred", extra={"embedder": gateway.embedder.name, "error": type(exc).__name__}
        )
        return out
    at = 0
    for (i, _), ps in zip(missing, pieces, strict=True):
        out[i] = (batch[at], batch[at + 1 : at + len(ps)])
        at += len(ps)
    return out


def _keys(subject_id: str, memory_type: str, slot: str | None, chash: str) -> set[tuple[str, ...]]:
    """What a candidate's admission context is looked up by (and what a write there changes)."""
    keys = {("hash", chash), ("near", subject_id, memory_type, slot or "")}
    if slot:
        keys.add(("slot", subject_id, slot))
    return keys


def _record_keys(record: MemoryRecord) -> set[tuple[str, ...]]:
    return _keys(record.subject_id, record.type.value, record.slot, record.content_hash)


@dataclass
class _Pending:
    """What the batch has decided and not yet written."""

    supersessions: list[tuple[str, str, datetime]] = field(default_factory=list)
    records: list[tuple[MemoryRecord, np.ndarray | None]] = field(default_factory=list)
    contested: list[str] = field(default_factory=list)
    sentences: list[tuple[str, str, np.ndarray]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.supersessions or self.records or self.contested or self.sentences)


class _BatchRun:
    """One attempt at one batch, inside its transaction."""

    def __init__(
        self, gateway: WriteGateway, session: BatchTenantSession, principal: Principal, near: float
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
        self.rereads = 0
        self.flushes = 0

    def admit(self, batch: list[_ReadyWrite]) -> list[WriteResult]:
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
        results = [self._admit_one(r, context) for r, context in zip(batch, contexts, strict=True)]
        self._flush()
        s.append_events(self.events)
        s.save_idempotent_replies(self.replies)
        return results

    def _admit_one(self, ready: _ReadyWrite, prefetched: AdmissionContext) -> WriteResult:
        from agent_memory.services.write_gateway import _persistable_reply, _replay_of

        key = ready.clean.idempotency_key
        if key and key in self.saved:
            prior = self.saved[key]
            if prior.fingerprint != ready.fingerprint:
                raise Conflict(
                    "idempotency_key was already used for a different request", field="idempotency_key"
                )
            return _replay_of(self.principal, prior)
        context = self._context(ready, prefetched)
        now = self.gateway.clock()
        record_id = new_id("mem")
        candidate = Candidate(ready.candidate, record_id, ready.content_hash, ready.embedding_pending)
        verdict = decide(candidate, context)
        record = verdict.duplicate
        if verdict.writes_record:
            record = self.gateway._build_record(self.principal, ready, verdict, record_id, now)
            self._persist(ready, verdict.supersedes, verdict.contests, verdict.keep_vector, record, now)
        subject_id = ready.clean.subject_id
        self.events.extend(
            NewEvent(e.event_type.value, self.principal.sub, e.memory_id, subject_id, e.reason, e.payload)
            for e in verdict.events
        )
        withheld = [
            r.id
            for r in (verdict.duplicate, verdict.supersedes)
            if r is not None and not cleared_for(self.principal, r.sensitivity)
        ]
        superseded = [verdict.supersedes.id] if verdict.supersedes is not None else []
        result = WriteResult(
            decision=verdict.decision, reasons=list(verdict.reasons), memory=record, superseded=superseded
        )
        result.withheld = withheld
        if key:
            reply = _persistable_reply(ready.fingerprint, result)
            self.saved[key] = reply
            self.replies.append((key, reply, record.id if record else None, subject_id))
        return result

    def _context(self, ready: _ReadyWrite, prefetched: AdmissionContext) -> AdmissionContext:
        """The batch's first read, unless an earlier candidate changed what it would say: then
        what is pending is written and the context read again, as the single write reads it."""
        clean, candidate = ready.clean, ready.candidate
        keys = _keys(clean.subject_id, candidate.type.value, candidate.slot, ready.content_hash)
        if keys.isdisjoint(self.touched):
            context = prefetched
            if context.near_duplicate is not None and (
                ready.embedding is None or not reaches_near_duplicate(candidate, context)
            ):
                context = replace(context, near_duplicate=None)
            return context
        self._flush()
        self.rereads += 1
        s = self.session
        context = s.admission_context(
            subject_id=clean.subject_id,
            memory_type=candidate.type.value,
            slot=candidate.slot,
            content_hash=ready.content_hash,
            lineage_keys=clean.lineage_keys,
        )
        if ready.embedding is None or not reaches_near_duplicate(candidate, context):
            return context
        near = s.near_duplicate(
            subject_id=clean.subject_id,
            memory_type=candidate.type.value,
            slot=candidate.slot,
            embedding=ready.embedding,
            min_similarity=self.near,
        )
        return replace(context, near_duplicate=near)

    def _persist(
        self,
        ready: _ReadyWrite,
        supersedes: MemoryRecord | None,
        contests: MemoryRecord | None,
        keep_vector: bool,
        record: MemoryRecord,
        now: datetime,
    ) -> None:
        """`write_gateway._persist`, queued: the same writes, flushed a statement per kind."""
        p = self.pending
        self.touched |= _record_keys(record)
        if supersedes is not None:
            p.supersessions.append((supersedes.id, record.id, now))
            self.touched |= _record_keys(supersedes)
        p.records.append((record, ready.embedding if keep_vector else None))
        if contests is not None:
            p.contested.append(contests.id)
            self.touched |= _record_keys(contests)
        sentences = ready.sentence_embeddings
        if keep_vector and sentences is not None and len(sentences):
            p.sentences.append((record.id, record.subject_id, sentences))

    def _flush(self) -> None:
        if not self.pending:
            return
        p, self.pending = self.pending, _Pending()
        self.flushes += 1
        self.session.persist_admitted(supersessions=p.supersessions, records=p.records, sentences=p.sentences)
        if p.contested:
            self.session.mark_contested(p.contested)
