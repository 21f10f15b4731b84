"""Commitments are stateful (docs/rules.md, Types: "follow-up: owner, due date, state ... until
closed + 30 d"). An open commitment has no expiry of its own; closing it records when and how,
and sets its expiry to the close plus the policy's retention, after which the nightly purge
expires it like any other record (a legal hold still exempts it).

Pure rules: the commitment service and the write gateway persist what these decide.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from agent_memory.domain.errors import Conflict, InvalidRequest
from agent_memory.domain.policy import PolicyProfile


class CommitmentState(StrEnum):
    OPEN = "open"
    CLOSED = "closed"


class CommitmentOutcome(StrEnum):
    DONE = "done"
    CANCELLED = "cancelled"


def opening_value(value: dict[str, Any]) -> dict[str, Any]:
    """A commitment's value as admitted: `state` defaults to open; a closed one needs `closed_at`."""
    state = value.get("state", CommitmentState.OPEN.value)
    if state not in {s.value for s in CommitmentState}:
        raise InvalidRequest(
            f"a commitment's state is one of {[s.value for s in CommitmentState]}, not {state!r}",
            field="value.state",
        )
    opened = {**value, "state": state}
    if state == CommitmentState.CLOSED and closed_at(opened) is None:  # closed_at validates the date
        raise InvalidRequest("a closed commitment needs value.closed_at (ISO 8601)", field="value.closed_at")
    return opened


def closed_at(value: dict[str, Any]) -> datetime | None:
    raw = value.get("closed_at")
    if value.get("state") != CommitmentState.CLOSED or raw is None:
        return None
    try:
        at = datetime.fromisoformat(str(raw))
    except ValueError:
        raise InvalidRequest(
            "value.closed_at must be an ISO 8601 date-time", field="value.closed_at"
        ) from None
    if at.tzinfo is None:
        raise InvalidRequest("value.closed_at needs a time zone", field="value.closed_at")
    return at


def retention_end(closed: datetime, policy: PolicyProfile) -> datetime:
    return closed + timedelta(days=policy.commitment_closed_retention_days)


def close(
    value: dict[str, Any],
    *,
    outcome: CommitmentOutcome,
    at: datetime,
    by: str,
    policy: PolicyProfile,
    requested_expiry: datetime | None,
) -> tuple[dict[str, Any], datetime]:
    """The closed value and the record's new expiry: the close plus the retention, or an earlier
    expiry the record already had (closing never extends a record's life)."""
    if value.get("state", CommitmentState.OPEN.value) != CommitmentState.OPEN:
        raise Conflict("the commitment is already closed")
    expires = retention_end(at, policy)
    if requested_expiry is not None:
        expires = min(expires, requested_expiry)
    closed = {
        **value,
        "state": CommitmentState.CLOSED.value,
        "outcome": outcome.value,
        "closed_at": at.isoformat(),
        "closed_by": by,
    }
    return closed, expires
