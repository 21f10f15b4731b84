"""The HTTP system of record: GET {base}/tenants/{t}/accounts/{subject} and
GET {base}/tenants/{t}/tickets/{ticket}?subject_id={subject}, with a timeout and a <= 5 minute cache.

Account response: {"values": {"plan_tier": {"value": "enterprise", "as_of": "..."}, ...}}
Ticket response:  {"ticket_id": "...", "subject_id": "...", "status": "...", "priority": "...",
                   "owner": "...", "updated_at": "..."}
                  subject_id is required (an answer without it is malformed: the ticket is shown
                  only when the answer says it is this customer's); the rest may be omitted.

An answer is trusted no further than its shape: a malformed one, one larger than MAX_BODY_BYTES,
one slower than the timeout in all and a redirect all count as the system being unavailable. The
timeout bounds the whole call, name lookup, connection and headers included: the request runs on a
worker thread and the caller waits for it no longer than the timeout. Outages (no answer in time, a
refused or reset connection, a failed name lookup, an answer cut short, a 5xx or 429) feed a
circuit breaker (breaker.py), so that during one each
retrieval stops waiting a full timeout. A ticket that names another subject is not found: it is
never shown to this one.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import CancelledError, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agent_memory.adapters.sor.breaker import Breaker
from agent_memory.adapters.sor.cache import TtlCache
from agent_memory.observability import logger
from agent_memory.ports.system_of_record import LiveValue, SystemOfRecordUnavailable, TicketState
from agent_memory.request_scope import bound_subjects

MAX_BODY_BYTES = 65_536
_NOT_FOUND = object()
_CHUNK = 8192
Scalar = str | int | float | bool | None


class _Outage(SystemOfRecordUnavailable):
    """No usable answer because the system of record is down or overloaded: what trips the breaker.
    A malformed or oversized answer is not one; the system answered, and one subject's odd data
    must not cut every subject off."""


class _Entry(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)  # 1e400 parses as inf

    value: Scalar = None
    as_of: str | None = None


class _Account(BaseModel):
    model_config = ConfigDict(extra="ignore")

    values: dict[str, _Entry] = {}


class _Ticket(BaseModel):
    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True, allow_inf_nan=False)

    ticket_id: str | None = None
    subject_id: str  # required: a ticket is shown only when the answer says whose it is
    status: str | None = None
    priority: str | None = None
    owner: str | None = None
    updated_at: str | None = None


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer we did not ask for, and would carry the bearer token elsewhere."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_REQUEST = threading.local()  # the worker thread's request in flight: its deadline and watches


class _Watched(http.client.HTTPConnection):
    """A timer shuts the connection down at the request's deadline (twice the timeout after the
    worker began, so that its caller, who waits one timeout, has always given up first). The
    socket timeout bounds each read, not their sum: without this, a server (or a proxy's CONNECT
    reply) that trickles a byte at a time holds a worker for as long as it likes, and enough of
    them hold every worker.

    The watch starts as soon as the TCP connection exists, before any proxy tunnel or TLS
    handshake, and holds a duplicate of the plain socket: shutting that down ends the connection
    underneath TLS. Never SSLSocket.shutdown from another thread: it drops the TLS layer first,
    and the worker could then send the request, bearer token included, in cleartext."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        create = self._create_connection  # type: ignore[has-type]

        def create_watched(*a: Any, **k: Any) -> socket.socket:
            sock: socket.socket = create(*a, **k)
            deadline = getattr(_REQUEST, "deadline", None)
            if deadline is not None:
                try:
                    _watch(sock, deadline)
                except (OSError, RuntimeError) as exc:  # no fd or no thread left for the watch
                    sock.close()
                    raise OSError(f"cannot watch the request: {exc}") from exc
            return sock

        self._create_connection = create_watched


class _WatchedHTTPS(_Watched, http.client.HTTPSConnection):
    pass


