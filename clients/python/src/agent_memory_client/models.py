"""Request and response models of the HTTP API.

Requests refuse unknown fields (a typo fails here, before a round trip); responses keep fields
this version does not know yet (`model_extra`), so a newer server never breaks an older client.
A test checks both against the server's `/v1/openapi.json`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# The vocabulary (checked against the server's enums by a test).
MemoryType = Literal["fact", "preference", "episode", "resolution", "observation", "sentiment", "commitment"]
Authority = Literal[
    "system_of_record",
    "human_verified",
    "customer_confirmed",
    "confirmed_outcome",
    "customer_claim",
    "agent_inference",
]
Sensitivity = Literal["public", "internal", "confidential", "restricted"]
Scope = Literal["subject", "ticket", "tenant"]
Speaker = Literal["customer", "agent", "system"]
CommitmentOutcome = Literal["done", "cancelled"]
Status = Literal[
    "candidate",
    "active",
    "pending_approval",
    "contested",
    "quarantined",
    "rejected",
    "superseded",
    "expired",
    "tombstoned",
    "deleted",
]
SessionState = Literal["queued", "processing", "processed", "failed"]


class RequestModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ResponseModel(BaseModel):
    model_config = ConfigDict(extra="allow")


# -- requests -----------------------------------------------------------------------------------


class SourceSpan(RequestModel):
    turn: int
    start: int
    end: int


class Source(RequestModel):
    """Where a memory comes from; `kind` is its authority (only `integration` may assert
    `system_of_record`)."""

    kind: Authority
    system: str | None = None
    reference: str | None = None
    span: SourceSpan | None = None


class MemoryWrite(RequestModel):
    """A memory proposed to the write gateway; the gateway decides what becomes of it."""

    subject_id: str
    type: MemoryType
    content: str
    source: Source
    category: str | None = None
    slot: str | None = None
    value: dict[str, Any] = Field(default_factory=dict)
    scope: Scope = "subject"
    ticket_id: str | None = None
    session_id: str | None = None
    effective_at: datetime | None = None
    expires_at: datetime | None = None
    confidence: float = 0.8
    confidence_basis: str | None = None
    importance: float = 0.5
    sensitivity: Sensitivity | None = None
    idempotency_key: str | None = None
    lineage_keys: list[str] = Field(default_factory=list)
    extractor: str | None = None
    extractor_version: str | None = None
    actor: str | None = None
    flags: list[Literal["untrusted_instruction"]] = Field(default_factory=list)


class MemoryNote(RequestModel):
    """A content-only note (`POST /v1/memories` with a subject, a sentence and optionally its
    session): the service classifies it and admits it under the authority the token allows."""

    subject_id: str
    content: str
    session_id: str | None = None


class RetrieveRequest(RequestModel):
    subject_id: str
    query: str = ""
    ticket_id: str | None = None
    session_id: str | None = None
    top_k: int | None = None
    max_tokens: int | None = None
    types: list[MemoryType] | None = None
    slots: list[str] | None = None


class ResolutionSearchRequest(RequestModel):
    query: str
    top_k: int = 5
    subject_id: str | None = None
    max_tokens: int | None = None


class Turn(RequestModel):
    speaker: Speaker
    text: str


class CloseSessionRequest(RequestModel):
    subject_id: str
    occurred_at: datetime
    turns: list[Turn]
    ticket_id: str | None = None
    channel: str | None = None


class ReviewDecision(RequestModel):
    note: str | None = None
    evidence_ref: str | None = None
    supersedes: list[str] | None = None
    independent_reason: str | None = None


class CloseCommitment(RequestModel):
    outcome: CommitmentOutcome = "done"
    closed_at: datetime | None = None
    note: str | None = None


class ErasureRequest(RequestModel):
    reason: str
    request_reference: str | None = None


class LegalHold(RequestModel):
    hold: bool
    reason: str


class PolicyChange(RequestModel):
    profile: str
    overrides: dict[str, Any] = Field(default_factory=dict)


class WorkingPutRequest(RequestModel):
    subject_id: str
    value: Any
    ttl_seconds: int | None = None


class ForgetRequest(RequestModel):
    reason: str


# -- responses ----------------------------------------------------------------------------------


class SourceSpanView(ResponseModel):
    turn: int
    start: int
    end: int


class SourceView(ResponseModel):
    kind: str
    system: str | None = None
    reference: str | None = None
    span: SourceSpanView | None = None


class MemoryRecord(ResponseModel):
    """A memory record as reads show it (no embedding vector)."""

    id: str
    tenant_id: str
    subject_id: str
    type: str
    category: str
    content: str
    source: SourceView
    actor: str
    authority: str
    confidence: float
    status: str
    created_at: datetime
    effective_at: datetime
    content_hash: str
    verified: bool
    # the context section retrieval would put it in: verified_facts, relevant, supporting, unverified
    section: str | None = None
    scope: str = "subject"
    ticket_id: str | None = None
    session_id: str | None = None
    slot: str | None = None
    value: dict[str, Any] = Field(default_factory=dict)
    extractor: str | None = None
    extractor_version: str | None = None
    confidence_basis: str | None = None
    importance: float = 0.5
    sensitivity: str = "internal"
    flags: list[str] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)
    valid_to: datetime | None = None
    last_validated_at: datetime | None = None
    expires_at: datetime | None = None
    legal_hold: bool = False
    version: int = 1
    supersedes_id: str | None = None
    superseded_by_id: str | None = None
    superseded_at: datetime | None = None
    verified_by: str | None = None
    verified_at: datetime | None = None
    evidence_ref: str | None = None
    lineage_keys: list[str] = Field(default_factory=list)
    embedding_model: str | None = None
    needs_revalidation: bool = False


class HistoryEntry(ResponseModel):
    id: str
    version: int
    status: str
    authority: str
    created_at: datetime
    effective_at: datetime
    superseded_at: datetime | None = None
    supersedes_id: str | None = None
    superseded_by_id: str | None = None
    content: str | None = None
    source: SourceView | None = None
    verified_by: str | None = None
    verified_at: datetime | None = None
    evidence_ref: str | None = None


class MemoryDetail(MemoryRecord):
    """One memory with its version chain (`GET /v1/memories/{id}`)."""

    history: list[HistoryEntry] = Field(default_factory=list)


class WriteResult(ResponseModel):
    decision: str  # admitted | pending_approval | contested | quarantined | rejected | duplicate
    reasons: list[str] = Field(default_factory=list)
    memory: MemoryRecord | None = None
    superseded: list[str] = Field(default_factory=list)
    explanation: str | None = None  # when not admitted: one sentence a model can relay
    classified_as: dict[str, Any] | None = None  # a content-only note: the type, category and slot given


class RetrievedMemory(ResponseModel):
    id: str
    type: str
    category: str
    content: str
    section: str  # verified_facts | relevant | supporting | unverified
    score: float
    rank: int | None = None  # place by relevance among those returned, 1 first (listed by section)
    authority: str
    verified: bool
    confidence: float
    effective_at: datetime
    source: SourceView
    slot: str | None = None
    similarity: float | None = None
    expires_at: datetime | None = None
    session_id: str | None = None
    contested: bool = False
    needs_revalidation: bool = False
    commitment: dict[str, Any] | None = None


class LiveValue(ResponseModel):
    field: str
    value: Any = None
    as_of: str | None = None
    overrides: list[str] = Field(default_factory=list)


class WorkingItem(ResponseModel):
    key: str
    value: Any = None
    expires_at: datetime


class RetrieveResult(ResponseModel):
    """The context for the next turn: `context` is data about the customer, never instructions."""

    subject_id: str
    context: str
    memories: list[RetrievedMemory] = Field(default_factory=list)
    live: list[LiveValue] = Field(default_factory=list)
    excluded: dict[str, int] = Field(default_factory=dict)
    relevance_floor: float | None = None  # the similarity a memory needs to count as relevant
    keyword_bar: float | None = None  # ...and the similarity one sharing a word with the query needs
    relevance_excluded: dict[str, int] = Field(default_factory=dict)  # below_threshold, by why
    tokens: int
    max_tokens: int
    working: list[WorkingItem] | None = None
    live_unavailable: bool = False
    ticket_unavailable: bool = False
    ticket_not_found: bool = False


class Resolution(ResponseModel):
    id: str
    type: str
    category: str
    content: str
    similarity: float
    authority: str
    confidence: float
    effective_at: datetime
    source_kind: str


class ResolutionSearchResult(ResponseModel):
    resolutions: list[Resolution] = Field(default_factory=list)
    context: str
    tokens: int
    max_tokens: int


class SessionAccepted(ResponseModel):
    session_id: str
    status: str


class ExtractedStatement(ResponseModel):
    """One statement of a closed session (identifiers masked) and what became of it."""

    turn: int
    start: int
    end: int
    speaker: str
    text: str
    decision: str  # admitted | pending_approval | quarantined | not_stored | superseded | duplicate
    reason: str
    score: float | None = None
    memory_id: str | None = None
    type: str | None = None
    slot: str | None = None
    withheld: bool = False


class ExtractionReport(ResponseModel):
    """Why every statement of a session was, or was not, kept (while the transcript is retained)."""

    session_id: str
    subject_id: str
    status: str
    available: bool
    statements: list[ExtractedStatement] = Field(default_factory=list)


class SessionStatus(ResponseModel):
    session_id: str
    status: str  # queued | processing | processed | failed
    subject_id: str | None = None
    admitted: int = 0
    pending_approval: int = 0
    rejected: int = 0
    quarantined: int = 0
    contested: int = 0
    duplicate: int = 0
    not_stored: int = 0
    memory_ids: list[str] = Field(default_factory=list)
    attempts: int = 0
    extractor: str | None = None
    reason: str | None = None  # why extraction failed (status failed)

    @property
    def done(self) -> bool:
        """Extraction finished, one way or the other."""
        return self.status in ("processed", "failed")


class MemoryPage(ResponseModel):
    subject_id: str
    memories: list[MemoryRecord] = Field(default_factory=list)
    next_cursor: str | None = None


class ReviewItem(ResponseModel):
    memory: MemoryRecord
    active: MemoryRecord | None = None
    diff: dict[str, Any] | None = None
    evidence_required: bool = False
    # the account's active terms of the same commercial family in other slots
    family_active: list[MemoryRecord] | None = None
    # the subject's other items waiting for review that say nearly the same, newest first
    similar_pending: list[str] | None = None


class ReviewPage(ResponseModel):
    items: list[ReviewItem] = Field(default_factory=list)
    next_cursor: str | None = None


class ReviewResult(ResponseModel):
    memory: MemoryRecord
    superseded: list[str] = Field(default_factory=list)


class CommitmentClosed(ResponseModel):
    memory: MemoryRecord


class ErasureStep(ResponseModel):
    """One step of an erasure. Besides `count`, some steps report what they found or removed:
    lineage keys, records and derived records, sessions, extraction reports, working-memory items
    and audit free text, whether a hold
    kept a held subject's transcripts, and the verification's per-layer counts (all zero when
    `clean`)."""

    name: str
    status: str
    count: int | None = None
    attempts: int = 0
    lineage_keys: int | None = None
    records: int | None = None
    derived: int | None = None
    sessions: int | None = None
    extraction_reports: int | None = None
    working: int | None = None
    free_text: int | None = None
    held: bool | None = None
    verification: dict[str, int] | None = None
    clean: bool | None = None


class ErasureStatus(ResponseModel):
    erasure_id: str
    subject_id: str
    status: str  # running | verified | failed
    deadline: datetime
    deadline_passed: bool = False
    steps: list[ErasureStep] = Field(default_factory=list)
    receipt: dict[str, Any] | None = None
    reason: str | None = None
    duplicate_of_earlier_request: bool = False  # the same request_reference was sent before
    completes_erasure_id: str | None = None  # started when a hold over records it kept was released
    completed_by: list[str] | None = None  # the erasures that completed this one after a release

    @property
    def done(self) -> bool:
        """The erasure finished, one way or the other (`verified` or `failed`)."""
        return self.status in ("verified", "failed")

    @property
    def retained_under_hold(self) -> list[RetainedUnderHold]:
        """The receipt's records kept under a legal hold, per hold (empty before the receipt)."""
        kept = (self.receipt or {}).get("retained_under_hold") or []
        return [RetainedUnderHold.model_validate(k) for k in kept]


