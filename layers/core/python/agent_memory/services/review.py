"""Human review: approve, reject, reinstate. A reviewer's decision is a new,
audited supersession, never an edit of history."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from agent_memory.domain.admission import expiry_once_verified
from agent_memory.domain.decision import EVENT_FOR_DECISION
from agent_memory.domain.enums import (
    REVIEWABLE_STATUSES,
    Authority,
    EventType,
    FactCategory,
    Flag,
    Role,
    Status,
)
from agent_memory.domain.errors import Conflict, DomainError, InvalidRequest, NotFound, SelfApproval
from agent_memory.domain.memory_types import FAMILY_INDEPENDENT_REASON, family_slots
from agent_memory.domain.policy import PolicyProfile
from agent_memory.domain.records import MemoryRecord, Principal, Source, new_id, utcnow
from agent_memory.domain.sensitive import SENSITIVE_REASON
from agent_memory.ports.store import MemoryStore, NewEvent, TenantSession
from agent_memory.services.authorization import require_mutation, visible
from agent_memory.services.policies import PolicyRegistry

# The audit events that record a write's admission decision: their actor is the record's writer.
_WRITE_EVENTS = frozenset(e.value for e in EVENT_FOR_DECISION.values())
SELF_APPROVAL = "self_approval"
EVIDENCE_PATTERN = "evidence_ref_pattern"
FAMILY_CHOICE = "commercial_family_choice"


def evidence_required(record: MemoryRecord) -> bool:
    """Whether approving `record` needs an evidence reference (a commercial term does)."""
    return record.category == FactCategory.CONTRACT_COMMERCIAL.value


@dataclass(frozen=True)
class ReviewResult:
    memory: MemoryRecord
    superseded: list[str]

    def public_view(self) -> dict[str, object]:
        return {"memory": self.memory.public_view(), "superseded": self.superseded}


class ReviewService:
    def __init__(
        self, store: MemoryStore, policies: PolicyRegistry, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self.store = store
        self.policies = policies
        self.clock = clock

    def approve(
        self,
        principal: Principal,
        memory_id: str,
        *,
        note: str | None,
        evidence_ref: str | None,
        supersedes: Sequence[str] = (),
        independent_reason: str | None = None,
    ) -> ReviewResult:
        """The approved record becomes active as human_verified and supersedes the slot's active record.
        A commercial term whose family (domain/memory_types.COMMERCIAL_FAMILIES) has active terms in
        other slots is approved only once the reviewer chooses: the ones it supersedes
        (`supersedes`), and for the rest why it is independent (`independent_reason`); else 409."""
        require_mutation(principal, Role.REVIEWER, action="approve memories")
        now = self.clock()
        policy = self.policies.for_tenant(principal.tenant_id)
        refused: DomainError | None = None
        with self.store.tenant(principal.tenant_id) as s:
            record = self._reviewable(s, principal, memory_id)
            family = s.active_for_slots(record.subject_id, sorted(family_slots(record.slot)))
            refused = _approval_refusal(s, principal, record, evidence_ref, policy) or _family_refusal(
                family, supersedes, independent_reason
            )
            if refused is not None:
                # Committed on its own: the refusal is audited and nothing else changes.
                s.append_events([_refusal_event(principal, record, refused)])
            else:
                chosen = [r for r in family if r.id in set(supersedes)]
                approved, active = self._approve(s, principal, record, note, evidence_ref, now, policy)
                if chosen:
                    _supersede_family(s, principal, approved, chosen, now)
                if independent_reason:
                    approved = _mark_independent(
                        s, principal, approved, [r for r in family if r not in chosen]
                    )
        if refused is not None:
            raise refused
        # A superseded version above the reviewer's clearance is not named to them.
        replaced = [*([active] if active is not None else []), *chosen]
        return ReviewResult(approved, [r.id for r in replaced if visible(principal, r) is not None])

    @staticmethod
    def _approve(
        s: TenantSession,
        principal: Principal,
        record: MemoryRecord,
        note: str | None,
        evidence_ref: str | None,
        now: datetime,
        policy: PolicyProfile,
    ) -> tuple[MemoryRecord, MemoryRecord | None]:
        """The approval itself, in the caller's transaction: the approved record, and the slot's
        active record it superseded (if any). Verified now, it loses the unverified-note expiry
        (INV-MEM-02) and keeps its type's own."""
        active = None
        if record.slot:
            s.lock_slot(record.subject_id, record.slot)
            active = s.active_for_slot(record.subject_id, record.slot)
        superseded: list[str] = []
        if active is not None:
            s.supersede(active.id, record.id, now)
            superseded.append(active.id)
        expires_at = expiry_once_verified(
            record.type,
            record.effective_at,
            record.created_at,
            policy,
            sensitive=SENSITIVE_REASON in record.reasons,
        )
        approved = s.update_status(
            record.id,
            Status.ACTIVE.value,
            authority=Authority.HUMAN_VERIFIED,
            verified_by=principal.sub,
            verified_at=now,
            evidence_ref=evidence_ref,
            last_validated_at=now,
            expires_at=expires_at,
            version=active.version + 1 if active is not None else 1,
            supersedes_id=active.id if active is not None else None,
            reasons=[*record.reasons, "approved_by_reviewer"],
        )
        settled, contest_events = _settle_contest(s, principal, record, superseded)
        approved = settled or approved
        approval = NewEvent(
            EventType.APPROVED.value,
            principal.sub,
            record.id,
            record.subject_id,
            "reviewer_approved",
            {
                "evidence_ref": evidence_ref,
                "note_present": bool(note),
                "previous_status": record.status,
                "superseded": superseded,
                # the unverified-note bound lifted (INV-MEM-02): what it was, what it is now
                "expires_at_before": record.expires_at.isoformat() if record.expires_at else None,
                "expires_at": expires_at.isoformat() if expires_at else None,
            },
        )
        supersessions = _superseded_events(principal, record, superseded, "superseded_by_approval")
        s.append_events([approval, *supersessions, *contest_events])
        return approved, active

    def reject(self, principal: Principal, memory_id: str, *, note: str | None) -> ReviewResult:
        require_mutation(principal, Role.REVIEWER, action="reject memories")
        with self.store.tenant(principal.tenant_id) as s:
            record = self._reviewable(s, principal, memory_id)
            if record.slot:
                s.lock_slot(record.subject_id, record.slot)
            rejected = s.update_status(
                record.id, Status.REJECTED.value, reasons=[*record.reasons, "rejected_by_reviewer"]
            )
            settled, contest_events = _settle_contest(s, principal, record, [])
            rejected = settled or rejected
            s.append_events(
                [
                    NewEvent(
                        EventType.REJECTED.value,
                        principal.sub,
                        record.id,
                        record.subject_id,
                        "reviewer_rejected",
                        {"previous_status": record.status, "note_present": bool(note)},
                    ),
                    *contest_events,
                ]
            )
        return ReviewResult(rejected, [])

    def reinstate(self, principal: Principal, memory_id: str, *, note: str | None) -> ReviewResult:
        """Rollback: a superseded version comes back as a new version that supersedes the current one."""
        require_mutation(principal, Role.REVIEWER, action="reinstate memories")
        now = self.clock()
        with self.store.tenant(principal.tenant_id) as s:
            old = visible(principal, s.get_record(memory_id, for_update=True))
            if old is None:
                raise NotFound(f"memory {memory_id} not found")
            if old.status != Status.SUPERSEDED or not old.slot:
                raise Conflict(
                    f"only a superseded version of a slot can be reinstated (status is {old.status})"
                )
            s.lock_slot(old.subject_id, old.slot)
            active = s.active_for_slot(old.subject_id, old.slot)
            new = _reinstated_version(old, active, principal, now)
            superseded = []
            if active is not None:
                s.supersede(active.id, new.id, now)
                superseded.append(active.id)
            s.insert_record(new, None)
            reinstatement = NewEvent(
                EventType.REINSTATED.value,
                principal.sub,
                new.id,
                old.subject_id,
                "reviewer_reinstated",
                {"reinstates": old.id, "superseded": superseded, "note_present": bool(note)},
            )
            supersessions = _superseded_events(principal, new, superseded, "superseded_by_reinstatement")
            s.append_events([reinstatement, *supersessions])
        shown = [active.id] if active is not None and visible(principal, active) is not None else []
        return ReviewResult(new, shown)

    @staticmethod
    def _reviewable(s: TenantSession, principal: Principal, memory_id: str) -> MemoryRecord:
        record = visible(principal, s.get_record(memory_id, for_update=True))
        if record is None:  # above the reviewer's clearance looks the same as absent
            raise NotFound(f"memory {memory_id} not found")
        if record.status not in REVIEWABLE_STATUSES:
            raise Conflict(f"memory {memory_id} is {record.status}, not awaiting review")
        return record


