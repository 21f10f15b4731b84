"""Working memory of an open session: PUT, GET and DELETE of short-lived values (agent)."""

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.http import create_app, current_principal
from agent_memory.api.models.working import WorkingItemView, WorkingPutRequest, WorkingSessionView
from agent_memory.bootstrap import get_container
from agent_memory.observability import logger, metrics, tracer

app = create_app()


@app.put(
    "/v1/sessions/<session_id>/working/<key>",
    summary="Keep a short-lived value for the session (masked, screened, hard TTL)",
)
def put_working(session_id: str, key: str, body: WorkingPutRequest) -> WorkingItemView:
    return get_container().working.put(current_principal(app), session_id, key, body)


@app.get("/v1/sessions/<session_id>/working", summary="The session's unexpired working values")
def list_working(session_id: str) -> WorkingSessionView:
    return get_container().working.show(current_principal(app), session_id)


@app.delete("/v1/sessions/<session_id>/working/<key>", summary="Delete one working value", status_code=204)
def delete_working(session_id: str, key: str) -> Response[None]:
    get_container().working.delete(current_principal(app), session_id, key)
    return Response(status_code=204)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
