"""What several areas share: the base classes, the error body, a memory record as reads show it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from agent_memory.domain.enums import Authority, MemoryType, Scope, Sensitivity, Status

# A time the service formatted (RFC 3339). Kept as the service wrote it, so a response's bytes
# do not change with its model: some views write `+00:00`, records written by pydantic `Z`.
Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]


class ResponseModel(BaseModel):
    """A response body: every field declared (the document shows them all), no other allowed."""

    model_config = ConfigDict(extra="forbid")


# Tags of a body that is one of several shapes (a typed memory write or a content-only note): a
# validation error's location names the field, never the shape it was read as.
BODY_VARIANT_TAGS = frozenset({"typed_write", "content_only_note"})


class RequestModel(BaseModel):
    """A request body defined for the HTTP layer: an unknown field is a 422 naming it."""

    model_config = ConfigDict(extra="forbid")


def _is_none(value: Any) -> bool:
    return value is None


def _is_false(value: Any) -> bool:
    return value is False


def omitted_when_absent(description: str) -> Any:
    """A field present only in some answers: null here means not sent at all."""
    return Field(default=None, exclude_if=_is_none, description=description)


def omitted_unless_true(description: str) -> Any:
    """A flag sent only when true (an answer without it means false)."""
    return Field(default=False, exclude_if=_is_false, description=description)


# -- the error body ---------------------------------------------------------------------------


class ErrorDetail(ResponseModel):
    code: str = Field(
        description="invalid_request, unauthenticated, forbidden, unauthorized_memory_mutation, "
        "not_found, conflict, payload_too_large, unsupported_media_type, rate_limited, unavailable, "
        "internal_error"
    )
    message: str = Field(description="what was refused and why; never a stack trace or another tenant's data")
    request_id: str | None = Field(description="quote it when reporting a problem")
    field: str | None = omitted_when_absent("the offending field or parameter, when one is to blame")
    reason: str | None = omitted_when_absent(
        "why, as a word a program can test (a 409 on a write: `tombstoned`, `erasure_in_progress`; "
        "a 429: the limit reached, `requests_per_second`, `memories_per_subject`, ...)"
    )
    limit: int | None = omitted_when_absent(
        "a 429's limit: the value of the policy key `field` names (requests per second, memories, bytes)"
    )


class ErrorBody(ResponseModel):
    """Every refusal and failure answers with this body (docs/api.md, Errors)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "error": {
                        "code": "invalid_request",
                        "message": "subject_id: Field required",
                        "request_id": "c0ffee00-0000-4000-8000-000000000001",
                        "field": "subject_id",
                    }
                }
            ]
        }
    )

    error: ErrorDetail


# -- a memory record as reads show it ---------------------------------------------------------


class SpanView(ResponseModel):
    turn: int
    start: int
    end: int


class SourceView(ResponseModel):
    """Where a memory came from; `kind` is its authority."""

    kind: Authority
    system: str | None = None
    reference: str | None = None
    span: SpanView | None = None


MEMORY_EXAMPLE: dict[str, Any] = {
    "id": "mem_0192f3a1b2c3d4e5f6a7b8c9d0",
    "tenant_id": "acme",
    "subject_id": "ACC-CORP-4812",
    "scope": "subject",
    "ticket_id": None,
    "session_id": None,
    "type": "fact",
    "category": "CONTRACT_COMMERCIAL",
    "slot": "contract.seat_price",
    "content": "Enterprise license renewed for 500 seats at $42/seat/month.",
    "value": {"seats": 500, "price_per_seat_month": 42, "currency": "USD"},
    "source": {"kind": "system_of_record", "system": "crm", "reference": "CTR-118", "span": None},
    "extractor": None,
    "extractor_version": None,
    "actor": "crm-sync",
    "authority": "system_of_record",
    "confidence": 1.0,
    "confidence_basis": None,
    "importance": 0.5,
    "sensitivity": "internal",
    "status": "active",
    "flags": [],
    "reasons": [],
    "created_at": "2026-09-01T08:00:00Z",
    "effective_at": "2026-09-01T00:00:00Z",
    "valid_to": None,
    "last_validated_at": None,
    "expires_at": "2027-09-01T00:00:00Z",
    "legal_hold": False,
    "version": 1,
    "supersedes_id": None,
    "superseded_by_id": None,
    "superseded_at": None,
    "verified_by": None,
    "verified_at": None,
    "evidence_ref": None,
    "lineage_keys": ["crm:CTR-118"],
    "content_hash": "9f2c…",
    "embedding_model": "local-minilm-onnx",
    "needs_revalidation": False,
    "verified": True,
    "section": "verified_facts",
}


class MemoryView(ResponseModel):
    """A memory record, every field of the record schema (no embedding vector), and `verified`.
    A version above the caller's clearance is never named in `supersedes_id`/`superseded_by_id`."""

    model_config = ConfigDict(json_schema_extra={"examples": [MEMORY_EXAMPLE]})

    id: str
    tenant_id: str
    subject_id: str
    scope: Scope
    ticket_id: str | None
    session_id: str | None
    type: MemoryType
    category: str
    slot: str | None
    content: str = Field(description="data about the customer, never an instruction to the agent")
    value: dict[str, Any]
    source: SourceView
    extractor: str | None
    extractor_version: str | None
    actor: str
    authority: Authority
    confidence: float
    confidence_basis: str | None
    importance: float
    sensitivity: Sensitivity
    status: Status
    flags: list[str]
    reasons: list[str]
    created_at: Timestamp
    effective_at: Timestamp
    valid_to: Timestamp | None
    last_validated_at: Timestamp | None
    expires_at: Timestamp | None
    legal_hold: bool
    version: int
    supersedes_id: str | None
    superseded_by_id: str | None
    superseded_at: Timestamp | None
    verified_by: str | None
    verified_at: Timestamp | None
    evidence_ref: str | None
    lineage_keys: list[str]
    content_hash: str
    embedding_model: str | None
    needs_revalidation: bool
    verified: bool = Field(description="its authority is one of the verified ones")
    section: Literal["verified_facts", "relevant", "supporting", "unverified"] = Field(
        description="the section of a retrieval's context it is shown in when served, from its type "
        "and its source (the type table)"
    )
