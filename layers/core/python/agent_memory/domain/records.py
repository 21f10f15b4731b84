"""The memory record and the values around it (docs/rules.md, record schema)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent_memory.domain.enums import (
    VERIFIED_AUTHORITIES,
    Authority,
    Decision,
    MemoryType,
    Role,
    Scope,
    Sensitivity,
    Status,
)
from agent_memory.domain.ids import ID_MAX_LENGTH, SubjectId
from agent_memory.domain.memory_types import context_section
from agent_memory.domain.sanitize import MaskedText


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id(prefix: str) -> str:
    """Time-ordered, unguessable id: 12 hex digits of milliseconds + 16 random."""
    return f"{prefix}_{int(time.time() * 1000):012x}{secrets.token_hex(8)}"


class SourceSpan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turn: int = Field(ge=0)
    start: int = Field(ge=0)
    end: int = Field(ge=0)


class Source(BaseModel):
    """Where a memory came from. `kind` is also its authority."""

    model_config = ConfigDict(extra="forbid")

    kind: Authority
    system: MaskedText | None = Field(default=None, max_length=200)
    reference: MaskedText | None = Field(default=None, max_length=500)
    span: SourceSpan | None = None


class Principal(BaseModel):
    """The authenticated caller; the tenant always comes from here."""

    model_config = ConfigDict(frozen=True)

    sub: str
    tenant_id: str
    roles: frozenset[Role]
    clearance: Sensitivity = Sensitivity.INTERNAL
    # A token bound to subjects (its `subjects` claim) reads and writes only them; None: not bound.
    # Enforced in SQL beside the tenant (row-level security on app.subjects).
    subjects: frozenset[str] | None = None

    def has(self, *roles: Role) -> bool:
        return any(r in self.roles for r in roles)

    def may_touch(self, subject_id: str) -> bool:
        """Whether the token's subject binding (if any) includes `subject_id`."""
        return self.subjects is None or subject_id in self.subjects


class MemoryRecord(BaseModel):
    """One stored memory, every field of the record schema."""

    model_config = ConfigDict(extra="forbid")

    id: str
    tenant_id: str
    subject_id: str
    scope: Scope = Scope.SUBJECT
    ticket_id: str | None = None
    session_id: str | None = None
    type: MemoryType
    category: str
    slot: str | None = None
    content: str
    value: dict[str, Any] = Field(default_factory=dict)
    source: Source
    extractor: str | None = None
    extractor_version: str | None = None
    actor: str
    authority: Authority
    confidence: float = Field(ge=0.0, le=1.0)
    confidence_basis: str | None = None
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    sensitivity: Sensitivity = Sensitivity.INTERNAL
    status: Status
    flags: list[str] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)
    created_at: datetime
    effective_at: datetime
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
    content_hash: str
    embedding_model: str | None = None
    needs_revalidation: bool = False

    @property
    def verified(self) -> bool:
        return self.authority in VERIFIED_AUTHORITIES

    def context_section(self) -> str:
        """The section of a retrieval's context it is shown in when served (the type table's rule)."""
        low_trust = self.authority.rank <= Authority.CUSTOMER_CLAIM.rank
        return context_section(self.type, verified=self.verified, low_trust=low_trust)

    def public_view(self, hidden: Collection[str] = ()) -> dict[str, Any]:
        """The JSON shape clients see (no embedding vector). A version in `hidden` (above the
        caller's clearance) is not named as the one this supersedes or is superseded by."""
        out = self.model_dump(mode="json")
        out["verified"] = self.verified
        out["section"] = self.context_section()
        for link in ("supersedes_id", "superseded_by_id"):
            if out.get(link) in hidden:
                out[link] = None
        return out


@dataclass(frozen=True, slots=True)
class RetrievedMemory:
    """What retrieval shows of a memory (the context line, the response, the live-value check):
    read with the candidates in one snapshot, not the whole record."""

    id: str
    type: MemoryType
    category: str
    slot: str | None
    content: str
    value: dict[str, Any]
    source: Source
    authority: Authority
    confidence: float
    effective_at: datetime
    expires_at: datetime | None
    session_id: str | None

    @property
    def verified(self) -> bool:
        return self.authority in VERIFIED_AUTHORITIES


