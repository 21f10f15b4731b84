"""The write gateway: the only path that writes memories.

Pipeline (docs/rules.md, order matters): sanitize -> screen -> classify -> dedupe
-> tombstone check -> authority-ranked conflict resolution -> persist record,
events and embedding in one transaction, idempotently. Steps 1-3 (`prepare`) and
the decision of steps 4-6 (`domain.decision.decide`) are pure; this module reads
what they need from the store and writes what they decide.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from agent_memory.domain.admission import RELATIVE_REASONS, Classified, classify
from agent_memory.domain.commitments import opening_value
from agent_memory.domain.decision import (
    AdmissionContext,
    AdmissionDecision,
    Candidate,
    decide,
    reaches_near_duplicate,
)
from agent_memory.domain.enums import DECISION_STATUS, Decision, Flag, MemoryType, Role
from agent_memory.domain.errors import Conflict, InvalidRequest, PayloadTooLarge, RateLimited
from agent_memory.domain.hashing import content_hash, request_fingerprint
from agent_memory.domain.memory_types import TYPE_SPECS
from agent_memory.domain.policy import PolicyProfile
from agent_memory.domain.records import (
    MAX_CONTENT_CHARS,
    MemoryRecord,
    MemoryWrite,
    Principal,
    WriteResult,
    new_id,
    utcnow,
)
from agent_memory.domain.sanitize import (
    PERSONAL_KINDS,
    identifier_kinds,
    mask_identifiers,
    mask_value,
    unstorable_value,
)
from agent_memory.domain.screening import screen_for_instructions
from agent_memory.domain.sentences import split_sentences
from agent_memory.observability import logger
from agent_memory.ports.embedder import Embedder
from agent_memory.ports.store import IdempotentReply, MemoryStore, NewEvent, RetryableConflict, TenantSession
from agent_memory.services.authorization import cleared_for, require_mutation, require_source_assertion
from agent_memory.services.policies import PolicyRegistry
from agent_memory.services.quotas import Addition, Quotas

MAX_VALUE_BYTES = 16_384
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
        refusal = self.storage_refusals(principal, policy, [clean]).get(clean.subject_id)
        if refusal is not None:
            # Over quota, a retry of a write that was already admitted still gets its first answer.
            replay = self._replay(principal, clean.idempotency_key, fingerprint)
            if replay is None:
                raise refusal
            return replay
        pending = False
        if _wants_vector(candidate) and embedding is None:
            embedding, sentence_embeddings = self._embed(clean.content)
            pending = embedding is None
        ready = _ReadyWrite(
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
                    result = self._admit(session, principal, ready, policy.near_duplicate_similarity)
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

    def _replay(self, principal: Principal, key: str | None, fingerprint: str) -> WriteResult | None:
        if not key:
            return None
        with self.store.tenant(principal.tenant_id) as session:
            return _replayed(session, principal, key, fingerprint)

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
        from agent_memory.services.batch_admission import admit_batch

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
        from agent_memory.services.batch_admission import admit_batch

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
        self, session: TenantSession, principal: Principal, ready: _ReadyWrite, near_similarity: float
    ) -> WriteResult:
        """Steps 4-6 and persistence, in the caller's transaction: read what the store knows,
        decide (`domain.decision`), then write what was decided and reply."""
        key = ready.clean.idempotency_key
        if key:
            replay = _replayed(session, principal, key, ready.fingerprint)
            if replay is not None:
                return replay
        context = _admission_context(session, ready, near_similarity)
        # Timestamp the record after the admission checks: it orders correctly against an erasure
        # or supersession that committed while this write was embedding.
        now = self.clock()
        record_id = new_id("mem")
        candidate = Candidate(ready.candidate, record_id, ready.content_hash, ready.embedding_pending)
        verdict = decide(candidate, context)
        record = verdict.duplicate
        if verdict.writes_record:
            record = self._build_record(principal, ready, verdict, record_id, now)
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
            reply = _persistable_reply(ready.fingerprint, result)
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

    def _build_record(
        self,
        principal: Principal,
        ready: _ReadyWrite,
        verdict: AdmissionDecision,
        record_id: str,
        now: datetime,
    ) -> MemoryRecord:
        clean, candidate, supersedes = ready.clean, ready.candidate, verdict.supersedes
        rejected = verdict.decision is Decision.REJECTED
        return MemoryRecord(
            id=record_id,
            tenant_id=principal.tenant_id,
            subject_id=clean.subject_id,
            scope=clean.scope,
            ticket_id=clean.ticket_id,
            session_id=clean.session_id,
            type=candidate.type,
            category=candidate.category,
            slot=candidate.slot,
            # Rejected candidates keep their reason and hash, never their content.
            content="" if rejected else clean.content,
            value={} if rejected else clean.value,
            source=clean.source,
            extractor=clean.extractor,
            extractor_version=clean.extractor_version,
            actor=clean.actor or principal.sub,
            authority=candidate.authority,
            confidence=clean.confidence,
            confidence_basis=clean.confidence_basis,
            importance=clean.importance,
            sensitivity=candidate.sensitivity,
            status=DECISION_STATUS[verdict.decision],
            flags=list(verdict.flags),
            reasons=list(verdict.reasons),
            created_at=now,
            effective_at=candidate.effective_at,
            expires_at=candidate.expires_at,
            version=(supersedes.version + 1) if supersedes else 1,
            supersedes_id=supersedes.id if supersedes else None,
            lineage_keys=sorted(
                set(clean.lineage_keys) | ({f"session:{clean.session_id}"} if clean.session_id else set())
            ),
            content_hash=ready.content_hash,
            embedding_model=None if Flag.EMBEDDING_PENDING.value in verdict.flags else self.embedder.name,
            # Admitted from a verified source: confirmed now. Otherwise never confirmed yet.
            last_validated_at=now if verdict.validated_now else None,
            needs_revalidation=verdict.needs_revalidation,
        )


@dataclass(frozen=True, eq=False)
class _ReadyWrite:
    """One candidate after steps 1-3, hashed and embedded (or its vector deferred)."""

    clean: MemoryWrite
    candidate: Classified
    content_hash: str
    fingerprint: str  # of the cleaned request: an idempotency key replays only the same request
    embedding: np.ndarray | None
    sentence_embeddings: np.ndarray | None
    embedding_pending: bool


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
    return _replay_of(principal, prior)


def writer_reply(
    principal: Principal, verdict: AdmissionDecision, record: MemoryRecord | None
) -> WriteResult:
    """What the writer is told of a decision. It sees the record it wrote (its own words, masked),
    but not another record this write met above its clearance (the one it duplicates, supersedes or
    conflicts with): not its id, and no reason that describes it (`RELATIVE_REASONS`: "supersedes
    an older version", "lower authority than the active record"), so a write cannot probe a slot
    it may not read. The audit chain keeps the whole decision."""
    related = (verdict.duplicate, verdict.supersedes, verdict.conflicts_with)
    withheld = [r.id for r in related if r is not None and not cleared_for(principal, r.sensitivity)]
    reasons = list(verdict.reasons)
    if any(r is not None and r.id in withheld for r in (verdict.supersedes, verdict.conflicts_with)):
        reasons = [r for r in reasons if r not in RELATIVE_REASONS]
    superseded = [verdict.supersedes.id] if verdict.supersedes is not None else []
    result = WriteResult(decision=verdict.decision, reasons=reasons, memory=record, superseded=superseded)
    result.withheld = withheld
    return result


def _replay_of(principal: Principal, prior: IdempotentReply) -> WriteResult:
    """A saved reply as the result of its replay (the batch path replays through it too)."""
    replay = WriteResult.model_validate({**_reply_to_result(prior.response), "replayed": True})
    if (
        replay.decision is Decision.DUPLICATE
        and replay.memory is not None
        and not cleared_for(principal, replay.memory.sensitivity)
    ):
        replay.withheld = [replay.memory.id]
    return replay


def _persistable_reply(fingerprint: str, result: WriteResult) -> IdempotentReply:
    """What is saved under a write's idempotency key: what its caller saw."""
    return IdempotentReply(fingerprint, result.public_view(), 201)


def _admission_context(
    session: TenantSession, ready: _ReadyWrite, near_similarity: float
) -> AdmissionContext:
    """What the store knows about the candidate, under its subject's and slot's locks."""
    # Shared subject lock: an erasure's purge takes it exclusively, so no write slips past it.
    session.lock_subject(ready.clean.subject_id)
    if ready.candidate.slot:
        session.lock_slot(ready.clean.subject_id, ready.candidate.slot)
    return read_admission_context(session, ready, near_similarity)


def read_admission_context(
    session: TenantSession, ready: _ReadyWrite, near_similarity: float
) -> AdmissionContext:
    """The candidate's admission context as the store holds it now (the caller holds the locks).
    The similarity search runs only when the cascade gets that far and the candidate has a vector."""
    clean, candidate = ready.clean, ready.candidate
    context = session.admission_context(
        subject_id=clean.subject_id,
        memory_type=candidate.type.value,
        slot=candidate.slot,
        content_hash=ready.content_hash,
        lineage_keys=clean.lineage_keys,
    )
    if ready.embedding is None or not reaches_near_duplicate(candidate, context):
        return context
    near = session.near_duplicate(
        subject_id=clean.subject_id,
        memory_type=candidate.type.value,
        slot=candidate.slot,
        embedding=ready.embedding,
        min_similarity=near_similarity,
    )
    return replace(context, near_duplicate=near)


def _persist(
    session: TenantSession,
    ready: _ReadyWrite,
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


def prepare(request: MemoryWrite, policy: PolicyProfile, now: datetime) -> tuple[MemoryWrite, Classified]:
    """Steps 1-3, pure: sanitize, screen for instructions, classify. The database steps follow."""
    clean, masked_kinds = sanitize(request, keep=policy.kept_identifier_classes())
    if clean.type is MemoryType.COMMITMENT:
        clean = clean.model_copy(update={"value": opening_value(clean.value)})
    # Everything a context line shows is screened, each piece as its own line, as written (not as
    # JSON, whose escapes and quoting would hide a disguise or a leading "system:"): the content,
    # every key and string of the value, and where it came from.
    shown = [clean.content, *_strings(clean.value), clean.source.system or "", clean.source.reference or ""]
    screening = screen_for_instructions("\n".join(shown))
    signals = screening.signals + (("caller_flag",) if "untrusted_instruction" in clean.flags else ())
    candidate = classify(clean, policy=policy, now=now, masked_kinds=masked_kinds, injection_signals=signals)
    return clean, candidate


def _strings(value: Any) -> Iterator[str]:
    """Every key and string inside a JSON-like value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _wants_vector(candidate: Classified) -> bool:
    """Admissible candidates get a vector; so do quarantined observations (corroboration is by
    similarity): the types whose row says `vector_in_quarantine`."""
    return candidate.final is None or (
        candidate.final is Decision.QUARANTINED and TYPE_SPECS[candidate.type].vector_in_quarantine
    )


def sanitize(request: MemoryWrite, keep: frozenset[str] = frozenset()) -> tuple[MemoryWrite, list[str]]:
    """Step 1 (SEC-01): mask identifiers in every free-text field before anything else sees them;
    the personal identifier classes in `keep` (the tenant's policy) stay in content and value."""
    if len(request.content) > MAX_CONTENT_CHARS:
        raise PayloadTooLarge(f"content exceeds {MAX_CONTENT_CHARS} characters", field="content")
    if len(json.dumps(request.value)) > MAX_VALUE_BYTES:
        raise PayloadTooLarge(f"value exceeds {MAX_VALUE_BYTES} bytes", field="value")
    # Every path in (HTTP, the extraction worker, the CLI): the database cannot store these.
    # (Python mode: JSON mode turns NaN into null and would hide it; jsonb refuses NaN.)
    unstorable = unstorable_value(request.model_dump())
    if unstorable is not None:
        raise InvalidRequest(f"{unstorable[0]}: {unstorable[1]}", field=unstorable[0])
    content = mask_identifiers(request.content, keep=keep)
    value, value_kinds = mask_value(request.value, keep=keep)
    # Cards, bank and national ids flag the record and raise its sensitivity; the personal classes
    # (e-mail, phone, date of birth, passport) are masked or kept by policy and change neither.
    kinds = [k for k in content.kinds + value_kinds if k not in PERSONAL_KINDS.values()]
    # The short fields are MaskedText: masked when the request was read. Their identifiers still
    # count, so the record is flagged and its sensitivity raised as for one found in the content.
    for short in (
        request.source.system,
        request.source.reference,
        request.ticket_id,
        request.confidence_basis,
    ):
        kinds += identifier_kinds(short)
    clean = request.model_copy(update={"content": content.text, "value": value})
    return clean, kinds


def _reply_to_result(response: dict[str, object]) -> dict[str, object]:
    return {
        "decision": response["decision"],
        "reasons": response["reasons"],
        "memory": _strip_view(response.get("memory")),
        "superseded": response.get("superseded", []),
    }


# What a memory's view adds to its record (records.MemoryRecord.public_view), derived again on replay.
_DERIVED_VIEW_FIELDS = frozenset({"verified", "section"})


def _strip_view(memory: object) -> object:
    if isinstance(memory, dict):
        return {k: v for k, v in memory.items() if k not in _DERIVED_VIEW_FIELDS}
    return memory


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