class RetainedUnderHold(ResponseModel):
    """Records an erasure kept because a legal hold covers them: the hold's id and how many."""

    hold_id: str
    records: int


class AuditEvent(ResponseModel):
    tenant_id: str
    seq: int
    id: str
    event_type: str
    actor: str
    created_at: datetime
    prev_hash: str
    hash: str
    memory_id: str | None = None
    subject_id: str | None = None
    reason: str | None = None
    payload: dict[str, Any] = Field(default_factory=dict)
    # the reasons and references a person typed, kept beside the chain until the subject is erased
    free_text: dict[str, str] | None = None
    redacted: str | None = None  # "above_clearance": the record's id and payload are left out


class AuditPage(ResponseModel):
    events: list[AuditEvent] = Field(default_factory=list)
    next_cursor: str | None = None


class SubjectHold(ResponseModel):
    subject_id: str
    legal_hold: bool
    hold_id: str | None = None
    erasure_id: str | None = None  # on release: the erasure completing one that kept held records


class MemoryHold(ResponseModel):
    memory_id: str
    legal_hold: bool
    hold_id: str | None = None
    erasure_id: str | None = None  # on release: the erasure completing one that kept held records


class PolicyView(ResponseModel):
    tenant_id: str
    profile: str
    overrides: dict[str, Any] = Field(default_factory=dict)
    source: str
    effective: dict[str, Any] = Field(default_factory=dict)
    presets: list[str] = Field(default_factory=list)
    overrides_refused: bool = False  # the stored overrides break a rule added since: PUT a valid policy


