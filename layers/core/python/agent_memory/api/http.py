"""The resolver factory: every HTTP function gets the same validation, error
shape (API.md) and principal extraction, defined once here."""

from __future__ import annotations

import contextlib
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.metrics import MetricUnit

from agent_memory.api.identity import principal_from_claims
from agent_memory.domain.errors import DomainError, InvalidRequest, PayloadTooLarge, Unauthenticated
from agent_memory.domain.records import Principal
from agent_memory.domain.sanitize import unstorable_value
from agent_memory.observability import logger, metrics

MAX_BODY_BYTES = 262_144
# A handled 500 is a normal Lambda return: the platform's Errors metric never counts it, so the
# stack alarms on this one (infra/constructs/monitoring.py).
INTERNAL_ERROR_METRIC = "InternalError"


def error_response(
    status: int, code: str, message: str, request_id: str | None, field: str | None = None
) -> Response:
    error: dict[str, Any] = {"code": code, "message": message, "request_id": request_id}
    if field:
        error["field"] = field
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body={"error": error})


def _request_id(app: APIGatewayRestResolver) -> str | None:
    try:
        return app.current_event.request_context.request_id
    except Exception:
        return None


def create_app(*, max_body_bytes: int = MAX_BODY_BYTES) -> APIGatewayRestResolver:
    app = APIGatewayRestResolver(enable_validation=True)

    def body_limit(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response:
        body = app.current_event.body or ""
        if len(body.encode("utf-8", "surrogatepass")) > max_body_bytes:
            raise PayloadTooLarge(f"request body exceeds {max_body_bytes} bytes", field="body")
        return next_middleware(app)

    def storable_text(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response:
        """Values the database cannot hold (NUL, lone surrogates, NaN) are refused for every route
        with the field named; they used to reach PostgreSQL and come back as a 500."""
        found = _unstorable_in(app.current_event)
        if found is not None:
            raise InvalidRequest(f"{found[0]}: {found[1]}", field=found[0])
        return next_middleware(app)

    app.use(middlewares=[body_limit, storable_text])

    @app.exception_handler(DomainError)
    def _domain(exc: DomainError) -> Response:
        logger.info("request refused", extra={"code": exc.code, "status": exc.status, "field": exc.field})
        _count_refusal(exc.code)
        return error_response(exc.status, exc.code, exc.message, _request_id(app), exc.field)

    @app.exception_handler(RequestValidationError)
    def _validation(exc: RequestValidationError) -> Response:
        # Validation runs before any middleware: a value the database cannot store (a NUL in an
        # unknown key, NaN where a number belongs) is reported as such, and never echoed back.
        unstorable = _unstorable_in(app.current_event)
        if unstorable is not None:
            _count_refusal("invalid_request")
            where, why = unstorable
            return error_response(422, "invalid_request", f"{where}: {why}", _request_id(app), where)
        errors = exc.errors()
        first = errors[0] if errors else {}
        loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path")]
        field = ".".join(loc) or None
        msg = first.get("msg", "invalid request")
        if first.get("type") == "json_invalid":
            field, msg = "body", "request body is not valid JSON"
        message = f"{field}: {msg}" if field else msg
        _count_refusal("invalid_request")
        return error_response(422, "invalid_request", message, _request_id(app), field)

    @app.exception_handler(RecursionError)
    def _too_deep(exc: RecursionError) -> Response:
        # JSON nested thousands deep: the parser gives up before validation can say anything.
        _count_refusal("invalid_request")
        return error_response(
            422, "invalid_request", "body: JSON nested too deeply", _request_id(app), "body"
        )

    @app.exception_handler(Exception)
    def _unexpected(exc: Exception) -> Response:
        logger.exception("unhandled error", extra={"error": type(exc).__name__})
        metrics.add_metric(name=INTERNAL_ERROR_METRIC, unit=MetricUnit.Count, value=1)
        return error_response(500, "internal_error", "internal error", _request_id(app))

    return app


def _count_refusal(code: str) -> None:
    """One metric per refusal code (RequestRefused_invalid_request, _forbidden, ...), so an
    operator can alarm on a client sending bad requests or a role being refused (the metrics
    carry the service dimension only: per code, across functions)."""
    metrics.add_metric(name=f"RequestRefused_{code}", unit=MetricUnit.Count, value=1)


def _unstorable_in(event: Any) -> tuple[str, str] | None:
    """The first body field, path or query parameter the database cannot store. The body is the
    one validation parsed (cached on the event; base64 bodies decoded the same way)."""
    body: Any = None
    with contextlib.suppress(ValueError):  # not JSON: validation says so with its own message
        body = event.json_body
    for part in (
        body,
        event.path_parameters,
        event.query_string_parameters,
        event.multi_value_query_string_parameters,
    ):
        found = unstorable_value(part or {})
        if found is not None:
            return found
    return None


def current_principal(app: APIGatewayRestResolver) -> Principal:
    """The caller, from the authorizer's context (API Gateway in AWS, the local front locally)."""
    authorizer = (app.current_event.get("requestContext") or {}).get("authorizer") or {}
    if not authorizer.get("tenant_id"):
        raise Unauthenticated("missing or invalid bearer token")
    return principal_from_claims(authorizer)


def json_response(status: int, body: Any) -> Response:
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body)
