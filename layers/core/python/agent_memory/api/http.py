"""The resolver factory: every HTTP function gets the same validation, error
shape (docs/api.md) and principal extraction, defined once here."""

from __future__ import annotations

import contextlib
import contextvars
import json
import threading
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import ResponseBuilder
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestValidationError,
    ResponseValidationError,
)
from aws_lambda_powertools.metrics import MetricUnit
from pydantic import ValidationError

from agent_memory.api.identity import principal_from_authorizer
from agent_memory.api.models.common import BODY_VARIANT_TAGS, ErrorBody, ErrorDetail
from agent_memory.domain.enums import EventType
from agent_memory.domain.errors import (
    DomainError,
    InvalidRequest,
    PayloadTooLarge,
    RateLimited,
    Unauthenticated,
    Unavailable,
)
from agent_memory.domain.ids import ID_RULE, valid_id
from agent_memory.domain.records import Principal
from agent_memory.domain.sanitize import unstorable_value
from agent_memory.observability import logger, metrics
from agent_memory.request_scope import admit_request, begin_request, current_caller, set_caller

MAX_BODY_BYTES = 262_144
# A handled 500 is a normal Lambda return: the platform's Errors metric never counts it, so the
# stack alarms on this one (infra/constructs/monitoring.py).
INTERNAL_ERROR_METRIC = "InternalError"


# What a 503 tells the client to wait before it tries again (a database or dependency outage).
RETRY_AFTER_S = 5


