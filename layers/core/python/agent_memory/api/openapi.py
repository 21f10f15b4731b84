"""One OpenAPI document for the whole API, merged from every HTTP function's resolver, and a
Swagger UI page that works offline (Powertools ships its assets).

Each route's request and response shapes come from its handler's models (`agent_memory.api.models`);
the function table (`functions_spec`) adds what the resolvers cannot know: a tag per function, which
routes need a token, and so which refusals each route can answer. Every refusal is documented with
the body the service really sends (`ErrorBody`), never Powertools' own validation shapes."""

from __future__ import annotations

import base64
import hashlib
import json
from functools import cache
from typing import Any

from pydantic import BaseModel

from agent_memory import __version__
from agent_memory.api.models.common import ErrorBody
from agent_memory.api.models.erasure import ERASURE_REQUEST_EXAMPLE, SubjectExport
from agent_memory.api.models.memories import MEMORY_WRITE_EXAMPLE, ForgetReply
from agent_memory.api.models.retrieve import RESOLUTION_SEARCH_EXAMPLE, RETRIEVE_EXAMPLE
from agent_memory.api.models.sessions import CLOSE_SESSION_EXAMPLE
from agent_memory.api.models.working import WORKING_PUT_EXAMPLE, WorkingItemView, WorkingSessionView
from agent_memory.functions_spec import FUNCTIONS, FunctionSpec, Route, load_handler_module

SCHEMAS = "#/components/schemas/"
RESPONSES = "#/components/responses/"

# status -> (component name, error code, what it means, an example message)
ERRORS: dict[int, tuple[str, str, str, str]] = {
    401: ("Unauthenticated", "unauthenticated", "No valid bearer token.", "missing or invalid bearer token"),
    403: (
        "Forbidden",
        "forbidden",
        "The token's roles do not allow this (`forbidden` for reads, `unauthorized_memory_mutation` "
        "for writes, `self_approval` for approving what one wrote); nothing was read or changed.",
        "role agent may not approve memories",
    ),
    404: (
        "NotFound",
        "not_found",
        "Not found, or above the caller's clearance, or outside the token's subjects (all answer alike).",
        "memory mem_0192f3a1b2c3d4e5f6a7b8c9d0 not found",
    ),
    409: (
        "Conflict",
        "conflict",
        "Conflicts with the current state (a reused idempotency key, a legal hold, a session closed "
        "with other turns, a decision already taken).",
        "idempotency_key was already used for a different request",
    ),
    413: (
        "PayloadTooLarge",
        "payload_too_large",
        "The request body is too large.",
        "request body exceeds 262144 bytes",
    ),
    415: (
        "UnsupportedMediaType",
        "unsupported_media_type",
        "The body is not sent as `application/json` (UTF-8).",
        "request body must be sent as application/json (UTF-8)",
    ),
    422: (
        "InvalidRequest",
        "invalid_request",
        "A field, parameter or path id is invalid; `field` names it.",
        "subject_id: Field required",
    ),
    429: (
        "RateLimited",
        "rate_limited",
        "Throttled: retry with backoff, honouring Retry-After when sent.",
        "too many requests; retry with backoff",
    ),
    500: (
        "InternalError",
        "internal_error",
        "An unexpected failure (counted and alarmed on).",
        "internal error",
    ),
    503: (
        "Unavailable",
        "unavailable",
        "A dependency (the database) is unreachable: retry after `Retry-After` seconds.",
        "the database is unavailable",
    ),
}
RETRY_AFTER_HEADER = {
    "description": "seconds to wait before trying again",
    "schema": {"type": "integer", "minimum": 1},
}

