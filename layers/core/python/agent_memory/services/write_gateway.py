"""The write gateway: the only path that writes memories.

Pipeline (docs/rules.md, order matters): sanitize -> screen -> classify -> dedupe
-> tombstone check -> authority-ranked conflict resolution -> persist record,
events and embedding in one transaction, idempotently. Steps 1-3 (`prepare`) and
the decision of steps 4-6 (`domain.decision.decide`) are pure; this module reads
what they need from the store and writes what they decide.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np

from agent_memory.domain.decision import AdmissionContext, AdmissionDecision, Candidate, decide
from agent_memory.domain.enums import Decision, Role
from agent_memory.domain.errors import Conflict, RateLimited
from agent_memory.domain.hashing import content_hash, request_fingerprint
from agent_memory.domain.policy import PolicyProfile
from agent_memory.domain.records import MemoryRecord, MemoryWrite, Principal, WriteResult, new_id, utcnow
from agent_memory.domain.sentences import split_sentences
from agent_memory.observability import logger
from agent_memory.ports.embedder import Embedder
from agent_memory.ports.store import MemoryStore, NewEvent, RetryableConflict, TenantSession
from agent_memory.services.admission_steps import (
    ReadyWrite,
    build_record,
    persistable_reply,
    prepare,
    read_admission_context,
    replay_of,
    wants_vector,
    writer_reply,
)
from agent_memory.services.authorization import require_mutation, require_source_assertion
from agent_memory.services.batch_admission import admit_batch
from agent_memory.services.policies import PolicyRegistry
from agent_memory.services.quotas import Addition, Quotas

MAX_ATTEMPTS = 4


class WriteGateway:
    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder,
        policies: PolicyRegistry,
        clock: Callable[[], datetime] = utcnow,
        quotas: Quotas | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.policies = policies
        self.clock = clock
        self.quotas = quotas

    def write(
        self,
        principal: Principal,
        request: MemoryWrite,
        *,
        embedding: np.ndarray | None = None,
        sentence_embeddings: np.ndarray | None = None,
    ) -> WriteResult:
        """Admit, hold or refuse one candidate. Vectors may be precomputed (bulk loads, benchmarks)."""
        require_mutation(principal, Role.AGENT, Role.INTEGRATION, action="write memories")
        require_source_assertion(principal, request.source.kind)
        now = self.clock()
        policy = self.policies.for_tenant(principal.tenant_id)
        clean, candidate = prepare(request, policy, now)
        fingerprint = request_fingerprint(clean.model_dump(mode="json"))
        pending = False
        if wants_vector(candidate) and embedding is None:
            embedding, sentence_embeddings = self._embed(clean.content)
            pending = embedding is None
        ready = ReadyWrite(
            clean=clean,
            candidate=candidate,
            content_hash=content_hash(clean.subject_id, candidate.type.value, candidate.slot, clean.content),
            fingerprint=fingerprint,
            embedding=embedding,
            sentence_embeddings=sentence_embeddings,
            embedding_pending=pending,
        )
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                with self.store.tenant(principal.tenant_id) as session:
                    result = self._admit(
                        session, principal, ready, policy.near_duplicate_similarity, quota_policy=policy
                    )
                self.charge(principal, [clean], [result])
                return result
            except RetryableConflict:
                if attempt == MAX_ATTEMPTS:
                    raise
                logger.info("write retried after a concurrent conflict", extra={"attempt": attempt})
        raise AssertionError("unreachable")

    def storage_refusals(
        self, principal: Principal, policy: PolicyProfile, writes: Sequence[MemoryWrite]
    ) -> dict[str | None, RateLimited]:
        """The storage quotas these writes would break (services/quotas.py): a refusal per subject
        over its quota, and under None the tenant's (which applies to every write)."""
        if self.quotas is None or not writes:
            return {}
        refusals = self.quotas.storage_refusals(principal.tenant_id, policy, additions(writes))
        tenant_wide = refusals.pop(None, None)
        if tenant_wide is not None:
            return {**dict.fromkeys((w.subject_id for w in writes), tenant_wide), None: tenant_wide}
        return dict(refusals)

    def charge(
        self, principal: Principal, writes: Sequence[MemoryWrite], results: Sequence[WriteResult]
    ) -> None:
        """What was stored, counted against the tenant's cached usage."""
        if self.quotas is None:
            return
        stored = [
            w
            for w, r in zip(writes, results, strict=True)
            if r.memory is not None
            and not r.replayed
            and r.decision not in (Decision.DUPLICATE, Decision.REJECTED)
        ]
        self.quotas.charged(principal.tenant_id, additions(stored))

    def write_batch(
        self,
        principal: Principal,
        requests: list[MemoryWrite],
        *,
        embeddings: list[np.ndarray | None] | None = None,
        sentence_embeddings: list[np.ndarray | None] | None = None,
        field_prefix: str | None = "memories",
    ) -> list[WriteResult]:
        """Admit several candidates in one transaction, each decided as `write` decides it, in
        order (services/batch_admission.py): an import, a benchmark. A malformed candidate is a
        4xx naming `memories[index].field`, and nothing is written."""
        return admit_batch(
            self,
            principal,
            requests,
            embeddings=embeddings,
            sentence_embeddings=sentence_embeddings,
            field_prefix=field_prefix,
        )

    def write_many(
        self, principal: Principal, requests: list[MemoryWrite], *, refuse_invalid: bool = False
    ) -> list[WriteResult]:
        """Write several candidates of one caller (an extracted session, a benchmark's load) through
        the batched path: embedded in one call, admitted in one transaction, each decided on its own.

        With `refuse_invalid`, a candidate the gateway refuses as malformed (422/413: a preference
        without a slot, unstorable text) comes back as a refused result naming the field instead of
        raising, so one bad candidate does not stop the others. Other errors still raise."""
        return admit_batch(self, principal, requests, refuse_invalid=refuse_invalid, field_prefix=None)

    def _embed(self, content: str) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The memory's vector and its sentences' vectors, in one call; (None, None) defers indexing."""
        sentences = split_sentences(content)
        try:
            vectors = self.embedder.embed([content, *sentences])
        except Exception as exc:  # any embedder failure defers indexing, never loses the write
            logger.warning(
                "embedding deferred", extra={"embedder": self.embedder.name, "error": type(exc).__name__}
            )
            return None, None
        return vectors[0], vectors[1:]

    def _admit(
        self,
        session: TenantSession,
        principal: Principal,
        ready: ReadyWrite,
        near_similarity: float,
        *,
        quota_policy: PolicyProfile | None = None,
    ) -> WriteResult:
        """Steps 4-6 and persistence, in the caller's transaction: read what the store knows,
        decide (`domain.decision`), then write what was decided and reply. With `quota_policy`,
        a write past a storage quota is refused (429) in the same transaction, after a retry of a
        write already admitted has had its first answer."""
        key = ready.clean.idempotency_key
        if key:
            replay = _replayed(session, principal, key, ready.fingerprint)
            if replay is not None:
                return replay
        if quota_policy is not None and self.quotas is not None:
            refusals = self.quotas.storage_refusals(
                principal.tenant_id, quota_policy, additions([ready.clean]), session=session
            )
            if refusals:
                raise refusals.get(None) or next(iter(refusals.values()))
        context = _admission_context(session, ready, near_similarity)
        # Timestamp the record after the admission checks: it orders correctly against an erasure
        # or supersession that committed while this write was embedding.
        now = self.clock()
        record_id = new_id("mem")
        candidate = Candidate(ready.candidate, record_id, ready.content_hash, ready.embedding_pending)
        verdict = decide(candidate, context)
        record = verdict.duplicate
        if verdict.writes_record:
            record = build_record(principal, ready, verdict, record_id, now, self.embedder.name)
            _persist(session, ready, verdict, record, now)
        subject_id = ready.clean.subject_id
        session.append_events(
            [
                NewEvent(e.event_type.value, principal.sub, e.memory_id, subject_id, e.reason, e.payload)
                for e in verdict.events
            ]
        )
        # Withheld before the reply is saved: a replay of the key answers exactly what this caller saw.
        result = writer_reply(principal, verdict, record)
        if key:
            reply = persistable_reply(ready.fingerprint, result)
            session.save_idempotent_reply(key, reply, record.id if record else None, subject_id)
        logger.info(
            "memory write decided",
            extra={
                "decision": verdict.decision.value,
                "memory_id": record.id if record else None,
                "type": ready.candidate.type.value,
                "reasons": result.reasons,
            },
        )
        return result


def additions(writes: Sequence[MemoryWrite]) -> dict[str, Addition]:
    """What the writes would add per subject: one memory and its content's bytes each."""
    out: dict[str, Addition] = {}
    for w in writes:
        had = out.get(w.subject_id, Addition(0, 0))
        out[w.subject_id] = Addition(had.memories + 1, had.bytes + len(w.content.encode("utf-8")))
    return out


