"""Review API: the queue of pending and contested memories, and reviewer decisions."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field

from agent_memory.api.http import create_app, current_principal
from agent_memory.bootstrap import get_container
from agent_memory.domain.sanitize import MaskedText
from agent_memory.observability import logger, metrics, tracer

app = create_app()


class ReviewDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    note: MaskedText | None = Field(default=None, max_length=2000)
    evidence_ref: MaskedText | None = Field(default=None, min_length=1, max_length=300)


@app.get("/v1/review", summary="Pending approvals and contested records, each with the active record")
def review_queue(
    cursor: Annotated[str | None, Query(max_length=500)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> dict[str, Any]:
    page = get_container().reads.review_queue(current_principal(app), cursor=cursor, limit=limit)
    return {"items": page.items, "next_cursor": page.next_cursor}


@app.post(
    "/v1/memories/<memory_id>/approve", summary="Approve: becomes human_verified and supersedes the slot"
)
def approve(memory_id: str, body: ReviewDecision) -> dict[str, Any]:
    result = get_container().review.approve(
        current_principal(app), memory_id, note=body.note, evidence_ref=body.evidence_ref
    )
    return result.public_view()


@app.post("/v1/memories/<memory_id>/reject", summary="Reject a pending or contested memory")
def reject(memory_id: str, body: ReviewDecision) -> dict[str, Any]:
    return get_container().review.reject(current_principal(app), memory_id, note=body.note).public_view()


@app.post("/v1/memories/<memory_id>/reinstate", summary="Roll back: reinstate a superseded version")
def reinstate(memory_id: str, body: ReviewDecision) -> dict[str, Any]:
    return get_container().review.reinstate(current_principal(app), memory_id, note=body.note).public_view()


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
