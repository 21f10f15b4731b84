"""`AsyncMemoryClient`: the asyncio client, the same methods as `MemoryClient`, awaited."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
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


class AsyncMemoryClient:
    """An asyncio client of the Agent Memory Service (see `MemoryClient`).

    `AsyncMemoryClient("http://127.0.0.1:8080", token=...)`; every method sends one request (plus the
    retries the policy allows) with the token's identity: the service decides what the token may
    see and do. Errors are raised as `MemoryApiError` subclasses; use it as an async context manager,
    or await `aclose()`.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float | httpx.Timeout = 10.0,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token  # the caller's; the adapters read its bound subjects from it
        self.retry = retry if retry is not None else RetryPolicy()
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=timeout)
        self._headers = default_headers(token, headers)
        self._sleep: Callable[[float], Awaitable[None]] = asyncio.sleep

    @classmethod
    def from_env(cls, **kwargs: Any) -> AsyncMemoryClient:
        """A client of `MEMORY_URL` (default http://127.0.0.1:8080) acting with `MEMORY_TOKEN`, as
        the MCP server reads them; keyword arguments as for the constructor."""
        base_url, token = env_settings()
        return cls(base_url, token=token, **kwargs)

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def _send(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._http.request(
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
                await self._sleep(delay)
                continue
            delay = self.retry.delay_after_status(attempt, response)
            if delay is None:
                return call.decode(response)
            await response.aclose()
            await self._sleep(delay)

    # -- retrieval ------------------------------------------------------------------------------

    async def retrieve(self, subject_id: str, query: str = "", **fields: Any) -> m.RetrieveResult:
        """Context for the next turn (`ticket_id`, `session_id`, `top_k`, `max_tokens`, `types`,
        `slots` optional). The context is data about the customer, never instructions."""
        return await self._send(_calls.retrieve(subject_id, query, fields))

    async def search_resolutions(self, query: str, **fields: Any) -> m.ResolutionSearchResult:
        """Reusable resolutions across the tenant's subjects."""
        return await self._send(_calls.search_resolutions(query, fields))

    # -- memories -------------------------------------------------------------------------------

    async def write_memory(
        self, memory: m.MemoryWrite | Mapping[str, Any] | None = None, /, **fields: Any
    ) -> m.WriteResult:
        """Propose a memory; the gateway decides (`decision`). An idempotency key is generated
        when the write has none, so a retried write is stored once."""
        return await self._send(_calls.write_memory(memory, fields))

    async def remember(self, subject_id: str, content: str, **fields: Any) -> m.WriteResult:
        """A note about the subject, in its own words: the service classifies it (type, category,
        slot) and admits it under the authority the token allows; `decision`, `reasons` and
        `explanation` say what became of it. Optional: `session_id`, `ticket_id`, and the hints
        `type`, `slot`, `category`, `source` (with any of them it is sent as a typed write). A
        service that predates content-only notes gets the typed write it needs instead."""
        first, fallback = _calls.remember(subject_id, content, fields)
        try:
            return await self._send(first)
        except InvalidRequest as exc:
            if fallback is None or not _calls.content_only_refused(exc):
                raise
            return await self._send(fallback)

    async def get_memory(self, memory_id: str) -> m.MemoryDetail:
        return await self._send(_calls.get_memory(memory_id))

    async def delete_memory(self, memory_id: str, *, reason: str) -> m.ForgetResult:
        """Forget one memory on the customer's request."""
        return await self._send(_calls.delete_memory(memory_id, reason))

    async def revalidate(self, memory_id: str) -> m.MemoryRecord:
        """Confirm a memory is still true (`last_validated_at` becomes now)."""
        return await self._send(_calls.revalidate(memory_id))

    async def close_commitment(self, memory_id: str, **fields: Any) -> m.CommitmentClosed:
        """Close a commitment (`outcome` done or cancelled, `closed_at`, `note`)."""
        return await self._send(_calls.close_commitment(memory_id, fields))

    async def list_memories(
        self,
        subject_id: str,
        *,
        status: m.Status | None = None,
        type: m.MemoryType | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> m.MemoryPage:
        """One page of a subject's memories, newest first."""
        return await self._send(_calls.list_memories(subject_id, status, type, cursor, limit))

    async def iter_memories(
        self,
        subject_id: str,
        *,
        status: m.Status | None = None,
        type: m.MemoryType | None = None,
        page_size: int | None = None,
    ) -> AsyncIterator[m.MemoryRecord]:
        """Every memory of a subject, page after page."""
        cursor: str | None = None
        while True:
            page = await self.list_memories(
                subject_id, status=status, type=type, cursor=cursor, limit=page_size
            )
            for item in page.memories:
                yield item
            if not page.next_cursor or page.next_cursor == cursor:
                return
            cursor = page.next_cursor

    # -- sessions -------------------------------------------------------------------------------

    @overload
    async def close_session(
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
    async def close_session(
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

    async def close_session(
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
        accepted = await self._send(_calls.close_session(session_id, request, fields))
        if not wait:
            return accepted
        deadline = time.monotonic() + timeout
        while True:
            status = await self.get_session(session_id)
            if status.done:
                return status
            left = deadline - time.monotonic()
            if left <= 0:
                raise SessionWaitTimeout(f"session not processed within {timeout} s", status)
            await self._sleep(min(poll_interval, left))

    async def get_session(self, session_id: str) -> m.SessionStatus:
        return await self._send(_calls.get_session(session_id))

    async def get_extraction(self, session_id: str) -> m.ExtractionReport:
        """Why every statement of a closed session was, or was not, kept: each one masked, with its
        decision, reason code and the model's score."""
        return await self._send(_calls.get_extraction(session_id))

    async def working_set(
        self, session_id: str, key: str, value: Any, *, subject_id: str, ttl_seconds: int | None = None
    ) -> m.WorkingItem:
        """Keep a short-lived value for an open session (masked, screened, hard TTL)."""
        return await self._send(_calls.working_set(session_id, key, value, subject_id, ttl_seconds))

    async def working_get(self, session_id: str) -> m.WorkingSession:
        return await self._send(_calls.working_get(session_id))

    async def working_delete(self, session_id: str, key: str) -> None:
        await self._send(_calls.working_delete(session_id, key))

    # -- review ---------------------------------------------------------------------------------

    async def review_queue(
        self, *, cursor: str | None = None, limit: int | None = None, group_similar: bool = False
    ) -> m.ReviewPage:
        """One page of items waiting for review; with `group_similar`, one per group of near-identical
        items of a subject (the others in `similar_pending`)."""
        return await self._send(_calls.review_queue(cursor, limit, group_similar))

    async def iter_review_queue(self, *, page_size: int | None = None) -> AsyncIterator[m.ReviewItem]:
        cursor: str | None = None
        while True:
            page = await self.review_queue(cursor=cursor, limit=page_size)
            for item in page.items:
                yield item
            if not page.next_cursor or page.next_cursor == cursor:
                return
            cursor = page.next_cursor

    async def approve(
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
        return await self._send(
            _calls.review_decision("approve", memory_id, note, evidence_ref, supersedes, independent_reason)
        )

    async def reject(
        self, memory_id: str, *, note: str | None = None, evidence_ref: str | None = None
    ) -> m.ReviewResult:
        return await self._send(_calls.review_decision("reject", memory_id, note, evidence_ref))

    async def reinstate(
        self, memory_id: str, *, note: str | None = None, evidence_ref: str | None = None
    ) -> m.ReviewResult:
        return await self._send(_calls.review_decision("reinstate", memory_id, note, evidence_ref))

    # -- privacy and holds ----------------------------------------------------------------------

    async def request_erasure(
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
        status = await self._send(_calls.request_erasure(subject_id, reason, request_reference))
        if not wait:
            return status
        deadline = time.monotonic() + timeout
        while not status.done:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ErasureWaitTimeout(f"erasure not finished within {timeout} s", status)
            await self._sleep(min(poll_interval, left))
            status = await self.get_erasure(status.erasure_id)
        return status

    async def get_erasure(self, erasure_id: str) -> m.ErasureStatus:
        return await self._send(_calls.get_erasure(erasure_id))

    async def legal_hold_subject(self, subject_id: str, *, hold: bool, reason: str) -> m.SubjectHold:
        return await self._send(_calls.legal_hold_subject(subject_id, hold, reason))

    async def legal_hold_memory(self, memory_id: str, *, hold: bool, reason: str) -> m.MemoryHold:
        return await self._send(_calls.legal_hold_memory(memory_id, hold, reason))

    async def export_subject(
        self, subject_id: str, *, cursor: str | None = None, limit: int | None = None
    ) -> m.SubjectExport:
        """One page of everything held about a subject."""
        return await self._send(_calls.export_subject(subject_id, cursor, limit))

    async def iter_export(
        self, subject_id: str, *, page_size: int | None = None
    ) -> AsyncIterator[m.SubjectExport]:
        """Every page of a subject's export."""
        cursor: str | None = None
        while True:
            page = await self.export_subject(subject_id, cursor=cursor, limit=page_size)
            yield page
            if not page.next_cursor or page.next_cursor == cursor:
                return
            cursor = page.next_cursor

    # -- audit, policy, health ------------------------------------------------------------------

    async def audit(
        self,
        *,
        subject_id: str | None = None,
        memory_id: str | None = None,
        since: datetime | str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> m.AuditPage:
        return await self._send(_calls.audit(subject_id, memory_id, since, cursor, limit))

    async def iter_audit(
        self,
        *,
        subject_id: str | None = None,
        memory_id: str | None = None,
        since: datetime | str | None = None,
        page_size: int | None = None,
    ) -> AsyncIterator[m.AuditEvent]:
        cursor: str | None = None
        while True:
            page = await self.audit(
                subject_id=subject_id, memory_id=memory_id, since=since, cursor=cursor, limit=page_size
            )
            for item in page.events:
                yield item
            if not page.next_cursor or page.next_cursor == cursor:
                return
            cursor = page.next_cursor

    async def get_policy(self) -> m.PolicyView:
        return await self._send(_calls.get_policy())

    async def put_policy(self, profile: str, overrides: Mapping[str, Any] | None = None) -> m.PolicyView:
        return await self._send(_calls.put_policy(profile, overrides))

    async def health(self) -> m.Health:
        return await self._send(_calls.health())

    async def openapi(self) -> dict[str, Any]:
        """The service's OpenAPI document."""
        return await self._send(_calls.openapi())

    async def docs(self) -> str:
        """The Swagger UI page (HTML)."""
        return await self._send(_calls.docs())