MAX_CONTENT_CHARS = 4000
MAX_VALUE_DEPTH = 8


def _depth(value: Any) -> int:
    """How deep a JSON-like value nests (a scalar is 0, a flat object 1); stops counting just past
    the limit, so a value nested thousands deep costs no more than one nested nine deep."""

    def depth(v: Any, level: int) -> int:
        if not isinstance(v, dict | list):
            return level - 1
        if level > MAX_VALUE_DEPTH:
            return level
        return max([level, *(depth(item, level + 1) for item in (v.values() if isinstance(v, dict) else v))])

    return depth(value, 1)


class MemoryWrite(BaseModel):
    """A candidate memory as a caller (tool, extractor, integration) proposes it."""

    model_config = ConfigDict(extra="forbid")

    subject_id: SubjectId
    type: MemoryType
    category: str | None = Field(default=None, max_length=64)
    slot: str | None = Field(default=None, max_length=128, pattern=r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
    content: str = Field(min_length=1)
    value: dict[str, Any] = Field(default_factory=dict)
    source: Source
    scope: Scope = Scope.SUBJECT
    ticket_id: MaskedText | None = Field(default=None, max_length=200)
    session_id: str | None = Field(default=None, max_length=ID_MAX_LENGTH)
    effective_at: datetime | None = None
    expires_at: datetime | None = None
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    confidence_basis: MaskedText | None = Field(default=None, max_length=500)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    sensitivity: Sensitivity | None = None
    idempotency_key: str | None = Field(default=None, max_length=300)
    lineage_keys: list[str] = Field(default_factory=list, max_length=50)
    extractor: str | None = Field(default=None, max_length=100)
    extractor_version: str | None = Field(default=None, max_length=50)
    actor: str | None = Field(default=None, max_length=200)
    # A caller (an extractor) may mark text as instruction-like; it can only make admission stricter.
    flags: list[Literal["untrusted_instruction"]] = Field(default_factory=list, max_length=5)

    @field_validator("value")
    @classmethod
    def _shallow_value(cls, v: dict[str, Any]) -> dict[str, Any]:
        # A structured value is a few named fields; a deeply nested one used to pass validation and
        # fail serialisation later (a 500).
        if _depth(v) > MAX_VALUE_DEPTH:
            raise ValueError(f"value nests deeper than {MAX_VALUE_DEPTH} levels")
        return v

    @field_validator("confidence", "importance")
    @classmethod
    def _storable_fraction(cls, v: float) -> float:
        # Stored as `real`: a tiny non-zero such as 1e-255 is a valid fraction here and an
        # underflow error there. Six places is more precision than either score carries.
        return round(v, 6)

    @field_validator("content")
    @classmethod
    def _content_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("content must not be blank")
        return v

    @field_validator("effective_at", "expires_at")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        if v is not None and v.tzinfo is None:
            return v.replace(tzinfo=UTC)
        return v


class WriteResult(BaseModel):
    decision: Decision
    reasons: list[str]
    memory: MemoryRecord | None
    superseded: list[str] = Field(default_factory=list)
    replayed: bool = False
    refused: str | None = None  # a batch write's malformed candidate: the field it was refused for
    # Ids of records in this result above the caller's clearance: never shown to it (the clearance
    # rule of reads; a duplicate of a restricted record must not hand back its value and source).
    withheld: list[str] = Field(default_factory=list, exclude=True)

    def public_view(self) -> dict[str, Any]:
        shown = self.memory if self.memory is not None and self.memory.id not in self.withheld else None
        return {
            "decision": self.decision.value,
            "reasons": self.reasons,
            "memory": shown.public_view(hidden=self.withheld) if shown else None,
            "superseded": [i for i in self.superseded if i not in self.withheld],
        }


class AuditEvent(BaseModel):
    tenant_id: str
    seq: int
    id: str
    event_type: str
    memory_id: str | None
    subject_id: str | None
    actor: str
    reason: str | None
    payload: dict[str, Any]
    created_at: datetime
    prev_hash: str
    hash: str
    # The free text kept beside the chain for this event (masked), while its subject is not erased.
    free_text: dict[str, str] | None = None
