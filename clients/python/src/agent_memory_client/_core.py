"""What the sync and async clients share: the route table, how a call is prepared (path values
percent-encoded once, bodies validated), the retry policy, and how an answer is decoded."""

from __future__ import annotations

import email.utils
import random
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from agent_memory_client import models as m
from agent_memory_client.errors import MemoryApiError, error_class


@dataclass(frozen=True)
class Route:
    """One HTTP route and the client method named after it."""

    method_name: str
    http_method: str
    path: str  # /v1/memories/{memory_id}: the server's template
    request: type[BaseModel] | None = None
    response: type[BaseModel] | None = None
    # Safe to send again after a lost answer: reads, PUT/DELETE, and writes the server
    # de-duplicates (the write gateway by idempotency key, a session's close by its id).
    idempotent: bool = False


ROUTES: tuple[Route, ...] = (
    Route("retrieve", "POST", "/v1/retrieve", m.RetrieveRequest, m.RetrieveResult, idempotent=True),
    Route(
        "search_resolutions",
        "POST",
        "/v1/resolutions/search",
        m.ResolutionSearchRequest,
        m.ResolutionSearchResult,
        idempotent=True,
    ),
    Route("write_memory", "POST", "/v1/memories", m.MemoryWrite, m.WriteResult, idempotent=True),
    Route("get_memory", "GET", "/v1/memories/{memory_id}", None, m.MemoryDetail, idempotent=True),
    Route(
        "delete_memory",
        "DELETE",
        "/v1/memories/{memory_id}",
        m.ForgetRequest,
        m.ForgetResult,
        idempotent=True,
    ),
    Route("revalidate", "POST", "/v1/memories/{memory_id}/revalidate", None, m.MemoryRecord),
    Route(
        "close_commitment", "POST", "/v1/memories/{memory_id}/close", m.CloseCommitment, m.CommitmentClosed
    ),
    Route("list_memories", "GET", "/v1/subjects/{subject_id}/memories", None, m.MemoryPage, idempotent=True),
    Route(
        "close_session",
        "POST",
        "/v1/sessions/{session_id}/close",
        m.CloseSessionRequest,
        m.SessionAccepted,
        idempotent=True,
    ),
    Route("get_session", "GET", "/v1/sessions/{session_id}", None, m.SessionStatus, idempotent=True),
    Route(
        "get_extraction",
        "GET",
        "/v1/sessions/{session_id}/extraction",
        None,
        m.ExtractionReport,
        idempotent=True,
    ),
    Route(
        "working_set",
        "PUT",
        "/v1/sessions/{session_id}/working/{key}",
        m.WorkingPutRequest,
        m.WorkingItem,
        idempotent=True,
    ),
    Route("working_get", "GET", "/v1/sessions/{session_id}/working", None, m.WorkingSession, idempotent=True),
    Route("working_delete", "DELETE", "/v1/sessions/{session_id}/working/{key}", None, None, idempotent=True),
    Route("review_queue", "GET", "/v1/review", None, m.ReviewPage, idempotent=True),
    Route("approve", "POST", "/v1/memories/{memory_id}/approve", m.ReviewDecision, m.ReviewResult),
    Route("reject", "POST", "/v1/memories/{memory_id}/reject", m.ReviewDecision, m.ReviewResult),
    Route("reinstate", "POST", "/v1/memories/{memory_id}/reinstate", m.ReviewDecision, m.ReviewResult),
    Route("request_erasure", "POST", "/v1/subjects/{subject_id}/erasure", m.ErasureRequest, m.ErasureStatus),
    Route("get_erasure", "GET", "/v1/erasures/{erasure_id}", None, m.ErasureStatus, idempotent=True),
    Route(
        "legal_hold_subject",
        "POST",
        "/v1/subjects/{subject_id}/legal-hold",
        m.LegalHold,
        m.SubjectHold,
        idempotent=True,
    ),
    Route(
        "legal_hold_memory",
        "POST",
        "/v1/memories/{memory_id}/legal-hold",
        m.LegalHold,
        m.MemoryHold,
        idempotent=True,
    ),
    Route(
        "export_subject", "GET", "/v1/subjects/{subject_id}/export", None, m.SubjectExport, idempotent=True
    ),
    Route("audit", "GET", "/v1/audit", None, m.AuditPage, idempotent=True),
    Route("get_policy", "GET", "/v1/policy", None, m.PolicyView, idempotent=True),
    Route("put_policy", "PUT", "/v1/policy", m.PolicyChange, m.PolicyView, idempotent=True),
    Route("health", "GET", "/v1/health", None, m.Health, idempotent=True),
    Route("openapi", "GET", "/v1/openapi.json", None, None, idempotent=True),
    Route("docs", "GET", "/v1/docs", None, None, idempotent=True),
)
ROUTES_BY_NAME: dict[str, Route] = {r.method_name: r for r in ROUTES}

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def encode_path(template: str, values: Mapping[str, str]) -> str:
    """The template with each value percent-encoded exactly once (`@`, `:`, `+` and `/` included),
    as the server decodes path values exactly once."""

    def one(match: re.Match[str]) -> str:
        value = values[match.group(1)]
        if not isinstance(value, str) or not value:
            raise ValueError(f"{match.group(1)}: must be a non-empty string")
        return quote(value, safe="")

    return _PLACEHOLDER.sub(one, template)


@dataclass(frozen=True)
class Call[T]:
    """A request ready to send, and how its answer becomes a `T`."""

    route: Route
    url: str
    decode: Callable[[httpx.Response], T]
    params: dict[str, str] | None = None
    json: Any = None
    has_body: bool = False