# Routes that can answer 409 (their services raise `Conflict`).
CONFLICTS = frozenset(
    {
        ("POST", "/v1/memories"),
        ("POST", "/v1/memories/{memory_id}/close"),
        ("POST", "/v1/memories/{memory_id}/revalidate"),
        ("DELETE", "/v1/memories/{memory_id}"),
        ("POST", "/v1/memories/{memory_id}/approve"),
        ("POST", "/v1/memories/{memory_id}/reject"),
        ("POST", "/v1/memories/{memory_id}/reinstate"),
        ("POST", "/v1/sessions/{session_id}/close"),
        ("PUT", "/v1/sessions/{session_id}/working/{key}"),
    }
)
# Success answers other than the one status the resolver documents.
EXTRA_SUCCESS: dict[tuple[str, str], dict[int, str]] = {
    ("POST", "/v1/memories"): {201: "The gateway's decision on a new write", 200: "An idempotent replay"},
}
# Answers that are not JSON bodies or not refusals, by route.
OTHER_ANSWERS: dict[tuple[str, str], dict[str, Any]] = {
    ("GET", "/v1/docs"): {
        "200": {
            "description": "The Swagger UI page",
            "content": {"text/html": {"schema": {"type": "string"}}},
        }
    },
}
REQUEST_EXAMPLES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/v1/memories"): MEMORY_WRITE_EXAMPLE,
    ("POST", "/v1/retrieve"): RETRIEVE_EXAMPLE,
    ("POST", "/v1/resolutions/search"): RESOLUTION_SEARCH_EXAMPLE,
    ("POST", "/v1/sessions/{session_id}/close"): CLOSE_SESSION_EXAMPLE,
    ("PUT", "/v1/sessions/{session_id}/working/{key}"): WORKING_PUT_EXAMPLE,
    ("POST", "/v1/subjects/{subject_id}/erasure"): ERASURE_REQUEST_EXAMPLE,
    ("DELETE", "/v1/memories/{memory_id}"): {"reason": "customer asked to forget it (ticket T-1042)"},
}
# Answers of the services' own response models (their examples live here, not in the services).
RESPONSE_EXAMPLES: dict[tuple[str, str], tuple[type[BaseModel], dict[str, Any]]] = {
    ("DELETE", "/v1/memories/{memory_id}"): (
        ForgetReply,
        {"id": "mem_0192f3a1b2c3d4e5f6a7b8c9d0", "status": "deleted"},
    ),
    ("PUT", "/v1/sessions/{session_id}/working/{key}"): (
        WorkingItemView,
        {"key": "quote", "value": {"seats": 50, "price": 41.5}, "expires_at": "2026-10-02T15:05:00Z"},
    ),
    ("GET", "/v1/sessions/{session_id}/working"): (
        WorkingSessionView,
        {
            "session_id": "S-2026-10-02-01",
            "subject_id": "ACC-CORP-4812",
            "items": [
                {"key": "quote", "value": {"seats": 50, "price": 41.5}, "expires_at": "2026-10-02T15:05:00Z"}
            ],
        },
    ),
    ("GET", "/v1/subjects/{subject_id}/export"): (
        SubjectExport,
        {
            "subject_id": "ACC-CORP-4812",
            "generated_at": "2026-10-02T15:00:00Z",
            "legal_hold": {"held": False, "hold_id": None, "reason": None, "set_by": None, "set_at": None},
            "tombstones": {"deletions": 0, "erasures": 0, "deleted_memories": 0},
            "memories": [],
            "sessions": [],
            "erasures": [],
            "events": [],
            "working": [],
            "next_cursor": None,
        },
    ),
}
# Powertools' own error shapes: the service never sends them (api/http.py maps every error once).
POWERTOOLS_ONLY = ("HTTPValidationError", "ValidationError", "ResponseValidationError")


@cache
def merged_openapi() -> dict[str, Any]:
    merged: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Agent Memory Service",
            "version": __version__,
            "description": "Governed long-term memory for customer-facing AI agents. Every refusal "
            'answers `{"error": {"code", "message", "field", "request_id"}}`.',
        },
        "paths": {},
        "components": {
            "schemas": {},
            "responses": {},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
        },
        "security": [{"bearer": []}],
        "tags": [],
    }
    api_functions = [spec for spec in FUNCTIONS if spec.trigger == "api"]
    for spec in api_functions:
        app = load_handler_module(spec).app
        schema = json.loads(app.get_openapi_json_schema(title="Agent Memory Service", version=__version__))
        for path, ops in schema.get("paths", {}).items():
            merged["paths"].setdefault(path, {}).update(ops)
        merged["components"]["schemas"].update(schema.get("components", {}).get("schemas", {}))
    _add_error_components(merged["components"])
    for spec in api_functions:
        merged["tags"].append({"name": spec.name, "description": spec.description})
        for route in spec.routes:
            operation = merged["paths"].get(route.path, {}).get(route.method.lower())
            if operation is not None:
                _document(operation, spec, route)
    for name in POWERTOOLS_ONLY:
        merged["components"]["schemas"].pop(name, None)
    return merged


def _add_error_components(components: dict[str, Any]) -> None:
    schema = ErrorBody.model_json_schema(ref_template=SCHEMAS + "{model}")
    components["schemas"].update(schema.pop("$defs", {}))
    components["schemas"]["ErrorBody"] = schema
    for status, (name, code, meaning, message) in ERRORS.items():
        example = {
            "error": {"code": code, "message": message, "request_id": "c0ffee00-0000-4000-8000-000000000001"}
        }
        if status == 422:
            example["error"]["field"] = "subject_id"
        response: dict[str, Any] = {
            "description": meaning,
            "content": {"application/json": {"schema": {"$ref": SCHEMAS + "ErrorBody"}, "example": example}},
        }
        if status in (429, 503):
            response["headers"] = {"Retry-After": RETRY_AFTER_HEADER}
        components["responses"][name] = response