def _replayed(session: TenantSession, principal: Principal, key: str, fingerprint: str) -> WriteResult | None:
    """The reply saved under an idempotency key, replayed; the key reused for another request is 409."""
    prior = session.idempotent_reply(key)
    if prior is None:
        return None
    if prior.fingerprint != fingerprint:
        raise Conflict("idempotency_key was already used for a different request", field="idempotency_key")
    return replay_of(principal, prior)


def _admission_context(session: TenantSession, ready: ReadyWrite, near_similarity: float) -> AdmissionContext:
    """What the store knows about the candidate, under its subject's and slot's locks."""
    # Shared subject lock: an erasure's purge takes it exclusively, so no write slips past it.
    session.lock_subject(ready.clean.subject_id)
    if ready.candidate.slot:
        session.lock_slot(ready.clean.subject_id, ready.candidate.slot)
    return read_admission_context(session, ready, near_similarity)


def _persist(
    session: TenantSession,
    ready: ReadyWrite,
    verdict: AdmissionDecision,
    record: MemoryRecord,
    now: datetime,
) -> None:
    """Write the decided record: the version it supersedes closed first, the record it contests marked."""
    if verdict.supersedes is not None:
        session.supersede(verdict.supersedes.id, record.id, now)
    session.insert_record(record, ready.embedding if verdict.keep_vector else None)
    if (
        verdict.contests is not None
    ):  # the product requirements: both records marked, both confidences lowered
        session.mark_contested([verdict.contests.id, record.id], ready.candidate.contest_confidence_factor)
    sentences = ready.sentence_embeddings
    if verdict.keep_vector and sentences is not None and len(sentences):
        session.insert_sentences(record.id, record.subject_id, sentences)


# What a tombstone's refusal of a single write says: the text was deleted or erased before, and it
# does not come back (nothing is written). A batch and the MCP tools report it as a `rejected` decision.
_TOMBSTONE_REFUSALS = {
    "tombstoned": "this content was deleted or erased before: a tombstone refuses its return",
    "erasure_in_progress": "the subject is being erased: nothing is admitted until the erasure ends",
}


def refused_by_tombstone(result: WriteResult) -> Conflict | None:
    """The 409 a single write answers when a tombstone (or a running erasure) refused it."""
    if result.decision is not Decision.REJECTED:
        return None
    for reason, message in _TOMBSTONE_REFUSALS.items():
        if reason in result.reasons:
            return Conflict(message, reason=reason)
    return None
