"""The system of record: live, authoritative values that memory yields to."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True)
class LiveValue:
    field: str
    value: Any
    as_of: datetime


@dataclass(frozen=True)
class TicketState:
    ticket_id: str
    status: str
    priority: str | None
    owner: str | None
    updated_at: datetime


class SystemOfRecordUnavailable(Exception):
    """The system of record did not answer in time; retrieval answers from memory and says so."""


class SystemOfRecord(Protocol):
    name: str

    def account_values(self, tenant_id: str, subject_id: str) -> dict[str, LiveValue]: ...
    def ticket(self, tenant_id: str, ticket_id: str) -> TicketState | None: ...
