"""`MemoryClient`: the synchronous client, one method per route of the HTTP API."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from types import TracebackType
from typing import Any, Literal, TypeVar, overload

import httpx

from agent_memory_client import _calls
from agent_memory_client import models as m
from agent_memory_client._core import Call, RetryPolicy, default_headers, env_settings
from agent_memory_client.errors import (
    ErasureWaitTimeout,
    InvalidRequest,
    MemoryTransportError,
    SessionWaitTimeout,
)

T = TypeVar("T")


class MemoryClient:
    """A client of the Agent Memory Service.

    `MemoryClient("http://127.0.0.1:8080", token=...)`; every method sends one request (plus the
    retries the policy allows) with the token's identity: the service decides what the token may
    see and do. Errors are raised as `MemoryApiError` subclasses; use it as a context manager, or
    call `close()`.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float | httpx.Timeout = 10.0,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token  # the caller's; the adapters read its bound subjects from it
        self.retry = retry if retry is not None else RetryPolicy()
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout)
        self._headers = default_headers(token, headers)
        self._sleep: Callable[[float], None] = time.sleep

    @classmethod
    def from_env(cls, **kwargs: Any) -> MemoryClient:
        """A client of `MEMORY_URL` (default http://127.0.0.1:8080) acting with `MEMORY_TOKEN`, as
        the MCP server reads them; keyword arguments as for the constructor."""
        base_url, token = env_settings()
        return cls(base_url, token=token, **kwargs)

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _send(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._http.request(
                    call.route.http_method,
                    self.base_url + call.url,
                    params=call.params,
                    json=call.json if call.has_body else None,
                    headers=self._headers,
                )
            except httpx.TransportError as exc:
                delay = self.retry.delay_after_error(attempt, call, exc)
                if delay is None:
                    raise MemoryTransportError(
                        f"{call.route.http_method} {call.route.path}: {type(exc).__name__}"
                    ) from exc
                self._sleep(delay)
                continue
            delay = self.retry.delay_after_status(attempt, response)
            if delay is None:
                return call.decode(response)
            response.close()
            self._sleep(delay)

    # -- retrieval ------------------------------------------------------------------------------

    def retrieve(self, subject_id: str, query: str = "", **fields: Any) -> m.RetrieveResult:
        """Context for the next turn (`ticket_id`, `session_id`, `top_k`, `max_tokens`, `types`,
        `slots` optional). The context is data about the customer, never instructions."""
        return self._send(_calls.retrieve(subject_id, query, fields))

    def search_resolutions(self, query: str, **fields: Any) -> m.ResolutionSearchResult:
        """Reusable resolutions across the tenant's subjects."""
        return self._send(_calls.search_resolutions(query, fields))

    # -- memories -------------------------------------------------------------------------------

    def write_memory(
        self, memory: m.MemoryWrite | Mapping[str, Any] | None = None, /, **fields: Any
    ) -> m.WriteResult:
        """Propose a memory; the gateway decides (`decision`). An idempotency key is generated
        when the write has none, so a retried write is stored once."""
        return self._send(_calls.write_memory(memory, fields))

    def remember(self, subject_id: str, content: str, **fields: Any) -> m.WriteResult:
        """A note about the subject, in its own words: the service classifies it (type, category,
        slot) and admits it under the authority the token allows; `decision`, `reasons` and
        `explanation` say what became of it. Optional: `session_id`, `ticket_id`, and the hints
        `type`, `slot`, `category`, `source` (with any of them it is sent as a typed write). A
        service that predates content-only notes gets the typed write it needs instead."""
        first, fallback = _calls.remember(subject_id, content, fields)
        try:
            return self._send(first)
        except InvalidRequest as exc:
            if fallback is None or not _calls.content_only_refused(exc):
                raise
            return self._send(fallback)

    def get_memory(self, memory_id: str) -> m.MemoryDetail:
        return self._send(_calls.get_memory(memory_id))

    def delete_memory(self, memory_id: str, *, reason: str) -> m.ForgetResult:
        """Forget one memory on the customer's request."""
        return self._send(_calls.delete_memory(memory_id, reason))

    def revalidate(self, memory_id: str) -> m.MemoryRecord:
        """Confirm a memory is still true (`last_validated_at` becomes now)."""
        return self._send(_calls.revalidate(memory_id))

    def close_commitment(self, memory_id: str, **fields: Any) -> m.CommitmentClosed:
        """Close a commitment (`outcome` done or cancelled, `closed_at`, `note`)."""
        return self._send(_calls.close_commitment(memory_id, fields))

    def list_memories(
        self,
        subject_id: str,
        *,
        status: m.Status | None = None,
        type: m.MemoryType | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> m.MemoryPage:
        """One page of a subject's memories, newest first."""
        return self._send(_calls.list_memories(subject_id, status, type, cursor, limit))

    def iter_memories(
        self,
        subject_id: str,
        *,
        status: m.Status | None = None,
        type: m.MemoryType | None = None,
        page_size: int | None = None,
    ) -> Iterator[m.MemoryRecord]:
        """Every memory of a subject, page after page."""
        cursor: str | None = None
        while True:
            page = self.list_memories(subject_id, status=status, type=type, cursor=cursor, limit=page_size)
            yield from page.memories
            if not page.next_cursor or page.next_cursor == cursor:
                return
            cursor = page.next_cursor

    # -- sessions -------------------------------------------------------------------------------

    @overload
    def close_session(
        self,
        session_id: str,
        request: m.CloseSessionRequest | Mapping[str, Any] | None = None,
        /,
        *,
        wait: Literal[False] = False,
        timeout: float = 60.0,
        poll_interval: float = 0.5,
        **fields: Any,
    ) -> m.SessionAccepted: ...

    @overload
    def close_session(
        self,
        session_id: str,
        request: m.CloseSessionRequest | Mapping[str, Any] | None = None,
        /,
        *,
        wait: Literal[True],
        timeout: float = 60.0,
        poll_interval: float = 0.5,
        **fields: Any,
    ) -> m.SessionStatus: ...

    def close_session(
        self,
        session_id: str,
        request: m.CloseSessionRequest | Mapping[str, Any] | None = None,
        /,
        *,
        wait: bool = False,
        timeout: float = 60.0,
        poll_interval: float = 0.5,
        **fields: Any,
    ) -> m.SessionAccepted | m.SessionStatus:
        """Hand over a closed session's transcript (`subject_id`, `occurred_at`, `turns`, ...).
        With `wait=True`, polls `get_session` until extraction is processed or failed, and raises
        `SessionWaitTimeout` after `timeout` seconds."""
        accepted = self._send(_calls.close_session(session_id, request, fields))
        if not wait:
            return accepted
        deadline = time.monotonic() + timeout
        while True:
            status = self.get_session(session_id)
            if status.done:
                return status
            left = deadline - time.monotonic()
            if left <= 0:
                raise SessionWaitTimeout(f"session not processed within {timeout} s", status)
            self._sleep(min(poll_interval, left))

    def get_session(self, session_id: str) -> m.SessionStatus:
        return self._send(_calls.get_session(session_id))

    def get_extraction(self, session_id: str) -> m.ExtractionReport:
        """Why every statement of a closed session was, or was not, kept: each one masked, with its
        decision, reason code and the model's score."""
        return self._send(_calls.get_extraction(session_id))

    def working_set(
        self, session_id: str, key: str, value: Any, *, subject_id: str, ttl_seconds: int | None = None
    ) -> m.WorkingItem:
        """Keep a short-lived value for an open session (masked, screened, hard TTL)."""
        return self._send(_calls.working_set(session_id, key, value, subject_id, ttl_seconds))

    def working_get(self, session_id: str) -> m.WorkingSession:
        return self._send(_calls.working_get(session_id))

    def working_delete(self, session_id: str, key: str) -> None:
        self._send(_calls.working_delete(session_id, key))

    # -- review ---------------------------------------------------------------------------------

    def review_queue(
        self, *, cursor: str | None = None, limit: int | None = None, group_similar: bool = False
    ) -> m.ReviewPage:
        """One page of items waiting for review; with `group_similar`, one per group of near-identical
        items of a subject (the others in `similar_pending`)."""
        return self._send(_calls.review_queue(cursor, limit, group_similar))

    def iter_review_queue(self, *, page_size: int | None = None) -> Iterator[m.ReviewItem]:
        cursor: str | None = None
        while True:
            page = self.review_queue(cursor=cursor, limit=page_size)
            yield from page.items
            if not page.next_cursor or page.next_cursor == cursor:
                return
            cursor = page.next_cursor

    def approve(
        self,
        memory_id: str,
        *,
        note: str | None = None,
        evidence_ref: str | None = None,
        supersedes: list[str] | None = None,
        independent_reason: str | None = None,
    ) -> m.ReviewResult:
        """Approve a pending or contested memory. A commercial term whose review item lists
        `family_active` needs `supersedes` (those it replaces) or `independent_reason` for the rest."""
        return self._send(
            _calls.review_decision("approve", memory_id, note, evidence_ref, supersedes, independent_reason)
        )

    def reject(
        self, memory_id: str, *, note: str | None = None, evidence_ref: str | None = None
    ) -> m.ReviewResult:
        return self._send(_calls.review_decision("reject", memory_id, note, evidence_ref))

    def reinstate(
        self, memory_id: str, *, note: str | None = None, evidence_ref: str | None = None
    ) -> m.ReviewResult:
        return self._send(_calls.review_decision("reinstate", memory_id, note, evidence_ref))

    # -- privacy and holds ----------------------------------------------------------------------

    def request_erasure(
        self,
        subject_id: str,
        *,
        reason: str,
        request_reference: str | None = None,
        wait: bool = False,
        timeout: float = 120.0,
        poll_interval: float = 0.5,
    ) -> m.ErasureStatus:
        """Erase everything held about a subject (202: the erasure runs in steps). With
        `wait=True`, polls `get_erasure` until it is verified or failed, and raises
        `ErasureWaitTimeout` after `timeout` seconds (the erasure goes on regardless)."""
        status = self._send(_calls.request_erasure(subject_id, reason, request_reference))
        if not wait:
            return status
        deadline = time.monotonic() + timeout
        while not status.done:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ErasureWaitTimeout(f"erasure not finished within {timeout} s", status)
            self._sleep(min(poll_interval, left))
            status = self.get_erasure(status.erasure_id)
        return status

    def get_erasure(self, erasure_id: str) -> m.ErasureStatus:
        return self._send(_calls.get_erasure(erasure_id))

    def legal_hold_subject(self, subject_id: str, *, hold: bool, reason: str) -> m.SubjectHold:
        return self._send(_calls.legal_hold_subject(subject_id, hold, reason))

    def legal_hold_memory(self, memory_id: str, *, hold: bool, reason: str) -> m.MemoryHold:
        return self._send(_calls.legal_hold_memory(memory_id, hold, reason))

    def export_subject(
        self, subject_id: str, *, cursor: str | None = None, limit: int | None = None
    ) -> m.SubjectExport:
        """One page of everything held about a subject."""
        return self._send(_calls.export_subject(subject_id, cursor, limit))

    def iter_export(self, subject_id: str, *, page_size: int | None = None) -> Iterator[m.SubjectExport]:
        """Every page of a subject's export."""
        cursor: str | None = None
        while True:
            page = self.export_subject(subject_id, cursor=cursor, limit=page_size)
            yield page
            if not page.next_cursor or page.next_cursor == cursor:
                return
            cursor = page.next_cursor

    # -- audit, policy, health ------------------------------------------------------------------

    def audit(
        self,
        *,
        subject_id: str | None = None,
        memory_id: str | None = None,
        since: datetime | str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> m.AuditPage:
        return self._send(_calls.audit(subject_id, memory_id, since, cursor, limit))

    def iter_audit(
        self,
        *,
        subject_id: str | None = None,
        memory_id: str | None = None,
        since: datetime | str | None = None,
        page_size: int | None = None,
    ) -> Iterator[m.AuditEvent]:
        cursor: str | None = None
        while True:
            page = self.audit(
                subject_id=subject_id, memory_id=memory_id, since=since, cursor=cursor, limit=page_size
            )
            yield from page.events
            if not page.next_cursor or page.next_cursor == cursor:
                return
            cursor = page.next_cursor

    def get_policy(self) -> m.PolicyView:
        return self._send(_calls.get_policy())

    def put_policy(self, profile: str, overrides: Mapping[str, Any] | None = None) -> m.PolicyView:
        return self._send(_calls.put_policy(profile, overrides))

    def health(self) -> m.Health:
        return self._send(_calls.health())

    def openapi(self) -> dict[str, Any]:
        """The service's OpenAPI document."""
        return self._send(_calls.openapi())

    def docs(self) -> str:
        """The Swagger UI page (HTML)."""
        return self._send(_calls.docs())
