"""The pure rules of admission (docs/rules.md, "Admission pipeline" and "Authority").

`classify` turns a sanitized, screened write into a typed candidate or a final
decision; `resolve_conflict` decides what the candidate does to the active
record of its slot. Both are pure: the write gateway feeds them what the
store found and persists what they decide.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from agent_memory.domain.commitments import closed_at, retention_end
from agent_memory.domain.enums import (
    VERIFIED_AUTHORITIES,
    Authority,
    Decision,
    FactCategory,
    Flag,
    MemoryType,
    Scope,
    Sensitivity,
)
from agent_memory.domain.errors import InvalidRequest
from agent_memory.domain.memory_types import APPEND_ONLY_TYPES, SLOT_REQUIRED_TYPES, TYPE_SPECS
from agent_memory.domain.policy import PolicyProfile
from agent_memory.domain.records import MemoryRecord, MemoryWrite
from agent_memory.domain.revalidation import revalidation_due
from agent_memory.domain.sensitive import SENSITIVE_REASON, sensitive_categories

# A date a little ahead of the service's clock is a caller's clock or time zone; further ahead, it
# is a date the caller cannot know yet, and it would outrank every later write of its slot.
MAX_FUTURE_EFFECTIVE = timedelta(days=1)

# A preference or fact may only come from what the customer or a system said;
# an inference about them is an observation (a quarantined proposal).
INFERENCE_AUTHORITIES = frozenset({Authority.AGENT_INFERENCE})


@dataclass
class Classified:
    """A candidate after step 3 (classify); `final` short-circuits the pipeline."""

    type: MemoryType
    category: str
    slot: str | None
    authority: Authority
    sensitivity: Sensitivity
    effective_at: datetime
    expires_at: datetime | None
    flags: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    final: Decision | None = None
    needs_approval: bool = False
    # Why it waits for a reviewer: a commercial term (INV-MEM-01) or a sensitive personal detail.
    approval_reason: str = "commercial_term_requires_approval"
    # Admission records what a source said and when it held; only a verified source (the system
    # of record, a reviewer) confirms it as of now. A record already past its revalidation age
    # (a backdated fact) is flagged from the start.
    last_validated_at: datetime | None = None
    needs_revalidation: bool = False
    # The product requirements: a contest multiplies both records' confidence by this (the policy's factor).
    contest_confidence_factor: float = 1.0


def default_category(memory_type: MemoryType) -> str:
    return memory_type.value.upper()


def classify(
    write: MemoryWrite,
    *,
    policy: PolicyProfile,
    now: datetime,
    masked_kinds: list[str],
    injection_signals: tuple[str, ...],
) -> Classified:
    """Step 3: type, category, slot, sensitivity, retention; reject what is not worth keeping."""
    _check_shape(write)
    category = _validated_category(write)
    memory_type, slot, authority = write.type, write.slot, write.source.kind
    reasons: list[str] = []

    # Commercial terms stay facts whoever mentions them: they wait for a reviewer anyway.
    held_for_approval = category in policy.approval_required_categories
    if memory_type in SLOT_REQUIRED_TYPES and authority in INFERENCE_AUTHORITIES and not held_for_approval:
        # "only an explicit statement by the customer (an inference becomes an observation)"
        reasons.append(f"{memory_type.value}_inferred_not_stated")
        memory_type, category, slot = MemoryType.OBSERVATION, default_category(MemoryType.OBSERVATION), None

    # The product requirements: "sensitive personal detail -> restricted / confirmation"; the product requirements: "restricted
    # retention for sensitive data".
    sensitive = sensitive_categories(write.content) if policy.restrict_sensitive_details else ()
    if sensitive:
        reasons.append(SENSITIVE_REASON)  # which category stays out of reasons and the audit
    # A sensitive detail waits for the customer's confirmation (a `customer_confirmed` source) or a
    # reviewer's; a commercial term for a reviewer's.
    needs_approval = (held_for_approval and authority.rank < Authority.HUMAN_VERIFIED.rank) or (
        bool(sensitive) and authority.rank < Authority.CUSTOMER_CONFIRMED.rank
    )
    unverified = TYPE_SPECS[memory_type].bounded_when_unverified and (
        needs_approval or authority.rank <= Authority.CUSTOMER_CLAIM.rank
    )
    effective_at, expires_at = _dates(
        write, memory_type, policy, now, unverified=unverified, sensitive=bool(sensitive)
    )
    final = _verdict(
        write, memory_type, slot, category, policy, injection_signals, expires_at, now, reasons=reasons
    )
    flags = [Flag.IDENTIFIER_MASKED.value] if masked_kinds else []
    if injection_signals:
        flags.append(Flag.UNTRUSTED_INSTRUCTION.value)
    last_validated_at = now if authority in VERIFIED_AUTHORITIES else None
    return Classified(
        type=memory_type,
        category=category,
        slot=slot,
        authority=authority,
        sensitivity=Sensitivity.RESTRICTED
        if sensitive
        else _sensitivity(write, category, masked_kinds, policy),
        effective_at=effective_at,
        expires_at=expires_at,
        flags=flags,
        reasons=reasons,
        final=final,
        needs_approval=needs_approval,
        approval_reason=SENSITIVE_REASON
        if sensitive and not held_for_approval
        else Classified.approval_reason,
        last_validated_at=last_validated_at,
        needs_revalidation=revalidation_due(memory_type, slot, effective_at, last_validated_at, policy, now),
        contest_confidence_factor=policy.contest_confidence_factor,
    )


def _check_shape(write: MemoryWrite) -> None:
    """Slots where the type needs one (and none where it is append-only); a ticket for ticket scope."""
    memory_type = write.type
    if memory_type in SLOT_REQUIRED_TYPES and not write.slot:
        raise InvalidRequest(
            f"a {memory_type.value} needs a slot (the key of its one current value)", field="slot"
        )
    if memory_type in APPEND_ONLY_TYPES and write.slot:
        raise InvalidRequest(f"{memory_type.value} is append-only and takes no slot", field="slot")
    if write.scope is Scope.TICKET and not (write.ticket_id or "").strip():
        # a ticket's memory is served for that ticket only and ends with it: it must name one
        raise InvalidRequest("a memory with scope ticket needs its ticket_id", field="ticket_id")


def _dates(
    write: MemoryWrite,
    memory_type: MemoryType,
    policy: PolicyProfile,
    now: datetime,
    *,
    unverified: bool,
    sensitive: bool = False,
) -> tuple[datetime, datetime | None]:
    """When the memory takes effect and when it expires (a closed commitment: its retention after);
    `unverified`: a note below verification, kept at most the policy's unverified_max_ttl_days;
    `sensitive`: a sensitive personal detail, kept at most the policy's sensitive_retention_days."""
    effective_at = write.effective_at or now
    if effective_at > now + MAX_FUTURE_EFFECTIVE:
        raise InvalidRequest(
            "effective_at may lie at most one day after now (when the memory is admitted)",
            field="effective_at",
        )
    expires_at = _expiry(
        memory_type, effective_at, write.expires_at, policy, now, unverified=unverified, sensitive=sensitive
    )
    closed = closed_at(write.value) if memory_type is MemoryType.COMMITMENT else None
    if closed is not None and not effective_at <= closed <= now:
        raise InvalidRequest(
            "value.closed_at lies between the commitment's effective date and now", field="value.closed_at"
        )
    if closed is not None:  # a commitment recorded as already closed: kept for the retention after it
        end = retention_end(closed, policy)
        expires_at = end if expires_at is None else min(expires_at, end)
    return effective_at, expires_at