def body_of[M: BaseModel](
    model: type[M], request: M | Mapping[str, Any] | None, fields: Mapping[str, Any]
) -> M:
    """A request model from a model, a mapping, keyword fields, or a mapping and fields together
    (the keyword fields win); unknown fields are refused here."""
    if isinstance(request, model) and not fields:
        return request
    base: dict[str, Any] = {}
    if isinstance(request, BaseModel):
        base = request.model_dump(exclude_unset=True)
    elif request is not None:
        base = dict(request)
    return model.model_validate({**base, **fields})


def with_idempotency_key(memory: m.MemoryWrite) -> m.MemoryWrite:
    """The write with an idempotency key: the caller's, else a new random one, so a retried write
    is one write (the server replays the first answer)."""
    if memory.idempotency_key:
        return memory
    return memory.model_copy(update={"idempotency_key": f"client:{uuid.uuid4()}"})


def query_params(values: Mapping[str, Any]) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, datetime):
            out[name] = (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
        elif isinstance(value, bool):
            out[name] = "true" if value else "false"
        else:
            out[name] = str(value)
    return out or None


def prepare(
    method_name: str,
    path_values: Mapping[str, str] | None = None,
    body: BaseModel | None = None,
    params: Mapping[str, Any] | None = None,
) -> Call[Any]:
    route = ROUTES_BY_NAME[method_name]
    return Call(
        route=route,
        url=encode_path(route.path, path_values or {}),
        decode=_decoder(route),
        params=query_params(params or {}),
        json=body.model_dump(mode="json", exclude_unset=True) if body is not None else None,
        has_body=body is not None,
    )


def _decoder(route: Route) -> Callable[[httpx.Response], Any]:
    def decode(response: httpx.Response) -> Any:
        if response.status_code >= 400:
            raise error_from_response(response)
        if route.method_name == "docs":
            return response.text
        if response.status_code == 204 or not response.content:
            return None
        payload = response.json()
        return payload if route.response is None else route.response.model_validate(payload)

    return decode


def error_from_response(response: httpx.Response) -> MemoryApiError:
    """The typed error for an error answer: the body's `{"error": {...}}` fields when present."""
    payload: Any = None
    try:
        payload = response.json()
    except ValueError:
        payload = None
    error = payload.get("error") if isinstance(payload, dict) else None
    error = error if isinstance(error, dict) else {}
    request_id = error.get("request_id") or response.headers.get("x-amzn-requestid")
    cls = error_class(response.status_code)
    return cls(
        response.status_code,
        error.get("code") if isinstance(error.get("code"), str) else None,
        str(error.get("message") or response.reason_phrase or ""),
        field=error.get("field") if isinstance(error.get("field"), str) else None,
        reason=error.get("reason") if isinstance(error.get("reason"), str) else None,
        request_id=request_id if isinstance(request_id, str) else None,
        retry_after=parse_retry_after(response.headers.get("retry-after")),
        body=payload,
    )


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds from a `Retry-After` header: delay-seconds or an HTTP date (RFC 9110 10.2.3)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


@dataclass(frozen=True)
class RetryPolicy:
    """When to send a request again.

    429 and 503 are retried up to `max_retries` times: after the server's `Retry-After` when it
    gives one (up to `max_retry_after` seconds; asked to wait longer, the client gives up and
    raises at once), else after an exponential backoff with jitter, capped at `backoff_max`.
    A connection that was never made is retried the same way for any route; a lost answer only
    for routes that are safe to repeat.
    """

    max_retries: int = 3
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    max_retry_after: float = 30.0
    statuses: frozenset[int] = field(default_factory=lambda: frozenset({429, 503}))

    def backoff(self, attempt: int) -> float:
        """Seconds before retry number `attempt` (1-based) when the server did not say."""
        ceiling = min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1))
        return ceiling / 2 + random.uniform(0, ceiling / 2)  # noqa: S311 - jitter, not a secret

    def delay_after_status(self, attempt: int, response: httpx.Response) -> float | None:
        """Seconds to wait before retry `attempt`, or None: do not retry this answer."""
        if response.status_code not in self.statuses or attempt > self.max_retries:
            return None
        asked = parse_retry_after(response.headers.get("retry-after"))
        if asked is None:
            return self.backoff(attempt)
        return asked if asked <= self.max_retry_after else None

    def delay_after_error(self, attempt: int, call: Call[Any], error: httpx.TransportError) -> float | None:
        """Seconds to wait before retry `attempt` after a transport error, or None."""
        if attempt > self.max_retries:
            return None
        never_sent = isinstance(error, httpx.ConnectError | httpx.ConnectTimeout)
        return self.backoff(attempt) if never_sent or call.route.idempotent else None


NO_RETRIES = RetryPolicy(max_retries=0)

USER_AGENT = "agent-memory-client-python"
DEFAULT_URL = "http://127.0.0.1:8080"


def env_settings() -> tuple[str, str | None]:
    """The service URL and token from the environment: `MEMORY_URL` (default the local server)
    and `MEMORY_TOKEN` (the MCP server reads the same two)."""
    import os

    return os.environ.get("MEMORY_URL") or DEFAULT_URL, os.environ.get("MEMORY_TOKEN") or None


def default_headers(token: str | None, extra: Mapping[str, str] | None) -> dict[str, str]:
    from agent_memory_client import __version__

    headers = {"Accept": "application/json", "User-Agent": f"{USER_AGENT}/{__version__}"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    headers.update(extra or {})
    return headers


def drop_none(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}
