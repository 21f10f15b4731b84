"""Sessions: closing one for extraction and reading its outcome."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from agent_memory.api.models.common import ResponseModel, omitted_unless_true, omitted_when_absent
from agent_memory.services.sessions import CloseSessionRequest as CloseSessionRequest

CLOSE_SESSION_EXAMPLE = {
    "subject_id": "ACC-CORP-4812",
    "ticket_id": "T-1042",
    "channel": "meeting",
    "occurred_at": "2026-10-02T15:00:00Z",
    "turns": [
        {"speaker": "customer", "text": "Please send renewal paperwork by email, not phone."},
        {"speaker": "agent", "text": "Will do."},
    ],
}

SessionState = Literal["queued", "processing", "processed", "failed"]


class SessionAccepted(ResponseModel):
    """202: the session is recorded and queued (a repeat close answers with its current status)."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"session_id": "S-2026-10-02-01", "status": "queued"}]}
    )

    session_id: str
    status: SessionState


class SessionStatus(ResponseModel):
    """What extraction made of the session, counted by the gateway's decisions."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "session_id": "S-2026-10-02-01",
                    "subject_id": "ACC-CORP-4812",
                    "status": "processed",
                    "admitted": 2,
                    "pending_approval": 1,
                    "rejected": 3,
                    "quarantined": 0,
                    "contested": 0,
                    "duplicate": 0,
                    "not_stored": 4,
                    "memory_ids": ["mem_0192f3a1b2c3d4e5f6a7b8c9d0"],
                    "attempts": 1,
                    "extractor": "rules",
                }
            ]
        }
    )

    session_id: str
    subject_id: str
    status: SessionState
    admitted: int
    pending_approval: int
    rejected: int
    quarantined: int
    contested: int
    duplicate: int
    not_stored: int = Field(description="statements judged not worth storing")
    memory_ids: list[str]
    attempts: int
    extractor: str | None
    reason: str | None = omitted_when_absent("why extraction failed (status failed)")


class ExtractedStatement(ResponseModel):
    """One statement of the session (masked) and what became of it."""

    turn: int
    start: int = Field(description="where the statement starts in its turn's text")
    end: int
    speaker: Literal["customer", "agent", "system"]
    text: str = Field(description="the statement, identifiers masked")
    decision: Literal["admitted", "pending_approval", "quarantined", "not_stored", "superseded", "duplicate"]
    reason: str = Field(
        description="a reason code (question_not_a_fact, low_confidence, matches_live_value...)"
    )
    score: float | None = Field(description="the model's confidence in its label; null when no model read it")
    memory_id: str | None = omitted_when_absent("the memory written, or the one a claim confirmed or flagged")
    type: str | None = omitted_when_absent("the memory type proposed")
    slot: str | None = omitted_when_absent("the slot proposed")
    withheld: bool = omitted_unless_true("its memory is above the caller's clearance: no text, no memory id")


class ExtractionReport(ResponseModel):
    """Why every statement of a session was, or was not, kept. Retained as long as the transcript:
    `available` is false once the transcript's retention ended (or before extraction finished)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "session_id": "S-2026-10-02-01",
                    "subject_id": "ACC-CORP-4812",
                    "status": "processed",
                    "available": True,
                    "statements": [
                        {
                            "turn": 0,
                            "start": 0,
                            "end": 50,
                            "speaker": "customer",
                            "text": "Please send renewal paperwork by email, not phone.",
                            "decision": "admitted",
                            "reason": "stored_as_preference",
                            "score": 0.97,
                            "memory_id": "mem_0192f3a1b2c3d4e5f6a7b8c9d0",
                            "type": "preference",
                            "slot": "preference.contact_channel",
                        },
                        {
                            "turn": 1,
                            "start": 0,
                            "end": 9,
                            "speaker": "agent",
                            "text": "Will do.",
                            "decision": "not_stored",
                            "reason": "not_memorable",
                            "score": 0.91,
                        },
                    ],
                }
            ]
        }
    )

    session_id: str
    subject_id: str
    status: SessionState
    available: bool
    statements: list[ExtractedStatement]
