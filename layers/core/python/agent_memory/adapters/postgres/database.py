"""Connection pool and tenant-scoped transactions (the schema runner is migrate.py)."""

from __future__ import annotations

import select
import struct
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg.abc import RV, Buffer, PQGen
from psycopg.adapt import Dumper, Loader
from psycopg.errors import _WaitTimeout  # what Connection.wait(timeout=) raises (psycopg 3.3)
from psycopg.pq import Format
from psycopg.rows import DictRow, Row, dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

# The schema runner lives in migrate.py; its entry points stay importable from here.
from agent_memory.adapters.postgres.migrate import (
    check_embedding_dimension as check_embedding_dimension,
)
from agent_memory.adapters.postgres.migrate import grant_app_login as grant_app_login
from agent_memory.adapters.postgres.migrate import migrate as migrate
from agent_memory.adapters.postgres.migrate import migration_files as migration_files
from agent_memory.adapters.postgres.migrate import (
    stored_embedding_dimension as stored_embedding_dimension,
)
from agent_memory.domain.errors import Unavailable
from agent_memory.observability import logger
from agent_memory.request_scope import DatabaseWaits, bound_subjects, request_waits

# Past the server's statement_timeout, how much longer the client waits for an answer before it
# gives the connection up: a live server cancels the statement itself first, a frozen one never does.
ANSWER_GRACE_S = 2.0
# The same for an API request, whose whole answer (503 included) is due within 3 s of a hung database.
REQUEST_ANSWER_GRACE_S = 0.5
# How long the pool keeps retrying (with backoff) a connection it lost before it gives up; the next
# request that finds the pool empty tries again at once, so a database that comes back after a long
# outage is used on the next request rather than after the pool's next, ever longer, backoff.
RECONNECT_TIMEOUT_S = 10.0


class GuardedConnection(psycopg.Connection[Row]):
    """A connection that stops waiting for the server after `answer_timeout_s`.

    A frozen server (stopped process, lost host, a black-holed network) may accept the socket and
    then never answer: its statement_timeout cannot fire and TCP keepalives are answered by its
    kernel. Every round trip psycopg makes goes through `wait`; past the deadline the connection is
    closed (the pool replaces it) and an OperationalError raised.
    """

    answer_timeout_s: float | None = None
    # An API request waits no longer than this for any answer (`request_scope.begin_request`).
    request_answer_timeout_s: float | None = None

    def wait(self, gen: PQGen[RV], interval: float = 0.1, timeout: float | None = None) -> RV:
        limit = self.answer_timeout_s if timeout is None else timeout
        if self.request_answer_timeout_s is not None and request_waits() is not None:
            limit = (
                self.request_answer_timeout_s if limit is None else min(limit, self.request_answer_timeout_s)
            )
        try:
            return super().wait(gen, interval=interval, timeout=limit)
        except _WaitTimeout as exc:
            # The protocol is mid-exchange: the connection cannot be used again.
            self.close()
            raise NoAnswer(f"no answer from the database within {limit:g} s") from exc

    @contextmanager
    def answer_within(self, seconds: float) -> Iterator[None]:
        """A shorter deadline for what runs inside (the health check)."""
        before, self.answer_timeout_s = self.answer_timeout_s, seconds
        try:
            yield
        finally:
            self.answer_timeout_s = before


class NoAnswer(psycopg.OperationalError):
    """The server did not answer within the connection's deadline; the connection is closed."""


class _RequestBinding:
    """The default of `tenant_transaction(subjects=)`: the binding of the request in progress."""


REQUEST_BINDING = _RequestBinding()


