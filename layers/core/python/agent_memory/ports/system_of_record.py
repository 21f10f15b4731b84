"""The system of record: live, authoritative values that memory yields to."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True)
class LiveValue:
    field: str
    value: Any
    as_of: datetime | None  # None: the system of record did not say
    read_at: datetime  # when this process sent the request for it (a cache hit keeps the first)


@dataclass(frozen=True)
class TicketState:
    ticket_id: str
    status: str | None
    priority: str | None
    owner: str | None
    updated_at: datetime | None


class SystemOfRecordUnavailable(Exception):
    """The system of record gave no usable answer (down, too slow, malformed, or not asked while
    its circuit is open); retrieval answers from memory and says so."""


class SystemOfRecord(Protocol):
    name: str

    def account_values(self, tenant_id: str, subject_id: str) -> dict[str, LiveValue]: ...
    def ticket(self, tenant_id: str, subject_id: str, ticket_id: str) -> TicketState | None:
        """The ticket's live state, or None when it does not exist *for this subject*: another
        customer's ticket is never shown."""
        ...