class Health(ResponseModel):
    status: str
    database: str
    embedder: str
    version: str


class WorkingSession(ResponseModel):
    session_id: str
    subject_id: str | None = None
    items: list[WorkingItem] = Field(default_factory=list)


class ForgetResult(ResponseModel):
    id: str
    status: str = "deleted"


class LegalHoldView(ResponseModel):
    held: bool
    hold_id: str | None = None
    reason: str | None = None
    set_by: str | None = None
    set_at: datetime | None = None


class TombstoneCounts(ResponseModel):
    deletions: int
    erasures: int
    deleted_memories: int


class ExportedMemory(MemoryRecord):
    deleted_at: datetime | None = None


class TranscriptReference(ResponseModel):
    key: str | None = None
    sha256: str


class ExportedSession(ResponseModel):
    session_id: str
    occurred_at: datetime
    status: str
    turns: int
    transcript: TranscriptReference
    created_at: datetime
    updated_at: datetime
    ticket_id: str | None = None
    channel: str | None = None
    memory_ids: list[str] = Field(default_factory=list)
    outcome: dict[str, Any] = Field(default_factory=dict)
    failure_reason: str | None = None
    extractor: str | None = None


class ExportedErasure(ResponseModel):
    erasure_id: str
    status: str
    reason: str
    requested_by: str
    deadline: datetime
    created_at: datetime
    request_reference: str | None = None
    receipt: dict[str, Any] | None = None
    failure_reason: str | None = None
    completed_at: datetime | None = None


class ExportedEvent(ResponseModel):
    seq: int
    id: str
    event_type: str
    actor: str
    created_at: datetime
    memory_id: str | None = None
    reason: str | None = None
    payload: dict[str, Any] = Field(default_factory=dict)
    redacted: str | None = None
    # the reasons and references a person typed (identifiers masked), kept beside the chain
    free_text: dict[str, str] | None = None


class ExportedWorkingValue(ResponseModel):
    session_id: str
    key: str
    value: Any = None
    expires_at: datetime


class SubjectExport(ResponseModel):
    """One page of everything held about a subject; `next_cursor` is None on the last page."""

    subject_id: str
    generated_at: datetime
    legal_hold: LegalHoldView
    tombstones: TombstoneCounts
    memories: list[ExportedMemory] = Field(default_factory=list)
    sessions: list[ExportedSession] = Field(default_factory=list)
    erasures: list[ExportedErasure] = Field(default_factory=list)
    events: list[ExportedEvent] = Field(default_factory=list)
    working: list[ExportedWorkingValue] = Field(default_factory=list)
    next_cursor: str | None = None