class Database:
    """A pool whose every connection runs as the non-owner application role.

    The connecting user may own the tables (embedded server, migrations); each
    pooled connection switches to `app_role` at once, so row-level security
    applies to every query the service makes.
    """

    def __init__(
        self,
        url: str | Callable[[], str],
        *,
        app_role: str = "memory_app",
        min_size: int = 1,
        max_size: int = 8,
        prepared_statements: bool = True,
        pool_timeout_s: float = 3.0,
        connect_timeout_s: int = 3,
        statement_timeout_s: float = 10.0,
        lock_timeout_s: float = 5.0,
        request_timeout_s: float = 2.0,
    ) -> None:
        self.url = url
        self.app_role = app_role
        self.prepared_statements = prepared_statements
        self.pool_timeout_s = pool_timeout_s
        self.answer_timeout_s = statement_timeout_s + ANSWER_GRACE_S
        # Transaction-local (set_config(..., true) in the tenant scope statement): no session state
        # for a pooling proxy to pin a connection for, and no extra round trip.
        self._timeouts = (_ms(statement_timeout_s), _ms(lock_timeout_s))
        # An API request: shorter server-side timeouts, and a shorter wait for a connection or an
        # answer, so that every route answers (503 with Retry-After) within 3 s of a hung database.
        self._request_timeouts = (_ms(request_timeout_s), _ms(min(lock_timeout_s, request_timeout_s)))
        self.request_answer_timeout_s = request_timeout_s + REQUEST_ANSWER_GRACE_S
        # prepare_threshold None: every statement stays unnamed, so a connection holds no session
        # state that a pooling proxy would have to pin it for.
        connect_kwargs: dict[str, Any] = {
            "autocommit": False,
            "row_factory": dict_row,
            # libpq's own guards, all ignored on a Unix socket: the whole connection attempt
            # (psycopg enforces it too, 2 s at least), unacknowledged data, and idle connections
            # whose peer vanished (keepalives: 30 s idle, then 3 probes 10 s apart).
            "connect_timeout": max(2, connect_timeout_s),
            "tcp_user_timeout": round(self.answer_timeout_s * 1000),
            "keepalives": 1,
            "keepalives_idle": 30,
            "keepalives_interval": 10,
            "keepalives_count": 3,
        }
        if not prepared_statements:
            connect_kwargs["prepare_threshold"] = None
        self.pool: ConnectionPool[GuardedConnection[DictRow]] = ConnectionPool(
            url,
            connection_class=GuardedConnection[DictRow],
            min_size=min_size,
            max_size=max_size,
            kwargs=connect_kwargs,
            configure=self._configure,
            # A failover or restart leaves dead connections in the pool: test each one as it
            # is handed out rather than fail the caller's transaction (see check_idle_connection).
            check=check_idle_connection,
            open=False,
            name="memory",
            timeout=pool_timeout_s,
            reconnect_timeout=RECONNECT_TIMEOUT_S,
        )

    def _configure(self, conn: GuardedConnection[DictRow]) -> None:
        conn.answer_timeout_s = self.answer_timeout_s
        conn.request_answer_timeout_s = self.request_answer_timeout_s
        register_vector(conn)
        info = conn.adapters.types.get("vector")  # registered just above: no second lookup
        if info is not None:  # binary vectors straight into and out of arrays (see below)
            conn.adapters.register_loader(info.oid, VectorArrayLoader)
            conn.adapters.register_dumper(np.ndarray, type("", (VectorArrayDumper,), {"oid": info.oid}))
        if conn.info.user != self.app_role:
            # Logged in as the owner (embedded server, a local DATABASE_URL): switch for the whole
            # session. In AWS the functions log in as the application role itself, so there is no
            # session state and RDS Proxy can share the connection (SET ROLE would pin it).
            # The server-side timeouts, for statements outside a tenant transaction too (the read
            # path's autocommit calls): here for the session; in AWS the application role's own
            # defaults (`grant_app_login`), which a login applies without any session state.
            with conn.cursor() as cur:
                cur.execute(psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(self.app_role)))
                cur.execute(
                    "SELECT set_config('statement_timeout', %s, false), set_config('lock_timeout', %s, false)",
                    self._timeouts,
                )
        conn.commit()

    def open(self) -> None:
        """Open the pool and wait for its first connections: 30 s at a start, but within an API
        request (a Lambda's cold start) only the request limit, so a hung database is a 503 then
        too; the pool is closed again and the next request tries anew."""
        waits = request_waits()
        try:
            self.pool.open(wait=True, timeout=30 if waits is None else self.request_answer_timeout_s)
        except PoolTimeout as exc:
            self.pool.close(timeout=0)
            raise _outage(exc, waits) from exc

    def close(self) -> None:
        self.pool.close()

    def ping(self) -> bool:
        """One round trip, bounded by the pool timeout twice at most (waiting for a connection,
        then for the answer). Raises Unavailable when the database cannot answer."""
        with self._lend(self.pool_timeout_s) as conn, conn.answer_within(self.pool_timeout_s):
            return conn.execute("SELECT 1 AS ok").fetchone() is not None

    @contextmanager
    def _lend(self, timeout_s: float | None = None) -> Iterator[GuardedConnection[DictRow]]:
        """A pooled connection; the one place a database outage becomes `Unavailable` (503 with
        Retry-After at the HTTP edge; a retry for the queue worker and the erasure steps).

        Outage: no connection within the pool timeout, a connection lost or refused, a server
        shutting down, a statement cancelled by statement_timeout or lock_timeout, no answer in
        time. Serialization failures and deadlocks are not outages: they pass through, and the
        store turns them into a retryable conflict.

        In an API request the wait for a connection is bounded by the request limit too, and a
        request that already met an outage is refused at once instead of waiting again."""
        waits = request_waits()
        if waits is not None:
            if waits.unavailable:
                raise Unavailable("the database is unavailable; retry shortly")
            limit = self.pool_timeout_s if timeout_s is None else timeout_s
            timeout_s = min(limit, self.request_answer_timeout_s)
        try:
            with self.pool.connection(timeout=timeout_s) as conn:
                yield conn
        except PoolTimeout as exc:
            raise _outage(exc, waits) from exc
        except psycopg.errors.TransactionRollback:
            raise
        except psycopg.OperationalError as exc:
            raise _outage(exc, waits) from exc

    @contextmanager
    def tenant_transaction(
        self,
        tenant_id: str,
        *,
        reuse_plans: bool = False,
        subjects: Collection[str] | _RequestBinding | None = REQUEST_BINDING,
    ) -> Iterator[psycopg.Connection[DictRow]]:
        """One transaction in which row-level security sees only `tenant_id`, and within it only
        `subjects` when the caller's token is bound to some (migration 0019): by default the
        binding of the request in progress (`request_scope`), None for none. `app.subjects` is
        set in every transaction, empty when unbound, so nothing can carry one over.

        `reuse_plans` (short read-side transactions: the tenant-wide search, and what a retrieval
        that checked the system of record writes): statements this connection has prepared run
        their generic plan instead of being planned again for each call, and the transaction runs
        in pipeline mode: BEGIN and the tenant setting travel with the first query, a write whose
        result nobody reads travels with the COMMIT. Only for statements whose best plan does not
        depend on the parameters. The per-subject retrieval itself runs on `statements()`, outside
        any transaction; its query keeps its plan inside a PL/pgSQL function (sql/retrieval_functions.sql).
        """
        bound = bound_subjects() if isinstance(subjects, _RequestBinding) else subjects
        # The server writes the array literal (no quoting done here); an empty binding is refused
        # rather than read as "unbound", which would widen it to the whole tenant.
        if bound is not None and not bound:
            raise ValueError("a subject binding names at least one subject")
        scope = (
            "SELECT set_config('app.tenant_id', %s, true),"
            " set_config('app.subjects', coalesce(%s::text[]::text, ''), true),"
            " set_config('statement_timeout', %s, true), set_config('lock_timeout', %s, true)"
        )
        if reuse_plans and self.prepared_statements:
            scope += ", set_config('plan_cache_mode', 'force_generic_plan', true)"
        timeouts = self._timeouts if request_waits() is None else self._request_timeouts
        params = (tenant_id, sorted(bound) if bound is not None else None, *timeouts)
        with self._lend() as conn:
            if reuse_plans:
                with conn.pipeline(), conn.transaction():
                    conn.execute(scope, params)
                    yield conn
            else:
                with conn.transaction():
                    conn.execute(scope, params)
                    yield conn

    @contextmanager
    def statements(self) -> Iterator[psycopg.Connection[DictRow]]:
        """A pooled connection in autocommit: each statement is its own transaction, committed
        (durably) when it returns. For calls that scope the tenant themselves (the read path's
        functions, sql/retrieval_functions.sql): no BEGIN, no tenant statement, no COMMIT round trip."""
        with self._lend() as conn:
            conn.autocommit = True
            try:
                yield conn
            finally:
                _leave_autocommit(conn)

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection[DictRow]]:
        """A transaction with no tenant: tenant tables look empty (RLS)."""
        with self._lend() as conn, conn.transaction():
            yield conn


