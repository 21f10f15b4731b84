"""Session-close extraction: the transcript and the candidate memories drawn from it."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent_memory.domain.enums import Authority, MemoryType
from agent_memory.domain.records import SourceSpan

MAX_TURNS = 1000
MAX_TURN_CHARS = 20_000
MAX_TRANSCRIPT_BYTES = 1_000_000
EPISODE_SUMMARY_MAX_CHARS = 600


class Speaker(StrEnum):
    CUSTOMER = "customer"
    AGENT = "agent"
    SYSTEM = "system"


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    speaker: Speaker
    text: str = Field(max_length=MAX_TURN_CHARS)

    @field_validator("text")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("turn text must not be empty")
        return v


class Transcript(BaseModel):
    """A closed session as the extractor sees it (already masked)."""

    session_id: str
    subject_id: str
    ticket_id: str | None = None
    channel: str | None = None
    occurred_at: datetime
    turns: list[Turn]


class CandidateMemory(BaseModel):
    """What an extractor proposes; the write gateway decides what becomes of it."""

    model_config = ConfigDict(extra="forbid")

    type: MemoryType
    category: str | None = None
    slot: str | None = None
    content: str = Field(min_length=1, max_length=4000)
    value: dict[str, Any] = Field(default_factory=dict)
    span: SourceSpan
    speaker: Speaker
    source_kind: Authority
    confidence: float = Field(ge=0.0, le=1.0)
    confidence_basis: str
    extractor: str
    extractor_version: str
    flags: list[str] = Field(default_factory=list)


class SkippedStatement(BaseModel):
    """A statement deliberately not proposed (small talk, thanks, owned by the system of record...)."""

    span: SourceSpan
    reason: str
    score: float | None = None  # the model's confidence in its label, when a model read it
    field: str | None = None  # the system-of-record field a claim names (statement_rules.py)


class ExtractionResult(BaseModel):
    candidates: list[CandidateMemory] = Field(default_factory=list)
    skipped: list[SkippedStatement] = Field(default_factory=list)
    summary: CandidateMemory | None = None  # the session's episode summary
    flags: list[str] = Field(default_factory=list)


class StatementDecision(StrEnum):
    """What became of one statement of a session (the extraction report)."""

    ADMITTED = "admitted"
    PENDING_APPROVAL = "pending_approval"
    QUARANTINED = "quarantined"
    NOT_STORED = "not_stored"
    SUPERSEDED = "superseded"
    DUPLICATE = "duplicate"


class ReportedStatement(BaseModel):
    """One statement of a session as the extraction report shows it: its masked text, what was
    decided, why (a reason code), the model's score, and the memory written when one was."""

    turn: int
    start: int
    end: int
    speaker: Speaker
    text: str
    decision: StatementDecision
    reason: str
    score: float | None = None
    memory_id: str | None = None
    type: str | None = None
    slot: str | None = None
    # The sensitivity of the memory written (or met) for it: a reader below it sees no text.
    sensitivity: str | None = None


_SKIP_DECISIONS = {
    "superseded_in_session": StatementDecision.SUPERSEDED,
    "duplicate_statement": StatementDecision.DUPLICATE,
    "duplicate_confirmation": StatementDecision.DUPLICATE,
    "duplicate_tool_output": StatementDecision.DUPLICATE,
}


def skipped_decision(reason: str) -> StatementDecision:
    """A statement no candidate came of: superseded within the session, a duplicate, or not stored."""
    return _SKIP_DECISIONS.get(reason, StatementDecision.NOT_STORED)
