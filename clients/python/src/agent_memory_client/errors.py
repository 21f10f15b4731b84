"""Typed errors: one class per HTTP status the service answers with, each carrying the error
body's `code`, `message`, `field`, `reason` and `request_id` (docs/api.md: `{"error": {...}}`)."""

from __future__ import annotations

from typing import Any


class MemoryClientError(Exception):
    """Anything this client raises on purpose."""


class MemoryTransportError(MemoryClientError):
    """The service could not be reached, or did not answer in time (after the retries allowed)."""


class MemoryApiError(MemoryClientError):
    """The service answered with an error status."""

    status: int = 0
    default_code: str = "error"

    def __init__(
        self,
        status: int,
        code: str | None = None,
        message: str = "",
        *,
        field: str | None = None,
        reason: str | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
        body: Any = None,
    ) -> None:
        self.status = status
        self.code = code or self.default_code
        self.message = message
        self.field = field
        self.reason = reason  # a machine-readable why (a 409 on a write: `tombstoned`)
        self.request_id = request_id
        self.retry_after = retry_after
        self.body = body
        super().__init__(self._describe())

    def _describe(self) -> str:
        text = f"{self.status} {self.code}: {self.message}" if self.message else f"{self.status} {self.code}"
        extras = [f"{k}={v}" for k, v in (("field", self.field), ("request_id", self.request_id)) if v]
        return f"{text} ({', '.join(extras)})" if extras else text


class InvalidRequest(MemoryApiError):
    """400 or 422: the request breaks the contract; `field` names what."""

    default_code = "invalid_request"


class Unauthenticated(MemoryApiError):
    """401: no token, or one the service does not accept."""

    default_code = "unauthenticated"


class Forbidden(MemoryApiError):
    """403: the token's role may not do this (`forbidden` for reads,
    `unauthorized_memory_mutation` for writes)."""

    default_code = "forbidden"


class NotFound(MemoryApiError):
    """404: unknown, or not visible to this token (the two look the same on purpose)."""

    default_code = "not_found"


class Conflict(MemoryApiError):
    """409: the record's state does not allow this (e.g. approving one already decided)."""

    default_code = "conflict"


class PayloadTooLarge(MemoryApiError):
    """413: the body is over the route's limit."""

    default_code = "payload_too_large"


class UnsupportedMediaType(MemoryApiError):
    """415: the body was not sent as application/json."""

    default_code = "unsupported_media_type"


class RateLimited(MemoryApiError):
    """429, after the retries allowed; `retry_after` is what the service asked for. A quota the
    tenant's policy sets is named by `reason` (`requests_per_second`, `memories_per_subject`, ...),
    its policy key by `field` and its value by `limit`. A storage quota asks for a longer wait than
    the client retries after: it frees only when memories expire or are deleted."""

    default_code = "rate_limited"

    @property
    def limit(self) -> int | None:
        error = self.body.get("error") if isinstance(self.body, dict) else None
        value = error.get("limit") if isinstance(error, dict) else None
        return value if isinstance(value, int) else None


class ServerError(MemoryApiError):
    """500 and other 5xx than 503."""

    default_code = "internal_error"


class Unavailable(MemoryApiError):
    """503, after the retries allowed: a dependency (the database) is out; `retry_after` says when
    to try again."""

    default_code = "unavailable"


class SessionWaitTimeout(MemoryClientError, TimeoutError):
    """`close_session(wait=True)` gave up before extraction finished; `session` is the last status
    read (the session stays queued and is processed anyway)."""

    def __init__(self, message: str, session: Any) -> None:
        super().__init__(message)
        self.session = session


class ErasureWaitTimeout(MemoryClientError, TimeoutError):
    """`request_erasure(wait=True)` gave up before the erasure finished; `erasure` is the last
    status read (the erasure goes on and can be followed with `get_erasure`)."""

    def __init__(self, message: str, erasure: Any) -> None:
        super().__init__(message)
        self.erasure = erasure


ERRORS_BY_STATUS: dict[int, type[MemoryApiError]] = {
    400: InvalidRequest,
    401: Unauthenticated,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: InvalidRequest,
    429: RateLimited,
    503: Unavailable,
}


def error_class(status: int) -> type[MemoryApiError]:
    """The exception class for an error status."""
    found = ERRORS_BY_STATUS.get(status)
    if found is not None:
        return found
    return ServerError if status >= 500 else MemoryApiError