def _outage(exc: Exception, waits: DatabaseWaits | None) -> Unavailable:
    """Log an outage and remember it for the request in progress (it does not wait again)."""
    logger.warning(
        "database unavailable",
        extra={"error": type(exc).__name__, "sqlstate": getattr(exc, "sqlstate", None)},
    )
    if waits is not None:
        waits.unavailable = True
    return Unavailable("the database is unavailable; retry shortly")


def _ms(seconds: float) -> str:
    """A duration as PostgreSQL's timeout settings take it (milliseconds)."""
    return str(round(seconds * 1000))


def _leave_autocommit(conn: psycopg.Connection[Any]) -> None:
    """Give the pool back a connection as it lent it: idle, out of autocommit. A transaction a
    caller opened by hand is rolled back; a connection that cannot be reset is closed, so the pool
    replaces it instead of lending it out in autocommit."""
    try:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.rollback()
        conn.autocommit = False
    except psycopg.Error:
        conn.close()


class VectorArrayLoader(Loader):
    """pgvector's binary format (uint16 dim, uint16 unused, dim big-endian float4) straight into a
    float32 array. pgvector's own loader builds a Vector first; a retrieval reads tens of vectors, and
    that object per vector showed in its latency."""

    format = Format.BINARY

    def load(self, data: Buffer) -> np.ndarray:
        return np.frombuffer(data, dtype=">f4", offset=4).astype(np.float32)