def record_writers(s: TenantSession, record: MemoryRecord) -> set[str]:
    """Who wrote `record`: the token subject whose write the chain recorded (the admission
    decision's event), the record's actor, and for a memory drawn from a session, the agent who
    closed that session."""
    events = s.audit_events(subject_id=None, memory_id=record.id, since=None, after_seq=None, limit=20)
    writers = {record.actor, *(e.actor for e in events if e.event_type in _WRITE_EVENTS)}
    if record.session_id:
        session = s.get_session(record.session_id)
        closed_by = session["closed_by"] if session is not None else None
        if closed_by:
            writers.add(closed_by)
    return writers


def _approval_refusal(
    s: TenantSession,
    principal: Principal,
    record: MemoryRecord,
    evidence_ref: str | None,
    policy: PolicyProfile,
) -> DomainError | None:
    """Why `principal` may not approve `record` with `evidence_ref` (None: it may). Nobody approves
    what they wrote (403 `self_approval`); evidence, required for a commercial term and checked
    whenever given, must match the tenant's `evidence_ref_pattern` (422 naming `evidence_ref`)."""
    if principal.sub in record_writers(s, record):
        return SelfApproval("a reviewer may not approve a memory they wrote or whose session they closed")
    if evidence_ref is None and evidence_required(record):
        return InvalidRequest("approving a commercial term needs an evidence reference", field="evidence_ref")
    if evidence_ref is not None and not policy.accepts_evidence(evidence_ref):
        return InvalidRequest(
            "evidence_ref must be a document reference the tenant's evidence_ref_pattern accepts"
            " (by default 6-200 characters without spaces, with a letter and a digit)",
            field="evidence_ref",
        )
    return None


