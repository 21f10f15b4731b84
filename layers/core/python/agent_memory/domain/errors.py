"""Domain errors carry a stable code; the HTTP layer maps them to statuses once."""

from __future__ import annotations


class DomainError(Exception):
    code = "invalid_request"
    status = 400

    def __init__(self, message: str, *, field: str | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.reason = reason  # a machine-readable why, beside the code (e.g. a conflict's `tombstoned`)


class InvalidRequest(DomainError):
    code = "invalid_request"
    status = 422


class Unauthenticated(DomainError):
    code = "unauthenticated"
    status = 401


# A write for a subject outside the token's `subjects` binding, whether or not that subject exists.
OUTSIDE_BINDING = "this token is bound to other subjects"


class Forbidden(DomainError):
    code = "forbidden"
    status = 403


class UnauthorizedMutation(DomainError):
    code = "unauthorized_memory_mutation"
    status = 403


class SelfApproval(UnauthorizedMutation):
    """A reviewer deciding on a record they wrote (or whose session they closed)."""

    code = "self_approval"


class NotFound(DomainError):
    code = "not_found"
    status = 404


class Conflict(DomainError):
    code = "conflict"
    status = 409


class PayloadTooLarge(DomainError):
    code = "payload_too_large"
    status = 413


class RateLimited(DomainError):
    """A quota or rate the tenant's policy sets was reached (429): `reason` names the limit,
    `field` the policy key that sets it, `limit` its value, and `retry_after_s` when to try again."""

    code = "rate_limited"
    status = 429

    def __init__(self, message: str, *, field: str, reason: str, limit: int, retry_after_s: int) -> None:
        super().__init__(message, field=field, reason=reason)
        self.limit = limit
        self.retry_after_s = max(1, retry_after_s)


class Unavailable(DomainError):
    code = "unavailable"
    status = 503


class ConfigurationError(Exception):
    """The deployment is misconfigured (raised at start, never per request)."""