class VectorArrayDumper(Dumper):
    """A float array as pgvector's binary format, without building pgvector's Vector first (each
    retrieval sends its query vector)."""

    format = Format.BINARY

    def dump(self, obj: np.ndarray) -> Buffer:
        if obj.ndim != 1:
            raise ValueError("a vector parameter must be one-dimensional")
        return _VECTOR_HEADER.pack(obj.shape[0], 0) + obj.astype(">f4", copy=False).tobytes()


_VECTOR_HEADER = struct.Struct(">HH")


def check_idle_connection(conn: psycopg.Connection[Any]) -> None:
    """The pool's check as a connection is handed out, without a round trip when nothing happened.

    An idle connection's socket has nothing to read. A server that restarted, failed over or
    terminated the backend leaves an end of file or an error message there: only then ask the
    server (psycopg_pool's own check, which raises so the pool replaces the connection). Asking
    every time cost a round trip per retrieval.
    """
    if conn.closed or _has_input(conn.pgconn.socket):
        ConnectionPool.check_connection(conn)


def _has_input(fd: int) -> bool:
    if hasattr(select, "poll"):  # poll, not select, where there is one: no limit on the descriptor
        idle = select.poll()
        idle.register(fd, select.POLLIN)
        return bool(idle.poll(0))
    readable, _, _ = select.select([fd], [], [], 0)  # Windows has no poll
    return bool(readable)
