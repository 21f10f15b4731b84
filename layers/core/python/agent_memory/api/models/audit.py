"""Audit: the tenant's events with their hash chain; ids and reasons, never content."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

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
    free_text: dict[str, str] | None = omitted_when_absent(
        "the reasons and references a person typed (identifiers masked), kept beside the chain until "
        "the subject is erased; the payload holds each one's salted digest"
    )
    redacted: Literal["above_clearance"] | None = omitted_when_absent(
        "about a record above the caller's clearance: its id and payload are left out (its hash "
        "cannot be recomputed by the reader; its links still can)"
    )


class AuditPage(ResponseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "events": [
                        {
                            "tenant_id": "acme",
                            "seq": 41,
                            "id": "evt_0192f3a1b2c3d4e5f6a7b8c9d0",
                            "event_type": "memory_created",
                            "memory_id": "mem_0192f3a1b2c3d4e5f6a7b8c9d0",
                            "subject_id": "ACC-CORP-4812",
                            "actor": "crm-sync",
                            "reason": "admitted",
                            "payload": {"decision": "admitted", "authority": "system_of_record"},
                            "created_at": "2026-09-01T08:00:00Z",
                            "prev_hash": "3b1f…",
                            "hash": "9a0c…",
                        }
                    ],
                    "next_cursor": "41",
                }
            ]
        }
    )

    events: list[AuditEventView]
    next_cursor: str | None = Field(description="pass as ?cursor= for the next page; null on the last")
