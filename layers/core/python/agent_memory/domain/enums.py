"""Closed vocabularies of the memory model (docs/rules.md)."""

from __future__ import annotations

from enum import StrEnum

# The memory types and their rules live in one table (memory_types.py); these names stay importable here.
from agent_memory.domain.memory_types import SLOT_REQUIRED_TYPES as SLOT_REQUIRED_TYPES
from agent_memory.domain.memory_types import SLOTTED_TYPES as SLOTTED_TYPES
from agent_memory.domain.memory_types import MemoryType as MemoryType


class FactCategory(StrEnum):
    CONTRACT_COMMERCIAL = "CONTRACT_COMMERCIAL"
    STAKEHOLDER = "STAKEHOLDER"
    TECHNICAL_ENVIRONMENT = "TECHNICAL_ENVIRONMENT"
    ACCOUNT_PROFILE = "ACCOUNT_PROFILE"


class Status(StrEnum):
    CANDIDATE = "candidate"
    ACTIVE = "active"
    PENDING_APPROVAL = "pending_approval"
    CONTESTED = "contested"
    QUARANTINED = "quarantined"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    TOMBSTONED = "tombstoned"
    DELETED = "deleted"  # forgotten on request: the row stays, without content


REVIEWABLE_STATUSES = frozenset({Status.PENDING_APPROVAL, Status.CONTESTED})


class Authority(StrEnum):
    """Source kinds, ranked: who may supersede whom."""

    SYSTEM_OF_RECORD = "system_of_record"
    HUMAN_VERIFIED = "human_verified"
    CUSTOMER_CONFIRMED = "customer_confirmed"
    CONFIRMED_OUTCOME = "confirmed_outcome"
    CUSTOMER_CLAIM = "customer_claim"
    AGENT_INFERENCE = "agent_inference"

    @property
    def rank(self) -> int:
        return AUTHORITY_RANK[self]


AUTHORITY_RANK: dict[Authority, int] = {
    Authority.SYSTEM_OF_RECORD: 5,
    Authority.HUMAN_VERIFIED: 4,
    Authority.CUSTOMER_CONFIRMED: 3,
    Authority.CONFIRMED_OUTCOME: 2,
    Authority.CUSTOMER_CLAIM: 1,
    Authority.AGENT_INFERENCE: 0,
}
# A record from these sources is verified: it heads the context and is never decayed by age.
VERIFIED_AUTHORITIES = frozenset({Authority.SYSTEM_OF_RECORD, Authority.HUMAN_VERIFIED})


class Sensitivity(StrEnum):
    PUBLIC = "public"
    INTERNAL = "internal"
    CONFIDENTIAL = "confidential"
    RESTRICTED = "restricted"

    @property
    def rank(self) -> int:
        return SENSITIVITY_RANK[self]


SENSITIVITY_RANK: dict[Sensitivity, int] = {
    Sensitivity.PUBLIC: 0,
    Sensitivity.INTERNAL: 1,
    Sensitivity.CONFIDENTIAL: 2,
    Sensitivity.RESTRICTED: 3,
}


class Scope(StrEnum):
    SUBJECT = "subject"
    TICKET = "ticket"
    TENANT = "tenant"


class Role(StrEnum):
    AGENT = "agent"
    INTEGRATION = "integration"
    REVIEWER = "reviewer"
    AUDITOR = "auditor"
    PRIVACY_OFFICER = "privacy_officer"
    ADMIN = "admin"


class Decision(StrEnum):
    """What the write gateway decided for one candidate."""

    ADMITTED = "admitted"
    PENDING_APPROVAL = "pending_approval"
    CONTESTED = "contested"
    QUARANTINED = "quarantined"
    REJECTED = "rejected"
    DUPLICATE = "duplicate"


DECISION_STATUS: dict[Decision, Status] = {
    Decision.ADMITTED: Status.ACTIVE,
    Decision.PENDING_APPROVAL: Status.PENDING_APPROVAL,
    Decision.CONTESTED: Status.CONTESTED,
    Decision.QUARANTINED: Status.QUARANTINED,
    Decision.REJECTED: Status.REJECTED,
}


class EventType(StrEnum):
    CANDIDATE_CREATED = "memory_candidate_created"
    CREATED = "memory_created"
    REJECTED = "memory_rejected"
    QUARANTINED = "memory_quarantined"
    RETRIEVED = "memory_retrieved"
    AUTHORIZATION_DENIED = "memory_authorization_denied"
    UPDATED = "memory_updated"
    CONFLICT = "memory_conflict"
    SUPERSEDED = "memory_superseded"
    APPROVED = "memory_approved"
    APPROVAL_REFUSED = "memory_approval_refused"  # the rule named (self_approval, evidence_ref_pattern)
    EXPIRED = "memory_expired"
    DELETED = "memory_deleted"
    DELETION_FAILED = "memory_deletion_failed"
    ERASURE_REQUESTED = "erasure_requested"
    ERASURE_VERIFIED = "erasure_verified"
    RETRIEVAL_FAILED = "retrieval_failed"
    REINSTATED = "memory_reinstated"
    EMBEDDING_DEFERRED = "memory_embedding_deferred"
    POLICY_CHANGED = "policy_changed"
    WORKING_WRITTEN = "working_memory_written"  # key, size, TTL; never the value
    WORKING_DELETED = "working_memory_deleted"
    WORKING_CLEARED = "working_memory_cleared"  # by the session's close or the subject's erasure
    REVALIDATION_DUE = "memory_revalidation_due"
    REVALIDATED = "memory_revalidated"
    SUBJECT_EXPORTED = "subject_exported"
    SESSION_EXTRACTED = "session_extracted"  # the decisions of one session's extraction, counted
    # Erasures and deletions replayed from the registry outside the database (after a restore).
    DELETIONS_REPLAYED = "deletion_registry_replayed"


class Flag(StrEnum):
    UNTRUSTED_INSTRUCTION = "untrusted_instruction"
    IDENTIFIER_MASKED = "identifier_masked"
    EMBEDDING_PENDING = "embedding_pending"
    # A lower-authority source contradicts the active record of the slot: on both until a reviewer decides.
    CONTESTED = "contested"
    # A reviewer approved this commercial term as standing beside its family's other active terms.
    FAMILY_INDEPENDENT = "family_independent"
