"""Audit: the tenant's events with their hash chain; ids and reasons, never content."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agent_memory.api.models.common import ResponseModel, Timestamp, omitted_when_absent


class AuditEventView(ResponseModel):
    tenant_id: str
    seq: int = Field(description="the event's place in the tenant's chain")
    id: str
    event_type: str
    memory_id: str | None
    subject_id: str | None
    actor: str
    reason: str | None
    payload: dict[str, Any] = Field(description="ids, counts and codes; never memory content")
    created_at: Timestamp
    prev_hash: str
    hash: str
    redacted: Literal["above_clearance"] | None = omitted_when_absent(
        "about a record above the caller's clearance: its id and payload are left out (its hash "
        "cannot be recomputed by the reader; its links still can)"
    )


class AuditPage(ResponseModel):
    events: list[AuditEventView]
    next_cursor: str | None = Field(description="pass as ?cursor= for the next page; null on the last")
