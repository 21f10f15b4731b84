"""Admission as one pure decision (docs/rules.md, "Admission pipeline", steps 4-6).

`decide` takes a classified candidate and what the store found about it (the
active record of its slot, a record with the same content or nearly the same
meaning, whether its subject is erased or being erased) and says what to do:
the decision and its reasons, which record it supersedes, contests or
duplicates, the flags of the record it writes, whether that record keeps its
vector, and the audit events to append, as plain data. The write gateway reads
the context inside the write's transaction and persists what `decide` says.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from agent_memory.domain.admission import Classified, ConflictOutcome, resolve_conflict
from agent_memory.domain.enums import Decision, EventType, Flag, MemoryType
from agent_memory.domain.memory_types import TYPE_SPECS
from agent_memory.domain.records import MemoryRecord

EVENT_FOR_DECISION: dict[Decision, EventType] = {
    Decision.ADMITTED: EventType.CREATED,
    Decision.PENDING_APPROVAL: EventType.CANDIDATE_CREATED,
    Decision.CONTESTED: EventType.CONFLICT,
    Decision.QUARANTINED: EventType.QUARANTINED,
    Decision.REJECTED: EventType.REJECTED,
    Decision.DUPLICATE: EventType.REJECTED,
}
# Decisions whose record is served or reviewed: it keeps its vector.
_VECTOR_DECISIONS = frozenset({Decision.ADMITTED, Decision.PENDING_APPROVAL, Decision.CONTESTED})


@dataclass(frozen=True)
class AdmissionContext:
    """What the store knows that admission needs (steps 4-6), read under the subject's lock."""

    active: MemoryRecord | None
    duplicate: MemoryRecord | None
    tombstoned: bool
    erasing: bool = False
    # Looked up by similarity only when the cascade gets that far (`reaches_near_duplicate`)
    # and the candidate has a vector.
    near_duplicate: MemoryRecord | None = None


@dataclass(frozen=True)
class Candidate:
    """A classified write, and what the gateway already knows about the record it would write."""

    classified: Classified
    record_id: str  # the id of the record, if one is written
    content_hash: str
    embedding_pending: bool = False  # it wants a vector and the embedder was unavailable


@dataclass(frozen=True)
class PlannedEvent:
    """An audit event to append; the gateway adds the actor and the subject."""

    event_type: EventType
    memory_id: str | None
    reason: str
    payload: dict[str, Any] | None = None


@dataclass(frozen=True)
class AdmissionDecision:
    """What one write does, decided before anything is written."""

    decision: Decision
    reasons: tuple[str, ...]
    memory_id: str | None  # the record the reply names: the one written, or the duplicate met
    writes_record: bool
    flags: tuple[str, ...]  # of the record written
    keep_vector: bool
    supersedes: MemoryRecord | None = None
    conflicts_with: MemoryRecord | None = None
    duplicate: MemoryRecord | None = None
    contests: MemoryRecord | None = None  # the active record marked contested alongside the new one
    validated_now: bool = False  # admitted from a verified source: confirmed as of admission
    needs_revalidation: bool = False  # admitted already past its revalidation age
    events: tuple[PlannedEvent, ...] = ()


def confirms_with_more_authority(candidate: Classified, existing: MemoryRecord) -> bool:
    """Same content from a stronger source is a confirmation: it supersedes rather than dedupes."""
    return candidate.authority.rank > existing.authority.rank and candidate.final is None


def keeps_vector(decision: Decision, memory_type: MemoryType) -> bool:
    """A record served or reviewed keeps its vector; so does a quarantined one whose type's row
    says `vector_in_quarantine` (observations: corroboration is by similarity)."""
    return decision in _VECTOR_DECISIONS or (
        decision is Decision.QUARANTINED and TYPE_SPECS[memory_type].vector_in_quarantine
    )


def reaches_near_duplicate(candidate: Classified, context: AdmissionContext) -> bool:
    """Whether the cascade gets to the similarity check: only then is a near duplicate looked up."""
    return _before_similarity(candidate, context) is None


