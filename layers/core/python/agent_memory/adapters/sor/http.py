"""The HTTP system of record: GET {base}/tenants/{t}/accounts/{subject} and
GET {base}/tenants/{t}/tickets/{ticket}, with a timeout and a <= 5 minute cache.

Account response: {"values": {"plan_tier": {"value": "enterprise", "as_of": "..."}, ...}}
Ticket response:  {"ticket_id": "...", "status": "...", "priority": "...", "owner": "...", "updated_at": "..."}
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from datetime import UTC, datetime
from typing import Any

from agent_memory.adapters.sor.cache import TtlCache
from agent_memory.ports.system_of_record import LiveValue, SystemOfRecordUnavailable, TicketState


class HttpSystemOfRecord:
    name = "http"

    def __init__(
        self, base_url: str, *, timeout_s: float = 0.5, cache_seconds: float = 60.0, token: str | None = None
    ) -> None:
        if not base_url.startswith(("https://", "http://")):
            raise ValueError("the system-of-record URL must be http(s)")
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.token = token
        self.cache: TtlCache[tuple[str, str, str], Any] = TtlCache(cache_seconds)

    def _get(self, path: str) -> Any | None:
        req = urllib.request.Request(self.base_url + path, headers={"Accept": "application/json"})  # noqa: S310 - scheme checked in __init__
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:  # noqa: S310 - configured https URL
                return json.loads(resp.read())
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return None
            raise SystemOfRecordUnavailable(f"HTTP {err.code}") from err
        except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
            raise SystemOfRecordUnavailable(type(exc).__name__) from exc

    def account_values(self, tenant_id: str, subject_id: str) -> dict[str, LiveValue]:
        def load() -> dict[str, LiveValue]:
            q = urllib.parse.quote
            body = self._get(f"/tenants/{q(tenant_id, safe='')}/accounts/{q(subject_id, safe='')}") or {}
            out = {}
            for field, entry in (body.get("values") or {}).items():
                as_of = _parse_time(entry.get("as_of"))
                out[field] = LiveValue(field, entry.get("value"), as_of)
            return out

        return self.cache.get_or_load(("acct", tenant_id, subject_id), load)  # type: ignore[no-any-return]

    def ticket(self, tenant_id: str, ticket_id: str) -> TicketState | None:
        def load() -> TicketState | None:
            q = urllib.parse.quote
            body = self._get(f"/tenants/{q(tenant_id, safe='')}/tickets/{q(ticket_id, safe='')}")
            if not body:
                return None
            return TicketState(
                ticket_id=str(body.get("ticket_id") or ticket_id),
                status=str(body.get("status")),
                priority=body.get("priority"),
                owner=body.get("owner"),
                updated_at=_parse_time(body.get("updated_at")),
            )

        return self.cache.get_or_load(("ticket", tenant_id, ticket_id), load)  # type: ignore[no-any-return]


def _parse_time(raw: Any) -> datetime:
    if isinstance(raw, str):
        try:
            dt = datetime.fromisoformat(raw.replace("Z", "+00:00"))
            return dt if dt.tzinfo else dt.replace(tzinfo=UTC)
        except ValueError:
            pass
    return datetime.now(UTC)