def _watch(sock: socket.socket, deadline: float) -> None:
    guard = sock.dup()  # the same TCP connection; TLS, wrapped around `sock` later, never sees it
    timer = threading.Timer(max(0.0, deadline - time.monotonic()), _shut_down, (guard,))
    timer.daemon = True
    try:
        timer.start()
    except RuntimeError:
        guard.close()
        raise
    _REQUEST.watches.append((timer, guard))


def _shut_down(guard: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed: the request ended in time
        guard.shutdown(socket.SHUT_RDWR)  # wakes a blocked read or write in the worker


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_Watched, req)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_WatchedHTTPS, req, context=self._context)  # type: ignore[attr-defined]


class HttpSystemOfRecord:
    name = "http"

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 0.5,
        cache_seconds: float = 60.0,
        token: str | None = None,
        breaker: Breaker | None = None,
        max_concurrent: int = 16,
    ) -> None:
        if not base_url.startswith(("https://", "http://")):
            raise ValueError("the system-of-record URL must be http(s)")
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.token = token
        self.cache: TtlCache[tuple[str, str, str], Any] = TtlCache(cache_seconds)
        self.breaker = breaker or Breaker()
        # A call outlives its caller's wait by at most one more timeout (the watch shuts its
        # connection), or for as long as a stuck name lookup lasts; the pool bounds how many, and
        # a queued call the caller gave up on is cancelled before it starts.
        self._calls = ThreadPoolExecutor(max_workers=max_concurrent, thread_name_prefix="sor-http")
        # Since Python 3.13 the HTTPS handler builds its TLS context, trusted certificates
        # included, when it is made: this adapter's are those of its own creation.
        self._opener = urllib.request.build_opener(_NoRedirects, _WatchedHTTPHandler, _WatchedHTTPSHandler)

    def _get(self, path: str) -> Any:
        """The parsed answer, or _NOT_FOUND for a 404, within the timeout in all or not at all."""
        trial = self.breaker.before()
        try:
            call = self._calls.submit(self._fetch, path)
        except RuntimeError as exc:  # no thread to run it (the process is shutting down)
            self.breaker.release(trial)
            raise SystemOfRecordUnavailable("no worker to ask the system of record") from exc
        try:
            body = call.result(timeout=self.timeout_s)
        except FutureTimeout:
            if call.cancel():  # never started: this process's own queue was slow, not the system
                self.breaker.release(trial)
                raise SystemOfRecordUnavailable("no worker free within the timeout") from None
            self.breaker.failed(trial)
            raise _Outage("no answer within the timeout") from None
        except _Outage:
            self.breaker.failed(trial)
            raise
        except SystemOfRecordUnavailable:
            self.breaker.succeeded()  # it answered, if not usefully
            raise
        except CancelledError:  # the adapter closed while this call waited
            self.breaker.release(trial)
            raise SystemOfRecordUnavailable("the system-of-record client is closing") from None
        except BaseException:  # interrupted, or a defect: no evidence either way
            self.breaker.release(trial)
            raise
        self.breaker.succeeded()
        return body

    def close(self) -> None:
        """Stop taking calls; queued ones are dropped (running ones end with their socket)."""
        self._calls.shutdown(wait=False, cancel_futures=True)

    def _fetch(self, path: str) -> Any:
        """The parsed answer, or _NOT_FOUND for a 404 (a JSON null is a malformed answer, not that)."""
        req = urllib.request.Request(self.base_url + path, headers={"Accept": "application/json"})  # noqa: S310 - scheme checked in __init__
        if self.token:
            req.add_unredirected_header("Authorization", f"Bearer {self.token}")
        # the watch frees this worker at twice the timeout: after its caller (one timeout) gave up
        _REQUEST.deadline, _REQUEST.watches = time.monotonic() + 2 * self.timeout_s, []
        try:
            with self._opener.open(req, timeout=self.timeout_s) as resp:
                if resp.status != 200:  # a 3xx the opener did not follow
                    raise SystemOfRecordUnavailable(f"HTTP {resp.status}")
                body = bytearray()
                while chunk := resp.read1(_CHUNK):  # what has arrived: the size is checked as it grows
                    body += chunk
                    if len(body) > MAX_BODY_BYTES:
                        raise SystemOfRecordUnavailable("answer too large")
                if resp.length:  # bytes the Content-Length promised that never came
                    raise _Outage("answer cut short")
                return json.loads(body, parse_constant=_no_constant)
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return _NOT_FOUND
            kind = _Outage if err.code >= 500 or err.code == 429 else SystemOfRecordUnavailable
            raise kind(f"HTTP {err.code}") from err
        except (urllib.error.URLError, TimeoutError, OSError, http.client.IncompleteRead) as exc:
            raise _Outage(type(exc).__name__) from exc  # refused, reset, timed out, cut short
        except (
            http.client.HTTPException,  # a garbled status line, header or chunk
            ValueError,
            RecursionError,  # JSON nested thousands deep
        ) as exc:
            raise SystemOfRecordUnavailable(type(exc).__name__) from exc
        finally:
            for timer, guard in _REQUEST.watches:
                timer.cancel()
                guard.close()
            _REQUEST.deadline, _REQUEST.watches = None, []

    def account_values(self, tenant_id: str, subject_id: str) -> dict[str, LiveValue]:
        if not _in_binding(subject_id):  # a token bound to other subjects: as an unknown account
            return {}

        def load() -> dict[str, LiveValue]:
            read_at = datetime.now(UTC)
            body = self._get(f"/tenants/{_segment(tenant_id)}/accounts/{_segment(subject_id)}")
            if body is _NOT_FOUND:
                return {}
            account = _parse(_Account, body)
            return {
                f: LiveValue(f, e.value, _parse_time(e.as_of), read_at) for f, e in account.values.items()
            }

        return self.cache.get_or_load(("acct", tenant_id, subject_id), load)  # type: ignore[no-any-return]

    def ticket(self, tenant_id: str, subject_id: str, ticket_id: str) -> TicketState | None:
        if not _in_binding(subject_id):  # a token bound to other subjects: as an unknown ticket
            return None

        def load() -> TicketState | None:
            if ticket_id in (".", ".."):  # a path segment a proxy would resolve, never a ticket
                return None
            query = urllib.parse.urlencode({"subject_id": subject_id})
            body = self._get(f"/tenants/{_segment(tenant_id)}/tickets/{_segment(ticket_id)}?{query}")
            if body is _NOT_FOUND:
                return None
            t = _parse(_Ticket, body)
            if t.subject_id != subject_id or (t.ticket_id is not None and t.ticket_id != ticket_id):
                logger.warning(
                    "system of record answered with another subject's or ticket's state; not shown"
                )
                return None
            return TicketState(
                ticket_id=t.ticket_id or ticket_id,
                status=t.status,
                priority=t.priority,
                owner=t.owner,
                updated_at=_parse_time(t.updated_at),
            )

        return self.cache.get_or_load(("ticket", tenant_id, f"{subject_id}\x00{ticket_id}"), load)  # type: ignore[no-any-return]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a value JSON allows")  # NaN and Infinity: Python's json accepts them


def _segment(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _parse[M: BaseModel](model: type[M], body: Any) -> M:
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()})[:5]
        raise SystemOfRecordUnavailable(f"malformed answer: {', '.join(fields) or 'body'}") from exc


def _parse_time(raw: str | None) -> datetime | None:
    """The time the system of record gave, or None: never a made-up `now`."""
    if raw:
        try:
            dt = datetime.fromisoformat(raw.replace("Z", "+00:00"))
            return dt if dt.tzinfo else dt.replace(tzinfo=UTC)
        except ValueError:
            return None
    return None


def _in_binding(subject_id: str) -> bool:
    """Whether the request's token may read this subject (its `subjects` claim, if any). The
    local system of record is narrowed by row-level security; this one is asked over HTTP."""
    bound = bound_subjects()
    return bound is None or subject_id in bound