def error_statuses(route: Route, operation: dict[str, Any]) -> list[int]:
    """The refusals a route can answer: identity and roles where it needs a token, a missing id
    where its path names one, the body's checks where it takes one; throttling and failures for all."""
    statuses = [429, 500]
    has_body = "requestBody" in operation
    if route.auth:
        statuses += [401, 403, 503]
    if "{" in route.path:
        statuses.append(404)
    if (route.method, route.path) in CONFLICTS:
        statuses.append(409)
    if has_body:
        statuses += [413, 415]
    if has_body or operation.get("parameters"):
        statuses.append(422)
    return sorted(statuses)


def _document(operation: dict[str, Any], spec: FunctionSpec, route: Route) -> None:
    key = (route.method, route.path)
    operation["tags"] = [spec.name]
    roles = f"Roles: {', '.join(route.roles)}." if route.auth else "Roles: none (no token)."
    operation["description"] = (
        f"{operation['description']}\n\n{roles}" if operation.get("description") else roles
    )
    if not route.auth:
        operation["security"] = []  # no token needed
    responses: dict[str, Any] = operation["responses"]
    for resolver_default in ("422", "500"):
        responses.pop(resolver_default, None)  # Powertools' validation shapes: replaced below
    success = {code: r for code, r in responses.items() if code.startswith("2")}
    if key in EXTRA_SUCCESS:
        template = next(iter(success.values()))
        responses.clear()
        for status_code, description in EXTRA_SUCCESS[key].items():
            responses[str(status_code)] = {**template, "description": description}
    for code, answer in success.items():
        media = answer.get("content", {}).get("application/json", {})
        if code == "204" or media.get("schema", {}).get("type") == "null":
            answer.pop("content", None)  # no body at all
    responses.update(OTHER_ANSWERS.get(key, {}))
    if key == ("GET", "/v1/health"):
        # degraded: the same body, with Retry-After
        responses["503"] = {
            **responses["200"],
            "description": "Degraded: the database does not answer",
            "headers": {"Retry-After": RETRY_AFTER_HEADER},
        }
    for status in error_statuses(route, operation):
        if str(status) not in responses:
            responses[str(status)] = {"$ref": RESPONSES + ERRORS[status][0]}
    if key in RESPONSE_EXAMPLES:
        for answer in success.values():
            answer["content"]["application/json"]["example"] = RESPONSE_EXAMPLES[key][1]
    if key in REQUEST_EXAMPLES and "requestBody" in operation:
        operation["requestBody"]["content"]["application/json"]["example"] = REQUEST_EXAMPLES[key]
    operation["responses"] = dict(sorted(responses.items()))


@cache
def swagger_page(spec_url: str) -> tuple[str, dict[str, str]]:
    """The Swagger UI page and the headers it is served with. Its script and style are Powertools'
    own assets, written inline (no CDN, nothing fetched but the OpenAPI document), so the page's
    Content-Security-Policy allows exactly those inline blocks by their hashes, the document from
    this origin, the images the style sheet embeds (`data:`), and nothing else: no other script,
    no framing (clickjacking), no form posting elsewhere. The validator badge, which would call
    validator.swagger.io, is switched off."""
    from importlib import resources

    assets = resources.files("aws_lambda_powertools.event_handler.openapi.swagger_ui")
    js = (assets / "swagger-ui-bundle.min.js").read_text()
    css = (assets / "swagger-ui.min.css").read_text()
    boot = f'SwaggerUIBundle({{url: {json.dumps(spec_url)}, dom_id: "#swagger-ui", validatorUrl: null}});'
    html = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Agent Memory Service API</title><style>{css}</style></head>
<body><div id="swagger-ui"></div><script>{js}</script>
<script>{boot}</script></body></html>"""
    policy = "; ".join(
        [
            "default-src 'none'",
            f"script-src {_csp_hash(js)} {_csp_hash(boot)}",
            # inline styles: the page's style sheet, and the style attributes Swagger UI renders
            "style-src 'unsafe-inline'",
            "img-src 'self' data:",
            "connect-src 'self'",
            "font-src 'self' data:",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        ]
    )
    headers = {
        "Content-Security-Policy": policy,
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    return html, headers


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"
