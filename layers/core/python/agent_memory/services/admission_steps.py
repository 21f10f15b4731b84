"""The steps every admission shares, one write at a time (services/write_gateway.py) or in a
batch (services/batch_admission.py, services/batch_run.py): steps 1-3 (`prepare`), the candidate
made ready, the admission context read from the store, the record a decision writes and the reply
its writer is told. Both paths import them from here, so neither reaches into the other.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from agent_memory.domain.admission import RELATIVE_REASONS, Classified, classify
from agent_memory.domain.commitments import opening_value
from agent_memory.domain.decision import AdmissionContext, AdmissionDecision, reaches_near_duplicate
from agent_memory.domain.enums import DECISION_STATUS, Decision, Flag, MemoryType
from agent_memory.domain.errors import InvalidRequest, PayloadTooLarge, RateLimited
from agent_memory.domain.memory_types import TYPE_SPECS
from agent_memory.domain.policy import PolicyProfile
from agent_memory.domain.records import MAX_CONTENT_CHARS, MemoryRecord, MemoryWrite, Principal, WriteResult
from agent_memory.domain.sanitize import (
    PERSONAL_KINDS,
    identifier_kinds,
    mask_identifiers,
    mask_value,
    unstorable_value,
)
from agent_memory.domain.screening import screen_for_instructions
from agent_memory.ports.embedder import Embedder
from agent_memory.ports.store import IdempotentReply, MemoryStore, TenantSession
from agent_memory.services.authorization import cleared_for
from agent_memory.services.policies import PolicyRegistry

MAX_VALUE_BYTES = 16_384


class Admitter(Protocol):
    """What a batch needs of the gateway admitting it (`WriteGateway` is one)."""

    store: MemoryStore
    embedder: Embedder
    policies: PolicyRegistry
    clock: Callable[[], datetime]

    def storage_refusals(
        self, principal: Principal, policy: PolicyProfile, writes: Sequence[MemoryWrite]
    ) -> dict[str | None, RateLimited]:
        """The storage quotas these writes would break, per subject (None: the tenant's)."""
        ...

    def charge(
        self, principal: Principal, writes: Sequence[MemoryWrite], results: Sequence[WriteResult]
    ) -> None:
        """What was stored, counted against the tenant's usage."""
        ...


@dataclass(frozen=True, eq=False)
class ReadyWrite:
    """One candidate after steps 1-3, hashed and embedded (or its vector deferred)."""

    clean: MemoryWrite
    candidate: Classified
    content_hash: str
    fingerprint: str  # of the cleaned request: an idempotency key replays only the same request
    embedding: np.ndarray | None
    sentence_embeddings: np.ndarray | None
    embedding_pending: bool


def build_record(
    principal: Principal,
    ready: ReadyWrite,
    verdict: AdmissionDecision,
    record_id: str,
    now: datetime,
    embedder_name: str,
) -> MemoryRecord:
    """The record a decision writes (a rejected one keeps its reason and hash, never its content);
    its vector is of `embedder_name`'s model unless indexing was deferred."""
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
        embedding_model=None if Flag.EMBEDDING_PENDING.value in verdict.flags else embedder_name,
        # Admitted from a verified source: confirmed now. Otherwise never confirmed yet.
        last_validated_at=now if verdict.validated_now else None,
        needs_revalidation=verdict.needs_revalidation,
    )


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


def replay_of(principal: Principal, prior: IdempotentReply) -> WriteResult:
    """A saved reply as the result of its replay (the batch path replays through it too)."""
    replay = WriteResult.model_validate({**_reply_to_result(prior.response), "replayed": True})
    if (
        replay.decision is Decision.DUPLICATE
        and replay.memory is not None
        and not cleared_for(principal, replay.memory.sensitivity)
    ):
        replay.withheld = [replay.memory.id]
    return replay


def persistable_reply(fingerprint: str, result: WriteResult) -> IdempotentReply:
    """What is saved under a write's idempotency key: what its caller saw."""
    return IdempotentReply(fingerprint, result.public_view(), 201)


def read_admission_context(
    session: TenantSession, ready: ReadyWrite, near_similarity: float
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


def wants_vector(candidate: Classified) -> bool:
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
