"""Memories: the write gateway, reads of one memory and of a subject's, closing a commitment,
revalidating and forgetting one."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from agent_memory.api.models.common import (
    MEMORY_EXAMPLE,
    MemoryView,
    RequestModel,
    ResponseModel,
    SourceView,
    Timestamp,
    omitted_when_absent,
)
from agent_memory.domain.commitments import CommitmentOutcome
from agent_memory.domain.enums import Authority, Decision, Status
from agent_memory.domain.records import MemoryWrite as MemoryWrite
from agent_memory.services.forget import ForgetReply as ForgetReply
from agent_memory.services.forget import ForgetRequest as ForgetRequest

MEMORY_WRITE_EXAMPLE = {
    "subject_id": "ACC-CORP-4812",
    "type": "fact",
    "category": "CONTRACT_COMMERCIAL",
    "slot": "contract.seat_price",
    "content": "Enterprise license renewed for 500 seats at $42/seat/month.",
    "value": {"seats": 500, "price_per_seat_month": 42, "currency": "USD"},
    "source": {"kind": "system_of_record", "system": "crm", "reference": "CTR-118"},
    "effective_at": "2026-09-01T00:00:00Z",
    "expires_at": "2027-09-01T00:00:00Z",
    "confidence": 1.0,
    "sensitivity": "internal",
    "idempotency_key": "crm:CTR-118:v3",
}


class WriteMemoryResponse(ResponseModel):
    """What the gateway decided (201; 200 when the idempotency key replays an earlier write)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "decision": "pending_approval",
                    "reasons": ["commercial term from a customer claim needs approval"],
                    "memory": None,
                    "superseded": [],
                }
            ]
        }
    )

    decision: Decision
    reasons: list[str]
    memory: MemoryView | None = Field(description="the stored record; null when nothing is shown")
    superseded: list[str] = Field(description="ids of the versions this one superseded")
    explanation: str | None = omitted_when_absent(
        'when not admitted: one sentence a model can relay ("held for a reviewer: it states a discount")'
    )
    classified_as: dict[str, Any] | None = omitted_when_absent(
        "a content-only note: the type, category and slot the service gave it"
    )


class HistoryEntry(ResponseModel):
    """One version of the memory's slot, oldest first."""

    id: str
    version: int
    status: Status
    authority: Authority
    created_at: Timestamp
    effective_at: Timestamp
    superseded_at: Timestamp | None
    supersedes_id: str | None
    superseded_by_id: str | None
    # what a version said and who vouched for it
    content: str | None = None
    source: SourceView | None = None
    verified_by: str | None = None
    verified_at: Timestamp | None = None
    evidence_ref: str | None = None


HISTORY_EXAMPLE: dict[str, Any] = {
    "id": MEMORY_EXAMPLE["id"],
    "version": 1,
    "status": "active",
    "authority": "system_of_record",
    "created_at": "2026-09-01T08:00:00+00:00",
    "effective_at": "2026-09-01T00:00:00+00:00",
    "superseded_at": None,
    "supersedes_id": None,
    "superseded_by_id": None,
    "content": MEMORY_EXAMPLE["content"],
    "source": MEMORY_EXAMPLE["source"],
    "verified_by": None,
    "verified_at": None,
    "evidence_ref": None,
}


class MemoryDetail(MemoryView):
    """One memory with its version chain (versions above the caller's clearance left out)."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{**MEMORY_EXAMPLE, "history": [HISTORY_EXAMPLE]}]}
    )

    history: list[HistoryEntry]


class MemoryPage(ResponseModel):
    """A page of a subject's memories, newest first; `next_cursor` is null on the last page."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"subject_id": "ACC-CORP-4812", "memories": [MEMORY_EXAMPLE], "next_cursor": None}]
        }
    )

    subject_id: str
    memories: list[MemoryView]
    next_cursor: str | None


class CloseCommitment(RequestModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"outcome": "done", "note": "paperwork sent"}]})

    outcome: CommitmentOutcome = CommitmentOutcome.DONE
    closed_at: datetime | None = Field(default=None, description="when it was done; defaults to now")
    note: str | None = Field(default=None, max_length=2000)

    @field_validator("closed_at")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        return v.replace(tzinfo=UTC) if v is not None and v.tzinfo is None else v


class CommitmentClosed(ResponseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "memory": {
                        **MEMORY_EXAMPLE,
                        "type": "commitment",
                        "category": "FOLLOW_UP",
                        "slot": None,
                        "content": "Send the renewal paperwork by email.",
                        "value": {
                            "state": "closed",
                            "outcome": "done",
                            "owner": "agent-7",
                            "due": "2026-10-09",
                        },
                        "authority": "agent_inference",
                        "source": {
                            "kind": "agent_inference",
                            "system": None,
                            "reference": None,
                            "span": None,
                        },
                        "verified": False,
                    }
                }
            ]
        }
    )

    memory: MemoryView = Field(description="the commitment, closed: kept for the policy's retention")


class RevalidatedMemory(MemoryView):
    """The memory just confirmed, every field of the record (GET /v1/memories/{id} without the
    history); `last_validated_at` is now and `needs_revalidation` false."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{**MEMORY_EXAMPLE, "last_validated_at": "2026-10-02T15:00:00Z"}]}
    )