def _family_refusal(
    family: list[MemoryRecord], supersedes: Sequence[str], independent_reason: str | None
) -> DomainError | None:
    """Why the reviewer's choice over the term's commercial family is not enough (None: it is).
    One commercial truth per account and family (INV-MEM-03 across slots, MC-CR-01)."""
    active = {r.id for r in family}
    unknown = sorted(set(supersedes) - active)
    if unknown:
        return InvalidRequest(
            f"supersedes: {', '.join(unknown)} is not an active term of this one's commercial family",
            field="supersedes",
        )
    left = sorted(active - set(supersedes))
    if left and not (independent_reason or "").strip():
        return Conflict(
            f"the account has active terms of the same commercial family ({', '.join(left)}): name "
            "those this one supersedes in supersedes, or say why it is independent in independent_reason",
            field="supersedes",
        )
    return None


def _supersede_family(
    s: TenantSession, principal: Principal, approved: MemoryRecord, chosen: list[MemoryRecord], now: datetime
) -> None:
    """The family's terms the reviewer chose, superseded by the approved one (each audited)."""
    for old in chosen:
        s.supersede(old.id, approved.id, now)
    s.append_events(
        _superseded_events(principal, approved, [r.id for r in chosen], "superseded_by_approval_in_family")
    )


def _mark_independent(
    s: TenantSession, principal: Principal, approved: MemoryRecord, others: list[MemoryRecord]
) -> MemoryRecord:
    """The reviewer said the approved term stands beside the family's others: retrieval shows both.
    (Only that a reason was given is kept, like a review note.)"""
    if not others:
        return approved
    s.append_events(
        [
            NewEvent(
                EventType.UPDATED.value,
                principal.sub,
                approved.id,
                approved.subject_id,
                FAMILY_INDEPENDENT_REASON,
                {"independent_of": [r.id for r in others], "reason_present": True},
            )
        ]
    )
    return s.update_status(
        approved.id,
        str(approved.status),
        reasons=[*approved.reasons, FAMILY_INDEPENDENT_REASON],
        flags=sorted({*approved.flags, Flag.FAMILY_INDEPENDENT.value}),
    )