def _verdict(
    write: MemoryWrite,
    memory_type: MemoryType,
    slot: str | None,
    category: str,
    policy: PolicyProfile,
    injection_signals: tuple[str, ...],
    expires_at: datetime | None,
    now: datetime,
    *,
    reasons: list[str],
) -> Decision | None:
    """The decision classification alone settles (None: the later steps decide), each reason
    appended in the order the rules apply."""
    final: Decision | None = None
    if TYPE_SPECS[memory_type].quarantined:
        reasons.append(f"{memory_type.value}_quarantined")
        final = Decision.QUARANTINED
    # The system of record owns these slots; a conversational commercial term (an SLA promise) is still
    # held for review rather than dropped, and the live value wins at retrieval either way.
    if (
        slot
        and slot in policy.sor_slot_fields
        and write.source.kind is not Authority.SYSTEM_OF_RECORD
        and category not in policy.approval_required_categories
    ):
        reasons.append("owned_by_system_of_record")
        final = Decision.REJECTED
    if TYPE_SPECS[memory_type].needs_confirmed_outcome and not _outcome_confirmed(write):
        reasons.append("outcome_not_confirmed")
        final = Decision.REJECTED
    if injection_signals:
        reasons.append("untrusted_instruction:" + ",".join(injection_signals))
        if final is not Decision.REJECTED:
            final = Decision.QUARANTINED
    # The product requirements: "everything else below a confidence threshold ... is not retrievable": not stored.
    # A commercial term is the exception: a reviewer decides it whatever its confidence (INV-MEM-01),
    # so a low-confidence mention is held, never silently dropped.
    if (
        final is not Decision.QUARANTINED
        and category not in policy.approval_required_categories
        and write.confidence < policy.min_confidence_for(memory_type)
    ):
        reasons.append("below_confidence_threshold")
        final = Decision.REJECTED
    if final is None and expires_at is not None and expires_at <= now:
        reasons.append("already_expired")
        final = Decision.REJECTED
    return final


def _validated_category(write: MemoryWrite) -> str:
    if write.type is MemoryType.FACT:
        valid = {c.value for c in FactCategory}
        if write.category not in valid:
            raise InvalidRequest(f"a fact needs a category, one of {sorted(valid)}", field="category")
        return write.category
    expected = default_category(write.type)
    if write.category not in (None, expected):
        raise InvalidRequest(f"a {write.type.value} has category {expected}", field="category")
    return expected


