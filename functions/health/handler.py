"""Health (no auth), the whole API's OpenAPI document and its Swagger UI."""

from typing import Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory import __version__
from agent_memory.api.http import create_app, json_response
from agent_memory.api.models.health import Health, OpenApiDocument
from agent_memory.bootstrap import get_container
from agent_memory.domain.errors import Unavailable
from agent_memory.observability import logger, metrics, tracer

app = create_app()


@app.get("/v1/health", summary="Liveness and dependencies")
def health() -> Response[Health]:
    """200 when the database answers; 503 with Retry-After when it does not, within the pool
    timeout twice at most (a hung database is reported, never waited for)."""
    container = get_container()
    try:
        database = "ok" if container.store.ping() else "error"
    except Unavailable:
        database = "unavailable"
    except Exception as exc:
        logger.warning("health check failed", extra={"error": type(exc).__name__})
        database = "error"
    body = Health(
        status="ok" if database == "ok" else "degraded",
        database=database,
        embedder=container.embedder.name,
        version=__version__,
    )
    return json_response(200 if database == "ok" else 503, body)


@app.get("/v1/openapi.json", summary="The OpenAPI document of every route")
def openapi() -> OpenApiDocument:
    # Imported where served: the document's models are most of this handler's cold import.
    from agent_memory.api.openapi import merged_openapi

    return OpenApiDocument.model_validate(merged_openapi())


@app.get("/v1/docs", summary="Swagger UI")
def docs() -> Response[str]:
    """The page with its Content-Security-Policy: its own inline assets only, never framed."""
    from agent_memory.api.openapi import swagger_page

    page, headers = swagger_page("/v1/openapi.json")
    return Response(status_code=200, content_type=content_types.TEXT_HTML, body=page, headers=headers)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