def _refusal_event(principal: Principal, record: MemoryRecord, refused: DomainError) -> NewEvent:
    """The refused approval in the chain: who, which record, the rule; never the evidence given."""
    if isinstance(refused, SelfApproval):
        rule = SELF_APPROVAL
    elif refused.field == "supersedes":
        rule = FAMILY_CHOICE
    else:
        rule = EVIDENCE_PATTERN
    return NewEvent(
        EventType.APPROVAL_REFUSED.value,
        principal.sub,
        record.id,
        record.subject_id,
        rule,
        {"rule": rule, "status": refused.status, "field": refused.field},
    )


def _settle_contest(
    s: TenantSession, principal: Principal, record: MemoryRecord, superseded: list[str]
) -> tuple[MemoryRecord | None, list[NewEvent]]:
    """After a reviewer's decision on `record` (the product requirements): the `contested` marker leaves the decided
    record and what it superseded, and the slot's active record keeps it only while another
    contested record of the slot still waits. Returns `record` as it now is (None when it has no
    slot: nothing to settle) and the audit events to append."""
    if not record.slot:
        return None, []
    before = s.active_for_slot(record.subject_id, record.slot)
    s.clear_contested([record.id, *superseded])
    waiting = s.settle_slot_contest(record.subject_id, record.slot)
    events = []
    if before is not None and before.id != record.id and Flag.CONTESTED.value in before.flags and not waiting:
        events.append(
            NewEvent(
                EventType.UPDATED.value,
                principal.sub,
                before.id,
                record.subject_id,
                "contest_resolved_by_reviewer",
                {"contested": False, "decided": record.id, "confidence_restored": True},
            )
        )
    return s.get_record(record.id), events


def _reinstated_version(
    old: MemoryRecord, active: MemoryRecord | None, principal: Principal, now: datetime
) -> MemoryRecord:
    """`old` again as a new, human-verified version after the slot's active one (if any). Built
    through validation, as every other record is: a field the change gets wrong is refused here,
    not stored."""
    return MemoryRecord.model_validate(
        {
            **old.model_dump(),
            "id": new_id("mem"),
            "status": Status.ACTIVE,
            "authority": Authority.HUMAN_VERIFIED,
            "source": Source(kind=Authority.HUMAN_VERIFIED, system="review", reference=old.id),
            "created_at": now,
            "effective_at": now,
            "verified_by": principal.sub,
            "verified_at": now,
            "last_validated_at": now,
            "superseded_at": None,
            "superseded_by_id": None,
            "valid_to": None,
            "version": (active.version if active else old.version) + 1,
            "supersedes_id": active.id if active else None,
            "reasons": ["reinstated_by_reviewer"],
            "flags": sorted({*old.flags, "embedding_pending"}),
            "embedding_model": None,
        }
    )


def _superseded_events(
    principal: Principal, by: MemoryRecord, superseded: list[str], reason: str
) -> list[NewEvent]:
    """One SUPERSEDED audit event per version `by` replaced."""
    return [
        NewEvent(
            EventType.SUPERSEDED.value,
            principal.sub,
            old_id,
            by.subject_id,
            reason,
            {"superseded_by": by.id},
        )
        for old_id in superseded
    ]
