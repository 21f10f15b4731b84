"""Memories API: the write gateway (POST), memory reads, and closing a commitment."""

from datetime import UTC, datetime
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent_memory.api.http import create_app, current_principal, json_response
from agent_memory.bootstrap import get_container
from agent_memory.domain.commitments import CommitmentOutcome
from agent_memory.domain.enums import MemoryType, Status
from agent_memory.domain.errors import InvalidRequest
from agent_memory.domain.records import MemoryWrite
from agent_memory.observability import logger, metrics, tracer
from agent_memory.services.forget import ForgetReply, ForgetRequest

app = create_app()


@app.post("/v1/memories", summary="Propose a memory through the write gateway")
def write_memory(body: MemoryWrite) -> Response[dict[str, Any]]:
    result = get_container().gateway.write(current_principal(app), body)
    metrics.add_metric(name=f"decision_{result.decision.value}", unit="Count", value=1)
    return json_response(200 if result.replayed else 201, result.public_view())


class CloseCommitment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outcome: CommitmentOutcome = CommitmentOutcome.DONE
    closed_at: datetime | None = Field(default=None, description="when it was done; defaults to now")
    note: str | None = Field(default=None, max_length=2000)

    @field_validator("closed_at")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        return v.replace(tzinfo=UTC) if v is not None and v.tzinfo is None else v


@app.post(
    "/v1/memories/<memory_id>/close",
    summary="Close a commitment (done or cancelled): kept for the policy's retention, then expired",
)
def close_commitment(memory_id: str, body: CloseCommitment) -> dict[str, Any]:
    record = get_container().commitments.close(
        current_principal(app), memory_id, outcome=body.outcome, closed_at=body.closed_at, note=body.note
    )
    return {"memory": record.public_view()}


class RevalidatedMemory(BaseModel):
    """The memory just confirmed, every field of the record (GET /v1/memories/{id} without the
    history); the ones this route changes are named."""

    model_config = ConfigDict(extra="allow")

    id: str
    subject_id: str
    type: MemoryType
    status: Status
    last_validated_at: datetime = Field(description="now: when this confirmation was recorded")
    needs_revalidation: bool = Field(description="false: the confirmation clears the flag")
    verified: bool


@app.post(
    "/v1/memories/<memory_id>/revalidate",
    summary="Confirm a memory is still true: last_validated_at becomes now, needs_revalidation clears",
)
def revalidate_memory(memory_id: str) -> RevalidatedMemory:
    record = get_container().lifecycle.revalidate(current_principal(app), memory_id)
    return RevalidatedMemory.model_validate(record.public_view())


@app.get("/v1/memories/<memory_id>", summary="One memory with its version chain")
def get_memory(memory_id: str) -> dict[str, Any]:
    return get_container().reads.get_memory(current_principal(app), memory_id)


@app.delete(
    "/v1/memories/<memory_id>",
    summary="Forget one memory on the customer's request: content, value, vectors and full-text entry "
    "removed at once, a content-free entry kept in its history, a tombstone against its return",
)
def delete_memory(memory_id: str, body: ForgetRequest | None = None) -> ForgetReply:
    if body is None:  # no body at all: say which field is missing, as for an empty object
        raise InvalidRequest("reason: Field required", field="reason")
    return get_container().forget.forget(current_principal(app), memory_id, body)


@app.get("/v1/subjects/<subject_id>/memories", summary="A subject's memories, newest first")
def list_subject_memories(
    subject_id: str,
    status: Annotated[Status | None, Query()] = None,
    type: Annotated[MemoryType | None, Query()] = None,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> dict[str, Any]:
    page = get_container().reads.list_subject(
        current_principal(app),
        subject_id,
        status=status.value if status else None,
        memory_type=type.value if type else None,
        cursor=cursor,
        limit=limit,
    )
    return {"subject_id": subject_id, "memories": page.items, "next_cursor": page.next_cursor}


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
