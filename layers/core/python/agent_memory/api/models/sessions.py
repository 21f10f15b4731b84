"""Sessions: closing one for extraction and reading its outcome."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from agent_memory.api.models.common import ResponseModel, omitted_when_absent
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