def _outcome_confirmed(write: MemoryWrite) -> bool:
    return (
        write.source.kind.rank >= Authority.CONFIRMED_OUTCOME.rank
        or write.value.get("outcome_confirmed") is True
    )


def _expiry(
    memory_type: MemoryType,
    effective_at: datetime,
    requested: datetime | None,
    policy: PolicyProfile,
    now: datetime,
    *,
    unverified: bool,
    sensitive: bool = False,
) -> datetime | None:
    """The latest a record may live: its type's TTL from the effective date (never from later than
    admission), and the hard bounds from admission whatever `effective_at` says: the type's
    (INV-MEM-02: sentiment 180 days), for an unverified note the policy's unverified bound
    (INV-MEM-02 again), and for a sensitive personal detail the policy's sensitive retention (the
    product requirements). A caller's `expires_at` may shorten that, never lengthen it (422)."""
    ttl = policy.ttl_for(memory_type)
    latest = min(effective_at, now) + timedelta(days=ttl) if ttl is not None else None
    bounds = (
        policy.max_ttl_days.get(memory_type),
        policy.unverified_max_ttl_days if unverified else None,
        policy.sensitive_retention_days if sensitive else None,
    )
    for days in bounds:
        if days is not None:
            hard = now + timedelta(days=days)
            latest = hard if latest is None else min(latest, hard)
    if requested is not None and latest is not None and requested > latest:
        why = (
            "an unverified note"
            if unverified and latest == now + timedelta(days=policy.unverified_max_ttl_days)
            else f"a {memory_type.value}"
        )
        raise InvalidRequest(
            f"expires_at may only shorten how long {why} is kept: at most {latest.isoformat()}",
            field="expires_at",
        )
    return requested or latest


def expiry_once_verified(
    memory_type: MemoryType,
    effective_at: datetime,
    admitted_at: datetime,
    policy: PolicyProfile,
    *,
    sensitive: bool = False,
) -> datetime | None:
    """When a record verified after admission (a reviewer's approval) expires: its type's TTL and
    hard bound as at admission, without the unverified-note bound (INV-MEM-02) it no longer needs;
    a sensitive personal detail keeps its short retention (the product requirements)."""
    return _expiry(
        memory_type, effective_at, None, policy, admitted_at, unverified=False, sensitive=sensitive
    )


def _sensitivity(
    write: MemoryWrite, category: str, masked_kinds: list[str], policy: PolicyProfile
) -> Sensitivity:
    levels = [write.sensitivity or Sensitivity.INTERNAL]
    if category in policy.category_sensitivity:
        levels.append(policy.category_sensitivity[category])
    if masked_kinds:
        levels.append(Sensitivity.CONFIDENTIAL)
    return max(levels, key=lambda s: s.rank)


# The reasons that describe the slot's active record rather than the candidate: what a writer who
# may not read that record is never told (services/admission_steps.writer_reply).
RELATIVE_REASONS = frozenset(
    {
        "supersedes_lower_authority",
        "supersedes_older_version",
        "older_than_active_version",
        "lower_authority_than_active",
    }
)


@dataclass(frozen=True)
class ConflictOutcome:
    decision: Decision
    reasons: tuple[str, ...] = ()
    supersedes: MemoryRecord | None = None
    conflicts_with: MemoryRecord | None = None

    @property
    def contests(self) -> MemoryRecord | None:
        """The active record a contested candidate contradicts: both carry the `contested` marker
        until a reviewer decides (the product requirements), and the active one stays served meanwhile."""
        return self.conflicts_with if self.decision is Decision.CONTESTED else None


def resolve_conflict(candidate: Classified, active: MemoryRecord | None) -> ConflictOutcome:
    """Step 6: authority-ranked resolution against the active record of the slot.

    - commercial terms below human_verified wait for approval (INV-MEM-01);
    - higher or equal authority supersedes, ties going to the newer effective date;
    - a lower-authority contradiction is contested and the active record stays (INC-2890).
    """
    if candidate.needs_approval:
        why = () if candidate.approval_reason in candidate.reasons else (candidate.approval_reason,)
        return ConflictOutcome(Decision.PENDING_APPROVAL, why, conflicts_with=active)
    if active is None:
        return ConflictOutcome(Decision.ADMITTED)
    candidate_rank, active_rank = candidate.authority.rank, active.authority.rank
    if candidate_rank > active_rank:
        return ConflictOutcome(Decision.ADMITTED, ("supersedes_lower_authority",), supersedes=active)
    if candidate_rank == active_rank:
        if candidate.effective_at >= active.effective_at:
            return ConflictOutcome(Decision.ADMITTED, ("supersedes_older_version",), supersedes=active)
        return ConflictOutcome(Decision.REJECTED, ("older_than_active_version",), conflicts_with=active)
    return ConflictOutcome(Decision.CONTESTED, ("lower_authority_than_active",), conflicts_with=active)
