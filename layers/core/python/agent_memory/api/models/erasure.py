"""Erasure (start, status and receipt), legal holds, and a subject's export."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from agent_memory.api.models.common import (
    RequestModel,
    ResponseModel,
    Timestamp,
    omitted_unless_true,
    omitted_when_absent,
)
from agent_memory.domain.sanitize import MaskedText
from agent_memory.services.erasure import ErasureRequest as ErasureRequest
from agent_memory.services.export import SubjectExport as SubjectExport

ERASURE_REQUEST_EXAMPLE = {"reason": "gdpr_article_17", "request_reference": "DSR-991"}


class LegalHold(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"hold": True, "reason": "litigation LIT-2026-07"}]}
    )

    hold: bool
    reason: MaskedText = Field(min_length=1, max_length=500)


class ErasureStepView(ResponseModel):
    """One step of the erasure; a step may report counts of its own (`derived`, `working`, ...)."""

    model_config = ConfigDict(extra="allow")

    name: str
    status: Literal["pending", "running", "retrying", "succeeded", "failed"]
    count: int | None = Field(description="what the step removed or checked; null before it ran")
    attempts: int


class RetainedUnderHold(ResponseModel):
    """Records an erasure kept because a legal hold covers them (GDPR Art. 17(3)(e)): no content."""

    hold_id: str = Field(description="the hold: one memory's, or its subject's")
    records: int = Field(description="how many of the subject's records it kept")


class ErasureReceipt(ResponseModel):
    """Proof of a verified erasure: what was removed from each layer, and that nothing is left."""

    model_config = ConfigDict(extra="allow")

    erasure_id: str
    subject_id: str
    request_reference: str | None = Field(
        description="null: the reference is the requester's words and is not kept (see request_reference_sha256)"
    )
    request_reference_sha256: str | None = Field(
        default=None,
        description="hex SHA-256 of subject_id, a unit separator (U+001F) and the request reference",
    )
    records: int
    embeddings: int
    derived: int
    objects: int
    working: int
    tombstones: int
    lineage_keys: int
    requested_at: Timestamp
    verified_at: Timestamp
    verification: dict[str, int] = Field(description="per layer, what verification found left: all zero")
    retained_under_hold: list[RetainedUnderHold] = Field(
        default_factory=list,
        description="records kept under a legal hold, per hold (not counted as left by verification); "
        "releasing the hold starts the erasure that completes this one",
    )
    completes_erasure_id: str | None = omitted_when_absent(
        "the erasure whose held records this one erased, once their hold was released"
    )


class ErasureStatus(ResponseModel):
    """An erasure's steps and, once verified, its receipt (202 when just started)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "erasure_id": "era_0192f3a1b2c3d4e5f6a7b8c9d0",
                    "subject_id": "ACC-CORP-4812",
                    "status": "running",
                    "deadline": "2026-10-05T15:00:00+00:00",
                    "deadline_passed": False,
                    "steps": [{"name": "resolve_lineage", "status": "pending", "count": None, "attempts": 0}],
                    "receipt": None,
                }
            ]
        }
    )

    erasure_id: str
    subject_id: str
    status: Literal["running", "verified", "failed"]
    deadline: Timestamp
    deadline_passed: bool = Field(description="still running after its deadline")
    steps: list[ErasureStepView]
    receipt: ErasureReceipt | None
    reason: str | None = omitted_when_absent("why it failed (status failed)")
    duplicate_of_earlier_request: bool = omitted_unless_true(
        "the same request_reference was sent before: this is that request's erasure"
    )
    completes_erasure_id: str | None = omitted_when_absent(
        "the erasure this one completes: started when a hold over records it kept was released"
    )
    completed_by: list[str] | None = omitted_when_absent(
        "the erasures that completed this one after a hold over records it kept was released"
    )


class SubjectHold(ResponseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"subject_id": "ACC-CORP-4812", "legal_hold": True}]}
    )

    subject_id: str
    legal_hold: bool
    hold_id: str | None = omitted_when_absent("the hold set or released")
    erasure_id: str | None = omitted_when_absent(
        "on release: the erasure started to complete one that kept records under this hold"
    )


class MemoryHold(ResponseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"memory_id": "mem_0192f3a1b2c3d4e5f6a7b8c9d0", "legal_hold": True}]}
    )

    memory_id: str
    legal_hold: bool
    hold_id: str | None = omitted_when_absent("the hold set or released")
    erasure_id: str | None = omitted_when_absent(
        "on release: the erasure started to complete one that kept records under this hold"
    )
