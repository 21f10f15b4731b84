"""Review API: the queue of pending and contested memories, and reviewer decisions."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.http import create_app, current_principal
from agent_memory.api.models.review import ReviewDecision, ReviewPage, ReviewResult
from agent_memory.bootstrap import get_container
from agent_memory.observability import logger, metrics, tracer

app = create_app()


@app.get("/v1/review", summary="Pending approvals and contested records, each with the active record")
def review_queue(
    cursor: Annotated[str | None, Query(max_length=500)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    group_similar: Annotated[
        bool,
        Query(
            description="list only the newest of each group of near-identical items of one subject; "
            "the item's `similar_pending` names the others"
        ),
    ] = False,
) -> ReviewPage:
    page = get_container().reads.review_queue(
        current_principal(app), cursor=cursor, limit=limit, group_similar=group_similar
    )
    return ReviewPage.model_validate({"items": page.items, "next_cursor": page.next_cursor})


@app.post(
    "/v1/memories/<memory_id>/approve", summary="Approve: becomes human_verified and supersedes the slot"
)
def approve(memory_id: str, body: ReviewDecision) -> ReviewResult:
    result = get_container().review.approve(
        current_principal(app),
        memory_id,
        note=body.note,
        evidence_ref=body.evidence_ref,
        supersedes=body.supersedes,
        independent_reason=body.independent_reason,
    )
    return ReviewResult.model_validate(result.public_view())


@app.post("/v1/memories/<memory_id>/reject", summary="Reject a pending or contested memory")
def reject(memory_id: str, body: ReviewDecision) -> ReviewResult:
    result = get_container().review.reject(current_principal(app), memory_id, note=body.note)
    return ReviewResult.model_validate(result.public_view())


@app.post("/v1/memories/<memory_id>/reinstate", summary="Roll back: reinstate a superseded version")
def reinstate(memory_id: str, body: ReviewDecision) -> ReviewResult:
    result = get_container().review.reinstate(current_principal(app), memory_id, note=body.note)
    return ReviewResult.model_validate(result.public_view())


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
