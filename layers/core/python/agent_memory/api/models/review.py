"""Review: the queue of pending and contested memories, and a reviewer's decisions."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from agent_memory.api.models.common import (
    MEMORY_EXAMPLE,
    MemoryView,
    RequestModel,
    ResponseModel,
    omitted_when_absent,
)
from agent_memory.domain.ids import SubjectId as MemoryIdText  # the same id rule
from agent_memory.domain.sanitize import MaskedText


class ReviewDecision(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"note": "confirmed on the call", "evidence_ref": "signed-contract-2026-118"}]
        }
    )

    note: MaskedText | None = Field(default=None, max_length=2000)
    evidence_ref: MaskedText | None = Field(
        default=None,
        min_length=1,
        max_length=300,
        description="required to approve a CONTRACT_COMMERCIAL memory",
    )
    supersedes: list[MemoryIdText] = Field(
        default_factory=list,
        max_length=20,
        description="approve only: the active terms of the same commercial family (the review item's "
        "family_active) that this one supersedes",
    )
    independent_reason: MaskedText | None = Field(
        default=None,
        min_length=1,
        max_length=2000,
        description="approve only: why this term stands beside its family's other active terms (only "
        "that a reason was given is kept)",
    )


class ReviewItem(ResponseModel):
    memory: MemoryView = Field(description="the memory waiting for a decision")
    active: MemoryView | None = Field(description="the served record it would supersede or contradicts")
    diff: dict[str, Any] | None = Field(
        description="content (word operations), value (added/removed/changed keys), fields and source "
        "that differ from the active record; null without one the reviewer may read"
    )
    evidence_required: bool | None = omitted_when_absent(
        "approving it needs an evidence_ref (a commercial term does)"
    )
    similar_pending: list[str] | None = omitted_when_absent(
        "ids of the subject's other items waiting for review that say nearly the same (same type and "
        "slot; the policy's `review_group_similarity`), newest first: decide them together"
    )
    family_active: list[MemoryView] | None = omitted_when_absent(
        "the account's active terms of the same commercial family in other slots (price, discount and "
        "seat price; renewal and term; SLA and support tier): approving needs `supersedes` or "
        "`independent_reason` for each"
    )


class ReviewPage(ResponseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "items": [
                        {
                            "memory": {
                                **MEMORY_EXAMPLE,
                                "status": "pending_approval",
                                "verified": False,
                                "authority": "customer_claim",
                                "source": {
                                    "kind": "customer_claim",
                                    "system": None,
                                    "reference": None,
                                    "span": None,
                                },
                                "content": "Customer says the renewal price is $38/seat/month.",
                            },
                            "active": MEMORY_EXAMPLE,
                            "diff": {
                                "content": [{"op": "removed", "text": "$42"}, {"op": "added", "text": "$38"}],
                                "value": {"added": {}, "removed": {}, "changed": {}},
                                "fields": {},
                                "source": {},
                            },
                            "evidence_required": True,
                        }
                    ],
                    "next_cursor": None,
                }
            ]
        }
    )

    items: list[ReviewItem]
    next_cursor: str | None


class ReviewResult(ResponseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"memory": MEMORY_EXAMPLE, "superseded": []}]})

    memory: MemoryView
    superseded: list[str] = Field(description="ids of the versions the decision superseded")