def error_body(
    code: str,
    message: str,
    request_id: str | None,
    field: str | None = None,
    reason: str | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """The error body every refusal answers, here and in the local front (`ErrorBody`; `field`
    only when one is to blame, `reason` only when the refusal names one, `limit` on a 429)."""
    detail = ErrorDetail(
        code=code,
        message=message,
        field=field or None,
        request_id=request_id,
        reason=reason or None,
        limit=limit,
    )
    return ErrorBody(error=detail).model_dump(mode="json")


def rate_limited_response(exc: RateLimited, request_id: str | None) -> Response:
    """A 429: the limit named and its value, and when to try again (`Retry-After`)."""
    body = error_body(exc.code, exc.message, request_id, exc.field, exc.reason, exc.limit)
    return Response(
        status_code=429,
        content_type=content_types.APPLICATION_JSON,
        body=body,
        headers={"Retry-After": str(exc.retry_after_s)},
    )


def error_response(
    status: int,
    code: str,
    message: str,
    request_id: str | None,
    field: str | None = None,
    reason: str | None = None,
) -> Response:
    """A refusal as the resolver answers it: `error_body`, with Retry-After on a 503."""
    return json_response(status, error_body(code, message, request_id, field, reason))


def _request_id(app: APIGatewayRestResolver) -> str | None:
    try:
        return app.current_event.request_context.request_id
    except Exception:
        return None


_EVENT: contextvars.ContextVar[Any] = contextvars.ContextVar("memory_request_event")
_LAMBDA_CONTEXT: contextvars.ContextVar[Any] = contextvars.ContextVar("memory_lambda_context")
_ROUTING_CONTEXT: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("memory_routing_context")
_STACK_LOCK = threading.Lock()


class RequestScopedResolver(APIGatewayRestResolver):
    """Powertools' REST resolver with its per-request state held per request.

    The stock resolver keeps the current event and Lambda context as attributes of a class shared
    by every router in the process, and the route arguments in a dict on the router. Lambda runs one
    request per process, so that is safe there; the local server answers on threads, and two
    requests in flight at once read each other's event: the principal (tenant), the path
    arguments and the request id. Here each `resolve` runs in its own context (`contextvars`), and
    the three attributes read and write that context, so a request can only ever see itself.
    """

    @property  # type: ignore[override]
    def current_event(self) -> Any:
        return _EVENT.get()

    @current_event.setter
    def current_event(self, value: Any) -> None:
        _EVENT.set(value)

    @property  # type: ignore[override]
    def lambda_context(self) -> Any:
        return _LAMBDA_CONTEXT.get(None)

    @lambda_context.setter
    def lambda_context(self, value: Any) -> None:
        _LAMBDA_CONTEXT.set(value)

    @property  # type: ignore[override]
    def context(self) -> dict[str, Any]:
        found = _ROUTING_CONTEXT.get(None)
        if found is None:
            found = {}
            _ROUTING_CONTEXT.set(found)
        return found

    @context.setter
    def context(self, value: dict[str, Any]) -> None:
        _ROUTING_CONTEXT.set(value)

    def resolve(self, event: Any, context: Any) -> dict[str, Any]:
        return contextvars.copy_context().run(self._resolve_in_own_context, event, context)

    def _resolve_in_own_context(self, event: Any, context: Any) -> dict[str, Any]:
        begin_request()  # every database wait of this request is bounded by the request limit
        if not isinstance(event, dict):
            event = dict(event)
        refused = refusal_before_routing(event)
        if refused is None:
            event = _json_labelled_plainly(event)
        self.current_event = self._to_proxy_event(event)
        self.lambda_context = context
        self.context = {}
        if refused is not None:
            return self._build_response(ResponseBuilder(refused, serializer=self._serializer))
        return self._build_response(self._resolve())

    def _call_route(self, route: Any, route_arguments: dict[str, str]) -> Any:
        # Powertools builds a route's middleware stack on its first call; two first calls at once
        # would wrap it twice. Build it once, under a lock.
        if not route._middleware_stack_built:
            with _STACK_LOCK:
                if not route._middleware_stack_built:
                    route._build_middleware_stack(router_middlewares=self._router_middlewares, app=self)
        # Powertools takes route arguments from the raw path; API Gateway (and the local server)
        # hand them decoded exactly once in pathParameters, where the id rule was applied.
        decoded = self.current_event.path_parameters or {}
        route_arguments = {k: decoded.get(k, v) for k, v in route_arguments.items()}
        return super()._call_route(route, route_arguments)


_METHODS_WITH_A_BODY = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def refusal_before_routing(event: dict[str, Any]) -> Response | None:
    """What is refused before a route sees the request, the same in AWS and locally: a token the
    authorizer refused after its signature verified (401, recorded in the tenant's audit chain), a
    body that is not JSON by its media type (415), and a path id outside the id rule (422)."""
    request_id = (event.get("requestContext") or {}).get("requestId")
    authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
    if "refused" in authorizer:
        message = str(authorizer.get("refused") or "invalid token")
        _count_refusal("unauthenticated")
        _record_refusal(
            EventType.AUTHORIZATION_DENIED,
            tenant_id=authorizer.get("tenant_id"),
            actor=authorizer.get("sub"),
            route=_route_of(event),
            status=401,
            code="unauthenticated",
            reason=message,
        )
        return error_response(401, "unauthenticated", message, request_id)
    method = str(event.get("httpMethod") or "").upper()
    if method in _METHODS_WITH_A_BODY and event.get("body"):
        headers = {str(k).lower(): v for k, v in (event.get("headers") or {}).items()}
        media_type = headers.get("content-type")
        if media_type is not None and not is_json_media_type(str(media_type)):
            _count_refusal("unsupported_media_type")
            return error_response(
                415,
                "unsupported_media_type",
                "request body must be sent as application/json (UTF-8)",
                request_id,
                "Content-Type",
            )
    for name, value in (event.get("pathParameters") or {}).items():
        if not isinstance(value, str) or not valid_id(value):
            _count_refusal("invalid_request")
            return error_response(422, "invalid_request", f"{name}: must be {ID_RULE}", request_id, name)
    return None


def _json_labelled_plainly(event: dict[str, Any]) -> dict[str, Any]:
    """A JSON media type spelled any accepted way becomes `application/json` for the validator,
    which matches the exact lower-case prefix only; a leading byte order mark is dropped."""
    changed = dict(event)
    body = event.get("body")
    if isinstance(body, str) and body.startswith("\ufeff") and not event.get("isBase64Encoded"):
        changed["body"] = body[1:]  # a UTF-8 byte order mark (Windows tools send one): RFC 8259 8.1
    for key in ("headers", "multiValueHeaders"):
        found = event.get(key)
        if not found:
            continue
        plain = {k: v for k, v in found.items() if str(k).lower() != "content-type"}
        if len(plain) != len(found):
            plain["content-type"] = ["application/json"] if key == "multiValueHeaders" else "application/json"
        changed[key] = plain
    return changed


def is_json_media_type(value: str) -> bool:
    """`application/json` in any letter case, with no parameter but an optional UTF-8 charset
    (RFC 8259: JSON exchanged between systems is UTF-8; RFC 9110: media types are case-insensitive)."""
    media_type, _, params = value.partition(";")
    if media_type.strip().lower() != "application/json":
        return False
    for param in filter(None, (p.strip() for p in params.split(";"))):
        name, _, val = param.partition("=")
        if name.strip().lower() != "charset" or val.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return False
    return True


def _first_validation_error(exc: RequestValidationError) -> tuple[str | None, str]:
    """The field (dotted, without body/query/path) and message of the first validation error."""
    errors = exc.errors()
    first = errors[0] if errors else {}
    # The first element says where (body, query, path); a field may itself be named "query".
    raw_loc = list(first.get("loc", ()))
    part = raw_loc[0] if raw_loc and raw_loc[0] in ("body", "query", "path") else None
    if part is not None:
        raw_loc = raw_loc[1:]
    if part == "body" and raw_loc and raw_loc[0] in BODY_VARIANT_TAGS:
        raw_loc = raw_loc[1:]
    # a body missing as a whole (or not an object) names the body itself
    field = ".".join(str(p) for p in raw_loc) or ("body" if part == "body" else None)
    msg = first.get("msg", "invalid request")
    if first.get("type") == "json_invalid":
        field, msg = "body", "request body is not valid JSON"
    return field, (f"{field}: {msg}" if field else msg)


def create_app(*, max_body_bytes: int = MAX_BODY_BYTES) -> APIGatewayRestResolver:
    # A response that does not fit its route's model (api/models) is the service's fault: a 500,
    # never the 422 Powertools would answer by default.
    app = RequestScopedResolver(
        enable_validation=True, response_validation_error_http_code=HTTPStatus.INTERNAL_SERVER_ERROR
    )
    _use_request_checks(app, max_body_bytes)
    _map_errors(app)
    return app


def _use_request_checks(app: APIGatewayRestResolver, max_body_bytes: int) -> None:
    """What every route refuses before its handler runs: an oversized body, unstorable values."""

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


def _map_errors(app: APIGatewayRestResolver) -> None:
    """Every exception mapped to the one error body, once (domain errors by their code)."""

    @app.exception_handler(DomainError)
    def _domain(exc: DomainError) -> Response:
        logger.info("request refused", extra={"code": exc.code, "status": exc.status, "field": exc.field})
        _count_refusal(exc.code)
        if exc.status in (401, 403):
            _record_denial(app, exc.status, exc.code, exc.message)
        elif exc.status >= 500 and not isinstance(exc, Unavailable):
            # A database outage is counted (metrics) but not written to the chain: the write would
            # wait for the same database again and the 503 would come late, to record nothing.
            _record_retrieval_failure(app, exc.status, exc.code, exc.message)
        if isinstance(exc, RateLimited):
            return rate_limited_response(exc, _request_id(app))
        return error_response(exc.status, exc.code, exc.message, _request_id(app), exc.field, exc.reason)

    @app.exception_handler(RequestValidationError)
    def _validation(exc: RequestValidationError) -> Response:
        # Validation runs before any middleware: a value the database cannot store (a NUL in an
        # unknown key, NaN where a number belongs) is reported as such, and never echoed back.
        unstorable = _unstorable_in(app.current_event)
        if unstorable is not None:
            _count_refusal("invalid_request")
            where, why = unstorable
            return error_response(422, "invalid_request", f"{where}: {why}", _request_id(app), where)
        field, message = _first_validation_error(exc)
        _count_refusal("invalid_request")
        return error_response(422, "invalid_request", message, _request_id(app), field)

    @app.exception_handler(RecursionError)
    def _too_deep(exc: RecursionError) -> Response:
        # JSON nested thousands deep: the parser gives up before validation can say anything. A
        # recursion anywhere else is the service's own fault, and answers as one (500, logged).
        if _nesting_depth(_raw_body(app.current_event)) < _DEEP_BODY:
            return _unexpected(exc)
        _count_refusal("invalid_request")
        return error_response(
            422, "invalid_request", "body: JSON nested too deeply", _request_id(app), "body"
        )

    @app.exception_handler(Exception)
    def _unexpected(exc: Exception) -> Response:
        extra: dict[str, Any] = {"error": type(exc).__name__}
        if isinstance(exc, ValidationError | ResponseValidationError):
            # an answer that does not fit its model: where, never the values
            extra["locations"] = [".".join(map(str, e.get("loc", ()))) for e in exc.errors()][:10]
        logger.exception("unhandled error", extra=extra)
        metrics.add_metric(name=INTERNAL_ERROR_METRIC, unit=MetricUnit.Count, value=1)
        # the error's class, never its message (which may quote what it failed on)
        _record_retrieval_failure(app, 500, "internal_error", f"unexpected {type(exc).__name__}")
        return error_response(500, "internal_error", "internal error", _request_id(app))


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


# A body nested at least this deep is the caller's (the request models nest a few levels at most).
_DEEP_BODY = 200


def _raw_body(event: Any) -> str:
    """The request's body as text (decoded when API Gateway sent it base64), or empty."""
    try:
        body = getattr(event, "decoded_body", None)
    except Exception:  # a body that is not valid base64 or UTF-8: nothing nested to find
        return ""
    return body if isinstance(body, str) else ""


def _nesting_depth(text: str) -> int:
    """The deepest bracket nesting of a JSON text, strings skipped (no parse: it is what failed)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def current_principal(app: APIGatewayRestResolver) -> Principal:
    """The caller, from the authorizer's context (API Gateway in AWS, the local front locally).
    From here on it is the request's caller (`request_scope`): every tenant transaction of the
    request applies its subject binding in SQL."""
    authorizer = (app.current_event.get("requestContext") or {}).get("authorizer") or {}
    if not authorizer.get("tenant_id"):
        raise Unauthenticated("missing or invalid bearer token")
    principal = principal_from_authorizer(authorizer)
    set_caller(principal)
    admit_request(principal.tenant_id)
    return principal


# The routes whose 5xx is a failed retrieval (`retrieval_failed` in the audit chain).
RETRIEVAL_ROUTES = frozenset({"POST /v1/retrieve", "POST /v1/resolutions/search"})


def _route_of(event: Any) -> str:
    """`METHOD /template` of the request (API Gateway's resource: ids stay placeholders)."""
    get = event.get if isinstance(event, dict) else getattr(event, "get", None)
    if get is None:
        return "unknown"
    return f"{str(get('httpMethod') or '').upper()} {get('resource') or 'unknown'}"


def _named_subject(event: Any) -> str | None:
    """The subject a request names (path, then query, then a JSON body's `subject_id`), when it
    is a valid id; None otherwise. Read for the audit of a refusal only, never to authorize."""
    get = event.get if isinstance(event, dict) else getattr(event, "get", None)
    if get is None:
        return None
    candidates = [
        (get("pathParameters") or {}).get("subject_id"),
        (get("queryStringParameters") or {}).get("subject_id"),
    ]
    body = get("body")
    if isinstance(body, str) and body and not get("isBase64Encoded") and len(body) <= 1_000_000:
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            candidates.append(parsed.get("subject_id"))
    return next((c for c in candidates if isinstance(c, str) and valid_id(c)), None)


def _record_denial(app: APIGatewayRestResolver, status: int, code: str, reason: str) -> None:
    """A 401 or 403 decided by the service: in the caller's tenant's chain when the tenant is
    genuine (the checked principal; for a 401, the authorizer's tenant). A request that reached
    the function with no authorizer context names no tenant: counted, not recorded."""
    caller = current_caller()
    authorizer = (app.current_event.get("requestContext") or {}).get("authorizer") or {}
    _record_refusal(
        EventType.AUTHORIZATION_DENIED,
        tenant_id=caller.tenant_id if caller else authorizer.get("tenant_id"),
        actor=caller.sub if caller else authorizer.get("sub"),
        route=_route_of(app.current_event),
        status=status,
        code=code,
        reason=reason,
        subject_id=_named_subject(app.current_event),
    )


def _record_retrieval_failure(app: APIGatewayRestResolver, status: int, code: str, reason: str) -> None:
    """A retrieval that failed on the service's side, in the caller's tenant's chain."""
    route = _route_of(app.current_event)
    caller = current_caller()
    if route not in RETRIEVAL_ROUTES or caller is None:
        return
    _record_refusal(
        EventType.RETRIEVAL_FAILED,
        tenant_id=caller.tenant_id,
        actor=caller.sub,
        route=route,
        status=status,
        code=code,
        reason=reason,
    )


def _record_refusal(
    event_type: EventType,
    *,
    tenant_id: Any,
    actor: Any,
    route: str,
    status: int,
    code: str,
    reason: str,
    subject_id: str | None = None,
) -> None:
    if not isinstance(tenant_id, str) or not tenant_id:
        return  # no tenant anyone can trust: no chain to write to
    # Imported here: the composition root imports services that import this module's callers.
    from agent_memory.bootstrap import get_container
    from agent_memory.services.refusals import Refusal, RefusalLog

    try:
        container = get_container()
    except Exception as exc:  # a refusal still answers when the service cannot be built
        logger.warning("refusal not recorded", extra={"error": type(exc).__name__})
        return
    RefusalLog(container.store, container.policies).record(
        Refusal(
            event_type=event_type,
            tenant_id=tenant_id,
            actor=actor if isinstance(actor, str) and actor else "unidentified",
            route=route,
            status=status,
            code=code,
            reason=reason,
            subject_id=subject_id,
        )
    )


def json_response(status: int, body: Any) -> Response:
    """A JSON answer; a 503 always tells the client when to try again (as every error body does)."""
    headers = {"Retry-After": str(RETRY_AFTER_S)} if status == 503 else None
    return Response(
        status_code=status, content_type=content_types.APPLICATION_JSON, body=body, headers=headers
    )
