"""POST /v1/sessions/{id}/close (202, queued), GET /v1/sessions/{id} (outcome) and
GET /v1/sessions/{id}/extraction (what became of every statement, and why)."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.http import create_app, current_principal
from agent_memory.api.models.sessions import (
    CloseSessionRequest,
    ExtractionReport,
    SessionAccepted,
    SessionStatus,
)
from agent_memory.bootstrap import get_container
from agent_memory.domain.extraction import MAX_TRANSCRIPT_BYTES
from agent_memory.observability import logger, metrics, tracer

app = create_app(max_body_bytes=MAX_TRANSCRIPT_BYTES)


@app.post("/v1/sessions/<session_id>/close", summary="Queue a closed session for extraction", status_code=202)
def close_session(session_id: str, body: CloseSessionRequest) -> SessionAccepted:
    accepted = get_container().sessions.close(current_principal(app), session_id, body)
    return SessionAccepted.model_validate(accepted)


@app.get("/v1/sessions/<session_id>", summary="A session's extraction outcome")
def session_status(session_id: str) -> SessionStatus:
    return SessionStatus.model_validate(get_container().sessions.status(current_principal(app), session_id))


@app.get(
    "/v1/sessions/<session_id>/extraction",
    summary="Every statement of a session (masked) with its decision, reason code, score and memory",
)
def session_extraction(session_id: str) -> ExtractionReport:
    report = get_container().sessions.extraction(current_principal(app), session_id)
    return ExtractionReport.model_validate(report)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
