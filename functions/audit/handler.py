"""Audit API: events with ids, actor, type, reason, time and hash chain; no content."""

from datetime import datetime
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.http import create_app, current_principal
from agent_memory.api.models.audit import AuditPage
from agent_memory.bootstrap import get_container
from agent_memory.domain.ids import ID_MAX_LENGTH, ID_PATTERN
from agent_memory.observability import logger, metrics, tracer

app = create_app()


@app.get("/v1/audit", summary="Audit events of the caller's tenant")
def audit(
    subject_id: Annotated[str | None, Query(max_length=ID_MAX_LENGTH, pattern=ID_PATTERN)] = None,
    memory_id: Annotated[str | None, Query(max_length=ID_MAX_LENGTH, pattern=ID_PATTERN)] = None,
    since: Annotated[datetime | None, Query()] = None,
    cursor: Annotated[str | None, Query(max_length=40)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> AuditPage:
    page = get_container().reads.audit(
        current_principal(app),
        subject_id=subject_id,
        memory_id=memory_id,
        since=since,
        cursor=cursor,
        limit=limit,
    )
    return AuditPage.model_validate({"events": page.items, "next_cursor": page.next_cursor})


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
