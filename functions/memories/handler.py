"""Memories API: the write gateway (POST), memory reads, and closing a commitment."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.http import create_app, current_principal, json_response
from agent_memory.api.models.memories import (
    CloseCommitment,
    CommitmentClosed,
    ContentOnlyNote,
    ForgetReply,
    ForgetRequest,
    MemoryDetail,
    MemoryPage,
    MemoryWriteBody,
    RevalidatedMemory,
    WriteMemoryResponse,
)
from agent_memory.bootstrap import get_container
from agent_memory.domain.enums import MemoryType, Status
from agent_memory.domain.errors import InvalidRequest
from agent_memory.domain.explanations import explain
from agent_memory.observability import logger, metrics, tracer
from agent_memory.services.write_gateway import refused_by_tombstone

app = create_app()


@app.post(
    "/v1/memories",
    summary="Propose a memory through the write gateway, typed, or only a subject and content for the "
    "service to classify (an agent-reported note)",
)
def write_memory(body: Annotated[MemoryWriteBody, Body()]) -> Response[WriteMemoryResponse]:
    principal = current_principal(app)
    if isinstance(body, ContentOnlyNote):
        note = get_container().notes.write(principal, body)
        result = note.result
        view = {**result.public_view(), "explanation": note.explanation, "classified_as": note.classified_as}
    else:
        result = get_container().gateway.write(principal, body)
        view = {
            **result.public_view(),
            "explanation": explain(result.decision, result.reasons, slot=body.slot),
        }
    metrics.add_metric(name=f"decision_{result.decision.value}", unit="Count", value=1)
    refusal = refused_by_tombstone(result)
    if refusal is not None:
        raise refusal
    reply = WriteMemoryResponse.model_validate(view)
    return json_response(200 if result.replayed else 201, reply)


@app.post(
    "/v1/memories/<memory_id>/close",
    summary="Close a commitment (done or cancelled): kept for the policy's retention, then expired",
)
def close_commitment(memory_id: str, body: CloseCommitment) -> CommitmentClosed:
    record = get_container().commitments.close(
        current_principal(app), memory_id, outcome=body.outcome, closed_at=body.closed_at, note=body.note
    )
    return CommitmentClosed.model_validate({"memory": record.public_view()})


@app.post(
    "/v1/memories/<memory_id>/revalidate",
    summary="Confirm a memory is still true: last_validated_at becomes now, needs_revalidation clears",
)
def revalidate_memory(memory_id: str) -> RevalidatedMemory:
    record = get_container().lifecycle.revalidate(current_principal(app), memory_id)
    return RevalidatedMemory.model_validate(record.public_view())


@app.get("/v1/memories/<memory_id>", summary="One memory with its version chain")
def get_memory(memory_id: str) -> MemoryDetail:
    return MemoryDetail.model_validate(get_container().reads.get_memory(current_principal(app), memory_id))


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
) -> MemoryPage:
    page = get_container().reads.list_subject(
        current_principal(app),
        subject_id,
        status=status.value if status else None,
        memory_type=type.value if type else None,
        cursor=cursor,
        limit=limit,
    )
    return MemoryPage.model_validate(
        {"subject_id": subject_id, "memories": page.items, "next_cursor": page.next_cursor}
    )


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