def decide(candidate: Candidate, context: AdmissionContext) -> AdmissionDecision:
    """Steps 4-6: dedupe, tombstone check, authority-ranked conflict resolution, in that order.

    Pure: the same candidate and context always give the same decision, and nothing is read or
    written here. An erased subject's write leaves no record behind, only its audit event."""
    c = candidate.classified
    outcome, duplicate = _cascade(c, context)
    decision = outcome.decision
    reasons = (*c.reasons, *outcome.reasons)
    writes = decision is not Decision.DUPLICATE and not (context.tombstoned or context.erasing)
    supersedes, contests = outcome.supersedes, outcome.contests
    flags = [*c.flags]
    if candidate.embedding_pending:
        flags.append(Flag.EMBEDDING_PENDING.value)
    # The product requirements: both records of a lower-authority contradiction carry the marker until a reviewer
    # decides; a new version of a record still contested inherits it (the review still waits).
    if contests is not None or (supersedes is not None and Flag.CONTESTED.value in supersedes.flags):
        flags.append(Flag.CONTESTED.value)
    verdict = AdmissionDecision(
        decision=decision,
        reasons=reasons,
        memory_id=candidate.record_id if writes else (duplicate.id if duplicate else None),
        writes_record=writes,
        flags=tuple(flags),
        keep_vector=writes and keeps_vector(decision, c.type),
        supersedes=supersedes,
        conflicts_with=outcome.conflicts_with,
        duplicate=duplicate,
        contests=contests,
        validated_now=decision is Decision.ADMITTED and c.last_validated_at is not None,
        needs_revalidation=decision is Decision.ADMITTED and c.needs_revalidation,
    )
    return _with_events(verdict, candidate)


def _before_similarity(c: Classified, context: AdmissionContext) -> ConflictOutcome | None:
    """The decisions that need neither a vector nor the active record, in the pipeline's order."""
    if c.final is Decision.REJECTED:
        return ConflictOutcome(Decision.REJECTED)
    if context.tombstoned or context.erasing:
        return ConflictOutcome(
            Decision.REJECTED, ("tombstoned" if context.tombstoned else "erasure_in_progress",)
        )
    if context.duplicate is not None and not confirms_with_more_authority(c, context.duplicate):
        return ConflictOutcome(Decision.DUPLICATE, ("duplicate_content",))
    if c.final is Decision.QUARANTINED:
        return ConflictOutcome(Decision.QUARANTINED)
    return None


def _cascade(c: Classified, context: AdmissionContext) -> tuple[ConflictOutcome, MemoryRecord | None]:
    """The outcome, and the record it duplicates (if it is a duplicate)."""
    early = _before_similarity(c, context)
    if early is not None:
        return early, context.duplicate if early.decision is Decision.DUPLICATE else None
    near = context.near_duplicate
    if near is not None and not confirms_with_more_authority(c, near):
        return ConflictOutcome(Decision.DUPLICATE, ("near_duplicate",)), near
    return resolve_conflict(c, context.active), None


def _with_events(verdict: AdmissionDecision, candidate: Candidate) -> AdmissionDecision:
    """The audit events of a decision: its own first, then what it does to other records."""
    c, new_id = candidate.classified, candidate.record_id
    payload: dict[str, Any] = {
        "decision": verdict.decision.value,
        "type": c.type.value,
        "slot": c.slot,
        "authority": c.authority.value,
        "content_hash": candidate.content_hash,
        "reasons": list(verdict.reasons),
    }
    if verdict.conflicts_with is not None:
        payload["conflicts_with"] = verdict.conflicts_with.id
    reason = verdict.reasons[0] if verdict.reasons else verdict.decision.value
    events = [PlannedEvent(EVENT_FOR_DECISION[verdict.decision], verdict.memory_id, reason, payload)]
    if verdict.writes_record:
        if verdict.supersedes is not None:
            by = {"superseded_by": new_id, "slot": c.slot}
            events.append(
                PlannedEvent(EventType.SUPERSEDED, verdict.supersedes.id, "superseded_by_newer_version", by)
            )
        if verdict.contests is not None:
            # the product requirements: both records' confidence multiplied by the policy's factor until a review
            marker = {
                "contested": True,
                "contested_by": new_id,
                "slot": c.slot,
                "confidence_factor": c.contest_confidence_factor,
            }
            events.append(
                PlannedEvent(EventType.UPDATED, verdict.contests.id, "contested_by_lower_authority", marker)
            )
        if verdict.needs_revalidation:
            due = {"type": c.type.value, "effective_at": c.effective_at.isoformat()}
            events.append(PlannedEvent(EventType.REVALIDATION_DUE, new_id, "revalidation_age_reached", due))
        if verdict.keep_vector and Flag.EMBEDDING_PENDING.value in verdict.flags:
            events.append(PlannedEvent(EventType.EMBEDDING_DEFERRED, new_id, "embedder_unavailable"))
    return replace(verdict, events=tuple(events))
